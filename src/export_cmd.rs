//! `jscalls export`: the chosen threads' calls for other tools: speedscope, collapsed stacks,
//! SVG flame graphs (inferno).

use std::fmt::Write as _;

use jscalls::tree::export::{self, Profile, ProfileKind};
use jscalls::Assembled;

use crate::tree_cmd::{self, Chosen, Failure};
use crate::{ExportArgs, ExportFormat, WeightArg};

/// A thread's name as the exports show it.
fn thread_label(c: &Chosen) -> String {
    format!("{} (pid {}, tid {})", c.name.as_deref().unwrap_or("thread"), c.pid, c.tid)
}

/// The whole output for `assembled`, in `format`.
pub fn render(assembled: Assembled, args: &ExportArgs, format: ExportFormat, input: &str) -> Result<Vec<u8>, Failure> {
    let kept = tree_cmd::choose(assembled, &args.select, format == ExportFormat::Speedscope || args.by_time)?;
    if kept.is_empty() {
        return Err(Failure::Usage(format!("{input}: no thread has estimated calls to export")));
    }
    let several = kept.len() > 1;
    match format {
        ExportFormat::Speedscope => {
            let kind = match args.select.weight {
                WeightArg::SelfTime => ProfileKind::Evented,
                WeightArg::Samples => ProfileKind::SampledCount,
                WeightArg::SampleTime => ProfileKind::SampledTime,
            };
            let profiles: Vec<Profile<'_>> = kept
                .iter()
                .map(|c| Profile { name: thread_label(c), stacks: &c.stacks, spans: &c.spans, kind })
                .collect();
            let mut out = String::new();
            export::speedscope(&mut out, input, &profiles);
            Ok(out.into_bytes())
        }
        ExportFormat::Collapsed | ExportFormat::Svg => {
            let mut lines = Vec::new();
            for c in &kept {
                let prefix = several.then(|| {
                    export::collapsed_name(&jscalls::tree::Func {
                        name: thread_label(c),
                        url: String::new(),
                        script: String::new(),
                        line: None,
                        column: None,
                    })
                });
                if args.by_time {
                    export::collapsed_by_time(&mut lines, &c.stacks, &c.spans, prefix.as_deref());
                } else {
                    export::collapsed(&mut lines, &c.stacks, prefix.as_deref());
                }
            }
            if format == ExportFormat::Collapsed {
                let mut out = lines.join("\n");
                out.push('\n');
                return Ok(out.into_bytes());
            }
            if lines.is_empty() {
                return Err(Failure::Usage(format!("{input}: nothing to draw: every stack weighs under 1")));
            }
            let mut opt = inferno::flamegraph::Options::default();
            opt.title = format!("{input}: {}", if args.by_time { "flame chart" } else { "flame graph" });
            let mut sub = if several { format!("{} threads", kept.len()) } else { thread_label(&kept[0]) };
            let _ = write!(
                sub,
                ", {}",
                match args.select.weight {
                    WeightArg::SelfTime => "estimated calls' self time (µs)",
                    WeightArg::Samples => "CPU profile samples",
                    WeightArg::SampleTime => "CPU profile samples' time (µs)",
                }
            );
            opt.subtitle = Some(sub);
            opt.count_name = if args.select.weight == WeightArg::Samples { "samples" } else { "µs" }.to_owned();
            opt.name_type = "Function:".to_owned();
            opt.deterministic = true;
            // A label is `name url:line:column`: keep the name when it does not fit.
            opt.text_truncate_direction = inferno::flamegraph::TextTruncateDirection::Right;
            opt.flame_chart = args.by_time;
            if args.icicle {
                opt.direction = inferno::flamegraph::Direction::Inverted;
            }
            let mut svg = Vec::new();
            inferno::flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), &mut svg)
                .map_err(|e| Failure::Usage(format!("{input}: the flame graph cannot be drawn: {e}")))?;
            Ok(svg)
        }
    }
}
