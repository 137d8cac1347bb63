//! Scope data in a map, read as DevTools reads it: the scopes proposal's `scopes` string (its
//! scopes codec, `ScopesCodec.decode` in LAX mode: malformed items are skipped, never an
//! error) and Bloomberg's `x_com_bloomberg_sourcesFunctionMappings` (`decodePastaRanges` and
//! `buildOriginalScopes`, which do fail). Only what names a function is kept: original scopes
//! (where, name, whether a stack frame) and generated ranges (where, their original scope).

use serde_json::Value;

use super::info::{Original, Pos, Range, ScopesInfo};
use super::units::{base64, js_string, to_int32, CodeUnits, Units};

/// The codec's items (`Tag`).
const EMPTY: f64 = 0.0;
const ORIGINAL_SCOPE_START: f64 = 1.0;
const ORIGINAL_SCOPE_END: f64 = 2.0;
const ORIGINAL_SCOPE_VARIABLES: f64 = 3.0;
const GENERATED_RANGE_START: f64 = 4.0;
const GENERATED_RANGE_END: f64 = 5.0;
const GENERATED_RANGE_BINDINGS: f64 = 6.0;
const GENERATED_RANGE_SUBRANGE_BINDING: f64 = 7.0;
const GENERATED_RANGE_CALL_SITE: f64 = 8.0;
const VENDOR_EXTENSION: f64 = 99.0;

const COMMA: u16 = b',' as u16;

/// The codec's `nextUnsignedVLQ`: a unit that is no Base64 digit (a comma, the end) counts as
/// the digit 0 and ends the number; digits are summed as JavaScript sums 32-bit shifts.
fn unsigned(it: &mut Units<'_>) -> f64 {
    let mut result = 0f64;
    let mut shift = 0u32;
    loop {
        let digit = it.next().and_then(base64).unwrap_or(0);
        result += f64::from(((digit & 31) as i32).wrapping_shl(shift & 31));
        shift += 5;
        if digit & 32 == 0 {
            return result;
        }
    }
}

/// `nextSignedVLQ`: the sign in the lowest bit of the 32-bit value.
fn signed(it: &mut Units<'_>) -> f64 {
    let v = unsigned(it);
    let magnitude = f64::from((to_int32(v) as u32) >> 1);
    if to_int32(v) & 1 == 1 {
        -magnitude
    } else {
        magnitude
    }
}

fn more(it: &mut Units<'_>) -> bool {
    it.peek().is_some()
}

fn before_comma(it: &mut Units<'_>) -> bool {
    it.peek().is_some_and(|u| u != COMMA)
}

/// `names[index] ?? ""`.
fn name(names: &[Value], index: f64) -> String {
    let v = if index >= 0.0 && index.fract() == 0.0 { names.get(index as usize) } else { None };
    match v {
        None | Some(Value::Null) => String::new(),
        Some(v) => js_string(v),
    }
}

fn pos(line: f64, column: f64) -> Pos {
    (line as i64, column as i64)
}

