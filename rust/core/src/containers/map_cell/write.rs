//! Writing a map cell: insertion (growing a small map in place or
//! rehashing a dense one), erasure and clearing, in TVM-FFI's algorithms so
//! that slots, chains and iteration order match what C++ built against its
//! headers expects. The layout and its invariants are in the parent module.

use crate::abi::TVMFFIAny;
use crate::values::any::Any;
use crate::values::error::Error;

use super::*;

impl CellRef {
    /// Insert or overwrite `key`, as TVM-FFI's `InsertMaybeReHash` followed
    /// by an in-place switch does: the same slots, chains and iteration
    /// order. A replaced value goes to `graveyard`.
    ///
    /// `inline_room` is how many pairs fit inline after the cell (0 when
    /// unknown), which lets a small map grow without a separate buffer.
    pub fn insert(&self, key: Any, value: Any, inline_room: u64, graveyard: &mut Vec<Any>) -> Result<(), Error> {
        if !self.is_small() {
            return self.dense_insert(key, value, graveyard);
        }
        if let Some(kv) = self.find(key.as_raw()) {
            // SAFETY: a live pair; the old value is handed back.
            graveyard.push(move_out(unsafe { &mut (*kv).value }));
            // SAFETY: the slot was just emptied.
            unsafe { (*kv).value = value.into_raw() };
            return Ok(());
        }
        let n = self.num_slots();
        if self.size() < n {
            // SAFETY: slot `size` is free.
            unsafe { std::ptr::write(self.small_kv(self.size()), Kv { key: key.into_raw(), value: value.into_raw() }) };
            self.c().size += 1;
            return Ok(());
        }
        let items = self.take_all();
        if n < SMALL_MAX {
            let grown = (n * 2).clamp(SMALL_INIT, SMALL_MAX);
            if inline_room >= grown {
                // SAFETY: per the caller, the inline room holds `grown` pairs.
                unsafe { self.init_small_inline(grown) };
            } else {
                let bytes = grown as usize * std::mem::size_of::<Kv>();
                // SAFETY: plain allocation, filled below.
                let data = unsafe { libc::malloc(bytes) };
                if data.is_null() {
                    return Err(Error::new("MemoryError", "growing a map failed"));
                }
                let c = self.c();
                c.data = data;
                c.data_deleter = Some(free_storage);
                c.slots = grown | SMALL_TAG;
            }
            for (k, v) in items.into_iter().chain(std::iter::once((key, value))) {
                // SAFETY: at most `grown` distinct pairs.
                unsafe { std::ptr::write(self.small_kv(self.size()), Kv { key: k.into_raw(), value: v.into_raw() }) };
                self.c().size += 1;
            }
            return Ok(());
        }
        let (shift, slots) = table_size(items.len() as u64);
        self.install_dense(shift, slots)?;
        for (k, v) in items {
            self.dense_insert(k, v, graveyard)?;
        }
        self.dense_insert(key, value, graveyard)
    }

    /// Make room for `n` pairs in all before a bulk build: a small cell
    /// that `n` would outgrow becomes at once the dense table that
    /// inserting `n` distinct keys one by one grows to (from TVM-FFI's
    /// table for a full small map, doubling at its load factor), so the
    /// build does not rehash on the way and ends in the same layout. Pairs
    /// already present keep their order.
    pub fn reserve(&self, n: u64, graveyard: &mut Vec<Any>) -> Result<(), Error> {
        if !self.is_small() || n <= SMALL_MAX {
            return Ok(());
        }
        let (mut shift, mut slots) = table_size(SMALL_MAX);
        while (n as f64) > slots as f64 * MAX_LOAD {
            slots = slots.checked_mul(2).filter(|_| shift > 1).ok_or_else(|| Error::new("MemoryError", "map too large"))?;
            shift -= 1;
        }
        let items = self.take_all();
        self.install_dense(shift, slots)?;
        for (k, v) in items {
            self.dense_insert(k, v, graveyard)?;
        }
        Ok(())
    }

    fn dense_insert(&self, key: Any, value: Any, graveyard: &mut Vec<Any>) -> Result<(), Error> {
        loop {
            if let Some((idx, existed)) = self.try_insert(&key) {
                let it = self.item(idx);
                if existed {
                    graveyard.push(move_out(&mut it.kv.value));
                    drop(key);
                } else {
                    it.kv.key = key.into_raw();
                }
                it.kv.value = value.into_raw();
                self.list_push_back(idx);
                return Ok(());
            }
            // Rehash into twice the slots, in iteration order.
            let (shift, slots) = (self.tail().fib_shift, self.num_slots());
            let items = self.take_all();
            if slots == 0 {
                let (s, n) = table_size(1);
                self.install_dense(s, n)?;
            } else {
                self.install_dense(shift - 1, slots * 2)?;
            }
            for (k, v) in items {
                self.dense_insert(k, v, graveyard)?;
            }
        }
    }

