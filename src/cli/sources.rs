//! Script sources on disk, found by the URL a profile gives them, and only inside the folders
//! the user named: a recording never makes the command read a file elsewhere.

use std::path::{Component, Path, PathBuf};

use super::files::read_option_file;

/// The largest source file read for a listing.
pub(crate) const SOURCE_LIMIT: u64 = 64 << 20;

/// The folders sources are looked up in, canonical; each for every URL, or for the URLs under
/// a prefix (`https://cdn.example.com/assets/=dist/`).
pub(crate) struct SourceDirs {
    dirs: Vec<(Option<String>, PathBuf)>,
}

impl SourceDirs {
    /// The folders of option `flag` (`DIR`, or `PREFIX=DIR` where DIR is no folder by the
    /// whole name); one that does not exist is a usage error (the message names it).
    pub(crate) fn new(dirs: &[PathBuf], flag: &str) -> Result<SourceDirs, String> {
        let dirs = dirs
            .iter()
            .map(|given| {
                let (prefix, d) = match given.to_str().and_then(|g| g.rsplit_once('=')) {
                    Some((p, d)) if !given.is_dir() && !p.is_empty() && !d.is_empty() => {
                        (Some(p.to_owned()), Path::new(d))
                    }
                    _ => (None, given.as_path()),
                };
                match std::fs::canonicalize(d) {
                    Ok(c) if c.is_dir() => Ok((prefix, c)),
                    Ok(_) => Err(format!("{flag} {}: not a directory", d.display())),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        Err(format!("{flag} {}: no such directory", d.display()))
                    }
                    Err(e) => Err(format!("{flag} {}: cannot read it ({})", d.display(), e.kind())),
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(SourceDirs { dirs })
    }

    /// The file of a script URL inside one of the folders: under a folder given with a prefix,
    /// the rest of a URL that starts with it, exactly; else `file:///a/b.js` when it lies in a
    /// folder, and `https://host/a/b.js`, `/a/b.js` and `a/b.js` as `a/b.js` under each (then
    /// by the path's last parts: `b.js`). None when no such file exists there.
    pub(crate) fn find(&self, url: &str) -> Option<PathBuf> {
        self.find_entry(url).ok().flatten()
    }

    /// As [`find`](Self::find), and where there is no such file, the first entry of that name
    /// that is no regular file (a FIFO, a socket, a device, a folder: never opened, as a FIFO
    /// would wait for a writer).
    pub(crate) fn find_entry(&self, url: &str) -> Result<Option<PathBuf>, PathBuf> {
        let mut other = None;
        match self.find_in(url, &mut other) {
            Some(found) => Ok(Some(found)),
            None => other.map_or(Ok(None), Err),
        }
    }

    fn find_in(&self, url: &str, other: &mut Option<PathBuf>) -> Option<PathBuf> {
        // A URL's query and fragment are no part of the file's name.
        let url = url.split(['?', '#']).next().unwrap_or("");
        for (prefix, d) in &self.dirs {
            if let Some(rest) = prefix.as_deref().and_then(|p| url.strip_prefix(p)) {
                let rest = percent_decoded(rest);
                let rel: PathBuf = plain_parts(Path::new(&rest)).into_iter().collect();
                if let Some(found) = self.inside(&d.join(rel), other) {
                    return Some(found);
                }
            }
        }
        let path = match url.split_once("://") {
            Some(("file", rest)) => {
                let p = PathBuf::from(percent_decoded(rest.trim_start_matches("localhost")));
                if let Some(found) = self.inside(&p, other) {
                    return Some(found);
                }
                p
            }
            Some((_, rest)) => PathBuf::from(percent_decoded(rest.split_once('/').map_or("", |(_, p)| p))),
            None => PathBuf::from(url),
        };
        let parts = plain_parts(&path);
        for skip in 0..parts.len() {
            let rel: PathBuf = parts[skip..].iter().collect();
            for (_, d) in self.dirs.iter().filter(|(p, _)| p.is_none()) {
                if let Some(found) = self.inside(&d.join(&rel), other) {
                    return Some(found);
                }
            }
        }
        None
    }

    /// The file at `candidate`, when it is one inside the folders (a symbolic link out of
    /// them is not followed); an entry there that is no file is noted in `other`, the first.
    fn inside(&self, candidate: &Path, other: &mut Option<PathBuf>) -> Option<PathBuf> {
        let c = std::fs::canonicalize(candidate).ok().filter(|c| self.contains(c))?;
        if c.is_file() {
            return Some(c);
        }
        other.get_or_insert(c);
        None
    }

    fn contains(&self, p: &Path) -> bool {
        self.dirs.iter().any(|(_, d)| p.starts_with(d))
    }
}

/// Only a path's plain names: no `..`, no root, nothing a URL could use to leave a folder.
fn plain_parts(path: &Path) -> Vec<&str> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect()
}

/// The source's lines (at most [`SOURCE_LIMIT`] bytes, invalid UTF-8 replaced).
pub(crate) fn read_lines(path: &Path) -> Result<Vec<String>, jscalls::Error> {
    let bytes = read_option_file(path, "the source", SOURCE_LIMIT)?;
    Ok(String::from_utf8_lossy(&bytes).lines().map(str::to_owned).collect())
}

/// `%XX` escapes decoded (a URL's path as a file's name); anything malformed kept as it is.
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
