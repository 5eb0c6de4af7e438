//! `DLDevice` and `DLDataType` as Any values (`kTVMFFIDevice`,
//! `kTVMFFIDataType`: 8-byte PODs, copied in and out), with TVM-FFI's
//! conversions from strings: a str converts to a data type through the
//! dtype parser (`"float32"`) and to a device through `"<name>[:<id>]"`
//! (`"cuda:1"`, `"cpu"`; text after a space is ignored, as upstream does).

use crate::abi::{type_index as ti, DLDataType, DLDevice, TVMFFIAny};
use crate::values::any::{Any, FromAny};
use crate::values::error::Error;
use crate::types::type_registry::type_key_of;
use tether_sys::dlpack::device_type as dev;

/// The device names TVM-FFI parses, with their types.
const DEVICE_NAMES: &[(&str, i32)] = &[
    ("cpu", dev::kDLCPU),
    ("cuda", dev::kDLCUDA),
    ("opencl", dev::kDLOpenCL),
    ("vulkan", dev::kDLVulkan),
    ("metal", dev::kDLMetal),
    ("mps", dev::kDLMetal),
    ("vpi", dev::kDLVPI),
    ("rocm", dev::kDLROCM),
    ("ext_dev", dev::kDLExtDev),
    ("hexagon", dev::kDLHexagon),
    ("wgpu", dev::kDLWebGPU),
    ("webgpu", dev::kDLWebGPU),
    ("maia", dev::kDLMAIA),
    ("trn", dev::kDLTrn),
];

/// Parse `"<name>[:<id>]"`; `None` when the string names no device.
pub fn device_from_str(s: &str) -> Option<DLDevice> {
    let s = s.split(' ').next().unwrap_or("");
    let (name, id) = match s.split_once(':') {
        Some((name, id)) => (name, Some(id)),
        None => (s, None),
    };
    let (_, device_type) = DEVICE_NAMES.iter().find(|(n, _)| *n == name)?;
    let device_id = match id {
        None => 0,
        Some(id) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => id.parse::<i32>().ok()?,
        Some(_) => return None,
    };
    Some(DLDevice { device_type: *device_type, device_id })
}

impl From<DLDataType> for Any {
    fn from(d: DLDataType) -> Any {
        Any::data_type(d)
    }
}

impl From<DLDevice> for Any {
    fn from(d: DLDevice) -> Any {
        Any::device(d)
    }
}

fn mismatch(expected: &str, v: &TVMFFIAny) -> Error {
    Error::type_error(format!("expected {expected}, got {}", type_key_of(v.type_index)))
}

impl FromAny for DLDataType {
    const EXPECTED: &'static str = "DataType";
    fn from_any(v: &TVMFFIAny) -> Result<Self, Error> {
        if v.type_index == ti::kTVMFFIDataType {
            // SAFETY: a DataType value carries v_dtype.
            return Ok(unsafe { v.value.v_dtype });
        }
        match String::from_any(v) {
            Ok(s) => super::dtype::from_str(&s),
            Err(_) => Err(mismatch(Self::EXPECTED, v)),
        }
    }
}

impl FromAny for DLDevice {
    const EXPECTED: &'static str = "Device";
    fn from_any(v: &TVMFFIAny) -> Result<Self, Error> {
        if v.type_index == ti::kTVMFFIDevice {
            // SAFETY: a Device value carries v_device.
            return Ok(unsafe { v.value.v_device });
        }
        let s = String::from_any(v).map_err(|_| mismatch(Self::EXPECTED, v))?;
        device_from_str(&s).ok_or_else(|| mismatch(Self::EXPECTED, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_strings_parse_like_upstream() {
        assert_eq!(device_from_str("cuda:1"), Some(DLDevice { device_type: 2, device_id: 1 }));
        assert_eq!(device_from_str("cpu"), Some(DLDevice { device_type: 1, device_id: 0 }));
        assert_eq!(device_from_str("mps:0 extra"), Some(DLDevice { device_type: 8, device_id: 0 }));
        assert_eq!(device_from_str("cuda:"), None);
        assert_eq!(device_from_str("cuda:1:2"), None);
        assert_eq!(device_from_str("tpu"), None);
        assert_eq!(device_from_str("cuda:99999999999"), None);
    }
}
