//! `jscalls timeline`: the input's events copied through, with each thread's calls added on a
//! thread of their own.

use super::args::{Global, OutputArgs};
use super::each::{self, Estimated, PerInput};
use super::files::Reads;
use super::output::Output;
use super::report::failure;
use super::Failed;
use jscalls::Config;

struct Timeline;

impl PerInput for Timeline {
    fn suffix(&self) -> &'static str {
        ".timeline.json"
    }

    fn copies_events(&self) -> bool {
        true
    }

    /// The samples added for the Firefox Profiler put the events inside calls under them.
    fn keeps_event_names(&self) -> bool {
        true
    }

    fn write(&self, e: Estimated<'_>, output: Output) -> Result<(), Failed> {
        let Estimated { assembled, source, name, notes, .. } = e;
        output
            .write(|w| match notes {
                Some(notes) => assembled.finish_noted_timeline(w, notes, source),
                None => assembled.write_timeline(w, source),
            })
            .map_err(|err| failure(name, err))
    }
}

pub(crate) fn run(args: &OutputArgs, global: &Global, cfg: &Config, reads: Reads) -> Result<(), Failed> {
    let to_stdout = args.output.as_deref().is_none_or(|o| o == std::path::Path::new("-"));
    if to_stdout && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return Err(Failed::Usage(
            "timeline writes the whole trace again, as JSON: give -o FILE, or redirect standard output".to_owned(),
        ));
    }
    each::run(args, &Timeline, global, cfg, reads)
}
