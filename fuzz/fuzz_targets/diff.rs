#![no_main]
// `diff`'s library side: the bytes are two inputs (split at the first 0xFF byte, or halved), each
// read as a calls document when it says it is one and analyzed otherwise; the two estimates are
// compared call by call and function by function, both ways (and each estimate made for a
// comparison call by call against a full one). Nothing may panic, and the
// comparisons must be symmetric where they promise to be.
use jscalls::diff::{calls, funcs, ThreadEstimate};
use jscalls::{analyze, Config, Source};
use libfuzzer_sys::fuzz_target;

fn side(bytes: &[u8]) -> Option<Vec<ThreadEstimate>> {
    if ThreadEstimate::is_calls_document(bytes) {
        return ThreadEstimate::read_calls_document(bytes).ok();
    }
    let mut cfg = Config::default();
    cfg.threads = 1;
    cfg.keep_event_names = true;
    cfg.limits.max_depth = 2_000;
    cfg.limits.max_extra_nodes = 20_000;
    let a = analyze(&Source::Memory(bytes.into()), &cfg).ok()?;
    let mut out = Vec::new();
    for t in a.threads() {
        out.push(ThreadEstimate::of_thread(&t));
        // Made for a comparison call by call: the same records, each call's function the same.
        let flat = ThreadEstimate::of_thread_for_calls(&t);
        let full = out.last().expect("just pushed");
        let records = |t: &ThreadEstimate| format!("{:?}", t.calls().collect::<Vec<_>>());
        assert_eq!(records(full), records(&flat), "the same calls");
        for k in 0..full.call_count() {
            let (f, l) = (full.func(full.func_of(k)), flat.func(flat.func_of(k)));
            assert_eq!((&f.name, &f.url, f.line, f.column), (&l.name, &l.url, l.line, l.column), "call {k}'s function");
        }
    }
    // An estimate written as a calls document reads back as the same calls.
    let mut doc = Vec::new();
    a.write_calls(&mut doc, "fuzz").unwrap();
    let back = ThreadEstimate::read_calls_document(&doc).expect("jscalls' own calls document reads back");
    assert_eq!(back.iter().map(ThreadEstimate::call_count).sum::<usize>(), out.iter().map(ThreadEstimate::call_count).sum::<usize>());
    Some(out)
}

fuzz_target!(|data: &[u8]| {
    let cut = data.iter().position(|&b| b == 0xFF).unwrap_or(data.len() / 2);
    let (a, b) = (&data[..cut], &data[(cut + 1).min(data.len())..]);
    let (Some(a), Some(b)) = (side(a), side(b)) else { return };
    let ab = calls::diff(&a, &b, usize::MAX);
    let ba = calls::diff(&b, &a, usize::MAX);
    assert_eq!(
        ab.iter().map(|t| t.len()).sum::<usize>(),
        ba.iter().map(|t| t.len()).sum::<usize>(),
        "a call-by-call diff has as many changes both ways"
    );
    // Keeping the largest few counts the same and keeps the first of all.
    for (top, all) in calls::diff(&a, &b, 2).iter().zip(&ab) {
        assert_eq!((top.len(), top.sum_abs_dur().to_bits()), (all.len(), all.sum_abs_dur().to_bits()));
        let firsts = |t: &calls::ThreadDiff<'_>| t.changes().take(2).map(|c| (c.kind, c.size().to_bits())).collect::<Vec<_>>();
        assert_eq!(firsts(top), firsts(all));
    }
    let one = funcs::diff(&[&a[..]], &[&b[..]]);
    let owned = funcs::FuncDiff::of_owned(vec![a.clone()], vec![b.clone()]);
    assert_eq!(format!("{owned:?}"), format!("{one:?}"), "freeing estimates as they are counted changes nothing");
    let _ = funcs::diff(&[&a[..], &b[..]], &[&b[..]]);
    let _ = ThreadEstimate::same_recording(&a, &b);
});
