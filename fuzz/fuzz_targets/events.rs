#![no_main]
// Structure-aware trace input: the fuzzer's bytes choose events (trace events of every phase,
// Profile heads, ProfileChunks with nodes, samples, deltas and trace ids, thread names, frames)
// from a small vocabulary of names, ids and times, so that nearly every run reaches the
// estimator instead of stopping in the tokenizer.
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use std::fmt::Write;
mod common;

#[derive(Arbitrary, Debug)]
enum Ev {
    Trace { name: u8, ph: u8, thread: u8, ts: Time, dur: Option<Time>, trace_id: Option<u8> },
    Profile { thread: u8, id: u8, start: Time },
    Chunk { thread: u8, id: u8, nodes: Vec<Node>, samples: Vec<u8>, deltas: Vec<i16>, trace_ids: Vec<(u8, u8)> },
    ThreadName { thread: u8, name: u8 },
    Frame { pid: u8, url: u8 },
}

#[derive(Arbitrary, Debug)]
struct Node {
    id: u8,
    parent: Option<u8>,
    function: u8,
    script: u8,
    line: i8,
}

/// Times near each other so that events overlap, with a few odd values.
#[derive(Arbitrary, Debug)]
enum Time {
    Near(u16),
    Odd(u8),
}

const NAMES: &[&str] = &[
    "RunTask", "FunctionCall", "EvaluateScript", "v8.compile", "RunMicrotasks", "Layout",
    "EventDispatch", "TimerFire", "V8.Execute", "v8.callFunction", "ProfileChunk", "Profile",
    "thread_name", "TracingStartedInBrowser", "CpuProfile", "",
];
const FUNCTIONS: &[&str] = &["(root)", "(program)", "(idle)", "(garbage collector)", "a", "b", "f", "Parse", ""];
const THREAD_NAMES: &[&str] = &["CrRendererMain", "DedicatedWorker thread", "v8:ProfEvntProc", ""];
const URLS: &[&str] = &["https://a.test/", "", "about:blank"];

fn time(t: &Time) -> String {
    match t {
        Time::Near(v) => (1_000_000u64 + *v as u64 * 10).to_string(),
        Time::Odd(k) => ["-1", "0", "1e300", "1.5", "null", "\"7\"", "1000000.000001", "-0"][*k as usize % 8].into(),
    }
}

fn pid_tid(thread: u8) -> (u8, u8) {
    (1 + thread % 2, 1 + (thread / 2) % 3)
}

fn render(evs: &[Ev]) -> String {
    let mut s = String::from("{\"traceEvents\":[");
    for (i, e) in evs.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        match e {
            Ev::Trace { name, ph, thread, ts, dur, trace_id } => {
                let (pid, tid) = pid_tid(*thread);
                let ph = ["X", "B", "E", "I", "i", "M", "P", "b"][*ph as usize % 8];
                let _ = write!(s, r#"{{"name":"{}","ph":"{ph}","cat":"devtools.timeline","pid":{pid},"tid":{tid},"ts":{}"#,
                    NAMES[*name as usize % NAMES.len()], time(ts));
                if let Some(d) = dur {
                    let d = match d { Time::Near(v) => (*v as u64 % 5000).to_string(), t => time(t) };
                    let _ = write!(s, r#","dur":{d}"#);
                }
                if let Some(t) = trace_id {
                    let _ = write!(s, r#","args":{{"data":{{"sampleTraceId":{t}}}}}"#);
                }
                s.push('}');
            }
            Ev::Profile { thread, id, start } => {
                let (pid, tid) = pid_tid(*thread);
                let _ = write!(s, r#"{{"name":"Profile","ph":"P","cat":"disabled-by-default-v8.cpu_profiler","pid":{pid},"tid":{tid},"ts":{t},"id":"0x{id}","args":{{"data":{{"startTime":{t}}}}}}}"#,
                    id = id % 3, t = time(start));
            }
            Ev::Chunk { thread, id, nodes, samples, deltas, trace_ids } => {
                let (pid, tid) = pid_tid(*thread);
                let _ = write!(s, r#"{{"name":"ProfileChunk","ph":"P","cat":"disabled-by-default-v8.cpu_profiler","pid":{pid},"tid":{tid},"ts":1000000,"id":"0x{}","args":{{"data":{{"cpuProfile":{{"nodes":["#, id % 3);
                for (k, n) in nodes.iter().enumerate() {
                    if k > 0 {
                        s.push(',');
                    }
                    let _ = write!(s, r#"{{"id":{},"callFrame":{{"functionName":"{}","scriptId":{},"url":"{}","lineNumber":{},"columnNumber":0}}"#,
                        n.id % 16, FUNCTIONS[n.function as usize % FUNCTIONS.len()], n.script % 4, URLS[n.script as usize % URLS.len()], n.line);
                    if let Some(p) = n.parent {
                        let _ = write!(s, r#","parent":{}"#, p % 16);
                    }
                    s.push('}');
                }
                s.push_str(r#"],"samples":["#);
                for (k, v) in samples.iter().enumerate() {
                    let _ = write!(s, "{}{}", if k > 0 { "," } else { "" }, v % 16);
                }
                s.push_str(r#"]},"timeDeltas":["#);
                for (k, v) in deltas.iter().enumerate() {
                    let _ = write!(s, "{}{}", if k > 0 { "," } else { "" }, v);
                }
                s.push_str("]");
                if !trace_ids.is_empty() {
                    s.push_str(r#","trace_ids":{"#);
                    for (k, (a, b)) in trace_ids.iter().enumerate() {
                        let _ = write!(s, r#"{}"{}":{}"#, if k > 0 { "," } else { "" }, a % 8, b % 8);
                    }
                    s.push('}');
                }
                s.push_str("}}}");
            }
            Ev::ThreadName { thread, name } => {
                let (pid, tid) = pid_tid(*thread);
                let _ = write!(s, r#"{{"name":"thread_name","ph":"M","pid":{pid},"tid":{tid},"ts":0,"args":{{"name":"{}"}}}}"#,
                    THREAD_NAMES[*name as usize % THREAD_NAMES.len()]);
            }
            Ev::Frame { pid, url } => {
                let _ = write!(s, r#"{{"name":"TracingStartedInBrowser","ph":"I","cat":"disabled-by-default-devtools.timeline","pid":9,"tid":9,"ts":1000000,"args":{{"data":{{"frames":[{{"frame":"F","processId":{},"url":"{}"}}]}}}}}}"#,
                    1 + pid % 2, URLS[*url as usize % URLS.len()]);
            }
        }
    }
    s.push_str("]}");
    s
}

fuzz_target!(|evs: Vec<Ev>| {
    common::run(render(&evs).as_bytes());
});
