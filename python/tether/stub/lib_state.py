"""Reading the live registry: global functions and object types by prefix.

A name ``a.b.c`` belongs to prefix ``a.b``. Functions and types are described
with the data model of :mod:`.utils`; type descriptions are cached, so call
these once the libraries of interest are loaded.
"""

from __future__ import annotations

import functools
import heapq
from typing import Dict, List

from ..core import TypeSchema, _lookup_or_register_type_info_from_type_key
from ..registry import get_global_func, get_global_func_metadata, list_global_func_names
from . import consts as C
from .utils import FuncInfo, NamedTypeSchema, ObjectInfo, _parse_type_schema, _untyped_function


def GetRegisteredTypeKeys() -> List[str]:  # noqa: N802 - the registry function's name
    """Every registered type key (through the registry's ``ffi.GetRegisteredTypeKeys``)."""
    return [str(key) for key in get_global_func("ffi.GetRegisteredTypeKeys")()]


@functools.lru_cache(maxsize=None)
def object_info_from_type_key(type_key: str) -> ObjectInfo:
    """The :class:`ObjectInfo` of ``type_key``; ``ValueError`` when it is not registered."""
    info = _lookup_or_register_type_info_from_type_key(str(type_key))
    assert info.type_key == type_key, (info.type_key, type_key)
    return ObjectInfo.from_type_info(info)


def _warn(message: str) -> None:
    print(f"{C.TERM_YELLOW}[Skipped] {message}{C.TERM_RESET}")


def collect_global_funcs() -> Dict[str, List[FuncInfo]]:
    """Registered global functions by prefix, each list sorted by name.

    A function that recorded no type schema is typed as taking and returning
    anything; a name without a dot is skipped with a warning.
    """
    by_prefix: Dict[str, List[FuncInfo]] = {}
    for name in list_global_func_names():
        if "." not in name:
            _warn(f"Invalid name in global function: {name}")
            continue
        try:
            info = _func_info_from_global_name(name)
        except Exception:  # noqa: BLE001 - e.g. an unparsable schema
            _warn(f"Function has no type schema: {name}")
            continue
        by_prefix.setdefault(name.rsplit(".", 1)[0], []).append(info)
    for funcs in by_prefix.values():
        funcs.sort(key=lambda f: f.schema.name)
    return by_prefix


def collect_type_keys() -> Dict[str, List[str]]:
    """Registered type keys by prefix, each list sorted (keys without a dot are left out)."""
    by_prefix: Dict[str, List[str]] = {}
    for key in GetRegisteredTypeKeys():
        prefix, dot, _ = key.rpartition(".")
        if dot:
            by_prefix.setdefault(prefix, []).append(key)
    for keys in by_prefix.values():
        keys.sort()
    return by_prefix


def toposort_objects(type_keys: List[str]) -> List[ObjectInfo]:
    """Describe ``type_keys`` (duplicates dropped), parents before children.

    Among the types ready at any point, the alphabetically first comes next;
    only parents inside ``type_keys`` constrain the order.
    """
    infos = {key: object_info_from_type_key(key) for key in dict.fromkeys(type_keys)}
    children: Dict[str, List[str]] = {key: [] for key in infos}
    waiting: Dict[str, int] = {}
    for key, info in infos.items():
        parent = info.parent_type_key
        if parent in infos:
            children[parent].append(key)
            waiting[key] = 1
        else:
            waiting[key] = 0
    ready = [key for key, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order: List[str] = []
    while ready:
        key = heapq.heappop(ready)
        order.append(key)
        for child in children[key]:
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, child)
    assert len(order) == len(infos)
    return [infos[key] for key in order]


@functools.lru_cache(maxsize=None)
def _func_info_from_global_name(name: str) -> FuncInfo:
    """The :class:`FuncInfo` of global function ``name`` from its recorded metadata."""
    raw = get_global_func_metadata(name).get("type_schema")
    schema = _untyped_function() if raw is None else _parse_type_schema(raw)
    return FuncInfo(schema=NamedTypeSchema(name=name, schema=schema), is_member=False)

