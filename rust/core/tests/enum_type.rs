//! The core's enum types: layouts and reflection as upstream's `enum.h`
//! declares them, enum types defined over them the way frontends do
//! (a subtype, its `ffi.EnumState` registered as `__ffi_enum__`, singletons
//! filed under both canonical indices), lookups and their errors, JSON
//! graphs that name singletons by canonical index, deep copies that share
//! them, and the `<type key>.<string index>` repr that a type's own repr
//! replaces.

use tether_core::dataclass::{self, py_class_fields};
use tether_core::enum_type::{self, EnumObj, EnumStateObj, IntEnumObj, StrEnumObj, ENUM_STATE_ATTR};
use tether_core::serialization::{deep_copy::deep_copy, json, json_graph, repr::repr_print};
use tether_core::structural::equal::structural_equal;
use tether_core::types::type_registry;
use tether_core::{Any, Array, Dict, Error, Function, List, ObjectRef, ObjectType};

fn save(v: &Any) -> String {
    String::from_utf8(json::stringify(&json_graph::to_json_graph(v, &Any::none()).unwrap(), 0).unwrap()).unwrap()
}

fn load(text: &str) -> Result<Any, Error> {
    json_graph::from_json_graph(&json::parse(text.as_bytes())?)
}

fn attr_fn(index: i32, name: &str) -> Function {
    let v = tether_core::reflection::attr_columns::attr_value(index, name.as_bytes()).unwrap_or_else(|| panic!("{name} registered"));
    Function::from_object(v.get::<ObjectRef>().unwrap()).unwrap()
}

fn field(obj: &ObjectRef, owner: i32, name: &str) -> Any {
    dataclass::get_field(obj, type_registry::find_field(owner, name).unwrap()).unwrap()
}

/// An enum type `key` under `parent` with singletons `(str, int)`, defined
/// as a frontend defines one.
fn define(key: &str, parent: i32, variants: &[(&str, i64)]) -> Result<(i32, Vec<ObjectRef>), Error> {
    let index = py_class_fields::alloc_type(key, parent)?;
    py_class_fields::register_fields(index, &Array::new(Vec::new())?, 48, 5)?;
    let state = attr_fn(EnumStateObj::type_index(), "__ffi_init__").call(&[])?.get::<ObjectRef>()?;
    tether_core::reflection::attr_columns::register_attr(index, ENUM_STATE_ATTR.as_bytes(), Any::from_object(state.clone()).as_raw())?;
    let entries = List::from_object(field(&state, EnumStateObj::type_index(), "entries").get::<ObjectRef>()?)?;
    let indexes = Dict::from_object(field(&state, EnumStateObj::type_index(), "indexes").get::<ObjectRef>()?)?;
    let mut made = Vec::new();
    for (name, i) in variants {
        let obj = attr_fn(index, "__ffi_new__").call(&[])?.get::<ObjectRef>()?;
        let set = |f: &str, v: Any| dataclass::set_field(&obj, type_registry::find_field(index, f).unwrap(), v.as_raw());
        set("_int_index", Any::from(*i))?;
        set("_str_index", Any::string(name)?)?;
        entries.push(Any::from_object(obj.clone()))?;
        indexes.set(Any::from(*i), Any::from_object(obj.clone()))?;
        indexes.set(Any::string(name)?, Any::from_object(obj.clone()))?;
        made.push(obj);
    }
    Ok((index, made))
}

