//! The memory layout and algorithms of Map and Dict, as TVM-FFI's
//! `MapBaseObj` lays them out, so C++ built against TVM-FFI's headers can
//! look up, insert into and iterate a map tether made, and tether can do the
//! same with a map C++ made.
//!
//! Layout: the object header, then `data`, `size`, `slots`, `data_deleter`
//! (56 bytes). The top bit of `slots` tags the *small* layout: `data` points
//! at `size` key/value pairs (`2 × TVMFFIAny`) searched linearly, at most 4
//! slots. Otherwise the map is *dense*, with three more fields (`fib_shift`,
//! `iter_list_head`, `iter_list_tail`, 80 bytes in all) and `data` pointing
//! at blocks of 16 slots: 16 metadata bytes, then 16 items (a pair, then
//! `prev`/`next` indices of the insertion-order list). A metadata byte is
//! `0xFF` (empty), `0xFE` (protected) or a head bit (`0x80` clear on a chain
//! head) with a 7-bit index into the jump table to the chain's next slot.
//! Keys map to their chain head by Fibonacci hashing of [`any_hash`].
//!
//! Every operation here works on any such object, whoever allocated it:
//! storage is released through the object's own `data_deleter`, and storage
//! this module allocates is `malloc`ed with `free` as its deleter. Objects
//! must be large enough for the dense fields (a small object always is: it
//! has room for at least two inline pairs), so a map switches from small to
//! dense, and grows, in place.
//!
//! SAFETY invariants of this module: a `MapCell` pointer names a live map
//! object in one of the two layouts above; functions that mutate require
//! that nobody else reads or writes the cell meanwhile, functions that read
//! require that nobody writes it. Values removed from a map are handed back
//! to the caller (a graveyard `Vec<Any>`) so that their deleters, which can
//! run arbitrary code, run after the caller released its lock.
//!
//! Reading and the layout primitives are here; insertion, erasure and
//! clearing are in `write`.

use std::ffi::c_void;

use crate::abi::{TVMFFIAny, TVMFFIObject};
use crate::values::any::Any;
use crate::values::error::Error;

use super::any_hash::{any_equal, any_hash};

mod write;

/// The fields every map shares (TVM-FFI's `MapBaseObj`).
#[repr(C)]
pub struct MapCell {
    pub header: TVMFFIObject,
    pub data: *mut c_void,
    pub size: u64,
    pub slots: u64,
    pub data_deleter: Option<unsafe extern "C" fn(*mut c_void)>,
}

/// The fields a dense map adds after [`MapCell`].
#[repr(C)]
struct DenseTail {
    fib_shift: u32,
    iter_list_head: u64,
    iter_list_tail: u64,
}

/// A key/value pair as stored.
#[repr(C)]
pub struct Kv {
    pub key: TVMFFIAny,
    pub value: TVMFFIAny,
}

#[repr(C)]
struct Item {
    kv: Kv,
    prev: u64,
    next: u64,
}

pub const SMALL_TAG: u64 = 1 << 63;
/// Slots a small map starts with and grows to at most.
pub const SMALL_INIT: u64 = 2;
pub const SMALL_MAX: u64 = 4;
/// Bytes of a small map object with `n` inline slots.
pub const fn small_object_size(n: u64) -> usize {
    std::mem::size_of::<MapCell>() + n as usize * std::mem::size_of::<Kv>()
}
pub const DENSE_OBJECT_SIZE: usize = std::mem::size_of::<MapCell>() + std::mem::size_of::<DenseTail>();

const BLOCK_CAP: u64 = 16;
const BLOCK_BYTES: usize = BLOCK_CAP as usize * (1 + std::mem::size_of::<Item>());
const EMPTY: u8 = 0xFF;
const PROTECTED: u8 = 0xFE;
const INVALID: u64 = u64::MAX;
const MAX_LOAD: f64 = 0.99;
const NUM_JUMPS: usize = 126;

const _: () = assert!(std::mem::size_of::<MapCell>() == 56);
const _: () = assert!(DENSE_OBJECT_SIZE == 80);
const _: () = assert!(std::mem::size_of::<Item>() == 48);
const _: () = assert!(BLOCK_BYTES == 784);
const _: () = assert!(small_object_size(SMALL_INIT) >= DENSE_OBJECT_SIZE);

