//! The printable form of FFI values (`ffi.ReprPrint`), as TVM-FFI prints
//! it: `None`, `True`, ints, floats with six significant digits, strings
//! Python-escaped in double quotes, bytes as `b"..."`, Arrays as tuples
//! `(1,)`, Lists `[...]`, Maps and Dicts `{k: v}`, `Shape(2, 3)`, devices `cpu:0`,
//! tensors `float32[2, 3]@cpu:0`,
//! and reflected objects as `type_key(field=value, ...)` (fields flagged
//! ReprOff left out, a type without printable fields as its bare key). A
//! type's `__ffi_repr__` hook `(obj, fn_repr) -> str` replaces the default;
//! `fn_repr` prints nested values with the same cycle and sharing state. An
//! object met again while it is being printed (a cycle) prints as the
//! back-reference marker `...`; one met again after (shared) prints its
//! text again.
//!
//! With `TVM_FFI_REPR_WITH_ADDR=1` in the environment (read at each call,
//! as TVM-FFI does) object addresses are shown too: `type_key@0x..(...)`,
//! containers and tensors followed by `@0x..`, and a back-reference as
//! `...@0x..`, so shared and cyclic structure can be told apart.

use std::collections::HashMap;
use std::sync::Arc;

use crate::abi::{field_flag, type_index as ti};
use crate::values::any::{Any, AnyView};
use crate::containers::{Array, List, Shape};
use crate::values::error::Error;
use crate::values::function::Function;
use crate::object::ObjectRef;
use crate::structural::active_path::AddressMap;
use crate::structural::{deep_stack, hook_callback};
use crate::types::type_facts_cache::TypeFactsCache;
use crate::types::type_registry;

use super::c_number_format::stream_default;

/// The environment variable that turns on addresses in the printed form.
pub const WITH_ADDR_ENV: &str = "TVM_FFI_REPR_WITH_ADDR";

/// Whether `TVM_FFI_REPR_WITH_ADDR` is `1` now.
fn addresses_requested() -> bool {
    std::env::var_os(WITH_ADDR_ENV).is_some_and(|v| v == "1")
}

/// `0x` and the hex address of `obj`, TVM-FFI's `AddressStr`.
fn address_text(obj: &ObjectRef) -> String {
    format!("0x{:x}", obj.as_ptr() as usize)
}

/// The printable form of `value`, with addresses when
/// `TVM_FFI_REPR_WITH_ADDR=1`.
pub fn repr_print(value: &Any) -> Result<String, Error> {
    repr_print_showing_addresses(value, addresses_requested())
}

/// The printable form of `value`, with object addresses when `show_addr`.
pub fn repr_print_showing_addresses(value: &Any, show_addr: bool) -> Result<String, Error> {
    let mut p = Printer {
        state: AddressMap::default(),
        types: HashMap::new(),
        buffers: vec![(0, String::new())],
        next_generation: 1,
        show_addr,
    };
    p.write(value)?;
    Ok(p.buffers.pop().map(|(_, text)| text).unwrap_or_default())
}

enum State {
    InProgress,
    /// Printed as `range` of the buffer of that generation.
    Done { generation: u64, range: std::ops::Range<usize> },
}

/// Prints into one growing buffer, so output and memory stay linear in the
/// input however deep it is nested; an object printed again (shared) is
/// copied from where its first printing sits in the buffer. A hook's
/// `fn_repr` prints into a buffer of its own (its text goes back to the
/// hook), which gets a new generation so ranges never point into a buffer
/// that is gone.
struct Printer {
    /// Keyed by object address; the reference keeps the address unique.
    state: AddressMap<(ObjectRef, State)>,
    /// What printing needs of each type met, looked up once per print.
    types: HashMap<i32, Arc<ReprType>>,
    /// Live buffers, innermost last, with their generations.
    buffers: Vec<(u64, String)>,
    next_generation: u64,
    /// Addresses are shown (`TVM_FFI_REPR_WITH_ADDR=1` when printing began).
    show_addr: bool,
}

