//! String interning: every function name, URL, category and script id is stored once.

use rustc_hash::FxHashMap;

/// Index into a [`Strings`] table; only meaningful for the table that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StrId(u32);

/// An append-only string interner.
#[derive(Debug, Default, Clone)]
pub struct Strings {
    all: Vec<Box<str>>,
    ids: FxHashMap<Box<str>, StrId>,
}

impl Strings {
    /// Returns the id of `s`, adding it on first use.
    pub fn intern(&mut self, s: &str) -> StrId {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = StrId(u32::try_from(self.all.len()).expect("more than 2^32 distinct strings"));
        self.all.push(s.into());
        self.ids.insert(s.into(), id);
        id
    }

    /// The id of `s` if it was interned.
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        self.ids.get(s).copied()
    }

    /// The string behind `id`.
    pub fn get(&self, id: StrId) -> &str {
        &self.all[id.0 as usize]
    }
}
