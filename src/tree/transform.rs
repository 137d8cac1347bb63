//! Transforms of a call tree, as the Firefox Profiler has them. Each names its CallNode by a
//! CallNodePath (functions from a root) or its function, in terms of the tree the transforms
//! before it made, so a stack of transforms applied in order keeps every path valid.

use super::{FuncId, Mapped, Remap, Spans, StackId, Stacks};
use crate::error::Error;

/// One transform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transform {
    /// Removes the CallNode at the path: its children take its place under its parent, and its
    /// self weight goes to the parent.
    MergeCallNode(Vec<FuncId>),
    /// Removes the function from every stack.
    MergeFunction(FuncId),
    /// Folds everything below the CallNode at the path into it (its self weight becomes its total).
    MergeSubtree(Vec<FuncId>),
    /// Drops the samples through the CallNode at the path (hides it and its subtree).
    DropCallNode(Vec<FuncId>),
    /// Drops the samples whose stack holds the function.
    DropFunction(FuncId),
    /// Keeps only the samples through the CallNode at the path, with that node as the root.
    FocusSubtree(Vec<FuncId>),
    /// Keeps only the samples whose stack holds the function, each from its outermost call of it.
    FocusFunction(FuncId),
    /// Collapses the function calling itself directly (`f > f > f` becomes `f`).
    CollapseDirectRecursion(FuncId),
    /// Collapses every call of the function inside another (`f > g > f` becomes `f > g`).
    CollapseIndirectRecursion(FuncId),
    /// Makes the functions of one script (its URL) one function named by the URL, consecutive
    /// frames of it one frame.
    CollapseResource(String),
    /// Removes every function that is not JavaScript ([`super::Func::is_js`]): their time goes
    /// to the nearest JavaScript caller (or the root).
    JsOnly,
}

/// The transform kinds, as `--transform KIND:ARGUMENT` names them.
pub(super) const KINDS: &[(&str, &str)] = &[
    ("merge", "CallNodePath"),
    ("merge-function", "function"),
    ("merge-subtree", "CallNodePath"),
    ("drop", "CallNodePath"),
    ("drop-function", "function"),
    ("focus", "CallNodePath"),
    ("focus-function", "function"),
    ("collapse-recursion", "function"),
    ("collapse-indirect-recursion", "function"),
    ("collapse-resource", "URL"),
];

impl Transform {
    /// Reads `KIND:ARGUMENT` (KIND as `--transform` names it) against `stacks`, the tree the transform applies to. A
    /// CallNodePath is functions from a root separated by `>`; a function is its name, or its
    /// label (`name url:line:column`) when several functions share the name.
    pub fn parse(spec: &str, stacks: &Stacks) -> Result<Transform, Error> {
        let Some((kind, arg)) = spec.split_once(':') else {
            return Err(Error::argument(format!(
                "transform '{spec}': expected KIND:ARGUMENT, KIND one of {}",
                KINDS.iter().map(|k| k.0).collect::<Vec<_>>().join(", ")
            )));
        };
        let func = |name: &str| -> Result<FuncId, Error> {
            let name = name.trim();
            if name.is_empty() {
                return Err(Error::argument(format!("transform '{spec}': an empty function name")));
            }
            stacks.find_func(name).map_err(|all| match all.len() {
                0 => Error::argument(format!("transform '{spec}': no function named '{name}' in this tree")),
                _ => Error::argument(format!(
                    "transform '{spec}': {} functions are named '{name}'; name one as {}",
                    all.len(),
                    all.iter()
                        .map(|&f| format!("'{}'", stacks.funcs[f.index()].label()))
                        .collect::<Vec<_>>()
                        .join(" or ")
                )),
            })
        };
        let path = |text: &str| -> Result<Vec<FuncId>, Error> {
            let path = text.split('>').map(func).collect::<Result<Vec<_>, _>>()?;
            if !stacks.has_path(&path) {
                return Err(Error::argument(format!("transform '{spec}': no CallNode at '{text}' in this tree")));
            }
            Ok(path)
        };
        Ok(match kind {
            "merge" => Transform::MergeCallNode(path(arg)?),
            "merge-function" => Transform::MergeFunction(func(arg)?),
            "merge-subtree" => Transform::MergeSubtree(path(arg)?),
            "drop" => Transform::DropCallNode(path(arg)?),
            "drop-function" => Transform::DropFunction(func(arg)?),
            "focus" => Transform::FocusSubtree(path(arg)?),
            "focus-function" => Transform::FocusFunction(func(arg)?),
            "collapse-recursion" => Transform::CollapseDirectRecursion(func(arg)?),
            "collapse-indirect-recursion" => Transform::CollapseIndirectRecursion(func(arg)?),
            "collapse-resource" if stacks.funcs.iter().any(|f| f.url == arg) => {
                Transform::CollapseResource(arg.to_owned())
            }
            "collapse-resource" => {
                return Err(Error::argument(format!("transform '{spec}': no function of this tree is in '{arg}'")))
            }
            _ => {
                return Err(Error::argument(format!(
                    "transform '{spec}': unknown kind '{kind}', expected one of {}",
                    KINDS.iter().map(|k| k.0).collect::<Vec<_>>().join(", ")
                )))
            }
        })
    }

    /// `stacks` with this transform applied.
    pub fn apply(&self, stacks: &Stacks) -> Stacks {
        self.remap(stacks).0
    }

    /// `stacks` with this transform applied, and `spans` (of `stacks`) moved to its stacks in
    /// place: the spans of dropped stacks are removed.
    pub fn apply_with_spans(&self, stacks: &Stacks, spans: &mut Spans) -> Stacks {
        let (out, remap) = self.remap(stacks);
        spans.retain_mut(|s| match remap.stack(s.stack) {
            Some(n) => {
                s.stack = n;
                true
            }
            None => false,
        });
        out
    }

