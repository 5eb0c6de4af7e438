//! `ffi.Tensor` (static type index `kTVMFFITensor`): an object whose header
//! is followed by a `DLTensor`, exactly as TVM-FFI's `TensorObj`, so C++
//! built against upstream headers finds the `DLTensor` at
//! `obj + sizeof(TVMFFIObject)`.
//!
//! What follows the `DLTensor` is tether's own: who owns the data (a DLPack
//! managed tensor whose deleter runs exactly once when the Tensor is
//! destroyed, or the source Tensor of a view) and the DLPack flags the data
//! came with. Those fields exist only in Tensors this core allocated: C++
//! built against upstream's headers constructs Tensor objects of its own
//! (`Tensor::FromNDAlloc`, `FromDLPack` in a header-only build) whose
//! memory after the `DLTensor` is theirs (an allocator, shape cells). A
//! Tensor is known to be this core's by its deleter ([`tensor_deleter`],
//! one non-generic function installed on every Tensor allocated here);
//! any other Tensor is read as upstream reads it: the `DLTensor` only, no
//! flags (writeable, not copied), exactly what upstream's `ToDLPack*` export.
//! Shape and strides are stored as upstream stores them: a Tensor
//! made from a managed tensor borrows the producer's `shape` array (and its
//! `strides`, or compact strides computed into the object's own tail when
//! the producer gave none); a view copies shape and strides into its tail.
//! Tensors are allocated through the allocator registry like every object.
//!
//! SAFETY invariants of this module: `dl_tensor.shape` (and `strides`, when
//! non-NULL) point to `ndim` entries that live as long as the object (in its
//! tail or in the managed tensor it owns); the object is immutable after
//! construction; the owner is released exactly once, by `Drop`.

use std::ffi::c_void;
use std::ptr::{self, NonNull};

use crate::abi::{type_index as ti, DLDataType, DLDevice, TVMFFIObject};
use crate::values::error::Error;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};
use tether_sys::dlpack::{
    device_type as dev, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor,
    DLPACK_FLAG_BITMASK_IS_COPIED, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, DLPACK_FLAG_BITMASK_READ_ONLY,
    DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION,
};

/// Who keeps a Tensor's data alive.
enum Owner {
    /// Not yet attached (only between allocation and the end of construction).
    None,
    Legacy(NonNull<DLManagedTensor>),
    Versioned(NonNull<DLManagedTensorVersioned>),
    /// A view keeps its source Tensor.
    Source(#[allow(dead_code)] ObjectRef), // held, never read
}

/// The object layout: header, `DLTensor`, then tether's fields (present only
/// when [`is_own_layout`] holds: never read in a Tensor C++ constructed).
#[repr(C)]
pub struct TensorObj {
    header: TVMFFIObject,
    dl_tensor: DLTensor,
    owner: Owner,
    /// DLPack flags carried over from the producer (read-only, copied).
    flags: u64,
}

// SAFETY: immutable after construction; the managed tensor is only touched
// by its deleter, once, and DLPack deleters may run on any thread.
unsafe impl Send for TensorObj {}
// SAFETY: as above.
unsafe impl Sync for TensorObj {}

// SAFETY: repr(C) with the header first.
unsafe impl ObjectType for TensorObj {
    const TYPE_KEY: &'static str = "ffi.Tensor";
    fn type_index() -> i32 {
        ti::kTVMFFITensor
    }
}

/// The deleter of every Tensor this core allocates: the generic object
/// deleter, under one address that identifies tether's layout (a generic
/// function's address is not a reliable identity across code units).
unsafe extern "C" fn tensor_deleter(ptr: *mut c_void, flags: i32) {
    // SAFETY: installed only on TensorObj allocations made by `allocate`;
    // the object system calls it with the flags of the counts that hit zero.
    unsafe { crate::object::object_deleter::<TensorObj>(ptr, flags) }
}

/// Whether `obj` (a live Tensor object) was allocated by this core, so that
/// the fields after its `DLTensor` are tether's.
fn is_own_layout(obj: *const TensorObj) -> bool {
    // SAFETY: the header is the first field of every Tensor object, whoever
    // constructed it; only the deleter pointer is read.
    let deleter = unsafe { (*obj.cast::<TVMFFIObject>()).deleter };
    deleter.map(|d| d as *const () as usize) == Some(tensor_deleter as *const () as usize)
}

impl Drop for TensorObj {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.owner, Owner::None) {
            // SAFETY: the managed tensor was handed to us with its ownership;
            // its deleter runs here and nowhere else.
            Owner::Legacy(m) => unsafe {
                if let Some(d) = (*m.as_ptr()).deleter {
                    d(m.as_ptr())
                }
            },
            // SAFETY: as above.
            Owner::Versioned(m) => unsafe {
                if let Some(d) = (*m.as_ptr()).deleter {
                    d(m.as_ptr())
                }
            },
            Owner::Source(_) | Owner::None => {}
        }
    }
}