#[test]
fn layouts_and_reflection_are_upstreams() {
    let expect = [("ffi.Enum", EnumObj::type_index()), ("ffi.IntEnum", IntEnumObj::type_index()), ("ffi.StrEnum", StrEnumObj::type_index()), ("ffi.EnumState", EnumStateObj::type_index())];
    for (key, index) in expect {
        assert_eq!(type_registry::key_to_index(key.as_bytes()), Some(index), "{key}");
        let info = type_registry::type_info(index).unwrap();
        // SAFETY: registered metadata lives for the process.
        assert_eq!(unsafe { (*info.metadata).total_size }, 48, "{key}: header + 24 bytes");
        assert!(tether_core::reflection::attr_columns::attr_value(index, b"__ffi_new__").is_some(), "{key}");
        assert!(tether_core::reflection::attr_columns::attr_value(index, b"__ffi_shallow_copy__").is_some(), "{key}");
    }
    assert!(type_registry::is_instance(IntEnumObj::type_index(), EnumObj::type_index()));
    assert!(type_registry::is_instance(StrEnumObj::type_index(), EnumObj::type_index()));
    let at = |index: i32, name: &str| {
        let f = type_registry::find_field(index, name).unwrap();
        (f.offset, f.size)
    };
    assert_eq!(at(EnumObj::type_index(), "_int_index"), (24, 8));
    assert_eq!(at(EnumObj::type_index(), "_str_index"), (32, 16), "upstream's String is a 16-byte Any");
    assert_eq!(at(IntEnumObj::type_index(), "value"), (24, 8));
    assert_eq!(at(StrEnumObj::type_index(), "value"), (32, 16));
    assert_eq!(at(EnumStateObj::type_index(), "entries"), (24, 8));
    assert_eq!(at(EnumStateObj::type_index(), "attrs"), (40, 8));
    assert!(tether_core::reflection::attr_columns::attr_column(ENUM_STATE_ATTR.as_bytes()).is_some(), "the column exists up front");
    assert!(tether_core::reflection::attr_columns::attr_value(EnumObj::type_index(), b"__ffi_init__").is_none(), "init(false)");
    // A new state has empty containers.
    let state = attr_fn(EnumStateObj::type_index(), "__ffi_init__").call(&[]).unwrap().get::<ObjectRef>().unwrap();
    let entries = List::from_object(field(&state, EnumStateObj::type_index(), "entries").get::<ObjectRef>().unwrap()).unwrap();
    assert!(entries.is_empty());
    let err = attr_fn(EnumStateObj::type_index(), "__ffi_init__").call(&[Any::from(1i64)]).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
}

#[test]
fn lookups_by_either_index_and_their_errors() -> Result<(), Error> {
    let (color, made) = define("test.enum.Lookup", EnumObj::type_index(), &[("Red", 0), ("Green", 1)])?;
    assert!(enum_type::get_by_index(color, &Any::from(1i64))?.same_as(&made[1]));
    assert!(enum_type::get_by_index(color, &Any::string("Red")?)?.same_as(&made[0]));
    assert_eq!(enum_type::str_index(&made[1])?, "Green");
    assert_eq!(enum_type::canonical_index(&made[1])?.get::<String>()?, "Green");
    let missing = enum_type::get_by_index(color, &Any::string("Blue")?).unwrap_err();
    assert_eq!((missing.kind(), missing.message()), ("ValueError", "Enum `test.enum.Lookup` has no instance with index Blue"));
    let missing = enum_type::get_by_index(color, &Any::from(7i64)).unwrap_err();
    assert_eq!(missing.message(), "Enum `test.enum.Lookup` has no instance with index 7");
    // A type without state has no singletons.
    let bare = py_class_fields::alloc_type("test.enum.Bare", EnumObj::type_index())?;
    assert_eq!(enum_type::get_by_index(bare, &Any::from(0i64)).unwrap_err().kind(), "ValueError");
    // A state column holding something else is reported, not trusted.
    let odd = py_class_fields::alloc_type("test.enum.Odd", EnumObj::type_index())?;
    tether_core::reflection::attr_columns::register_attr(odd, ENUM_STATE_ATTR.as_bytes(), Any::from(3i64).as_raw())?;
    let err = enum_type::get_by_index(odd, &Any::from(0i64)).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(err.message().contains("Expected `ffi.EnumState` in enum state column"), "{}", err.message());
    Ok(())
}

#[test]
fn json_graphs_name_singletons_by_canonical_index() -> Result<(), Error> {
    let (_, colors) = define("test.enum.JsonPlain", EnumObj::type_index(), &[("Red", 0), ("Green", 1)])?;
    let (_, levels) = define("test.enum.JsonInt", IntEnumObj::type_index(), &[("LOW", -9), ("HIGH", i64::MAX)])?;
    for (obj, data) in [(&colors[1], Any::string("Green")?), (&levels[0], Any::from(-9i64)), (&levels[1], Any::from(i64::MAX))] {
        let root = Any::from_object(obj.clone());
        let text = save(&root);
        let graph = json_graph::to_json_graph(&root, &Any::none())?;
        let node = tether_core::Map::from_object(
            Array::from_object(tether_core::Map::from_object(graph.get::<ObjectRef>()?)?.get(&Any::string("nodes")?).unwrap().get::<ObjectRef>()?)?
                .iter()
                .last()
                .unwrap()
                .get::<ObjectRef>()?,
        )?;
        assert!(node.get(&Any::string("data")?).unwrap().same_value(&data), "{text}");
        assert!(load(&text)?.get::<ObjectRef>()?.same_as(obj), "{text}");
    }
    // Singletons inside containers load back as the same singletons.
    let items = Any::from_object(Array::new(vec![Any::from_object(colors[0].clone()), Any::from_object(levels[1].clone())])?.into_object());
    let back = load(&save(&items))?;
    let back: Vec<Any> = Array::from_object(back.get::<ObjectRef>()?)?.iter().cloned().collect();
    assert!(back[0].get::<ObjectRef>()?.same_as(&colors[0]) && back[1].get::<ObjectRef>()?.same_as(&levels[1]));
    // An index the type does not have is the lookup's error.
    let forged = r#"{"root_index": 0, "nodes": [{"type": "test.enum.JsonPlain", "data": "Blue"}]}"#;
    let err = load(forged).unwrap_err();
    assert_eq!((err.kind(), err.message()), ("ValueError", "Enum `test.enum.JsonPlain` has no instance with index Blue"));
    let wrong_kind = r#"{"root_index": 0, "nodes": [{"type": "test.enum.JsonInt", "data": "LOW"}]}"#;
    assert!(load(wrong_kind).is_err(), "an IntEnum node holds its int index");
    Ok(())
}

