//! DevTools' fallback for a map without scope data: the generated script's function and block
//! scopes, as its formatter worker's `ScopeParser` finds them (with acorn; here with oxc's
//! parser, the same spans), made into original scopes through the mappings
//! (`SourceMapScopesInfo.createFromAst`), and the innermost function around a position named
//! from them (`findOriginalFunctionName`).

use oxc_allocator::Allocator;
use oxc_ast::ast::{
    ArrowFunctionExpression, AssignmentTargetPropertyIdentifier, BlockStatement, CatchClause, Expression,
    ForInStatement, ForOfStatement, ForStatement, Function, MethodDefinition, ObjectProperty, PropertyKey,
};
use oxc_ast_visit::{walk, Visit};
use oxc_span::{GetSpan, SourceType};
use oxc_syntax::scope::ScopeFlags;

use super::info::{cmp, Original, Range, ScopesInfo};
use super::map::SourceMap;
use super::text::Lines;

/// What a scope is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Global,
    Function,
    Arrow,
    Block,
}

/// A scope of the generated script (byte offsets into its text).
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    start: u32,
    end: u32,
    kind: Kind,
    name: Option<String>,
    /// Where a named mapping may name the function (its identifier, `(`, `=>`).
    name_at: Vec<u32>,
    /// The scope it is in (the global scope's is [`NO_SCOPE`]): scopes are numbered in the
    /// order they are entered, a parent before its children, siblings in the text's order.
    parent: usize,
}

/// The parent of the global scope.
const NO_SCOPE: usize = usize::MAX;

/// Brackets nested deeper than this are not parsed (the parser recurses per level); DevTools'
/// own parser stops near 10,000 levels of its stack. Real scripts stay under a hundred.
pub(crate) const MAX_NESTING: usize = 1000;

/// The deepest nesting of brackets in `text` (strings and comments counted too: an upper
/// bound of the syntax's).
fn nesting(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for &b in text.as_bytes() {
        step(b, &mut depth, &mut max);
    }
    max
}

/// One byte's part in [`nesting`]: the depth it leaves and the deepest so far.
fn step(b: u8, depth: &mut usize, max: &mut usize) {
    match b {
        b'(' | b'[' | b'{' => {
            *depth += 1;
            *max = (*max).max(*depth);
        }
        b')' | b']' | b'}' => *depth = depth.saturating_sub(1),
        _ => {}
    }
}

/// [`nesting`] when it is over `limit`, else None; in blocks of 64 bytes, each counted at
/// once where it can neither pass the limit nor close more than is open (a byte at a time
/// cost 14 ms on a 3.5 MB bundle, on the parse's critical path).
fn nesting_over(text: &str, limit: usize) -> Option<usize> {
    let (mut depth, mut max) = (0usize, 0usize);
    let blocks = text.as_bytes().chunks_exact(64);
    let tail = blocks.remainder();
    for block in blocks {
        let (mut opens, mut closes) = (0u8, 0u8);
        for &b in block {
            opens += u8::from(b == b'(') + u8::from(b == b'[') + u8::from(b == b'{');
            closes += u8::from(b == b')') + u8::from(b == b']') + u8::from(b == b'}');
        }
        if depth + usize::from(opens) <= limit && depth >= usize::from(closes) {
            depth = depth + usize::from(opens) - usize::from(closes);
        } else {
            block.iter().for_each(|&b| step(b, &mut depth, &mut max));
        }
    }
    tail.iter().for_each(|&b| step(b, &mut depth, &mut max));
    // The blocks counted at once stayed within the limit: only an exact count can tell by
    // how much it was passed.
    (max > limit).then(|| nesting(text))
}

/// `ScopeParser.parseScopes`: the scopes of `text` in pre-order (0 the whole script), or None
/// when it does not parse.
/// The stack the parse needs: the parser and the walk recurse once per level of nesting (at
/// most [`MAX_NESTING`]).
pub(crate) const PARSE_STACK: usize = 64 << 20;

