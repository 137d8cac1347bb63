//! The one rule for every file a command reads: its inputs, `diff`'s sides and folders, and
//! the files options name (`--symbols`, `--budget`). What is read is never written, by any
//! name; an option's file is read with a size limit, and a FIFO, a device or a directory is
//! handled the same way whichever option names it.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jscalls::{Error, Symbols};

use super::output::{same_file, stdout_is};
use super::report::failure;
use super::Failed;

/// The largest budget file read (a budget is a page of rules written by hand).
pub(crate) const BUDGET_LIMIT: u64 = 16 << 20;
/// The largest symbol table read, after gzip: `nm` of a browser's largest library is about
/// 100 MB; more is not a symbol table, and would all be held in memory.
pub(crate) const SYMBOLS_LIMIT: u64 = 256 << 20;

/// Every file one run of the command reads. An output that is one of them, by any name (the
/// same path, a hard or symbolic link, a file in `-o DIR` that is one), is refused before any
/// work.
#[derive(Default)]
pub(crate) struct Reads {
    /// Each file and what it is to the command ("the input", "the budget", ...).
    paths: Vec<(PathBuf, String)>,
}

impl Reads {
    /// Notes `path` as read, as `role` (standard input, `-`, is not a file to protect).
    pub(crate) fn add(&mut self, path: &Path, role: &str) {
        if path != Path::new("-") {
            self.paths.push((path.to_path_buf(), role.to_owned()));
        }
    }

    /// A usage error when `out` (None: standard output) is a file that is read.
    pub(crate) fn refuse(&self, out: Option<&Path>) -> Result<(), Failed> {
        let refused = |what: String, (path, role): &(PathBuf, String), named: bool| {
            let path = if named { String::new() } else { format!(" {}", path.display()) };
            Err(Failed::Usage(format!("{what} is {role}{path}; refusing to overwrite it")))
        };
        match out.filter(|o| *o != Path::new("-")) {
            Some(o) => match self.paths.iter().find(|(i, _)| same_file(i, o)) {
                Some(read) => refused(format!("the output {}", o.display()), read, read.0 == o),
                None => Ok(()),
            },
            None => match self.paths.iter().find(|(i, _)| stdout_is(i)) {
                Some(read) => refused("standard output".to_owned(), read, false),
                None => Ok(()),
            },
        }
    }
}

/// The bytes of the file an option names (`what`: "the budget", "the symbols for libxul.so"),
/// gzip inflated when its content is gzip, at most `limit` bytes of them. A directory is
/// refused; a FIFO or a device is read as a stream, up to the limit.
pub(crate) fn read_option_file(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>, Error> {
    let shown = path.display();
    let ctx = |e: io::Error| Error::io(format!("cannot read {what} {shown}"), e);
    if fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(ctx(io::Error::other("it is a directory")));
    }
    let mut file = fs::File::open(path).map_err(ctx)?;
    let mut head = Vec::with_capacity(2);
    (&mut file).take(2).read_to_end(&mut head).map_err(ctx)?;
    // Sized once from the file's length (a gzip member grows it as it inflates).
    let size = file.metadata().map_or(0, |m| m.len()).min(limit + 1);
    let rest = io::Cursor::new(head.clone()).chain(file);
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    let too_large = || ctx(io::Error::other(format!("it is larger than {} MiB", limit >> 20)));
    if head == [0x1f, 0x8b] {
        flate2::read::MultiGzDecoder::new(rest).take(limit + 1).read_to_end(&mut bytes).map_err(ctx)?;
    } else {
        rest.take(limit + 1).read_to_end(&mut bytes).map_err(ctx)?;
    }
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The text of an option's file: a usage error naming the line of the first byte that is
/// not UTF-8.
pub(crate) fn option_text(path: &Path, bytes: Vec<u8>) -> Result<String, Failed> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let b = e.as_bytes();
        let line = b[..at].iter().filter(|&&c| c == b'\n').count() + 1;
        let col = at - b[..at].iter().rposition(|&c| c == b'\n').map_or(0, |k| k + 1) + 1;
        Failed::Usage(format!("{}:{line}:{col}: expected UTF-8 text, found byte {:#04x}", path.display(), b[at]))
    })
}

/// The `--symbols LIB=FILE` tables, read before any work; each FILE is noted in `reads`.
pub(crate) fn read_symbols(specs: &[String], reads: &mut Reads) -> Result<BTreeMap<String, Arc<Symbols>>, Failed> {
    let mut out = BTreeMap::new();
    for spec in specs {
        let Some((lib, file)) = spec.split_once('=').filter(|(l, f)| !l.is_empty() && !f.is_empty()) else {
            return Err(Failed::Usage(format!("--symbols '{spec}': expected LIB=FILE (nm --defined-only output)")));
        };
        let path = Path::new(file);
        reads.add(path, &format!("the symbols for {lib}"));
        let bytes =
            read_option_file(path, &format!("the symbols for {lib}"), SYMBOLS_LIMIT).map_err(|e| failure(file, e))?;
        let text = option_text(path, bytes)?;
        let symbols = Symbols::from_nm(&text).map_err(|e| Failed::Usage(format!("--symbols {lib}: {file}:{e}")))?;
        out.insert(lib.to_owned(), Arc::new(symbols));
    }
    Ok(out)
}
