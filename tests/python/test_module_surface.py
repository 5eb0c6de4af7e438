"""tvm_ffi's module map, name for name: every module of apache-tvm-ffi has a
tether module of the same relative name, holding the same public names of
the same kinds, and the underscore names that upstream's own modules (or
Apache TVM) import from it. Aliasing the package name is all a client needs.

The peer is the installed apache-tvm-ffi (pinned in the Makefile); its
modules are imported here only to read their names.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import types
from pathlib import Path

import pytest

tvm_ffi = pytest.importorskip("tvm_ffi", reason="the peer apache-tvm-ffi is not installed (make test installs it)")
import tether  # noqa: E402

# Underscore names Apache TVM 0.27's Python sources import from tvm_ffi.
TVM_USES = {
    "core": {"_set_class_device", "_set_class_dtype", "_set_class_tensor", "_set_class_object",
             "_register_object_by_index", "_lookup_or_register_type_info_from_type_key", "_CLASS_DEVICE",
             "_CLASS_TENSOR", "_CLASS_DTYPE", "_convert_to_ffi_func", "_get_global_func"},
    "registry": {"_SKIP_UNKNOWN_OBJECTS"},
    "libinfo": {"_find_library_by_basename", "_resolve_and_validate"},
    "_dtype": {"_NUMPY_DTYPE_TO_STR"},
}

# Names that cannot apply to tether, and why.
NOT_APPLICABLE = {
    ("core", "__pyx_unpickle_DLTensorTestWrapper"): "a Cython pickling helper of upstream's compiled module",
    ("core", "ByteArrayArg"): "a Cython argument buffer; tether's extension passes bytes without a Python-level holder",
    ("core", "FieldGetter"): "Cython wrappers of field getter function pointers; tether's fields are one native "
                             "descriptor (core.FFIProperty)",
    ("core", "FieldSetter"): "as FieldGetter",
    ("container", "register_object"): "tvm_ffi.container re-exports registry's decorator; tether's container sits "
                                      "below its registry, so the decorator is tether.registry.register_object "
                                      "(also tether.register_object)",
    ("dataclasses.py_class", "on_fields_resolved"): "upstream's deferred field registration; tether resolves and "
                                                    "registers fields when py_class runs",
    ("dataclasses._resolve_fields", "register_type_without_fields"): "as on_fields_resolved",
    ("dataclasses._resolve_fields", "rollback_registration"): "as on_fields_resolved",
    ("dataclasses._resolve_fields", "flush_pending"): "as on_fields_resolved: no pending queue",
    ("dataclasses._resolve_fields", "defer_field_registration"): "as on_fields_resolved",
}

# Modules of upstream that only import when an optional dependency is present.
OPTIONAL_UPSTREAM = {"tvm_ffi.utils._build_optional_torch_c_dlpack": "torch"}


def _upstream_modules() -> list[str]:
    names = ["tvm_ffi"]
    for info in pkgutil.walk_packages(tvm_ffi.__path__, "tvm_ffi."):
        if ".cython" not in info.name:
            names.append(info.name)
    return names


def _kind(value) -> str:
    if isinstance(value, types.ModuleType):
        return "module"
    if inspect.isclass(value):
        return "class"
    if callable(value):
        return "function"
    return "constant"


def _defined_in(value, module_name: str, attr: str, exported: set) -> bool:
    """Whether a module attribute belongs to the module's surface: named in
    its ``__all__``, or defined by it (not imported from elsewhere: the
    standard library, a third party, or another of the package's modules,
    whose own surface holds it). Submodules are checked as modules."""
    if attr in exported:
        return True
    if isinstance(value, types.ModuleType) or attr == "TYPE_CHECKING":
        return False
    owner = getattr(value, "__module__", None)
    if not isinstance(owner, str) or isinstance(value, (int, float, str, bytes, tuple, dict, set, frozenset)):
        return True  # constants
    return owner == module_name


def _used_elsewhere(module_name: str) -> set[str]:
    """Underscore names of ``module_name`` that other upstream modules use."""
    short = module_name.rsplit(".", 1)[-1]
    root = Path(tvm_ffi.__file__).parent
    used = set()
    pattern = re.compile(rf"\b{re.escape(short)}\.(_[A-Za-z0-9_]+)")
    from_pattern = re.compile(rf"from [.\w]*\b{re.escape(short)} import \(?([^)]*?)\)?$", re.M | re.S)
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        used.update(pattern.findall(text))
        for group in from_pattern.findall(text):
            used.update(n.strip().split(" as ")[0] for n in group.replace("\n", ",").split(",")
                        if n.strip().startswith("_"))
    return {n for n in used if not n.startswith("__")}


def _surface_gaps():
    missing_modules, missing_names, wrong_kinds = [], [], []
    for name in _upstream_modules():
        try:
            up = importlib.import_module(name)
        except ImportError as err:
            if name in OPTIONAL_UPSTREAM:
                continue
            raise AssertionError(f"the peer's module {name} does not import: {err}") from err
        rel = name[len("tvm_ffi"):]
        ours_name = "tether" + rel
        try:
            ours = importlib.import_module(ours_name)
        except ImportError as err:
            missing_modules.append(f"{ours_name} ({err})")
            continue
        short = rel.lstrip(".") or ""
        wanted_private = TVM_USES.get(short, set()) | _used_elsewhere(name)
        exported = set(getattr(up, "__all__", ()))
        for attr in dir(up):
            if attr.startswith("__") and attr.endswith("__"):
                continue
            value = getattr(up, attr)
            if not _defined_in(value, name, attr, exported):
                continue
            if attr.startswith("_") and attr not in wanted_private:
                continue
            if (short, attr) in NOT_APPLICABLE:
                continue
            if not hasattr(ours, attr):
                missing_names.append(f"{ours_name}.{attr}")
                continue
            up_kind, our_kind = _kind(value), _kind(getattr(ours, attr))
            if up_kind != our_kind and not attr.startswith("_"):
                wrong_kinds.append(f"{ours_name}.{attr}: {our_kind}, tvm_ffi has a {up_kind}")
    return missing_modules, missing_names, wrong_kinds


def test_every_upstream_module_and_name_has_a_tether_counterpart():
    missing_modules, missing_names, wrong_kinds = _surface_gaps()
    report = "\n".join(["missing modules:"] + missing_modules + ["missing names:"] + missing_names
                       + ["different kinds:"] + wrong_kinds)
    assert not (missing_modules or missing_names or wrong_kinds), report


def test_names_a_module_takes_from_elsewhere_in_the_package_are_there_too():
    """A client writes ``from tvm_ffi.cpp.extension import find_include_path``
    or ``from tvm_ffi.stream import device`` as readily as it imports the
    defining module: names a module of upstream's imports from another of
    its modules (not the standard library's or a third party's) are found
    under the same module of tether's, of the same kind."""
    gaps = []
    for name in _upstream_modules():
        try:
            up = importlib.import_module(name)
        except ImportError:
            continue
        ours = importlib.import_module("tether" + name[len("tvm_ffi"):])
        for attr in dir(up):
            if attr.startswith("_") or (name.rsplit(".", 1)[-1], attr) in NOT_APPLICABLE:
                continue
            value = getattr(up, attr)
            owner = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
            if not (isinstance(owner, str) and owner.split(".")[0] == "tvm_ffi") or owner == name:
                continue
            short = name[len("tvm_ffi."):] if name != "tvm_ffi" else ""
            if (short, attr) in NOT_APPLICABLE:
                continue
            if not hasattr(ours, attr):
                gaps.append(f"tether{name[len('tvm_ffi'):]}.{attr} (tvm_ffi's from {owner})")
            elif _kind(getattr(ours, attr)) != _kind(value):
                gaps.append(f"tether{name[len('tvm_ffi'):]}.{attr}: {_kind(getattr(ours, attr))}, tvm_ffi has a {_kind(value)}")
    assert not gaps, "\n".join(gaps)


