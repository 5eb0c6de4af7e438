//! Tensors, DLPack and the environment through the exported C functions:
//! dtype strings against TVM-FFI's spellings, both DLPack forms with their
//! deleters counted, strides/offsets/0-d/zero-size layouts, every device
//! type, flags, the per-thread environment, and bad input.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tether_core::abi::{type_index as ti, DLDataType, DLDevice, TVMFFIAny, TVMFFIByteArray, TVMFFIObject, TVMFFIObjectHandle};
use tether_core::object::alloc_header::has_registry_marker;
use tether_core::c_api::*;
use tether_core::values::error::take_raised;
use tether_core::tensor::dtype;
use tether_core::{Any, AnyView, Array, Error, Function, ObjectRef, Tensor};
use tether_sys::dlpack::*;

fn dt(code: u8, bits: u8, lanes: u16) -> DLDataType {
    DLDataType { code, bits, lanes }
}

fn raised() -> Error {
    take_raised().expect("an error was raised")
}

// ---- data type strings ----------------------------------------------------

/// (input, code, bits, lanes, canonical string): TVM-FFI 0.1.15's answers.
const DTYPES: &[(&str, u8, u8, u16, &str)] = &[
    ("float32", 2, 32, 1, "float32"),
    ("float16", 2, 16, 1, "float16"),
    ("float64", 2, 64, 1, "float64"),
    ("bfloat16", 4, 16, 1, "bfloat16"),
    ("bf16", 4, 16, 1, "bfloat16"),
    ("int8", 0, 8, 1, "int8"),
    ("i8", 0, 8, 1, "int8"),
    ("int32", 0, 32, 1, "int32"),
    ("int", 0, 32, 1, "int32"),
    ("int0", 0, 32, 1, "int32"),
    ("int00008", 0, 8, 1, "int8"),
    ("int255", 0, 255, 1, "int255"),
    ("uint8", 1, 8, 1, "uint8"),
    ("u16", 1, 16, 1, "uint16"),
    ("uint", 1, 32, 1, "uint32"),
    ("uint1", 1, 1, 1, "uint1"),
    ("int1", 0, 1, 1, "int1"),
    ("bool", 6, 8, 1, "bool"),
    ("bool8", 6, 8, 1, "bool"),
    ("bool1", 6, 1, 1, "bool1"),
    ("boolx4", 6, 8, 4, "boolx4"),
    ("bool16x2", 6, 16, 2, "bool16x2"),
    ("handle", 3, 64, 1, "handle"),
    ("handle64", 3, 64, 1, "handle"),
    ("handle32", 3, 32, 1, "handle"),
    ("handlex2", 3, 64, 2, "handle"),
    ("void", 3, 0, 0, ""),
    ("", 3, 0, 0, ""),
    ("int8x4", 0, 8, 4, "int8x4"),
    ("float32x4", 2, 32, 4, "float32x4"),
    ("floatx4", 2, 32, 4, "float32x4"),
    ("float16x8", 2, 16, 8, "float16x8"),
    ("bfloat", 4, 16, 1, "bfloat16"),
    ("bfloat16x2", 4, 16, 2, "bfloat16x2"),
    ("f32", 2, 32, 1, "float32"),
    ("float8", 2, 8, 1, "float8"),
    ("float8_e3m4", 7, 8, 1, "float8_e3m4"),
    ("float8_e4m3", 8, 8, 1, "float8_e4m3"),
    ("float8_e4m3b11fnuz", 9, 8, 1, "float8_e4m3b11fnuz"),
    ("float8_e4m3fn", 10, 8, 1, "float8_e4m3fn"),
    ("float8_e4m3fnuz", 11, 8, 1, "float8_e4m3fnuz"),
    ("float8_e5m2", 12, 8, 1, "float8_e5m2"),
    ("float8_e5m2fnuz", 13, 8, 1, "float8_e5m2fnuz"),
    ("float8_e8m0fnu", 14, 8, 1, "float8_e8m0fnu"),
    ("float6_e2m3fn", 15, 6, 1, "float6_e2m3fn"),
    ("float6_e3m2fn", 16, 6, 1, "float6_e3m2fn"),
    ("float4_e2m1fn", 17, 4, 1, "float4_e2m1fn"),
    ("float4_e2m1fnx2", 17, 4, 2, "float4_e2m1fnx2"),
    ("float4_e2m1fn_x2", 17, 4, 2, "float4_e2m1fnx2"),
    ("float4_e2m1fn_", 17, 4, 1, "float4_e2m1fn"),
    ("float6_e2m3fnx2", 15, 6, 2, "float6_e2m3fnx2"),
    ("float8_e4m3fnx4", 10, 8, 4, "float8_e4m3fnx4"),
    ("fp8_e4m3fn", 10, 8, 1, "float8_e4m3fn"),
    ("f8_e5m2", 12, 8, 1, "float8_e5m2"),
    ("f8_e4m3fnuzx2", 11, 8, 2, "float8_e4m3fnuzx2"),
    ("fp6_e3m2fn", 16, 6, 1, "float6_e3m2fn"),
    ("fp4_e2m1fn", 17, 4, 1, "float4_e2m1fn"),
    ("f4_e2m1fn", 17, 4, 1, "float4_e2m1fn"),
    ("int32xvscalex4", 0, 32, 65532, "int32xvscalex4"),
    ("float32xvscalex2", 2, 32, 65534, "float32xvscalex2"),
    ("boolxvscalex4", 6, 8, 65532, "boolxvscalex4"),
    ("int8xvscale", 0, 8, 1, "int8"),
    ("int8x32768", 0, 8, 32768, "int8xvscalex32768"),
    ("int8xvscalex32769", 0, 8, 32767, "int8x32767"),
];

