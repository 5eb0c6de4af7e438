"""Python text of each block kind, and of the files ``--init`` scaffolds.

``generate_python_*`` functions rewrite a block's lines in place, recording
the imports they use; ``generate_python_ffi_api`` / ``generate_python_init``
return whole-file text.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set

from .. import consts as C
from ..file_utils import CodeBlock
from ..utils import FuncInfo, InitConfig, ObjectInfo, Options
from . import consts as PC
from .utils import (
    ImportItem,
    render_func_signature,
    render_object_ffi_init,
    render_object_fields,
    render_object_init,
    render_object_methods,
)



# --- scaffolding snippets (`--init`) ----------------------------------------


def _prompt_globals(mod: str, syntax: C.MarkerSyntax) -> str:
    return f"{syntax.begin} global/{mod}\n{syntax.end}\n"


def _prompt_class_def(type_name: str, type_key: str, parent_type_name: str, syntax: C.MarkerSyntax) -> str:
    return (
        f'@_FFI_REG_OBJ("{type_key}")\n'
        f"class {type_name}({parent_type_name}):\n"
        f'    """FFI binding for `{type_key}`."""\n'
        "\n"
        f"    {syntax.begin} object/{type_key}\n"
        f"    {syntax.end}\n\n"
    )


def _prompt_import_object(type_key: str, type_name: str, syntax: C.MarkerSyntax) -> str:
    return f"{syntax.import_object} {type_key};False;{type_name}\n"


def _prompt_import_section(syntax: C.MarkerSyntax) -> str:
    return f"\n{syntax.begin} import-section\n{syntax.end}\n"


def _prompt_all_section(syntax: C.MarkerSyntax) -> str:
    return f"\n__all__ = [\n    {syntax.begin} __all__\n    {syntax.end}\n]\n"


# --- type naming --------------------------------------------------------------


def _type_suffix_and_record(
    ty_map: Dict[str, str], imports: List[ImportItem], func_names: Optional[Set[str]] = None
) -> Callable[[str], str]:
    """A naming callable: maps an origin through ``ty_map`` and returns the name
    to write, recording a type-checking import for a dotted one. A name that
    a generated function also takes is imported as ``_<name>``."""

    def name_of(origin: str) -> str:
        full = ty_map.get(origin, origin)
        short = full.rsplit(".", 1)[-1]
        if "." not in full:
            return short
        alias = f"_{short}" if func_names and short in func_names else None
        imports.append(ImportItem(full, type_checking_only=True, alias=alias))
        return alias or short

    return name_of


def _make_input_ty_map(ty_map: Dict[str, str]) -> Dict[str, str]:
    """``ty_map`` with the looser accepted types, where the user did not remap the origin."""
    accepted = dict(ty_map)
    for origin, input_name in PC.TY_MAP_INPUT_DEFAULTS.items():
        if ty_map.get(origin, PC.TY_MAP_DEFAULTS.get(origin)) == PC.TY_MAP_DEFAULTS.get(origin):
            accepted[origin] = input_name
    return accepted


def _wrap(code: CodeBlock, body: List[str]) -> None:
    """Put ``body``, indented like the marker, between the block's markers."""
    pad = " " * code.indent
    code.lines = [code.lines[0], *(pad + line for line in body), code.lines[-1]]


# --- blocks -----------------------------------------------------------------------


def generate_python_global_funcs(
    code: CodeBlock, global_funcs: List[FuncInfo], ty_map: Dict[str, str], imports: List[ImportItem], opt: Options
) -> None:
    """Fill ``global/<prefix>[@<module>]``: bind the prefix's functions at import
    time (``init_ffi_api`` from ``<module>``, tether by default) and declare
    their signatures for type checkers. Left alone when the prefix has no function."""
    assert len(code.lines) >= 2
    if not global_funcs:
        return
    prefix, import_from = code.param
    imports.append(ImportItem(f"{import_from or PC.runtime_package()}.init_ffi_api", type_checking_only=False,
                              alias="_FFI_INIT_FUNC"))
    imports.append(ImportItem("typing.TYPE_CHECKING", type_checking_only=False))
    names = {f.schema.name.rsplit(".", 1)[-1] for f in global_funcs}
    returns = _type_suffix_and_record(ty_map, imports, func_names=names)
    accepts = _type_suffix_and_record(_make_input_ty_map(ty_map), imports, func_names=names)
    signatures = [render_func_signature(f, returns, opt.indent, input_ty_map=accepts) for f in global_funcs]
    _wrap(code, ["# fmt: off", f'_FFI_INIT_FUNC("{prefix}", __name__)', "if TYPE_CHECKING:", *signatures,
                 "# fmt: on"])


def generate_python_object(
    code: CodeBlock, ty_map: Dict[str, str], imports: List[ImportItem], opt: Options, obj_info: ObjectInfo
) -> None:
    """Fill ``object/<type key>``: field annotations, then (for type checkers)
    the initializers and methods."""
    assert len(code.lines) >= 2
    names = {m.schema.name.rsplit(".", 1)[-1] for m in obj_info.methods}
    returns = _type_suffix_and_record(ty_map, imports, func_names=names)
    if obj_info.has_overloaded_methods():
        imports.append(ImportItem("typing.overload", type_checking_only=True))
    accepts = _type_suffix_and_record(_make_input_ty_map(ty_map), imports, func_names=names)
    checked = [
        *render_object_init(obj_info, returns, opt.indent, input_ty_map=accepts),
        *render_object_ffi_init(obj_info, returns, opt.indent, input_ty_map=accepts),
        *render_object_methods(obj_info, returns, opt.indent, input_ty_map=accepts),
    ]
    body = ["# fmt: off", *render_object_fields(obj_info, returns, 0)]
    if checked:
        imports.append(ImportItem("typing.TYPE_CHECKING", type_checking_only=False))
        body += ["if TYPE_CHECKING:", *checked]
    body.append("# fmt: on")
    _wrap(code, body)


