//! Classes defined the way upstream's Python defines them: a type from
//! `TVMFFITypeGetOrAllocIndex`, fields registered with
//! `TVMFFITypeRegisterField` using the getters of `ffi.MakeFieldGetter` and
//! the converting setters of `ffi.MakeFieldSetter`, then
//! `ffi._PyClassRegisterTypeAttrColumns`. Instances are made, copied and
//! freed through the registered attributes; a counting allocator (this
//! binary's own, process-wide) shows every block of these types returned.

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use tether_core::abi::{
    field_flag, type_index as ti, DLDataType, DLDevice, TVMFFIAny, TVMFFIByteArray, TVMFFICustomAllocator,
    TVMFFIFieldGetter, TVMFFIFieldInfo, TVMFFIObjectAllocHeader,
};
use tether_core::c_api::{
    TVMFFIAnyViewToOwnedAny, TVMFFIErrorSetRaisedFromCStr, TVMFFITypeGetOrAllocIndex, TVMFFITypeRegisterField,
};
use tether_core::object::alloc_header;
use tether_core::values::error;
use tether_core::types::type_registry;
use tether_core::dataclass;
use tether_core::{Any, Array, Error, Function, ObjectRef};

// ---- a counting allocator: live blocks per type index --------------------

static LIVE: Mutex<Option<HashMap<usize, i32>>> = Mutex::new(None);

#[repr(C)]
struct Block {
    size: usize,
    header: TVMFFIObjectAllocHeader,
}

const PREFIX: usize = 64; // covers every alignment these tests ask for

unsafe extern "C" fn counting_allocate(size: usize, align: usize, type_index: i32, _ctx: *mut c_void) -> *mut c_void {
    if align > PREFIX {
        return std::ptr::null_mut();
    }
    let layout = std::alloc::Layout::from_size_align(size + PREFIX, PREFIX).unwrap();
    // SAFETY: test allocator; the prefix holds our Block right before the body.
    unsafe {
        let base = std::alloc::alloc(layout);
        if base.is_null() {
            return std::ptr::null_mut();
        }
        let body = base.add(PREFIX);
        std::ptr::write(
            (body as *mut Block).sub(1),
            Block { size, header: TVMFFIObjectAllocHeader { delete_space: Some(counting_free) } },
        );
        LIVE.lock().unwrap().get_or_insert_with(HashMap::new).insert(body as usize, type_index);
        body as *mut c_void
    }
}

unsafe extern "C" fn counting_free(body: *mut c_void) {
    assert!(LIVE.lock().unwrap().as_mut().unwrap().remove(&(body as usize)).is_some(), "freed once");
    // SAFETY: undoing counting_allocate.
    unsafe {
        let size = (*(body as *const Block).sub(1)).size;
        std::alloc::dealloc((body as *mut u8).sub(PREFIX), std::alloc::Layout::from_size_align(size + PREFIX, PREFIX).unwrap());
    }
}

fn install_counting_allocator() {
    static mut ENTRY: TVMFFICustomAllocator = TVMFFICustomAllocator { allocate: Some(counting_allocate), context: std::ptr::null_mut() };
    // SAFETY: the entry is a static that lives for the process.
    unsafe { alloc_header::set_allocator(std::ptr::addr_of_mut!(ENTRY)).unwrap() };
}

fn live_blocks_of(type_index: i32) -> usize {
    LIVE.lock().unwrap().as_ref().map_or(0, |m| m.values().filter(|&&t| t == type_index).count())
}

// ---- the converter callback ----------------------------------------------

/// Behaviours selected by the converter context.
const IDENTITY: usize = 0;
const REFUSE: usize = 1;
const DOUBLE_INTS: usize = 2;
const NULL_OBJECT: usize = 3;
const SILENT_FAILURE: usize = 4;

