"""Global functions and object types, with tvm_ffi's ``registry`` names."""

from __future__ import annotations

import json
import sys
from typing import Any, Optional

from . import _ffi
from .core import _builtin, get_global_func, register_global_func, register_object

__all__ = [
    "get_global_func", "get_global_func_metadata", "get_registered_type_keys", "init_ffi_api",
    "list_global_func_names", "register_global_func", "register_object", "remove_global_func",
]


def list_global_func_names() -> list:
    """The names of all registered global functions."""
    names = _ffi.call(_builtin("ffi.FunctionListGlobalNamesFunctor"))
    return [names(i) for i in range(names(-1))]


def remove_global_func(name: str) -> None:
    """Remove the global function ``name`` (no error when it is missing)."""
    _ffi.call(_builtin("ffi.FunctionRemoveGlobal"), name)


def get_global_func_metadata(name: str) -> dict:
    """The metadata recorded with global function ``name`` (its
    ``type_schema``, ...); ``{}`` when it has none. RuntimeError when no
    such function exists."""
    text = _ffi.call(_builtin("ffi.GetGlobalFuncMetadata"), name)
    return json.loads(text) if text else {}


def get_registered_type_keys() -> list:
    """The keys of every registered type."""
    return [str(k) for k in _ffi.call(_builtin("ffi.GetRegisteredTypeKeys"))]


def init_ffi_api(namespace: str, target_module_name: Optional[str] = None) -> None:
    """Put every global function ``<namespace>.<name>`` (one level deep) on
    module ``target_module_name`` (default: ``namespace``) as ``name``, as
    packages' ``_ffi_api.py`` files do with tvm_ffi."""
    target_module_name = target_module_name or namespace
    prefix = namespace[4:] if namespace.startswith("tvm.") else namespace
    target = sys.modules[target_module_name]
    for name in list_global_func_names():
        if not name.startswith(prefix):
            continue
        fname = name[len(prefix) + 1:]
        if not fname or "." in fname:
            continue
        setattr(target, fname, get_global_func(name))