/// Devices whose data pointers are plain addresses, so alignment is read
/// from `data + byte_offset` (elsewhere only `byte_offset` is checked).
pub fn is_direct_address_device(device: DLDevice) -> bool {
    device.device_type <= dev::kDLCUDAHost
        || matches!(device.device_type, dev::kDLCUDAManaged | dev::kDLROCM | dev::kDLROCMHost)
}

/// Shape of a `DLTensor` (empty when `ndim <= 0`).
///
/// # Safety
/// `t.shape` must point to `t.ndim` entries when `ndim > 0`.
unsafe fn shape_of(t: &DLTensor) -> &[i64] {
    if t.ndim <= 0 || t.shape.is_null() {
        &[]
    } else {
        // SAFETY: per the caller.
        unsafe { std::slice::from_raw_parts(t.shape, t.ndim as usize) }
    }
}

/// Strides of a `DLTensor`, `None` when NULL (compact row-major).
///
/// # Safety
/// As [`shape_of`], for `strides` when non-NULL.
unsafe fn strides_of(t: &DLTensor) -> Option<&[i64]> {
    if t.strides.is_null() {
        None
    } else if t.ndim <= 0 {
        Some(&[])
    } else {
        // SAFETY: per the caller.
        Some(unsafe { std::slice::from_raw_parts(t.strides, t.ndim as usize) })
    }
}

/// Whether the layout is compact row-major. NULL strides are; so is any
/// tensor with no elements; dimensions of extent 1 may have any stride.
pub fn is_contiguous(shape: &[i64], strides: Option<&[i64]>) -> bool {
    let Some(strides) = strides else { return true };
    if shape.contains(&0) {
        return true;
    }
    let mut expected = 1i64;
    for (&extent, &stride) in shape.iter().zip(strides).rev() {
        if extent == 1 {
            continue;
        }
        if stride != expected {
            return false;
        }
        expected = expected.wrapping_mul(extent);
    }
    true
}

/// Whether `data + byte_offset` (direct-address devices) or `byte_offset`
/// (others) is a multiple of `alignment`.
pub fn is_aligned(t: &DLTensor, alignment: u64) -> bool {
    if alignment == 0 {
        return true;
    }
    if is_direct_address_device(t.device) {
        (t.data as u64).wrapping_add(t.byte_offset) % alignment == 0
    } else {
        t.byte_offset % alignment == 0
    }
}

/// Compact row-major strides for `shape`.
pub fn compact_strides(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![0i64; shape.len()];
    let mut acc = 1i64;
    for (s, &extent) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.wrapping_mul(extent);
    }
    strides
}

/// Bytes needed for `numel` packed elements of `dtype` (saturating: the
/// sizes of adopted tensors were checked to fit by `checked_data_size`).
pub fn data_size(numel: u64, dtype: DLDataType) -> u64 {
    checked_data_size(numel, dtype).unwrap_or(u64::MAX)
}

/// Bytes needed for `numel` packed elements of `dtype`, None on overflow.
fn checked_data_size(numel: u64, dtype: DLDataType) -> Option<u64> {
    let bits = numel.checked_mul(dtype.bits as u64)?.checked_mul(dtype.lanes as u64)?;
    Some(bits.checked_add(7)? / 8)
}

/// Dimensions a producer's tensor may have (DLPack sets no limit; this
/// keeps a hostile `ndim` from sizing the copies of shape and strides).
const MAX_NDIM: i32 = 1 << 16;

