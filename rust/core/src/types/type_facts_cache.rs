//! A process-wide cache of facts derived from the type table (a structural
//! plan, what printing needs of a type), valid while the table's
//! generation ([`super::type_registry::generation`]) is unchanged: a small
//! operation repeated many times looks its types up once, and any
//! registration (a type, a field, a method, metadata, an attribute) makes
//! every fact be derived again.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

use parking_lot::Mutex;

use super::type_registry;

/// Hashes small integer keys (type indices, addresses of static
/// selectors): a multiply per word, where SipHash's flood resistance buys
/// nothing (the keys come from the type table, not from input) and costs
/// more than the lookup it serves.
#[derive(Default)]
pub struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(26) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    fn write_i32(&mut self, n: i32) {
        self.write_u64(n as u32 as u64);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// A map keyed by small integers, hashed with [`IndexHasher`].
pub type IndexMap<K, V> = HashMap<K, V, BuildHasherDefault<IndexHasher>>;

/// Facts `V` by key `K` (a type index, with whatever else selects them).
pub struct TypeFactsCache<K, V> {
    inner: Mutex<Option<(u64, IndexMap<K, Arc<V>>)>>,
}

impl<K: Eq + Hash + Copy, V> TypeFactsCache<K, V> {
    pub const fn new() -> Self {
        TypeFactsCache { inner: Mutex::new(None) }
    }

    /// The facts for `key` of the current generation, else `make()`'s
    /// (kept unless the table changed while they were made; an error is
    /// not kept).
    pub fn get_or_make<E>(&self, key: K, make: impl FnOnce() -> Result<V, E>) -> Result<Arc<V>, E> {
        // Read before the table: facts made across a change are labelled
        // with the older generation, so they are not reused.
        let generation = type_registry::generation();
        if let Some((g, facts)) = &*self.inner.lock() {
            if *g == generation {
                if let Some(v) = facts.get(&key) {
                    return Ok(v.clone());
                }
            }
        }
        let v = Arc::new(make()?);
        let mut inner = self.inner.lock();
        match &mut *inner {
            Some((g, facts)) if *g == generation => {
                facts.insert(key, v.clone());
            }
            Some((g, _)) if *g > generation => {} // newer facts are kept
            _ => {
                let mut facts = IndexMap::default();
                facts.insert(key, v.clone());
                *inner = Some((generation, facts));
            }
        }
        Ok(v)
    }
}

impl<K: Eq + Hash + Copy, V> Default for TypeFactsCache<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn facts_are_made_once_per_generation_and_errors_are_not_kept() {
        let cache: TypeFactsCache<i32, i32> = TypeFactsCache::new();
        let made = Cell::new(0);
        let make = || {
            made.set(made.get() + 1);
            Ok::<_, ()>(7)
        };
        assert_eq!(*cache.get_or_make(1, make).unwrap(), 7);
        assert_eq!(*cache.get_or_make(1, make).unwrap(), 7);
        assert_eq!(made.get(), 1, "reused within a generation");
        assert!(cache.get_or_make(2, || Err::<i32, _>("no")).is_err());
        assert_eq!(*cache.get_or_make(2, || Ok::<_, ()>(9)).unwrap(), 9, "a failure is not kept");
        type_registry::note_change();
        assert_eq!(*cache.get_or_make(1, make).unwrap(), 7);
        assert_eq!(made.get(), 2, "made again after the table changed");
    }
}