/// (input, message): every one is a ValueError in TVM-FFI with this text.
const BAD_DTYPES: &[(&str, &str)] = &[
    ("float8_e9m9", "unknown float8 type `float8_e9m9`"),
    ("fp8_", "unknown float8 type `float8_`"),
    ("float6_", "unknown float6 type `float6_`"),
    ("float4_", "unknown float4 type `float4_`"),
    ("int8x0", "Invalid lanes specification in dtype 'int8x0'. Lanes must be a positive integer."),
    ("int8x", "Invalid lanes specification in dtype 'int8x'. Lanes must be a positive integer."),
    ("float4_e2m1fnx", "Invalid lanes specification in dtype 'float4_e2m1fnx'. Lanes must be a positive integer."),
    ("int8xvscalex0", "Invalid lanes specification in dtype 'int8xvscalex0'. Lanes must be a positive integer."),
    ("int8x65536", "Lanes value 65536 is out of range for uint16_t in dtype 'int8x65536'"),
    ("int256", "Bits value 256 is out of range for uint8_t in dtype 'int256'"),
    ("int4294967296", "Integer value in dtype string '4294967296' is out of range for uint32_t"),
    ("xyz", "unknown dtype `xyz`"),
    ("float32 ", "unknown dtype `float32 `"),
    ("int32x4y", "unknown dtype `int32x4y`"),
    ("int8x4x4", "unknown dtype `int8x4x4`"),
    ("float8_e4m3fn_x2", "unknown float8 type `float8_e4m3fn_x2`"),
    ("complex64", "unknown dtype `complex64`"),
    ("fp32", "unknown dtype `fp32`"),
    ("bf", "unknown dtype `bf`"),
    ("i", "unknown dtype `i`"),
    ("custom", "expected opening brace after 'custom' type incustom"),
    ("custom[", "expected closing brace after 'custom' type incustom["),
];

fn parse_c(s: &str) -> Result<DLDataType, Error> {
    let b = TVMFFIByteArray::from_slice(s.as_bytes());
    let mut out = DLDataType::default();
    // SAFETY: valid input and output.
    match unsafe { TVMFFIDataTypeFromString(&b, &mut out) } {
        0 => Ok(out),
        _ => Err(raised()),
    }
}

fn print_c(d: DLDataType) -> Result<String, Error> {
    let mut out = TVMFFIAny::NONE;
    // SAFETY: valid input and output.
    match unsafe { TVMFFIDataTypeToString(&d, &mut out) } {
        // SAFETY: the function hands us an owned value.
        0 => unsafe { Any::from_raw_owned(out) }.get::<String>(),
        _ => Err(raised()),
    }
}

#[test]
fn dtype_strings_parse_print_and_round_trip_like_upstream() {
    for &(s, code, bits, lanes, canonical) in DTYPES {
        let d = parse_c(s).unwrap_or_else(|e| panic!("{s:?}: {}", e.message()));
        assert_eq!(d, dt(code, bits, lanes), "parsing {s:?}");
        assert_eq!(print_c(d).unwrap(), canonical, "printing {s:?}");
        // The canonical spelling reads back to what prints it.
        let again = parse_c(canonical).unwrap();
        assert_eq!(print_c(again).unwrap(), canonical, "round trip of {canonical:?}");
    }
}

#[test]
fn bad_dtype_strings_are_value_errors_with_upstream_messages() {
    for &(s, message) in BAD_DTYPES {
        let e = parse_c(s).expect_err(s);
        assert_eq!(e.kind(), "ValueError", "{s:?}");
        assert_eq!(e.message(), message, "{s:?}");
    }
    let bad_utf8 = TVMFFIByteArray { data: b"\xff\xfe".as_ptr() as *const _, size: 2 };
    let mut out = DLDataType::default();
    // SAFETY: valid pointers; the content is not UTF-8.
    assert_ne!(unsafe { TVMFFIDataTypeFromString(&bad_utf8, &mut out) }, 0);
    assert_eq!(raised().kind(), "ValueError");
}