/// Checks every producer's tensor must pass before it is adopted: a sane
/// rank, a data type with bits and lanes, non-negative extents whose
/// element count and byte size fit, and data wherever there are elements.
fn check_dl_tensor(t: &DLTensor, func: &str) -> Result<(), Error> {
    if t.ndim < 0 || t.ndim > MAX_NDIM {
        return Err(Error::value_error(format!("{func}: ndim {} is outside 0..={MAX_NDIM}", t.ndim)));
    }
    if t.ndim > 0 && t.shape.is_null() {
        return Err(Error::value_error(format!("{func}: shape is NULL for a {}-d tensor", t.ndim)));
    }
    if !super::dtype::is_known_code(t.dtype.code) {
        return Err(Error::value_error(format!("{func}: data type code {} is unknown", t.dtype.code)));
    }
    if t.dtype.bits == 0 || t.dtype.lanes == 0 {
        return Err(Error::value_error(format!(
            "{func}: data type (code {}, bits {}, lanes {}) has no bits or no lanes",
            t.dtype.code, t.dtype.bits, t.dtype.lanes
        )));
    }
    // SAFETY: ndim and the shape pointer were checked above; the producer
    // guarantees `ndim` readable extents.
    let shape = unsafe { shape_of(t) };
    let mut numel: u64 = 1;
    for (axis, &extent) in shape.iter().enumerate() {
        if extent < 0 {
            return Err(Error::value_error(format!("{func}: extent {extent} of axis {axis} is negative")));
        }
        numel = numel.checked_mul(extent as u64).ok_or_else(|| {
            Error::value_error(format!("{func}: the element count of shape {shape:?} overflows"))
        })?;
    }
    let bytes = checked_data_size(numel, t.dtype)
        .filter(|b| *b <= isize::MAX as u64)
        .ok_or_else(|| Error::value_error(format!("{func}: the byte size of shape {shape:?} overflows")))?;
    if t.data.is_null() && numel > 0 && t.device.device_type == tether_sys::dlpack::device_type::kDLCPU {
        return Err(Error::value_error(format!("{func}: data is NULL for a tensor of {numel} elements")));
    }
    if t.byte_offset.checked_add(bytes).is_none() {
        return Err(Error::value_error(format!("{func}: byte_offset {} overflows", t.byte_offset)));
    }
    // SAFETY: as for the shape; non-NULL strides have `ndim` entries.
    if let Some(strides) = unsafe { strides_of(t) } {
        check_strided_extent(shape, strides, t, func)?;
    }
    Ok(())
}

/// Strided tensors: the memory the strides address (from the lowest to the
/// highest element, in either direction) must have a byte size that fits,
/// with the byte offset, in the address space, as the packed size must.
/// A tensor with no elements addresses nothing, whatever its strides.
fn check_strided_extent(shape: &[i64], strides: &[i64], t: &DLTensor, func: &str) -> Result<(), Error> {
    if shape.contains(&0) {
        return Ok(());
    }
    let overflow = || {
        Error::value_error(format!("{func}: the memory addressed by shape {shape:?} and strides {strides:?} overflows"))
    };
    let mut span: u64 = 0;
    for (&extent, &stride) in shape.iter().zip(strides) {
        let reach = (extent as u64 - 1).checked_mul(stride.unsigned_abs()).ok_or_else(overflow)?;
        span = span.checked_add(reach).ok_or_else(overflow)?;
    }
    let bytes = span
        .checked_add(1)
        .and_then(|elements| checked_data_size(elements, t.dtype))
        .filter(|b| *b <= isize::MAX as u64)
        .ok_or_else(overflow)?;
    if t.byte_offset.checked_add(bytes).is_none() {
        return Err(overflow());
    }
    Ok(())
}

/// The alignment and contiguity requirements of `TVMFFITensorFromDLPack*`.
fn check_requirements(t: &DLTensor, require_alignment: i32, require_contiguous: bool) -> Result<(), Error> {
    if require_alignment < 0 {
        return Err(Error::value_error(format!("FromDLPack: require_alignment is negative ({require_alignment})")));
    }
    if require_alignment != 0 && !is_aligned(t, require_alignment as u64) {
        return Err(Error::runtime_error(format!("FromDLPack: Data is not aligned to {require_alignment} bytes.")));
    }
    // SAFETY: checked by `check_dl_tensor`; valid per the producer's contract.
    if require_contiguous && !is_contiguous(unsafe { shape_of(t) }, unsafe { strides_of(t) }) {
        return Err(Error::runtime_error("FromDLPack: Tensor is not contiguous."));
    }
    Ok(())
}

/// An owning handle to an `ffi.Tensor`.
#[derive(Clone)]
pub struct Tensor(ObjectPtr<TensorObj>);

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tensor(shape={:?}, dtype={:?}, device={:?})", self.shape(), self.dtype(), self.device())
    }
}

