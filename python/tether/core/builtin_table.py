"""The core's builtin functions that tether's own Python code calls.

They are looked up once, when the package is imported: tether's containers
and conversions keep using these even if a user later overrides or removes
the global names (``register_global_func(..., override=True)``,
``ffi.FunctionRemoveGlobal``).
"""

from __future__ import annotations

from .. import _ffi

_BUILTIN_NAMES = (
    "ffi.Array", "ffi.ArraySize", "ffi.ArrayGetItem", "ffi.ArrayContains",
    "ffi.List", "ffi.ListSize", "ffi.ListGetItem", "ffi.ListSetItem", "ffi.ListAppend",
    "ffi.ListInsert", "ffi.ListPop", "ffi.ListClear", "ffi.ListContains", "ffi.ListReverse",
    "ffi.ListEraseRange", "ffi.ListReplaceSlice",
    "ffi.Map", "ffi.MapSize", "ffi.MapGetItem", "ffi.MapCount", "ffi.MapGetItemOrMissing",
    "ffi.MapForwardIterFunctor",
    "ffi.Dict", "ffi.DictSize", "ffi.DictGetItem", "ffi.DictSetItem", "ffi.DictCount",
    "ffi.DictErase", "ffi.DictClear", "ffi.DictGetItemOrMissing", "ffi.DictForwardIterFunctor",
    "ffi.GetInvalidObject", "ffi.GetKwargsObject", "ffi.GetRegisteredTypeKeys", "ffi.Shape", "tether.dataclass.RegisterType",
    "tether.dataclass.AllocPyClassType", "tether.dataclass.RegisterPyClassFields",
    "ffi.ReprPrint", "ffi.ToJSONGraphString", "ffi.FromJSONGraphString", "ffi.GetGlobalFuncMetadata",
    "ffi.FunctionListGlobalNamesFunctor", "ffi.FunctionRemoveGlobal", "ffi.DeepCopy",
)


def load() -> None:
    """Look the builtins up (once the Function class is registered, so the
    wrappers have it)."""
    found = {}
    for name in _BUILTIN_NAMES:
        f = _ffi.get_global(name)
        if f is None:
            raise ImportError(f"tether's core lacks its builtin function {name!r}")
        found[name] = f
    _builtins.update(found)


_builtins: dict = {}


def _builtin(name: str) -> "Function":
    return _builtins[name]


def _get_global(name: str, *args):
    return _ffi.call(_builtin(name), *args)


