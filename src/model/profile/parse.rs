//! The protocol's node tree parsed as DevTools parses it: a depth-first walk from the root,
//! children from `children` or else from `parent`, guarded against cycles and depth; and the
//! meta nodes (garbage collector, program, idle).

use super::{CallFrame, FrameKeys, IdMap, Limits, Node, RawNode, NONE};
use crate::error::Error;
use crate::input::leaf::UNKNOWN_ID;
use crate::js::Scalar;
use crate::strings::Strings;

/// The parsed tree: the protocol's nodes walked depth first from the root.
pub(super) struct ParsedTree {
    pub(super) nodes: Vec<Node>,
    /// Per frame, whether it is native (`url === "native V8Runtime"`).
    pub(super) native_frames: Vec<bool>,
    pub(super) id_to_node: IdMap,
    /// The root's parsed children, in the walk's order.
    pub(super) root_children: Vec<u32>,
    pub(super) n_shared: u64,
    pub(super) n_duplicate_ids: u64,
    pub(super) n_unreachable: u64,
}

impl ParsedTree {
    /// The walk, with an explicit stack (children popped from the end); children come from the
    /// `parent` fields when the first node has no `children`.
    pub(super) fn new(
        nodes: &[RawNode],
        frames: &[CallFrame],
        strings: &Strings,
        limits: Limits,
        fail: &impl Fn(String) -> Error,
    ) -> Result<ParsedTree, Error> {
        let mut by_id = IdMap::for_ids(nodes.iter().map(|n| n.id), nodes.len());
        let mut n_duplicate_ids = 0u64;
        for (i, n) in nodes.iter().enumerate() {
            if by_id.insert(n.id, i as u32).is_some() {
                n_duplicate_ids += 1;
            }
        }
        let children = Children::new(nodes, &by_id);

        let url_native = strings.lookup("native V8Runtime").map(Scalar::Str);
        // Per frame: its key for framesAreEqual (NEVER_EQUAL for a frame never equal).
        let mut keys = FrameKeys::default();
        let frame_keys: Vec<u32> = frames.iter().map(|f| keys.key(f)).collect();
        drop(keys);
        let native_frames = frames.iter().map(|f| Some(f.url) == url_native).collect();
        let make = |raw: &RawNode, parent: u32, depth: i32| Node {
            id: raw.id,
            parent,
            depth,
            frame: raw.frame,
            frame_key: frame_keys[raw.frame as usize],
        };
        let mut parsed: Vec<Node> = Vec::with_capacity(nodes.len());
        parsed.push(make(&nodes[0], NONE, -1));
        let mut id_to_node = IdMap::for_ids(nodes.iter().map(|n| n.id), nodes.len());
        id_to_node.insert(nodes[0].id, 0);
        let mut root_children: Vec<u32> = Vec::new();
        let mut stack: Vec<(u32, Option<u32>)> = Vec::new();
        for &id in children.of(0) {
            stack.push((0, by_id.get(id)));
        }
        let cap = nodes.len() as u64 + limits.max_extra_nodes;
        let mut seen = vec![false; nodes.len()];
        let mut n_shared = 0u64;
        while let Some((parent, src)) = stack.pop() {
            let Some(src) = src else { continue };
            let src = src as usize;
            let depth = parsed[parent as usize].depth + 1;
            if depth as i64 >= limits.max_depth as i64 {
                // A cycle also grows without end; name it when that is the cause.
                let why = cycle_message(nodes, &children, &by_id);
                if why.contains("its own ancestor") {
                    return Err(fail(why));
                }
                return Err(fail(format!(
                    "the node tree is deeper than the limit of {} frames (raise it with --max-depth)",
                    limits.max_depth
                )));
            }
            if parsed.len() as u64 >= cap {
                return Err(fail(cycle_message(nodes, &children, &by_id)));
            }
            if seen[src] {
                n_shared += 1;
            }
            seen[src] = true;
            let idx = parsed.len() as u32;
            parsed.push(make(&nodes[src], parent, depth));
            if parent == 0 {
                root_children.push(idx);
            }
            id_to_node.insert(nodes[src].id, idx);
            for &id in children.of(src) {
                stack.push((idx, by_id.get(id)));
            }
        }

        let n_unreachable = seen[1..].iter().filter(|s| !**s).count() as u64;
        Ok(ParsedTree {
            nodes: parsed,
            native_frames,
            id_to_node,
            root_children,
            n_shared,
            n_duplicate_ids,
            n_unreachable,
        })
    }
}