unsafe extern "C" fn convert(ctx: *mut c_void, value: *const TVMFFIAny, result: *mut TVMFFIAny) -> c_int {
    // SAFETY: the setter passes its argument view and a result slot.
    unsafe {
        match ctx as usize {
            REFUSE => {
                TVMFFIErrorSetRaisedFromCStr(c"ValueError".as_ptr(), c"the converter refused".as_ptr());
                -1
            }
            DOUBLE_INTS if (*value).type_index == ti::kTVMFFIInt => {
                *result = Any::from((*value).value.v_int64 * 2).into_raw();
                0
            }
            NULL_OBJECT => {
                (*result).type_index = ti::kTVMFFIArray;
                (*result).value.v_obj = std::ptr::null_mut();
                0
            }
            SILENT_FAILURE => -1,
            _ => TVMFFIAnyViewToOwnedAny(value, result),
        }
    }
}

// ---- helpers ----------------------------------------------------------------

fn convert_addr() -> i64 {
    convert as *const () as usize as i64
}

fn global(name: &str) -> Function {
    Function::get_global(name).unwrap_or_else(|| panic!("{name} is registered"))
}

fn getter_for(static_type_index: i32) -> Result<TVMFFIFieldGetter, Error> {
    let addr = global("ffi.MakeFieldGetter").call(&[Any::from(static_type_index as i64)])?.get::<i64>()?;
    assert_ne!(addr, 0);
    // SAFETY: the global returns the address of a TVMFFIFieldGetter.
    Ok(unsafe { std::mem::transmute::<usize, TVMFFIFieldGetter>(addr as usize) })
}

fn setter_for(static_type_index: i32, ctx: usize) -> Result<Function, Error> {
    let make = global("ffi.MakeFieldSetter");
    let f = make.call(&[Any::from(static_type_index as i64), Any::from(ctx as i64), Any::from(convert_addr())])?;
    Function::from_object(f.get::<ObjectRef>()?)
}

fn err_of<T: std::fmt::Debug>(r: Result<T, Error>) -> (String, String) {
    let e = r.expect_err("an error");
    (e.kind().to_string(), e.message().to_string())
}

/// A field as upstream's Python describes one (`_ORIGIN_NATIVE_LAYOUT`).
struct Field {
    name: &'static str,
    static_type_index: i32,
    size: i64,
    alignment: i64,
}

const FIELDS: &[Field] = &[
    Field { name: "i", static_type_index: ti::kTVMFFIInt, size: 8, alignment: 8 },
    Field { name: "f", static_type_index: ti::kTVMFFIFloat, size: 8, alignment: 8 },
    Field { name: "b", static_type_index: ti::kTVMFFIBool, size: 1, alignment: 1 },
    Field { name: "dt", static_type_index: ti::kTVMFFIDataType, size: 4, alignment: 2 },
    Field { name: "dev", static_type_index: ti::kTVMFFIDevice, size: 8, alignment: 4 },
    Field { name: "p", static_type_index: ti::kTVMFFIOpaquePtr, size: 8, alignment: 8 },
    Field { name: "o", static_type_index: ti::kTVMFFIObject, size: 8, alignment: 8 },
    Field { name: "a", static_type_index: ti::kTVMFFIAny, size: 16, alignment: 8 },
];

