//! The command line: exit codes, standard input and output, atomic output files, devices,
//! `--strict`, `-q`, and an interrupted write.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::jscalls_command as jscalls;

fn tmpdir(name: &str) -> PathBuf {
    crate::support::tmpdir("cli", name)
}

fn files_in(d: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn help_has_examples_and_usage_errors_exit_2() {
    let out = jscalls().args(["calls", "--help"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Examples:"));
    let out = jscalls().args(["calls", "--no-such-flag"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn calls_to_stdout_and_from_stdin_are_the_same() {
    let a = jscalls().args(["calls", "fixtures/rules/be-pairing.json", "-q"]).output().unwrap();
    assert!(a.status.success());
    let mut child = jscalls().args(["calls", "-", "-q"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(&std::fs::read("fixtures/rules/be-pairing.json").unwrap()).unwrap();
    let b = child.wait_with_output().unwrap();
    assert!(b.status.success());
    // Only the input label differs.
    let (sa, sb) = (String::from_utf8(a.stdout).unwrap(), String::from_utf8(b.stdout).unwrap());
    assert_eq!(sa.replace("\"input\":\"be-pairing.json\"", "\"input\":\"-\""), sb);
}

#[test]
fn bad_input_exits_1_with_one_line_naming_file_and_place() {
    let d = tmpdir("bad");
    let f = d.join("broken.json");
    std::fs::write(&f, "[{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,}]").unwrap();
    let out = jscalls().args(["calls"]).arg(&f).args(["-o"]).arg(d.join("out.json")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err,
        format!("jscalls: error: {}:1:30 (event 0): expected a key string in an event, found '}}'\n", f.display())
    );
    assert_eq!(files_in(&d), ["broken.json"], "no output and no temporary file left");
}

#[test]
fn output_equal_to_input_is_refused_and_input_untouched() {
    let d = tmpdir("same");
    let f = d.join("t.json");
    std::fs::copy("fixtures/rules/be-pairing.json", &f).unwrap();
    let before = std::fs::read(&f).unwrap();
    let out = jscalls().args(["timeline"]).arg(&f).arg("-o").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is the input; refusing to overwrite it"));
    assert_eq!(std::fs::read(&f).unwrap(), before);
}

#[test]
fn strict_fails_on_warnings_but_not_on_notes() {
    // be-pairing has a mismatched E (a warning) and an unclosed B (a note).
    let out =
        jscalls().args(["calls", "fixtures/rules/be-pairing.json", "--strict", "-o", "/dev/null"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.lines()
            .last()
            .unwrap()
            .starts_with("jscalls: error: fixtures/rules/be-pairing.json: 1 warning(s) and --strict is set"),
        "{err}"
    );
    // The recorded node trace has only notes.
    let out = jscalls()
        .args(["calls", "fixtures/node-trace-mixed.json.gz", "--strict", "-q", "-o", "/dev/null"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn quiet_silences_warnings() {
    let loud = jscalls().args(["calls", "fixtures/rules/be-pairing.json", "-o", "/dev/null"]).output().unwrap();
    assert!(String::from_utf8_lossy(&loud.stderr).contains("[unpaired-end]"));
    let quiet = jscalls().args(["calls", "fixtures/rules/be-pairing.json", "-q", "-o", "/dev/null"]).output().unwrap();
    assert!(quiet.status.success() && quiet.stderr.is_empty());
}

#[test]
fn devices_are_written_not_replaced() {
    let out = jscalls().args(["calls", "fixtures/rules/be-pairing.json", "-q", "-o", "/dev/null"]).output().unwrap();
    assert!(out.status.success());
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
}

#[test]
fn output_file_is_complete_and_keeps_the_mode_of_the_file_it_replaces() {
    use std::os::unix::fs::PermissionsExt;
    let d = tmpdir("mode");
    let o = d.join("calls.json");
    std::fs::write(&o, "old").unwrap();
    std::fs::set_permissions(&o, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = jscalls().args(["calls", "fixtures/rules/be-pairing.json", "-q", "-o"]).arg(&o).output().unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::metadata(&o).unwrap().permissions().mode() & 0o777, 0o640);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&o).unwrap()).unwrap();
    assert_eq!(v["profiles"][0]["callCount"], 17);
    assert_eq!(files_in(&d), ["calls.json"]);
}

/// `--fsync` (writeback started a megabyte at a time, then flushed) writes the same bytes.
#[test]
fn fsync_writes_the_same_output() {
    let d = tmpdir("fsync");
    let (plain, synced) = (d.join("plain.json"), d.join("synced.json"));
    for (o, extra) in [(&plain, None), (&synced, Some("--fsync"))] {
        let out =
            jscalls().args(["timeline", "fixtures/chrome-ui.json.gz", "-q", "-o"]).arg(o).args(extra).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let a = std::fs::read(&plain).unwrap();
    assert!(a.len() > 4 << 20, "several writeback steps: {} bytes", a.len());
    assert!(a == std::fs::read(&synced).unwrap(), "--fsync changed the output");
    assert_eq!(files_in(&d), ["plain.json", "synced.json"]);
}

/// Killing jscalls while it writes a large timeline leaves nothing at the output path (the
/// data goes to a hidden temporary file that is renamed only when complete); SIGTERM also
/// removes the temporary file.
#[test]
fn killed_mid_write_leaves_no_partial_output() {
    let d = tmpdir("kill");
    let o = d.join("timeline.json");
    // A large input, so that the write takes a while.
    let input = d.join("big.json");
    let status = Command::new(env!("CARGO_BIN_EXE_jscalls"))
        .args(["timeline", "fixtures/chrome-ui.json.gz", "-q", "-o"])
        .arg(&input)
        .status()
        .unwrap();
    assert!(status.success());
    for delay_ms in [5u64, 30, 80] {
        let mut child = jscalls().args(["timeline", "-q", "-o"]).arg(&o).arg(&input).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill(); // SIGKILL: no chance to clean up
        let _ = child.wait();
        // Either it finished (complete file) or it was killed (no file): never a partial one.
        if o.exists() {
            let v: Result<serde_json::Value, _> = serde_json::from_slice(&std::fs::read(&o).unwrap());
            assert!(v.is_ok(), "a partial output after a kill at {delay_ms} ms");
            std::fs::remove_file(&o).unwrap();
        }
    }
    // SIGTERM, in a fresh directory (SIGKILL can leave a hidden temporary file; SIGTERM must not).
    let d = tmpdir("term");
    let o = d.join("timeline.json");
    for delay_ms in [5u64, 20, 60] {
        let child = jscalls().args(["timeline", "-q", "-o"]).arg(&o).arg(&input).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        let out = child.wait_with_output().unwrap();
        if o.exists() {
            // The signal came after the rename: the file must be complete.
            let v: Result<serde_json::Value, _> = serde_json::from_slice(&std::fs::read(&o).unwrap());
            assert!(v.is_ok(), "a partial output after SIGTERM at {delay_ms} ms ({:?})", out.status);
            std::fs::remove_file(&o).unwrap();
        }
        let left: Vec<String> = files_in(&d).into_iter().filter(|f| f.starts_with(".jscalls-")).collect();
        assert!(left.is_empty(), "temporary files left after SIGTERM: {left:?}");
    }
}

/// Runs `cmd` under a pseudo-terminal (util-linux `script`), as a person at a terminal would;
/// None where `script` is missing.
fn at_terminal(args: &str) -> Option<std::process::Output> {
    let cmd = format!("{} {args}", env!("CARGO_BIN_EXE_jscalls"));
    let out = Command::new("script").args(["-qec", &cmd, "/dev/null"]).stdin(Stdio::null()).output().ok()?;
    if out.status.code().is_none() || String::from_utf8_lossy(&out.stdout).contains("script: ") {
        return None;
    }
    Some(out)
}

fn skipped(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "\nSKIPPED {test}: {why}");
}

#[test]
fn summary_shows_threads_calls_and_top_functions() {
    let out =
        jscalls().args(["calls", "--format", "summary", "fixtures/rules/be-pairing.json", "-q"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("summary_be_pairing", text));
}

#[test]
fn on_a_terminal_calls_prints_the_summary_and_an_empty_stdin_gets_a_hint() {
    // stdout and stderr are one terminal: -q keeps warnings out of what is compared.
    let Some(out) = at_terminal("calls fixtures/rules/be-pairing.json -q") else {
        return skipped("on_a_terminal…", "util-linux `script` is not installed");
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("JS calls as DevTools (latest) estimates them"), "{text}");
    assert!(text.contains("CrRendererMain: 17 calls"), "{text}");
    assert!(!text.contains("\"format\""), "JSON on a terminal: {text}");
    let out = at_terminal("calls").unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("jscalls: error: no input: give a trace, .cpuprofile or Firefox profile"), "{text}");
    let out = at_terminal("calls fixtures/rules/be-pairing.json --format json -q").unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"format\":\"jscalls-calls/1\""));
}

#[test]
fn gz_output_is_gzip_of_the_same_calls() {
    let d = tmpdir("gz");
    let plain =
        jscalls().args(["calls", "fixtures/node-mixed.cpuprofile.gz", "-o"]).arg(d.join("a.json")).status().unwrap();
    let gz =
        jscalls().args(["calls", "fixtures/node-mixed.cpuprofile.gz", "-o"]).arg(d.join("a.json.gz")).status().unwrap();
    assert!(plain.success() && gz.success());
    let bytes = std::fs::read(d.join("a.json.gz")).unwrap();
    assert_eq!(&bytes[..2], [0x1f, 0x8b]);
    let mut unzipped = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut unzipped).unwrap();
    assert_eq!(unzipped, std::fs::read(d.join("a.json")).unwrap());
}

#[test]
fn an_output_that_cannot_be_written_fails_before_reading() {
    let d = tmpdir("early");
    // The input is a FIFO with no writer: reading it would wait forever, so only a check made
    // before reading can end the run.
    let fifo = d.join("never-written");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let out = jscalls().arg("calls").arg(&fifo).arg("-o").arg(d.join("missing/x.json")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!("jscalls: error: cannot write {0}/missing/x.json: {0}/missing does not exist\n", d.display())
    );
    // A directory that does not exist, named as one (`-o out/`): a usage error, before reading.
    let out = jscalls().arg("calls").arg(&fifo).arg("-o").arg(format!("{}/missing/", d.display())).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!("jscalls: error: -o {}/missing/: the directory does not exist\n", d.display())
    );
}

#[test]
fn one_input_and_o_dir_writes_into_the_directory() {
    let d = tmpdir("one-dir");
    let input = "fixtures/rules/be-pairing.json";
    let want = jscalls().args(["calls", input, "-q"]).output().unwrap().stdout;
    for out in [d.display().to_string(), format!("{}/", d.display())] {
        let run = jscalls().args(["calls", input, "-q", "-o", &out]).output().unwrap();
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        assert_eq!(files_in(&d), ["be-pairing.calls.json"]);
        assert_eq!(std::fs::read(d.join("be-pairing.calls.json")).unwrap(), want);
    }
}

#[test]
fn global_options_go_before_or_after_the_command() {
    let run = |args: &[&str]| jscalls().args(args).output().unwrap();
    let after = run(&["calls", "fixtures/rules/samples-only-thread.json", "--engine", "0.0.65", "-q"]);
    let before = run(&["-q", "--engine", "0.0.65", "calls", "fixtures/rules/samples-only-thread.json"]);
    assert!(after.status.success() && before.status.success());
    assert_eq!(after.stdout, before.stdout);
    // The default engine is the newest DevTools: the samples-only thread gets calls.
    let latest = run(&["calls", "fixtures/rules/samples-only-thread.json", "-q"]);
    assert_ne!(latest.stdout, after.stdout);
    assert!(String::from_utf8_lossy(&latest.stdout).contains("\"engine\":\"@paulirish/trace_engine@0.0.65+v6\""));
    let zero = run(&["calls", "--threads", "0", "fixtures/rules/be-pairing.json"]);
    assert_eq!(zero.status.code(), Some(2));
}

#[test]
fn several_inputs_each_get_their_own_output() {
    let d = tmpdir("multi");
    let inputs = ["fixtures/rules/be-pairing.json", "fixtures/node-mixed.cpuprofile.gz"];
    let out = jscalls().arg("calls").args(inputs).arg("-o").arg(&d).arg("-q").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(files_in(&d), ["be-pairing.calls.json", "node-mixed.calls.json"]);
    for (input, file) in inputs.iter().zip(["be-pairing.calls.json", "node-mixed.calls.json"]) {
        let one = jscalls().args(["calls", input, "-q"]).output().unwrap();
        assert_eq!(std::fs::read(d.join(file)).unwrap(), one.stdout, "{input}");
    }
    // Without a directory, JSON of several inputs has nowhere to go.
    let out = jscalls().arg("calls").args(inputs).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 inputs need -o DIR"));
}

#[test]
fn notes_are_quiet_unless_verbose() {
    let quiet = jscalls().args(["calls", "fixtures/chrome-ui.json.gz", "-o", "/dev/null"]).output().unwrap();
    assert!(quiet.status.success());
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "");
    let verbose = jscalls().args(["-v", "calls", "fixtures/chrome-ui.json.gz", "-o", "/dev/null"]).output().unwrap();
    let text = String::from_utf8_lossy(&verbose.stderr);
    assert!(text.contains("jscalls: note: fixtures/chrome-ui.json.gz: process 8918 has no valid frame URL"), "{text}");
}

#[test]
fn a_directory_as_input_is_named_once() {
    let out = jscalls().args(["calls", "fixtures", "-o", "/dev/null"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "jscalls: error: cannot read fixtures: it is a directory, not a trace, a .cpuprofile or a Firefox profile\n"
    );
}

#[test]
fn streams_are_read_once_for_calls_and_timeline() {
    let input = std::fs::read("fixtures/chrome-worker-hires.json.gz").unwrap();
    for cmd in ["calls", "timeline"] {
        let file = jscalls().args([cmd, "fixtures/chrome-worker-hires.json.gz", "-q"]).output().unwrap();
        // Standard input.
        let mut child = jscalls().args([cmd, "-q"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let feed = input.clone();
        let writer = std::thread::spawn(move || stdin.write_all(&feed));
        let piped = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        assert!(piped.status.success(), "{cmd}: {}", String::from_utf8_lossy(&piped.stderr));
        let label = |o: &[u8]| {
            String::from_utf8_lossy(o).replace("\"input\":\"chrome-worker-hires.json.gz\"", "\"input\":\"-\"")
        };
        assert!(label(&piped.stdout) == label(&file.stdout), "{cmd} from standard input");
        // A named FIFO, opened once.
        let d = tmpdir(&format!("fifo-{cmd}"));
        let fifo = d.join("trace.fifo");
        assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let (path, feed) = (fifo.clone(), input.clone());
        let writer = std::thread::spawn(move || std::fs::write(path, feed));
        let out = jscalls().arg(cmd).arg(&fifo).arg("-q").output().unwrap();
        writer.join().unwrap().unwrap();
        assert!(out.status.success(), "{cmd}: {}", String::from_utf8_lossy(&out.stderr));
        let fifo_label = format!("\"input\":\"{}\"", "trace.fifo");
        assert!(
            String::from_utf8_lossy(&out.stdout).replace(&fifo_label, "\"input\":\"-\"") == label(&file.stdout),
            "{cmd} from a FIFO"
        );
    }
}

#[test]
fn endless_garbage_on_standard_input_fails_at_once() {
    let out = jscalls().args(["calls"]).stdin(std::fs::File::open("/dev/zero").unwrap()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "jscalls: error: <stdin>:1:1: expected '[' (a trace) or '{' (a trace object, a .cpuprofile or a Firefox profile), found byte 0x00\n"
    );
}

#[test]
fn the_input_is_never_the_output_by_any_name() {
    let d = tmpdir("same");
    let input = d.join("trace.json");
    std::fs::copy("fixtures/rules/be-pairing.json", &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    // A hard link to the input as -o.
    let link = d.join("link.json");
    std::fs::hard_link(&input, &link).unwrap();
    let out = jscalls().arg("timeline").arg(&input).arg("-o").arg(&link).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Standard output appending to the input (`jscalls timeline IN >> IN`).
    let append = std::fs::OpenOptions::new().append(true).open(&input).unwrap();
    let out = jscalls().arg("timeline").arg(&input).stdout(append).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("standard output is the input"));
    assert_eq!(std::fs::read(&input).unwrap(), before, "the input changed");
}

#[test]
fn a_symlink_as_output_is_written_through() {
    let d = tmpdir("symlink");
    let target = d.join("real.json");
    std::fs::write(&target, "old").unwrap();
    let link = d.join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = jscalls().args(["calls", "fixtures/rules/be-pairing.json", "-q", "-o"]).arg(&link).output().unwrap();
    assert!(out.status.success());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert!(std::fs::read_to_string(&target).unwrap().contains("jscalls-calls/1"));
}

#[test]
fn a_full_stderr_is_not_a_crash() {
    let out = jscalls()
        .args(["calls", "fixtures/rules/be-pairing.json", "-o", "/dev/null"])
        .stdin(Stdio::null())
        .stderr(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap())
        .status()
        .unwrap();
    assert_eq!(out.code(), Some(0));
    let d = tmpdir("full");
    std::fs::write(d.join("bad.json"), "[{\"a\":}]").unwrap();
    let out = jscalls()
        .arg("calls")
        .arg(d.join("bad.json"))
        .stderr(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap())
        .status()
        .unwrap();
    assert_eq!(out.code(), Some(1));
    // A usage error that clap finds, told to a full stderr.
    let out = jscalls()
        .args(["calls", "--no-such-option"])
        .stderr(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap())
        .status()
        .unwrap();
    assert_eq!(out.code(), Some(2));
}

#[test]
fn progress_shows_on_a_terminal_only() {
    // A slow input: a trace of 20,000 events fed through a pipe a little at a time.
    let d = tmpdir("progress");
    let mut text = String::from("[");
    for k in 0..20_000 {
        text.push_str(&format!(r#"{{"name":"A","ph":"X","pid":1,"tid":1,"ts":{k},"dur":1}},"#));
        text.push('\n');
    }
    text.push_str(r#"{"name":"A","ph":"X","pid":1,"tid":1,"ts":0,"dur":1}]"#);
    std::fs::write(d.join("t.json"), &text).unwrap();
    // The input has no CPU profile: that warning is all stderr may hold off a terminal.
    let no_profile = format!(
        "jscalls: warning: {0}: no CPU profile to estimate calls from (no usable Profile and ProfileChunk events): record the trace with the disabled-by-default-v8.cpu_profiler category (README, \"Recording\") [no-cpu-profile]\njscalls: {0}: 1 warning(s): no-cpu-profile ×1\n",
        d.join("t.json").display()
    );
    let Some(shown) = progress_shown(&d.join("t.json"), 300_000, "progress_shows_on_a_terminal_only") else { return };
    assert!(shown.contains("jscalls: reading"), "{shown}");
    // Not on a pipe.
    let out = jscalls()
        .arg("calls")
        .arg(d.join("t.json"))
        .args(["-o", "/dev/null"])
        .env("JSCALLS_PROGRESS_AFTER_MS", "0")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), no_profile);
}

/// What a terminal shows while `calls` reads `file` from a pipe that gives its first `first`
/// bytes, then waits a second, then the rest (None, said skipped, without `script`).
fn progress_shown(file: &Path, first: usize, test: &str) -> Option<String> {
    let cmd = format!(
        "(head -c {first} {0}; sleep 1; tail -c +{1} {0}) | JSCALLS_PROGRESS_AFTER_MS=0 {2} calls -o /dev/null",
        file.display(),
        first + 1,
        env!("CARGO_BIN_EXE_jscalls")
    );
    match Command::new("script").args(["-qec", &cmd, "/dev/null"]).stdin(Stdio::null()).output() {
        Ok(out) => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Err(_) => {
            skipped(test, "util-linux `script` is not installed");
            None
        }
    }
}

/// A Firefox profile is one top-level object, not an event array: the progress line counts
/// its bytes as they are read (it said "0 B" until the end).
#[test]
fn progress_counts_a_firefox_profiles_bytes() {
    let d = tmpdir("progress-gecko");
    let hand = std::fs::read_to_string("fixtures/gecko/hand.json").unwrap();
    // The same profile with 300 KB of spaces inside it, fed in two parts a second apart.
    let padded = hand.replacen('{', &format!("{{{}", " ".repeat(300_000)), 1);
    std::fs::write(d.join("p.json"), &padded).unwrap();
    let Some(shown) = progress_shown(&d.join("p.json"), 250_000, "progress_counts_a_firefox_profiles_bytes") else {
        return;
    };
    assert!(shown.contains("jscalls: reading"), "{shown}");
    // While the second part waits, the line has counted the first.
    assert!(shown.contains(" KiB (") || shown.contains(" MiB ("), "{shown}");
}

/// The temporary files left in `d`.
fn temporaries(d: &Path) -> Vec<String> {
    files_in(d).into_iter().filter(|f| f.starts_with(".jscalls-")).collect()
}

#[test]
fn every_catchable_signal_removes_the_temporary_output() {
    for (sig, num) in [("INT", 2), ("QUIT", 3), ("HUP", 1), ("USR1", 10), ("USR2", 12), ("ALRM", 14), ("TERM", 15)] {
        let d = tmpdir(&format!("signal-{sig}"));
        // Waiting for standard input, with the output already created: a signal now finds
        // the temporary file in place, every time.
        let mut child = jscalls()
            .args(["calls", "-q", "-o"])
            .arg(d.join("out.json"))
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while temporaries(&d).is_empty() {
            assert!(started.elapsed().as_secs() < 10, "{sig}: no temporary output appeared");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(Command::new("kill").args([&format!("-{sig}"), &child.id().to_string()]).status().unwrap().success());
        let status = child.wait().unwrap();
        drop(child.stdin.take());
        assert_eq!(status.code(), Some(128 + num), "{sig}");
        assert_eq!(files_in(&d), Vec::<String>::new(), "{sig}: something was left");
    }
}

#[test]
fn limits_end_in_a_clear_error_with_nothing_left() {
    let d = tmpdir("limits");
    let run = |limit: &str| {
        let cmd = format!(
            "{limit}; exec {} timeline fixtures/chrome-ui.json.gz -q -o {}",
            env!("CARGO_BIN_EXE_jscalls"),
            d.join("out.json").display()
        );
        Command::new("sh").args(["-c", &cmd]).output().unwrap()
    };
    // A file size limit (SIGXFSZ): the write fails and is reported.
    let out = run("ulimit -f 16");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let named = format!("cannot write {}: File too large", d.join("out.json").display());
    assert!(err.contains(&named) && !err.contains(".jscalls-"), "{err}");
    assert_eq!(files_in(&d), Vec::<String>::new());
    // An address-space limit: the allocator's failure is an error, not an abort.
    let out = run("ulimit -v 40000");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("jscalls: error: out of memory: "), "{err}");
    assert_eq!(files_in(&d), Vec::<String>::new());
}

/// A mapped input that another program cuts short while jscalls reads it is reported as such
/// (not a death by SIGBUS), and leaves nothing behind. When the cut comes before the file is
/// mapped or after it is read, the run ends normally instead: both are accepted, a signal
/// death never is.
#[test]
fn an_input_cut_short_while_mapped_is_an_error_not_a_signal() {
    let d = tmpdir("cut");
    let mut text = String::from("[");
    for k in 0..400_000 {
        text.push_str(&format!(
            r#"{{"name":"A","cat":"c","ph":"X","pid":1,"tid":1,"ts":{k},"dur":1,"args":{{"k":{k}}}}},"#
        ));
        text.push('\n');
    }
    text.push_str(r#"{"name":"A","ph":"X","pid":1,"tid":1,"ts":0,"dur":1}]"#);
    let mut reported = 0;
    for delay_ms in [0u64, 2, 5, 10, 20] {
        let input = d.join("trace.json");
        std::fs::write(&input, &text).unwrap();
        let child = jscalls()
            .args(["calls", "--threads", "1", "-q", "-o"])
            .arg(d.join("out.json"))
            .arg(&input)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        std::fs::OpenOptions::new().write(true).open(&input).unwrap().set_len(4096).unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => {}
            Some(1) => {
                assert!(err.contains("the input file was cut short while it was read"), "{err}");
                reported += 1;
            }
            other => panic!("ended by {other:?}: {err}"),
        }
        assert!(temporaries(&d).is_empty(), "a temporary file was left");
        let _ = std::fs::remove_file(d.join("out.json"));
    }
    let _ = writeln!(std::io::stderr(), "input cut while mapped: reported as such in {reported} of 5 runs");
}

/// With no thread to be had (`ulimit -u 1` for an unprivileged user; root is not held to it),
/// every stage runs on the calling thread and the output is the same. Needs root and
/// `runuser`, to run as `nobody`; skipped otherwise.
#[test]
fn no_threads_to_be_had_gives_the_same_output() {
    let is_root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout == b"0\n");
    if !is_root || Command::new("runuser").arg("--help").output().is_err() {
        return skipped("no_threads_to_be_had_gives_the_same_output", "needs root and runuser");
    }
    let d = tmpdir("nproc");
    // Files that `nobody` can read.
    let bin = d.join("jscalls");
    std::fs::copy(env!("CARGO_BIN_EXE_jscalls"), &bin).unwrap();
    for input in ["fixtures/chrome-worker-hires.json.gz", "fixtures/rules/be-pairing.json"] {
        let copy = d.join(Path::new(input).file_name().unwrap());
        std::fs::copy(input, &copy).unwrap();
        use std::os::unix::fs::PermissionsExt;
        for f in [&bin, &copy] {
            std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        for cmd in ["calls", "timeline"] {
            let limited = format!("ulimit -u 1; exec {} {cmd} {} -q", bin.display(), copy.display());
            let out = Command::new("runuser").args(["-u", "nobody", "--", "bash", "-c", &limited]).output().unwrap();
            assert!(out.status.success(), "{input} {cmd}: {}", String::from_utf8_lossy(&out.stderr));
            let free = jscalls().args([cmd, input, "-q"]).output().unwrap();
            let label = |o: &[u8]| String::from_utf8_lossy(o).into_owned();
            assert!(label(&out.stdout) == label(&free.stdout), "{input} {cmd}: the output differs");
        }
    }
}

/// A write that fails names the output, whichever command writes it and however far it got
/// (the calls and the timeline fill the output's buffer several times before its end).
#[cfg(target_os = "linux")]
#[test]
fn a_full_output_is_named_in_the_error() {
    for cmd in [&["calls"][..], &["timeline"], &["export", "--to", "pprof"], &["tree", "--format", "json"]] {
        let out = jscalls().args(cmd).args(["fixtures/chrome-ui.json.gz", "-q", "-o", "/dev/full"]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{cmd:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "jscalls: error: cannot write /dev/full: No space left on device (os error 28)\n",
            "{cmd:?}"
        );
        let out = jscalls()
            .args(cmd)
            .args(["fixtures/chrome-ui.json.gz", "-q"])
            .stdout(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{cmd:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "jscalls: error: cannot write to standard output: No space left on device (os error 28)\n",
            "{cmd:?}"
        );
    }
}

#[test]
fn a_closed_standard_output_is_an_error_not_a_silent_loss() {
    let cmd = format!("exec {} calls fixtures/rules/be-pairing.json -q >&-", env!("CARGO_BIN_EXE_jscalls"));
    let out = Command::new("sh").args(["-c", &cmd]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "jscalls: error: cannot write to standard output: it is closed\n");
}

#[test]
fn dev_stdout_as_output_writes_to_the_descriptor() {
    let d = tmpdir("devstdout");
    let file = d.join("out.json");
    std::fs::write(&file, "").unwrap();
    let inode = || std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&file).unwrap());
    let before = inode();
    let cmd = format!(
        "exec {} calls fixtures/rules/be-pairing.json -q -o /dev/stdout > {}",
        env!("CARGO_BIN_EXE_jscalls"),
        file.display()
    );
    assert!(Command::new("sh").args(["-c", &cmd]).status().unwrap().success());
    let direct = jscalls().args(["calls", "fixtures/rules/be-pairing.json", "-q"]).output().unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), direct.stdout);
    assert_eq!(inode(), before, "the file the shell opened was replaced, not written");
    assert!(std::fs::symlink_metadata("/dev/stdout").unwrap().file_type().is_symlink());
    assert_eq!(files_in(&d), ["out.json"]);
}

/// A stream whose first bytes are whitespace, handed over in pieces, is kept whole for the
/// timeline's second read.
#[test]
fn a_stream_that_starts_slowly_is_kept_whole() {
    let cmd = format!(
        "(printf '\\n\\n  '; sleep 0.2; cat fixtures/rules/be-pairing.json) | {} timeline -q",
        env!("CARGO_BIN_EXE_jscalls")
    );
    let piped = Command::new("sh").args(["-c", &cmd]).output().unwrap();
    assert!(piped.status.success(), "{}", String::from_utf8_lossy(&piped.stderr));
    let file = jscalls().args(["timeline", "fixtures/rules/be-pairing.json", "-q"]).output().unwrap();
    assert!(piped.stdout == file.stdout, "the timeline of the stream differs");
}

/// Completions and the manual page come from the command line's definition: every command
/// and its options are in them.
#[test]
fn completions_and_the_manual_list_every_command() {
    let commands = ["calls", "timeline", "tree", "export", "diff", "check", "completions", "man"];
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = jscalls().args(["completions", shell]).output().unwrap();
        assert!(o.status.success(), "{shell}: {}", String::from_utf8_lossy(&o.stderr));
        let script = String::from_utf8(o.stdout).unwrap();
        for c in commands {
            assert!(script.contains(c), "{shell}: no {c}");
        }
        assert!(script.contains("transform") && script.contains("fail-on"), "{shell}");
    }
    assert_eq!(jscalls().args(["completions", "tcsh"]).output().unwrap().status.code(), Some(2));
    let o = jscalls().arg("man").output().unwrap();
    assert!(o.status.success());
    let page = String::from_utf8(o.stdout).unwrap();
    assert!(page.starts_with(".ie") && page.contains(".TH jscalls 1"), "{}", &page[..200]);
    for c in &commands[..6] {
        assert!(page.contains(&format!(".SH \"COMMAND {}\"", c.to_uppercase())), "no section for {c}");
    }
    assert!(page.contains("fail\\-on") && page.contains("\\-\\-budget"));
    // Formatted by groff (UTF-8 read through preconv) where it is installed: no warnings.
    let Ok(mut groff) = Command::new("groff")
        .args(["-k", "-ww", "-man", "-Tutf8", "-z"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        return skipped("completions_and_the_manual_list_every_command (groff)", "groff is not installed");
    };
    use std::io::Write;
    groff.stdin.take().unwrap().write_all(page.as_bytes()).unwrap();
    let out = groff.wait_with_output().unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}