    /// TVM-FFI's `TryInsert`: the slot for `key` (with a None key and value
    /// when new, unlinked from the iteration list when it existed), or None
    /// when the table must grow.
    fn try_insert(&self, key: &Any) -> Option<(u64, bool)> {
        if self.num_slots() == 0 {
            return None;
        }
        // SAFETY: key is alive.
        let mut iter = self.head_for(unsafe { any_hash(key.as_raw()) });
        if *self.meta(iter) == EMPTY {
            self.write_item(iter, 0x00, Kv { key: TVMFFIAny::NONE, value: TVMFFIAny::NONE });
            self.c().size += 1;
            return Some((iter, false));
        }
        if !self.is_head(iter) {
            return if self.is_full() { None } else { self.spare_list_head(iter) };
        }
        let mut next = iter;
        loop {
            // SAFETY: chain slots hold live items.
            if unsafe { any_equal(key.as_raw(), &self.item(next).kv.key) } {
                self.list_unlink(next);
                return Some((next, true));
            }
            iter = next;
            match self.next_in_chain(next, *self.meta(next)) {
                Some(n) => next = n,
                None => break,
            }
        }
        if self.is_full() {
            return None;
        }
        let (jump, empty) = self.next_empty(iter)?;
        self.write_item(empty, 0x80, Kv { key: TVMFFIAny::NONE, value: TVMFFIAny::NONE });
        self.set_jump(iter, jump);
        self.c().size += 1;
        Some((empty, false))
    }

    /// TVM-FFI's `TrySpareListHead`: move the chain that passes through
    /// `target` elsewhere so `target` can head a new chain.
    fn spare_list_head(&self, target: u64) -> Option<(u64, bool)> {
        let mut r = target;
        let mut w = self.find_prev(target);
        let mut first = true;
        loop {
            let (jump, empty) = self.next_empty(w)?;
            // Move r's pair to `empty` bitwise (ownership moves with it).
            // SAFETY: r holds a live item; `empty` is free.
            let kv = unsafe { std::ptr::read(&self.item(r).kv) };
            self.write_item(empty, 0x80, kv);
            self.list_replace(r, empty);
            let r_meta = *self.meta(r);
            *self.meta(r) = if first { PROTECTED } else { EMPTY };
            first = false;
            self.set_jump(w, jump);
            w = empty;
            match self.next_in_chain(r, r_meta) {
                Some(n) => r = n,
                None => break,
            }
        }
        self.write_item(target, 0x00, Kv { key: TVMFFIAny::NONE, value: TVMFFIAny::NONE });
        self.c().size += 1;
        Some((target, false))
    }

    /// Remove `key`; its pair goes to `graveyard`. Returns whether it was there.
    pub fn erase(&self, key: &TVMFFIAny, graveyard: &mut Vec<Any>) -> bool {
        let Some(kv) = self.find(key) else { return false };
        if self.is_small() {
            let i = (kv as usize - self.c().data as usize) / std::mem::size_of::<Kv>();
            // SAFETY: i < size; later pairs move down bitwise.
            unsafe {
                graveyard.push(move_out(&mut (*kv).key));
                graveyard.push(move_out(&mut (*kv).value));
                let n = self.size() as usize;
                std::ptr::copy(self.small_kv(i as u64 + 1), kv, n - i - 1);
            }
            self.c().size -= 1;
            return true;
        }
        let idx = {
            let (base, block_bytes) = (self.c().data as usize, BLOCK_BYTES);
            let off = kv as usize - base;
            let (b, within) = (off / block_bytes, off % block_bytes);
            (b as u64) * BLOCK_CAP + ((within - BLOCK_CAP as usize) / std::mem::size_of::<Item>()) as u64
        };
        self.c().size -= 1;
        if !self.has_next(idx) {
            if !self.is_head(idx) {
                let prev = self.find_prev(idx);
                self.set_jump(prev, 0);
            }
            self.list_unlink(idx);
            let it = self.item(idx);
            graveyard.push(move_out(&mut it.kv.key));
            graveyard.push(move_out(&mut it.kv.value));
            *self.meta(idx) = EMPTY;
        } else {
            let (mut last, mut prev) = (idx, idx);
            last = self.next_in_chain(last, *self.meta(last)).expect("has next");
            while self.has_next(last) {
                prev = last;
                last = self.next_in_chain(last, *self.meta(last)).expect("has next");
            }
            self.list_unlink(idx);
            let it = self.item(idx);
            graveyard.push(move_out(&mut it.kv.key));
            graveyard.push(move_out(&mut it.kv.value));
            // SAFETY: `last` holds a live pair; it moves bitwise into idx.
            it.kv = unsafe { std::ptr::read(&self.item(last).kv) };
            self.list_replace(last, idx);
            *self.meta(last) = EMPTY;
            self.set_jump(prev, 0);
        }
        true
    }

    /// Remove every pair (into `graveyard`), keeping the storage.
    pub fn clear(&self, graveyard: &mut Vec<Any>) {
        if self.is_small() {
            for i in 0..self.size() {
                // SAFETY: i < size.
                let kv = unsafe { &mut *self.small_kv(i) };
                graveyard.push(move_out(&mut kv.key));
                graveyard.push(move_out(&mut kv.value));
            }
        } else {
            for idx in 0..self.num_slots() {
                if !matches!(*self.meta(idx), EMPTY | PROTECTED) {
                    let it = self.item(idx);
                    graveyard.push(move_out(&mut it.kv.key));
                    graveyard.push(move_out(&mut it.kv.value));
                    *self.meta(idx) = EMPTY;
                }
            }
            self.tail().iter_list_head = INVALID;
            self.tail().iter_list_tail = INVALID;
        }
        self.c().size = 0;
    }

    /// Destroy the contents and release the storage (the object's
    /// destructor), as TVM-FFI's small and dense destructors do.
    pub fn destroy(&self) {
        let mut graveyard = Vec::new();
        if self.is_small() || !self.c().data.is_null() {
            self.clear(&mut graveyard);
        }
        let c = self.c();
        if let (false, Some(d)) = (c.data.is_null(), c.data_deleter) {
            // SAFETY: the storage's own deleter.
            unsafe { d(c.data) };
        }
        c.data = std::ptr::null_mut();
        c.data_deleter = None;
        drop(graveyard);
    }
}
