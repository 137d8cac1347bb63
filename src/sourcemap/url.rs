//! URLs as DevTools' `Common.ParsedURL` reads and completes them (not the WHATWG parser): the
//! names and places DevTools shows are made of these strings, so they are reproduced rule for
//! rule, quirks included (a path's `..` removed without looking at percent-escapes, `//x`
//! resolved against the base's scheme, a `data:` base leaving the reference as it is).

use std::sync::OnceLock;

/// JavaScript's `\s` (WhiteSpace and LineTerminator), which the URL pattern and `trim` use.
const JS_SPACE: &str =
    r"\t\n\x0B\x0C\r \u{A0}\u{1680}\u{2000}-\u{200A}\u{2028}\u{2029}\u{202F}\u{205F}\u{3000}\u{FEFF}";

fn url_pattern() -> &'static regex::Regex {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // ParsedURL.urlRegex(), with JavaScript's classes spelled out: `\s` as above, `\d`
        // ASCII, `.` anything but a line terminator.
        let pattern = format!(
            r"^(([A-Za-z][A-Za-z0-9+.\-]*)://(?:([A-Za-z0-9\-._~%!$&'()*+,;=:]*)@)?((?:\[::[0-9]?\])|(?:[^{JS_SPACE}/:]*))(?::([0-9]+))?)(/[^#?]*)?(?:\?([^#]*))?(?:#([^\n\r\u{{2028}}\u{{2029}}]*))?$"
        );
        regex::Regex::new(&pattern).expect("the URL pattern compiles")
    })
}

/// A URL split as `ParsedURL` splits it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ParsedUrl {
    /// Whether the URL pattern matched (`ParsedURL.isValid`).
    pub valid: bool,
    /// Lower-cased; `blob` for a blob URL, `data` for a data URL the pattern did not match.
    pub scheme: String,
    blob_inner_scheme: String,
    pub host: String,
    pub port: String,
    /// `/` when the URL has none.
    pub path: String,
    pub query: String,
    pub fragment: String,
    /// The path up to its last `/` (exclusive).
    folder: String,
}

impl ParsedUrl {
    pub(crate) fn new(url: &str) -> ParsedUrl {
        let mut p = ParsedUrl::default();
        let blob = url.starts_with("blob:");
        let to_match = if blob { &url[5..] } else { url };
        if let Some(m) = url_pattern().captures(to_match) {
            p.valid = true;
            let scheme = m.get(2).map_or("", |g| g.as_str()).to_ascii_lowercase();
            if blob {
                p.blob_inner_scheme = scheme;
                p.scheme = "blob".to_owned();
            } else {
                p.scheme = scheme;
            }
            let g = |k: usize| m.get(k).map_or(String::new(), |g| g.as_str().to_owned());
            p.host = g(4);
            p.port = g(5);
            p.path = m.get(6).map_or_else(|| "/".to_owned(), |g| g.as_str().to_owned());
            p.query = g(7);
            p.fragment = g(8);
        } else {
            if url.starts_with("data:") {
                p.scheme = "data".to_owned();
                return p;
            }
            if blob {
                p.scheme = "blob".to_owned();
                return p;
            }
            if url == "about:blank" {
                p.scheme = "about".to_owned();
                return p;
            }
            p.path = url.to_owned();
        }
        if let Some(i) = p.path.rfind('/') {
            p.folder = p.path[..i].to_owned();
        }
        p
    }

    /// `ParsedURL.fromString`: the URL when the pattern matched.
    pub(crate) fn parse(url: &str) -> Option<ParsedUrl> {
        Some(ParsedUrl::new(url)).filter(|p| p.valid)
    }

    fn is_data(&self) -> bool {
        self.scheme == "data"
    }

    /// `ParsedURL.securityOrigin()`: `scheme://host[:port]`.
    pub(crate) fn security_origin(&self) -> String {
        if self.is_data() {
            return "data:".to_owned();
        }
        let scheme = if self.scheme == "blob" { &self.blob_inner_scheme } else { &self.scheme };
        let domain = if self.port.is_empty() { self.host.clone() } else { format!("{}:{}", self.host, self.port) };
        if scheme.is_empty() && domain.is_empty() {
            return String::new();
        }
        format!("{scheme}://{domain}")
    }
}

/// JavaScript's `String.prototype.trim`.
pub(crate) fn js_trim(s: &str) -> &str {
    let space = |c: char| {
        matches!(c, '\t' | '\n' | '\x0B' | '\x0C' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}')
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}')
    };
    s.trim_matches(space)
}

/// `normalizePath`: `.` and `..` segments removed (a `..` past the root is dropped).
pub(crate) fn normalize_path(path: &str) -> String {
    if !path.contains('.') {
        return path.to_owned();
    }
    let rooted = path.starts_with('/');
    let segments: Vec<&str> = (if rooted { &path[1..] } else { path }).split('/').collect();
    let mut kept: Vec<&str> = Vec::new();
    for &s in &segments {
        match s {
            "." => {}
            ".." => {
                kept.pop();
            }
            _ => kept.push(s),
        }
    }
    let mut out = kept.join("/");
    if rooted && !out.is_empty() {
        out.insert(0, '/');
    }
    let last = segments.last().copied();
    if !out.ends_with('/') && (path.ends_with('/') || last == Some(".") || last == Some("..")) {
        out.push('/');
    }
    out
}