/// Jump distances of a chain's next slot: 0..16, then triangle numbers.
static JUMPS: [u64; NUM_JUMPS] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 21, 28, 36, 45, 55, 66, 78, 91, 105, 120, 136, 153, 171, 190,
    210, 231, 253, 276, 300, 325, 351, 378, 406, 435, 465, 496, 528, 561, 595, 630, 666, 703, 741, 780, 820, 861, 903,
    946, 990, 1035, 1081, 1128, 1176, 1225, 1275, 1326, 1378, 1431, 1485, 1540, 1596, 1653, 1711, 1770, 1830, 1891,
    1953, 2016, 2080, 2145, 2211, 2278, 2346, 2415, 2485, 2556, 2628, 8515, 19110, 42778, 96141, 216153, 486591,
    1092981, 2458653, 5532801, 12442566, 27993903, 62983476, 141717030, 318844378, 717352503, 1614057336, 3631522476,
    8170957530, 18384510628, 41364789378, 93070452520, 209408356380, 471168559170, 1060128894105, 2385289465695,
    5366898840628, 12075518705635, 27169915244790, 61132312065111, 137547689707000, 309482283181501,
    696335127828753, 1566753995631385, 3525196511162271, 7931691992677701, 17846306936293605, 40154190677507445,
    90346928918121501, 203280589587557251, 457381325854679626, 1029107982097042876, 2315492959180353330,
    5209859154120846435,
];

unsafe extern "C" fn free_storage(p: *mut c_void) {
    // SAFETY: storage this module allocates comes from libc::malloc.
    unsafe { libc::free(p) }
}

fn fib_hash(hash: u64, shift: u32) -> u64 {
    11400714819323198485u64.wrapping_mul(hash) >> shift
}

/// TVM-FFI's table size for `cap` entries: a power of two above `cap`,
/// doubled when that leaves less than half free.
pub fn table_size(cap: u64) -> (u32, u64) {
    let (mut shift, mut slots) = (64u32, 1u64);
    let mut c = cap;
    while c != 0 {
        shift -= 1;
        slots <<= 1;
        c >>= 1;
    }
    if slots < cap * 2 {
        (shift - 1, slots << 1)
    } else {
        (shift, slots)
    }
}

fn move_out(a: &mut TVMFFIAny) -> Any {
    let raw = std::mem::replace(a, TVMFFIAny::NONE);
    // SAFETY: module invariant: stored values are owned Anys.
    unsafe { Any::from_raw_owned(raw) }
}

/// A map object seen through its raw cell.
#[derive(Clone, Copy)]
pub struct CellRef(pub *mut MapCell);

impl CellRef {
    fn c(&self) -> &mut MapCell {
        // SAFETY: module invariant (exclusive use for writes).
        unsafe { &mut *self.0 }
    }

    fn tail(&self) -> &mut DenseTail {
        // SAFETY: dense maps have the tail right after the cell.
        unsafe { &mut *(self.0.add(1) as *mut DenseTail) }
    }

    pub fn is_small(&self) -> bool {
        self.c().slots & SMALL_TAG != 0
    }

    pub fn size(&self) -> u64 {
        self.c().size
    }

    pub fn num_slots(&self) -> u64 {
        self.c().slots & !SMALL_TAG
    }

    /// Address just past the 56-byte cell, where inline pairs start.
    pub fn inline_data(&self) -> *mut c_void {
        // SAFETY: within (or one past) the object.
        unsafe { self.0.add(1) as *mut c_void }
    }

    // ----- small layout -----

    fn small_kv(&self, i: u64) -> *mut Kv {
        // SAFETY: callers pass i < slots.
        unsafe { (self.c().data as *mut Kv).add(i as usize) }
    }

    /// Initialise an empty small map with `n` slots stored inline.
    ///
    /// # Safety
    /// The object has room for `n` inline pairs.
    pub unsafe fn init_small_inline(&self, n: u64) {
        let c = self.c();
        c.data = self.inline_data();
        c.size = 0;
        c.slots = n | SMALL_TAG;
        c.data_deleter = None;
    }

    // ----- dense layout -----

    fn block(&self, idx: u64) -> *mut u8 {
        // SAFETY: callers pass idx < slots; blocks are contiguous.
        unsafe { (self.c().data as *mut u8).add((idx / BLOCK_CAP) as usize * BLOCK_BYTES) }
    }