/// Decodes one map's (or section's) `scopes` into `info`: its original scope trees after those
/// already there (one per source, or none), its generated ranges from `offset` (the section's).
pub(super) fn decode_scopes(info: &mut ScopesInfo, text: &str, names: &[Value], offset: (i64, i64)) {
    let mut it = Units::new(text);
    // The codec's running state: original scopes (line, column, name), ranges (line, column,
    // definition).
    let (mut s_line, mut s_column, mut s_name) = (0f64, 0f64, 0f64);
    let (mut r_line, mut r_column, mut r_def) = (offset.0 as f64, offset.1 as f64, 0f64);
    let mut scope_stack: Vec<usize> = Vec::new();
    let mut range_stack: Vec<usize> = Vec::new();
    // This map's original scopes in the order they started, for the ranges' definitions.
    let mut flat: Vec<usize> = Vec::new();
    while more(&mut it) {
        let tag = unsigned(&mut it);
        if tag == EMPTY {
            info.source_roots.push(None);
        } else if tag == ORIGINAL_SCOPE_START {
            let flags = to_int32(unsigned(&mut it));
            let line = unsigned(&mut it);
            let column = unsigned(&mut it);
            let name_delta = (flags & 1 != 0).then(|| signed(&mut it));
            if flags & 2 != 0 {
                signed(&mut it);
            }
            s_line += line;
            s_column = if line == 0.0 { s_column + column } else { column };
            let mut scope = Original::new(pos(s_line, s_column), pos(s_line, s_column));
            if let Some(d) = name_delta {
                s_name += d;
                scope.name = Some(name(names, s_name));
            }
            scope.stack_frame = flags & 4 != 0;
            let k = info.originals.len();
            info.originals.push(scope);
            scope_stack.push(k);
            flat.push(k);
        } else if tag == ORIGINAL_SCOPE_END {
            let line = unsigned(&mut it);
            let column = unsigned(&mut it);
            s_line += line;
            s_column = if line == 0.0 { s_column + column } else { column };
            if let Some(k) = scope_stack.pop() {
                info.originals[k].end = pos(s_line, s_column);
                if let Some(&parent) = scope_stack.last() {
                    info.originals[k].parent = Some(parent);
                    info.originals[parent].children.push(k);
                } else {
                    info.source_roots.push(Some(k));
                    (s_line, s_column) = (0.0, 0.0);
                }
            }
        } else if tag == ORIGINAL_SCOPE_VARIABLES || tag == GENERATED_RANGE_BINDINGS {
            while before_comma(&mut it) {
                unsigned(&mut it);
            }
        } else if tag == GENERATED_RANGE_START {
            let flags = to_int32(unsigned(&mut it));
            let line = (flags & 1 != 0).then(|| unsigned(&mut it));
            let column = unsigned(&mut it);
            let definition = (flags & 2 != 0).then(|| signed(&mut it));
            match line {
                Some(l) => (r_line, r_column) = (r_line + l, column),
                None => r_column += column,
            }
            let mut original = None;
            if let Some(d) = definition {
                r_def += d;
                if r_def >= 0.0 && (r_def as usize) < flat.len() && r_def.fract() == 0.0 {
                    original = Some(flat[r_def as usize]);
                }
            }
            let at = pos(r_line, r_column);
            range_stack.push(info.ranges.len());
            info.ranges.push(Range::new(at, at, original));
        } else if tag == GENERATED_RANGE_END {
            let first = unsigned(&mut it);
            let (line, column) = if before_comma(&mut it) { (first, unsigned(&mut it)) } else { (0.0, first) };
            if line != 0.0 {
                (r_line, r_column) = (r_line + line, column);
            } else {
                r_column += column;
            }
            if let Some(r) = range_stack.pop() {
                info.ranges[r].end = pos(r_line, r_column);
                match range_stack.last() {
                    Some(&parent) => info.ranges[parent].children.push(r),
                    None => info.range_roots.push(r),
                }
            }
        } else if tag == GENERATED_RANGE_SUBRANGE_BINDING {
            unsigned(&mut it);
            while before_comma(&mut it) {
                for _ in 0..3 {
                    unsigned(&mut it);
                }
            }
        } else if tag == GENERATED_RANGE_CALL_SITE {
            for _ in 0..3 {
                unsigned(&mut it);
            }
        } else if tag == VENDOR_EXTENSION {
            unsigned(&mut it);
        }
        // What is left of the item, and its comma.
        while before_comma(&mut it) {
            unsigned(&mut it);
        }
        it.next();
    }
}