    fn remap(&self, stacks: &Stacks) -> (Stacks, Remap) {
        let push = |out: &mut Stacks, parent: Option<StackId>, f: FuncId| Mapped::To(Some(out.stack(parent, f)));
        match self {
            Transform::MergeCallNode(path) => {
                let at = PathState::of(stacks, path);
                stacks.rebuild(true, |out, p, k, f| match at[k.index()] {
                    PathState::At => Mapped::To(p),
                    _ => push(out, p, f),
                })
            }
            Transform::MergeSubtree(path) => {
                let at = PathState::of(stacks, path);
                stacks.rebuild(true, |out, p, k, f| match at[k.index()] {
                    PathState::Below => Mapped::To(p),
                    _ => push(out, p, f),
                })
            }
            Transform::DropCallNode(path) => {
                let at = PathState::of(stacks, path);
                stacks.rebuild(true, |out, p, k, f| match at[k.index()] {
                    PathState::At | PathState::Below => Mapped::Drop,
                    _ => push(out, p, f),
                })
            }
            Transform::FocusSubtree(path) => {
                let at = PathState::of(stacks, path);
                stacks.rebuild(false, |out, p, k, f| match at[k.index()] {
                    PathState::Prefix => Mapped::Skip(None),
                    PathState::At => Mapped::To(Some(out.stack(None, f))),
                    PathState::Below => push(out, p, f),
                    PathState::Outside => Mapped::Drop,
                })
            }
            Transform::MergeFunction(g) => {
                stacks.rebuild(true, |out, p, _, f| if f == *g { Mapped::To(p) } else { push(out, p, f) })
            }
            Transform::DropFunction(g) => {
                stacks.rebuild(true, |out, p, _, f| if f == *g { Mapped::Drop } else { push(out, p, f) })
            }
            Transform::FocusFunction(g) => {
                let seen = stacks.holds(*g);
                stacks.rebuild(false, |out, p, k, f| {
                    let parent_seen = stacks.frame(k).0.is_some_and(|q| seen[q.index()]);
                    match (parent_seen, f == *g) {
                        (true, _) => push(out, p, f),
                        (false, true) => Mapped::To(Some(out.stack(None, f))),
                        (false, false) => Mapped::Skip(None),
                    }
                })
            }
            Transform::CollapseDirectRecursion(g) => stacks.rebuild(true, |out, p, _, f| {
                if f == *g && p.is_some_and(|q| out.frame(q).1 == *g) {
                    Mapped::To(p)
                } else {
                    push(out, p, f)
                }
            }),
            Transform::CollapseIndirectRecursion(g) => {
                let seen = stacks.holds(*g);
                stacks.rebuild(true, |out, p, k, f| {
                    let inside = stacks.frame(k).0.is_some_and(|q| seen[q.index()]);
                    if f == *g && inside {
                        Mapped::To(p)
                    } else {
                        push(out, p, f)
                    }
                })
            }
            Transform::CollapseResource(url) => {
                let mut merged = None;
                stacks.rebuild(true, |out, p, _, f| {
                    if out.funcs[f.index()].url != *url {
                        return push(out, p, f);
                    }
                    let r = *merged.get_or_insert_with(|| {
                        out.func(super::Func {
                            name: url.clone(),
                            url: url.clone(),
                            script: String::new(),
                            line: None,
                            column: None,
                        })
                    });
                    if p.is_some_and(|q| out.frame(q).1 == r) {
                        Mapped::To(p)
                    } else {
                        push(out, p, r)
                    }
                })
            }
            Transform::JsOnly => {
                let js: Vec<bool> = stacks.funcs.iter().map(super::Func::is_js).collect();
                stacks.rebuild(true, |out, p, _, f| if js[f.index()] { push(out, p, f) } else { Mapped::To(p) })
            }
        }
    }
}

impl Stacks {
    /// Whether some stack is exactly `path`.
    fn has_path(&self, path: &[FuncId]) -> bool {
        PathState::of(self, path).contains(&PathState::At)
    }

    /// For each stack, whether `g` is on it.
    fn holds(&self, g: FuncId) -> Vec<bool> {
        let mut seen: Vec<bool> = Vec::with_capacity(self.prefix.len());
        for &(p, f) in &self.prefix {
            let s = f == g || p.is_some_and(|q| seen[q.index()]);
            seen.push(s);
        }
        seen
    }
}

/// Where a stack lies relative to a CallNodePath.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathState {
    /// The stack is a proper prefix of the path.
    Prefix,
    /// The stack is the path.
    At,
    /// The stack extends the path.
    Below,
    /// None of those.
    Outside,
}

impl PathState {
    /// The state of every stack (parents come before children, so one pass).
    fn of(stacks: &Stacks, path: &[FuncId]) -> Vec<PathState> {
        // Matched length per stack (usize::MAX: outside; > len: below).
        let mut matched: Vec<usize> = Vec::with_capacity(stacks.prefix.len());
        let mut out = Vec::with_capacity(stacks.prefix.len());
        for &(p, f) in &stacks.prefix {
            let before = p.map_or(0, |q| matched[q.index()]);
            let m = if before == usize::MAX {
                usize::MAX
            } else if before >= path.len() {
                path.len() + 1
            } else if path[before] == f {
                before + 1
            } else {
                usize::MAX
            };
            matched.push(m);
            out.push(match m {
                usize::MAX => PathState::Outside,
                m if m == path.len() => PathState::At,
                m if m > path.len() => PathState::Below,
                _ => PathState::Prefix,
            });
        }
        out
    }
}
