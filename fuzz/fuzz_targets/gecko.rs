#![no_main]
// Firefox (Gecko) profile input: the fuzzer's bytes become the threads of a profile (and so its
// tables, strings and child processes), unless they are a whole profile object already.
use libfuzzer_sys::fuzz_target;
mod common;
fuzz_target!(|data: &[u8]| {
    if data.starts_with(b"{\"meta\"") {
        common::run(data);
    } else {
        let mut doc = Vec::with_capacity(data.len() + 96);
        doc.extend_from_slice(b"{\"meta\":{\"version\":27,\"startTime\":0,\"interval\":1},\"libs\":[],\"threads\":[");
        doc.extend_from_slice(data);
        doc.extend_from_slice(b"]}");
        common::run(&doc);
    }
});
