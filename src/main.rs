//! The `jscalls` command: the command line parsed, then the command's own function. Everything
//! else of the command is in `src/cli/`.

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cli::args::{Cli, Command};

/// See `cli/alloc.rs`.
#[global_allocator]
static ALLOC: cli::alloc::Split = cli::alloc::Split;

fn main() -> ExitCode {
    // A signal that stops the command removes the temporary output first.
    #[cfg(unix)]
    cli::process::install();
    let Cli { global, command } = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let result = cli::config(&global).and_then(|(cfg, reads)| match &command {
        Command::Calls(a) => cli::calls::run(a, &global, &cfg, reads),
        Command::Timeline(a) => cli::timeline::run(a, &global, &cfg, reads),
        Command::Tree(a) => cli::tree::run(a, &global, &cfg, reads),
        Command::Export(a) => cli::export::run(a, &global, &cfg, reads),
        Command::Diff(a) => cli::diff::run(a, &global, &cfg, reads),
        Command::Check(a) => cli::check::run(a, &global, &cfg, reads),
    });
    cli::exit(result)
}
