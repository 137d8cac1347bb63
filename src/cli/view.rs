//! `jscalls view`: the export served once from 127.0.0.1 and opened in a viewer (the Firefox
//! Profiler's `from-url`, speedscope's `#profileURL=`), so that seeing a result is one command.
//!
//! The server answers one path only, made of 128 random bits, and only to requests addressed
//! to 127.0.0.1 on its port (a web page's DNS rebinding names another host); the browser may
//! read the answer only from the viewer's origin (CORS). It stops when the profile has been
//! sent whole, on Ctrl-C, or at the timeout.

use jscalls::ranges::Timings;
use std::io::{self, Read, Seek, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use jscalls::{Config, Error};

use super::args::{ExportArgs, Global, OutputArgs, ViewArgs, ViewerArg};
use super::export::{self, ExportTo};
use super::report::{assemble_file, failure};
use super::tree::Failure;
use super::Failed;

/// The largest request head read (a browser's is under 2 KB).
const HEAD_LIMIT: usize = 16 << 10;

pub(crate) fn run(args: &ViewArgs, global: &Global, cfg: &Config) -> Result<(), Failed> {
    super::no_bounds(global, "view")?;
    let (viewer, default_url) = match args.viewer {
        ViewerArg::Firefox => ("firefox", "https://profiler.firefox.com"),
        ViewerArg::Speedscope => ("speedscope", "https://www.speedscope.app"),
    };
    let base = args.viewer_url.as_deref().unwrap_or(default_url).trim_end_matches('/').to_owned();
    let origin = match url::Url::parse(&base) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => u.origin().ascii_serialization(),
        _ => return Err(Failed::Usage(format!("--viewer-url {base}: expected an http(s) URL"))),
    };
    let name = args.input.display().to_string();
    let body = profile(args, viewer, &name, global, cfg)?;
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| failure("view", Error::io("cannot listen on 127.0.0.1", e)))?;
    let port = listener.local_addr().map_err(|e| failure("view", Error::io("cannot listen on 127.0.0.1", e)))?.port();
    let token = token().map_err(|e| failure("view", Error::io("cannot read /dev/urandom", e)))?;
    let path = format!("/{token}/profile.json");
    let profile_url = format!("http://127.0.0.1:{port}{path}");
    let encoded: String = url::form_urlencoded::byte_serialize(profile_url.as_bytes()).collect();
    let open_url = match args.viewer {
        ViewerArg::Firefox => format!("{base}/from-url/{encoded}/"),
        ViewerArg::Speedscope => format!("{base}/#profileURL={encoded}"),
    };
    let opened = !args.no_open && open_in_browser(&open_url);
    let timeout = Duration::from_secs_f64(args.timeout);
    eprintln!(
        "jscalls: {} {open_url}\njscalls: serving {name} ({} bytes) until the viewer has it, for at most {} s (Ctrl-C stops)",
        if opened { "opened" } else { "open" },
        body.len(),
        args.timeout
    );
    let server = Server { host: format!("127.0.0.1:{port}"), path, origin, body };
    match server.serve(&listener, Instant::now() + timeout) {
        Ok(true) => Ok(()),
        Ok(false) => Err(failure(
            "view",
            Error::io(
                "the viewer did not fetch the profile",
                io::Error::other(format!("no request in {} s", args.timeout)),
            ),
        )),
        Err(e) => Err(failure("view", Error::io("cannot serve the profile", e))),
    }
}

/// The export the viewer reads: a speedscope file as it is, else the input estimated and
/// exported as `export` would.
fn profile(args: &ViewArgs, viewer: &str, name: &str, global: &Global, cfg: &Config) -> Result<Body, Failed> {
    let input = &args.input;
    if viewer == "speedscope" && ExportTo::from_path(input).is_some_and(|f| f.0.name == "speedscope") {
        return super::files::read_option_file(input, "the export", 1 << 30)
            .map(Body::Bytes)
            .map_err(|e| failure(name, e));
    }
    let export_args = ExportArgs {
        out: OutputArgs { inputs: vec![input.clone()], output: None, fsync: false },
        to: None,
        by_time: false,
        icicle: false,
        sources: Vec::new(),
        no_sources: false,
        select: args.select.clone(),
    };
    let format = export::format_named(viewer).expect("the viewers' formats exist");
    let mut cfg = cfg.clone();
    cfg.keep_event_names = true;
    cfg.keep_lines = args.select.by_line;
    cfg.keep_scripts |= viewer == "firefox";
    let query = args.select.range.query();
    cfg.range_event_names = query.map_or_else(Vec::new, |q| Timings::names_for(&[q]));
    let assembled = assemble_file(input, name, global, &cfg)?;
    // The range asked for, found in the input: the viewer shows it only, as `export` would.
    let window = match query {
        Some(q) => Some(super::range::resolve(q, &assembled, name)?),
        None => None,
    };
    let label = Path::new(input).file_name().map_or(name.to_owned(), |f| f.to_string_lossy().into_owned());
    let rendered =
        export::render(assembled, &export_args, format, &label, cfg.threads, Default::default(), window.as_ref())
            .map_err(|f| match f {
                Failure::Usage(m) => Failed::Usage(m),
                Failure::Input(e) => failure(name, e),
            })?;
    // Into a file without a name, not memory: beside the export's own tables, a profile of a
    // 5 GB trace (300 MB) would double the peak.
    let spill = |e: io::Error| failure(name, Error::io("cannot write the export to a temporary file", e));
    let mut file = io::BufWriter::with_capacity(64 << 10, tempfile::tempfile().map_err(spill)?);
    rendered.write_to(&mut file).map_err(spill)?;
    let mut file = file.into_inner().map_err(|e| spill(e.into_error()))?;
    let len = file.stream_position().map_err(spill)?;
    let mut first = [0u8; 1];
    file.rewind().and_then(|()| file.read(&mut first)).map_err(spill)?;
    Ok(Body::File { file, len, json: matches!(first[0], b'{' | b'[') })
}

