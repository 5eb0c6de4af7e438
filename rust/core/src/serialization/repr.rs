//! The printable form of FFI values (`ffi.ReprPrint`), as TVM-FFI prints
//! it: `None`, `True`, ints, floats with six significant digits, strings
//! Python-escaped in double quotes, bytes as `b"..."`, Arrays as tuples
//! `(1,)`, Lists `[...]`, Maps and Dicts `{k: v}`, `Shape(2, 3)`, devices `cpu:0`,
//! tensors `float32[2, 3]@cpu:0`,
//! and reflected objects as `type_key(field=value, ...)` (fields flagged
//! ReprOff left out, a type without printable fields as its bare key). A
//! type's `__ffi_repr__` hook `(obj, fn_repr) -> str` replaces the default;
//! `fn_repr` prints nested values with the same cycle and sharing state. An
//! object met again while it is being printed prints as `...`.

use std::collections::HashMap;

use crate::abi::{field_flag, type_index as ti};
use crate::any::{Any, AnyView};
use crate::containers::{Array, List, Shape};
use crate::error::Error;
use crate::function::Function;
use crate::object::ObjectRef;
use crate::structural::{deep_stack, hook_callback};
use crate::type_registry;

use super::c_number_format::stream_default;

/// The printable form of `value`.
pub fn repr_print(value: &Any) -> Result<String, Error> {
    Printer { state: HashMap::new() }.repr(value)
}

enum State {
    InProgress,
    Done(String),
}

struct Printer {
    /// Keyed by object address; the reference keeps the address unique.
    state: HashMap<usize, (ObjectRef, State)>,
}

/// TVM-FFI's `EscapedStringPy`.
pub fn escape_py(s: &[u8]) -> String {
    let mut out = String::from("\"");
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let at = |k: usize| s.get(i + k).copied().unwrap_or(0);
        if c == 0x1b && at(1) == b'[' {
            let mut j = i + 2;
            while j < s.len() && (s[j].is_ascii_digit() || s[j] == b';') {
                j += 1;
            }
            if j < s.len() && (s[j] == b'm' || s[j] == b'K') {
                out.push_str("\\x1b[");
                out.push_str(&String::from_utf8_lossy(&s[i + 2..=j]));
                i = j + 1;
                continue;
            }
        }
        match c {
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            c if c < 0x80 => {
                if c < 0x20 || c == 0x7f {
                    out.push_str(&format!("\\x{c:02x}"));
                } else {
                    out.push(c as char);
                }
            }
            _ => {
                let cont = |k: usize| i + k < s.len() && at(k) & 0xC0 == 0x80;
                if c & 0xE0 == 0xC0 && cont(1) {
                    let cp = ((c as u32 & 0x1F) << 6) | (at(1) as u32 & 0x3F);
                    out.push_str(&format!("\\u{cp:04x}"));
                    i += 2;
                    continue;
                } else if c & 0xF0 == 0xE0 && i + 2 < s.len() && cont(1) && cont(2) {
                    let cp = ((c as u32 & 0x0F) << 12) | ((at(1) as u32 & 0x3F) << 6) | (at(2) as u32 & 0x3F);
                    out.push_str(&format!("\\u{cp:04x}"));
                    i += 3;
                    continue;
                } else if c & 0xF8 == 0xF0 && i + 3 < s.len() && cont(1) && cont(2) && cont(3) {
                    let cp = ((c as u32 & 0x07) << 18)
                        | ((at(1) as u32 & 0x3F) << 12)
                        | ((at(2) as u32 & 0x3F) << 6)
                        | (at(3) as u32 & 0x3F);
                    out.push_str(&format!("\\U{cp:08x}"));
                    i += 4;
                    continue;
                } else {
                    out.push_str(&format!("\\x{c:02x}"));
                }
            }
        }
        i += 1;
    }
    out.push('"');
    out
}

/// Bytes as a Python-style literal `b"..."`.
pub fn format_bytes(b: &[u8]) -> String {
    let mut out = String::from("b\"");
    for &c in b {
        if (32..127).contains(&c) && c != b'"' && c != b'\\' {
            out.push(c as char);
        } else {
            out.push_str(&format!("\\x{c:02x}"));
        }
    }
    out.push('"');
    out
}

fn device_name(device_type: i32) -> &'static str {
    match device_type {
        1 => "cpu",
        2 => "cuda",
        3 => "cuda_host",
        4 => "opencl",
        7 => "vulkan",
        8 => "metal",
        9 => "vpi",
        10 => "rocm",
        11 => "rocm_host",
        12 => "ext_dev",
        13 => "cuda_managed",
        14 => "oneapi",
        15 => "webgpu",
        16 => "hexagon",
        17 => "maia",
        18 => "trn",
        _ => "unknown",
    }
}

/// A data type in TVM-FFI's text form (`int32`, `float16x4`, `bool`).
pub fn dtype_text(code: u8, bits: u8, lanes: u16) -> String {
    // The one spelling of the core (`tensor::dtype`, TVM-FFI's), every DLPack
    // code included; a code nobody registered prints as `custom[code]bits`.
    crate::tensor::dtype::to_string(tether_sys::dlpack::DLDataType { code, bits, lanes })
        .unwrap_or_else(|_| format!("custom[{code}]{bits}"))
}

