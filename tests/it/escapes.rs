//! Every text output escapes what its medium needs: SVG and XML their control characters,
//! markdown its pipes, line breaks and backticks, a terminal its escape sequences; names that
//! look like options or start with a space are drawn like any other.

use std::path::PathBuf;
use std::process::{Command, Output};

fn jscalls(args: &[&str]) -> Output {
    crate::support::jscalls_command().args(args).arg("-q").output().unwrap()
}

/// A `.cpuprofile` of two functions with these names, in a file of this name.
fn profile(file: &str, a: &str, b: &str) -> PathBuf {
    let d = crate::support::scratch().join("escapes");
    std::fs::create_dir_all(&d).unwrap();
    let node = |id: u32, name: &str, line: u32| serde_json::json!({"id": id, "callFrame": {"functionName": name, "scriptId": "1", "url": "a.js", "lineNumber": line, "columnNumber": 1}});
    let root = serde_json::json!({"id": 1, "callFrame": {"functionName": "(root)", "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1}, "children": [2, 3]});
    let p = serde_json::json!({"nodes": [root, node(2, a, 1), node(3, b, 2)], "startTime": 0, "endTime": 1000,
        "samples": [2, 2, 3, 3, 2], "timeDeltas": [100, 100, 100, 100, 100]});
    let path = d.join(file);
    std::fs::write(&path, p.to_string()).unwrap();
    path
}

#[test]
fn svg_is_well_formed_whatever_the_names() {
    let p = profile("ctrl.cpuprofile", "x\u{1}y", "z\u{0}<&>\u{7f}\u{9b}");
    let o = jscalls(&["export", p.to_str().unwrap(), "--to", "svg"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = String::from_utf8(o.stdout).unwrap();
    let opt = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    roxmltree::Document::parse_with_options(&svg, opt).expect("well-formed XML");
    assert!(svg.contains("x\u{fffd}y a.js:2:2"), "the name is kept, its control character shown as U+FFFD");
}

#[test]
fn svg_draws_names_that_look_like_options_or_start_with_a_space() {
    let p = profile("dash.cpuprofile", "-a", " b");
    let o = jscalls(&["export", p.to_str().unwrap(), "--to", "svg"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = String::from_utf8(o.stdout).unwrap();
    assert!(svg.contains("-a a.js:2:2"), "{svg}");
    assert!(svg.contains("b a.js:3:2"), "{svg}");
}

#[test]
fn terminal_text_shows_escape_sequences_instead_of_obeying_them() {
    let p = profile("esc.cpuprofile", "x\u{1b}[31mRED", "line\nbreak");
    let p = p.to_str().unwrap();
    for args in [&["tree", p, "--flat"][..], &["tree", p], &["calls", p, "--format", "summary"]] {
        let text = String::from_utf8(jscalls(args).stdout).unwrap();
        assert!(!text.contains('\u{1b}'), "{args:?}: {text:?}");
        assert!(text.contains("x\\u{1b}[31mRED"), "{args:?}: {text}");
        assert!(text.contains("line\\u{a}break"), "{args:?}: {text}");
    }
    // Collapsed stacks are lines: a line break or control character in a name is not one.
    let text = String::from_utf8(jscalls(&["export", p, "--to", "collapsed"]).stdout).unwrap();
    assert_eq!(text.lines().count(), 2, "{text:?}");
    assert!(!text.contains('\u{1b}'));
    // Warnings quote the input: shown, not obeyed.
    let d = crate::support::scratch().join("escapes-w");
    std::fs::create_dir_all(&d).unwrap();
    let t = d.join("w.json");
    std::fs::write(
        &t,
        r#"[{"name":"A","ph":"B","pid":1,"tid":1,"ts":1},{"name":"\u001b[2J","ph":"E","pid":1,"tid":1,"ts":2}]"#,
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_jscalls")).args(["calls", t.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(!err.contains('\u{1b}') && err.contains("\\u{1b}[2J"), "{err}");
}

#[test]
fn markdown_keeps_its_tables_and_code_spans_whole() {
    let a = profile("a`b|c.cpuprofile", "f|g", "new\nline `tick`");
    let b = profile("plain.cpuprofile", "f|g", "new\nline `tick`");
    let o =
        jscalls(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--level", "functions", "--format", "markdown"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = String::from_utf8(o.stdout).unwrap();
    assert!(md.contains(&format!("BASE ``{}``", a.display())), "{md}");
    // Every table row has as many cells as its header.
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    let cells = |l: &str| l.replace("\\|", "").matches('|').count();
    assert!(rows.len() >= 4, "{md}");
    assert!(rows.iter().all(|r| cells(r) == cells(rows[0])), "{md}");
    assert!(md.contains("f\\|g a.js:2:2") && md.contains("new\\\\u{a}line \\`tick\\` a.js:3:2"), "{md}");
    // check's markdown: the budget's name in a code span, the rule in a cell.
    let budget = a.with_file_name("b`|.toml");
    std::fs::write(&budget, "[[rule]]\nname = \"a|b\\nc\"\nfunction = \"f|g\"\ncalls = 10\n").unwrap();
    let o = jscalls(&["check", a.to_str().unwrap(), "--budget", budget.to_str().unwrap(), "--format", "markdown"]);
    let md = String::from_utf8(o.stdout).unwrap();
    assert!(md.contains(&format!("``{}``", budget.display())), "{md}");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 3, "{md}");
    assert!(rows.iter().all(|r| cells(r) == 4), "{md}");
}

/// A trace event's name that is not UTF-8 is shown as Node reads it (U+FFFD), in the stacks of
/// the calls it ran inside; a name that is UTF-8, as it is.
#[test]
fn an_event_name_that_is_not_utf8_is_shown_with_its_replacement() {
    use std::io::Read;
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open("fixtures/chrome-ui.json.gz").unwrap())
        .read_to_end(&mut text)
        .unwrap();
    // Every forced layout renamed, keeping the length: `Lay\xffout` and `UpdateLayoutTr\u{e9}`.
    let renamed = |text: &[u8], from: &[u8], to: &[u8]| {
        let mut out = Vec::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.windows(from.len()).position(|w| w == from) {
            out.extend_from_slice(&rest[..at]);
            out.extend_from_slice(to);
            rest = &rest[at + from.len()..];
        }
        out.extend_from_slice(rest);
        out
    };
    let text = renamed(&text, b"\"name\":\"Layout\"", b"\"name\":\"Lay\xffout\"");
    let text = renamed(&text, b"\"name\":\"UpdateLayoutTree\"", "\"name\":\"UpdateLayoutTr\u{e9}\"".as_bytes());
    let d = crate::support::scratch().join("escapes");
    std::fs::create_dir_all(&d).unwrap();
    let path = d.join("bad-name.json");
    std::fs::write(&path, &text).unwrap();
    let collapsed = |path: &str| {
        let o = jscalls(&["export", path, "--to", "collapsed"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).expect("collapsed stacks are UTF-8")
    };
    let got = collapsed(path.to_str().unwrap());
    assert!(got.contains(";Lay\u{fffd}out ") && got.contains(";UpdateLayoutTr\u{e9} "), "{got}");
    // Named back, the stacks and their weights are the fixture's.
    let back = got.replace(";Lay\u{fffd}out", ";Layout").replace(";UpdateLayoutTr\u{e9}", ";UpdateLayoutTree");
    assert_eq!(back, collapsed("fixtures/chrome-ui.json.gz"));
}
