//! `--fail-on` rules: `METRIC OP CHANGE[@TARGET]`, such as `self>+10%`, `total>+5ms@render`,
//! `calls>+100@main>loop`.
//!
//! METRIC is `self`, `total` or `calls`; OP `>` (NEW is above BASE by more than CHANGE) or `<`
//! (below, for a CHANGE such as `-20%`); CHANGE a signed number with `%`, `s`, `ms` or `us`
//! (a time metric needs a unit; `calls` takes a count or a percentage). Without a target the
//! rule applies to every function of every thread; TARGET is a function (its name, or its
//! label `name url:line:column`), or a CallNode as the path of functions from a root joined by
//! `>`.

use jscalls::diff::funcs::{FuncDiff, Metric, Row, Subject};

/// How large a change a rule allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Threshold {
    /// Percent of BASE.
    Percent(f64),
    /// An amount: µs for times, a count for calls.
    Amount(f64),
}

/// One rule.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rule {
    /// As written.
    pub(crate) text: String,
    /// What is measured.
    pub(crate) metric: Metric,
    /// True for `>`, false for `<`.
    pub(crate) above: bool,
    /// The change allowed.
    pub(crate) threshold: Threshold,
    /// The function (one element) or CallNode path it applies to; None: every function.
    pub(crate) target: Option<Vec<String>>,
}

/// Parses a rule; the error says what was expected.
pub(crate) fn parse(text: &str) -> Result<Rule, String> {
    let bad = |what: &str| format!("--fail-on '{text}': {what} (e.g. 'self>+10%', 'total>+5ms@render')");
    let t = text.trim();
    let word_end = t.find(|c: char| !c.is_ascii_alphanumeric() && c != '_' && c != '-').unwrap_or(t.len());
    let (word, rest) = t.split_at(word_end);
    let metric = match word {
        "self" => Metric::SelfTime,
        "total" => Metric::Total,
        "calls" => Metric::Calls,
        "" => return Err(bad("expected self, total or calls first")),
        w => return Err(bad(&format!("unknown metric '{w}': expected self, total or calls"))),
    };
    let rest = rest.trim_start();
    let (above, rest) = match rest.chars().next() {
        Some('>') => (true, &rest[1..]),
        Some('<') => (false, &rest[1..]),
        _ => return Err(bad("expected > or < after the metric")),
    };
    let (amount, target) = match rest.split_once('@') {
        Some((a, t)) => (a.trim(), Some(t.trim())),
        None => (rest.trim(), None),
    };
    let (number, unit) =
        amount.split_at(amount.find(|c: char| c.is_alphabetic() || c == '%' || c == 'µ').unwrap_or(amount.len()));
    let value: f64 = number
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| bad(&format!("expected a number, found '{number}'")))?;
    let threshold = match (unit.trim(), metric) {
        ("%", _) => Threshold::Percent(value),
        ("s", Metric::SelfTime | Metric::Total) => Threshold::Amount(value * 1e6),
        ("ms", Metric::SelfTime | Metric::Total) => Threshold::Amount(value * 1e3),
        ("us" | "µs", Metric::SelfTime | Metric::Total) => Threshold::Amount(value),
        ("", Metric::Calls) => Threshold::Amount(value),
        ("", _) => return Err(bad("a time needs a unit: %, s, ms or us")),
        (u, _) => return Err(bad(&format!("unknown unit '{u}'"))),
    };
    let target = match target {
        Some("") => return Err(bad("expected a function or a path after @")),
        Some(t) => {
            let path: Vec<String> = t.split('>').map(|s| s.trim().to_owned()).collect();
            if path.iter().any(String::is_empty) {
                return Err(bad(&format!("'{t}': a path names a function between each '>'")));
            }
            Some(path)
        }
        None => None,
    };
    Ok(Rule { text: t.to_owned(), metric, above, threshold, target })
}

/// A row that breaks a rule.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Violation {
    /// Index of the rule.
    pub(crate) rule: usize,
    /// Whether the row is a CallNode (in [`FuncDiff::call_nodes`]) or a function.
    pub(crate) node: bool,
    /// Index of the row.
    pub(crate) row: usize,
    /// BASE's and NEW's medians.
    pub(crate) base: f64,
    /// NEW's median.
    pub(crate) new: f64,
    /// The Mann–Whitney p-value, with runs.
    pub(crate) p: Option<f64>,
}

