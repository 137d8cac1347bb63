//! The command line: exit codes, standard input and output, atomic output files, devices,
//! `--strict`, `-q`, and an interrupted write.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn jscalls() -> Command {
    Command::new(env!("CARGO_BIN_EXE_jscalls"))
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("jscalls-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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