impl Printer {
    fn repr(&mut self, value: &Any) -> Result<String, Error> {
        let raw = value.as_raw();
        // SAFETY: each arm reads the payload field its type index carries.
        unsafe {
            match raw.type_index {
                ti::kTVMFFINone => return Ok("None".into()),
                ti::kTVMFFIBool => return Ok(if raw.value.v_int64 != 0 { "True" } else { "False" }.into()),
                ti::kTVMFFIInt => return Ok(raw.value.v_int64.to_string()),
                ti::kTVMFFIFloat => return Ok(stream_default(raw.value.v_float64)),
                ti::kTVMFFIDataType => {
                    let d = raw.value.v_dtype;
                    return Ok(dtype_text(d.code, d.bits, d.lanes));
                }
                ti::kTVMFFIDevice => {
                    let d = raw.value.v_device;
                    return Ok(format!("{}:{}", device_name(d.device_type as i32), d.device_id));
                }
                _ => {}
            }
        }
        match raw.type_index {
            ti::kTVMFFISmallStr | ti::kTVMFFIStr => return Ok(escape_py(value.view().str_bytes().unwrap_or_default())),
            ti::kTVMFFISmallBytes | ti::kTVMFFIBytes => return Ok(format_bytes(value.view().str_bytes().unwrap_or_default())),
            ti::kTVMFFIBigInt => return Ok(crate::big_int::decimal::to_decimal(&crate::big_int::hooks::words_of(raw)?)),
            i if !crate::structural::is_object_index(i) => return Ok(value.type_key()),
            _ => {}
        }
        let obj = value.as_object().expect("object index");
        let addr = obj.as_ptr() as usize;
        match self.state.get(&addr) {
            Some((_, State::Done(s))) => return Ok(s.clone()),
            Some((_, State::InProgress)) => return Ok("...".into()),
            None => {}
        }
        let index = obj.type_index();
        if index == ti::kTVMFFITensor {
            let t = crate::tensor::Tensor::from_object(obj)?;
            let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
            let dt = t.dtype();
            let dev = t.device();
            return Ok(format!(
                "{}[{}]@{}:{}",
                dtype_text(dt.code, dt.bits, dt.lanes),
                dims.join(", "),
                device_name(dev.device_type as i32),
                dev.device_id
            ));
        }
        if index == ti::kTVMFFIShape {
            let dims: Vec<String> = Shape::from_object(obj)?.dims().iter().map(|d| d.to_string()).collect();
            return Ok(format!("Shape({})", dims.join(", ")));
        }
        self.state.insert(addr, (obj.clone(), State::InProgress));
        let text = deep_stack::guarded(|| self.repr_object(&obj))?;
        self.state.insert(addr, (obj, State::Done(text.clone())));
        Ok(text)
    }

    fn join(&mut self, items: &[Any]) -> Result<Vec<String>, Error> {
        items.iter().map(|v| self.repr(v)).collect()
    }

    fn repr_object(&mut self, obj: &ObjectRef) -> Result<String, Error> {
        let index = obj.type_index();
        if let Some(hook) = type_registry::attr_value(index, b"__ffi_repr__") {
            let hook = Function::from_object(hook.get::<ObjectRef>()?)?;
            let me = Any::from_object(obj.clone());
            return hook_callback::with_scoped_callback(self, fn_repr_body, |cb| {
                hook.call(&[me, Any::from_object(cb.as_object().clone())])?.get::<String>()
            });
        }
        match index {
            ti::kTVMFFIArray => {
                let items: Vec<Any> = Array::from_object(obj.clone())?.iter().cloned().collect();
                let parts = self.join(&items)?;
                let comma = if parts.len() == 1 { "," } else { "" };
                Ok(format!("({}{comma})", parts.join(", ")))
            }
            ti::kTVMFFIList => {
                let items = List::from_object(obj.clone())?.to_vec();
                Ok(format!("[{}]", self.join(&items)?.join(", ")))
            }
            ti::kTVMFFIMap | ti::kTVMFFIDict => {
                let map = crate::structural::MapLike::from_object(obj.clone())?;
                let mut parts = Vec::with_capacity(map.len());
                for (k, v) in map.items().iter() {
                    parts.push(format!("{}: {}", self.repr(k)?, self.repr(v)?));
                }
                Ok(format!("{{{}}}", parts.join(", ")))
            }
            _ => {
                let key = type_registry::type_key_of(index);
                let mut parts = Vec::new();
                let mut seen = std::collections::HashSet::new();
                for field in type_registry::all_fields(index) {
                    if field.flags & field_flag::kReprOff != 0 {
                        continue;
                    }
                    let v = crate::structural::read_field(obj, field)?;
                    let text = self.repr(&v)?;
                    let name = crate::structural::field_name(field);
                    if seen.insert(name.clone()) {
                        parts.push(format!("{name}={text}"));
                    }
                }
                Ok(if parts.is_empty() { key } else { format!("{key}({})", parts.join(", ")) })
            }
        }
    }
}

fn fn_repr_body(p: &mut Printer, args: &[AnyView<'_>]) -> Result<Any, Error> {
    let v = args.first().ok_or_else(|| Error::type_error("fn_repr takes one value"))?.to_owned()?;
    Any::string(&p.repr(&v)?)
}
