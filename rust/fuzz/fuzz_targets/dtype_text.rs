//! Data type and device strings (`TVMFFIDataTypeFromString`, the device
//! names of `Device(...)`): arbitrary text parses or fails with an error;
//! a parsed data type prints to text that parses to the same data type,
//! except opaque handles, which TVM-FFI prints as "handle" whatever their
//! bits and lanes (and "handle" parses as 64 bits, one lane).

#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_core::tensor::device::device_from_str;
use tether_core::tensor::dtype;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = device_from_str(text);
    let Ok(parsed) = dtype::from_str(text) else { return };
    let Ok(printed) = dtype::to_string(parsed) else { return };
    if parsed.code == tether_sys::dlpack::dtype_code::kDLOpaqueHandle {
        assert_eq!(printed, "handle");
        return;
    }
    let again = dtype::from_str(&printed).unwrap_or_else(|e| panic!("{printed:?} (from {text:?}) does not parse: {}", e.message()));
    assert_eq!((again.code, again.bits, again.lanes), (parsed.code, parsed.bits, parsed.lanes), "{text:?} -> {printed:?}");
});