#[test]
fn deep_copies_share_singletons_and_shallow_copies_do_not() -> Result<(), Error> {
    let (_, made) = define("test.enum.Copy", StrEnumObj::type_index(), &[("add", 0)])?;
    let v = Any::from_object(made[0].clone());
    assert!(deep_copy(&v)?.get::<ObjectRef>()?.same_as(&made[0]));
    let nested = Any::from_object(List::new(vec![v.clone(), v.clone()])?.into_object());
    let copied_obj = deep_copy(&nested)?.get::<ObjectRef>()?;
    assert!(!copied_obj.same_as(&nested.get::<ObjectRef>()?), "the list itself is copied");
    let copied = List::from_object(copied_obj)?;
    assert!(copied.get(0)?.get::<ObjectRef>()?.same_as(&made[0]) && copied.get(1)?.get::<ObjectRef>()?.same_as(&made[0]));
    // A shallow copy is another object, unequal under singleton semantics.
    let dup = attr_fn(made[0].type_index(), "__ffi_shallow_copy__").call(&[v.clone()])?;
    assert!(!dup.get::<ObjectRef>()?.same_as(&made[0]));
    assert!(structural_equal(&v, &v, false, false)?);
    assert!(!structural_equal(&v, &dup, false, false)?);
    Ok(())
}

#[test]
fn enums_print_as_type_key_and_name_unless_given_a_repr() -> Result<(), Error> {
    let (_, made) = define("test.enum.Repr", EnumObj::type_index(), &[("READY", 0)])?;
    let v = Any::from_object(made[0].clone());
    assert_eq!(repr_print(&v)?, "test.enum.Repr.READY");
    let list = Any::from_object(List::new(vec![v.clone()])?.into_object());
    assert_eq!(repr_print(&list)?, "[test.enum.Repr.READY]");
    // The type's own repr replaces the default once.
    let (custom, made) = define("test.enum.CustomRepr", EnumObj::type_index(), &[("GO", 0)])?;
    let hook = Function::from_closure(|_| Any::string("custom"))?;
    tether_core::reflection::attr_columns::register_attr(custom, b"__ffi_repr__", Any::from_object(hook.into_object()).as_raw())?;
    assert_eq!(repr_print(&Any::from_object(made[0].clone()))?, "custom");
    let other = Function::from_closure(|_| Any::string("other"))?;
    let err = tether_core::reflection::attr_columns::register_attr(custom, b"__ffi_repr__", Any::from_object(other.into_object()).as_raw()).unwrap_err();
    assert!(err.message().contains("already registered"), "{}", err.message());
    Ok(())
}

#[test]
fn payload_enums_convert_only_their_instances() -> Result<(), Error> {
    let (_, made) = define("test.enum.Convert", IntEnumObj::type_index(), &[("ONE", 1)])?;
    let convert = attr_fn(IntEnumObj::type_index(), "__ffi_convert__");
    assert!(convert.call(&[Any::from_object(made[0].clone())])?.get::<ObjectRef>()?.same_as(&made[0]));
    let err = convert.call(&[Any::from(1i64)]).unwrap_err();
    assert_eq!((err.kind(), err.message()), ("TypeError", "Cannot cast from `int` to `ffi.IntEnum`"));
    let str_convert = attr_fn(StrEnumObj::type_index(), "__ffi_convert__");
    assert_eq!(str_convert.call(&[Any::from_object(made[0].clone())]).unwrap_err().kind(), "TypeError");
    Ok(())
}
