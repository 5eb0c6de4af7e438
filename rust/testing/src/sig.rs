//! Typed signatures, as TVM-FFI's typed functions have them: the static
//! types of parameters and results ([`Ty`]), written out as the type
//! schema JSON the reflection metadata carries (`{"type":"ffi.Array",
//! "args":[{"type":"int"}]}`) and as the text errors show
//! (`Array<int>`), and the conversion an argument or field value goes
//! through on the way in, failing with upstream's messages
//! (`Mismatched type on argument #0 when calling: `f(0: int) -> int`.
//! Expected `int` but got `float``).

use std::sync::OnceLock;

use tether_sys::abi::{type_index as ti, DLDataType};

use crate::core_api::api;
use crate::ffi::containers;
use crate::ffi::type_table::{is_instance, type_index_of};
use crate::ffi::{Any, AnyView, Error, Function};

/// A static type.
#[derive(Clone, Debug)]
pub enum Ty {
    Int,
    Float,
    Bool,
    Str,
    Bytes,
    Device,
    DataType,
    DLTensorPtr,
    Any,
    /// No value (a result only).
    Void,
    /// An object type by key; `nullable` accepts None (as `ObjectRef` does).
    Object { key: &'static str, nullable: bool },
    Function,
    /// A function with a typed signature (checked as any function).
    TypedFunction(Vec<Ty>, Box<Ty>),
    Array(Option<Box<Ty>>),
    List(Option<Box<Ty>>),
    Map(Option<Box<(Ty, Ty)>>),
    Dict(Option<Box<(Ty, Ty)>>),
    Optional(Box<Ty>),
    Variant(Vec<Ty>),
}

/// Shorthands for building types.
pub fn obj(key: &'static str) -> Ty {
    Ty::Object { key, nullable: false }
}
pub fn any_object() -> Ty {
    Ty::Object { key: "ffi.Object", nullable: true }
}
pub fn tensor() -> Ty {
    obj("ffi.Tensor")
}
pub fn array(t: Ty) -> Ty {
    Ty::Array(Some(Box::new(t)))
}
pub fn list(t: Ty) -> Ty {
    Ty::List(Some(Box::new(t)))
}
pub fn map(k: Ty, v: Ty) -> Ty {
    Ty::Map(Some(Box::new((k, v))))
}
pub fn dict(k: Ty, v: Ty) -> Ty {
    Ty::Dict(Some(Box::new((k, v))))
}
pub fn optional(t: Ty) -> Ty {
    Ty::Optional(Box::new(t))
}

impl Ty {
    /// The type as error messages write it.
    pub fn display(&self) -> String {
        match self {
            Ty::Int => "int".into(),
            Ty::Float => "float".into(),
            Ty::Bool => "bool".into(),
            Ty::Str => "str".into(),
            Ty::Bytes => "bytes".into(),
            Ty::Device => "Device".into(),
            Ty::DataType => "DataType".into(),
            Ty::DLTensorPtr => "DLTensor*".into(),
            Ty::Any => "Any".into(),
            Ty::Void => "void".into(),
            Ty::Object { key, .. } => (*key).into(),
            Ty::Function => "ffi.Function".into(),
            Ty::TypedFunction(params, ret) => signature_text(None, params, ret),
            Ty::Array(None) => "ffi.Array".into(),
            Ty::Array(Some(t)) => format!("Array<{}>", t.display()),
            Ty::List(None) => "ffi.List".into(),
            Ty::List(Some(t)) => format!("List<{}>", t.display()),
            Ty::Map(None) => "ffi.Map".into(),
            Ty::Map(Some(kv)) => format!("Map<{}, {}>", kv.0.display(), kv.1.display()),
            Ty::Dict(None) => "ffi.Dict".into(),
            Ty::Dict(Some(kv)) => format!("Dict<{}, {}>", kv.0.display(), kv.1.display()),
            Ty::Optional(t) => format!("Optional<{}>", t.display()),
            Ty::Variant(ts) => format!("Variant<{}>", ts.iter().map(Ty::display).collect::<Vec<_>>().join(", ")),
        }
    }