#[cfg(test)]
fn parse_scopes(text: &str, module: bool) -> Option<Vec<Scope>> {
    crate::parallel::on_stack(PARSE_STACK, || generated(text, module).ok()).flatten()
}

/// A script's own scopes, in its text's positions, as DevTools' formatter finds them; an
/// error says why not (None: it does not parse). To be run on a stack of [`PARSE_STACK`].
pub(crate) fn generated(text: &str, module: bool) -> Result<Vec<Scope>, Option<String>> {
    let mut all = Vec::new();
    generated_each(text, module, &mut |mut some| all.append(&mut some)).map(|()| all)
}

/// [`generated`], the scopes handed to `each` a few at a time, in order, as they are found
/// (none when the text does not parse).
pub(crate) fn generated_each(text: &str, module: bool, each: &mut dyn FnMut(Vec<Scope>)) -> Result<(), Option<String>> {
    if let Some(deepest) = nesting_over(text, MAX_NESTING) {
        return Err(Some(format!(
            "its script nests brackets {deepest} deep (over {MAX_NESTING}): its functions are named by the mappings alone"
        )));
    }
    parse_scopes_here(text, module, each).ok_or(None)
}

/// Scopes handed out at a time by [`generated_each`].
const SCOPES_AT_ONCE: usize = 512;

fn parse_scopes_here(text: &str, module: bool, each: &mut dyn FnMut(Vec<Scope>)) -> Option<()> {
    let allocator = Allocator::default();
    let source_type = if module { SourceType::mjs() } else { SourceType::cjs() };
    let options = oxc_parser::ParseOptions { preserve_parens: false, ..oxc_parser::ParseOptions::default() };
    let ret = oxc_parser::Parser::new(&allocator, text, source_type).with_options(options).parse();
    // A classic script with imports, exports or `import.meta` does not parse for acorn.
    if ret.panicked || !ret.errors.is_empty() || (!module && ret.module_record.has_module_syntax) {
        return None;
    }
    let root = Scope {
        start: 0,
        end: text.len() as u32,
        kind: Kind::Global,
        name: None,
        name_at: Vec::new(),
        parent: NO_SCOPE,
    };
    let mut v = Scopes { text: text.as_bytes(), scopes: vec![root], count: 1, open: vec![0], method: None, each };
    v.visit_program(&ret.program);
    if !v.scopes.is_empty() {
        (v.each)(v.scopes);
    }
    Some(())
}

struct Scopes<'t> {
    text: &'t [u8],
    /// The scopes found and not yet handed out, and how many were found.
    scopes: Vec<Scope>,
    count: usize,
    each: &'t mut dyn FnMut(Vec<Scope>),
    /// The scopes entered and not left.
    open: Vec<usize>,
    /// A method's or property's name and key offset, for the function that is its value.
    method: Option<(Option<String>, Vec<u32>)>,
}

impl Scopes<'_> {
    fn push(&mut self, start: u32, end: u32, kind: Kind, name: Option<String>, name_at: Vec<u32>) {
        let k = self.count;
        let parent = *self.open.last().expect("the global scope stays open");
        if self.scopes.len() == SCOPES_AT_ONCE {
            (self.each)(std::mem::replace(&mut self.scopes, Vec::with_capacity(SCOPES_AT_ONCE)));
        }
        self.scopes.push(Scope { start, end, kind, name, name_at, parent });
        self.count += 1;
        self.open.push(k);
    }

    fn pop(&mut self) {
        self.open.pop();
    }

    /// A block scope over `span` around what `walk` visits.
    fn block(&mut self, span: oxc_span::Span, walk: impl FnOnce(&mut Self)) {
        self.push(span.start, span.end, Kind::Block, None, Vec::new());
        walk(self);
        self.pop();
    }

    /// `indexOfCharInBounds`.
    fn find(&self, c: u8, from: u32, to: u32) -> Option<u32> {
        (from..to).find(|&i| self.text.get(i as usize) == Some(&c))
    }
}

