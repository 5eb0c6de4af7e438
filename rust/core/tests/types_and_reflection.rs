//! The type registry, Rust-defined types with reflected fields, and
//! dataclass types defined at run time.

use std::mem::offset_of;

use tether_core::abi::{field_flag, type_index as ti, TVMFFIObject};
use tether_core::dataclass::{self, FieldKind, FieldSpec};
use tether_core::object::header_placeholder;
use tether_core::reflection::TypeBuilder;
use tether_core::types::type_registry::{self, find_field, find_method};
use tether_core::{Any, Error, Function, ObjectPtr, ObjectRef, ObjectType};

#[repr(C)]
struct Point {
    header: TVMFFIObject,
    x: i64,
    y: f64,
    tag: Any,
}
tether_core::object_type!(Point, "test.types.Point");

fn point(x: i64) -> ObjectRef {
    ObjectPtr::new(Point { header: header_placeholder(), x, y: 0.5, tag: Any::none() }).unwrap().into_object_ref()
}

#[test]
fn rust_types_reflect_fields_and_methods() -> Result<(), Error> {
    TypeBuilder::<Point>::new()
        .field::<i64>("x", offset_of!(Point, x))?
        .readonly_field::<f64>("y", offset_of!(Point, y))?
        .field::<Any>("tag", offset_of!(Point, tag))?
        .method("norm1", Function::from_closure(|args| {
            let p = args[0].get::<ObjectPtr<Point>>()?;
            Ok(Any::from(p.x as f64 + p.y))
        })?)?;
    let p = point(3);
    let fx = find_field(Point::type_index(), "x").expect("x registered");
    assert_eq!(fx.field_static_type_index, ti::kTVMFFIInt);
    assert_ne!(fx.flags & field_flag::kWritable, 0);
    assert_eq!(find_field(Point::type_index(), "y").unwrap().flags & field_flag::kWritable, 0);
    assert_eq!(dataclass::get_field(&p, fx)?.get::<i64>()?, 3);
    dataclass::set_field(&p, fx, Any::from(10i64).as_raw())?;
    assert_eq!(dataclass::get_field(&p, fx)?.get::<i64>()?, 10);
    let err = dataclass::set_field(&p, fx, Any::string("no").unwrap().as_raw()).unwrap_err();
    assert_eq!(err.message(), "expected int, got ffi.SmallStr");
    let ftag = find_field(Point::type_index(), "tag").unwrap();
    dataclass::set_field(&p, ftag, Any::from(p.clone()).as_raw())?;
    assert!(dataclass::get_field(&p, ftag)?.as_object().unwrap().same_as(&p));
    dataclass::set_field(&p, ftag, Any::none().as_raw())?; // break the cycle
    let m = find_method(Point::type_index(), "norm1").expect("method");
    let f = Function::from_object(Any::from_view(&m.method)?.as_object().unwrap())?;
    assert_eq!(f.call(&[Any::from(p.clone())])?.get::<f64>()?, 10.5);
    Ok(())
}

#[test]
fn type_attributes_form_columns() -> Result<(), Error> {
    let a = type_registry::get_or_alloc_index("test.types.AttrA", -1, ti::kTVMFFIObject)?;
    tether_core::reflection::attr_columns::register_attr(a, b"test.attr", Any::from(5i64).as_raw())?;
    let col = tether_core::reflection::attr_columns::attr_column(b"test.attr").expect("column");
    assert!(col.size > a);
    // SAFETY: index within the column.
    let v = unsafe { &*col.data.add((a - col.begin_index) as usize) };
    assert_eq!(v.type_index, ti::kTVMFFIInt);
    assert!(tether_core::reflection::attr_columns::register_attr(a, b"test.attr", Any::from(6i64).as_raw()).is_err());
    assert!(tether_core::reflection::attr_columns::register_attr(9999, b"test.attr", Any::from(6i64).as_raw()).is_err());
    Ok(())
}

fn spec(name: &str, kind: FieldKind) -> FieldSpec {
    FieldSpec { name: name.into(), kind, flags: 0, frozen: false }
}

