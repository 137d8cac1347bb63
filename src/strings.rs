//! String interning: every function name, URL, category and script id is stored once.

use std::hash::BuildHasher;

use rustc_hash::FxBuildHasher;

/// Index into a [`Strings`] table; only meaningful for the table that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StrId(u32);

/// An append-only string interner.
#[derive(Default, Clone)]
pub struct Strings {
    all: Vec<Box<str>>,
    /// The ids, found by their string's hash: each string is held once.
    ids: hashbrown::HashTable<StrId>,
}

impl std::fmt::Debug for Strings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Strings").field("len", &self.all.len()).finish()
    }
}

impl Strings {
    /// Returns the id of `s`, adding it on first use.
    pub fn intern(&mut self, s: &str) -> StrId {
        let all = &mut self.all;
        let hash = FxBuildHasher.hash_one(s);
        let entry =
            self.ids.entry(hash, |&id| &*all[id.0 as usize] == s, |&id| FxBuildHasher.hash_one(&*all[id.0 as usize]));
        match entry {
            hashbrown::hash_table::Entry::Occupied(e) => *e.get(),
            hashbrown::hash_table::Entry::Vacant(e) => {
                let id = StrId(u32::try_from(all.len()).expect("more than 2^32 distinct strings"));
                all.push(s.into());
                e.insert(id);
                id
            }
        }
    }

    /// The id of `s` if it was interned.
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        self.ids.find(FxBuildHasher.hash_one(s), |&id| &*self.all[id.0 as usize] == s).copied()
    }

    /// The string behind `id`.
    pub fn get(&self, id: StrId) -> &str {
        &self.all[id.0 as usize]
    }
}