impl Tensor {
    /// Allocate a Tensor object describing `t` with `tail_i64` int64 slots
    /// after it, the owner still unattached. The caller attaches the owner
    /// and fixes up shape/strides before sharing it.
    fn allocate(t: &DLTensor, tail_i64: usize, flags: u64) -> Result<ObjectPtr<TensorObj>, Error> {
        let obj = TensorObj { header: header_placeholder(), dl_tensor: *t, owner: Owner::None, flags };
        let tail = tail_i64.checked_mul(8).ok_or_else(|| Error::value_error("tensor rank overflows"))?;
        // SAFETY: the tail holds i64s (no drop) and is filled by the caller
        // before the object is shared.
        let ptr = unsafe { ObjectPtr::new_with_tail(obj, tail, 8) }.map_err(Error::from)?;
        // SAFETY: sole owner of the fresh object; `tensor_deleter` does what
        // the deleter it replaces does, for this very type.
        unsafe { (*ptr.as_ptr()).header.deleter = Some(tensor_deleter) };
        Ok(ptr)
    }

    fn tail(ptr: &ObjectPtr<TensorObj>) -> *mut i64 {
        // SAFETY: the tail starts right after the struct (8-aligned: the
        // struct's size is a multiple of its 8-byte alignment).
        unsafe { (ptr.as_ptr() as *mut u8).add(std::mem::size_of::<TensorObj>()) as *mut i64 }
    }

    /// Adopt a producer's tensor: checks first (on failure the producer
    /// keeps ownership and no deleter runs), then the object borrows its
    /// shape and strides, with compact strides in the tail when it has none.
    fn adopt(t: &DLTensor, flags: u64, owner: Owner) -> Result<Tensor, Error> {
        let fill_strides = t.strides.is_null() && t.ndim > 0;
        let ptr = match Self::allocate(t, if fill_strides { t.ndim as usize } else { 0 }, flags) {
            Ok(p) => p,
            Err(e) => {
                // Nothing owns the producer's tensor yet: leave it to the caller.
                std::mem::forget(owner);
                return Err(e);
            }
        };
        let obj = ptr.as_ptr();
        // SAFETY: sole owner of a fresh object; shape has ndim entries
        // (checked by the caller) and the tail has room for ndim strides.
        unsafe {
            if fill_strides {
                let strides = compact_strides(shape_of(t));
                let tail = Self::tail(&ptr);
                ptr::copy_nonoverlapping(strides.as_ptr(), tail, strides.len());
                (*obj).dl_tensor.strides = tail;
            }
            (*obj).owner = owner;
        }
        Ok(Tensor(ptr))
    }

    /// `TVMFFITensorFromDLPack`: take ownership of a legacy managed tensor.
    ///
    /// # Safety
    /// `managed` must be a valid managed tensor the caller owns; on success
    /// its ownership moves to the Tensor, on error it stays with the caller.
    pub unsafe fn from_dlpack(
        managed: NonNull<DLManagedTensor>,
        require_alignment: i32,
        require_contiguous: bool,
    ) -> Result<Tensor, Error> {
        // SAFETY: valid per the caller.
        let t = unsafe { managed.as_ref().dl_tensor };
        check_dl_tensor(&t, "TVMFFITensorFromDLPack")?;
        check_requirements(&t, require_alignment, require_contiguous)?;
        Self::adopt(&t, 0, Owner::Legacy(managed))
    }

    /// `TVMFFITensorFromDLPackVersioned`: take ownership of a versioned
    /// managed tensor; its read-only and copied flags are kept.
    ///
    /// # Safety
    /// As [`Self::from_dlpack`].
    pub unsafe fn from_dlpack_versioned(
        managed: NonNull<DLManagedTensorVersioned>,
        require_alignment: i32,
        require_contiguous: bool,
    ) -> Result<Tensor, Error> {
        // SAFETY: valid per the caller.
        let (t, flags, version) = unsafe {
            let m = managed.as_ref();
            (m.dl_tensor, m.flags, m.version)
        };
        if version.major != DLPACK_MAJOR_VERSION {
            return Err(Error::runtime_error(format!(
                "FromDLPack: unsupported DLPack major version {} (this core reads {DLPACK_MAJOR_VERSION}.x)",
                version.major
            )));
        }
        check_dl_tensor(&t, "TVMFFITensorFromDLPackVersioned")?;
        check_requirements(&t, require_alignment, require_contiguous)?;
        if flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0 {
            return Err(Error::runtime_error("Subbyte type padded is not yet supported"));
        }
        let kept = flags & (DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED);
        Self::adopt(&t, kept, Owner::Versioned(managed))
    }

