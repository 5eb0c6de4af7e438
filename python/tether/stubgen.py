"""``tether-stubgen``: ``.pyi`` stubs for registered types and global
functions, in the shape nanobind's stubgen writes them, so IDEs and type
checkers see tether modules as they see nanobind ones.

::

    python -m tether.stubgen cpp_plugin --load libcpp_plugin.so -o stubs/

``MODULE_OR_PREFIX`` is a Python module to import first (its import loads
and registers what it wraps) or a registry prefix; either way every type
key and global function name under ``<prefix>.`` is covered. A name
``a.b.c`` becomes member ``c`` of module ``a.b``: one ``.pyi`` per module
(``a/b.pyi``, or ``a/b/__init__.pyi`` when ``a.b`` has submodules).

Types come from the type-schema metadata registrars record (tether's C++
layer and TVM-FFI's both do): fields become properties (with a setter when
writable), methods and ``__ffi_init__`` (as ``__init__``) keep their
parameter and return types, global functions become functions. Parameters
are positional-only (``arg0, arg1, /``: FFI calls pass no names) and accept
what a call converts (a ``Sequence`` for an Array, a ``Mapping`` for a Map,
a callable for a Function); results are the tether classes calls return.
Docstrings recorded with fields and methods are kept. A member without a
schema is typed ``Any``. The stubs describe the Python module a package
builds with ``tether.register_object`` and ``tether.init_ffi_api`` under
the same name.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set

from . import _ffi
from .registry import get_global_func_metadata, get_registered_type_keys, list_global_func_names
from .type_schema import TypeSchema

__all__ = ["generate", "main"]

_STATIC_METHOD = 1 << 2
_WRITABLE = 1 << 0

# tether's own classes for the builtin schema origins.
_TETHER_CLASSES = {
    "Object": "tether.Object", "Array": "tether.Array", "List": "tether.List", "Map": "tether.Map",
    "Dict": "tether.Dict", "Tensor": "tether.Tensor", "Callable": "tether.Function", "dtype": "tether.dtype",
    "Device": "tether.Device", "ffi.Shape": "tether.Shape", "ffi.Error": "tether.Error",
    "ffi.Module": "tether.Module",
}
_PLAIN = {"int": "int", "float": "float", "bool": "bool", "str": "str", "bytes": "bytes", "None": "None"}


@dataclass
class _Module:
    name: str
    classes: List[str] = field(default_factory=list)  # type keys
    functions: List[str] = field(default_factory=list)  # global names
    imports: Set[str] = field(default_factory=set)  # "import x" lines
    typing_names: Set[str] = field(default_factory=set)
    abc_names: Set[str] = field(default_factory=set)


def _split(name: str):
    module, _, member = name.rpartition(".")
    return module, member


def _schema_of(metadata_text: str) -> Optional[TypeSchema]:
    """The type schema recorded in field or method metadata, if any."""
    if not metadata_text:
        return None
    try:
        raw = json.loads(metadata_text)
        if isinstance(raw, dict) and "type_schema" in raw:
            return TypeSchema.from_json_str(raw["type_schema"])
    except (ValueError, TypeError):
        pass
    return None


class _Writer:
    """Annotations for one module: knows which type keys are classes of
    which generated module, and records the imports it uses."""

    def __init__(self, module: _Module, class_modules: Dict[str, str]):
        self.module = module
        self.class_modules = class_modules

    def _typing(self, name: str) -> str:
        self.module.typing_names.add(name)
        return name

    def _abc(self, name: str) -> str:
        self.module.abc_names.add(name)
        return name

    def _tether(self, qualified: str) -> str:
        self.module.imports.add("tether")
        return qualified

    def cls_ref(self, type_key: str) -> str:
        owner = self.class_modules.get(type_key)
        if owner is None:
            return self._tether(_TETHER_CLASSES.get(type_key, "tether.Object"))
        if owner == self.module.name:
            return _split(type_key)[1]
        self.module.imports.add(owner)
        return type_key

    def annot(self, s: Optional[TypeSchema], param: bool) -> str:
        if s is None:
            return self._typing("Any")
        o, args = s.origin, s.args
        if o in _PLAIN:
            return _PLAIN[o]
        if o == "Any":
            return self._typing("Any")
        if o == "Optional":
            return f"{self.annot(args[0], param)} | None"
        if o == "Union":
            return " | ".join(self.annot(a, param) for a in args)
        if o in ("Array", "List", "tuple"):
            ret = self._tether(_TETHER_CLASSES.get(o, "tether.Array"))
            if not param:
                return ret
            elem = self.annot(args[0], True) if len(args) == 1 else self._typing("Any")
            return f"{ret} | {self._abc('Sequence')}[{elem}]"
        if o in ("Map", "Dict"):
            ret = self._tether(_TETHER_CLASSES[o])
            if not param:
                return ret
            k, v = (self.annot(a, True) for a in args) if len(args) == 2 else (self._typing("Any"),) * 2
            return f"{ret} | {self._abc('Mapping')}[{k}, {v}]"
        if o == "Callable":
            if not param:
                return self._tether("tether.Function")
            named = s.named_args or {}
            ret = self.annot(named["return"][0], False) if named.get("return") else self._typing("Any")
            if "params" not in named:
                return f"{self._abc('Callable')}[..., {ret}]"
            params = ", ".join(self.annot(p, False) for p in named["params"])
            return f"{self._abc('Callable')}[[{params}], {ret}]"
        if o == "Object":  # an untyped ObjectRef, nullable in C++ as in TVM-FFI
            return f"{self._tether('tether.Object')} | None"
        if o in _TETHER_CLASSES:
            return self._tether(_TETHER_CLASSES[o])
        if o == "ctypes.c_void_p":
            return "int | None"
        return self.cls_ref(o)

    def signature(self, s: Optional[TypeSchema], skip_self: bool) -> Optional[tuple]:
        """``([param annotations], return annotation)``, or None without a
        usable function schema."""
        if s is None or s.origin != "Callable" or not s.named_args or "params" not in s.named_args:
            return None
        params = list(s.named_args["params"])
        if skip_self and params:
            params = params[1:]
        ret = s.named_args.get("return", (None,))[0]
        return [self.annot(p, True) for p in params], self.annot(ret, False)


def _params_text(annots: Sequence[str], self_first: bool) -> str:
    parts = ["self"] if self_first else []
    parts += [f"arg{i}: {a}" for i, a in enumerate(annots)] if len(annots) != 1 else [f"arg: {annots[0]}"]
    if annots:
        parts.append("/")
    return ", ".join(parts)


def _def(lines: List[str], indent: str, head: str, doc: str) -> None:
    if doc:
        lines.append(f"{indent}{head}:")
        lines.append(f'{indent}    """{_doc_text(doc, indent)}"""')
    else:
        lines.append(f"{indent}{head}: ...")
    lines.append("")


def _doc_text(doc: str, indent: str) -> str:
    text = doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip()
    return text.replace("\n", "\n" + indent + "    ")


def _class_lines(w: _Writer, type_key: str) -> List[str]:
    info = _ffi.type_info(_ffi.type_key_to_index(type_key))
    parent = _ffi.type_info(info["parent"])["key"] if info["parent"] >= 0 else "ffi.Object"
    base = w.cls_ref(parent)
    lines = [f"class {_split(type_key)[1]}({base}):"]
    body: List[str] = []
    ind = "    "
    methods = info["method_details"]
    for m in methods:
        if m["name"] == "__ffi_init__":
            sig = w.signature(_schema_of(m["metadata"]), skip_self=False)
            params = _params_text(sig[0], True) if sig else f"self, *args: {w.annot(None, True)}"
            _def(body, ind, f"def __init__({params}) -> None", m["doc"])
    for f in info["field_details"]:
        annot_get = w.annot(_schema_of(f["metadata"]), False)
        body.append(f"{ind}@property")
        _def(body, ind, f"def {f['name']}(self) -> {annot_get}", f["doc"])
        if f["flags"] & _WRITABLE:
            annot_set = w.annot(_schema_of(f["metadata"]), True)
            body.append(f"{ind}@{f['name']}.setter")
            _def(body, ind, f"def {f['name']}(self, arg: {annot_set}, /) -> None", "")
    for m in methods:
        name = m["name"]
        if name.startswith("__ffi_") or name.startswith("__"):
            continue
        static = bool(m["flags"] & _STATIC_METHOD)
        sig = w.signature(_schema_of(m["metadata"]), skip_self=not static)
        if sig is None:
            params = ("" if static else "self, ") + f"*args: {w.annot(None, True)}"
            ret = w.annot(None, False)
        else:
            params, ret = _params_text(sig[0], not static), sig[1]
        if static:
            body.append(f"{ind}@staticmethod")
        _def(body, ind, f"def {name}({params}) -> {ret}", m["doc"])
    if not body:
        body = [f"{ind}pass", ""]
    return lines + body


def _function_lines(w: _Writer, name: str) -> List[str]:
    try:
        md = get_global_func_metadata(name)
    except Exception:  # a function removed while we looked
        md = {}
    schema = TypeSchema.from_json_str(md["type_schema"]) if "type_schema" in md else None
    sig = w.signature(schema, skip_self=False)
    if sig is None:
        head = f"def {_split(name)[1]}(*args: {w.annot(None, True)}) -> {w.annot(None, False)}"
    else:
        head = f"def {_split(name)[1]}({_params_text(sig[0], False)}) -> {sig[1]}"
    out: List[str] = []
    _def(out, "", head, md.get("doc", "") if isinstance(md.get("doc"), str) else "")
    return out


def _render(module: _Module, class_modules: Dict[str, str]) -> str:
    w = _Writer(module, class_modules)
    body: List[str] = []
    for key in sorted(module.classes, key=lambda k: _ffi.type_key_to_index(k)):
        body += _class_lines(w, key)
        body.append("")
    for name in sorted(module.functions):
        body += _function_lines(w, name)
    head: List[str] = []
    if module.abc_names:
        head.append(f"from collections.abc import {', '.join(sorted(module.abc_names))}")
    if module.typing_names:
        head.append(f"from typing import {', '.join(sorted(module.typing_names))}")
    if head:
        head.append("")
    imports = sorted(i for i in module.imports if i != module.name)
    head += [f"import {i}" for i in imports]
    if imports:
        head += ["", ""]
    while body and body[-1] == "":
        body.pop()
    return "\n".join(head + body) + "\n"


def _collect(prefix: str) -> Dict[str, _Module]:
    modules: Dict[str, _Module] = {}
    dotted = prefix + "."

    def mod(name: str) -> _Module:
        return modules.setdefault(name, _Module(name))

    for key in get_registered_type_keys():
        if key.startswith(dotted):
            m, _ = _split(key)
            mod(m).classes.append(key)
    for name in list_global_func_names():
        if name.startswith(dotted):
            m, _ = _split(name)
            mod(m).functions.append(name)
    return modules


def generate(prefix: str) -> Dict[str, str]:
    """``{relative .pyi path: text}`` for every module under ``prefix``."""
    modules = _collect(prefix)
    class_modules = {key: name for name, m in modules.items() for key in m.classes}
    out: Dict[str, str] = {}
    for name in sorted(modules):
        parts = name.split(".")
        has_children = any(other.startswith(name + ".") for other in modules)
        rel = os.path.join(*parts, "__init__.pyi") if has_children else os.path.join(*parts[:-1], parts[-1] + ".pyi")
        out[rel] = _render(modules[name], class_modules)
    return out


def _resolve_prefix(module_or_prefix: str) -> str:
    """Import ``module_or_prefix`` when it is a Python module (its import
    registers what it wraps); the name is the prefix either way."""
    try:
        importlib.import_module(module_or_prefix)
    except ImportError:
        pass
    return module_or_prefix


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="tether-stubgen", description=__doc__.split("\n\n")[0])
    parser.add_argument("module_or_prefix", help="a Python module to import, or a registry prefix")
    parser.add_argument("-o", "--output-dir", default=".", help="where to write the .pyi files")
    parser.add_argument("--load", action="append", default=[], metavar="LIB",
                        help="a shared library to load first (tether.load_module); repeatable")
    args = parser.parse_args(argv)
    from .module import load_module

    for lib in args.load:
        load_module(lib)
    prefix = _resolve_prefix(args.module_or_prefix)
    files = generate(prefix)
    if not files:
        print(f"tether-stubgen: nothing registered under {prefix!r}", file=sys.stderr)
        return 1
    for rel, text in files.items():
        path = os.path.join(args.output_dir, rel)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