    fn meta(&self, idx: u64) -> &mut u8 {
        // SAFETY: the metadata byte of slot idx.
        unsafe { &mut *self.block(idx).add((idx % BLOCK_CAP) as usize) }
    }

    fn item(&self, idx: u64) -> &mut Item {
        // SAFETY: the item of slot idx.
        unsafe {
            &mut *(self.block(idx).add(BLOCK_CAP as usize + (idx % BLOCK_CAP) as usize * std::mem::size_of::<Item>())
                as *mut Item)
        }
    }

    fn is_head(&self, idx: u64) -> bool {
        *self.meta(idx) & 0x80 == 0
    }

    fn next_offset(meta: u8) -> u64 {
        JUMPS[(meta & 0x7F) as usize]
    }

    fn has_next(&self, idx: u64) -> bool {
        Self::next_offset(*self.meta(idx)) != 0
    }

    fn next_in_chain(&self, idx: u64, meta: u8) -> Option<u64> {
        let off = Self::next_offset(meta);
        (off != 0).then(|| idx.wrapping_add(off) % self.num_slots())
    }

    fn set_jump(&self, idx: u64, jump: u8) {
        let m = self.meta(idx);
        *m = (*m & 0x80) | jump;
    }

    fn write_item(&self, idx: u64, meta: u8, kv: Kv) {
        *self.meta(idx) = meta;
        // SAFETY: the slot is empty (no live item to overwrite).
        unsafe { std::ptr::write(self.item(idx), Item { kv, prev: INVALID, next: INVALID }) };
    }

    fn head_for(&self, hash: u64) -> u64 {
        fib_hash(hash, self.tail().fib_shift)
    }

    fn is_full(&self) -> bool {
        (self.c().size + 1) as f64 > self.num_slots() as f64 * MAX_LOAD
    }

    fn next_empty(&self, idx: u64) -> Option<(u8, u64)> {
        (1..NUM_JUMPS).find_map(|j| {
            let cand = idx.wrapping_add(JUMPS[j]) % self.num_slots();
            (*self.meta(cand) == EMPTY).then_some((j as u8, cand))
        })
    }

    fn find_prev(&self, idx: u64) -> u64 {
        // SAFETY: the slot holds a live key.
        let mut next = self.head_for(unsafe { any_hash(&self.item(idx).kv.key) });
        let mut prev = next;
        next = self.next_in_chain(next, *self.meta(next)).unwrap_or(0);
        while next != idx {
            prev = next;
            next = self.next_in_chain(next, *self.meta(next)).unwrap_or(0);
        }
        prev
    }

    fn list_unlink(&self, idx: u64) {
        let (prev, next) = (self.item(idx).prev, self.item(idx).next);
        if prev == INVALID {
            self.tail().iter_list_head = next;
        } else {
            self.item(prev).next = next;
        }
        if next == INVALID {
            self.tail().iter_list_tail = prev;
        } else {
            self.item(next).prev = prev;
        }
    }

    fn list_push_back(&self, idx: u64) {
        let t = self.tail();
        self.item(idx).prev = t.iter_list_tail;
        self.item(idx).next = INVALID;
        if t.iter_list_tail != INVALID {
            self.item(t.iter_list_tail).next = idx;
        }
        if t.iter_list_head == INVALID {
            t.iter_list_head = idx;
        }
        t.iter_list_tail = idx;
    }

    fn list_replace(&self, src: u64, dst: u64) {
        let (prev, next) = (self.item(src).prev, self.item(src).next);
        self.item(dst).prev = prev;
        self.item(dst).next = next;
        if prev == INVALID {
            self.tail().iter_list_head = dst;
        } else {
            self.item(prev).next = dst;
        }
        if next == INVALID {
            self.tail().iter_list_tail = dst;
        } else {
            self.item(next).prev = dst;
        }
    }