    /// Adopt what a DLPack allocator produced (no requirements checked).
    /// On error the managed tensor is released here, since its producer
    /// already handed it over.
    ///
    /// # Safety
    /// As [`Self::from_dlpack`], except that ownership always moves.
    pub(crate) unsafe fn adopt_allocated(managed: NonNull<DLManagedTensorVersioned>) -> Result<Tensor, Error> {
        // SAFETY: valid per the caller.
        let (t, flags) = unsafe { (managed.as_ref().dl_tensor, managed.as_ref().flags) };
        let release = || {
            // SAFETY: we own it and nothing else will release it.
            unsafe {
                if let Some(d) = (*managed.as_ptr()).deleter {
                    d(managed.as_ptr())
                }
            }
        };
        if let Err(e) = check_dl_tensor(&t, "TVMFFIEnvTensorAlloc") {
            release();
            return Err(e);
        }
        let kept = flags & (DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED);
        Self::adopt(&t, kept, Owner::Versioned(managed)).inspect_err(|_| release())
    }

    /// `TVMFFITensorCreateUnsafeView`: a Tensor with `prototype`'s metadata
    /// over memory of `source`, which it keeps alive. Shape and strides are
    /// copied into the view (compact strides when the prototype has none).
    ///
    /// # Safety
    /// `prototype` must be a valid `DLTensor`; its data must lie in memory
    /// owned by `source` (not checked: that is what "unsafe" view means).
    pub unsafe fn create_unsafe_view(source: &Tensor, prototype: &DLTensor) -> Result<Tensor, Error> {
        check_dl_tensor(prototype, "TVMFFITensorCreateUnsafeView")?;
        let ndim = prototype.ndim as usize;
        let ptr = Self::allocate(prototype, 2 * ndim, source.flags())?;
        let obj = ptr.as_ptr();
        // SAFETY: sole owner of a fresh object with 2 * ndim tail slots;
        // the prototype's arrays hold ndim entries each (caller contract).
        unsafe {
            let shape = shape_of(prototype);
            let strides = match strides_of(prototype) {
                Some(s) => s.to_vec(),
                None => compact_strides(shape),
            };
            let tail = Self::tail(&ptr);
            ptr::copy_nonoverlapping(shape.as_ptr(), tail, ndim);
            ptr::copy_nonoverlapping(strides.as_ptr(), tail.add(ndim), ndim);
            (*obj).dl_tensor.shape = tail;
            (*obj).dl_tensor.strides = tail.add(ndim);
            (*obj).owner = Owner::Source(source.0.to_object_ref());
        }
        Ok(Tensor(ptr))
    }

    /// A new legacy managed tensor sharing this Tensor's memory; its
    /// deleter releases the reference it holds on the Tensor.
    pub fn to_dlpack(&self) -> *mut DLManagedTensor {
        let obj = self.0.clone().into_object_ref().into_raw();
        Box::into_raw(Box::new(DLManagedTensor {
            dl_tensor: self.0.dl_tensor,
            manager_ctx: obj as *mut c_void,
            deleter: Some(release_legacy),
        }))
    }

    /// A new versioned managed tensor (DLPack 1.3) sharing this Tensor's
    /// memory, with the read-only and copied flags the data came with.
    pub fn to_dlpack_versioned(&self) -> *mut DLManagedTensorVersioned {
        let obj = self.0.clone().into_object_ref().into_raw();
        Box::into_raw(Box::new(DLManagedTensorVersioned {
            version: DLPackVersion { major: DLPACK_MAJOR_VERSION, minor: DLPACK_MINOR_VERSION },
            manager_ctx: obj as *mut c_void,
            deleter: Some(release_versioned),
            flags: self.flags(),
            dl_tensor: self.0.dl_tensor,
        }))
    }

    pub fn from_object(obj: ObjectRef) -> Result<Tensor, Error> {
        obj.downcast::<TensorObj>().map(Tensor).map_err(Error::from)
    }

    /// A new reference to a live Tensor object.
    ///
    /// # Safety
    /// `obj` must be a live object.
    pub unsafe fn from_raw_borrowed(obj: NonNull<TVMFFIObject>) -> Result<Tensor, Error> {
        // SAFETY: live per the caller.
        Self::from_object(unsafe { ObjectRef::from_raw_borrowed(obj) })
    }

