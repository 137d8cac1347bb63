//! `SourceMapScopesInfo`: original scopes and generated ranges, and the function they name
//! at a generated position. Made from a map's scope data (`codec.rs`) or from the script's own
//! scopes (`scopes.rs`).

/// A position: 0-based line, and column in UTF-16 units.
pub(super) type Pos = (i64, i64);

/// An original scope (`ScopesCodec.OriginalScope`), in an arena.
#[derive(Debug, Clone)]
pub(super) struct Original {
    pub(super) start: Pos,
    pub(super) end: Pos,
    pub(super) name: Option<String>,
    pub(super) stack_frame: bool,
    pub(super) parent: Option<usize>,
    pub(super) children: Vec<usize>,
    /// Whether the children are tidy: sorted by start, none ends before it starts, and each
    /// ends where or before the next starts; then the one that may hold a scope or a position
    /// is found by bisection. Kept while a tree is built by insertion, set again by
    /// [`ScopesInfo::index`].
    pub(super) tidy: bool,
}

impl Original {
    /// A scope from `start` to `end`, no function, in no tree yet.
    pub(super) fn new(start: Pos, end: Pos) -> Original {
        Original { start, end, name: None, stack_frame: false, parent: None, children: Vec::new(), tidy: true }
    }
}

/// A generated range (`ScopesCodec.GeneratedRange`): where a scope is in the generated script
/// and its original scope.
#[derive(Debug, Clone)]
pub(super) struct Range {
    pub(super) start: Pos,
    pub(super) end: Pos,
    pub(super) original: Option<usize>,
    pub(super) children: Vec<usize>,
    /// Whether the children are tidy (as [`Original::tidy`]), set by [`ScopesInfo::index`].
    pub(super) tidy: bool,
}

impl Range {
    pub(super) fn new(start: Pos, end: Pos, original: Option<usize>) -> Range {
        Range { start, end, original, children: Vec::new(), tidy: false }
    }
}

/// `SourceMapScopesInfo`: original scopes (one tree or none per source of the map) and
/// generated ranges, made from the map's scope data ([`super::codec`]) or from the script's
/// own scopes (`createFromAst`).
#[derive(Debug, Clone, Default)]
pub(crate) struct ScopesInfo {
    pub(super) originals: Vec<Original>,
    pub(super) ranges: Vec<Range>,
    /// Each source's tree, by the map's source index.
    pub(super) source_roots: Vec<Option<usize>>,
    /// The outermost generated ranges, in order.
    pub(super) range_roots: Vec<usize>,
}

impl ScopesInfo {
    /// `isEmpty`: no original scope and no generated range (DevTools then builds the scopes
    /// from the script's AST).
    pub(crate) fn is_empty(&self) -> bool {
        self.source_roots.iter().all(Option::is_none) && self.range_roots.is_empty()
    }

    /// Notes which scopes' children are tidy; to be called once the trees are built (the
    /// map's scope data is read in any order).
    pub(super) fn index(&mut self) {
        fn tidy(children: &[usize], at: impl Fn(usize) -> (Pos, Pos)) -> bool {
            children.iter().all(|&c| at(c).0 <= at(c).1) && children.windows(2).all(|w| at(w[0]).1 <= at(w[1]).0)
        }
        let o = &self.originals;
        let flags: Vec<bool> = o.iter().map(|x| tidy(&x.children, |c| (o[c].start, o[c].end))).collect();
        self.originals.iter_mut().zip(flags).for_each(|(x, t)| x.tidy = t);
        let r = &self.ranges;
        let flags: Vec<bool> = r.iter().map(|x| tidy(&x.children, |c| (r[c].start, r[c].end))).collect();
        self.ranges.iter_mut().zip(flags).for_each(|(x, t)| x.tidy = t);
    }