/// Register `key` under `parent` with `fields` laid out after `start`;
/// returns the type index, the field offsets and the total size.
fn define(key: &str, parent: i32, depth: i32, start: i64, fields: &[Field]) -> Result<(i32, Vec<i64>, i64), Error> {
    let key_arr = TVMFFIByteArray::from_slice(key.as_bytes());
    // SAFETY: valid key; -1 allocates a dynamic index.
    let index = unsafe { TVMFFITypeGetOrAllocIndex(&key_arr, -1, depth, 0, 1, parent) };
    assert!(index >= ti::kTVMFFIDynObjectBegin, "{key}: {index}");
    let mut offset = start;
    let mut offsets = Vec::new();
    for f in fields {
        offset = (offset + f.alignment - 1) & !(f.alignment - 1);
        let setter = setter_for(f.static_type_index, IDENTITY)?;
        let info = TVMFFIFieldInfo {
            name: TVMFFIByteArray::from_slice(f.name.as_bytes()),
            doc: TVMFFIByteArray::EMPTY,
            metadata: TVMFFIByteArray::EMPTY,
            flags: field_flag::kWritable | field_flag::kSetterIsFunctionObj,
            size: f.size,
            alignment: f.alignment,
            offset,
            getter: Some(getter_for(f.static_type_index)?),
            setter: setter.as_object().as_ptr() as *mut c_void,
            default_value_or_factory: TVMFFIAny::NONE,
            field_static_type_index: f.static_type_index,
        };
        // SAFETY: a complete record; the registry retains the setter.
        assert_eq!(unsafe { TVMFFITypeRegisterField(index, &info) }, 0);
        offsets.push(offset);
        offset += f.size;
    }
    let total = ((offset + 7) & !7).max(24);
    global("ffi._PyClassRegisterTypeAttrColumns").call(&[Any::from(index as i64), Any::from(total)])?;
    Ok((index, offsets, total))
}

fn attr(index: i32, name: &str) -> Function {
    let v = tether_core::reflection::attr_columns::attr_value(index, name.as_bytes()).unwrap_or_else(|| panic!("{name} registered"));
    Function::from_object(v.get::<ObjectRef>().unwrap()).unwrap()
}

fn read(obj: &ObjectRef, offset: i64, static_type_index: i32) -> Result<Any, Error> {
    let getter = getter_for(static_type_index)?;
    let mut out = TVMFFIAny::NONE;
    // SAFETY: the field lies inside the live object.
    let rc = unsafe { getter((obj.as_ptr() as *mut u8).add(offset as usize) as *mut c_void, &mut out) };
    if rc != 0 {
        return Err(error::take_raised_or_unknown(rc));
    }
    // SAFETY: getters hand back an owned value.
    Ok(unsafe { Any::from_raw_owned(out) })
}

fn field_address(obj: &ObjectRef, offset: i64) -> Any {
    // SAFETY: inside the live object.
    Any::opaque_ptr(unsafe { (obj.as_ptr() as *mut u8).add(offset as usize) } as *mut c_void)
}

// ---- tests ------------------------------------------------------------------

