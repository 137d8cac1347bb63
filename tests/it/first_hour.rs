//! What a new user meets first: nothing passes silently, options go where the README says,
//! options that would change nothing are refused, messages speak one style, the stated
//! minimum Rust is the lock file's.

use std::process::{Command, Output};

use crate::support::jscalls;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmp(name: &str, text: &str) -> String {
    let d = crate::support::scratch().join("first");
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn a_trace_without_a_cpu_profile_is_a_warning_and_a_budget_on_it_fails() {
    let t = tmp("no-profile.json", r#"[{"name":"Layout","ph":"X","pid":1,"tid":1,"ts":1,"dur":5}]"#);
    let o = jscalls(&["calls", &t]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("no CPU profile to estimate calls from (no usable Profile and ProfileChunk events): record the trace with the disabled-by-default-v8.cpu_profiler category"),
        "{}",
        stderr(&o)
    );
    assert_eq!(jscalls(&["calls", &t, "--strict"]).status.code(), Some(1));
    // A budget measured on nothing fails with its own status; allow-missing lets it pass.
    let b = tmp("b.toml", "[[rule]]\nfunction = \"render\"\nself = \"5ms\"\n");
    let o = jscalls(&["check", &t, "--budget", &b, "-q"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 passed, 0 failed, 1 not measured"));
    assert!(String::from_utf8_lossy(&o.stdout).contains("no thread with a CPU profile in the input"));
    let b = tmp("b2.toml", "[[rule]]\nfunction = \"render\"\nself = \"5ms\"\nallow-missing = true\n");
    assert_eq!(jscalls(&["check", &t, "--budget", &b, "-q"]).status.code(), Some(0));
    // On a recording that has calls, a function it lacks is the same.
    let b = tmp("b3.toml", "[[rule]]\nfunction = \"nowhere\"\ncalls = 1\n");
    assert_eq!(jscalls(&["check", "fixtures/chrome-ui.json.gz", "--budget", &b, "-q"]).status.code(), Some(4));
}

#[test]
fn a_commands_options_go_before_or_after_its_name() {
    let after = jscalls(&["calls", "fixtures/rules/be-pairing.json", "--format", "json", "-q"]);
    for args in [
        &["--format", "json", "calls", "fixtures/rules/be-pairing.json", "-q"][..],
        &["-q", "--format=json", "calls", "fixtures/rules/be-pairing.json"][..],
    ] {
        let before = jscalls(args);
        assert!(before.status.success(), "{args:?}: {}", stderr(&before));
        assert_eq!(before.stdout, after.stdout, "{args:?}");
    }
    let out = tmp("o.json", "");
    let o = jscalls(&["-o", &out, "calls", "fixtures/rules/be-pairing.json", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), after.stdout);
    // An option's value that is a command's name stays a value.
    let o = jscalls(&["--thread", "tree", "tree", "fixtures/chrome-ui.json.gz"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--thread tree: no thread with calls is tree"), "{}", stderr(&o));
}

#[test]
fn options_that_would_change_nothing_are_refused() {
    for cmd in ["tree", "export", "check", "diff"] {
        let budget: &[&str] = if cmd == "check" { &["--budget", "README.md"] } else { &[] };
        let o = jscalls(&[&[cmd, "fixtures/rules/be-pairing.json", "--bounds"][..], budget].concat());
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        assert_eq!(
            stderr(&o),
            format!("jscalls: error: --bounds gives each call an interval in the calls and timeline outputs; {cmd} writes no call\n")
        );
    }
    let out = crate::support::scratch().join("first-x.speedscope.json");
    let o = jscalls(&["export", "fixtures/chrome-ui.json.gz", "--to", "svg", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--to svg writes an SVG flame graph, but -o"), "{}", stderr(&o));
    assert!(!out.exists());
    let o = jscalls(&["calls", "fixtures/rules/be-pairing.json", "--thread", "main"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("jscalls: error: calls writes every thread; --thread chooses one in tree and export")
    );
}

#[test]
fn bad_rules_and_levels_say_what_is_wrong() {
    let ui = "fixtures/chrome-ui.json.gz";
    for (rule, want) in [
        ("selff>10%", "unknown metric 'selff': expected self, total or calls"),
        ("self>10%@a>>b", "'a>>b': a path names a function between each '>'"),
        ("self>10%@", "expected a function or a path after @"),
    ] {
        let o = jscalls(&["diff", ui, ui, "--fail-on", rule]);
        assert_eq!(o.status.code(), Some(2), "{rule}");
        assert!(stderr(&o).contains(want), "{rule}: {}", stderr(&o));
    }
    for alpha in ["7", "0", "-1", "nan"] {
        let o = jscalls(&["diff", "--runs", ui, ui, &format!("--alpha={alpha}")]);
        assert_eq!(o.status.code(), Some(2), "{alpha}");
        assert!(stderr(&o).contains("expected a probability between 0 and 1"), "{}", stderr(&o));
    }
}

#[test]
fn every_error_speaks_one_style_and_help_says_what_is_true() {
    // clap's errors as the command's own: `jscalls: error: …`, no colour codes.
    let o = jscalls(&["calls", "--bogus"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("jscalls: error: unexpected argument '--bogus' found"), "{}", stderr(&o));
    assert!(!stderr(&o).contains('\u{1b}'));
    let help = String::from_utf8(jscalls(&["--help"]).stdout).unwrap();
    assert!(
        help.contains("3 a rule of diff --fail-on or check broken, 4 a check rule that measured nothing"),
        "{help}"
    );
    let help = String::from_utf8(jscalls(&["tree", "--help"]).stdout).unwrap();
    assert!(help.contains("`devtools` (DevTools' own"), "{help}");
    assert!(help.contains("Firefox profiles"), "{help}");
    assert!(help.contains("NAME.tree.txt"), "{help}");
}

/// The minimum Rust the README and Cargo.toml state is the newest `rust-version` of the locked
/// crates the command is built from, read from cargo's metadata.
#[test]
fn the_stated_minimum_rust_is_the_lock_files() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let host = String::from_utf8(Command::new("rustc").arg("-vV").output().unwrap().stdout).unwrap();
    let host = host.lines().find_map(|l| l.strip_prefix("host: ")).unwrap().to_owned();
    let meta = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--filter-platform", &host])
        .output()
        .unwrap();
    assert!(meta.status.success(), "{}", String::from_utf8_lossy(&meta.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&meta.stdout).unwrap();
    let version = |v: &str| v.split('.').take(2).map(|x| x.parse::<u32>().unwrap()).collect::<Vec<_>>();
    let nodes: std::collections::HashMap<&str, &serde_json::Value> =
        meta["resolve"]["nodes"].as_array().unwrap().iter().map(|n| (n["id"].as_str().unwrap(), n)).collect();
    let packages: std::collections::HashMap<&str, &serde_json::Value> =
        meta["packages"].as_array().unwrap().iter().map(|p| (p["id"].as_str().unwrap(), p)).collect();
    // What building the command needs: normal and build dependencies from the root.
    let root = meta["resolve"]["root"].as_str().unwrap();
    let (mut seen, mut todo) = (std::collections::HashSet::new(), vec![root]);
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        for dep in nodes[id]["deps"].as_array().unwrap() {
            if dep["dep_kinds"].as_array().unwrap().iter().any(|k| k["kind"].is_null() || k["kind"] == "build") {
                todo.push(dep["pkg"].as_str().unwrap());
            }
        }
    }
    let newest = seen
        .iter()
        .filter(|id| **id != root)
        .filter_map(|id| packages[id]["rust_version"].as_str().map(version))
        .max()
        .unwrap();
    let stated = version(packages[root]["rust_version"].as_str().unwrap());
    assert_eq!(stated, newest, "Cargo.toml's rust-version against the locked crates'");
    let readme = std::fs::read_to_string("README.md").unwrap();
    let said = format!("Rust {}.{} or newer", stated[0], stated[1]);
    assert!(readme.contains(&said), "README.md does not say {said}");
    assert!(readme.contains("cargo install --locked --path ."), "README.md installs without --locked");
}

/// What a person reads names no part of DevTools' code (the calls output keeps the reference
/// engine's notes, which parity compares).
#[test]
fn user_output_speaks_the_users_words() {
    let summary = jscalls(&["calls", "fixtures/chrome-ui.json.gz", "--format", "summary", "-q"]);
    let text = String::from_utf8(summary.stdout).unwrap();
    assert!(text.contains("no calls (DevTools shows none for this process: it has no page URL"), "{text}");
    let mut all = text;
    for args in [&["--help"][..], &["calls", "--help"], &["tree", "--help"], &["export", "--help"]] {
        all.push_str(&String::from_utf8(jscalls(args).stdout).unwrap());
    }
    for internal in ["RendererHandler", "SamplesIntegrator", "fake-JS", "forEachFrame", "treify"] {
        assert!(!all.contains(internal), "{internal} in user output");
    }
}

/// The calls output names its engine as the reference engine's answers do (`+v6` for the
/// newest DevTools), and `--engine v6` is that engine too.
#[test]
fn the_engine_label_is_the_references() {
    for (engine, oracle) in
        [("0.0.65", "chrome-worker-hires.oracle.json"), ("v6", "chrome-worker-hires.oracle-v6.json")]
    {
        let o = jscalls(&["calls", "fixtures/chrome-worker-hires.json.gz", "--format", "json", "--engine", engine]);
        assert!(o.status.success(), "{}", stderr(&o));
        let ours: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let theirs: serde_json::Value =
            serde_json::from_slice(&std::fs::read(format!("fixtures/{oracle}")).unwrap()).unwrap();
        assert_eq!(ours["engine"], theirs["engine"], "--engine {engine}");
    }
}

/// Help on a terminal is coloured unless `NO_COLOR` is set (errors are never coloured).
#[test]
fn no_color_turns_help_plain_on_a_terminal() {
    let on_terminal = |no_color: bool| {
        let cmd =
            format!("{}{} export --help", if no_color { "NO_COLOR=1 " } else { "" }, env!("CARGO_BIN_EXE_jscalls"));
        Command::new("script").args(["-qec", &cmd, "/dev/null"]).stdin(std::process::Stdio::null()).output().ok()
    };
    let (Some(coloured), Some(plain)) = (on_terminal(false), on_terminal(true)) else {
        eprintln!("\nSKIPPED no_color_turns_help_plain_on_a_terminal: util-linux `script` is not installed");
        return;
    };
    assert!(coloured.stdout.contains(&0x1b), "help on a terminal is coloured");
    assert!(!plain.stdout.contains(&0x1b), "{}", String::from_utf8_lossy(&plain.stdout));
    assert!(String::from_utf8_lossy(&plain.stdout).contains("--to <TO>"));
}

/// The README's summary is what `calls` prints, line for line, up to its `...`.
#[test]
fn the_readmes_summary_is_the_commands() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let block = readme.split("$ jscalls calls fixtures/chrome-ui.json.gz\n").nth(1).expect("the README's example");
    let shown: Vec<&str> = block.lines().take_while(|l| l.trim() != "...").collect();
    let o = jscalls(&["calls", "fixtures/chrome-ui.json.gz", "--format", "summary", "-q"]);
    let text = String::from_utf8(o.stdout).unwrap();
    let printed: Vec<&str> = text.lines().take(shown.len()).collect();
    assert_eq!(shown, printed);
}