#[test]
fn dtype_printing_rejects_unknown_codes_and_asks_the_custom_registry() {
    for code in [5u8, 18, 100, 128] {
        let e = print_c(dt(code, 8, 1)).unwrap_err();
        assert_eq!(e.message(), format!("DLDataType contains unknown type_code={code}"));
    }
    // Only this test registers the custom-type registry's functions.
    assert_eq!(print_c(dt(129, 8, 1)).unwrap_err().message(), "Function dtype.get_custom_type_name not found");
    assert_eq!(parse_c("custom[foo]").unwrap_err().message(), "Function dtype.get_custom_type_code not found");
    assert_eq!(print_c(dt(2, 32, 0)).unwrap(), "float32");
    assert_eq!(print_c(dt(6, 8, 0)).unwrap(), "bool");
    assert_eq!(print_c(dt(10, 8, 65532)).unwrap(), "float8_e4m3fnxvscalex4");
    // A registry (TVM's) names custom codes both ways.
    Function::register_global("dtype.get_custom_type_name", |args| {
        assert_eq!(args[0].get::<i64>()?, 130);
        Any::string("posit")
    })
    .unwrap();
    Function::register_global("dtype.get_custom_type_code", |args| {
        assert_eq!(args[0].get::<String>()?, "posit");
        Ok(Any::from(130i64))
    })
    .unwrap();
    assert_eq!(print_c(dt(130, 16, 2)).unwrap(), "custom[posit]x2");
    assert_eq!(parse_c("custom[posit]16x2").unwrap(), dt(130, 16, 2));
    assert_eq!(dtype::from_str("custom[posit]").unwrap(), dt(130, 32, 1));
}

#[test]
fn dtype_c_functions_refuse_null() {
    let mut out = DLDataType::default();
    // SAFETY: NULL inputs are reported, not read.
    unsafe {
        assert_ne!(TVMFFIDataTypeFromString(ptr::null(), &mut out), 0);
        assert_eq!(raised().kind(), "ValueError");
        let b = TVMFFIByteArray::from_slice(b"int8");
        assert_ne!(TVMFFIDataTypeFromString(&b, ptr::null_mut()), 0);
        raised();
        let mut out = TVMFFIAny::NONE;
        assert_ne!(TVMFFIDataTypeToString(ptr::null(), &mut out), 0);
        raised();
    }
}

// ---- DLPack producers with counted deleters --------------------------------

/// What a test producer owns: the data, shape and strides, and the counter
/// its deleter bumps.
struct Producer {
    _data: Vec<f32>,
    _shape: Vec<i64>,
    _strides: Option<Vec<i64>>,
    deleted: Arc<AtomicUsize>,
}

fn make_dl(data: &mut Vec<f32>, shape: &mut Vec<i64>, strides: &mut Option<Vec<i64>>, device: DLDevice) -> DLTensor {
    DLTensor {
        data: data.as_mut_ptr() as *mut c_void,
        device,
        ndim: shape.len() as i32,
        dtype: dt(2, 32, 1),
        shape: if shape.is_empty() { ptr::null_mut() } else { shape.as_mut_ptr() },
        strides: strides.as_mut().map_or(ptr::null_mut(), |s| s.as_mut_ptr()),
        byte_offset: 0,
    }
}

const CPU: DLDevice = DLDevice { device_type: device_type::kDLCPU, device_id: 0 };

unsafe extern "C" fn legacy_deleter(m: *mut DLManagedTensor) {
    // SAFETY: made by `legacy` below; DLPack calls this once.
    unsafe {
        let m = Box::from_raw(m);
        let p = Box::from_raw(m.manager_ctx as *mut Producer);
        p.deleted.fetch_add(1, Ordering::SeqCst);
    }
}

unsafe extern "C" fn versioned_deleter(m: *mut DLManagedTensorVersioned) {
    // SAFETY: made by `versioned` below; DLPack calls this once.
    unsafe {
        let m = Box::from_raw(m);
        let p = Box::from_raw(m.manager_ctx as *mut Producer);
        p.deleted.fetch_add(1, Ordering::SeqCst);
    }
}

fn legacy(shape: &[i64], strides: Option<&[i64]>, device: DLDevice) -> (*mut DLManagedTensor, Arc<AtomicUsize>) {
    let numel: i64 = shape.iter().product::<i64>().max(1);
    let mut data: Vec<f32> = (0..numel).map(|i| i as f32).collect();
    let mut shape = shape.to_vec();
    let mut strides = strides.map(|s| s.to_vec());
    let dl = make_dl(&mut data, &mut shape, &mut strides, device);
    let deleted = Arc::new(AtomicUsize::new(0));
    let p = Box::new(Producer { _data: data, _shape: shape, _strides: strides, deleted: deleted.clone() });
    let m = Box::new(DLManagedTensor { dl_tensor: dl, manager_ctx: Box::into_raw(p) as *mut c_void, deleter: Some(legacy_deleter) });
    (Box::into_raw(m), deleted)
}

fn versioned(shape: &[i64], strides: Option<&[i64]>, device: DLDevice, flags: u64) -> (*mut DLManagedTensorVersioned, Arc<AtomicUsize>) {
    let (m, deleted) = legacy(shape, strides, device);
    // SAFETY: we made `m`; move its contents into a versioned tensor.
    let m = unsafe { Box::from_raw(m) };
    let v = Box::new(DLManagedTensorVersioned {
        version: DLPackVersion { major: 1, minor: 1 },
        manager_ctx: m.manager_ctx,
        deleter: Some(versioned_deleter),
        flags,
        dl_tensor: m.dl_tensor,
    });
    (Box::into_raw(v), deleted)
}

fn from_legacy(m: *mut DLManagedTensor, align: i32, contiguous: bool) -> Result<TVMFFIObjectHandle, Error> {
    let mut out: TVMFFIObjectHandle = ptr::null_mut();
    // SAFETY: `m` is a managed tensor we own.
    match unsafe { TVMFFITensorFromDLPack(m, align, contiguous as i32, &mut out) } {
        0 => Ok(out),
        _ => Err(raised()),
    }
}