    pub fn into_object(self) -> ObjectRef {
        self.0.into_object_ref()
    }

    /// The `DLTensor` right after the object header.
    pub fn dl_tensor(&self) -> &DLTensor {
        &self.0.dl_tensor
    }

    pub fn data(&self) -> *mut c_void {
        self.0.dl_tensor.data
    }
    pub fn device(&self) -> DLDevice {
        self.0.dl_tensor.device
    }
    pub fn dtype(&self) -> DLDataType {
        self.0.dl_tensor.dtype
    }
    pub fn ndim(&self) -> i32 {
        self.0.dl_tensor.ndim
    }
    pub fn byte_offset(&self) -> u64 {
        self.0.dl_tensor.byte_offset
    }
    pub fn shape(&self) -> &[i64] {
        // SAFETY: module invariant.
        unsafe { shape_of(&self.0.dl_tensor) }
    }
    /// `None` for a 0-d tensor whose producer gave no strides (every other
    /// Tensor has strides: borrowed, or computed at construction).
    pub fn strides(&self) -> Option<&[i64]> {
        // SAFETY: module invariant.
        unsafe { strides_of(&self.0.dl_tensor) }
    }
    /// DLPack flags kept from the producer (`DLPACK_FLAG_BITMASK_*`); 0 for
    /// a Tensor that C++ code constructed (upstream keeps no flags).
    pub fn flags(&self) -> u64 {
        let obj = self.0.as_ptr();
        if is_own_layout(obj) {
            // SAFETY: this core allocated the object, so the field exists.
            unsafe { ptr::addr_of!((*obj).flags).read() }
        } else {
            0
        }
    }
    pub fn is_read_only(&self) -> bool {
        self.flags() & DLPACK_FLAG_BITMASK_READ_ONLY != 0
    }
    /// Whether this core allocated the Tensor (else C++ code built against
    /// upstream's headers did, and only its header and `DLTensor` are known).
    pub fn is_own_layout(&self) -> bool {
        is_own_layout(self.0.as_ptr())
    }
    /// The element count: 0 when any extent is 0 (whatever the others, whose
    /// product alone may not fit), else the product of the extents, which
    /// adoption checked fits in u64; i64::MAX when it does not fit in i64
    /// (only sub-byte element types get there).
    pub fn numel(&self) -> i64 {
        let shape = self.shape();
        if shape.contains(&0) {
            return 0;
        }
        shape.iter().try_fold(1i64, |n, &extent| n.checked_mul(extent)).unwrap_or(i64::MAX)
    }
    pub fn is_contiguous(&self) -> bool {
        is_contiguous(self.shape(), self.strides())
    }
    pub fn is_aligned(&self, alignment: u64) -> bool {
        is_aligned(&self.0.dl_tensor, alignment)
    }
    /// Strong count of the Tensor object (a snapshot).
    pub fn use_count(&self) -> u32 {
        self.0.to_object_ref().use_count() - 1
    }
}

/// Deleter of the managed tensors [`Tensor::to_dlpack`] hands out.
unsafe extern "C" fn release_legacy(m: *mut DLManagedTensor) {
    if m.is_null() {
        return;
    }
    // SAFETY: `m` came from `to_dlpack` (Box) and holds one reference on
    // the Tensor in `manager_ctx`; DLPack calls the deleter once.
    unsafe {
        let m = Box::from_raw(m);
        crate::object::dec_ref(m.manager_ctx as *mut TVMFFIObject);
    }
}

/// Deleter of the managed tensors [`Tensor::to_dlpack_versioned`] hands out.
unsafe extern "C" fn release_versioned(m: *mut DLManagedTensorVersioned) {
    if m.is_null() {
        return;
    }
    // SAFETY: as in `release_legacy`.
    unsafe {
        let m = Box::from_raw(m);
        crate::object::dec_ref(m.manager_ctx as *mut TVMFFIObject);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguity_follows_upstream_rules() {
        assert!(is_contiguous(&[2, 3], None));
        assert!(is_contiguous(&[2, 3], Some(&[3, 1])));
        assert!(!is_contiguous(&[2, 3], Some(&[1, 2])));
        assert!(is_contiguous(&[2, 1, 3], Some(&[3, 99, 1])));
        assert!(is_contiguous(&[0, 3], Some(&[7, 7])));
        assert_eq!(compact_strides(&[2, 3, 4]), vec![12, 4, 1]);
    }
}
