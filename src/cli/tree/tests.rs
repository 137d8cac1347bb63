use clap::Parser;
use jscalls::{assemble, Config, Source};

use super::*;
use crate::cli::args::{Cli, Command};

fn tree_args(extra: &[&str]) -> TreeArgs {
    let mut argv = vec!["jscalls", "tree", "x"];
    argv.extend_from_slice(extra);
    match Cli::parse_from(argv).command {
        Command::Tree(a) => a,
        _ => unreachable!("a tree command line"),
    }
}

/// The text `Trees` writes of `kept`, with `whole` for [`WHOLE_STACKS`] and [`WHOLE_NODES`].
fn written(kept: &[Chosen], args: &TreeArgs, threads: usize, whole: (usize, usize)) -> String {
    let trees = Trees {
        kept,
        args,
        window: None,
        to_terminal: false,
        input: "x",
        engine: EngineVersion::default(),
        threads,
        whole,
    };
    let mut out = Vec::new();
    trees.write(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// A thread's section made whole on a worker, its tree made on a worker and written as it is
/// walked, or both made at its turn: the same bytes, in the threads' order, on one thread or
/// more.
#[test]
fn sections_made_ahead_or_at_their_turn_write_the_same_text() {
    let mut multi = 0;
    for file in
        ["fixtures/chrome-worker-hires.json.gz", "fixtures/chrome-ui.json.gz", "fixtures/node-mixed.cpuprofile.gz"]
    {
        let (_, assembled) = assemble(&Source::file(file), &Config::default()).unwrap();
        let args = tree_args(&[]);
        let wants = Wants { samples: true, per_stack: true, ..Wants::default() };
        let kept = choose(assembled, &args.select, None, wants).unwrap_or_else(|_| panic!("chosen"));
        if kept.len() > 1 {
            multi += 1;
        }
        for extra in [&[][..], &["--invert"], &["--flat"], &["--format", "json"], &["--format", "json", "--invert"]] {
            let args = tree_args(extra);
            let at = format!("{file} {extra:?}");
            let one = written(&kept, &args, 1, (0, 0));
            assert!(one.lines().count() > 20, "{at}: {one}");
            for threads in [1, 2, 4] {
                for whole in [(WHOLE_STACKS, WHOLE_NODES), (usize::MAX, 0), (1 << 10, usize::MAX), (0, 0)] {
                    assert_eq!(written(&kept, &args, threads, whole), one, "{at}, {threads} threads, {whole:?}");
                }
            }
        }
    }
    assert!(multi > 0, "no input with more than one thread");
}
