"""Python naming tables of the Python target.

How schema origins become Python types (what a call returns, and the looser
types it accepts), and which module a registry prefix is imported from. Kept
apart from :mod:`tether.stub.consts` so other targets see none of it.
"""

from __future__ import annotations

#: Schema origin -> Python type a call returns (the seed of a run's ``ty-map``).
TY_MAP_DEFAULTS = {
    "Any": "typing.Any",
    "Callable": "typing.Callable",
    "Array": "collections.abc.Sequence",
    "List": "collections.abc.MutableSequence",
    "Map": "collections.abc.Mapping",
    "Dict": "collections.abc.MutableMapping",
    "Object": "ffi.Object",
    "Tensor": "ffi.Tensor",
    "dtype": "ffi.dtype",
    "Device": "ffi.Device",
    "ffi.Enum": "tether.dataclasses.Enum",
}

#: Schema origin -> Python type a call accepts, where it is looser than the result.
TY_MAP_INPUT_DEFAULTS = {
    "Array": "collections.abc.Sequence",
    "List": "collections.abc.Sequence",
    "Map": "collections.abc.Mapping",
    "Dict": "collections.abc.Mapping",
}

#: Registry prefix -> the Python module its names are imported from.
MOD_MAP = {
    "testing": "tether.testing",
    "ffi": "tether",
}