#[test]
fn dataclass_types_check_field_types() -> Result<(), Error> {
    let base = dataclass::register_type("test.dc.Base", ti::kTVMFFIObject, vec![spec("id", FieldKind::Int)])?;
    let node = dataclass::register_type(
        "test.dc.Node",
        base,
        vec![
            spec("name", FieldKind::Str),
            spec("weight", FieldKind::Float),
            spec("flag", FieldKind::Bool),
            spec("child", FieldKind::Object(base)),
            spec("extra", FieldKind::Any),
        ],
    )?;
    assert!(type_registry::is_instance(node, base));
    let fields: Vec<String> = type_registry::all_fields(node)
        .iter()
        .map(|f| String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(f.name.data as *const u8, f.name.size) }).into_owned())
        .collect();
    assert_eq!(fields, ["id", "name", "weight", "flag", "child", "extra"]);

    let init = Function::from_object(tether_core::reflection::attr_columns::attr_value(node, b"__ffi_init__").unwrap().as_object().unwrap())?;
    let leaf = Function::from_object(tether_core::reflection::attr_columns::attr_value(base, b"__ffi_init__").unwrap().as_object().unwrap())?
        .call(&[Any::from(1i64)])?;
    let n = init
        .call(&[
            Any::from(2i64),
            Any::string("node name longer than seven")?,
            Any::from(3i64), // int accepted for float
            Any::from(true),
            leaf.clone(),
            Any::bytes(b"x")?,
        ])?
        .as_object()
        .unwrap();
    let get = |name: &str| dataclass::get_field(&n, find_field(node, name).unwrap()).unwrap();
    assert_eq!(get("id").get::<i64>()?, 2);
    assert_eq!(get("name").get::<String>()?, "node name longer than seven");
    assert_eq!(get("weight").get::<f64>()?, 3.0);
    assert!(get("flag").get::<bool>()?);
    assert!(get("child").as_object().unwrap().same_as(&leaf.as_object().unwrap()));

    let set = |name: &str, v: Any| dataclass::set_field(&n, find_field(node, name).unwrap(), v.as_raw());
    let e = set("id", Any::string("x")?).unwrap_err();
    assert_eq!(e.message(), "field \"id\" of test.dc.Base expects int, got ffi.SmallStr");
    let e = set("child", Any::from(n.clone())).map(|_| ()).and(Ok::<_, Error>(()));
    assert!(e.is_ok(), "a Node is a Base");
    set("child", Any::none())?;
    let other = dataclass::register_type("test.dc.Other", ti::kTVMFFIObject, vec![])?;
    let e = set("child", Any::from(dataclass::new_instance(other)?)).unwrap_err();
    assert_eq!(e.message(), "field \"child\" of test.dc.Node expects test.dc.Base, got test.dc.Other");
    let e = init.call(&[Any::from(1i64)]).unwrap_err();
    assert_eq!(e.message(), "test.dc.Node.__ffi_init__() missing required argument: 'name'");
    assert!(dataclass::register_type("test.dc.Node", base, vec![]).is_err(), "duplicate key");
    assert!(dataclass::register_type("test.dc.Dup", base, vec![spec("a", FieldKind::Int), spec("a", FieldKind::Int)]).is_err());
    Ok(())
}

#[test]
fn dataclass_register_through_global_function() -> Result<(), Error> {
    let reg = Function::get_global("tether.dataclass.RegisterType").unwrap();
    let rec = |name: &str, kind: &str| -> Result<Any, Error> {
        Ok(Any::from(tether_core::Array::new(vec![Any::string(name)?, Any::string(kind)?, Any::from(-1i64), Any::from(0i64), Any::from(false)])?.into_object()))
    };
    let fields = tether_core::Array::new(vec![rec("a", "int")?, rec("b", "any")?])?;
    let idx = reg
        .call(&[Any::string("test.dc.ViaGlobal")?, Any::from(ti::kTVMFFIObject as i64), Any::from(fields.into_object())])?
        .get::<i64>()?;
    assert!(idx as i32 >= ti::kTVMFFIDynObjectBegin);
    let bad = tether_core::Array::new(vec![rec("a", "complex")?])?;
    let e = reg
        .call(&[Any::string("test.dc.Bad")?, Any::from(ti::kTVMFFIObject as i64), Any::from(bad.into_object())])
        .unwrap_err();
    assert!(e.message().contains("unknown field kind \"complex\""), "{}", e.message());
    Ok(())
}