    /// Install fresh dense storage of `n_slots` (a power of two).
    fn install_dense(&self, fib_shift: u32, n_slots: u64) -> Result<(), Error> {
        let n_blocks = n_slots.div_ceil(BLOCK_CAP) as usize;
        let bytes = n_blocks
            .checked_mul(BLOCK_BYTES)
            .ok_or_else(|| Error::new("MemoryError", "map too large"))?;
        // SAFETY: plain allocation, metadata initialised below.
        let data = unsafe { libc::malloc(bytes.max(1)) };
        if data.is_null() {
            return Err(Error::new("MemoryError", format!("allocating a map of {n_slots} slots failed")));
        }
        for b in 0..n_blocks {
            // SAFETY: the metadata bytes of block b.
            unsafe { std::ptr::write_bytes((data as *mut u8).add(b * BLOCK_BYTES), EMPTY, BLOCK_CAP as usize) };
        }
        let c = self.c();
        c.data = data;
        c.data_deleter = Some(free_storage);
        c.slots = n_slots;
        c.size = 0;
        let t = self.tail();
        t.fib_shift = fib_shift;
        t.iter_list_head = INVALID;
        t.iter_list_tail = INVALID;
        Ok(())
    }

    /// Move every pair out (in iteration order) and release the storage
    /// through its own deleter; the cell is left without storage.
    fn take_all(&self) -> Vec<(Any, Any)> {
        let mut out = Vec::with_capacity(self.size() as usize);
        if self.is_small() {
            for i in 0..self.size() {
                // SAFETY: i < size.
                let kv = unsafe { &mut *self.small_kv(i) };
                out.push((move_out(&mut kv.key), move_out(&mut kv.value)));
            }
        } else {
            let mut idx = self.tail().iter_list_head;
            while idx != INVALID {
                let it = self.item(idx);
                out.push((move_out(&mut it.kv.key), move_out(&mut it.kv.value)));
                idx = it.next;
            }
        }
        let c = self.c();
        if let (false, Some(d)) = (c.data.is_null(), c.data_deleter) {
            // SAFETY: the storage's own deleter; its pairs were moved out.
            unsafe { d(c.data) };
        }
        c.data = std::ptr::null_mut();
        c.data_deleter = None;
        c.size = 0;
        out
    }

    // ----- reading -----

    /// The pair stored under `key`, if any.
    pub fn find(&self, key: &TVMFFIAny) -> Option<*mut Kv> {
        if self.size() == 0 {
            return None;
        }
        if self.is_small() {
            // SAFETY: i < size; values are alive.
            return (0..self.size()).map(|i| self.small_kv(i)).find(|&kv| unsafe { any_equal(&(*kv).key, key) });
        }
        // SAFETY: key is alive per the caller.
        let mut idx = self.head_for(unsafe { any_hash(key) });
        if !self.is_head(idx) {
            return None;
        }
        loop {
            // SAFETY: chain slots hold live items.
            if unsafe { any_equal(key, &self.item(idx).kv.key) } {
                return Some(&mut self.item(idx).kv);
            }
            idx = self.next_in_chain(idx, *self.meta(idx))?;
        }
    }

    /// The first position in iteration order (`end()` if empty).
    pub fn begin(&self) -> u64 {
        if self.is_small() {
            0
        } else {
            self.tail().iter_list_head
        }
    }

    /// The past-the-end position.
    pub fn end(&self) -> u64 {
        if self.is_small() {
            self.size()
        } else {
            INVALID
        }
    }

    /// The position after `pos` (which must hold a pair).
    pub fn advance(&self, pos: u64) -> u64 {
        if self.is_small() {
            if pos + 1 < self.size() {
                pos + 1
            } else {
                self.size()
            }
        } else {
            self.item(pos).next
        }
    }

    /// Whether `pos` currently names a stored pair (a check for readers
    /// that hold a position across releases of the lock).
    pub fn holds(&self, pos: u64) -> bool {
        if self.is_small() {
            pos < self.size()
        } else {
            pos < self.num_slots() && !matches!(*self.meta(pos), EMPTY | PROTECTED)
        }
    }

    /// The pair at `pos` (which must hold one).
    pub fn kv_at(&self, pos: u64) -> *mut Kv {
        if self.is_small() {
            self.small_kv(pos)
        } else {
            &mut self.item(pos).kv
        }
    }

    /// All pairs in iteration order.
    pub fn pairs(&self) -> Vec<*mut Kv> {
        let mut out = Vec::with_capacity(self.size() as usize);
        let (mut pos, end) = (self.begin(), self.end());
        while pos != end {
            out.push(self.kv_at(pos));
            pos = self.advance(pos);
        }
        out
    }
}
