//! Devices written as text (`"cpu"`, `"cuda:1"`): what a typed function's
//! `Device` parameter accepts besides a device value, as TVM-FFI's
//! `DLDevice` conversion does. The names are DLPack's device kinds under
//! the spellings TVM-FFI prints and parses; anything else (`"llvm"`, an
//! id that is not a decimal number) names no device.

use tether_sys::abi::DLDevice;
use tether_sys::dlpack::device_type as dev;

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

/// The device `"<name>[:<id>]"` names; `None` when it names none. Text
/// after a space is ignored (a device string may carry options there).
pub fn parse(s: &str) -> Option<DLDevice> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids_parse_and_others_do_not() {
        let cuda1 = parse("cuda:1").expect("cuda:1");
        assert_eq!((cuda1.device_type, cuda1.device_id), (dev::kDLCUDA, 1));
        let cpu = parse("cpu").expect("cpu");
        assert_eq!((cpu.device_type, cpu.device_id), (dev::kDLCPU, 0));
        for bad in ["llvm", "c", "cl", "nvptx", "cuda:", "cuda:x", "cuda:-1", "", "cuda:99999999999"] {
            assert!(parse(bad).is_none(), "{bad:?} parsed");
        }
    }
}
