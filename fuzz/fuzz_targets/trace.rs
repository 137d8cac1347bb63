#![no_main]
// Trace input: any bytes, as a trace file would arrive (array or {traceEvents}, gzip or not).
use libfuzzer_sys::fuzz_target;
mod common;
fuzz_target!(|data: &[u8]| common::run(data));