fn from_versioned(m: *mut DLManagedTensorVersioned, align: i32, contiguous: bool) -> Result<TVMFFIObjectHandle, Error> {
    let mut out: TVMFFIObjectHandle = ptr::null_mut();
    // SAFETY: as above.
    match unsafe { TVMFFITensorFromDLPackVersioned(m, align, contiguous as i32, &mut out) } {
        0 => Ok(out),
        _ => Err(raised()),
    }
}

/// The DLTensor C++ code reads at `obj + sizeof(TVMFFIObject)`.
fn dl_at(h: TVMFFIObjectHandle) -> &'static DLTensor {
    // SAFETY: `h` is a live Tensor in these tests.
    unsafe { &*((h as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const DLTensor) }
}

fn dec_ref(h: TVMFFIObjectHandle) {
    // SAFETY: we own one reference.
    assert_eq!(unsafe { TVMFFIObjectDecRef(h) }, 0);
}

fn tensor(h: TVMFFIObjectHandle) -> Tensor {
    // SAFETY: a live handle.
    unsafe { Tensor::from_raw_borrowed(ptr::NonNull::new(h as *mut TVMFFIObject).unwrap()) }.unwrap()
}

#[test]
fn legacy_round_trip_calls_each_deleter_exactly_once() {
    let (m, deleted) = legacy(&[2, 3], None, CPU);
    // SAFETY: reading our own managed tensor before handing it over.
    let (data, shape_ptr) = unsafe { ((*m).dl_tensor.data, (*m).dl_tensor.shape) };
    let h = from_legacy(m, 0, false).unwrap();
    // SAFETY: a live object.
    unsafe {
        assert_eq!((*(h as *mut TVMFFIObject)).type_index, ti::kTVMFFITensor);
        assert!(has_registry_marker(h as *const TVMFFIObject), "allocated through the registry");
    }
    let dl = dl_at(h);
    assert_eq!(dl.data, data);
    assert_eq!(dl.shape, shape_ptr, "the producer's shape is borrowed, as upstream");
    // SAFETY: the Tensor computed 2 strides.
    assert_eq!(unsafe { std::slice::from_raw_parts(dl.strides, 2) }, &[3, 1]);
    assert_eq!(tensor(h).numel(), 6);
    assert!(tensor(h).is_contiguous());

    let mut out: *mut DLManagedTensor = ptr::null_mut();
    // SAFETY: a live Tensor and an output slot.
    assert_eq!(unsafe { TVMFFITensorToDLPack(h, &mut out) }, 0);
    // SAFETY: the managed tensor we were handed.
    let exported = unsafe { &*out };
    assert_eq!(exported.dl_tensor.data, data);
    assert_eq!(exported.dl_tensor.shape, dl.shape);
    assert_eq!(exported.manager_ctx, h);
    dec_ref(h);
    assert_eq!(deleted.load(Ordering::SeqCst), 0, "the exported tensor keeps the Tensor alive");
    // SAFETY: reading data through the still-alive export, then its deleter once.
    unsafe {
        assert_eq!(*(exported.dl_tensor.data as *const f32).add(5), 5.0);
        (exported.deleter.unwrap())(out);
    }
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
}

#[test]
fn versioned_round_trip_keeps_flags_and_calls_deleters_once() {
    let flags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
    let (m, deleted) = versioned(&[4], Some(&[1]), CPU, flags);
    // SAFETY: reading our own tensor.
    let strides_ptr = unsafe { (*m).dl_tensor.strides };
    let h = from_versioned(m, 4, true).unwrap();
    assert_eq!(dl_at(h).strides, strides_ptr, "given strides are borrowed");
    let t = tensor(h);
    assert!(t.is_read_only());
    assert_eq!(t.flags(), flags);
    let mut out: *mut DLManagedTensorVersioned = ptr::null_mut();
    // SAFETY: a live Tensor.
    assert_eq!(unsafe { TVMFFITensorToDLPackVersioned(h, &mut out) }, 0);
    // SAFETY: the managed tensor we were handed.
    let v = unsafe { &*out };
    assert_eq!(v.version, DLPackVersion { major: 1, minor: 3 });
    assert_eq!(v.flags, flags);
    assert_eq!(v.dl_tensor.ndim, 1);
    drop(t);
    dec_ref(h);
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
    // SAFETY: the deleter of what we were handed, once.
    unsafe { (v.deleter.unwrap())(out) };
    assert_eq!(deleted.load(Ordering::SeqCst), 1);

    // Writable data exports without the read-only flag.
    let (m, deleted) = versioned(&[4], None, CPU, 0);
    let h = from_versioned(m, 0, false).unwrap();
    // SAFETY: a live Tensor.
    assert_eq!(unsafe { TVMFFITensorToDLPackVersioned(h, &mut out) }, 0);
    // SAFETY: the managed tensor we were handed.
    unsafe {
        assert_eq!((*out).flags, 0);
        ((*out).deleter.unwrap())(out);
    }
    dec_ref(h);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
}

