//! `jscalls completions SHELL` and `jscalls man`: made from the command line's own definition
//! (`args.rs`), so they list every command and option there is.

use std::io::Write;

use clap::CommandFactory;

use super::args::{Cli, CompletionsArgs};
use super::Failed;

/// The completion script for the shell, on standard output.
pub(crate) fn completions(args: &CompletionsArgs) -> Result<(), Failed> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "jscalls", &mut out);
    write_stdout(&out)
}

/// The manual page (roff) of the command and each of its commands, on standard output.
pub(crate) fn man() -> Result<(), Failed> {
    let cli = Cli::command();
    let mut out = Vec::new();
    let page = |out: &mut Vec<u8>, cmd: clap::Command| clap_mangen::Man::new(cmd).render(out);
    page(&mut out, cli.clone()).map_err(|e| Failed::Usage(format!("cannot render the manual: {e}")))?;
    // Each command's options in a section of its own (mangen renders one page per command).
    for sub in cli.get_subcommands().filter(|c| c.get_name() != "help") {
        let name = format!("jscalls {}", sub.get_name());
        let mut section = Vec::new();
        page(&mut section, sub.clone().bin_name(name))
            .map_err(|e| Failed::Usage(format!("cannot render the manual: {e}")))?;
        // Its own title line is left out: one page, a section per command.
        let text = String::from_utf8_lossy(&section);
        let body = text.lines().filter(|l| !l.starts_with(".TH ") && !l.starts_with(".ie ") && !l.starts_with(".el "));
        let _ = writeln!(out, ".SH \"COMMAND {}\"", sub.get_name().to_uppercase());
        for l in body {
            let _ = writeln!(out, "{}", l.replace(".SH ", ".SS "));
        }
    }
    write_stdout(&out)
}

fn write_stdout(bytes: &[u8]) -> Result<(), Failed> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failed::Pipe),
        Err(e) => {
            say!("jscalls: error: cannot write to standard output: {e}");
            Err(Failed::Reported)
        }
    }
}