/// How rules are applied.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gate {
    /// Relative time rules ignore rows whose medians are both below this, µs: a function of
    /// 3 µs that takes 6 µs has doubled, and means nothing.
    pub(crate) min_time: f64,
    /// With runs, a change counts only when the one-sided test says p < alpha.
    pub(crate) alpha: f64,
}

/// The rows that break `rules`, largest change first; and for each rule, whether its target
/// is anywhere in the comparison.
pub(crate) fn check(d: &FuncDiff, rules: &[Rule], gate: Gate) -> (Vec<Violation>, Vec<bool>) {
    let mut out = Vec::new();
    let mut found = vec![false; rules.len()];
    for (i, rule) in rules.iter().enumerate() {
        let on_nodes = rule.target.as_ref().is_some_and(|t| t.len() > 1);
        let rows: &[Row] = if on_nodes { &d.call_nodes } else { &d.functions };
        for (k, row) in rows.iter().enumerate() {
            if !targets(d, rule, row) {
                continue;
            }
            found[i] = true;
            let (base, new) = row.medians(rule.metric);
            let change = new - base;
            let breaks = match rule.threshold {
                Threshold::Amount(a) => {
                    if rule.above {
                        change > a
                    } else {
                        change < a
                    }
                }
                Threshold::Percent(p) => {
                    let timed = rule.metric != Metric::Calls;
                    if timed && base.max(new) < gate.min_time {
                        false
                    } else {
                        let rel = if base == 0.0 { change.signum() * f64::INFINITY } else { change / base * 100.0 };
                        if change == 0.0 {
                            false
                        } else if rule.above {
                            rel > p
                        } else {
                            rel < p
                        }
                    }
                }
            };
            if !breaks {
                continue;
            }
            let p = row.p_value(rule.metric, rule.above);
            if p.is_some_and(|p| p >= gate.alpha) {
                continue;
            }
            out.push(Violation { rule: i, node: on_nodes, row: k, base, new, p });
        }
    }
    out.sort_by(|a, b| {
        (b.new - b.base).abs().total_cmp(&(a.new - a.base).abs()).then(a.rule.cmp(&b.rule)).then(a.row.cmp(&b.row))
    });
    (out, found)
}

/// Whether `rule` applies to `row`.
fn targets(d: &FuncDiff, rule: &Rule, row: &Row) -> bool {
    let names_match = |f: u32, want: &str| {
        let k = &d.funcs[f as usize];
        k.name == want || k.label() == want
    };
    match (&rule.target, row.subject) {
        (None, Subject::Function(_)) => true,
        (Some(t), Subject::Function(f)) if t.len() == 1 => names_match(f, &t[0]),
        (Some(t), Subject::Node(n)) if t.len() > 1 => {
            let path = d.path(n);
            path.len() == t.len() && path.iter().zip(t).all(|(&f, w)| names_match(f, w))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_as_documented() {
        let r = parse("self>+10%").unwrap();
        assert_eq!(
            (r.metric, r.above, r.threshold, r.target),
            (Metric::SelfTime, true, Threshold::Percent(10.0), None)
        );
        let r = parse("total > +5ms @ render").unwrap();
        assert_eq!(
            (r.metric, r.threshold, r.target),
            (Metric::Total, Threshold::Amount(5000.0), Some(vec!["render".to_owned()]))
        );
        let r = parse("calls<-50%@main>loop").unwrap();
        assert_eq!((r.above, r.threshold), (false, Threshold::Percent(-50.0)));
        assert_eq!(r.target, Some(vec!["main".to_owned(), "loop".to_owned()]));
        assert_eq!(parse("self>0.5s").unwrap().threshold, Threshold::Amount(500_000.0));
        assert_eq!(parse("calls>+3").unwrap().threshold, Threshold::Amount(3.0));
        for bad in ["wall>+1%", "self=+1%", "self>+10", "self>+x%", "self>5 parsecs", "self>+1ms@", "calls>+2ms"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