#[test]
fn zero_d_zero_size_offsets_and_strided_views() {
    // 0-d: no shape, no strides.
    let (m, deleted) = legacy(&[], None, CPU);
    let h = from_legacy(m, 0, true).unwrap();
    let t = tensor(h);
    assert_eq!((t.ndim(), t.numel(), t.shape()), (0, 1, &[][..]));
    assert!(t.strides().is_none());
    drop(t);
    dec_ref(h);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);

    // Zero-size: contiguous whatever the strides.
    let (m, deleted) = legacy(&[0, 3], Some(&[7, 7]), CPU);
    let h = from_legacy(m, 0, true).unwrap();
    assert_eq!(tensor(h).numel(), 0);
    dec_ref(h);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);

    // A transposed (non-contiguous) layout with a byte offset.
    let (m, deleted) = legacy(&[3, 2], Some(&[1, 3]), CPU);
    // SAFETY: adjusting our own tensor before handing it over.
    unsafe { (*m).dl_tensor.byte_offset = 8 };
    let e = from_legacy(m, 0, true).unwrap_err();
    assert_eq!((e.kind(), e.message()), ("RuntimeError", "FromDLPack: Tensor is not contiguous."));
    assert_eq!(deleted.load(Ordering::SeqCst), 0, "a refused tensor stays with its producer");
    let h = from_legacy(m, 0, false).unwrap();
    let t = tensor(h);
    assert_eq!((t.strides().unwrap(), t.byte_offset()), (&[1, 3][..], 8));
    assert!(!t.is_contiguous());

    // A view over a column keeps the source alive, with its own shape/strides.
    let mut shape = [3i64];
    let mut strides = [3i64];
    let proto = DLTensor { shape: shape.as_mut_ptr(), strides: strides.as_mut_ptr(), ndim: 1, ..*t.dl_tensor() };
    let mut view: TVMFFIObjectHandle = ptr::null_mut();
    // SAFETY: the prototype lies in the source's memory.
    assert_eq!(unsafe { TVMFFITensorCreateUnsafeView(h, &proto, &mut view) }, 0);
    std::hint::black_box(&mut shape)[0] = 99; // copied, not borrowed
    let v = tensor(view);
    assert_eq!((v.shape(), v.strides().unwrap(), v.byte_offset()), (&[3][..], &[3][..], 8));
    assert_eq!(v.data(), t.data());
    drop(t);
    dec_ref(h);
    assert_eq!(deleted.load(Ordering::SeqCst), 0, "the view holds the source");
    drop(v);
    dec_ref(view);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
}

#[test]
fn alignment_is_checked_on_addresses_or_offsets_by_device() {
    let (m, deleted) = legacy(&[4], None, CPU);
    // SAFETY: adjusting our own tensor: data + 2 bytes is 2-aligned only.
    unsafe { (*m).dl_tensor.data = ((*m).dl_tensor.data as *mut u8).add(2) as *mut c_void };
    let e = from_legacy(m, 4, false).unwrap_err();
    assert_eq!((e.kind(), e.message()), ("RuntimeError", "FromDLPack: Data is not aligned to 4 bytes."));
    let e = from_legacy(m, -8, false).unwrap_err();
    assert_eq!(e.kind(), "ValueError");
    let h = from_legacy(m, 2, false).unwrap();
    dec_ref(h);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);

    // Vulkan data pointers are handles: only byte_offset counts.
    let vulkan = DLDevice { device_type: device_type::kDLVulkan, device_id: 0 };
    let (m, deleted) = versioned(&[4], None, vulkan, 0);
    // SAFETY: adjusting our own tensor; the pointer is never dereferenced.
    unsafe {
        (*m).dl_tensor.data = 0x1003 as *mut c_void;
        (*m).dl_tensor.byte_offset = 4;
    }
    assert_eq!(from_versioned(m, 8, false).unwrap_err().message(), "FromDLPack: Data is not aligned to 8 bytes.");
    let h = from_versioned(m, 4, false).unwrap();
    dec_ref(h);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
}

#[test]
fn every_device_type_is_carried_without_touching_the_data() {
    for (i, &device_type) in device_type::ALL.iter().enumerate() {
        let device = DLDevice { device_type, device_id: i as i32 };
        let (m, deleted) = versioned(&[2, 2], None, device, 0);
        let fake = (0x10000 + i * 0x100) as *mut c_void;
        // SAFETY: our own tensor; a device pointer the CPU never reads.
        unsafe { (*m).dl_tensor.data = fake };
        let h = from_versioned(m, 0, false).unwrap();
        assert_eq!((dl_at(h).device, dl_at(h).data), (device, fake));
        let mut out: *mut DLManagedTensor = ptr::null_mut();
        // SAFETY: a live Tensor; then the export's deleter once.
        unsafe {
            assert_eq!(TVMFFITensorToDLPack(h, &mut out), 0);
            assert_eq!(((*out).dl_tensor.device, (*out).dl_tensor.data), (device, fake));
            ((*out).deleter.unwrap())(out);
        }
        dec_ref(h);
        assert_eq!(deleted.load(Ordering::SeqCst), 1);
    }
    let devices = Array::new(vec![Any::from(1i64)]).unwrap();
    let find = Function::get_global("ffi.ContainerFindFirstNonCPUDevice").unwrap();
    assert_eq!(find.call(&[Any::from_object(devices.into_object())]).unwrap().get::<DLDevice>().unwrap(), CPU);
    let (m1, _) = versioned(&[1], None, CPU, 0);
    let rocm = DLDevice { device_type: device_type::kDLROCM, device_id: 3 };
    let (m2, _) = versioned(&[1], None, rocm, 0);
    // SAFETY: handles we own move into the Anys.
    let (t1, t2) = unsafe {
        let a = from_versioned(m1, 0, false).unwrap();
        let b = from_versioned(m2, 0, false).unwrap();
        (ObjectRef::from_raw_owned(ptr::NonNull::new(a as *mut _).unwrap()), ObjectRef::from_raw_owned(ptr::NonNull::new(b as *mut _).unwrap()))
    };
    let inner = Array::new(vec![Any::from_object(t2)]).unwrap();
    let outer = Array::new(vec![Any::from_object(t1), Any::from_object(inner.into_object())]).unwrap();
    let found = find.call(&[Any::from_object(outer.into_object())]).unwrap();
    assert_eq!(found.type_index(), ti::kTVMFFIDevice);
    assert_eq!(found.get::<DLDevice>().unwrap(), rocm);
}