#[test]
fn every_static_index_has_upstream_type_info() {
    let pods = [
        (ti::kTVMFFINone, "None"),
        (ti::kTVMFFIInt, "int"),
        (ti::kTVMFFIBool, "bool"),
        (ti::kTVMFFIFloat, "float"),
        (ti::kTVMFFIOpaquePtr, "void*"),
        (ti::kTVMFFIDataType, "DataType"),
        (ti::kTVMFFIDevice, "Device"),
        (ti::kTVMFFIDLTensorPtr, "DLTensor*"),
        (ti::kTVMFFIRawStr, "const char*"),
        (ti::kTVMFFIByteArrayPtr, "TVMFFIByteArray*"),
        (ti::kTVMFFIObjectRValueRef, "ObjectRValueRef"),
        (ti::kTVMFFISmallStr, "ffi.SmallStr"),
        (ti::kTVMFFISmallBytes, "ffi.SmallBytes"),
        (ti::kTVMFFIUnchanged, "ffi.Unchanged"),
    ];
    for (index, key) in pods {
        let info = type_registry::type_info(index).unwrap_or_else(|| panic!("no type info for {key}"));
        assert_eq!((info.type_index, info.type_depth), (index, 0));
        // SAFETY: type keys point into the registry, which lives forever.
        let got = unsafe { std::slice::from_raw_parts(info.type_key.data as *const u8, info.type_key.size) };
        assert_eq!(got, key.as_bytes());
        assert_eq!(type_registry::key_to_index(key.as_bytes()), Some(index));
        // A POD is not an object type.
        assert!(!type_registry::is_instance(index, ti::kTVMFFIObject));
    }
    for index in ti::kTVMFFIObject..=ti::kTVMFFIBigInt {
        let info = type_registry::type_info(index).expect("static object type");
        assert_eq!(info.type_depth, if index == ti::kTVMFFIObject { 0 } else { 1 });
    }
    assert!(type_registry::type_info(ti::kTVMFFIUnchanged + 1).is_none());
    assert!(type_registry::type_info(ti::kTVMFFIAny).is_none());
    // A POD index cannot be the type of an object field.
    assert!(FieldKind::parse("object", ti::kTVMFFIInt).is_err());
}

#[test]
fn startup_columns_exist_and_none_only_ensures() -> Result<(), Error> {
    for name in tether_core::reflection::attr_columns::STARTUP_ATTR_COLUMNS {
        assert!(tether_core::reflection::attr_columns::attr_column(name.as_bytes()).is_some(), "column {name} missing");
    }
    for name in ["__s_visit__", "__any_hash__", "__ffi_repr__", "__data_to_json__", "__ffi_convert__"] {
        assert!(tether_core::reflection::attr_columns::STARTUP_ATTR_COLUMNS.contains(&name));
    }
    assert!(tether_core::reflection::attr_columns::attr_column(b"test.ensured").is_none());
    tether_core::reflection::attr_columns::register_attr(ti::kTVMFFINone, b"test.ensured", Any::from(1i64).as_raw())?;
    let col = tether_core::reflection::attr_columns::attr_column(b"test.ensured").expect("ensured column");
    assert_eq!(col.size, 0);
    assert!(tether_core::reflection::attr_columns::attr_value(ti::kTVMFFINone, b"test.ensured").is_none());
    Ok(())
}

#[test]
fn fields_without_getter_register_and_read_as_attribute_error() -> Result<(), Error> {
    use tether_core::abi::{TVMFFIByteArray, TVMFFIFieldInfo};
    let index = type_registry::get_or_alloc_index("test.types.NoGetter", -1, ti::kTVMFFIObject)?;
    let info = TVMFFIFieldInfo {
        name: TVMFFIByteArray::from_slice(b"hidden"),
        doc: TVMFFIByteArray::EMPTY,
        metadata: TVMFFIByteArray::EMPTY,
        flags: 0,
        size: 8,
        alignment: 8,
        offset: 24,
        getter: None,
        setter: std::ptr::null_mut(),
        default_value_or_factory: tether_core::abi::TVMFFIAny::NONE,
        field_static_type_index: ti::kTVMFFIInt,
    };
    tether_core::reflection::type_members::register_field(index, &info)?;
    let f = find_field(index, "hidden").expect("registered");
    assert!(f.getter.is_none());
    let p = point(1); // any live object: the getter check comes first
    let err = dataclass::get_field(&p, f).unwrap_err();
    assert_eq!(err.kind(), "AttributeError");
    Ok(())
}

