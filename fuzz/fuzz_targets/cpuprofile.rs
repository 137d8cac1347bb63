#![no_main]
// .cpuprofile input: the fuzzer's bytes become the values of a CDP profile object, so that
// mutations land in nodes, samples and deltas rather than in the outer JSON.
use libfuzzer_sys::fuzz_target;
mod common;
fuzz_target!(|data: &[u8]| {
    if let Some(b'{') = data.first() {
        common::run(data);
    } else {
        let mut doc = Vec::with_capacity(data.len() + 64);
        doc.extend_from_slice(b"{\"startTime\":0,\"endTime\":1000,");
        doc.extend_from_slice(data);
        doc.push(b'}');
        common::run(&doc);
    }
});
