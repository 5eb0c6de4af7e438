"""JSON object graphs (tvm_ffi's ``serialization``): a text form of an FFI
value that keeps shared references shared, over the core's
``ffi.ToJSONGraphString`` / ``ffi.FromJSONGraphString``. Objects read back
are ordinary tied objects (one wrapper per native object)."""

from __future__ import annotations

from typing import Any, Optional

from . import core

__all__ = ["from_json_graph_str", "to_json_graph_str"]


def to_json_graph_str(obj: Any, metadata: Optional[dict] = None) -> str:
    """``obj`` as a JSON graph string; ``metadata`` (a dict) is stored with it."""
    return core._ffi.call(core._builtin("ffi.ToJSONGraphString"), obj, metadata)


def from_json_graph_str(json_str: str) -> Any:
    """The value a :func:`to_json_graph_str` string describes."""
    return core._ffi.call(core._builtin("ffi.FromJSONGraphString"), json_str)