fn name_of(f: &tether_core::abi::TVMFFIFieldInfo) -> &[u8] {
    // SAFETY: registered names point into strings the registry owns forever.
    unsafe { std::slice::from_raw_parts(f.name.data as *const u8, f.name.size) }
}

fn plain_field(name: &[u8], offset: i64) -> tether_core::abi::TVMFFIFieldInfo {
    use tether_core::abi::{TVMFFIByteArray, TVMFFIFieldInfo};
    TVMFFIFieldInfo {
        name: TVMFFIByteArray::from_slice(name),
        doc: TVMFFIByteArray::EMPTY,
        metadata: TVMFFIByteArray::EMPTY,
        flags: 0,
        size: 8,
        alignment: 8,
        offset,
        getter: None,
        setter: std::ptr::null_mut(),
        default_value_or_factory: tether_core::abi::TVMFFIAny::NONE,
        field_static_type_index: ti::kTVMFFIInt,
    }
}

#[test]
fn field_records_stay_valid_while_later_fields_register() -> Result<(), Error> {
    // Readers keep `&'static` field records (structural equality, reflection
    // globals, Python's field descriptors) while other code may register
    // more fields on the same type: the records must not move or be freed.
    let index = type_registry::get_or_alloc_index("test.types.Growing", -1, ti::kTVMFFIObject)?;
    tether_core::reflection::type_members::register_field(index, &plain_field(b"f0", 24))?;
    let first = find_field(index, "f0").expect("registered");
    let names: Vec<Vec<u8>> = (1..200).map(|i| format!("f{i}").into_bytes()).collect();
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            // Readers on another thread while the list grows.
            for _ in 0..2000 {
                let all = type_registry::all_fields(index);
                for (i, f) in all.iter().enumerate() {
                    assert_eq!(name_of(f), format!("f{i}").as_bytes());
                }
            }
        });
        for (i, name) in names.iter().enumerate() {
            tether_core::reflection::type_members::register_field(index, &plain_field(name, 24 + 8 * (i as i64 + 1))).unwrap();
        }
        reader.join().unwrap();
    });
    // The reference taken before the list grew still reads its record.
    assert_eq!(name_of(first), b"f0");
    assert_eq!(first.offset, 24);
    assert_eq!(type_registry::all_fields(index).len(), 200);
    assert_eq!(find_field(index, "f199").unwrap().offset, 24 + 8 * 199);
    Ok(())
}

#[test]
fn registered_names_are_c_strings() {
    // TVM-FFI keeps type keys and field names in std::strings: C code may
    // read a type info's byte arrays as NUL-terminated strings.
    let info = tether_core::types::type_registry::type_info(tether_core::abi::type_index::kTVMFFIArray).expect("ffi.Array is registered");
    // SAFETY: the registry keeps the key and its NUL alive for the process.
    let key = unsafe { std::slice::from_raw_parts(info.type_key.data as *const u8, info.type_key.size + 1) };
    assert_eq!(key, b"ffi.Array\0");
    let index = tether_core::types::type_registry::key_to_index(b"ffi.reflection.AccessStep").expect("registered at start-up");
    let info = tether_core::types::type_registry::type_info(index).unwrap();
    assert!(info.num_fields > 0);
    for i in 0..info.num_fields as usize {
        // SAFETY: `num_fields` records follow `fields`, each name followed by its NUL.
        let name = unsafe {
            let f = &*info.fields.add(i);
            std::slice::from_raw_parts(f.name.data as *const u8, f.name.size + 1)
        };
        assert_eq!(name.last(), Some(&0u8), "field {i} of ffi.reflection.AccessStep");
    }
}