    /// The type schema (JSON) the reflection metadata carries.
    pub fn schema(&self) -> String {
        let plain = |t: &str| format!("{{\"type\":\"{t}\"}}");
        let with_args = |t: &str, args: &[&Ty]| {
            let args: Vec<String> = args.iter().map(|a| a.schema()).collect();
            format!("{{\"type\":\"{t}\",\"args\":[{}]}}", args.join(","))
        };
        match self {
            Ty::Int => plain("int"),
            Ty::Float => plain("float"),
            Ty::Bool => plain("bool"),
            Ty::Str => plain("ffi.String"),
            Ty::Bytes => plain("ffi.Bytes"),
            Ty::Device => plain("Device"),
            Ty::DataType => plain("DataType"),
            Ty::DLTensorPtr => plain("DLTensor*"),
            Ty::Any => plain("Any"),
            Ty::Void => plain("None"),
            Ty::Object { key, .. } => plain(key),
            Ty::Function => plain("ffi.Function"),
            Ty::TypedFunction(params, ret) => function_schema(params, ret),
            Ty::Array(None) => plain("ffi.Array"),
            Ty::Array(Some(t)) => with_args("ffi.Array", &[t]),
            Ty::List(None) => plain("ffi.List"),
            Ty::List(Some(t)) => with_args("ffi.List", &[t]),
            Ty::Map(None) => plain("ffi.Map"),
            Ty::Map(Some(kv)) => with_args("ffi.Map", &[&kv.0, &kv.1]),
            Ty::Dict(None) => plain("ffi.Dict"),
            Ty::Dict(Some(kv)) => with_args("ffi.Dict", &[&kv.0, &kv.1]),
            Ty::Optional(t) => with_args("Optional", &[t]),
            Ty::Variant(ts) => with_args("Variant", &ts.iter().collect::<Vec<_>>()),
        }
    }

    /// Convert a value to this type, as a typed function converts its
    /// argument; on failure, what was given (as messages name it).
    pub fn convert(&self, v: &AnyView<'_>) -> Result<Any, String> {
        let got = || v.type_key();
        let owned = |v: &AnyView<'_>| v.to_owned().map_err(|e| e.message());
        let index = v.type_index();
        match self {
            Ty::Int => v.int().map(Any::int).ok_or_else(got),
            Ty::Float => v.float().map(Any::float).ok_or_else(got),
            Ty::Bool => v.bool().map(Any::bool).ok_or_else(got),
            Ty::Str => match index {
                ti::kTVMFFISmallStr | ti::kTVMFFIStr | ti::kTVMFFIRawStr => owned(v),
                _ => Err(got()),
            },
            Ty::Bytes => match index {
                ti::kTVMFFISmallBytes | ti::kTVMFFIBytes | ti::kTVMFFIByteArrayPtr => owned(v),
                _ => Err(got()),
            },
            Ty::Device => match index {
                ti::kTVMFFISmallStr | ti::kTVMFFIStr | ti::kTVMFFIRawStr => {
                    v.str().as_deref().and_then(crate::device_text::parse).map(Any::device).ok_or_else(got)
                }
                _ => v.device().map(Any::device).ok_or_else(got),
            },
            Ty::DataType => match index {
                ti::kTVMFFIDataType => owned(v),
                ti::kTVMFFISmallStr | ti::kTVMFFIStr | ti::kTVMFFIRawStr => parse_dtype(&v.str().unwrap_or_default()).ok_or_else(got),
                _ => Err(got()),
            },
            Ty::DLTensorPtr => v.dltensor().map(|p| Any::opaque_ptr(ti::kTVMFFIDLTensorPtr, p.cast())).ok_or_else(got),
            Ty::Any => owned(v),
            Ty::Void => v.is_none().then(Any::none).ok_or_else(got),
            Ty::Object { key, nullable } => {
                if v.is_none() {
                    return if *nullable { Ok(Any::none()) } else { Err(got()) };
                }
                if index >= ti::kTVMFFIStaticObjectBegin && type_index_of_cached(key).is_some_and(|t| is_instance(index, t)) {
                    owned(v)
                } else {
                    Err(got())
                }
            }
            Ty::Function | Ty::TypedFunction(..) => if index == ti::kTVMFFIFunction { owned(v) } else { Err(got()) },
            Ty::Array(elem) => match index {
                ti::kTVMFFIArray => check_items(v, elem.as_deref(), "Array").and_then(|_| owned(v)),
                ti::kTVMFFIList => {
                    check_items(v, elem.as_deref(), "List")?;
                    containers::array(&containers::seq_items(v).unwrap_or_default()).map_err(|e| e.message())
                }
                _ => Err(got()),
            },
            Ty::List(elem) => match index {
                ti::kTVMFFIList => check_items(v, elem.as_deref(), "List").and_then(|_| owned(v)),
                ti::kTVMFFIArray => {
                    check_items(v, elem.as_deref(), "Array")?;
                    containers::list(&containers::seq_items(v).unwrap_or_default()).map_err(|e| e.message())
                }
                _ => Err(got()),
            },
            Ty::Map(kv) => match index {
                ti::kTVMFFIMap => check_pairs(v, kv.as_deref(), "Map").and_then(|_| owned(v)),
                ti::kTVMFFIDict => {
                    let pairs = check_pairs(v, kv.as_deref(), "Dict")?;
                    containers::map(&pairs).map_err(|e| e.message())
                }
                _ => Err(got()),
            },
            Ty::Dict(kv) => match index {
                ti::kTVMFFIDict => check_pairs(v, kv.as_deref(), "Dict").and_then(|_| owned(v)),
                ti::kTVMFFIMap => {
                    let pairs = check_pairs(v, kv.as_deref(), "Map")?;
                    containers::dict(&pairs).map_err(|e| e.message())
                }
                _ => Err(got()),
            },
            Ty::Optional(t) => {
                if v.is_none() {
                    Ok(Any::none())
                } else {
                    t.convert(v)
                }
            }
            Ty::Variant(ts) => ts.iter().find_map(|t| t.convert(v).ok()).ok_or_else(got),
        }
    }
}

/// Check every item of an Array/List against `elem`.
fn check_items(v: &AnyView<'_>, elem: Option<&Ty>, what: &str) -> Result<(), String> {
    let Some(elem) = elem else { return Ok(()) };
    if matches!(elem, Ty::Any) {
        return Ok(());
    }
    for (i, item) in containers::seq_items(v).unwrap_or_default().iter().enumerate() {
        if let Err(got) = elem.convert(&item.view()) {
            return Err(format!("{what}[index {i}: {got}]"));
        }
    }
    Ok(())
}

/// Check every pair of a Map/Dict against `kv`; the pairs.
fn check_pairs(v: &AnyView<'_>, kv: Option<&(Ty, Ty)>, what: &str) -> Result<Vec<(Any, Any)>, String> {
    let pairs = containers::map_items(v).map_err(|e| e.message())?.unwrap_or_default();
    if let Some((k, val)) = kv {
        for (key, value) in &pairs {
            if let Err(got) = k.convert(&key.view()) {
                return Err(format!("{what}[some key is {got}, V]"));
            }
            if let Err(got) = val.convert(&value.view()) {
                return Err(format!("{what}[K, some value is {got}]"));
            }
        }
    }
    Ok(pairs)
}

fn parse_dtype(s: &str) -> Option<Any> {
    let b = crate::ffi::bytes::byte_array(s);
    let mut out = DLDataType { code: 0, bits: 0, lanes: 0 };
    // SAFETY: valid input bytes and output slot.
    let rc = unsafe { (api().TVMFFIDataTypeFromString)(&b, &mut out) };
    if rc != 0 {
        drop(Error::take_raised());
        return None;
    }
    Some(Any::dtype(out))
}

/// Type indices of the object keys signatures name, looked up once each
/// (types registered later are looked up again until found).
fn type_index_of_cached(key: &'static str) -> Option<i32> {
    static CACHE: OnceLock<std::sync::RwLock<std::collections::HashMap<&'static str, i32>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(i) = cache.read().ok().and_then(|c| c.get(key).copied()) {
        return Some(i);
    }
    let i = type_index_of(key)?;
    if let Ok(mut c) = cache.write() {
        c.insert(key, i);
    }
    Some(i)
}

