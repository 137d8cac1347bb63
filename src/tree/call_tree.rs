//! Call trees built from stacks: top-down (callers at the roots) or inverted (the functions
//! that ran at the roots), and the flat list of functions. Every walk is iterative.

use rustc_hash::FxHashMap as HashMap;

use super::{Func, FuncId, StackId, Stacks};

/// A node of a [`CallTree`].
#[derive(Debug, Clone, PartialEq)]
pub struct CallNode {
    /// The function.
    pub func: FuncId,
    /// The parent node (None for a root).
    pub parent: Option<usize>,
    /// Weight of the samples at or below this node.
    pub total: f64,
    /// Weight of the samples on this node itself.
    pub self_weight: f64,
    /// Children, heaviest first (ties by function label, then id).
    pub children: Vec<usize>,
}

/// A call tree: CallNodes (paths of functions from a root) with their weights.
#[derive(Debug, Clone)]
pub struct CallTree {
    /// The nodes; roots are in [`CallTree::roots`].
    pub nodes: Vec<CallNode>,
    /// The roots, heaviest first.
    pub roots: Vec<usize>,
    /// Weight on no function at all (every frame merged away), charged to the root.
    pub root_self: f64,
    /// Σ weights.
    pub total: f64,
    /// Whether the tree is inverted (roots are the functions samples end in).
    pub inverted: bool,
}

impl CallTree {
    /// The top-down tree of `stacks`.
    pub fn top_down(stacks: &Stacks) -> CallTree {
        CallTree::build(stacks, false)
    }

    /// The inverted (bottom-up) tree: each sample's stack read from its last function to its
    /// first, so the roots are the functions with self weight, their children their callers.
    pub fn inverted(stacks: &Stacks) -> CallTree {
        CallTree::build(stacks, true)
    }

    fn build(stacks: &Stacks, inverted: bool) -> CallTree {
        let mut total = 0.0;
        let mut root_self = 0.0;
        // Each stack's own weight.
        let mut weight = vec![0.0; stacks.prefix.len()];
        for &(s, w) in &stacks.samples {
            total += w;
            if s == StackId::ROOT {
                root_self += w;
            } else {
                weight[s.index()] += w;
            }
        }
        // Summed in time order where the samples are one a stack (the same bits as above).
        if !stacks.samples.is_empty() {
            total = stacks.total_in_order.unwrap_or(total);
        }
        let (mut nodes, mut roots) =
            if inverted { inverted_nodes(stacks, &weight) } else { top_down_nodes(stacks, &weight) };
        // Totals from the leaves up: a node's index is above its parent's.
        for n in (0..nodes.len()).rev() {
            if let Some(p) = nodes[n].parent {
                nodes[p].total += nodes[n].total;
            }
        }
        if inverted {
            // A root's function is where its samples end: all of its weight is its own.
            for &r in &roots {
                nodes[r].self_weight = nodes[r].total;
            }
        }
        // Nodes no sample reaches (stacks of dropped samples) are left out of the children.
        let label: Vec<String> = stacks.funcs.iter().map(Func::label).collect();
        let order = |nodes: &Vec<CallNode>, list: &mut Vec<usize>| {
            list.retain(|&n| nodes[n].total != 0.0 || nodes[n].self_weight != 0.0);
            list.sort_by(|&a, &b| {
                nodes[b]
                    .total
                    .total_cmp(&nodes[a].total)
                    .then_with(|| label[nodes[a].func.index()].cmp(&label[nodes[b].func.index()]))
                    .then(nodes[a].func.cmp(&nodes[b].func))
            });
        };
        order(&nodes, &mut roots);
        for n in 0..nodes.len() {
            let mut c = std::mem::take(&mut nodes[n].children);
            order(&nodes, &mut c);
            nodes[n].children = c;
        }
        CallTree { nodes, roots, root_self, total, inverted }
    }

