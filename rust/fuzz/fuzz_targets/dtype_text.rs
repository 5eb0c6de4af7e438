//! Data type and device strings (`TVMFFIDataTypeFromString`, the device
//! names of `Device(...)`): arbitrary text parses or fails with an error;
//! a parsed data type prints to text that parses to the same data type,
//! except opaque handles, which TVM-FFI prints as "handle" whatever their
//! bits and lanes (and "handle" parses as 64 bits, one lane); void (a
//! handle of no bits and no lanes) prints as "" and parses back; a
//! scalable vector of one ("xvscalex1") prints without lanes, as TVM-FFI's.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_core::tensor::device::device_from_str;
use tether_core::tensor::dtype;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = device_from_str(text);
    let Ok(parsed) = dtype::from_str(text) else { return };
    let Ok(printed) = dtype::to_string(parsed) else { return };
    let void = parsed.bits == 0 && parsed.lanes == 0;
    if parsed.code == tether_sys::dlpack::dtype_code::kDLOpaqueHandle && !void {
        assert_eq!(printed, "handle");
        return;
    }
    // Lanes of 2^15 and more print in the scalable-vector form
    // ("xvscalex<n>"), which TVM-FFI's parser takes only for the integer and
    // float codes before the float8 family, so those do not round trip there.
    use tether_sys::dlpack::dtype_code::kDLFloat8_e3m4;
    if (parsed.lanes as i16) < 0 && parsed.code >= kDLFloat8_e3m4 {
        return;
    }
    // A scalable vector of one (lanes stored as -1) prints with no lanes
    // suffix, as TVM-FFI prints it, so it reads back as one lane.
    if parsed.lanes as i16 == -1 {
        assert_eq!(dtype::from_str(&printed).map(|d| d.lanes).ok(), Some(1), "{text:?} -> {printed:?}");
        return;
    }
    let again = dtype::from_str(&printed).unwrap_or_else(|e| panic!("{printed:?} (from {text:?}) does not parse: {}", e.message()));
    assert_eq!((again.code, again.bits, again.lanes), (parsed.code, parsed.bits, parsed.lanes), "{text:?} -> {printed:?}");
});
