//! The `jscalls` command: the command line parsed, then the command's own function. Everything
//! else of the command is in `src/cli/`.

#![warn(unreachable_pub)]

mod cli;

use std::ffi::OsString;
use std::io::Write as _;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use cli::args::{Cli, Command};

/// See `cli/alloc.rs`.
#[global_allocator]
static ALLOC: cli::alloc::Split = cli::alloc::Split;

fn main() -> ExitCode {
    // A signal that stops the command removes the temporary output first.
    #[cfg(unix)]
    cli::process::install();
    let Cli { global, command } = match Cli::try_parse_from(command_first(std::env::args_os().collect())) {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // One style for every error, clap's and the command's own: `jscalls: error: …`, no
            // colour; a full or closed stderr is no reason to panic.
            let _ = write!(std::io::stderr(), "jscalls: {}", e.render());
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help and --version, on standard output.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    // Made from the command line alone: no option applies.
    match &command {
        Command::Completions(a) => return cli::exit(cli::completions::completions(a)),
        Command::Man => return cli::exit(cli::completions::man()),
        _ => {}
    }
    let result = cli::config(&global).and_then(|(cfg, reads)| match &command {
        Command::Calls(a) => cli::calls::run(a, &global, &cfg, reads),
        Command::Timeline(a) => cli::timeline::run(a, &global, &cfg, reads),
        Command::Tree(a) => cli::tree::run(a, &global, &cfg, reads),
        Command::Lines(a) => cli::lines::run(a, &global, &cfg, reads),
        Command::Frames(a) => cli::frames::run(a, &global, &cfg, reads),
        Command::Ranges(a) => cli::ranges::run(a, &global, &cfg, reads),
        Command::Export(a) => cli::export::run(a, &global, &cfg, reads),
        Command::View(a) => cli::view::run(a, &global, &cfg),
        Command::Diff(a) => cli::diff::run(a, &global, &cfg, reads),
        Command::Check(a) => cli::check::run(a, &global, &cfg, reads),
        Command::Completions(_) | Command::Man => unreachable!("answered above"),
    });
    cli::exit(result)
}

/// The command line with the command's name first. Options may come before the name or after
/// it (`jscalls -o out.json calls trace.json`), but clap reads a command's own options only
/// after its name: the name is moved in front of them, their values left in place.
fn command_first(mut args: Vec<OsString>) -> Vec<OsString> {
    let cli = Cli::command();
    let commands: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).chain(["help"]).collect();
    // Every option that takes a value, in any command: its value is never a command's name.
    let mut valued: Vec<String> = Vec::new();
    for arg in cli.get_arguments().chain(cli.get_subcommands().flat_map(|c| c.get_arguments())) {
        if arg.get_action().takes_values() && !arg.is_positional() {
            valued.extend(arg.get_long().map(|l| format!("--{l}")));
            valued.extend(arg.get_short().map(|c| format!("-{c}")));
        }
    }
    let mut k = 1;
    while k < args.len() {
        let Some(a) = args[k].to_str() else { return args };
        if a == "--" || !a.starts_with('-') && !commands.contains(&a) {
            return args; // an input before any command: clap says what is wrong
        }
        if commands.contains(&a) {
            let name = args.remove(k);
            args.insert(1, name);
            return args;
        }
        k += if valued.iter().any(|v| v == a) { 2 } else { 1 };
    }
    args
}