/// `parseBloombergScopes` for one map (or section): a tree per source after those already in
/// `info` (none for a source without ranges). Err: why DevTools' parse of the map fails (it
/// then drops every mapping).
pub(super) fn decode_bloomberg(
    info: &mut ScopesInfo,
    lists: &Value,
    names: &[Value],
    n_sources: usize,
) -> Result<(), String> {
    let Some(lists) = lists.as_array() else {
        return Err("x_com_bloomberg_sourcesFunctionMappings is not an array".to_owned());
    };
    if lists.len() != n_sources {
        return Err(format!("x_com_bloomberg_sourcesFunctionMappings must have {n_sources} scope trees"));
    }
    for raw in lists {
        let text = match raw {
            Value::Null | Value::Bool(false) => None,
            Value::String(s) if s.is_empty() => None,
            Value::String(s) => Some(s.as_str()),
            Value::Number(n) if n.as_f64() == Some(0.0) => None,
            _ => return Err("an entry of x_com_bloomberg_sourcesFunctionMappings is not a string".to_owned()),
        };
        let Some(text) = text else {
            info.source_roots.push(None);
            continue;
        };
        let ranges = pasta_ranges(text, names)?;
        build_original_scopes(info, ranges)?;
    }
    Ok(())
}

/// `decodePastaRanges`: (start, end, name) of each function range with a name entry.
fn pasta_ranges(text: &str, names: &[Value]) -> Result<Vec<(Pos, Pos, String)>, String> {
    let mut it = Units::new(text);
    let mut out = Vec::new();
    let (mut name_index, mut start_column, mut end_line, mut end_column) = (0i64, 0i64, 0i64, 0i64);
    let mut at_start = true;
    while it.peek().is_some() {
        if at_start {
            at_start = false;
        } else if it.peek() == Some(COMMA) {
            it.next();
        } else {
            break;
        }
        name_index += it.vlq()?;
        let start_line = end_line + it.vlq()?;
        start_column += it.vlq()?;
        end_line = start_line + it.vlq()?;
        end_column += it.vlq()?;
        let Some(v) = usize::try_from(name_index).ok().and_then(|k| names.get(k)) else { continue };
        let name = if v.is_null() { String::new() } else { js_string(v) };
        out.push(((start_line, start_column), (end_line, end_column), name));
    }
    Ok(out)
}

