//! `jscalls view`: the server answers only the viewer, only its path, then stops; and the real
//! Firefox Profiler (../shared/viewers, in headless Chromium) shows what it serves.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use crate::support::{jscalls, jscalls_command};

/// A raw HTTP/1.1 request; the status line and the whole answer.
fn request(port: u16, head: &str) -> (String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    (answer.lines().next().unwrap_or("").to_owned(), answer)
}

#[test]
fn the_server_answers_only_the_viewer_at_its_path_then_stops() {
    let mut child = jscalls_command()
        .args([
            "view",
            "fixtures/chrome-ui.json.gz",
            "--no-open",
            "--viewer-url",
            "http://127.0.0.1:4242",
            "--timeout",
            "30",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("jscalls: open http://127.0.0.1:4242/from-url/").expect(&line);
    let profile = url.trim_end_matches('/').replace("%3A", ":").replace("%2F", "/");
    let rest = profile.strip_prefix("http://127.0.0.1:").unwrap();
    let (port, path) = rest.split_once('/').unwrap();
    let (port, path): (u16, String) = (port.parse().unwrap(), format!("/{path}"));
    let host = format!("Host: 127.0.0.1:{port}\r\n");
    // It listens on loopback only: /proc/net/tcp lists the socket as 127.0.0.1 (0100007F).
    if let Ok(table) = std::fs::read_to_string("/proc/net/tcp") {
        let listening: Vec<&str> = table
            .lines()
            .skip(1)
            .filter_map(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                (cells.get(3) == Some(&"0A") && cells[1].ends_with(&format!(":{port:04X}"))).then_some(cells[1])
            })
            .collect();
        assert_eq!(listening, [format!("0100007F:{port:04X}")]);
    }
    // A guessed path, another host name (DNS rebinding), a preflight from another origin.
    let guess = "/00000000000000000000000000000000/profile.json";
    assert_eq!(request(port, &format!("GET {guess} HTTP/1.1\r\n{host}\r\n")).0, "HTTP/1.1 404 Not Found");
    assert_eq!(
        request(port, &format!("GET {path} HTTP/1.1\r\nHost: attacker.example:{port}\r\n\r\n")).0,
        "HTTP/1.1 404 Not Found"
    );
    let (status, answer) =
        request(port, &format!("OPTIONS {path} HTTP/1.1\r\n{host}Origin: http://attacker.example\r\n\r\n"));
    assert_eq!(status, "HTTP/1.1 204 No Content");
    assert!(!answer.contains("Access-Control-Allow-Origin"), "{answer}");
    // The viewer: the export, readable by its origin only.
    let (status, answer) =
        request(port, &format!("GET {path} HTTP/1.1\r\n{host}Origin: http://127.0.0.1:4242\r\n\r\n"));
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(answer.contains("Access-Control-Allow-Origin: http://127.0.0.1:4242\r\n"), "{answer}");
    let body = answer.split_once("\r\n\r\n").unwrap().1;
    let export = jscalls(&["export", "fixtures/chrome-ui.json.gz", "--to", "firefox", "-q"]);
    assert_eq!(body.as_bytes(), &export.stdout[..]);
    // Then it stops, successfully.
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_viewer_that_never_comes_ends_the_wait_at_the_timeout() {
    let o = jscalls(&["view", "fixtures/chrome-ui.json.gz", "--no-open", "--timeout", "0.5"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("the viewer did not fetch the profile"));
    let o = jscalls(&["view", "fixtures/chrome-ui.json.gz", "--no-open", "--viewer-url", "ftp://x"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_firefox_profiler_opened_at_the_printed_url_shows_the_profile() {
    let Some(viewers) = crate::support::viewers("the_firefox_profiler_opened_at_the_printed_url_shows_the_profile")
    else {
        return;
    };
    let o = Command::new("node")
        .arg("tests/viewers/view.mjs")
        .arg(env!("CARGO_BIN_EXE_jscalls"))
        .arg("fixtures/chrome-ui.json.gz")
        .arg(&viewers)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{said}{}", String::from_utf8_lossy(&o.stderr));
    assert!(said.contains("\"outcome\":\"shown\"") && said.contains("\"guessed\":404"), "{said}");
}
