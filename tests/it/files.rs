//! The files a command reads: never written by any name (another input, `-o DIR`, a symlink,
//! an option's file), read with a limit when an option names them, and special files (FIFOs,
//! devices, pipes, standard input) read once, by every command alike.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const F: &str = "fixtures";

use crate::support::jscalls_command as jscalls;

fn tmpdir(name: &str) -> PathBuf {
    crate::support::tmpdir("files", name)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn gunzip(p: &str) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(std::fs::File::open(p).unwrap()), &mut out).unwrap();
    out
}

/// A FIFO at `path` that a thread fills with `bytes` once a reader opens it.
fn fifo(path: &Path, bytes: Vec<u8>) -> std::thread::JoinHandle<()> {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        // The reader may close early (an error ends the run): a broken pipe is no failure here.
        if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(path) {
            let _ = std::io::Write::write_all(&mut f, &bytes);
        }
    })
}

#[test]
fn with_several_inputs_and_o_dir_no_output_replaces_another_input() {
    let d = tmpdir("other-input");
    std::fs::copy(format!("{F}/chrome-ui.json.gz"), d.join("x.json.gz")).unwrap();
    std::fs::write(d.join("x.timeline.json"), gunzip(&format!("{F}/chrome-worker-run1.json.gz"))).unwrap();
    let before = std::fs::read(d.join("x.timeline.json")).unwrap();
    let out = jscalls()
        .arg("timeline")
        .arg(d.join("x.json.gz"))
        .arg(d.join("x.timeline.json"))
        .arg("-o")
        .arg(&d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!("jscalls: error: the output {0}/x.timeline.json is the input; refusing to overwrite it\n", d.display())
    );
    assert_eq!(std::fs::read(d.join("x.timeline.json")).unwrap(), before);
    // Through a symbolic link in DIR that points at an input elsewhere.
    let e = tmpdir("other-input-link");
    let input = e.join("kept.json");
    std::fs::copy(format!("{F}/rules/be-pairing.json"), &input).unwrap();
    std::os::unix::fs::symlink(&input, d.join("be-pairing.calls.json")).unwrap();
    let out =
        jscalls().args(["calls", "fixtures/rules/be-pairing.json"]).arg(&input).arg("-o").arg(&d).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("is the input {}; refusing", input.display())), "{}", stderr(&out));
    assert_eq!(std::fs::read(&input).unwrap(), std::fs::read(format!("{F}/rules/be-pairing.json")).unwrap());
}

#[test]
fn standard_input_among_several_inputs_is_written_as_stdin() {
    let d = tmpdir("stdin-dir");
    let out = jscalls()
        .args(["calls", "-q", "-", "fixtures/rules/be-pairing.json", "-o"])
        .arg(&d)
        .stdin(std::fs::File::open(format!("{F}/chrome-worker-run1.json.gz")).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let want = jscalls().args(["calls", "-q", "fixtures/chrome-worker-run1.json.gz"]).output().unwrap().stdout;
    let got = String::from_utf8(std::fs::read(d.join("stdin.calls.json")).unwrap()).unwrap();
    // The same calls; the input is labelled `-`.
    let want = String::from_utf8(want).unwrap().replace("\"input\":\"chrome-worker-run1.json.gz\"", "\"input\":\"-\"");
    assert_eq!(got, want);
    assert!(d.join("be-pairing.calls.json").is_file());
}

#[test]
fn a_file_an_option_reads_is_never_the_output() {
    let d = tmpdir("side");
    let nm = d.join("app.nm");
    std::fs::copy(format!("{F}/gecko/app.nm"), &nm).unwrap();
    let before = std::fs::read(&nm).unwrap();
    let symbols = format!("app={}", nm.display());
    for args in [
        vec!["tree", "fixtures/gecko/hand.json", "--symbols", &symbols, "-o"],
        vec!["export", "fixtures/gecko/hand.json", "--to", "collapsed", "--symbols", &symbols, "-o"],
        vec!["calls", "fixtures/gecko/hand.json", "--symbols", &symbols, "-o"],
    ] {
        let out = jscalls().args(&args).arg(&nm).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!("jscalls: error: the output {} is the symbols for app; refusing to overwrite it\n", nm.display())
        );
    }
    let budget = d.join("budget.toml");
    std::fs::write(&budget, "[[rule]]\nfunction = \"relayout\"\nself = \"20ms\"\n").unwrap();
    let out = jscalls()
        .args(["check", "fixtures/chrome-ui.json.gz", "--budget"])
        .arg(&budget)
        .arg("-o")
        .arg(&budget)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is the budget; refusing"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&nm).unwrap(), before);
}

