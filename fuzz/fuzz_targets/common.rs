// Shared by the fuzz targets: run the whole pipeline and both writers on the input, in every
// mode, and check what must hold for any input that is accepted.
use jscalls::{analyze, Config, CpuProfileMode, EngineVersion, Source, WarningKind};

pub fn run(data: &[u8]) {
    let src = Source::Memory(data.into());
    for (mode, engine) in [
        (CpuProfileMode::Integrator, EngineVersion::V0_0_65),
        (CpuProfileMode::PerformancePanel, EngineVersion::Latest),
    ] {
        let mut cfg = Config::default();
        cfg.cpuprofile_mode = mode;
        cfg.engine = engine;
        cfg.threads = 1;
        cfg.limits.max_depth = 2_000;
        cfg.limits.max_extra_nodes = 20_000;
        let Ok(a) = analyze(&src, &cfg) else { continue };
        // A duration is unknown (null) only where DevTools leaves it so, and then with a warning.
        let no_end = a.diagnostics().warnings().iter().any(|w| w.kind == WarningKind::NoEndTime);
        for t in a.threads() {
            for c in t.calls() {
                assert!(c.ts().is_finite(), "a call with a non-finite start");
                assert!(c.dur().is_finite() || (no_end && c.dur().is_nan()), "a call with a non-finite duration");
            }
        }
        let mut out = Vec::new();
        a.write_calls(&mut out, "fuzz").unwrap();
        let text = std::str::from_utf8(&out).expect("calls output is UTF-8");
        serde_json_check(text);
        let mut out = Vec::new();
        if a.write_timeline(&mut out, &src).is_ok() {
            serde_json_check(std::str::from_utf8(&out).expect("timeline output is UTF-8"));
        }
    }
    // The line data read and summed (a Firefox profile's samples at their JavaScript frames'
    // lines), by line and by column, with the events' names kept as trees and exports keep
    // them: no panic, no hang.
    let mut cfg = Config::default();
    cfg.threads = 1;
    cfg.keep_lines = true;
    cfg.keep_event_names = true;
    cfg.limits.max_depth = 2_000;
    cfg.limits.max_extra_nodes = 20_000;
    if let Ok((_, assembled)) = jscalls::assemble(&src, &cfg) {
        for by_column in [false, true] {
            std::hint::black_box(assembled.line_times_of(false, by_column));
        }
    }
}

fn serde_json_check(text: &str) {
    // Every output must be one valid JSON document.
    let mut depth = 0i64;
    let mut in_str = false;
    let mut esc = false;
    for c in text.bytes() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            _ => {}
        }
        assert!(depth >= 0, "unbalanced output");
    }
    assert_eq!(depth, 0, "unbalanced output");
}