/// A reflected type as printing sees it: its key, its `__ffi_repr__` hook
/// and its printable fields by name (the first of each name, ancestors'
/// first).
struct ReprType {
    key: String,
    hook: Option<Any>,
    fields: Vec<(String, &'static crate::abi::TVMFFIFieldInfo)>,
}

impl ReprType {
    fn of(index: i32) -> ReprType {
        let mut seen = std::collections::HashSet::new();
        let fields = type_registry::all_fields(index)
            .into_iter()
            .filter(|f| f.flags & field_flag::kReprOff == 0)
            .map(|f| (crate::structural::field_name(f), f))
            .filter(|(name, _)| seen.insert(name.clone()))
            .collect();
        ReprType { key: type_registry::type_key_of(index), hook: crate::reflection::attr_columns::attr_value(index, b"__ffi_repr__"), fields }
    }
}

// SAFETY: the field records are the type table's, never changed or freed
// once registered, so any thread may read them; the hook is an Any, itself
// Send and Sync.
unsafe impl Send for ReprType {}
// SAFETY: as above.
unsafe impl Sync for ReprType {}

/// Printing facts of earlier prints, by type index (printing one small
/// object is mostly these lookups).
static SHARED: TypeFactsCache<i32, ReprType> = TypeFactsCache::new();

fn shared_repr_type(index: i32) -> Arc<ReprType> {
    match SHARED.get_or_make(index, || Ok::<_, std::convert::Infallible>(ReprType::of(index))) {
        Ok(t) => t,
        Err(never) => match never {},
    }
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
    fn out(&mut self) -> &mut String {
        &mut self.buffers.last_mut().expect("a live buffer").1
    }

    /// The text an earlier printing left, while its buffer is live.
    fn printed(&self, generation: u64, range: &std::ops::Range<usize>) -> Option<(usize, std::ops::Range<usize>)> {
        let at = self.buffers.iter().position(|(g, _)| *g == generation)?;
        Some((at, range.clone()))
    }

    /// Print `value` on an explicit stack of open containers and objects,
    /// so nesting depth costs heap memory, not native stack (only an
    /// `__ffi_repr__` hook nests natively, through `fn_repr`).
    fn write(&mut self, value: &Any) -> Result<(), Error> {
        let mut stack: Vec<Open> = Vec::new();
        if let Some(open) = self.start(value)? {
            stack.push(open);
        }
        while let Some(top) = stack.last_mut() {
            match self.next_item(top)? {
                Some(item) => {
                    if let Some(open) = self.start(&item)? {
                        stack.push(open);
                    }
                }
                None => {
                    let open = stack.pop().expect("the frame read above");
                    self.close(open);
                }
            }
        }
        Ok(())
    }

    /// Print a value that opens nothing, or write the opening of a
    /// container or object and return it.
    fn start(&mut self, value: &Any) -> Result<Option<Open>, Error> {
        let raw = value.as_raw();
        // SAFETY: each arm reads the payload field its type index carries.
        let pod = unsafe {
            match raw.type_index {
                ti::kTVMFFINone => Some("None".to_string()),
                ti::kTVMFFIBool => Some(if raw.value.v_int64 != 0 { "True" } else { "False" }.into()),
                ti::kTVMFFIInt => Some(raw.value.v_int64.to_string()),
                ti::kTVMFFIFloat => Some(stream_default(raw.value.v_float64)),
                ti::kTVMFFIDataType => {
                    let d = raw.value.v_dtype;
                    Some(dtype_text(d.code, d.bits, d.lanes))
                }
                ti::kTVMFFIDevice => {
                    let d = raw.value.v_device;
                    Some(format!("{}:{}", device_name(d.device_type as i32), d.device_id))
                }
                _ => None,
            }
        };
        let leaf = match (pod, raw.type_index) {
            (Some(text), _) => Some(text),
            (None, ti::kTVMFFISmallStr | ti::kTVMFFIStr) => Some(escape_py(value.view().str_bytes().unwrap_or_default())),
            (None, ti::kTVMFFISmallBytes | ti::kTVMFFIBytes) => Some(format_bytes(value.view().str_bytes().unwrap_or_default())),
            (None, ti::kTVMFFIBigInt) => Some(crate::values::big_int::decimal::to_decimal(&crate::structural::big_int_hooks::words_of(raw)?)),
            (None, i) if !crate::structural::is_object_index(i) => Some(value.type_key()),
            _ => None,
        };
        if let Some(text) = leaf {
            self.out().push_str(&text);
            return Ok(None);
        }
        let obj = value.as_object().expect("object index");
        let addr = obj.as_ptr() as usize;
        match self.state.get(&addr) {
            Some((_, State::InProgress)) => {
                let marker = if self.show_addr { format!("...@{}", address_text(&obj)) } else { "...".to_string() };
                self.out().push_str(&marker);
                return Ok(None);
            }
            Some((_, State::Done { generation, range })) => {
                if let Some((at, range)) = self.printed(*generation, range) {
                    let last = self.buffers.len() - 1;
                    if at == last {
                        self.out().extend_from_within(range);
                    } else {
                        let text = self.buffers[at].1[range].to_string();
                        self.out().push_str(&text);
                    }
                    return Ok(None);
                }
                // Printed into a hook's buffer that is gone: print again.
            }
            None => {}
        }
        let index = obj.type_index();
        if index == ti::kTVMFFITensor {
            let t = crate::tensor::Tensor::from_object(obj.clone())?;
            let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
            let dt = t.dtype();
            let dev = t.device();
            let mut text = format!(
                "{}[{}]@{}:{}",
                dtype_text(dt.code, dt.bits, dt.lanes),
                dims.join(", "),
                device_name(dev.device_type as i32),
                dev.device_id
            );
            if self.show_addr {
                text.push('@');
                text.push_str(&address_text(&obj));
            }
            self.out().push_str(&text);
            return Ok(None);
        }
        if index == ti::kTVMFFIShape {
            let dims: Vec<String> = Shape::from_object(obj)?.dims().iter().map(|d| d.to_string()).collect();
            let text = format!("Shape({})", dims.join(", "));
            self.out().push_str(&text);
            return Ok(None);
        }
        self.state.insert(addr, (obj.clone(), State::InProgress));
        let start = self.out().len();
        let ty = self.type_of(index);
        if let Some(hook) = ty.hook.clone() {
            let text = deep_stack::guarded(|| self.repr_with_hook(&obj, hook))?;
            self.out().push_str(&text);
            self.container_address(&obj);
            self.done(obj, start);
            return Ok(None);
        }
        let items = match index {
            ti::kTVMFFIArray => {
                self.out().push('(');
                Items::Tuple(Array::from_object(obj.clone())?.iter().cloned().collect())
            }
            ti::kTVMFFIList => {
                self.out().push('[');
                Items::List(List::from_object(obj.clone())?.to_vec())
            }
            ti::kTVMFFIMap | ti::kTVMFFIDict => {
                self.out().push('{');
                Items::Map(crate::structural::MapLike::from_object(obj.clone())?.items())
            }
            _ => Items::Fields(ty),
        };
        Ok(Some(Open { obj, start, items, next: 0 }))
    }

    fn type_of(&mut self, index: i32) -> Arc<ReprType> {
        self.types.entry(index).or_insert_with(|| shared_repr_type(index)).clone()
    }

    /// Record that `obj` was printed from `start` to the end of the
    /// current buffer.
    fn done(&mut self, obj: ObjectRef, start: usize) {
        let (generation, end) = {
            let (g, buffer) = self.buffers.last().expect("a live buffer");
            (*g, buffer.len())
        };
        self.state.insert(obj.as_ptr() as usize, (obj, State::Done { generation, range: start..end }));
    }

    fn repr_with_hook(&mut self, obj: &ObjectRef, hook: Any) -> Result<String, Error> {
        let hook = Function::from_object(hook.get::<ObjectRef>()?)?;
        let me = Any::from_object(obj.clone());
        hook_callback::with_scoped_callback(self, fn_repr_body, |cb| {
            hook.call(&[me, Any::from_object(cb.as_object().clone())])?.get::<String>()
        })
    }

    /// The next item of `open` to print, after writing what separates it
    /// from the previous one.
    fn next_item(&mut self, open: &mut Open) -> Result<Option<Any>, Error> {
        let i = open.next;
        open.next += 1;
        match &open.items {
            Items::Tuple(items) | Items::List(items) => {
                let Some(v) = items.get(i) else { return Ok(None) };
                let v = v.clone();
                if i > 0 {
                    self.out().push_str(", ");
                }
                Ok(Some(v))
            }
            Items::Map(entries) => {
                // Keys and values alternate: entry i / 2, its value when odd.
                let Some((k, v)) = entries.get(i / 2) else { return Ok(None) };
                let item = if i % 2 == 0 { k.clone() } else { v.clone() };
                let sep = match (i % 2, i) {
                    (1, _) => ": ",
                    (_, 0) => "",
                    _ => ", ",
                };
                self.out().push_str(sep);
                Ok(Some(item))
            }
            Items::Fields(ty) => {
                let ty = ty.clone();
                let Some((name, field)) = ty.fields.get(i) else { return Ok(None) };
                let v = crate::structural::read_field(&open.obj, field)?;
                if i == 0 {
                    self.object_header(&open.obj, &ty.key);
                    self.out().push('(');
                } else {
                    self.out().push_str(", ");
                }
                self.out().push_str(name);
                self.out().push('=');
                Ok(Some(v))
            }
        }
    }

    /// Write the end of a container or object whose items are printed.
    fn close(&mut self, open: Open) {
        match &open.items {
            Items::Tuple(items) if items.len() == 1 => self.out().push_str(",)"),
            Items::Tuple(_) => self.out().push(')'),
            Items::List(_) => self.out().push(']'),
            Items::Map(_) => self.out().push('}'),
            Items::Fields(ty) if ty.fields.is_empty() => {
                let ty = ty.clone();
                self.object_header(&open.obj, &ty.key);
            }
            Items::Fields(_) => self.out().push(')'),
        }
        self.container_address(&open.obj);
        self.done(open.obj, open.start);
    }

    /// Write an object's type key `key`, with `@address` when addresses
    /// are shown.
    fn object_header(&mut self, obj: &ObjectRef, key: &str) {
        self.out().push_str(key);
        if self.show_addr {
            let at = format!("@{}", address_text(obj));
            self.out().push_str(&at);
        }
    }

    /// `@address` after an Array, List, Map or Dict when addresses are shown.
    fn container_address(&mut self, obj: &ObjectRef) {
        if self.show_addr && matches!(obj.type_index(), ti::kTVMFFIArray | ti::kTVMFFIList | ti::kTVMFFIMap | ti::kTVMFFIDict) {
            let text = format!("@{}", address_text(obj));
            self.out().push_str(&text);
        }
    }

    /// The text of `value` on its own (for a hook's `fn_repr`).
    fn repr_alone(&mut self, value: &Any) -> Result<String, Error> {
        let generation = self.next_generation;
        self.next_generation += 1;
        self.buffers.push((generation, String::new()));
        let r = self.write(value);
        let (_, text) = self.buffers.pop().expect("the buffer pushed above");
        r.map(|()| text)
    }
}

/// The items of a container or object being printed.
enum Items {
    Tuple(Vec<Any>),
    List(Vec<Any>),
    Map(Vec<(Any, Any)>),
    /// A reflected object's printable fields (its type's).
    Fields(Arc<ReprType>),
}

/// A container or object whose opening is written and whose items from
/// `next` on are not; its text starts at `start` in the current buffer.
struct Open {
    obj: ObjectRef,
    start: usize,
    items: Items,
    next: usize,
}

fn fn_repr_body(p: &mut Printer, args: &[AnyView<'_>]) -> Result<Any, Error> {
    let v = args.first().ok_or_else(|| Error::type_error("fn_repr takes one value"))?.to_owned()?;
    Any::string(&p.repr_alone(&v)?)
}