#[test]
fn refused_input_is_reported_and_leaves_ownership_alone() {
    let (m, deleted) = versioned(&[2], None, CPU, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);
    let e = from_versioned(m, 0, false).unwrap_err();
    assert_eq!((e.kind(), e.message()), ("RuntimeError", "Subbyte type padded is not yet supported"));
    // SAFETY: our own tensor, still ours.
    unsafe {
        (*m).flags = 0;
        (*m).version.major = 2;
    }
    assert!(from_versioned(m, 0, false).unwrap_err().message().contains("major version 2"));
    // SAFETY: as above.
    unsafe {
        (*m).version.major = 1;
        (*m).dl_tensor.ndim = -1;
    }
    assert_eq!(from_versioned(m, 0, false).unwrap_err().kind(), "ValueError");
    // SAFETY: as above: a 1-d tensor with no shape.
    unsafe {
        (*m).dl_tensor.ndim = 1;
        (*m).dl_tensor.shape = ptr::null_mut();
    }
    assert_eq!(from_versioned(m, 0, false).unwrap_err().kind(), "ValueError");
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
    // SAFETY: we still own it: release it ourselves, once.
    unsafe { ((*m).deleter.unwrap())(m) };
    assert_eq!(deleted.load(Ordering::SeqCst), 1);

    let mut out: TVMFFIObjectHandle = ptr::null_mut();
    let mut managed: *mut DLManagedTensor = ptr::null_mut();
    let s = Any::string("not a tensor but long enough to be an object").unwrap();
    let obj = s.object_ptr().unwrap() as TVMFFIObjectHandle;
    // SAFETY: NULL and wrong-typed inputs are reported, never dereferenced wrongly.
    unsafe {
        assert_ne!(TVMFFITensorFromDLPack(ptr::null_mut(), 0, 0, &mut out), 0);
        assert_eq!(raised().message(), "TVMFFITensorFromDLPack: managed tensor is NULL");
        assert_ne!(TVMFFITensorToDLPack(ptr::null_mut(), &mut managed), 0);
        raised();
        assert_ne!(TVMFFITensorToDLPack(obj, &mut managed), 0);
        let e = raised();
        assert_eq!((e.kind(), e.message()), ("TypeError", "TVMFFITensorToDLPack: expected ffi.Tensor, got ffi.String"));
        assert_ne!(TVMFFITensorCreateUnsafeView(obj, ptr::null(), &mut out), 0);
        assert_eq!(raised().kind(), "TypeError");
        let (m, deleted) = legacy(&[1], None, CPU);
        assert_ne!(TVMFFITensorFromDLPack(m, 0, 0, ptr::null_mut()), 0);
        raised();
        assert_eq!(deleted.load(Ordering::SeqCst), 0);
        ((*m).deleter.unwrap())(m);
    }
}

// ---- Any ----------------------------------------------------------------

#[test]
fn data_types_devices_and_tensor_pointers_as_values() {
    let d = dt(2, 16, 4);
    let dev = DLDevice { device_type: device_type::kDLCUDA, device_id: 7 };
    let a = Any::from(d);
    assert_eq!(a.type_index(), ti::kTVMFFIDataType);
    assert_eq!(a.view().to_owned().unwrap().get::<DLDataType>().unwrap(), d);
    let b = Any::from(dev);
    assert_eq!(b.type_index(), ti::kTVMFFIDevice);
    assert_eq!(b.view().to_owned().unwrap().get::<DLDevice>().unwrap(), dev);
    // Strings convert, as in upstream's type traits.
    assert_eq!(Any::string("bfloat16").unwrap().get::<DLDataType>().unwrap(), dt(4, 16, 1));
    assert_eq!(Any::string("cuda:7").unwrap().get::<DLDevice>().unwrap(), dev);
    assert_eq!(Any::from(1i64).get::<DLDevice>().unwrap_err().kind(), "TypeError");
    assert_eq!(Any::string("tpu:0").unwrap().get::<DLDevice>().unwrap_err().kind(), "TypeError");

    // A DLTensor* view owned stays the same borrowed pointer (upstream).
    let mut x = 0f32;
    let mut t = DLTensor { data: &mut x as *mut f32 as *mut c_void, device: CPU, ndim: 0, dtype: dt(2, 32, 1), shape: ptr::null_mut(), strides: ptr::null_mut(), byte_offset: 0 };
    let mut view = TVMFFIAny::NONE;
    view.type_index = ti::kTVMFFIDLTensorPtr;
    view.value.v_ptr = &mut t as *mut DLTensor as *mut c_void;
    let mut owned = TVMFFIAny::NONE;
    // SAFETY: a valid view and output.
    assert_eq!(unsafe { TVMFFIAnyViewToOwnedAny(&view, &mut owned) }, 0);
    // SAFETY: reading the payload of a POD value.
    assert_eq!((owned.type_index, unsafe { owned.value.v_ptr }), (ti::kTVMFFIDLTensorPtr, view.value_ptr()));
    // SAFETY: a POD view of `t`, alive for the call.
    let echo = Function::from_closure(|args| args[0].to_owned()).unwrap();
    let echoed = echo.call_views(&[unsafe { AnyView::from_raw(view) }]).unwrap();
    assert_eq!(echoed.type_index(), ti::kTVMFFIDLTensorPtr);
}