/// `buildOriginalScopes`: the ranges nested by position under a root from the start to the
/// last top-level range's end; Err when a range does not end after it starts.
fn build_original_scopes(info: &mut ScopesInfo, mut ranges: Vec<(Pos, Pos, String)>) -> Result<(), String> {
    if let Some((s, e, _)) = ranges.iter().find(|(s, e, _)| s >= e) {
        return Err(format!("a range does not end after its start ({}:{} to {}:{})", s.0, s.1, e.0, e.1));
    }
    // Stable, as JavaScript's sort: by start, the longer first.
    ranges.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let root = info.originals.len();
    info.originals.push(Original::new((0, 0), (i64::MAX, i64::MAX)));
    let mut stack = vec![root];
    for (start, end, name) in ranges {
        while let Some(&top) = stack.last() {
            if top != root && info.originals[top].end <= start {
                stack.pop();
            } else {
                break;
            }
        }
        let parent = *stack.last().expect("the root stays");
        let k = info.originals.len();
        let mut scope = Original::new(start, end);
        (scope.name, scope.stack_frame, scope.parent) = (Some(name), true, Some(parent));
        info.originals.push(scope);
        info.originals[parent].children.push(k);
        stack.push(k);
    }
    if let Some(&last) = info.originals[root].children.last() {
        info.originals[root].end = info.originals[last].end;
    }
    info.source_roots.push(Some(root));
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::sourcemap::map::SourceMap;

    /// `findOriginalFunctionName` at a generated position of `m`, through its scope data.
    fn name_at(m: &SourceMap, line: i64, column: i64) -> Option<String> {
        let mapped = || {
            let e = m.find_entry(line, column)?;
            Some((m.source_index(e)?, (e.source_line(), e.source_column())))
        };
        m.scopes.as_ref()?.function_name(line, column, mapped)
    }

    /// A map of one source whose mappings are `mappings`, with the scope data `extra`.
    fn map(mappings: &str, extra: &str) -> SourceMap {
        let json =
            format!(r#"{{"version":3,"sources":["a.js"],"names":["outer","inner"],"mappings":"{mappings}"{extra}}}"#);
        SourceMap::new("https://x/app.js", "https://x/app.js.map", &serde_json::from_str(&json).unwrap()).unwrap()
    }

    /// By hand: `outer` (named, a stack frame) from 0:0 to 8:0 holds an unnamed stack frame
    /// from 2:4 to 3:1; "CAA" first is an end without a start (skipped).
    const SCOPES: &str = "CAA,BFAAA,BECE,CBB,CFA";

    #[test]
    fn original_scopes_name_a_position_through_the_mappings() {
        // Generated 0:0 maps to 2:6 (inside the unnamed function), 0:1 to 5:0 (outer only).
        let m = map("AAEM,CAGM", &format!(r#","scopes":"{SCOPES}""#));
        let info = m.scopes.as_ref().expect("scope data");
        assert_eq!(info.source_roots.len(), 1);
        assert_eq!(name_at(&m, 0, 0).as_deref(), Some(""));
        assert_eq!(name_at(&m, 0, 1).as_deref(), Some("outer"));
        // Past the last mapping, the last one still answers (`findEntry`).
        assert_eq!(name_at(&m, 3, 0).as_deref(), Some("outer"));
    }

    #[test]
    fn generated_ranges_name_a_position_by_their_definition() {
        // A range from 0:0 to 10:0 defined by scope 1 (the unnamed one), a second from 10:0
        // to 12:0 defined by scope 0 (`outer`): the mappings play no part.
        let ranges = "EDAAC,FKA,EDAAD,FCA";
        let m = map("AAKA", &format!(r#","scopes":"{SCOPES},{ranges}""#));
        let info = m.scopes.as_ref().unwrap();
        assert_eq!(info.range_roots.len(), 2);
        assert_eq!(name_at(&m, 0, 0).as_deref(), Some(""));
        assert_eq!(name_at(&m, 10, 3).as_deref(), Some("outer"));
        assert_eq!(name_at(&m, 12, 0), None);
    }

    #[test]
    fn bloomberg_ranges_nest_and_name_functions() {
        // `outer` from 1:2 to 4:4, then `inner` from 5:2 to 5:6; 0:0 maps to 5:3, 0:1 to 2:0.
        let lists = r#","x_com_bloomberg_sourcesFunctionMappings":["ACEGI,CCAAE"]"#;
        let m = map("AAKG,CAHF", lists);
        assert!(m.scopes.is_some());
        assert_eq!(name_at(&m, 0, 0).as_deref(), Some("inner"));
        assert_eq!(name_at(&m, 0, 1).as_deref(), Some("outer"));
        // A range that does not end after its start fails the map, as DevTools' parse fails.
        let bad = map("AAKG", r#","x_com_bloomberg_sourcesFunctionMappings":["AAAAA"]"#);
        assert!(
            bad.scopes.is_none()
                && bad
                    .mappings_error
                    .as_deref()
                    .is_some_and(|e| e.contains("does not end after its start (0:0 to 0:0)"))
        );
        let wrong_count = map("AAKG", r#","x_com_bloomberg_sourcesFunctionMappings":["ACEGI","ACEGI"]"#);
        assert!(wrong_count.mappings_error.is_some());
    }

    #[test]
    fn data_without_any_scope_leaves_the_scripts_scopes_to_name_functions() {
        // Only an empty item: DevTools' isEmpty, so its AST fallback runs.
        assert!(map("AAAA", r#","scopes":"A""#).scopes.is_none());
        assert!(map("AAAA", r#","scopes":"""#).scopes.is_none());
    }
}
