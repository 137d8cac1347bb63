//! The files the command reads besides its inputs: `--symbols` tables.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::sync::Arc;

use jscalls::{Error, Symbols};

use super::report::failure;
use super::Failed;

/// The `--symbols LIB=FILE` tables, read before any work.
pub(crate) fn read_symbols(specs: &[String]) -> Result<BTreeMap<String, Arc<Symbols>>, Failed> {
    let mut out = BTreeMap::new();
    for spec in specs {
        let Some((lib, file)) = spec.split_once('=').filter(|(l, f)| !l.is_empty() && !f.is_empty()) else {
            return Err(Failed::Usage(format!("--symbols '{spec}': expected LIB=FILE (nm --defined-only output)")));
        };
        let ctx = |e| failure(file, Error::io(format!("cannot read the symbols for {lib}"), e));
        let text = if file.ends_with(".gz") {
            let mut t = String::new();
            let f = fs::File::open(file).map_err(ctx)?;
            flate2::read::MultiGzDecoder::new(f).read_to_string(&mut t).map_err(ctx)?;
            t
        } else {
            fs::read_to_string(file).map_err(ctx)?
        };
        let symbols = Symbols::from_nm(&text).map_err(|m| Failed::Usage(format!("--symbols {spec}: {file}: {m}")))?;
        out.insert(lib.to_owned(), Arc::new(symbols));
    }
    Ok(out)
}