/// The profile served: bytes, or a file of `len` bytes (JSON or not).
enum Body {
    Bytes(Vec<u8>),
    File { file: std::fs::File, len: u64, json: bool },
}

impl Body {
    fn len(&self) -> u64 {
        match self {
            Body::Bytes(b) => b.len() as u64,
            Body::File { len, .. } => *len,
        }
    }
}

/// Waits until `listener` has a connection to accept or `limit` has passed (at once, not on
/// the next tick of a polling loop: the viewer's request is answered as it comes).
#[cfg(unix)]
fn wait_readable(listener: &TcpListener, limit: Duration) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut fd = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let ms = limit.as_millis().clamp(1, 1000) as libc::c_int;
    // SAFETY: one pollfd, valid for the call.
    if unsafe { libc::poll(&mut fd, 1, ms) } < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn wait_readable(_: &TcpListener, limit: Duration) -> io::Result<()> {
    std::thread::sleep(limit.min(Duration::from_millis(5)));
    Ok(())
}

/// 128 random bits, as hex.
fn token() -> io::Result<String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// `$BROWSER`, then the system's opener; whether one started.
fn open_in_browser(url: &str) -> bool {
    let mut tries: Vec<String> = std::env::var("BROWSER").ok().into_iter().filter(|b| !b.is_empty()).collect();
    tries.extend(["xdg-open", "open"].map(str::to_owned));
    tries.iter().any(|cmd| {
        std::process::Command::new(cmd)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .is_ok()
    })
}

struct Server {
    /// The only `Host` answered.
    host: String,
    /// The only path answered.
    path: String,
    /// The only origin allowed to read the answer.
    origin: String,
    body: Body,
}

impl Server {
    /// Answers requests until the profile has been sent whole (true) or the deadline (false).
    fn serve(&self, listener: &TcpListener, deadline: Instant) -> io::Result<bool> {
        listener.set_nonblocking(true)?;
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    stream.set_nonblocking(false)?;
                    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
                    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
                    // A client that breaks off is its own loss; the server goes on.
                    if let Ok(true) = self.answer(stream) {
                        return Ok(true);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(false);
                    }
                    wait_readable(listener, left)?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// One request: whether it was the profile, sent whole.
    fn answer(&self, mut stream: TcpStream) -> io::Result<bool> {
        let mut head = Vec::new();
        let mut buf = [0u8; 2048];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf)?;
            if n == 0 || head.len() + n > HEAD_LIMIT {
                return Ok(false);
            }
            head.extend_from_slice(&buf[..n]);
        }
        let head = String::from_utf8_lossy(&head);
        let mut lines = head.split("\r\n");
        let mut request = lines.next().unwrap_or("").split(' ');
        let (method, target) = (request.next().unwrap_or(""), request.next().unwrap_or(""));
        let header = |name: &str| {
            head.split("\r\n")
                .skip(1)
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
                .map(|(_, v)| v.trim().to_owned())
        };
        let cors = match header("origin") {
            Some(o) if o == self.origin => format!("Access-Control-Allow-Origin: {o}\r\nVary: Origin\r\n"),
            _ => "Vary: Origin\r\n".to_owned(),
        };
        if header("host").as_deref() != Some(self.host.as_str()) || target != self.path {
            return respond(&mut stream, "404 Not Found", &cors, b"not found\n").map(|()| false);
        }
        match method {
            "OPTIONS" => {
                let allow = format!("{cors}Access-Control-Allow-Methods: GET\r\nAccess-Control-Allow-Headers: *\r\n");
                respond(&mut stream, "204 No Content", &allow, b"").map(|()| false)
            }
            "GET" => match &self.body {
                Body::Bytes(b) => respond(&mut stream, "200 OK", &cors, b).map(|()| true),
                Body::File { file, len, json } => {
                    stream.write_all(head_of("200 OK", &cors, *len, *json).as_bytes())?;
                    // From its start each time (a client that broke off may come again).
                    let mut from = file;
                    from.rewind()?;
                    let sent = io::copy(&mut from.take(*len), &mut stream)?;
                    stream.flush()?;
                    Ok(sent == *len)
                }
            },
            _ => respond(&mut stream, "405 Method Not Allowed", &cors, b"").map(|()| false),
        }
    }
}

fn respond(stream: &mut TcpStream, status: &str, extra: &str, body: &[u8]) -> io::Result<()> {
    let json = body.starts_with(b"{") || body.starts_with(b"[");
    stream.write_all(head_of(status, extra, body.len() as u64, json).as_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}

/// An answer's status line and headers.
fn head_of(status: &str, extra: &str, len: u64, json: bool) -> String {
    let kind = if json { "application/json" } else { "text/plain" };
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len}\r\nCache-Control: no-store\r\nConnection: close\r\n{extra}\r\n"
    )
}