#[test]
fn instances_are_made_set_read_copied_and_freed() -> Result<(), Error> {
    install_counting_allocator();
    let (index, off, total) = define("test.pyclass.Thing", ti::kTVMFFIObject, 1, 24, FIELDS)?;
    assert_eq!(total, 88);
    let payload = Array::new(vec![Any::from(1i64), Any::from(2i64)])?.into_object();
    let base = payload.use_count();

    let obj = attr(index, "__ffi_new__").call(&[])?.get::<ObjectRef>()?;
    assert_eq!(obj.type_index(), index);
    assert_eq!(live_blocks_of(index), 1);
    // Zero-filled: every field reads back as its zero.
    assert_eq!(read(&obj, off[0], ti::kTVMFFIInt)?.get::<i64>()?, 0);
    assert_eq!(read(&obj, off[2], ti::kTVMFFIBool)?.type_index(), ti::kTVMFFIBool);
    let null_ptr = read(&obj, off[5], ti::kTVMFFIOpaquePtr)?;
    assert_eq!(null_ptr.type_index(), ti::kTVMFFIOpaquePtr, "a NULL pointer field reads as a NULL opaque pointer");
    assert!(read(&obj, off[6], ti::kTVMFFIObject)?.is_none());
    assert!(read(&obj, off[7], ti::kTVMFFIAny)?.is_none());

    // Set every field through the registered setters (the Function-object
    // setter protocol), then read back through the registered getters.
    let fields = type_registry::all_fields(index);
    let values = [
        Any::from(5i64),
        Any::from(3i64), // int into a float field converts
        Any::from(true),
        Any::string("float16")?, // a dtype string parses
        Any::device(DLDevice { device_type: 2, device_id: 1 }),
        Any::opaque_ptr(0x1234 as *mut c_void),
        Any::from_object(payload.clone()),
        Any::from_object(payload.clone()),
    ];
    for (f, v) in fields.iter().zip(&values) {
        dataclass::set_field(&obj, f, v.as_raw())?;
    }
    drop(values);
    assert_eq!(dataclass::get_field(&obj, fields[0])?.get::<i64>()?, 5);
    assert_eq!(dataclass::get_field(&obj, fields[1])?.get::<f64>()?, 3.0);
    assert!(dataclass::get_field(&obj, fields[2])?.get::<bool>()?);
    // SAFETY: the bool field is one byte.
    assert_eq!(unsafe { *(obj.as_ptr() as *const u8).add(off[2] as usize) }, 1, "C++ bool storage");
    let dt = dataclass::get_field(&obj, fields[3])?;
    assert_eq!(dt.type_index(), ti::kTVMFFIDataType);
    // SAFETY: a DataType value.
    assert_eq!(unsafe { dt.as_raw().value.v_dtype }, DLDataType { code: 2, bits: 16, lanes: 1 });
    let dev = dataclass::get_field(&obj, fields[4])?;
    // SAFETY: a Device value.
    assert_eq!(unsafe { dev.as_raw().value.v_device }, DLDevice { device_type: 2, device_id: 1 });
    // SAFETY: an opaque pointer value.
    assert_eq!(unsafe { dataclass::get_field(&obj, fields[5])?.as_raw().value.v_ptr } as usize, 0x1234);
    assert!(dataclass::get_field(&obj, fields[6])?.get::<ObjectRef>()?.same_as(&payload));
    assert!(dataclass::get_field(&obj, fields[7])?.get::<ObjectRef>()?.same_as(&payload));
    assert_eq!(payload.use_count(), base + 2, "the object and Any fields own one reference each");

    // The shallow copy shares the values, with its own references.
    let copy = attr(index, "__ffi_shallow_copy__").call(&[Any::from_object(obj.clone())])?.get::<ObjectRef>()?;
    assert!(!copy.same_as(&obj));
    assert_eq!(copy.type_index(), index);
    assert_eq!(live_blocks_of(index), 2);
    assert_eq!(payload.use_count(), base + 4);
    assert_eq!(read(&copy, off[0], ti::kTVMFFIInt)?.get::<i64>()?, 5);
    assert!(read(&copy, off[7], ti::kTVMFFIAny)?.get::<ObjectRef>()?.same_as(&payload));
    drop(copy);
    assert_eq!(payload.use_count(), base + 2);

    // Overwriting releases the previous value.
    dataclass::set_field(&obj, fields[7], Any::from(9i64).as_raw())?;
    dataclass::set_field(&obj, fields[6], Any::none().as_raw())?;
    assert_eq!(payload.use_count(), base);
    dataclass::set_field(&obj, fields[6], Any::from_object(payload.clone()).as_raw())?;
    drop(obj);
    assert_eq!(payload.use_count(), base, "the deleter released the fields");
    assert_eq!(live_blocks_of(index), 0, "the block went back to the allocator");

    // The generated constructor and reflection creation use __ffi_new__.
    let init = attr(index, "__ffi_init__");
    let made = init
        .call(&[
        Any::from(1i64),
        Any::from(2.5),
        Any::from(false),
        Any::string("int8")?,
        Any::string("cuda:3")?,
        Any::none(),
        Any::from_object(payload.clone()),
        Any::string("a string longer than seven bytes")?,
    ])?
    .get::<ObjectRef>()?;
    assert_eq!(read(&made, off[1], ti::kTVMFFIFloat)?.get::<f64>()?, 2.5);
    assert_eq!(read(&made, off[7], ti::kTVMFFIAny)?.get::<String>()?, "a string longer than seven bytes");
    let e = init.call(&[Any::from(1i64)]).unwrap_err();
    assert_eq!(e.message(), "test.pyclass.Thing.__ffi_init__() missing required argument: 'f'");
    let packed = global("ffi.MakeObjectFromPackedArgs").call(&[
        Any::from(index as i64),
        Any::string("i")?,
        Any::from(4i64),
        Any::string("f")?,
        Any::from(0.5),
        Any::string("b")?,
        Any::from(true),
        Any::string("dt")?,
        Any::string("bool")?,
        Any::string("dev")?,
        Any::string("cpu")?,
        Any::string("p")?,
        Any::none(),
        Any::string("o")?,
        Any::none(),
        Any::string("a")?,
        Any::none(),
    ])?;
    assert_eq!(read(&packed.get::<ObjectRef>()?, off[0], ti::kTVMFFIInt)?.get::<i64>()?, 4);
    assert_eq!(live_blocks_of(index), 2);
    drop((made, packed));
    assert_eq!(live_blocks_of(index), 0);
    assert_eq!(payload.use_count(), base);
    Ok(())
}