trait ValuePtr {
    fn value_ptr(&self) -> *mut c_void;
}
impl ValuePtr for TVMFFIAny {
    fn value_ptr(&self) -> *mut c_void {
        // SAFETY: every payload is 8 plain bytes.
        unsafe { self.value.v_ptr }
    }
}

// ---- environment ----------------------------------------------------------

#[test]
fn streams_are_per_thread_and_per_device() {
    let s1 = 0x51 as TVMFFIStreamHandle;
    let s2 = 0x52 as TVMFFIStreamHandle;
    let mut old: TVMFFIStreamHandle = 0x1 as _;
    // SAFETY: valid output slots.
    unsafe {
        assert!(TVMFFIEnvGetStream(2, 0).is_null());
        assert_eq!(TVMFFIEnvSetStream(2, 0, s1, &mut old), 0);
        assert!(old.is_null());
        assert_eq!(TVMFFIEnvSetStream(2, 1, s2, ptr::null_mut()), 0);
        assert_eq!((TVMFFIEnvGetStream(2, 0), TVMFFIEnvGetStream(2, 1), TVMFFIEnvGetStream(10, 0)), (s1, s2, ptr::null_mut()));
        assert_eq!(TVMFFIEnvSetStream(2, 0, s2, &mut old), 0);
        assert_eq!(old, s1);
        assert_ne!(TVMFFIEnvSetStream(-1, 0, s1, ptr::null_mut()), 0);
        assert_eq!(raised().kind(), "ValueError");
    }
    let other = std::thread::spawn(|| {
        // SAFETY: as above.
        unsafe {
            let unset = TVMFFIEnvGetStream(2, 0).is_null();
            TVMFFIEnvSetStream(2, 0, 0x99 as _, ptr::null_mut());
            (unset, TVMFFIEnvGetStream(2, 0) as usize)
        }
    })
    .join()
    .unwrap();
    assert_eq!(other, (true, 0x99));
    assert_eq!(TVMFFIEnvGetStream(2, 0), s2, "another thread's stream is its own");
}

static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
static FREED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn env_deleter(m: *mut DLManagedTensorVersioned) {
    // SAFETY: made by `cpu_allocator`.
    unsafe {
        let m = Box::from_raw(m);
        drop(Box::from_raw(m.manager_ctx as *mut (Vec<u8>, Vec<i64>)));
    }
    FREED.fetch_add(1, Ordering::SeqCst);
}

/// A DLPack allocator for CPU tensors with compact layout (no strides).
unsafe extern "C" fn cpu_allocator(
    prototype: *mut DLTensor,
    out: *mut *mut DLManagedTensorVersioned,
    error_ctx: *mut c_void,
    set_error: Option<DLPackSetError>,
) -> i32 {
    // SAFETY: the core passes the caller's prototype and an output slot.
    unsafe {
        let p = &*prototype;
        if p.device.device_type != device_type::kDLCPU {
            set_error.unwrap()(error_ctx, c"ValueError".as_ptr(), c"cpu_allocator: CPU only".as_ptr());
            return -7;
        }
        let shape = std::slice::from_raw_parts(p.shape, p.ndim as usize).to_vec();
        let bytes = (shape.iter().product::<i64>() as usize) * (p.dtype.bits as usize / 8);
        let mut keep = Box::new((vec![0u8; bytes], shape));
        let dl = DLTensor { data: keep.0.as_mut_ptr() as *mut c_void, shape: keep.1.as_mut_ptr(), strides: ptr::null_mut(), byte_offset: 0, ..*p };
        *out = Box::into_raw(Box::new(DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 3 },
            manager_ctx: Box::into_raw(keep) as *mut c_void,
            deleter: Some(env_deleter),
            flags: 0,
            dl_tensor: dl,
        }));
    }
    ALLOCATED.fetch_add(1, Ordering::SeqCst);
    0
}

