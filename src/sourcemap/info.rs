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
    /// Whether the children are sorted by start, none ends before it starts, and each ends
    /// where or before the next starts: then the one that may hold a scope is found by
    /// bisection.
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
            innermost(&[root], at, |k| (self.originals[k].start, self.originals[k].end, &self.originals[k].children))?
        } else {
            // The innermost generated range around the position (`findGeneratedRangeChain`).
            let r = innermost(&self.range_roots, (line, column), |r| {
                (self.ranges[r].start, self.ranges[r].end, &self.ranges[r].children)
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
fn innermost<'a>(roots: &[usize], p: Pos, node: impl Fn(usize) -> (Pos, Pos, &'a Vec<usize>)) -> Option<usize> {
    let mut last = None;
    let mut todo: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(k) = todo.pop() {
        let (start, end, children) = node(k);
        if !range_contains(start, end, p) {
            continue;
        }
        last = Some(k);
        todo.extend(children.iter().rev());
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