#[test]
fn setters_convert_through_the_callback() -> Result<(), Error> {
    let (index, off, _) = define("test.pyclass.Converted", ti::kTVMFFIObject, 1, 24, &FIELDS[..1])?;
    let obj = attr(index, "__ffi_new__").call(&[])?.get::<ObjectRef>()?;
    let addr = field_address(&obj, off[0]);

    let doubling = setter_for(ti::kTVMFFIInt, DOUBLE_INTS)?;
    assert!(doubling.call(&[addr.clone(), Any::from(21i64)])?.is_none());
    assert_eq!(read(&obj, off[0], ti::kTVMFFIInt)?.get::<i64>()?, 42);

    let refusing = setter_for(ti::kTVMFFIInt, REFUSE)?;
    let e = err_of(refusing.call(&[addr.clone(), Any::from(1i64)]));
    assert_eq!(e, ("ValueError".into(), "the converter refused".into()));
    assert_eq!(read(&obj, off[0], ti::kTVMFFIInt)?.get::<i64>()?, 42, "a failed set leaves the field");

    let silent = setter_for(ti::kTVMFFIInt, SILENT_FAILURE)?;
    assert!(silent.call(&[addr.clone(), Any::from(1i64)]).is_err());
    let null_object = setter_for(ti::kTVMFFIObject, NULL_OBJECT)?;
    let (kind, msg) = err_of(null_object.call(&[addr.clone(), Any::none()]));
    assert_eq!(kind, "ValueError");
    assert!(msg.contains("holding NULL"), "{msg}");

    // The converted value must suit the field's C++ type.
    let identity = setter_for(ti::kTVMFFIInt, IDENTITY)?;
    let e = err_of(identity.call(&[addr.clone(), Any::string("x")?]));
    assert_eq!(e, ("TypeError".into(), "Cannot convert from type `ffi.SmallStr` to `int`".into()));
    let e = err_of(setter_for(ti::kTVMFFIObject, IDENTITY)?.call(&[addr.clone(), Any::from(1i64)]));
    assert_eq!(e, ("TypeError".into(), "Cannot convert from type `int` to `ffi.Object`".into()));

    // The address argument.
    let e = err_of(identity.call(&[Any::from(24i64), Any::from(1i64)]));
    assert_eq!(e, ("TypeError".into(), "Cannot convert from type `int` to `void*`".into()));
    let (kind, msg) = err_of(identity.call(&[Any::none(), Any::from(1i64)]));
    assert_eq!(kind, "ValueError");
    assert!(msg.contains("NULL field address"), "{msg}");
    let (kind, _) = err_of(identity.call(&[addr]));
    assert_eq!(kind, "TypeError");
    Ok(())
}