def test_the_not_applicable_list_names_only_what_tether_lacks():
    """An entry whose name tether has since gained is stale: its reason no
    longer holds, and it would hide a wrong kind."""
    stale = [f"tether.{module}.{name}" for module, name in NOT_APPLICABLE
             if hasattr(importlib.import_module(f"tether.{module}"), name)]
    assert not stale, "NOT_APPLICABLE entries tether now has: " + ", ".join(stale)


def test_aliasing_the_package_is_all_a_client_needs():
    import subprocess
    import sys

    code = ("import tether; tether.provide_tvm_ffi()\n"
            "import tvm_ffi, tvm_ffi.core, tvm_ffi._dtype, tvm_ffi.libinfo\n"
            "from tvm_ffi.core import TypeSchema\n"
            "from tvm_ffi.registry import _SKIP_UNKNOWN_OBJECTS\n"
            "assert tvm_ffi is tether and tvm_ffi.core is tether.core\n"
            "assert TypeSchema is tether.core.TypeSchema\n"
            "assert tvm_ffi._dtype.dtype is tether.dtype\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_serving_as_tvm_ffi_is_refused_after_the_real_one_was_imported():
    import subprocess
    import sys

    code = ("import tvm_ffi\nimport tether\n"
            "try:\n    tether.provide_tvm_ffi()\nexcept RuntimeError as e:\n    print('refused:', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "refused: cannot serve as tvm_ffi: apache-tvm-ffi is already imported" in out.stdout
