//! The error catalogue (README, "Bad input"): every way input can be wrong, and exactly what
//! jscalls says about it: an error with its position, or warnings with theirs.

use std::io::Write;

use jscalls::{analyze, Config, CpuProfileMode, Source};

use crate::support::{cpuprofile, node, trace, x};

/// What jscalls reports for `input`: `error: …`, or one `warning: …` line per kept warning
/// followed by `calls: N`.
///
/// The input is read from memory (as standard input is) and from a file (which is mapped, when
/// it is not gzip): both must say the same, but for the name.
fn report(input: &[u8], cfg: &Config) -> String {
    let run = |src: &Source| match analyze(src, cfg) {
        Err(e) => format!("error: {e}"),
        Ok(a) => {
            let mut s: Vec<String> = a.diagnostics().warnings().iter().map(|w| format!("warning: {w}")).collect();
            s.push(format!("calls: {}", a.n_calls()));
            s.join("\n")
        }
    };
    let from_memory = run(&Source::Memory(input.into()));
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(input).unwrap();
    let name = file.path().display().to_string();
    let from_file = run(&Source::file(file.path())).replace(&name, "<stdin>");
    assert_eq!(from_file, from_memory, "read from a file and from memory");
    from_memory
}

/// A Firefox profile of one thread and one frame (`f (http://a.test/a.js:1:1)`), with the
/// given meta and sample and stack rows.
fn gecko(meta: &str, samples: &str, stacks: &str) -> String {
    format!(
        r#"{{"meta":{meta},"libs":[],"threads":[{{"name":"GeckoMain","pid":1,"tid":1,
"samples":{{"schema":{{"stack":0,"time":1}},"data":{samples}}},
"stackTable":{{"schema":{{"prefix":0,"frame":1}},"data":{stacks}}},
"frameTable":{{"schema":{{"location":0}},"data":[[0]]}},
"stringTable":["f (http://a.test/a.js:1:1)"]}}]}}"#
    )
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A small valid trace: one profile, one FunctionCall, three samples (a, a, b).
fn ok_trace() -> String {
    let nodes = [node(1, "(root)", &[2]), node(2, "a", &[3]), node(3, "b", &[])];
    trace(&nodes, &[2, 2, 3], &[100.0; 3], "", &[x("FunctionCall", 50.0, 400.0)])
}

fn ok_profile() -> String {
    cpuprofile(&[node(1, "(root)", &[2]), node(2, "a", &[])], &[2, 2], &[100.0, 100.0], 0.0, 200.0)
}

/// A trace whose events are given as JSON text (pid 1 tid 1 Profile + chunk with `chunk_data`).
fn chunk_trace(cpu_profile: &str, time_deltas: &str, extra: &str) -> String {
    format!(
        r#"[{{"name":"Profile","ph":"P","pid":1,"tid":1,"ts":0,"id":"0x1","args":{{"data":{{}}}}}},
{{"name":"ProfileChunk","ph":"P","pid":1,"tid":2,"ts":0,"id":"0x1","args":{{"data":{{"cpuProfile":{cpu_profile},"timeDeltas":{time_deltas}}}}}}},
{{"name":"FunctionCall","ph":"X","pid":1,"tid":1,"ts":50,"dur":1000}}{extra}]"#
    )
}

const NODES3: &str = r#"[{"id":1,"callFrame":{"functionName":"(root)","scriptId":0}},{"id":2,"parent":1,"callFrame":{"functionName":"a","scriptId":1}},{"id":3,"parent":2,"callFrame":{"functionName":"b","scriptId":1}}]"#;

/// One bad input and exactly what jscalls reports for it (see [`report`]).
struct Case {
    name: &'static str,
    input: Vec<u8>,
    cfg: fn(&mut Config),
    want: &'static str,
}

fn none(_: &mut Config) {}

