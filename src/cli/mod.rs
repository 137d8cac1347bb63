//! The `jscalls` command's wing: everything only the command needs, on top of the library.
//!
//! `args` is the command line; `each` runs the commands that write one output per input
//! (`calls`, `timeline`, `tree`, `export`), `diff` and `check` run themselves; `output` is
//! where any of them writes, `files` what they read besides their inputs, `report` what they
//! say on stderr. `alloc`, `process` and `gzip` are the command's own machinery (its
//! allocator, signals and exits, gzip on every core). The library never imports from here.

/// Writes a line on stderr; a full or closed stderr is not worth a panic.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($t)*);
    }};
}

pub(crate) mod alloc;
pub(crate) mod args;
pub(crate) mod calls;
pub(crate) mod check;
pub(crate) mod completions;
pub(crate) mod diff;
pub(crate) mod digits;
pub(crate) mod each;
pub(crate) mod export;
pub(crate) mod files;
pub(crate) mod frames;
pub(crate) mod gzip;
pub(crate) mod lines;
pub(crate) mod output;
#[cfg(unix)]
pub(crate) mod process;
pub(crate) mod range;
pub(crate) mod ranges;
pub(crate) mod report;
pub(crate) mod sources;
pub(crate) mod summary;
pub(crate) mod timeline;
pub(crate) mod tree;
pub(crate) mod view;

use std::io::{self, Write};
use std::process::ExitCode;

use jscalls::Config;

use args::Global;

/// Why the command failed.
pub(crate) enum Failed {
    /// A usage error (exit 2), not yet printed.
    Usage(String),
    /// Errors already printed (exit 1).
    Reported,
    /// The reader of standard output went away: stop, successfully.
    Pipe,
    /// `diff --fail-on` or `check` found a regression (exit 3), already reported.
    Regression,
    /// A `check` rule measured nothing and its budget does not allow that (exit 4), already
    /// reported.
    NotMeasured,
}

/// The library's configuration for the options every command shares, with the files they
/// name read (and noted in the files read), before any input is.
pub(crate) fn config(global: &Global) -> Result<(Config, files::Reads), Failed> {
    let mut cfg = global.config();
    let mut reads = files::Reads::default();
    cfg.symbols = files::read_symbols(&global.symbols, &mut reads)?;
    // Checked before any work: pairs well formed, folders there; the files given by name are
    // inputs an output may not overwrite.
    frames::UserMaps::new(&global.source_maps)?.note_reads(&mut reads);
    if args::refines_panel_calls(&cfg) {
        return Err(Failed::Usage(
            "--bounds and --estimator (midway, log-midway) work on the integrator's calls: leave out --cpuprofile-mode performance-panel"
                .to_owned(),
        ));
    }
    Ok((cfg, reads))
}

/// A usage error when `--bounds` is given to a command that writes no call (it would change
/// nothing).
pub(crate) fn no_bounds(global: &Global, command: &str) -> Result<(), Failed> {
    if global.bounds {
        return Err(Failed::Usage(format!(
            "--bounds gives each call an interval in the calls and timeline outputs; {command} writes no call"
        )));
    }
    Ok(())
}

/// The command's exit status for its outcome.
pub(crate) fn exit(result: Result<(), Failed>) -> ExitCode {
    match result {
        Ok(()) => exit_now(0),
        Err(Failed::Usage(m)) => {
            say!("jscalls: error: {m}");
            ExitCode::from(2)
        }
        Err(Failed::Reported) => exit_now(1),
        Err(Failed::Pipe) => exit_now(0),
        Err(Failed::Regression) => exit_now(3),
        Err(Failed::NotMeasured) => exit_now(4),
    }
}

/// Ends the run at once with `code`, once the standard streams are flushed (see
/// `process::exit_now`).
fn exit_now(code: u8) -> ExitCode {
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    #[cfg(unix)]
    process::exit_now(code);
    #[cfg(not(unix))]
    ExitCode::from(code)
}