fn env_alloc(shape: &mut [i64], device: DLDevice) -> Result<TVMFFIObjectHandle, (i32, Error)> {
    let mut proto = DLTensor { data: ptr::null_mut(), device, ndim: shape.len() as i32, dtype: dt(2, 32, 1), shape: shape.as_mut_ptr(), strides: ptr::null_mut(), byte_offset: 0 };
    let mut out: TVMFFIObjectHandle = ptr::null_mut();
    // SAFETY: a valid prototype and output slot.
    match unsafe { TVMFFIEnvTensorAlloc(&mut proto, &mut out) } {
        0 => Ok(out),
        rc => Err((rc, raised())),
    }
}

/// One test for everything that touches the process-wide allocator, so no
/// other test thread sees it change.
#[test]
fn env_tensor_alloc_goes_through_the_thread_or_process_allocator() {
    assert!(TVMFFIEnvGetDLPackManagedTensorAllocator().is_none());
    let (_, e) = env_alloc(&mut [2], CPU).unwrap_err();
    assert_eq!(e.kind(), "RuntimeError");
    assert!(e.message().starts_with("TVMFFIEnvTensorAlloc: allocator is nullptr"), "{}", e.message());

    let mut old: DLPackManagedTensorAllocator = None;
    // SAFETY: a valid allocator and output slot.
    assert_eq!(unsafe { TVMFFIEnvSetDLPackManagedTensorAllocator(Some(cpu_allocator), 0, &mut old) }, 0);
    assert!(old.is_none());
    let h = env_alloc(&mut [2, 5], CPU).unwrap();
    let t = tensor(h);
    assert_eq!((t.shape(), t.strides().unwrap()), (&[2, 5][..], &[5, 1][..]));
    assert!(!t.data().is_null());
    assert_eq!(ALLOCATED.load(Ordering::SeqCst) - FREED.load(Ordering::SeqCst), 1);
    drop(t);
    dec_ref(h);
    assert_eq!(ALLOCATED.load(Ordering::SeqCst), FREED.load(Ordering::SeqCst), "the Tensor released it once");

    // The allocator's own failure passes through with its code.
    let (rc, e) = env_alloc(&mut [1], DLDevice { device_type: device_type::kDLCUDA, device_id: 0 }).unwrap_err();
    assert_eq!((rc, e.kind(), e.message()), (-7, "ValueError", "cpu_allocator: CPU only"));

    // Thread-local: another thread has none until the process-wide one is set.
    let other = || std::thread::spawn(|| env_alloc(&mut [3], CPU).map(dec_ref).is_ok()).join().unwrap();
    assert!(!other());
    // SAFETY: as above.
    unsafe {
        assert_eq!(TVMFFIEnvSetDLPackManagedTensorAllocator(Some(cpu_allocator), 1, ptr::null_mut()), 0);
        assert!(other());
        assert_eq!(TVMFFIEnvSetDLPackManagedTensorAllocator(None, 1, &mut old), 0);
        assert!(old.is_some());
        assert!(TVMFFIEnvGetDLPackManagedTensorAllocator().is_none());
        let mut proto = DLTensor { data: ptr::null_mut(), device: CPU, ndim: 0, dtype: dt(2, 32, 1), shape: ptr::null_mut(), strides: ptr::null_mut(), byte_offset: 0 };
        assert_ne!(TVMFFIEnvTensorAlloc(&mut proto, ptr::null_mut()), 0);
        raised();
        assert_ne!(TVMFFIEnvTensorAlloc(ptr::null_mut(), &mut ptr::null_mut()), 0);
        raised();
    }
    assert_eq!(ALLOCATED.load(Ordering::SeqCst), FREED.load(Ordering::SeqCst));
}

#[test]
fn hostile_dlpack_tensors_are_refused_before_adoption() {
    // Each case mutates a fresh producer's tensor; the refusal leaves it ours.
    type Mutate = fn(&mut DLTensor);
    let cases: [(Mutate, &str); 7] = [
        (|t| t.dtype.bits = 0, "has no bits or no lanes"),
        (|t| t.dtype.lanes = 0, "has no bits or no lanes"),
        (|t| t.ndim = 1 << 20, "is outside 0..="),
        (|t| t.data = ptr::null_mut(), "data is NULL for a tensor of 6 elements"),
        (|t| t.byte_offset = u64::MAX - 2, "byte_offset"),
        // SAFETY (both): the producer's shape array has two extents.
        (|t| unsafe { *t.shape = -2 }, "extent -2 of axis 0 is negative"),
        (|t| unsafe { *t.shape = i64::MAX }, "overflows"),
    ];
    for (mutate, message) in cases {
        let (m, deleted) = legacy(&[2, 3], None, CPU);
        // SAFETY: our own managed tensor.
        let dl = unsafe { &mut (*m).dl_tensor };
        let (shape0, data) = (unsafe { *dl.shape }, dl.data);
        mutate(dl);
        let e = from_legacy(m, 0, false).unwrap_err();
        assert_eq!(e.kind(), "ValueError", "{message}: {}", e.message());
        assert!(e.message().contains(message), "{}", e.message());
        assert_eq!(deleted.load(Ordering::SeqCst), 0);
        // SAFETY: restore what the producer owns, then release it once.
        unsafe {
            *dl.shape = shape0;
            dl.data = data;
            ((*m).deleter.unwrap())(m);
        }
        assert_eq!(deleted.load(Ordering::SeqCst), 1);
    }
}
