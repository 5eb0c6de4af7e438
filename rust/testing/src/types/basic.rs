//! Plain test objects: `testing.TestIntPair` (fields, a method, an explicit
//! constructor, a conversion attribute), `testing.TestObjectBase` and its
//! derived type (defaults, inheritance, containers), an object holding
//! object pointers, a type that cannot be copied, a pair of types the
//! Python side leaves unregistered, and `testing.TestDeepCopyEdges`.

use tether_sys::abi::type_index as ti;

use super::construct;
use crate::ffi::containers;
use crate::ffi::{Any, Error, Function};
use crate::registration::def;
use crate::reflect::{field, get_field, TypeDef};
use crate::sig::{any_object, array, map, obj, optional, Ty};

fn int_of(v: Result<Any, Error>) -> Result<i64, Error> {
    v?.view().int().ok_or_else(|| Error::type_error("expected an int field"))
}

pub fn register() -> Result<(), Error> {
    let pair = TypeDef::new("testing.TestIntPair")
        .final_type()
        .field(field("a", Ty::Int).doc("Field `a`"))
        .field(field("b", Ty::Int).doc("Field `b`"))
        .init(vec![Ty::Int, Ty::Int], "", |l, a| construct(l, &["a", "b"], a))
        .method("sum", vec![], Ty::Int, "Method to compute sum of a and b", |a| {
            let o = a[0].clone().into_object().ok_or_else(|| Error::type_error("sum needs the pair"))?;
            Ok(Any::int(int_of(get_field(&o, "a"))? + int_of(get_field(&o, "b"))?))
        })
        .register()?;
    // `__ffi_convert__`: a value as a TestIntPair, or a TypeError.
    let index = pair.type_index;
    let convert = Function::from_closure(move |args| {
        let v = args.first().ok_or_else(|| Error::type_error("__ffi_convert__ takes one value"))?;
        match v.object() {
            Some(o) if o.type_index() == index => Ok(Any::object(o)),
            _ => Err(Error::type_error(format!("Cannot convert from type `{}` to `testing.TestIntPair`", v.type_key()))),
        }
    })?;
    crate::reflect::register_attr(index, "__ffi_convert__", &convert.into_any())?;
    def("testing.TestIntPairSum", vec![obj("testing.TestIntPair")], Ty::Int, |a| {
        let o = a[0].clone().into_object().ok_or_else(|| Error::type_error("TestIntPairSum needs a pair"))?;
        Ok(Any::int(int_of(get_field(&o, "a"))? + int_of(get_field(&o, "b"))?))
    })?;

    TypeDef::new("testing.TestObjectBase")
        .child_slots(1)
        .field(field("v_i64", Ty::Int).rw().default(Any::int(10)).doc("i64 field"))
        .field(field("v_f64", Ty::Float).default(Any::float(10.0)))
        .field(field("v_str", Ty::Str).rw().default(Any::string("hello")?))
        .method("add_i64", vec![Ty::Int], Ty::Int, "add_i64 method", |a| {
            let o = a[0].clone().into_object().ok_or_else(|| Error::type_error("add_i64 needs the object"))?;
            Ok(Any::int(int_of(get_field(&o, "v_i64"))? + a[1].view().int().unwrap_or(0)))
        })
        .register()?;
    TypeDef::new("testing.TestObjectDerived")
        .parent("testing.TestObjectBase")
        .final_type()
        .field(field("v_map", map(Ty::Any, Ty::Any)).rw().initial(containers::map(&[])?))
        .field(field("v_array", array(Ty::Any)).rw().initial(containers::array(&[])?))
        .register()?;
    TypeDef::new("testing.TestObjectPtrHolder")
        .field(field("value", obj("testing.TestObjectBase")).rw())
        .field(
            field("optional_value", optional(obj("testing.TestObjectBase")))
                .rw()
                .default(Any::none())
                .static_type_index(ti::kTVMFFIObject),
        )
        .register()?;
    TypeDef::new("testing.TestNonCopyable")
        .no_creator()
        .not_copyable()
        .field(field("value", Ty::Int))
        .init(vec![Ty::Int], "", |l, a| construct(l, &["value"], a))
        .register()?;

    TypeDef::new("testing.TestUnregisteredBaseObject")
        .no_creator()
        .field(field("v1", Ty::Int))
        .init(vec![Ty::Int], "Constructor of TestUnregisteredBaseObject", |l, a| construct(l, &["v1"], a))
        .method("get_v1_plus_one", vec![], Ty::Int, "Get (v1 + 1) from TestUnregisteredBaseObject", |a| {
            let o = a[0].clone().into_object().ok_or_else(|| Error::type_error("get_v1_plus_one needs the object"))?;
            Ok(Any::int(int_of(get_field(&o, "v1"))? + 1))
        })
        .register()?;
    let unregistered = TypeDef::new("testing.TestUnregisteredObject")
        .parent("testing.TestUnregisteredBaseObject")
        .no_creator()
        .field(field("v2", Ty::Int))
        .init(vec![Ty::Int, Ty::Int], "Constructor of TestUnregisteredObject", |l, a| construct(l, &["v1", "v2"], a))
        .method("get_v2_plus_two", vec![], Ty::Int, "Get (v2 + 2) from TestUnregisteredObject", |a| {
            let o = a[0].clone().into_object().ok_or_else(|| Error::type_error("get_v2_plus_two needs the object"))?;
            Ok(Any::int(int_of(get_field(&o, "v2"))? + 2))
        })
        .register()?;
    let layout = unregistered.layout.clone();
    def("testing.make_unregistered_object", vec![], any_object(), move |_| {
        Ok(Any::object(construct(&layout, &["v1", "v2"], vec![Any::int(41), Any::int(42)])?))
    })?;

    TypeDef::new("testing.TestDeepCopyEdges")
        .field(field("v_any", Ty::Any).rw())
        .field(field("v_obj", any_object()).rw())
        .register()?;
    // Declared upstream but never defined through ObjectDef: a type key
    // with no metadata, fields or attributes.
    TypeDef::new("testing.TestFrozenCxx").final_type().bare().register()?;
    Ok(())
}