def generate_python_import_section(code: CodeBlock, imports: List[ImportItem], opt: Options) -> None:
    """Fill ``import-section``: one ``from`` line per module, runtime imports
    first, then an ``if TYPE_CHECKING:`` group. Left alone without imports."""
    runtime: Dict[str, List[ImportItem]] = {}
    checking: Dict[str, List[ImportItem]] = {}
    for item in imports:
        (checking if item.type_checking_only else runtime).setdefault(item.mod, []).append(item)
    if checking:
        runtime.setdefault("typing", []).append(ImportItem("typing.TYPE_CHECKING", type_checking_only=True))

    def statement(mod: str, items: List[ImportItem], indent: int) -> str:
        names = ", ".join(sorted({item.name_with_alias for item in items}))
        return " " * indent + (f"from {mod} import {names}" if mod else f"import {names}")

    body = [statement(mod, runtime[mod], 0) for mod in sorted(runtime)]
    if checking:
        body.append("if TYPE_CHECKING:")
        body += [statement(mod, checking[mod], opt.indent) for mod in sorted(checking)]
    if not body:
        return
    code.lines = [code.lines[0], "# fmt: off", "# isort: off", "from __future__ import annotations", *body,
                  "# isort: on", "# fmt: on", code.lines[-1]]


def generate_python_all(code: CodeBlock, names: Set[str], opt: Options) -> None:
    """Fill ``__all__`` with the last component of each name, one quoted name a
    line: constants first, then classes, then the rest, each group sorted."""
    assert len(code.lines) >= 2
    if not names:
        return

    def group(name: str) -> tuple:
        if name.isupper():
            return (0, name)
        if name[:1].isupper() and "_" not in name:
            return (1, name)
        return (2, name)

    pad = " " * code.indent
    short = {name.rsplit(".", 1)[-1] for name in names}
    code.lines = [code.lines[0], *(f'{pad}"{name}",' for name in sorted(short, key=group)), code.lines[-1]]


def generate_python_export(code: CodeBlock) -> None:
    """Fill ``export/<submodule>``: star-import the submodule and extend ``__all__`` with its ``__all__``."""
    assert len(code.lines) >= 2
    mod = code.param
    code.lines = [
        code.lines[0],
        "# fmt: off",
        "# isort: off",
        f"from .{mod} import *  # noqa: F403",
        f"from .{mod} import __all__ as {mod}__all__",
        'if "__all__" not in globals():',
        "    __all__ = []",
        f"__all__.extend({mod}__all__)",
        "# isort: on",
        "# fmt: on",
        code.lines[-1],
    ]


# --- scaffolded files (`--init`) ---------------------------------------------------


def generate_python_ffi_api(
    code_blocks: List[CodeBlock],
    ty_map: Dict[str, str],
    module_name: str,
    object_infos: List[ObjectInfo],
    init_cfg: InitConfig,
    is_root: bool,
    syntax: C.MarkerSyntax,
) -> str:
    """Text to append to ``<prefix>/_ffi_api.py``: whatever of the docstring,
    import section, library loading (root prefix only), global block, class
    per object type and ``__all__`` block the file does not have yet."""
    kinds = {code.kind for code in code_blocks}
    out: List[str] = []
    if not code_blocks:
        out.append(f'"""FFI API bindings for {module_name}."""\n')
    if "import-section" not in kinds:
        out.append(_prompt_import_section(syntax))
    if is_root:
        out.append(_prompt_import_object(f"{PC.runtime_package()}.libinfo.load_lib_module", "_FFI_LOAD_LIB", syntax))
        out.append(f'LIB = _FFI_LOAD_LIB("{init_cfg.pkg}", "{init_cfg.shared_target}")\n')
    if "global" not in kinds:
        out.append(_prompt_globals(module_name, syntax))
    if object_infos:
        out.append(_prompt_import_object(f"{PC.runtime_package()}.register_object", "_FFI_REG_OBJ", syntax))
    local = {ty_map.get(info.type_key, info.type_key) for info in object_infos if info.type_key}
    for info in object_infos:
        if info.type_key is None:
            continue
        key = ty_map.get(info.type_key, info.type_key)
        parent_key = info.parent_type_key
        if parent_key:
            parent_key = ty_map.get(parent_key, parent_key)
        parent_name = parent_key.rsplit(".", 1)[-1] if parent_key else "Object"
        if parent_key and parent_key not in local:
            parent_name = "_" + parent_key.replace(".", "_")
            out.append(_prompt_import_object(parent_key, parent_name, syntax))
        out.append(_prompt_class_def(key.rsplit(".", 1)[-1], key, parent_name, syntax))
    if "__all__" not in kinds:
        out.append(_prompt_all_section(syntax))
    return "".join(out)


def generate_python_init(code_blocks: List[CodeBlock], module_name: str, submodule: str, syntax: C.MarkerSyntax) -> str:
    """Text to append to ``<prefix>/__init__.py``: a docstring for a new file and
    an ``export/<submodule>`` block unless the file has one."""
    export = f"\n{syntax.begin} export/{submodule}\n{syntax.end}\n"
    if not code_blocks:
        return f'"""Package {module_name}."""\n' + export
    if any(code.kind == "export" for code in code_blocks):
        return ""
    return export
