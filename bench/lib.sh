# Shared by the bench scripts (sourced; they set OUT, a scratch folder, first).

# Runs one command once, its output discarded; appends its wall seconds (bash's clock,
# microseconds) to $OUT/NAME.s and its peak RSS in KB (/usr/bin/time) to $OUT/NAME.m. A
# failing command stops the script with its error.
measure() { # name, command...
  local name="$1"; shift
  local t0=$EPOCHREALTIME
  /usr/bin/time -f "%M" -o "$OUT/t" "$@" > /dev/null 2> "$OUT/err" || { cat "$OUT/err" >&2; exit 1; }
  local t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f\n", b-a}' >> "$OUT/$name.s"
  cat "$OUT/t" >> "$OUT/$name.m"
}

# The median of the numbers on standard input, one a line.
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# DevTools' source-map code (SHARED/smoracle) copied to ROOT/target/smoracle and installed
# there (its npm install never touches SHARED); prints that folder.
smoracle() { # root, shared
  local sm="$1/target/smoracle"
  mkdir -p "$sm"
  cp -r "$2"/smoracle/{*.mjs,package.json,package-lock.json,src} "$sm/"
  [ -d "$sm/node_modules/chrome-devtools-frontend" ] || (cd "$sm" && npm ci --no-audit --no-fund > /dev/null)
  echo "$sm"
}

# `jscalls frames --format smoracle` with its first pass's names as the names (jscalls writes
# the final name as resolvedName and the first pass's as resolvedNameFirst), for compare.mjs
# without --ast.
first_pass() { # frames file
  node -e 'const d=JSON.parse(require("fs").readFileSync(process.argv[1]));
    for (const f of d.frames) f.resolvedName = f.resolvedNameFirst; console.log(JSON.stringify(d))' "$1"
}

# Runs CMD... (a `jscalls view` command line, maybe under /usr/bin/time) and fetches the
# profile it serves into OUT with curl, as the viewer would; returns once view has exited.
# view's messages come through a pipe, read as they come (polling would take CPU from it).
view_once() { # out, command...
  local out=$1 url="" line
  shift
  exec 3< <("$@" 2>&1 > /dev/null)
  while IFS= read -r line <&3; do
    case "$line" in *from-url/*) url=$(printf '%s' "${line#*from-url/}" | sed 's|/$||; s|%3A|:|g; s|%2F|/|g'); break ;; esac
  done
  curl -s -H 'Origin: https://profiler.firefox.com' -o "$out" "$url"
  # Until view has exited (its end of the pipe closed).
  cat <&3 > /dev/null
  exec 3<&-
}
