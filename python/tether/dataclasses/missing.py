"""The ``MISSING`` sentinel: "no value given" for defaults and signatures.

It is the core's own "no value" object (``tvm_ffi.core.MISSING``, which
prints as ``<MISSING>``), so a field's default, a signature's default and
a value crossing into ``__ffi_init__`` all use one sentinel, as TVM-FFI's.
"""

from ..core.sentinels import MISSING

__all__ = ["MISSING"]
