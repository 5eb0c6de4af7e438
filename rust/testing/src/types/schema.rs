//! Type schemas of every kind: `testing.SchemaAllTypes` (a field and a
//! method signature of each kind, with docs and extra metadata) and the
//! `testing.schema_*` globals (identity functions over each parameter type,
//! plus a few shapes: no arguments, no result, a packed function, nested
//! containers and variants). Stub generators and signature tools read
//! their metadata; calling them checks and converts arguments as typed
//! functions do.

use tether_sys::abi::{DLDataType, DLDevice};

use crate::ffi::containers::{self, map_items, seq_items};
use crate::ffi::{Any, Error};
use crate::registration::{def, def_packed, def_with_meta};
use crate::reflect::{field, get_field, set_field, TypeDef};
use crate::sig::{any_object, array, dict, list, map, obj, optional, tensor, Ty};

const ATTRS: &str = ",\"bool_attr\":true,\"int_attr\":1,\"str_attr\":\"hello\"";

fn identity(v: Vec<Any>) -> Result<Any, Error> {
    Ok(v.into_iter().next().unwrap_or_else(Any::none))
}

fn str_array_map() -> Ty {
    map(Ty::Str, array(Ty::Int))
}

/// `lhs` with `rhs`'s entries added; a key in both gets both arrays.
fn merge_maps(lhs: &Any, rhs: &Any) -> Result<Any, Error> {
    let mut pairs = map_items(&lhs.view())?.unwrap_or_default();
    for (k, v) in map_items(&rhs.view())?.unwrap_or_default() {
        let key = k.view().str();
        match pairs.iter_mut().find(|(pk, _)| pk.view().str() == key) {
            Some((_, existing)) => {
                let mut items = seq_items(&existing.view()).unwrap_or_default();
                items.extend(seq_items(&v.view()).unwrap_or_default());
                *existing = containers::array(&items)?;
            }
            None => pairs.push((k, v)),
        }
    }
    containers::map(&pairs)
}

fn register_type() -> Result<(), Error> {
    let variant = Ty::Variant(vec![Ty::Str, array(Ty::Int), map(Ty::Str, Ty::Int)]);
    let registered = TypeDef::new("testing.SchemaAllTypes")
        .no_creator()
        .field(field("v_bool", Ty::Bool).rw().doc("bool field").meta(ATTRS).initial(Any::bool(true)))
        .field(field("v_int", Ty::Int).rw().default(Any::int(0)).doc("int field"))
        .field(field("v_float", Ty::Float).rw().default(Any::float(0.0)).doc("float field"))
        .field(field("v_device", Ty::Device).rw().doc("device field").initial(Any::device(DLDevice { device_type: 1, device_id: 0 })))
        .field(field("v_dtype", Ty::DataType).rw().doc("dtype field").initial(Any::dtype(DLDataType { code: 2, bits: 32, lanes: 1 })))
        .field(field("v_string", Ty::Str).rw().default(Any::string("s")?).doc("string field"))
        .field(field("v_bytes", Ty::Bytes).rw().doc("bytes field"))
        .field(field("v_opt_int", optional(Ty::Int)).rw().doc("optional int"))
        .field(field("v_opt_str", optional(Ty::Str)).rw().doc("optional str"))
        .field(field("v_arr_int", array(Ty::Int)).rw().doc("array<int>").initial(containers::array(&[])?))
        .field(field("v_arr_str", array(Ty::Str)).rw().doc("array<str>").initial(containers::array(&[])?))
        .field(field("v_map_str_int", map(Ty::Str, Ty::Int)).rw().doc("map<str,int>").initial(containers::map(&[])?))
        .field(field("v_map_str_arr_int", str_array_map()).rw().doc("map<str,array<int>>").initial(containers::map(&[])?))
        .field(field("v_variant", variant).rw().doc("variant<str,array<int>,map<str,int>>").initial(Any::string("v")?))
        .field(
            field("v_opt_arr_variant", optional(array(Ty::Variant(vec![Ty::Int, Ty::Str]))))
                .rw()
                .doc("optional<array<variant<int,str>>>"),
        )
        .method_with_meta("add_int", vec![Ty::Int], Ty::Int, "add int method", ATTRS, |a| {
            let o = a[0].clone().into_object().ok_or_else(|| Error::type_error("add_int needs the object"))?;
            let v = get_field(&o, "v_int")?.view().int().unwrap_or(0);
            Ok(Any::int(v + a[1].view().int().unwrap_or(0)))
        })
        .method("append_int", vec![array(Ty::Int), Ty::Int], array(Ty::Int), "append int to array", |a| {
            let mut items = seq_items(&a[1].view()).unwrap_or_default();
            items.push(a[2].clone());
            containers::array(&items)
        })
        .method("maybe_concat", vec![optional(Ty::Str), optional(Ty::Str)], optional(Ty::Str), "optional concat", |a| {
            match (a[1].view().str(), a[2].view().str()) {
                (Some(x), Some(y)) => Any::string(&(x + &y)),
                (Some(_), None) => Ok(a[1].clone()),
                (None, Some(_)) => Ok(a[2].clone()),
                (None, None) => Ok(Any::none()),
            }
        })
        .method("merge_map", vec![str_array_map(), str_array_map()], str_array_map(), "merge maps", |a| merge_maps(&a[1], &a[2]))
        .register()?;
    // A static creator is also a static method, registered after the type.
    let layout = registered.layout.clone();
    let index = registered.type_index;
    let make_with = crate::sig::typed_function(
        "testing.SchemaAllTypes.make_with",
        vec![Ty::Int, Ty::Float, Ty::Str],
        &obj("testing.SchemaAllTypes"),
        move |a| {
            let o = crate::reflect::instance::instantiate(&layout)?;
            for (name, v) in ["v_int", "v_float", "v_string"].into_iter().zip(a) {
                set_field(&o, &layout, name, v)?;
            }
            Ok(Any::object(o))
        },
    )?;
    crate::reflect::object_def::register_static_method(
        index,
        "make_with",
        "Constructor with subset of fields",
        &[Ty::Int, Ty::Float, Ty::Str],
        &obj("testing.SchemaAllTypes"),
        &make_with,
    )
}

