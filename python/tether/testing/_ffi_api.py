"""The ``testing.*`` global functions of the testing library (loaded with
the core when :mod:`tether` is imported), as attributes of this module:
``_ffi_api.echo`` is ``get_global_func("testing.echo")``."""

from ..registry import init_ffi_api as _init_ffi_api

_init_ffi_api("testing", __name__)