/// `name(0: int, 1: str) -> int`, as call errors show a signature.
pub fn signature_text(name: Option<&str>, params: &[Ty], ret: &Ty) -> String {
    let params: Vec<String> = params.iter().enumerate().map(|(i, t)| format!("{i}: {}", t.display())).collect();
    format!("{}({}) -> {}", name.unwrap_or(""), params.join(", "), ret.display())
}

/// The schema of a function type.
pub fn function_schema(params: &[Ty], ret: &Ty) -> String {
    let params: Vec<String> = params.iter().map(Ty::schema).collect();
    format!(
        "{{\"type\":\"ffi.Function\",\"named_args\":{{\"return\":[{}],\"params\":[{}]}}}}",
        ret.schema(),
        params.join(",")
    )
}

/// A JSON string literal of `s`.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Reflection metadata: `{"type_schema":"<schema>"<extra>}`, where `extra`
/// is more members (`,"int_attr":1`) or empty.
pub fn metadata(schema: &str, extra: &str) -> String {
    format!("{{\"type_schema\":{}{extra}}}", json_string(schema))
}

/// A function checking its arguments against `params` (converted values
/// reach `body`), with upstream's messages naming `name`.
pub fn typed_function<F>(name: &str, params: Vec<Ty>, ret: &Ty, body: F) -> Result<Function, Error>
where
    F: Fn(Vec<Any>) -> Result<Any, Error> + Send + Sync + 'static,
{
    let sig = signature_text(Some(name), &params, ret);
    Function::from_closure(move |args: &[AnyView<'_>]| {
        if args.len() != params.len() {
            return Err(Error::type_error(format!(
                "Mismatched number of arguments when calling: `{sig}`. Expected {} but got {} arguments",
                params.len(),
                args.len()
            )));
        }
        let mut converted = Vec::with_capacity(args.len());
        for (i, (t, a)) in params.iter().zip(args).enumerate() {
            match t.convert(a) {
                Ok(v) => converted.push(v),
                Err(got) => {
                    return Err(Error::type_error(format!(
                        "Mismatched type on argument #{i} when calling: `{sig}`. Expected `{}` but got `{got}`",
                        t.display()
                    )))
                }
            }
        }
        body(converted)
    })
}