    /// The functions with their self and total weights (total counted once per sample, however
    /// often the function is on its stack), most self weight first: V8's "tick rank".
    pub fn functions(stacks: &Stacks) -> Vec<(FuncId, f64, f64)> {
        let n = stacks.prefix.len();
        let mut selfw = vec![0.0; stacks.funcs.len()];
        let mut totalw = vec![0.0; stacks.funcs.len()];
        // Each stack's weight, then its subtree's (children come after their parents).
        let mut below = vec![0.0; n];
        for &(s, w) in &stacks.samples {
            if s != StackId::ROOT {
                below[s.index()] += w;
                selfw[(stacks.prefix[s.index()].1).index()] += w;
            }
        }
        for x in (0..n).rev() {
            if let Some(p) = stacks.prefix[x].0 {
                below[p.index()] += below[x];
            }
        }
        // A function's total is the subtrees of its outermost stacks: a walk of the prefix tree
        // that counts how often each function is open, linear however deep the recursion.
        let mut first_child = vec![usize::MAX; n];
        let mut next_sibling = vec![usize::MAX; n];
        let mut roots = Vec::new();
        for x in (0..n).rev() {
            match stacks.prefix[x].0 {
                Some(p) => {
                    next_sibling[x] = first_child[p.index()];
                    first_child[p.index()] = x;
                }
                None => roots.push(x),
            }
        }
        let mut open = vec![0u32; stacks.funcs.len()];
        // (stack, entered): a stack is pushed to be entered, then again to be left.
        let mut todo: Vec<(usize, bool)> = roots.into_iter().map(|r| (r, false)).collect();
        while let Some((x, entered)) = todo.pop() {
            let f = stacks.prefix[x].1.index();
            if entered {
                open[f] -= 1;
                continue;
            }
            if open[f] == 0 {
                totalw[f] += below[x];
            }
            open[f] += 1;
            todo.push((x, true));
            let mut c = first_child[x];
            while c != usize::MAX {
                todo.push((c, false));
                c = next_sibling[c];
            }
        }
        let mut out: Vec<(FuncId, f64, f64)> = (0..stacks.funcs.len())
            .map(FuncId::new)
            .filter(|&f| totalw[f.index()] != 0.0)
            .map(|f| (f, selfw[f.index()], totalw[f.index()]))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.2.total_cmp(&a.2)).then(a.0.cmp(&b.0)));
        out
    }

    /// The node at `path` (functions from a root), if the tree has it.
    pub fn find(&self, path: &[FuncId]) -> Option<usize> {
        let (first, rest) = path.split_first()?;
        let mut n = *self.roots.iter().find(|&&r| self.nodes[r].func == *first)?;
        for f in rest {
            n = *self.nodes[n].children.iter().find(|&&c| self.nodes[c].func == *f)?;
        }
        Some(n)
    }

    /// Visits every node depth-first, children in order, with its depth (0 for a root);
    /// `enter` returns whether to visit the node's children.
    pub fn walk(&self, mut enter: impl FnMut(usize, usize) -> bool) {
        let mut stack: Vec<(usize, usize)> = self.roots.iter().rev().map(|&r| (r, 0)).collect();
        while let Some((n, d)) = stack.pop() {
            if enter(n, d) {
                stack.extend(self.nodes[n].children.iter().rev().map(|&c| (c, d + 1)));
            }
        }
    }
}

/// Adds a node without weight under `parent` (a root when None); returns its index.
fn add_node(nodes: &mut Vec<CallNode>, roots: &mut Vec<usize>, parent: Option<usize>, func: FuncId) -> usize {
    let n = nodes.len();
    nodes.push(CallNode { func, parent, total: 0.0, self_weight: 0.0, children: Vec::new() });
    match parent {
        Some(p) => {
            // Most nodes have one child: room for one, not the four a first push makes.
            let children = &mut nodes[p].children;
            if children.capacity() == 0 {
                children.reserve_exact(1);
            }
            children.push(n);
        }
        None => roots.push(n),
    }
    n
}

/// The top-down tree's nodes, each stack's weight on its own node (totals not yet summed).
fn top_down_nodes(stacks: &Stacks, weight: &[f64]) -> (Vec<CallNode>, Vec<usize>) {
    let mut nodes: Vec<CallNode> = Vec::new();
    let mut roots = Vec::new();
    let mut index: HashMap<(Option<usize>, FuncId), usize> = HashMap::default();
    // Parents come first, so each stack's node is made from its parent's.
    let mut node_of: Vec<usize> = Vec::with_capacity(stacks.prefix.len());
    for (s, &(parent, func)) in stacks.prefix.iter().enumerate() {
        let p = parent.map(|p| node_of[p.index()]);
        let n = *index.entry((p, func)).or_insert_with(|| add_node(&mut nodes, &mut roots, p, func));
        nodes[n].total += weight[s];
        nodes[n].self_weight += weight[s];
        node_of.push(n);
    }
    (nodes, roots)
}