/// The name a method's key gives its function (`#x` for a private one).
fn key_name(key: &PropertyKey<'_>) -> (Option<String>, Vec<u32>) {
    match key {
        PropertyKey::StaticIdentifier(id) => (Some(id.name.to_string()), vec![id.span.start]),
        PropertyKey::PrivateIdentifier(id) => (Some(format!("#{}", id.name)), vec![id.span.start]),
        _ => (None, Vec::new()),
    }
}

impl<'a> Visit<'a> for Scopes<'_> {
    fn visit_function(&mut self, it: &Function<'a>, flags: ScopeFlags) {
        let method = self.method.take();
        let params_start =
            it.params.items.first().map(|p| p.span.start).or_else(|| it.params.rest.as_ref().map(|r| r.span.start));
        let body_start = it.body.as_ref().map_or(it.span.end, |b| b.span.start);
        let until = params_start.unwrap_or(body_start);
        let start = it.id.as_ref().map_or(it.span.start, |id| id.span.end);
        let (name, mut name_at) = if it.is_declaration() {
            (it.id.as_ref().map(|id| id.name.to_string()), Vec::new())
        } else {
            match method {
                Some((n, at)) => (n, at),
                None => (it.id.as_ref().map(|id| id.name.to_string()), Vec::new()),
            }
        };
        if let Some(id) = &it.id {
            name_at.push(id.span.start);
        }
        if let Some(p) = self.find(b'(', it.id.as_ref().map_or(it.span.start, |id| id.span.end), until) {
            name_at.push(p);
        }
        self.push(start, it.span.end, Kind::Function, name, name_at);
        walk::walk_function(self, it, flags);
        self.pop();
    }

    fn visit_arrow_function_expression(&mut self, it: &ArrowFunctionExpression<'a>) {
        self.method = None;
        let mut name_at = Vec::new();
        let first =
            it.params.items.first().map(|p| p.span.start).or_else(|| it.params.rest.as_ref().map(|r| r.span.start));
        let last = it.params.rest.as_ref().map(|r| r.span.end).or_else(|| it.params.items.last().map(|p| p.span.end));
        let from = if it.r#async { it.span.start + 5 } else { it.span.start };
        if let Some(p) = self.find(b'(', from, first.unwrap_or(it.body.span().start)) {
            name_at.push(p);
        }
        if let Some(p) = self.find(b'=', last.unwrap_or(it.span.start), it.body.span().start) {
            if self.text.get(p as usize + 1) == Some(&b'>') {
                name_at.push(p);
            }
        }
        self.push(it.span.start, it.span.end, Kind::Arrow, None, name_at);
        walk::walk_arrow_function_expression(self, it);
        self.pop();
    }

    fn visit_method_definition(&mut self, it: &MethodDefinition<'a>) {
        if it.computed {
            self.visit_property_key(&it.key);
            self.method = None;
        } else {
            self.method = Some(key_name(&it.key));
        }
        self.visit_function(&it.value, ScopeFlags::Function);
    }

    fn visit_object_property(&mut self, it: &ObjectProperty<'a>) {
        if it.shorthand {
            return;
        }
        if it.computed {
            self.visit_property_key(&it.key);
        } else if matches!(it.value, Expression::FunctionExpression(_)) {
            self.method = Some(key_name(&it.key));
        }
        self.visit_expression(&it.value);
    }

    fn visit_block_statement(&mut self, it: &BlockStatement<'a>) {
        self.block(it.span, |v| walk::walk_block_statement(v, it));
    }

    fn visit_catch_clause(&mut self, it: &CatchClause<'a>) {
        self.block(it.span, |v| walk::walk_catch_clause(v, it));
    }

    fn visit_for_statement(&mut self, it: &ForStatement<'a>) {
        self.block(it.span, |v| walk::walk_for_statement(v, it));
    }

    fn visit_for_in_statement(&mut self, it: &ForInStatement<'a>) {
        self.block(it.span, |v| walk::walk_for_in_statement(v, it));
    }

    fn visit_for_of_statement(&mut self, it: &ForOfStatement<'a>) {
        self.block(it.span, |v| walk::walk_for_of_statement(v, it));
    }

    // What ScopeParser does not look into: a shorthand property's default in an assignment
    // pattern, static blocks, accessor properties, `import()`, imports and exports.
    fn visit_assignment_target_property_identifier(&mut self, _: &AssignmentTargetPropertyIdentifier<'a>) {}
    fn visit_static_block(&mut self, _: &oxc_ast::ast::StaticBlock<'a>) {}
    fn visit_accessor_property(&mut self, _: &oxc_ast::ast::AccessorProperty<'a>) {}
    fn visit_import_expression(&mut self, _: &oxc_ast::ast::ImportExpression<'a>) {}
    fn visit_import_declaration(&mut self, _: &oxc_ast::ast::ImportDeclaration<'a>) {}
    fn visit_export_named_declaration(&mut self, _: &oxc_ast::ast::ExportNamedDeclaration<'a>) {}
    fn visit_export_default_declaration(&mut self, _: &oxc_ast::ast::ExportDefaultDeclaration<'a>) {}
    fn visit_export_all_declaration(&mut self, _: &oxc_ast::ast::ExportAllDeclaration<'a>) {}
}

impl ScopesInfo {
    /// `createFromAst` for `map` and the generated `text`; Err when the text does not parse
    /// (as for DevTools: None), or is nested too deeply to be parsed here (Some: why).
    pub(crate) fn new(map: &SourceMap, text: &str, lines: &Lines, module: bool) -> Result<ScopesInfo, Option<String>> {
        let scopes = crate::parallel::on_stack(PARSE_STACK, || generated(text, module)).unwrap_or(Err(None))?;
        Ok(ScopesInfo::of(map, lines, &scopes))
    }

    /// The scopes of a script whose own scopes ([`generated`]) are `scopes`, made original
    /// through `map`.
    pub(crate) fn of(map: &SourceMap, lines: &Lines, scopes: &[Scope]) -> ScopesInfo {
        let mut o = Originals::new(map, lines);
        for s in scopes {
            o.add(s);
        }
        o.finish()
    }
}

/// [`ScopesInfo::of`] made a generated scope at a time, in their order (each after its
/// parent): while the script's scopes are still being found.
pub(crate) struct Originals<'m> {
    map: &'m SourceMap,
    lines: &'m Lines,
    n_urls: usize,
    originals: Vec<Original>,
    ranges: Vec<Range>,
    /// Per scope added: its range, and the original scope its children's are searched from.
    added: Vec<(usize, Option<usize>)>,
    /// Scopes come in the order of their starts: each start's mapping is searched from the
    /// last one's, an end's and a name's from their start's.
    near_start: usize,
}

impl<'m> Originals<'m> {
    pub(crate) fn new(map: &'m SourceMap, lines: &'m Lines) -> Originals<'m> {
        let n_urls = map.source_urls().len();
        Originals {
            map,
            lines,
            n_urls,
            // One root per source, over all of it.
            originals: (0..n_urls).map(|_| Original::new((0, 0), (i64::MAX, i64::MAX))).collect(),
            ranges: Vec::new(),
            added: Vec::new(),
            near_start: 0,
        }
    }

    /// Adds the next generated scope (its parent added before it).
    pub(crate) fn add(&mut self, s: &Scope) {
        let (map, lines, n_urls) = (self.map, self.lines, self.n_urls);
        let (parent_range, hint) = self.added.get(s.parent).map_or((None, None), |&(r, h)| (Some(r), h));
        let (start, end) = (lines.pos(s.start), lines.pos(s.end));
        let se = map.find_entry_near(&mut self.near_start, start.0, start.1);
        let mut near_end = self.near_start;
        let ee = map.find_entry_near(&mut near_end, end.0, end.1);
        let source = se.and_then(|e| map.source_index(e));
        let mappable = match (se, ee, source) {
            (Some(_), Some(e), Some(k)) => map.source_index(e) == Some(k) && k < n_urls,
            _ => false,
        };
        let stack_frame = matches!(s.kind, Kind::Function | Kind::Arrow);
        let name = s
            .name_at
            .iter()
            .find_map(|&at| {
                let ((l, c), mut near) = (lines.pos(at), self.near_start);
                map.find_entry_near(&mut near, l, c)
                    .filter(|e| (e.line(), e.column()) == (l, c))
                    .and_then(|e| map.name(e).map(str::to_owned))
            })
            .or_else(|| s.name.clone());
        let originals = &mut self.originals;
        let mut scope = None;
        if mappable {
            let (se, ee) = (se.expect("mappable"), ee.expect("mappable"));
            let k = originals.len();
            originals.push(Original {
                name,
                stack_frame,
                ..Original::new((se.source_line(), se.source_column()), (ee.source_line(), ee.source_column()))
            });
            scope = Some(k);
        }
        let r = self.ranges.len();
        self.ranges.push(Range::new(start, end, scope));
        if let Some(p) = parent_range {
            self.ranges[p].children.push(r);
        }
        let mut next_hint = hint;
        if let (Some(k), Some(source)) = (scope, source) {
            let from = match hint {
                Some(h) if contains_original(&originals[h], &originals[k]) => h,
                _ => source,
            };
            insert_in_scope(originals, from, k);
            next_hint = Some(k);
        }
        self.added.push((r, next_hint));
    }

    pub(crate) fn finish(self) -> ScopesInfo {
        let range_roots = if self.ranges.is_empty() { Vec::new() } else { vec![0] };
        let source_roots = (0..self.n_urls).map(Some).collect();
        let mut info = ScopesInfo { originals: self.originals, ranges: self.ranges, source_roots, range_roots };
        info.index();
        info
    }
}

fn contains_original(outer: &Original, inner: &Original) -> bool {
    cmp(outer.start, inner.start).is_le() && cmp(outer.end, inner.end).is_ge()
}

/// `insertInScope`: `new` placed under the deepest scope of `root`'s tree that holds it, taking
/// over the children it holds, in order of their starts. The first child that holds a scope
/// is found by bisection while a scope's children are tidy (sorted, none overlapping the
/// next), else by DevTools' own scan: the same scope either way, without its quadratic cost
/// on the thousands of top-level functions of a large bundle.
fn insert_in_scope(originals: &mut [Original], root: usize, new: usize) {
    let mut parent = root;
    while let Some(deeper) = first_holder(originals, parent, new) {
        parent = deeper;
    }
    let mut children = std::mem::take(&mut originals[parent].children);
    let tidy = originals[parent].tidy;
    if tidy {
        // Held children: those starting at or after it (a suffix) that end by its end (a
        // prefix, the ends being sorted too). Changed in place: a bundle's scopes mostly come
        // in order, and a copy of its thousands of top-level scopes per insertion was most of
        // the work.
        let n = &originals[new];
        let lo = children.partition_point(|&c| cmp(originals[c].start, n.start).is_lt());
        let hi = lo + children[lo..].partition_point(|&c| cmp(originals[c].end, n.end).is_le());
        for c in children.drain(lo..hi) {
            originals[new].children.push(c);
            originals[c].parent = Some(new);
        }
    } else {
        let mut keep = Vec::with_capacity(children.len() + 1);
        for c in children {
            if contains_original(&originals[new], &originals[c]) {
                originals[new].children.push(c);
                originals[c].parent = Some(new);
                // Taken from an untidy list: no longer known to be in order.
                originals[new].tidy = false;
            } else {
                keep.push(c);
            }
        }
        children = keep;
    }
    let keep = &children;
    let at = if tidy {
        keep.partition_point(|&c| !cmp(originals[new].start, originals[c].start).is_lt())
    } else {
        keep.iter().position(|&c| cmp(originals[new].start, originals[c].start).is_lt()).unwrap_or(keep.len())
    };
    // Still tidy when it fits between its neighbours (and does not end before it starts).
    let fits = cmp(originals[new].start, originals[new].end).is_le()
        && at.checked_sub(1).is_none_or(|p| cmp(originals[keep[p]].end, originals[new].start).is_le())
        && keep.get(at).is_none_or(|&nx| cmp(originals[new].end, originals[nx].start).is_le());
    children.insert(at, new);
    originals[parent].tidy &= fits;
    originals[parent].children = children;
    originals[new].parent = Some(parent);
}

/// The first child of `parent` that holds `new` (`containsOriginal`).
fn first_holder(originals: &[Original], parent: usize, new: usize) -> Option<usize> {
    let children = &originals[parent].children;
    let n = &originals[new];
    if !originals[parent].tidy {
        return children.iter().copied().find(|&c| contains_original(&originals[c], n));
    }
    // Only a child starting at or before it can hold it; walking back from the last such,
    // the ends only shrink: stop at the first that ends before it.
    let mut k = children.partition_point(|&c| cmp(originals[c].start, n.start).is_le());
    let mut found = None;
    while k > 0 && cmp(originals[children[k - 1]].end, n.end).is_ge() {
        k -= 1;
        if contains_original(&originals[children[k]], n) {
            found = Some(children[k]);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each scope as `kind start-end name [name mapping places]`, positions as line:column.
    fn dump(text: &str) -> String {
        let scopes = parse_scopes(text, false).expect("it parses");
        let lines = Lines::new(text);
        let at = |b: u32| {
            let (l, c) = lines.pos(b);
            format!("{l}:{c}")
        };
        // Depth first, from each scope's children: the order they are numbered in.
        let mut children = vec![Vec::new(); scopes.len()];
        for (k, x) in scopes.iter().enumerate().skip(1) {
            children[x.parent].push(k);
        }
        let (mut out, mut todo, mut seen) = (String::new(), vec![0], 0);
        while let Some(k) = todo.pop() {
            assert_eq!(k, seen, "scopes are numbered depth first");
            seen += 1;
            let x = &scopes[k];
            let places: Vec<String> = x.name_at.iter().map(|&b| at(b)).collect();
            let name = x.name.as_ref().map_or("None".to_owned(), |n| format!("Some({n:?})"));
            out.push_str(&format!("{:?} {}-{} {name} [{}]\n", x.kind, at(x.start), at(x.end), places.join(",")));
            todo.extend(children[k].iter().rev());
        }
        out
    }

    /// DevTools' own `ScopeParser.parseScopes` on this script (run in Node): methods named by
    /// their keys (a private one with `#`, a string key not), a named function expression by
    /// its name, arrows by `(` and `=>`, catch and loop blocks; a static block and an arrow in
    /// a shorthand property's default of an assignment pattern not looked into.
    #[test]
    fn scopes_are_devtools_scopes() {
        let text = r##"function outer(a, b = () => 1) {
  const o = { m() { return 1; }, get g() { return 2; }, 'q': function () {}, n: async (x) => x, [k]: function named() {} };
  class C { constructor() {} #p() {} static { (() => 0)(); } f = function () {}; }
  try { for (const x of y) { z(); } } catch (e) { ({ a = () => 2 } = e); }
  return async x => { for (;;) {} };
}
"##;
        let want = r##"Global 0:0-6:0 None []
Function 0:14-5:1 Some("outer") [0:9,0:14]
Arrow 0:22-0:29 None [0:22,0:25]
Function 1:15-1:31 Some("m") [1:14,1:15]
Function 1:38-1:54 Some("g") [1:37,1:38]
Function 1:61-1:75 None [1:70]
Arrow 1:80-1:94 None [1:86,1:90]
Function 1:115-1:120 Some("named") [1:110,1:115]
Function 2:23-2:28 Some("constructor") [2:12,2:23]
Function 2:31-2:36 Some("#p") [2:29,2:31]
Function 2:65-2:79 None [2:74]
Block 3:6-3:37 None []
Block 3:8-3:35 None []
Block 3:27-3:35 None []
Block 3:38-3:74 None []
Block 3:48-3:74 None []
Arrow 4:9-4:35 None [4:17]
Block 4:22-4:33 None []
Block 4:31-4:33 None []"##;
        assert_eq!(dump(text).trim_end(), want);
    }

    /// Nesting past the limit is refused before the parser recurses into it; up to it, the
    /// parse runs on a stack of its own, whatever the caller's.
    #[test]
    fn deep_nesting_is_refused_not_a_crash() {
        let n = MAX_NESTING;
        let text = format!("{}{}", "function f(){".repeat(n), "}".repeat(n));
        assert_eq!(parse_scopes(&text, false).map(|s| s.len()), Some(n + 1));
        let text = format!("{}1{}", "(".repeat(50_000), ")".repeat(50_000));
        assert_eq!(nesting(&text), 50_000);
        assert_eq!(nesting_over(&text, MAX_NESTING), Some(50_000));
    }

    proptest::proptest! {
        /// Counted a block at a time, the same as a byte at a time, at and around the limit.
        #[test]
        fn nesting_counted_in_blocks_is_exact(
            opened in 0usize..100,
            // Runs of one kind too: a block that closes more than is open saturates at 0.
            parts in proptest::collection::vec(
                proptest::sample::select(&["(", "[", "{", ")", "]", "}", "aaaaa", "((((((((((", "}}}}}}}}}}"][..]),
                0..1000,
            ),
        ) {
            let text = format!("{}{}", "{".repeat(opened), parts.concat());
            let exact = nesting(&text);
            for limit in exact.saturating_sub(3)..=exact + 3 {
                proptest::prop_assert_eq!(nesting_over(&text, limit), (exact > limit).then_some(exact));
            }
        }
    }

    /// A script that does not parse has no scopes (DevTools then names by the mapping alone).
    #[test]
    fn a_script_that_does_not_parse_has_none() {
        assert!(parse_scopes("function (", false).is_none());
        assert!(parse_scopes("export const a = 1;", false).is_none());
        assert!(parse_scopes("export const a = 1;", true).is_some());
    }

    /// DevTools' `insertInScope` as written: a scan of every child at every step.
    fn insert_as_devtools(originals: &mut [Original], root: usize, new: usize) {
        let mut parent = root;
        while let Some(&d) =
            originals[parent].children.iter().find(|&&c| contains_original(&originals[c], &originals[new]))
        {
            parent = d;
        }
        let children = std::mem::take(&mut originals[parent].children);
        let mut keep = Vec::new();
        for c in children {
            if contains_original(&originals[new], &originals[c]) {
                originals[new].children.push(c);
                originals[c].parent = Some(new);
            } else {
                keep.push(c);
            }
        }
        let at = keep.iter().position(|&c| cmp(originals[new].start, originals[c].start).is_lt()).unwrap_or(keep.len());
        keep.insert(at, new);
        originals[parent].children = keep;
        originals[new].parent = Some(parent);
    }

    /// The bisection of tidy children builds the same trees as DevTools' scans: random
    /// scopes (nested, adjacent, overlapping, empty, reversed, repeated), inserted in random
    /// order under random hints.
    #[test]
    fn tidy_insertion_builds_devtools_trees() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: i64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as i64
        };
        for round in 0..2000 {
            let n = 1 + next(40) as usize;
            let root = || Original::new((0, 0), (i64::MAX, i64::MAX));
            let (mut a, mut b) = (vec![root()], vec![root()]);
            for k in 1..=n {
                let (l1, c1) = (next(6), next(8));
                let (l2, c2) = if next(10) == 0 { (next(6), next(8)) } else { (l1 + next(3), c1 + next(8)) };
                let scope = || Original::new((l1, c1), (l2, c2));
                a.push(scope());
                b.push(scope());
                let hint = next(k as i64) as usize;
                let from = if contains_original(&a[hint], &a[k]) { hint } else { 0 };
                insert_in_scope(&mut a, from, k);
                insert_as_devtools(&mut b, from, k);
            }
            for k in 0..=n {
                assert_eq!((a[k].parent, &a[k].children), (b[k].parent, &b[k].children), "round {round}, scope {k}");
            }
        }
    }
}