fn cases() -> Vec<Case> {
    let t = ok_trace();
    let big_string =
        format!(r#"[{{"name":"Log","ph":"I","pid":1,"tid":1,"ts":1,"args":{{"m":"{}"}}}}]"#, "x".repeat(20 << 20));
    let deep_args = format!(
        r#"[{{"name":"Deep","ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{}1{}}}]"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    // A chain of five frames under the root, its samples at the bottom and the top in turn.
    let jumping = cpuprofile(
        &[
            node(1, "(root)", &[2]),
            node(2, "a", &[3]),
            node(3, "b", &[4]),
            node(4, "c", &[5]),
            node(5, "d", &[6]),
            node(6, "e", &[]),
        ],
        &[6, 2, 6, 2, 6],
        &[100.0; 5],
        0.0,
        500.0,
    );
    let deep_nodes = {
        let mut n = vec![r#"{"id":1,"callFrame":{"functionName":"(root)","scriptId":0}}"#.to_owned()];
        for i in 2..=1_200 {
            n.push(format!(
                r#"{{"id":{i},"parent":{},"callFrame":{{"functionName":"f","scriptId":1,"lineNumber":{i}}}}}"#,
                i - 1
            ));
        }
        chunk_trace(&format!(r#"{{"nodes":[{}],"samples":[1200]}}"#, n.join(",")), "[100]", "")
    };
    let cut_at = t.find("\"name\":\"FunctionCall\"").unwrap();
    vec![
        Case { name: "empty file", input: b"".to_vec(), cfg: none, want: r#"error: the input is empty"# },
        Case { name: "whitespace only", input: b"  \n\t ".to_vec(), cfg: none, want: r#"error: the input is empty"# },
        Case { name: "not JSON", input: b"hello trace".to_vec(), cfg: none, want: r#"error: 1:1: expected '[' (a trace) or '{' (a trace object, a .cpuprofile or a Firefox profile), found 'h'"# },
        Case { name: "binary garbage", input: vec![0u8, 159, 146, 150], cfg: none, want: r#"error: 1:1: expected '[' (a trace) or '{' (a trace object, a .cpuprofile or a Firefox profile), found byte 0x00"# },
        Case { name: "a zip archive (a CI artifact)", input: b"PK\x03\x04\x14\x00\x00\x00\x08\x00".to_vec(), cfg: none, want: r#"error: 1:1: expected '[' (a trace) or '{' (a trace object, a .cpuprofile or a Firefox profile), found 'P' (it is a zip archive: unzip it and give the trace inside)"# },
        Case { name: "zstd, bzip2 or xz data", input: vec![0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x03], cfg: none, want: r#"error: 1:1: expected '[' (a trace) or '{' (a trace object, a .cpuprofile or a Firefox profile), found '(' (it is zstd data: decompress it first (zstd -d), or gzip it)"# },
        Case { name: "wrong top-level shape: a number", input: b"42".to_vec(), cfg: none, want: r#"error: 1:1: expected '[' (a trace) or '{' (a trace object, a .cpuprofile or a Firefox profile), found '4'"# },
        Case { name: "object that is neither trace nor profile", input: br#"{"events":[]}"#.to_vec(), cfg: none, want: r#"error: 1:1: expected a trace ({"traceEvents": [...]}), a CPU profile ({"nodes": [...], "samples": [...], "timeDeltas": [...]}) or a Firefox profile ({"meta": {...}, "threads": [...]}); this object is none of them"# },
        Case { name: "Firefox profile without a version", input: gecko(r#"{"startTime":0}"#, "[[0, 1.0]]", "[[null, 0]]").into_bytes(), cfg: none, want: r#"error: 1:1: meta.version: expected the format's version (a whole number)"# },
        Case { name: "Firefox profile of a newer version", input: gecko(r#"{"version":99,"startTime":0}"#, "[[0, 1.0], [0, 2.0]]", "[[null, 0]]").into_bytes(), cfg: none, want: r#"warning: 1:1: meta.version 99 is newer than the newest known (36); read as that one [other]
calls: 1"# },
        Case { name: "Firefox stack naming a frame that is not there", input: gecko(r#"{"version":27,"startTime":0}"#, "[[0, 1.0]]", "[[null, 5]]").into_bytes(), cfg: none, want: r#"error: 1:1: threads[0].stackTable.data[0]: frame 5 is not in frameTable (1 rows)"# },
        Case { name: "Firefox sample that is not a row", input: gecko(r#"{"version":27,"startTime":0}"#, "[[0, 1.0], 7]", "[[null, 0]]").into_bytes(), cfg: none, want: r#"error: 1:1: threads[0].samples.data[1]: expected a row (an array)"# },
        Case { name: "Firefox sample without a time", input: gecko(r#"{"version":27,"startTime":0}"#, r#"[[0, "soon"]]"#, "[[null, 0]]").into_bytes(), cfg: none, want: r#"error: 1:1: threads[0].samples.data[0]: expected a number of ms in time"# },
        Case { name: "Firefox sample of a stack index past every integer", input: gecko(r#"{"version":27,"startTime":0}"#, "[[0, 1.0], [18446744073709551615, 2.0], [0, 3.0]]", "[[null, 0]]").into_bytes(), cfg: none, want: r#"warning: 1:1: threads[0] (GeckoMain): 1 sample(s) name node ids the profile does not have; dropped, as in DevTools [unknown-sample-node]
calls: 1"# },
        Case { name: "Firefox samples an infinite time apart", input: gecko(r#"{"version":27,"startTime":0}"#, "[[0, 1e305], [0, -1e305]]", "[[null, 0]]").into_bytes(), cfg: none, want: r#"error: 1:1: threads[0].samples.data[1]: the time is out of range (it or its step from the sample before is not a finite number of µs)"# },
        Case { name: "traceEvents is not an array", input: br#"{"traceEvents":{"a":1}}"#.to_vec(), cfg: none, want: r#"error: 1:16: expected '[' (traceEvents must be an array), found '{'"# },
        Case { name: "two traceEvents keys", input: br#"{"traceEvents":[],"traceEvents":[]}"#.to_vec(), cfg: none, want: r#"error: 1:33: a second "traceEvents" key in the top-level object"# },
        Case { name: "UTF-8 byte order mark", input: [b"\xEF\xBB\xBF".as_slice(), t.as_bytes()].concat(), cfg: none, want: r#"warning: 1:1: skipped a UTF-8 byte order mark [byte-order-mark]
calls: 2"# },
        Case { name: "truncated array (no closing ])", input: t.as_bytes()[..t.len() - 1].to_vec(), cfg: none, want: r#"warning: 3:80: the input ends inside the event array (no closing ']'); the complete events before the cut were used [truncated]
calls: 2"# },
        Case { name: "truncated in the middle of an event", input: t.as_bytes()[..cut_at + 10].to_vec(), cfg: none, want: r#"warning: 3:1: the input ends in the middle of an event; the complete events before the cut were used [truncated]
warning: process 0 has no trace events; DevTools computes no calls for thread 0:0 [thread-without-events]
calls: 0"# },
        Case {
            name: "truncated object (no closing })",
            input: format!(r#"{{"traceEvents":{}"#, t).into_bytes(),
            cfg: none,
            want: r#"warning: 3:81: the input ends inside the top-level object (no closing '}'); the complete events before the cut were used [truncated]
calls: 2"#,
        },
        Case { name: "truncated gzip", input: gz(t.as_bytes())[..60].to_vec(), cfg: none, want: r#"warning: 1:2: the gzip stream ends early (a truncated .gz file); the data it held was used [gzip-cut]
warning: 1:2: the input ends in the middle of an event; the complete events before the cut were used [truncated]
warning: no CPU profile to estimate calls from (no usable Profile and ProfileChunk events): record the trace with the disabled-by-default-v8.cpu_profiler category (README, "Recording") [no-cpu-profile]
calls: 0"# },
        Case { name: "gzip followed by zero padding", input: [gz(t.as_bytes()), vec![0; 700]].concat(), cfg: none, want: r#"calls: 2"# },
        Case {
            name: "gzip followed by other bytes",
            input: [gz(t.as_bytes()), b"garbage".to_vec()].concat(),
            cfg: none,
            want: r#"error: cannot read <stdin>: gzip stream: bytes after the gzip data that are neither gzip nor zero padding"#,
        },
        Case { name: "trailing comma", input: format!("{},]", &t[..t.len() - 1]).into_bytes(), cfg: none, want: r#"warning: 3:80: trailing comma after the last event [trailing-comma]
calls: 2"# },
        Case { name: "concatenated traces", input: format!("{t}\n{t}").into_bytes(), cfg: none, want: r#"error: 4:1: expected the end of the input after the JSON document (concatenated documents are not supported), found '['"# },
        Case { name: "element that is not an object", input: t.replacen('[', "[17,", 1).into_bytes(), cfg: none, want: r#"warning: 1:2 (event 0): an element of traceEvents is not an object; skipped (DevTools would fail to load the trace) [event-not-object]
calls: 2"# },
        Case {
            name: "event without ts",
            input: t.replace(r#""ts":50,"dur":400"#, r#""dur":400"#).into_bytes(),
            cfg: none,
            want: r#"warning: 3:1 (event 2): 'FunctionCall' (X) has no numeric ts; skipped [bad-timestamp]
warning: process 0 has no trace events; DevTools computes no calls for thread 0:0 [thread-without-events]
calls: 0"#,
        },
        Case { name: "event without ph", input: t.replace(r#""ph":"X","ts":50"#, r#""ts":50"#).into_bytes(), cfg: none, want: r#"warning: 3:1 (event 2): 'FunctionCall' has nothing (no such key) as its ph, not a one-letter string; ignored, as DevTools does [bad-phase]
warning: process 0 has no trace events; DevTools computes no calls for thread 0:0 [thread-without-events]
calls: 0"# },
        Case { name: "non-numeric ts", input: t.replace(r#""ts":50,"#, r#""ts":"50","#).into_bytes(), cfg: none, want: r#"warning: 3:1 (event 2): 'FunctionCall' (X) has no numeric ts; skipped [bad-timestamp]
warning: process 0 has no trace events; DevTools computes no calls for thread 0:0 [thread-without-events]
calls: 0"# },
        Case { name: "huge timestamp (1e400, Infinity) [DevTools: sorted last]", input: t.replace(r#""ts":50,"#, r#""ts":1e400,"#).into_bytes(), cfg: none, want: r#"calls: 2"# },
        Case { name: "non-numeric dur", input: t.replace(r#""dur":400"#, r#""dur":true"#).into_bytes(), cfg: none, want: r#"warning: 3:1 (event 2): 'FunctionCall' has a dur that is a boolean, not a number; skipped [bad-timestamp]
warning: process 0 has no trace events; DevTools computes no calls for thread 0:0 [thread-without-events]
calls: 0"# },
        Case {
            name: "event without a name",
            input: t.replace(r#""name":"FunctionCall","#, "").into_bytes(),
            cfg: none,
            want: r#"warning: 3:1 (event 2): event has nothing (no such key) as its name, not a string; skipped (DevTools fails on such events) [bad-name]
warning: process 0 has no trace events; DevTools computes no calls for thread 0:0 [thread-without-events]
calls: 0"#,
        },
        Case { name: "string pid", input: t.replace(r#""pid":0,"tid":0,"cat""#, r#""pid":"0","tid":0,"cat""#).into_bytes(), cfg: none, want: r#"warning: 3:1 (event 2): 'FunctionCall' (X) has no integral pid/tid; skipped [bad-pid-tid]
warning: process 0 has no trace events; DevTools computes no calls for thread 0:0 [thread-without-events]
calls: 0"# },
        Case {
            name: "samples and timeDeltas disagree",
            input: chunk_trace(&format!(r#"{{"nodes":{NODES3},"samples":[2,3,3]}}"#), "[100,100]", "").into_bytes(),
            cfg: none,
            want: r#"warning: 2:1 (event 1): ProfileChunk: the profile now has 3 samples but 2 timeDeltas; DevTools logs 'Failed to parse CPU profile' and carries on [samples-deltas-mismatch]
calls: 2"#,
        },
        Case {
            name: "time deltas of more than a day",
            input: chunk_trace(&format!(r#"{{"nodes":{NODES3},"samples":[2,3,3,2]}}"#), "[100,1e12,100,-2e11]", "")
                .into_bytes(),
            cfg: none,
            want: r#"warning: 1:2 (event 0): thread 1:1: 2 time delta(s) move the clock by more than a day (the first: sample 1, 1000000000000 µs); the times are used as given, as in DevTools [time-leap]
calls: 3"#,
        },
        Case {
            name: "unknown node id in samples",
            input: chunk_trace(&format!(r#"{{"nodes":{NODES3},"samples":[2,77,3]}}"#), "[100,100,100]", "").into_bytes(),
            cfg: none,
            want: r#"warning: 1:2 (event 0): thread 1:1: 1 sample(s) name node ids the profile does not have; dropped, as in DevTools [unknown-sample-node]
calls: 2"#,
        },
        Case {
            name: "parent cycle",
            input: chunk_trace(
                r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}},{"id":2,"parent":1,"callFrame":{"functionName":"a"}},{"id":3,"parent":2,"callFrame":{"functionName":"b"}},{"id":2,"parent":3,"callFrame":{"functionName":"c"}}],"samples":[2]}"#,
                "[100]",
                "",
            )
            .into_bytes(),
            cfg: none,
            want: r#"error: 1:2 (event 0): profile "0x1" of thread 1:1: node 2 is its own ancestor (a cycle through its children/parent links)"#,
        },
        Case {
            name: "duplicate node ids",
            input: chunk_trace(
                r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}},{"id":2,"parent":1,"callFrame":{"functionName":"a"}},{"id":2,"parent":1,"callFrame":{"functionName":"a2"}}],"samples":[2,2]}"#,
                "[100,100]",
                "",
            )
            .into_bytes(),
            cfg: none,
            want: r#"warning: 1:2 (event 0): thread 1:1: 1 node(s) reuse an id of an earlier node; the later one wins, as in DevTools [duplicate-node-id]
warning: 1:2 (event 0): thread 1:1: 1 node(s) are not reachable from the root (an unknown, cyclic or self parent); ignored, as in DevTools [unreachable-node]
warning: 1:2 (event 0): thread 1:1: 1 node(s) are listed under more than one parent; each copy is kept, as in DevTools [shared-node]
calls: 1"#,
        },
        Case {
            name: "line data DevTools misreads (`jscalls lines`): `lines` longer than the samples, not numbers, negative, fractions",
            input: br#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"},"children":[2]},{"id":2,"callFrame":{"functionName":"a","scriptId":"1","url":"a.js"}}],"samples":[2,2,2],"timeDeltas":[0,100,100],"lines":[1,"x",2.5,-1],"startTime":0,"endTime":300}"#.to_vec(),
            cfg: |c| c.keep_lines = true,
            want: r#"warning: 1:1: profile: lines has 4 entries for 3 samples; DevTools pairs them by position [bad-line-data]
warning: 1:1: profile: 1 sample line(s) are not numbers; left out of the line times [bad-line-data]
warning: 1:1: profile: 2 sample line(s) are negative or not whole; counted as DevTools counts them [bad-line-data]
calls: 1"#,
        },
        Case {
            name: "a node that is its own parent",
            input: chunk_trace(
                r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}},{"id":2,"parent":1,"callFrame":{"functionName":"a"}},{"id":3,"parent":3,"callFrame":{"functionName":"self"}}],"samples":[2,3]}"#,
                "[100,100]",
                "",
            )
            .into_bytes(),
            cfg: none,
            want: r#"warning: 1:2 (event 0): thread 1:1: 1 sample(s) name node ids the profile does not have; dropped, as in DevTools [unknown-sample-node]
warning: 1:2 (event 0): thread 1:1: 1 node(s) are not reachable from the root (an unknown, cyclic or self parent); ignored, as in DevTools [unreachable-node]
calls: 1"#,
        },
        Case {
            name: "node without callFrame",
            input: chunk_trace(r#"{"nodes":[{"id":1}],"samples":[1]}"#, "[100]", "").into_bytes(),
            cfg: none,
            want: r#"error: 2:1 (event 1): ProfileChunk: node 0: node 1 has no callFrame object (DevTools fails on this)"#,
        },
        Case {
            name: "node id that is not an integer",
            input: chunk_trace(r#"{"nodes":[{"id":"one","callFrame":{"functionName":"(root)"}}],"samples":[1]}"#, "[100]", "")
                .into_bytes(),
            cfg: none,
            want: r#"error: 2:1 (event 1): ProfileChunk: node 0: the node id is a string, not an integer"#,
        },
        Case {
            name: "callFrame member that is an object",
            input: chunk_trace(r#"{"nodes":[{"id":1,"callFrame":{"functionName":{"a":1}}}],"samples":[1]}"#, "[100]", "")
                .into_bytes(),
            cfg: none,
            want: r#"error: 2:1 (event 1): ProfileChunk: node 0: node 1: a callFrame field is an object or array"#,
        },
        Case {
            name: "timeDeltas with a string",
            input: chunk_trace(&format!(r#"{{"nodes":{NODES3},"samples":[2,3]}}"#), r#"[100,"x"]"#, "").into_bytes(),
            cfg: none,
            want: r#"error: 2:1 (event 1): ProfileChunk: timeDeltas[1] is not a number"#,
        },
        Case {
            name: "chunks without a Profile head",
            input: chunk_trace(&format!(r#"{{"nodes":{NODES3},"samples":[2,3]}}"#), "[100,100]", "")
                .replace(r#"{"name":"Profile","ph":"P","pid":1,"tid":1,"ts":0,"id":"0x1","args":{"data":{}}},"#, "")
                .into_bytes(),
            cfg: none,
            want: r#"warning: 2:1 (event 0): profile "0x1" of process 1 has chunks but no Profile event; DevTools drops it [profile-without-head]
warning: no CPU profile to estimate calls from (no usable Profile and ProfileChunk events): record the trace with the disabled-by-default-v8.cpu_profiler category (README, "Recording") [no-cpu-profile]
calls: 0"#,
        },
        Case {
            name: "chunk before its Profile head",
            input: format!(
                r#"[{{"name":"ProfileChunk","ph":"P","pid":1,"tid":2,"ts":0,"id":"0x1","args":{{"data":{{"cpuProfile":{{"nodes":{NODES3},"samples":[2,3]}},"timeDeltas":[100,100]}}}}}},
{{"name":"Profile","ph":"P","pid":1,"tid":1,"ts":0,"id":"0x1","args":{{"data":{{}}}}}},
{{"name":"FunctionCall","ph":"X","pid":1,"tid":1,"ts":50,"dur":1000}}]"#
            )
            .into_bytes(),
            cfg: none,
            want: r#"calls: 2"#,
        },
        Case {
            name: "profile id reused across processes",
            input: format!(
                "{},\n{}]",
                &chunk_trace(&format!(r#"{{"nodes":{NODES3},"samples":[2,3]}}"#), "[100,100]", "")[..].trim_end_matches(']'),
                &chunk_trace(&format!(r#"{{"nodes":{NODES3},"samples":[3,3]}}"#), "[100,100]", "").replace(r#""pid":1"#, r#""pid":9"#)[1..]
                    .trim_end_matches(']')
            )
            .into_bytes(),
            cfg: none,
            want: r#"calls: 4"#,
        },
        Case { name: "ProfileChunk without args", input: chunk_trace("{}", "[]", ",{\"name\":\"ProfileChunk\",\"ph\":\"P\",\"pid\":1,\"id\":\"0x1\"}").into_bytes(), cfg: none, want: r#"warning: 3:69 (event 3): ProfileChunk without args: DevTools fails to load such a trace; skipped [devtools-would-fail]
warning: 1:2 (event 0): profile "0x1" of thread 1:1 has no nodes; DevTools skips it [empty-profile]
warning: no CPU profile to estimate calls from (no usable Profile and ProfileChunk events): record the trace with the disabled-by-default-v8.cpu_profiler category (README, "Recording") [no-cpu-profile]
calls: 0"# },
        Case {
            name: "B and E with different names",
            input: t.replacen('[', r#"[{"name":"Outer","ph":"B","pid":0,"tid":0,"ts":60},{"name":"Inner","ph":"E","pid":0,"tid":0,"ts":70},"#, 1).into_bytes(),
            cfg: none,
            want: r#"warning: 1:52 (event 1): 'E' event 'Inner' closes a 'B' event with another name or category; the begin keeps duration 0 as in DevTools [unpaired-end]
calls: 2"#,
        },
        Case { name: "invalid JSON inside args", input: t.replace(r#""dur":400}"#, r#""dur":400,"args":{"a":tru}}"#).into_bytes(), cfg: none, want: r#"error: 3:95 (event 2): expected true, found '}'"# },
        Case { name: "raw control character in a string", input: t.replace("FunctionCall", "Function\u{1}Call").into_bytes(), cfg: none, want: r#"error: 3:47 (event 2): expected a string without raw control characters, found byte 0x01"# },
        Case { name: "invalid escape", input: t.replace("FunctionCall", "Function\\qCall").into_bytes(), cfg: none, want: r#"error: 3:48 (event 2): expected a valid escape after '\', found 'q'"# },
        Case {
            name: "invalid UTF-8 in args that are read",
            input: [&t.as_bytes()[..t.len() - 1], b",{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"Main\xff\"}}]"].concat(),
            cfg: none,
            want: r#"warning: 3:148 (event 3): bytes that are not UTF-8; read as U+FFFD, as Node's decoder does [invalid-utf8]
calls: 2"#,
        },
        Case {
            name: "invalid UTF-8 in an event's name",
            input: {
                let (before, after) = t.split_once("FunctionCall").unwrap();
                [before.as_bytes(), b"Function\xffCall", after.as_bytes()].concat()
            },
            cfg: none,
            want: r#"warning: 3:47 (event 2): bytes that are not UTF-8; read as U+FFFD, as Node's decoder does [invalid-utf8]
calls: 2"#,
        },
        Case {
            name: "invalid UTF-8 in args that are skipped",
            input: [&t.as_bytes()[..t.len() - 1], b",{\"name\":\"Log\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1,\"dur\":1,\"args\":{\"m\":\"\xc3(\xe2\x82\"}}]"].concat(),
            cfg: none,
            want: r#"warning: 3:148 (event 3): bytes that are not UTF-8; read as U+FFFD, as Node's decoder does [invalid-utf8]
warning: 3:150 (event 3): bytes that are not UTF-8; read as U+FFFD, as Node's decoder does [invalid-utf8]
calls: 2"#,
        },
        Case {
            name: "a null args.beginData",
            input: t.replace(r#""dur":400}"#, r#""dur":400,"args":{"beginData":null}}"#).into_bytes(),
            cfg: none,
            want: r#"warning: 3:1 (event 2): args.beginData is null: DevTools fails on this event (reading sampleTraceId of null); no trace id used [devtools-would-fail]
calls: 2"#,
        },
        Case { name: "20 MB string", input: big_string.into_bytes(), cfg: none, want: r#"warning: no CPU profile to estimate calls from (no usable Profile and ProfileChunk events): record the trace with the disabled-by-default-v8.cpu_profiler category (README, "Recording") [no-cpu-profile]
calls: 0"# },
        Case { name: "100 000 nested arrays in args", input: deep_args.into_bytes(), cfg: none, want: r#"warning: no CPU profile to estimate calls from (no usable Profile and ProfileChunk events): record the trace with the disabled-by-default-v8.cpu_profiler category (README, "Recording") [no-cpu-profile]
calls: 0"# },
        Case { name: "stack deeper than --max-depth", input: deep_nodes.into_bytes(), cfg: |c| c.limits.max_depth = 1_000, want: r#"error: 1:2 (event 0): profile "0x1" of thread 1:1: the node tree is deeper than the limit of 1000 frames (raise it with --max-depth)"# },
        Case { name: "more samples than a profile may have", input: t.clone().into_bytes(), cfg: |c| c.limits.max_samples = 2, want: r#"error: 1:2 (event 0): profile "0x1" of thread 0:0: 3 samples, more than the 2 one profile may have"# },
        Case { name: "cpuprofile: more samples than a profile may have", input: ok_profile().into_bytes(), cfg: |c| c.limits.max_samples = 1, want: r#"error: 1:1: profile: 2 samples, more than the 1 one profile may have"# },
        // Five frames entered, none, four, none, four: thirteen calls.
        Case { name: "samples that enter as many frames as --max-calls", input: jumping.clone().into_bytes(), cfg: |c| c.limits.max_calls = 13, want: "calls: 13" },
        Case { name: "samples that enter more frames than --max-calls", input: jumping.clone().into_bytes(), cfg: |c| c.limits.max_calls = 12, want: r#"error: 1:1: profile: its samples enter more than 12 frames, each a call (raise the limit with --max-calls)"# },
        Case { name: "event larger than --max-event-bytes", input: t.clone().into_bytes(), cfg: |c| c.max_event_bytes = 100, want: r#"error: 2:1 (event 1): the event is 526 bytes, more than the limit of 100 (raise it with --max-event-bytes)"# },
        Case { name: "cpuprofile: no nodes", input: ok_profile().replace(r#""nodes":[{"#, r#""nodes":[],"x":[{"#).into_bytes(), cfg: none, want: r#"error: 1:1: profile: the profile has no nodes"# },
        Case {
            name: "cpuprofile: startTime missing",
            input: ok_profile().replace(r#","startTime":0"#, "").into_bytes(),
            cfg: none,
            want: r#"error: 1:1: expected startTime to be a number, found nothing (no such key)"#,
        },
        Case {
            name: "cpuprofile: neither hitCount nor samples",
            input: ok_profile().replace(r#""samples":[2, 2],"#, "").into_bytes(),
            cfg: none,
            want: r#"error: 1:1: profile: neither hitCount nor samples are present in the profile"#,
        },
        Case {
            name: "cpuprofile: legacy head format",
            input: br#"{"head":{"id":1,"functionName":"(root)","children":[]},"startTime":0,"endTime":1}"#.to_vec(),
            cfg: none,
            want: r#"error: 1:1: the legacy .cpuprofile format (a 'head' tree instead of 'nodes') is not supported"#,
        },
        Case {
            name: "cpuprofile: negative time deltas",
            input: cpuprofile(&[node(1, "(root)", &[2, 3]), node(2, "a", &[]), node(3, "b", &[])], &[2, 3, 2], &[100.0, 100.0, -150.0], 0.0, 200.0)
                .into_bytes(),
            cfg: none,
            want: r#"calls: 2"#,
        },
        // DevTools' answers in brackets, from the oracle: where its arithmetic on a wrong type
        // is garbage, jscalls says so instead.
        Case {
            name: "cpuprofile: endTime missing [DevTools: the same calls]",
            input: ok_profile().replace(r#","endTime":200"#, "").into_bytes(),
            cfg: none,
            want: r#"calls: 1"#,
        },
        Case {
            name: "cpuprofile: endTime missing, --cpuprofile-mode performance-panel [DevTools: durations null]",
            input: ok_profile().replace(r#","endTime":200"#, "").into_bytes(),
            cfg: |c| c.cpuprofile_mode = CpuProfileMode::PerformancePanel,
            want: r#"warning: 1:1: the profile has no endTime: the calls open at its end get no duration (null), as in DevTools [no-end-time]
calls: 1"#,
        },
        Case {
            name: "cpuprofile: startTime a string [DevTools: \"0\" + deltas, string concatenation]",
            input: ok_profile().replace(r#""startTime":0"#, r#""startTime":"0""#).into_bytes(),
            cfg: none,
            want: r#"error: 1:1: expected startTime to be a number, found a string"#,
        },
        Case {
            name: "cpuprofile: timeDeltas summing to Infinity [DevTools: calls of null duration]",
            input: ok_profile().replace("[100,100]", "[100,1e308,1e308]").replace("[2, 2]", "[2, 2, 2]").into_bytes(),
            cfg: none,
            want: r#"error: 1:1: profile: sample 2 has a time that is not a finite number (startTime 0 plus timeDeltas)"#,
        },
        Case {
            name: "cpuprofile: a node's id given twice [DevTools: the last one]",
            input: ok_profile().replace(r#"{"id":2,"#, r#"{"id":7,"id":2,"#).into_bytes(),
            cfg: none,
            want: r#"calls: 1"#,
        },
        Case {
            name: "cpuprofile: a lone surrogate in a function name [DevTools: kept]",
            input: ok_profile().replace(r#""functionName":"a""#, r#""functionName":"a\ud800""#).into_bytes(),
            cfg: none,
            want: r#"calls: 1"#,
        },
        Case {
            name: "3 MB of whitespace between events, --max-event-bytes 2000 (only an event's own bytes count)",
            input: t.replacen(",\n", &format!(",{}\n", " ".repeat(3 << 20)), 1).into_bytes(),
            cfg: |c| c.max_event_bytes = 2000,
            want: r#"calls: 2"#,
        },
        Case {
            name: "a dur that is text (\"7\") [DevTools: ts + \"7\" as text, the event lasts until that number]",
            input: t.replace(r#""dur":400"#, r#""dur":"7""#).into_bytes(),
            cfg: none,
            want: r#"warning: 3:1 (event 2): 'FunctionCall' has a dur that is the text "7"; DevTools adds it to ts as text, so the event lasts until 507, as there [bad-timestamp]
calls: 2"#,
        },
        Case {
            name: "a pid of 1e20 [DevTools: a Map key like any number; jscalls keeps integral pids and tids]",
            input: t.replace(r#""pid":0"#, r#""pid":1e20"#).into_bytes(),
            cfg: none,
            want: r#"warning: 1:2 (event 0): Profile event has no integral pid (a number); skipped [bad-pid-tid]
warning: 2:1 (event 1): ProfileChunk event has no integral pid (a number); skipped [bad-pid-tid]
warning: 3:1 (event 2): 'FunctionCall' (X) has no integral pid/tid; skipped [bad-pid-tid]
warning: no CPU profile to estimate calls from (no usable Profile and ProfileChunk events): record the trace with the disabled-by-default-v8.cpu_profiler category (README, "Recording") [no-cpu-profile]
calls: 0"#,
        },
    ]
}

#[test]
fn error_catalogue() {
    let cases = cases();
    assert!(cases.len() >= 30);
    let mut wrong = Vec::new();
    for c in &cases {
        let mut cfg = Config::default();
        (c.cfg)(&mut cfg);
        let got = report(&c.input, &cfg);
        if got != c.want {
            wrong.push(format!("case: {}\n  got:  {got:?}\n  want: {:?}", c.name, c.want));
        }
    }
    assert!(wrong.is_empty(), "{} of {} cases differ:\n{}", wrong.len(), cases.len(), wrong.join("\n"));
}

/// `docs/errors.md`'s table is this catalogue, rendered: `JSCALLS_BLESS=1 cargo test` rewrites it.
#[test]
fn errors_doc_is_the_catalogue() {
    let path = std::path::Path::new("docs/errors.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let (head, rest) = doc.split_once(TABLE_HEAD).expect("the catalogue's table in docs/errors.md");
    let tail = &rest[rest.find("\n\n").map_or(rest.len(), |k| k + 1)..];
    let mut table = String::from(TABLE_HEAD);
    for c in cases() {
        let (what, lines) = match c.want.strip_prefix("error: ") {
            Some(m) => ("**error** (exit 1)".to_owned(), vec![m]),
            None => {
                let mut lines: Vec<&str> = c.want.lines().collect();
                let calls = lines.pop().and_then(|l| l.strip_prefix("calls: ")).expect("a calls line");
                let lines: Vec<&str> = lines.iter().map(|l| l.strip_prefix("warning: ").unwrap_or(l)).collect();
                let what = if lines.is_empty() { "accepted" } else { "warning(s), carries on" };
                (format!("{what}; calls computed: {calls}"), lines)
            }
        };
        let message =
            if lines.is_empty() { "—".to_owned() } else { format!("`{}`", lines.join("<br>").replace('|', "\\|")) };
        table.push_str(&format!("| {} | {what} | {message} |\n", c.name));
    }
    let want = format!("{head}{table}{tail}");
    if std::env::var_os("JSCALLS_BLESS").is_some() {
        std::fs::write(path, &want).unwrap();
    } else {
        assert!(
            doc == want,
            "docs/errors.md is not the catalogue: run JSCALLS_BLESS=1 cargo test --test it errors_doc"
        );
    }
}

const TABLE_HEAD: &str = "| case | what jscalls does | message |\n|---|---|---|\n";

/// Positions deep in an input of many regions (the event array is scanned 4 MB at a time, the
/// window moving onto bytes read ahead): warnings and errors name the right line and column,
/// with events larger than the room kept for an event cut at a region's end, whatever the
/// number of threads, plain or gzipped. Two events in three are of a phase that plays no part
/// (counter, `C`), which the scan threads count instead of handing over.
#[test]
fn positions_are_exact_across_regions() {
    let mut lines = vec!["[".to_owned()];
    for k in 0..14_000 {
        // ~1 KB a line; every 1,500 lines a 300 KB event, longer than the room kept at the front
        // of the read-ahead buffer, so that some of them straddle a region's end.
        let pad = if k % 1_500 == 700 { 300_000 } else { 1_000 };
        let ph = if k % 3 == 0 { "X" } else { "C" };
        lines.push(format!(
            r#"{{"name":"A","ph":"{ph}","pid":1,"tid":1,"ts":{k},"dur":1,"args":{{"s":"{}"}}}},"#,
            "x".repeat(pad)
        ));
    }
    lines[12_345] = "  7,".to_owned();
    lines[13_579] = r#"  {"name":"B","ph":tru},"#.to_owned();
    let text = lines.join("\n") + "\n{}]";
    assert!(text.len() > 16 << 20, "{} bytes: the input must span several regions", text.len());
    let want = "error: 13580:23 (event 13578): expected true, found '}'";
    for threads in [1, 2] {
        let mut cfg = Config::default();
        cfg.threads = threads;
        assert_eq!(report(text.as_bytes(), &cfg), want, "{threads} threads");
        assert_eq!(report(&gz(text.as_bytes()), &cfg), want, "{threads} threads, gzipped");
        let fixed = text.replace(r#"{"name":"B","ph":tru}"#, r#"{"name":"B","ph":true}"#);
        assert_eq!(
            report(fixed.as_bytes(), &cfg),
            "warning: 12346:3 (event 12344): an element of traceEvents is not an object; skipped (DevTools would fail to load the trace) [event-not-object]
warning: 13580:3 (event 13578): 'B' has a boolean as its ph, not a one-letter string; ignored, as DevTools does [bad-phase]
warning: 14002:1 (event 14000): event has nothing (no such key) as its name, not a string; skipped (DevTools fails on such events) [bad-name]
warning: no CPU profile to estimate calls from (no usable Profile and ProfileChunk events): record the trace with the disabled-by-default-v8.cpu_profiler category (README, \"Recording\") [no-cpu-profile]
calls: 0",
            "{threads} threads"
        );
    }
}
