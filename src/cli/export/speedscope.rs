//! speedscope's JSON (`https://www.speedscope.app/file-format-schema.json`): one profile per
//! thread, evented (the calls at their estimated times) or sampled.

use jscalls::tree::{Profile, ProfileKind};

use super::{thread_label, Format, Rendered};
use crate::cli::args::{ExportArgs, WeightArg};
use crate::cli::tree::{Chosen, Failure};

pub(super) const FORMAT: Format = Format {
    name: "speedscope",
    what: "speedscope's JSON",
    help: "speedscope's JSON: one profile per thread; evented (the calls at their estimated times) or, with \
           --weight samples|sample-time, sampled",
    suffix: ".speedscope.json",
    endings: &[".speedscope.json"],
    spans: true,
    counts: false,
    markers: false,
    samples: false,
    render,
};

fn render(kept: Vec<Chosen>, args: &ExportArgs, input: &str, _threads: usize) -> Result<Rendered, Failure> {
    let kind = match args.select.weight {
        WeightArg::SelfTime => ProfileKind::Evented,
        WeightArg::Samples => ProfileKind::SampledCount,
        WeightArg::SampleTime => ProfileKind::SampledTime,
    };
    let input = input.to_owned();
    // Written as it is made: the document is larger than the stacks and spans it shows.
    Ok(Rendered::Stream(Box::new(move |w| {
        let profiles: Vec<Profile<'_>> =
            kept.iter().map(|c| Profile { name: thread_label(c), stacks: &c.stacks, spans: &c.spans, kind }).collect();
        Profile::write_speedscope(w, &input, &profiles)
    })))
}
