#![no_main]
// `--symbols`: the bytes as an `nm` table, then as the symbols of the one library of a small
// Firefox profile whose samples are native addresses in it. Reading must end in symbols or an
// error at a line, never a panic; a lookup must give a name the table has.
use std::sync::Arc;

use jscalls::{analyze, Config, Source, Symbols};
use libfuzzer_sys::fuzz_target;

const PROFILE: &[u8] = br#"{"meta":{"version":27,"startTime":0,"interval":1},
"libs":[{"start":4096,"end":1052672,"name":"app"}],
"threads":[{"name":"main","processType":"default","pid":"1","tid":1,
"samples":{"schema":{"stack":0,"time":1},"data":[[0,1],[1,2],[2,3],[0,4]]},
"stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0],[0,1],[1,2]]},
"frameTable":{"schema":{"location":0},"data":[[0],[1],[2]]},
"stringTable":["0x1100","0x2468","0xfff00"]}]}"#;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(symbols) = Symbols::from_nm(text) else { return };
    for address in [0u64, 0x100, 0x1364, 0xffefc, u64::MAX] {
        if let Some(name) = symbols.lookup(address) {
            assert!(text.contains(name), "a looked-up name is in the table");
        }
    }
    let mut cfg = Config::default();
    cfg.threads = 1;
    cfg.symbols.insert("app".to_owned(), Arc::new(symbols));
    if let Ok(a) = analyze(&Source::Memory(PROFILE.into()), &cfg) {
        let mut out = Vec::new();
        a.write_calls(&mut out, "fuzz").unwrap();
    }
});