#[test]
fn an_options_file_is_read_with_a_limit_whatever_it_is() {
    let d = tmpdir("limits");
    let out = jscalls().args(["check", "fixtures/chrome-ui.json.gz", "--budget", "/dev/zero"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out), "jscalls: error: cannot read the budget /dev/zero: it is larger than 16 MiB\n");
    let out = jscalls().args(["tree", "fixtures/gecko/hand.json", "--symbols", "app=/dev/zero"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out), "jscalls: error: cannot read the symbols for app /dev/zero: it is larger than 256 MiB\n");
    let out = jscalls()
        .args(["tree", "fixtures/gecko/hand.json", "--symbols"])
        .arg(format!("app={}", d.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!("jscalls: error: cannot read the symbols for app {}: it is a directory\n", d.display())
    );
    // A FIFO is read as a stream; gzip is known by its content, whatever the name.
    let writer = fifo(&d.join("budget.fifo"), b"[[rule]]\nfunction = \"relayout\"\nself = \"1s\"\n".to_vec());
    let out = jscalls()
        .args(["check", "fixtures/chrome-ui.json.gz", "--budget"])
        .arg(d.join("budget.fifo"))
        .output()
        .unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::copy(format!("{F}/gecko/libc.so.6.nm.gz"), d.join("libc.txt")).unwrap();
    let by_content = jscalls()
        .args(["tree", "fixtures/gecko/firefox-esr-sites.json.gz", "-q", "--symbols"])
        .arg(format!("libc.so.6={}", d.join("libc.txt").display()))
        .output()
        .unwrap();
    let by_name = jscalls()
        .args([
            "tree",
            "fixtures/gecko/firefox-esr-sites.json.gz",
            "-q",
            "--symbols",
            "libc.so.6=fixtures/gecko/libc.so.6.nm.gz",
        ])
        .output()
        .unwrap();
    assert!(by_content.status.success(), "{}", stderr(&by_content));
    assert_eq!(by_content.stdout, by_name.stdout);
}

#[test]
fn a_budget_that_is_not_utf8_is_a_usage_error_naming_its_line() {
    let d = tmpdir("utf8");
    let b = d.join("b.toml");
    std::fs::write(&b, b"[[rule]]\nfunction = \"f\xff\"\nself = \"1ms\"\n").unwrap();
    let out = jscalls().args(["check", "fixtures/chrome-ui.json.gz", "--budget"]).arg(&b).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out), format!("jscalls: error: {}:2:14: expected UTF-8 text, found byte 0xff\n", b.display()));
}

#[test]
fn diff_reads_fifos_pipes_and_standard_input_once() {
    let d = tmpdir("diff-fifo");
    let (run1, run2) = (format!("{F}/chrome-worker-run1.json.gz"), format!("{F}/chrome-worker-run2.json.gz"));
    let want = jscalls().args(["diff", &run1, &run2]).output().unwrap();
    assert!(want.status.success(), "{}", stderr(&want));
    let named =
        |o: &Output, a: &str, b: &str| String::from_utf8_lossy(&o.stdout).replacen(a, &run1, 1).replacen(b, &run2, 1);
    // Two FIFOs, gzipped and plain.
    let (f1, f2) = (d.join("f1"), d.join("f2"));
    let writers = [fifo(&f1, std::fs::read(&run1).unwrap()), fifo(&f2, gunzip(&run2))];
    let mut child =
        jscalls().arg("diff").arg(&f1).arg(&f2).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // A hang is what this guards against: the run must end once both are read.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "diff of two FIFOs hangs");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    writers.into_iter().for_each(|w| w.join().unwrap());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        named(&out, &f1.display().to_string(), &f2.display().to_string()),
        String::from_utf8_lossy(&want.stdout)
    );
    // Standard input as BASE.
    let out = jscalls().args(["diff", "-", &run2]).stdin(std::fs::File::open(&run1).unwrap()).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(named(&out, "<stdin>", &run2), String::from_utf8_lossy(&want.stdout));
}

#[test]
fn diff_runs_with_an_empty_side_is_a_usage_error() {
    for sides in [[",", ","], [",", "fixtures/chrome-worker-run1.json.gz"]] {
        let out = jscalls().args(["diff", "--runs", sides[0], sides[1], "--fail-on", "self>+1%"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{sides:?}");
        assert_eq!(stderr(&out), "jscalls: error: --runs: ',' names no run\n");
    }
}