/// The inverted tree's nodes: the trie of the weighted stacks' paths read from their last
/// function up, each path's weight at its end (totals not yet summed).
///
/// Inserting each path frame by frame costs the sum of the stacks' depths, quadratic in a deep
/// recursion with time at every level. Instead the stacks are sorted by their upward paths
/// (prefix doubling: the rank of a path's first 2k functions from the ranks of the first k of
/// the stack and of its k-th ancestor) and the trie is built from that order, each stack adding
/// only what it does not share with the one before: O(n log depth + the tree's size).
fn inverted_nodes(stacks: &Stacks, weight: &[f64]) -> (Vec<CallNode>, Vec<usize>) {
    const NONE: u32 = u32::MAX;
    let n = stacks.prefix.len();
    let depth = stacks.depths();
    let max_depth = depth.iter().copied().max().unwrap_or(0);
    // Level j: rank[j][s] orders the stacks by the first 2^j functions of their upward paths
    // (0 past the root, so a path sorts before its extensions); up[j][s] is the 2^j-th ancestor.
    let mut rank: Vec<Vec<u32>> = vec![stacks.prefix.iter().map(|&(_, f)| f.0 + 1).collect()];
    let mut up: Vec<Vec<u32>> = vec![stacks.prefix.iter().map(|&(p, _)| p.map_or(NONE, |p| p.0)).collect()];
    let mut keyed: Vec<(u64, u32)> = Vec::with_capacity(n);
    while (1u64 << (rank.len() - 1)) < max_depth as u64 {
        let (r, u) = (rank.last().unwrap(), up.last().unwrap());
        keyed.clear();
        keyed.extend((0..n).map(|s| {
            let next = if u[s] == NONE { 0 } else { r[u[s] as usize] };
            ((r[s] as u64) << 32 | next as u64, s as u32)
        }));
        keyed.sort_unstable();
        let mut next_rank = vec![0u32; n];
        let mut distinct = 0;
        for (i, &(key, s)) in keyed.iter().enumerate() {
            if i == 0 || key != keyed[i - 1].0 {
                distinct += 1;
            }
            next_rank[s as usize] = distinct;
        }
        let next_up = (0..n).map(|s| if u[s] == NONE { NONE } else { u[u[s] as usize] }).collect();
        rank.push(next_rank);
        up.push(next_up);
        if distinct as usize == n {
            // Every path told apart: longer prefixes change no order.
            break;
        }
    }
    let top = rank.len() - 1;
    let mut order: Vec<u32> = (0..n as u32).filter(|&s| weight[s as usize] != 0.0).collect();
    order.sort_unstable_by_key(|&s| rank[top][s as usize]);
    // The `len`-th ancestor of `s` (NONE past the root); `len` < 2^top.
    let ancestor = |mut s: u32, len: u32| {
        for j in (0..top).rev() {
            if s != NONE && len & (1 << j) != 0 {
                s = up[j][s as usize];
            }
        }
        s
    };
    // How many functions two different stacks' upward paths share.
    let shared = |mut a: u32, mut b: u32| {
        // The first path shares nothing with the none before it.
        if a == NONE {
            return 0;
        }
        let mut len = 0u32;
        for j in (0..top).rev() {
            if a != NONE && b != NONE && rank[j][a as usize] == rank[j][b as usize] {
                len += 1 << j;
                a = up[j][a as usize];
                b = up[j][b as usize];
            }
        }
        len
    };
    // How much of each path the one before it made, so that the nodes are counted first:
    // made into a vector of their exact size, with no copy of it half made beside it.
    let keeps: Vec<u32> = order.iter().scan(NONE, |prev, &s| Some(shared(std::mem::replace(prev, s), s))).collect();
    let count = order.iter().zip(&keeps).map(|(&s, &keep)| (depth[s as usize] - keep) as usize).sum();
    let mut nodes: Vec<CallNode> = Vec::with_capacity(count);
    let mut roots = Vec::new();
    // The previous path's nodes, from its root.
    let mut path: Vec<usize> = Vec::new();
    for (s, keep) in order.into_iter().zip(keeps) {
        path.truncate(keep as usize);
        let mut x = ancestor(s, keep);
        while x != NONE {
            let (parent, func) = stacks.prefix[x as usize];
            let n = add_node(&mut nodes, &mut roots, path.last().copied(), func);
            path.push(n);
            x = parent.map_or(NONE, |p| p.0);
        }
        nodes[*path.last().unwrap()].total += weight[s as usize];
    }
    (nodes, roots)
}