#[test]
fn subclasses_extend_the_parent_layout() -> Result<(), Error> {
    let (parent, poff, ptotal) = define("test.pyclass.Base", ti::kTVMFFIObject, 1, 24, &FIELDS[6..8])?;
    let extra = [Field { name: "extra", static_type_index: ti::kTVMFFIAny, size: 16, alignment: 8 }];
    let (child, coff, _) = define("test.pyclass.Derived", parent, 2, ptotal, &extra)?;
    let payload = Array::new(vec![])?.into_object();
    let base = payload.use_count();
    let obj = attr(child, "__ffi_init__")
        .call(&[Any::from_object(payload.clone()), Any::from_object(payload.clone()), Any::from_object(payload.clone())])?
        .get::<ObjectRef>()?;
    assert_eq!(payload.use_count(), base + 3);
    assert!(read(&obj, poff[0], ti::kTVMFFIObject)?.get::<ObjectRef>()?.same_as(&payload));
    assert!(read(&obj, coff[0], ti::kTVMFFIAny)?.get::<ObjectRef>()?.same_as(&payload));
    // The parent's copy accepts a subclass instance and copies the parent's part.
    let as_parent = attr(parent, "__ffi_shallow_copy__").call(&[Any::from_object(obj.clone())])?.get::<ObjectRef>()?;
    assert_eq!(as_parent.type_index(), parent);
    assert_eq!(payload.use_count(), base + 5);
    // The child's copy refuses a parent instance.
    let (kind, msg) = err_of(attr(child, "__ffi_shallow_copy__").call(&[Any::from_object(as_parent.clone())]));
    assert_eq!(kind, "TypeError");
    assert!(msg.contains("Expected `test.pyclass.Derived` but got `test.pyclass.Base`"), "{msg}");
    // Deep copies go through __ffi_shallow_copy__.
    let deep = global("ffi.DeepCopy").call(&[Any::from_object(obj.clone())])?.get::<ObjectRef>()?;
    assert_eq!(deep.type_index(), child);
    drop((obj, as_parent, deep));
    assert_eq!(payload.use_count(), base);
    Ok(())
}