pub fn register() -> Result<(), Error> {
    register_type()?;
    def_with_meta("testing.schema_id_int", vec![Ty::Int], Ty::Int, ATTRS, identity)?;
    let ids: Vec<(&'static str, Ty)> = vec![
        ("testing.schema_id_float", Ty::Float),
        ("testing.schema_id_bool", Ty::Bool),
        ("testing.schema_id_device", Ty::Device),
        ("testing.schema_id_dtype", Ty::DataType),
        ("testing.schema_id_string", Ty::Str),
        ("testing.schema_id_bytes", Ty::Bytes),
        ("testing.schema_id_func", Ty::Function),
        (
            "testing.schema_id_func_typed",
            Ty::TypedFunction(vec![Ty::Int, Ty::Float, Ty::Function], Box::new(Ty::Void)),
        ),
        ("testing.schema_id_any", Ty::Any),
        ("testing.schema_id_object", any_object()),
        ("testing.schema_id_tensor", tensor()),
        ("testing.schema_id_opt_int", optional(Ty::Int)),
        ("testing.schema_id_opt_str", optional(Ty::Str)),
        ("testing.schema_id_opt_obj", optional(any_object())),
        ("testing.schema_id_arr_int", array(Ty::Int)),
        ("testing.schema_id_arr_str", array(Ty::Str)),
        ("testing.schema_id_arr_obj", array(obj("ffi.Object"))),
        ("testing.schema_id_arr", Ty::Array(None)),
        ("testing.schema_id_list_int", list(Ty::Int)),
        ("testing.schema_id_list_str", list(Ty::Str)),
        ("testing.schema_id_list_obj", list(obj("ffi.Object"))),
        ("testing.schema_id_map_str_int", map(Ty::Str, Ty::Int)),
        ("testing.schema_id_map_str_str", map(Ty::Str, Ty::Str)),
        ("testing.schema_id_map_str_obj", map(Ty::Str, obj("ffi.Object"))),
        ("testing.schema_id_map", Ty::Map(None)),
        ("testing.schema_id_dict_str_int", dict(Ty::Str, Ty::Int)),
        ("testing.schema_id_dict_str_str", dict(Ty::Str, Ty::Str)),
        ("testing.schema_id_variant_int_str", Ty::Variant(vec![Ty::Int, Ty::Str])),
    ];
    for (name, ty) in ids {
        def(name, vec![ty.clone()], ty, identity)?;
    }
    // A borrowed DLTensor* cannot be returned: a result must own its value.
    def("testing.schema_id_dltensor", vec![Ty::DLTensorPtr], Ty::DLTensorPtr, |_| {
        Err(Error::runtime_error("DLTensor* cannot be held in Any as it does not retain ownership, use Tensor instead"))
    })?;
    def("testing.schema_tensor_view_input", vec![Ty::DLTensorPtr], Ty::Void, |_| Ok(Any::none()))?;
    def_packed("testing.schema_packed", |_| Ok(Any::none()))?;
    def(
        "testing.schema_arr_map_opt",
        vec![array(optional(Ty::Int)), str_array_map(), optional(Ty::Str)],
        str_array_map(),
        |a| {
            if a[2].is_none() {
                return Ok(a[1].clone());
            }
            let extra: Vec<Any> = seq_items(&a[0].view()).unwrap_or_default().into_iter().filter(|v| !v.is_none()).collect();
            let mut pairs = map_items(&a[1].view())?.unwrap_or_default();
            let key = a[2].view().str();
            let extra = containers::array(&extra)?;
            match pairs.iter_mut().find(|(k, _)| k.view().str() == key) {
                Some((_, v)) => *v = extra,
                None => pairs.push((a[2].clone(), extra)),
            }
            containers::map(&pairs)
        },
    )?;
    let mix = Ty::Variant(vec![Ty::Int, Ty::Str, array(Ty::Int)]);
    def("testing.schema_variant_mix", vec![mix.clone()], mix, identity)?;
    def("testing.schema_no_args", vec![], Ty::Int, |_| Ok(Any::int(1)))?;
    def("testing.schema_no_return", vec![Ty::Int], Ty::Void, |_| Ok(Any::none()))?;
    def("testing.schema_no_args_no_return", vec![], Ty::Void, |_| Ok(Any::none()))?;
    Ok(())
}