/// `ParsedURL.completeURL(base, href)`: `href` resolved against `base`, or None when `base` is
/// not a URL.
pub(crate) fn complete_url(base: &str, href: &str) -> Option<String> {
    if ["data:", "blob:", "javascript:", "mailto:"].iter().any(|p| href.starts_with(p)) {
        return Some(href.to_owned());
    }
    if let Some(h) = ParsedUrl::parse(js_trim(href)).filter(|h| !h.scheme.is_empty()) {
        let query = if h.query.is_empty() { String::new() } else { format!("?{}", h.query) };
        let fragment = if h.fragment.is_empty() { String::new() } else { format!("#{}", h.fragment) };
        return Some(format!("{}{}{query}{fragment}", h.security_origin(), normalize_path(&h.path)));
    }
    let b = ParsedUrl::parse(base)?;
    if b.is_data() {
        return Some(href.to_owned());
    }
    if href.len() > 1 && href.starts_with("//") {
        return Some(format!("{}:{href}", b.scheme));
    }
    let origin = b.security_origin();
    let query = if b.query.is_empty() { String::new() } else { format!("?{}", b.query) };
    if href.is_empty() {
        return Some(format!("{origin}{}{query}", b.path));
    }
    if href.starts_with('#') {
        return Some(format!("{origin}{}{query}{href}", b.path));
    }
    if href.starts_with('?') {
        return Some(format!("{origin}{}{href}", b.path));
    }
    let cut = href.find(['#', '?']).unwrap_or(href.len());
    let (mut path, suffix) = (href[..cut].to_owned(), &href[cut..]);
    if !path.starts_with('/') {
        path = format!("{}/{path}", b.folder);
    }
    Some(format!("{origin}{}{suffix}", normalize_path(&path)))
}

/// `ParsedURL.isRelativeURL`: no scheme, or a Windows drive letter (`C:`).
pub(crate) fn is_relative_url(url: &str) -> bool {
    let b = url.as_bytes();
    let scheme_len = b.iter().position(|&c| c == b':');
    let has_scheme = match scheme_len {
        Some(n) if n > 0 => {
            b[0].is_ascii_alphabetic()
                && b[1..n].iter().all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-'))
        }
        _ => false,
    };
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    !has_scheme || drive
}

/// The last path component of a URL (`a/b/c.js?x` → `c.js`): how a map or script is looked
/// up by name in a folder.
pub(crate) fn file_name(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    let path = &url[..end];
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers of DevTools' own `ParsedURL.completeURL` (run in Node on chrome-devtools-frontend).
    #[test]
    fn urls_complete_as_devtools_completes_them() {
        let base = "http://example.com/map/path/bundle.js?x#y";
        for (href, want) in [
            ("../src/a.ts", "http://example.com/map/src/a.ts"),
            ("./a.ts", "http://example.com/map/path/a.ts"),
            ("/abs/a.ts", "http://example.com/abs/a.ts"),
            ("//cdn.example.com/a.js", "http://cdn.example.com/a.js"),
            ("", "http://example.com/map/path/bundle.js?x"),
            ("#frag", "http://example.com/map/path/bundle.js?x#frag"),
            ("?q", "http://example.com/map/path/bundle.js?q"),
            ("webpack:///./src/a.js", "webpack:///src/a.js"),
            ("HTTPS://Other.com/a/../b.js", "https://Other.com/b.js"),
            ("data:application/json,{}", "data:application/json,{}"),
            ("a/../../../x.js", "http://example.com/x.js"),
        ] {
            assert_eq!(complete_url(base, href).as_deref(), Some(want), "{href}");
        }
        // A base that is no URL (a bare path, as Node names some scripts) completes nothing.
        assert_eq!(complete_url("/home/u/app.js", "app.js.map"), None);
        // Nor does a data: base (the pattern wants `scheme://`).
        assert_eq!(complete_url("data:text/javascript,x", "a.js"), None);
        assert_eq!(
            complete_url("file:///home/u/dist/app.js", "app.js.map").as_deref(),
            Some("file:///home/u/dist/app.js.map")
        );
    }

    #[test]
    fn paths_normalize_as_devtools_normalizes_them() {
        for (path, want) in [
            ("/a/b/../c", "/a/c"),
            ("/a/./b/", "/a/b/"),
            ("/a/b/..", "/a/"),
            ("/..", "/"),
            ("a/..", "/"),
            ("", ""),
            ("/a.b/c", "/a.b/c"),
        ] {
            assert_eq!(normalize_path(path), want, "{path}");
        }
    }

    #[test]
    fn relative_urls_are_those_without_a_scheme() {
        assert!(is_relative_url("src/a.ts"));
        assert!(is_relative_url("C:\\src\\a.ts"));
        assert!(is_relative_url("/abs"));
        assert!(!is_relative_url("webpack://app/a.ts"));
        assert!(!is_relative_url("file:///a"));
    }
}