#[test]
fn the_globals_check_their_arguments() -> Result<(), Error> {
    let getter = global("ffi.MakeFieldGetter");
    for supported in [-1, 0, 1, 2, 3, 4, 5, 6, 64, 65, 1000] {
        assert!(getter.call(&[Any::from(supported as i64)]).is_ok(), "{supported}");
    }
    for unsupported in [7, 8, 11, 63, -2] {
        let e = err_of(getter.call(&[Any::from(unsupported as i64)]));
        assert_eq!(e, ("ValueError".into(), format!("Unsupported field type index for getter: {unsupported}")));
    }
    let e = err_of(getter.call(&[Any::string("x")?]));
    assert_eq!(
        e.1,
        "Mismatched type on argument #0 when calling: `ffi.MakeFieldGetter(0: int) -> int`. Expected `int` but got `ffi.SmallStr`"
    );

    let make = global("ffi.MakeFieldSetter");
    let e = err_of(make.call(&[Any::from(1i64), Any::from(0i64), Any::from(0i64)]));
    assert_eq!(e, ("ValueError".into(), "ffi.MakeFieldSetter: convert_fn is NULL".into()));
    let e = err_of(make.call(&[Any::from(9i64), Any::from(0i64), Any::from(convert_addr())]));
    assert_eq!(e, ("ValueError".into(), "Unsupported field type index for setter: 9".into()));
    let e = err_of(make.call(&[Any::from(1i64)]));
    assert_eq!(
        e.1,
        "Mismatched number of arguments when calling: `ffi.MakeFieldSetter(0: int, 1: int, 2: int) -> ffi.Function`. \
         Expected 3 but got 1 arguments"
    );

    let register = global("ffi._PyClassRegisterTypeAttrColumns");
    let e = err_of(register.call(&[Any::from(1_000_000i64), Any::from(64i64)]));
    assert_eq!(
        e,
        ("InternalError".into(), "Check failed: (entry != nullptr) is false: Cannot find type info for type_index=1000000".into())
    );
    let (kind, msg) = err_of(register.call(&[Any::from(ti::kTVMFFIArray as i64), Any::from(64i64)]));
    assert_eq!(kind, "ValueError");
    assert!(msg.contains("`ffi.Array`") && msg.contains("not a type allocated at run time"), "{msg}");
    let (index, _, total) = define("test.pyclass.Checked", ti::kTVMFFIObject, 1, 24, &FIELDS[..2])?;
    let fresh = |key: &str| {
        let key = TVMFFIByteArray::from_slice(key.as_bytes());
        // SAFETY: valid key.
        unsafe { TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, ti::kTVMFFIObject) }
    };
    let small = fresh("test.pyclass.TooSmall");
    let (kind, msg) = err_of(register.call(&[Any::from(small as i64), Any::from(16i64)]));
    assert_eq!(kind, "ValueError");
    assert!(msg.contains("total_size 16") && msg.contains("smaller than the object header"), "{msg}");
    // A field past the end of total_size: nothing is registered.
    let outside = {
        let idx = fresh("test.pyclass.Outside");
        let info = TVMFFIFieldInfo {
            name: TVMFFIByteArray::from_slice(b"far"),
            doc: TVMFFIByteArray::EMPTY,
            metadata: TVMFFIByteArray::EMPTY,
            flags: field_flag::kWritable | field_flag::kSetterIsFunctionObj,
            size: 8,
            alignment: 8,
            offset: 40,
            getter: Some(getter_for(ti::kTVMFFIInt)?),
            setter: std::ptr::null_mut(),
            default_value_or_factory: TVMFFIAny::NONE,
            field_static_type_index: ti::kTVMFFIInt,
        };
        // SAFETY: a complete record.
        assert_eq!(unsafe { TVMFFITypeRegisterField(idx, &info) }, 0);
        idx
    };
    let (kind, msg) = err_of(register.call(&[Any::from(outside as i64), Any::from(40i64)]));
    assert_eq!(kind, "ValueError");
    assert!(msg.contains("field `far`") && msg.contains("offset 40"), "{msg}");
    assert!(tether_core::reflection::attr_columns::attr_value(outside, b"__ffi_new__").is_none(), "nothing registered on failure");
    assert!(register.call(&[Any::from(outside as i64), Any::from(48i64)]).is_ok());

    // Registering twice is upstream's RuntimeError.
    let e = err_of(register.call(&[Any::from(index as i64), Any::from(total)]));
    assert_eq!(
        e,
        (
            "RuntimeError".into(),
            format!(
                "TypeAttr `__ffi_init__` is already registered for type index {index}. To update the stored value, \
                 register a mutable container (e.g., Dict/List) once and mutate it in place on subsequent calls."
            )
        )
    );

    // __ffi_new__ and __ffi_shallow_copy__ are typed.
    let e = err_of(attr(index, "__ffi_new__").call(&[Any::from(1i64)]));
    assert_eq!(e.1, "Mismatched number of arguments when calling: `() -> ffi.Object`. Expected 0 but got 1 arguments");
    let e = err_of(attr(index, "__ffi_shallow_copy__").call(&[Any::none()]));
    assert_eq!(
        e.1,
        "Mismatched type on argument #0 when calling: `(0: ffi.Object) -> ffi.Object`. Expected `ffi.Object` but got `None`"
    );

    // A getter called with NULL raises instead of crashing.
    let g = getter_for(ti::kTVMFFIInt)?;
    let mut out = TVMFFIAny::NONE;
    // SAFETY: the getter checks its pointers.
    let rc = unsafe { g(std::ptr::null_mut(), &mut out) };
    assert_eq!(rc, -1);
    assert_eq!(error::take_raised_or_unknown(rc).kind(), "ValueError");
    Ok(())
}