    /// `findOriginalFunctionName`: the name of the innermost original function around the
    /// generated position (`""` for one without a name), or None when none is known. Without
    /// generated ranges, the original scopes around where the map's mappings place it
    /// (`mapped`: the source's index and the place).
    pub(crate) fn function_name(
        &self,
        line: i64,
        column: i64,
        mapped: impl FnOnce() -> Option<(usize, Pos)>,
    ) -> Option<String> {
        let inner = if self.range_roots.is_empty() {
            let (source, at) = mapped()?;
            let root = (*self.source_roots.get(source)?)?;
            // `findOriginalScopeChain`'s innermost scope.
            innermost(&[root], at, |k| {
                let o = &self.originals[k];
                (o.start, o.end, &o.children[..], o.tidy)
            })?
        } else {
            // The innermost generated range around the position (`findGeneratedRangeChain`).
            let r = innermost(&self.range_roots, (line, column), |r| {
                let g = &self.ranges[r];
                (g.start, g.end, &g.children[..], g.tidy)
            })?;
            self.ranges[r].original?
        };
        let mut scope = Some(inner);
        while let Some(k) = scope {
            let o = &self.originals[k];
            if o.stack_frame {
                return Some(o.name.clone().unwrap_or_default());
            }
            scope = o.parent;
        }
        None
    }
}

/// The last node around `p` that a depth-first walk of the trees at `roots` meets (children in
/// order, into every node around `p`), as DevTools' recursive walks collect their chains.
/// `node` gives a node's start, end, children and whether they are tidy: then only the last
/// child starting at or before `p` can be around it (a bundle's top level has thousands).
fn innermost<'a>(roots: &[usize], p: Pos, node: impl Fn(usize) -> (Pos, Pos, &'a [usize], bool)) -> Option<usize> {
    let mut last = None;
    let mut todo: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(k) = todo.pop() {
        let (start, end, children, tidy) = node(k);
        if !range_contains(start, end, p) {
            continue;
        }
        last = Some(k);
        if tidy {
            let before = children.partition_point(|&c| node(c).0 <= p);
            todo.extend(before.checked_sub(1).map(|i| children[i]));
        } else {
            todo.extend(children.iter().rev());
        }
    }
    last
}

pub(super) fn cmp(a: Pos, b: Pos) -> std::cmp::Ordering {
    a.cmp(&b)
}

/// `contains`: start ≤ position < end.
pub(super) fn range_contains(start: Pos, end: Pos, p: Pos) -> bool {
    cmp(start, p).is_le() && cmp(p, end).is_lt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Bisecting tidy children finds the node DevTools' walk of every child finds: random
        /// trees of nested, adjacent, overlapping, empty and reversed ranges, often in order.
        #[test]
        fn bisection_finds_what_the_walk_finds(
            nodes in proptest::collection::vec((0usize..64, (0i64..3, 0i64..6), (0i64..3, 0i64..6)), 1..40),
            sort in any::<bool>(),
        ) {
            let mut info = ScopesInfo::default();
            for (k, &(parent, start, end)) in nodes.iter().enumerate() {
                info.ranges.push(Range::new(start, end, None));
                if k == 0 {
                    info.range_roots.push(0);
                } else {
                    info.ranges[parent % k].children.push(k);
                }
            }
            if sort {
                for k in 0..info.ranges.len() {
                    let mut c = std::mem::take(&mut info.ranges[k].children);
                    c.sort_by_key(|&c| info.ranges[c].start);
                    info.ranges[k].children = c;
                }
            }
            let walk = |info: &ScopesInfo, p: Pos| {
                innermost(&info.range_roots, p, |r| {
                    let g = &info.ranges[r];
                    (g.start, g.end, &g.children[..], g.tidy)
                })
            };
            let plain: Vec<_> = (0..3).flat_map(|l| (0..7).map(move |c| (l, c))).map(|p| walk(&info, p)).collect();
            info.index();
            let bisected: Vec<_> = (0..3).flat_map(|l| (0..7).map(move |c| (l, c))).map(|p| walk(&info, p)).collect();
            prop_assert_eq!(plain, bisected);
        }
    }
}
