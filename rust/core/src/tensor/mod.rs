//! Tensors and DLPack: `ffi.Tensor` objects laid out as TVM-FFI's
//! `TensorObj` ([`tensor`]), data type strings ([`dtype`]), `DLDevice` and
//! `DLDataType` as Any values ([`device`]), and the execution environment's
//! streams and tensor allocator ([`env`]). The raw DLPack layouts are in
//! `tether_sys::dlpack`; the C functions in `c_api/dlpack.rs`.

pub mod device;
pub mod dtype;
pub mod env;
#[allow(clippy::module_inception)]
pub mod tensor;

pub use tensor::{Tensor, TensorObj};

use crate::abi::{type_index as ti, DLDevice};
use crate::values::any::Any;
use crate::containers::{Array, List, Map};
use crate::values::error::Error;
use crate::values::function::Function;
use tether_sys::dlpack::device_type::kDLCPU;

/// The first device other than CPU among the Tensors reachable from
/// `root` through Arrays, Lists and Map values (depth first, in order), or
/// `cpu:0`. An explicit stack keeps deep nesting off the native stack.
pub fn find_first_non_cpu_device(root: &Any) -> Result<DLDevice, Error> {
    let mut stack = vec![root.clone()];
    while let Some(item) = stack.pop() {
        let Some(obj) = item.as_object() else { continue };
        let children: Vec<Any> = match obj.type_index() {
            ti::kTVMFFITensor => {
                let device = Tensor::from_object(obj)?.device();
                if device.device_type != kDLCPU {
                    return Ok(device);
                }
                continue;
            }
            ti::kTVMFFIArray => Array::from_object(obj)?.iter().cloned().collect(),
            ti::kTVMFFIList => List::from_object(obj)?.to_vec(),
            ti::kTVMFFIMap => Map::from_object(obj)?.items().into_iter().map(|(_, v)| v).collect(),
            _ => continue,
        };
        stack.extend(children.into_iter().rev());
    }
    Ok(DLDevice { device_type: kDLCPU, device_id: 0 })
}

/// The tensor globals TVM-FFI registers, under its names.
pub(crate) fn builtins() -> Vec<(&'static str, Result<Function, Error>)> {
    vec![(
        "ffi.ContainerFindFirstNonCPUDevice",
        Function::from_closure(|args| {
            crate::values::function::expect_args(args, 1, "ffi.ContainerFindFirstNonCPUDevice")?;
            Ok(Any::device(find_first_non_cpu_device(&args[0].to_owned()?)?))
        }),
    )]
}