/// The meta nodes (garbage collector, program, idle): the root's parsed children in reverse
/// protocol order, until all three are found.
pub(super) fn meta_nodes(
    parsed: &[Node],
    root_children: &[u32],
    frames: &[CallFrame],
    strings: &Strings,
) -> (Option<u32>, Option<u32>, Option<u32>) {
    let gc_name = strings.lookup("(garbage collector)");
    let program_name = strings.lookup("(program)");
    let idle_name = strings.lookup("(idle)");
    let (mut gc, mut program, mut idle) = (None, None, None);
    for &c in root_children {
        if gc.is_some() && program.is_some() && idle.is_some() {
            break;
        }
        let name = match frames[parsed[c as usize].frame as usize].function_name {
            Scalar::Str(s) => Some(s),
            _ => None,
        };
        if name.is_some() && name == gc_name {
            gc = Some(c);
        } else if name.is_some() && name == program_name {
            program = Some(c);
        } else if name.is_some() && name == idle_name {
            idle = Some(c);
        }
    }

    (gc, program, idle)
}

/// The protocol tree's child lists, one after the other: a node's own `children` array, then
/// (when the first node has none, trace style) the nodes naming it as `parent`, in node order.
#[derive(Debug)]
struct Children {
    /// Node `n`'s children are `ids[start[n]..start[n + 1]]`.
    start: Vec<u32>,
    ids: Vec<i64>,
}

impl Children {
    fn new(nodes: &[RawNode], by_id: &IdMap) -> Children {
        let own = |n: &RawNode| n.children().unwrap_or(&[]).len() as u32;
        let from_parents = nodes[0].children().is_none();
        let parent_of = |n: &RawNode| match n.parent {
            UNKNOWN_ID => None,
            p => by_id.get(p),
        };
        let mut count: Vec<u32> = nodes.iter().map(own).collect();
        if from_parents {
            for n in &nodes[1..] {
                if let Some(p) = parent_of(n) {
                    count[p as usize] += 1;
                }
            }
        }
        let mut start = Vec::with_capacity(nodes.len() + 1);
        let mut total = 0u32;
        start.push(0);
        for c in &count {
            total += c;
            start.push(total);
        }
        let mut ids = vec![0i64; total as usize];
        // Fill: each node's own children first, then the derived ones.
        let mut next: Vec<u32> = start[..nodes.len()].to_vec();
        for (i, n) in nodes.iter().enumerate() {
            for &c in n.children().unwrap_or(&[]) {
                ids[next[i] as usize] = c;
                next[i] += 1;
            }
        }
        if from_parents {
            for n in &nodes[1..] {
                if let Some(p) = parent_of(n) {
                    ids[next[p as usize] as usize] = n.id;
                    next[p as usize] += 1;
                }
            }
        }
        Children { start, ids }
    }

    #[inline]
    fn of(&self, n: usize) -> &[i64] {
        &self.ids[self.start[n] as usize..self.start[n + 1] as usize]
    }
}

/// Explains why the parsed tree grew past the limit: a cycle, or ids shared by many parents.
fn cycle_message(nodes: &[RawNode], children: &Children, by_id: &IdMap) -> String {
    // Depth-first search with colours over the protocol graph (cold path).
    let mut colour = vec![0u8; nodes.len()];
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    colour[0] = 1;
    while let Some(&mut (n, ref mut next)) = stack.last_mut() {
        let kids = children.of(n);
        if *next < kids.len() {
            let child = kids[*next];
            *next += 1;
            if let Some(c) = by_id.get(child) {
                let c = c as usize;
                match colour[c] {
                    0 => {
                        colour[c] = 1;
                        stack.push((c, 0));
                    }
                    1 => {
                        return format!(
                            "node {} is its own ancestor (a cycle through its children/parent links)",
                            nodes[c].id
                        )
                    }
                    _ => {}
                }
            }
        } else {
            colour[n] = 2;
            stack.pop();
        }
    }
    "node ids listed under several parents multiply the tree past the limit of parsed nodes".to_owned()
}
