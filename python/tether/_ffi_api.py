"""The core's ``ffi.*`` global functions as attributes of this module
(``_ffi_api.ReprPrint`` is ``get_global_func("ffi.ReprPrint")``), as
tvm_ffi's ``_ffi_api`` offers them."""

from . import registry

registry.init_ffi_api("ffi", __name__)
