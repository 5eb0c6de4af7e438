"""Building C/C++ sources into FFI modules linked against tether's core.

What a build compiles against:

* tether's own headers (``tether.config.includedir()``) are always on the
  include path;
* sources written for TVM-FFI (``#include <tvm/ffi/...>``, which is what
  ``load_inline`` generates around the exported functions) also need
  TVM-FFI's C++ headers. They come from the installed ``apache-tvm-ffi``
  package, found without importing it: only its ``include`` directory is
  used, its library is never loaded (tether's core implements the ABI those
  headers call). An ``extra_include_paths`` entry holding ``tvm/ffi``
  headers is used instead when given.

The library links ``libtether_core`` (with an rpath to it) and is loaded
with ``tether.load_module``. Builds are cached in
``$TETHER_CACHE_DIR/<name>_<hash>`` (default ``~/.cache/tether``), the hash
covering the sources, exported functions, flags and header directories;
within a build directory only what changed is rebuilt, by ninja when it can
be found (on ``PATH`` or beside the Python interpreter, e.g. the ``ninja``
package), else by invoking the compiler directly with the same up-to-date
rule (outputs newer than every input and dependency in the compiler's
depfile, and built by the same command).

Unix compilers only (``$CXX``/``c++``, ``$CC``/``cc``, GCC- and
Clang-style flags) on Linux and macOS; CUDA/HIP sources and cubin embedding
are refused. Windows is not supported: MSVC (``cl.exe``/``link.exe``) takes
other flags and needs an import library of the core, which this module does
not drive, so every build raises NotImplementedError on Windows once its
arguments are checked, before anything is written to the cache. Build the
library there with your own toolchain and load it with
``tether.load_module``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import logging
import sysconfig
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, Optional, Union

from .. import config
from ..libinfo import find_dlpack_include_path, find_include_path, find_libtvm_ffi  # noqa: F401  (tvm_ffi's names here)
from ..module import Module, load_module
from ..utils import FileLock  # noqa: F401  (tvm_ffi.cpp.extension's name)

#: The GPU backends upstream's builder names (tether builds CPU code only).
BACKEND_STR = Literal["cuda", "hip"]

logger = logging.getLogger(__name__)

__all__ = ["build", "build_inline", "load", "load_inline"]

StrSeq = Union[Sequence[str], str, None]


# -- inputs --------------------------------------------------------------------

def _as_list(seq: StrSeq) -> list:
    if seq is None:
        return []
    return [seq] if isinstance(seq, str) else list(seq)


def _function_docs(functions) -> dict:
    """``functions`` (a name, names, or a name -> docstring mapping) as a mapping."""
    if functions is None:
        return {}
    if isinstance(functions, str):
        return {functions: ""}
    if isinstance(functions, Mapping):
        return dict(functions)
    return {name: "" for name in functions}


def _cpp_string_literal(text: str) -> str:
    escapes = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return "".join(escapes.get(c, c) for c in text)


def _with_exports(source: str, functions: Mapping) -> str:
    """``source`` with TVM-FFI's headers before it and an export (and, when
    given, a docstring) after it for each function."""
    lines = [
        "#include <tvm/ffi/container/tensor.h>",
        "#include <tvm/ffi/dtype.h>",
        "#include <tvm/ffi/error.h>",
        "#include <tvm/ffi/extra/c_env_api.h>",
        "#include <tvm/ffi/function.h>",
        "",
        source,
    ]
    for name, doc in functions.items():
        lines.append(f"TVM_FFI_DLL_EXPORT_TYPED_FUNC({name}, {name});")
        if doc:
            lines.append(f'TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC({name}, "{_cpp_string_literal(doc)}");')
    lines.append("")
    return "\n".join(lines)


def _refuse_gpu(cuda: Any = None, embed_cubin: Any = None, backend: Any = None) -> None:
    if cuda or embed_cubin or backend not in (None, "cpu"):
        raise NotImplementedError("tether.cpp builds C and C++ sources only (no CUDA/HIP sources or cubins)")


IS_WINDOWS = sys.platform == "win32"

WINDOWS_UNSUPPORTED = (
    "tether.cpp is not supported on Windows: it drives Unix-style C/C++ compilers (-fPIC, -shared, an rpath "
    "to libtether_core), not MSVC's cl.exe and link.exe. Build the library with your own toolchain "
    "(tether-config --includedir --libdir gives the headers and the core) and load it with tether.load_module")


def _require_supported_platform() -> None:
    """NotImplementedError with what to do instead, on Windows."""
    if IS_WINDOWS:
        raise NotImplementedError(WINDOWS_UNSUPPORTED)


# -- headers -------------------------------------------------------------------

def _needs_tvm_ffi_headers(texts: Sequence[str]) -> bool:
    return any("tvm/ffi/" in text for text in texts)


def _include_dirs(texts: Sequence[str], extra_include_paths: Sequence[str]) -> list:
    extra = [str(Path(p).resolve()) for p in extra_include_paths]
    dirs = [config.includedir()]
    has_own_tvm_ffi = any(os.path.isfile(os.path.join(p, "tvm", "ffi", "function.h")) for p in extra)
    if has_own_tvm_ffi:
        return dirs + extra
    # On the include path whenever they are found (the package's own copy,
    # or $TETHER_TVM_FFI_INCLUDE_DIR, or an installed apache-tvm-ffi's): a
    # header of the user's own may include them where the sources do not
    # say so.
    headers = config.tvm_ffi_includedir()
    if headers is not None:
        if headers not in dirs:
            dirs.append(headers)
    elif _needs_tvm_ffi_headers(texts):
        raise RuntimeError(
            "these sources include TVM-FFI's C++ headers (<tvm/ffi/...>), which this tether package was "
            f"built without: set {config.TVM_FFI_INCLUDE_ENV} to their directory or pass it in extra_include_paths")
    return dirs + extra


# -- the build plan ------------------------------------------------------------

class _Plan:
    """Commands turning ``sources`` into ``output`` inside ``build_dir``."""

    def __init__(self, build_dir: Path, name: str, sources: Sequence[str], include_dirs: Sequence[str],
                 extra_cflags: Sequence[str], extra_ldflags: Sequence[str], output: Optional[str]):
        _require_supported_platform()
        self.build_dir = build_dir
        out_name = Path(output).name if output is not None else f"{name}.so"
        self.object_mode = Path(out_name).suffix.lower() in (".o", ".obj")
        self.output = str(build_dir / out_name)
        cxx = shlex.split(os.environ.get("CXX", "c++"))
        cc = shlex.split(os.environ.get("CC", "cc"))
        includes = [f"-I{d}" for d in include_dirs]
        extra_c = [f.strip() for f in extra_cflags]
        self.steps = []  # (output, inputs, command)
        objects = []
        for i, src in enumerate(sources):
            if _is_linker_input(src):
                # Object files and archives are linked as they are.
                objects.append(src)
                continue
            is_c = Path(src).suffix.lower() == ".c"
            obj = str(build_dir / f"{'c' if is_c else 'cpp'}_{i}.o")
            flags = (["-fPIC", "-O2"] if is_c else ["-std=c++17", "-fPIC", "-O2"]) + extra_c + includes
            self.steps.append((obj, [src], (cc if is_c else cxx) + ["-MMD", "-MF", obj + ".d", *flags,
                                                                  "-c", src, "-o", obj]))
            objects.append(obj)
        if self.object_mode:
            if len(objects) == 1:
                self.steps.append((self.output, objects, ["cp", "-f", objects[0], self.output]))
            else:
                self.steps.append((self.output, objects, ["ld", "-r", "-o", self.output, *objects]))
        else:
            link = ["-shared", *config.ldflags().split(), config.libs()] + [f.strip() for f in extra_ldflags]
            self.steps.append((self.output, objects, cxx + [*objects, "-o", self.output, *link]))


_LINKER_INPUTS = (".o", ".obj", ".a", ".lib")


def _is_linker_input(path: str) -> bool:
    """Whether ``path`` is an object file or archive (linked, not compiled)."""
    return Path(path).suffix.lower() in _LINKER_INPUTS


def _ninja_binary() -> Optional[str]:
    if os.environ.get("TETHER_CPP_USE_NINJA", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    found = shutil.which("ninja")
    if found is None:
        for folder in {sysconfig.get_path("scripts"), os.path.dirname(sys.executable)}:
            found = shutil.which("ninja", path=folder)
            if found is not None:
                break
    return found


def build_ninja(build_dir: str) -> None:
    """Run ninja in ``build_dir`` (which holds a ``build.ninja``), with
    ``MAX_JOBS`` parallel jobs when set; RuntimeError with ninja's output
    when the build fails or ninja cannot be found."""
    ninja = _ninja_binary()
    if ninja is None:
        raise RuntimeError("ninja is not installed (pip install ninja, or put it on PATH)")
    if not os.path.isfile(os.path.join(build_dir, "build.ninja")):
        raise RuntimeError(f"{build_dir} holds no build.ninja")
    command = [ninja, "-v"]
    jobs = os.environ.get("MAX_JOBS")
    if jobs:
        if not jobs.isdigit() or int(jobs) < 1:
            raise ValueError(f"MAX_JOBS must be a positive integer, got {jobs!r}")
        command += ["-j", jobs]
    proc = subprocess.run(command, cwd=build_dir, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"ninja failed in {build_dir}:\n{proc.stdout}{proc.stderr}")


def _ninja_file(plan: _Plan) -> str:
    def esc(path: str) -> str:
        return path.replace("$", "$$").replace(" ", "$ ").replace(":", "$:")

    lines = ["ninja_required_version = 1.3", ""]
    for i, (out, inputs, command) in enumerate(plan.steps):
        depfile = out + ".d" if "-MMD" in command else None
        lines.append(f"rule step{i}")
        lines.append("  command = " + " ".join(shlex.quote(c) for c in command).replace("$", "$$"))
        if depfile:
            lines += [f"  depfile = {esc(depfile)}", "  deps = gcc"]
        lines += [f"build {esc(out)}: step{i} " + " ".join(esc(p) for p in inputs), ""]
    lines.append(f"default {esc(plan.output)}")
    return "\n".join(lines) + "\n"


def _run(command: Sequence[str], cwd: Path, what: str) -> None:
    status = subprocess.run(list(command), cwd=str(cwd), capture_output=True, check=False)
    if status.returncode != 0:
        parts = [f"{what} exited with status {status.returncode}", "command: " + shlex.join(command)]
        if status.stdout:
            parts.append("stdout:\n" + status.stdout.decode(errors="replace"))
        if status.stderr:
            parts.append("stderr:\n" + status.stderr.decode(errors="replace"))
        raise RuntimeError("\n".join(parts))


def _depfile_inputs(depfile: str) -> list:
    """The prerequisites a ``-MMD`` depfile lists (``out: a.cc b.h \\``)."""
    try:
        text = Path(depfile).read_text()
    except OSError:
        return []
    body = text.split(":", 1)[1] if ":" in text else ""
    body = body.replace("\\\n", " ")
    deps, current, escaped = [], "", False
    for ch in body:
        if escaped:
            current += ch
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch.isspace():
            if current:
                deps.append(current)
            current = ""
        else:
            current += ch
    if current:
        deps.append(current)
    return deps


def _run_direct(plan: _Plan) -> None:
    """Run the plan's steps that are out of date, ninja's rule without ninja:
    a step reruns when its output is missing, older than an input or a
    depfile dependency, or was made by a different command."""
    record_path = plan.build_dir / "commands.json"
    try:
        recorded = json.loads(record_path.read_text())
    except (OSError, ValueError):
        recorded = {}
    for out, inputs, command in plan.steps:
        deps = list(inputs) + (_depfile_inputs(out + ".d") if "-MMD" in command else [])
        fresh = os.path.exists(out) and recorded.get(out) == command
        if fresh:
            out_time = os.stat(out).st_mtime_ns
            fresh = all(os.path.exists(d) and os.stat(d).st_mtime_ns <= out_time for d in deps)
        if not fresh:
            _run(command, plan.build_dir, os.path.basename(command[0]))
            recorded[out] = command
            record_path.write_text(json.dumps(recorded, indent=1))


def _write_if_changed(path: Path, content: str) -> None:
    # Rewriting identical content would bump the mtime and force a rebuild.
    if path.exists() and path.read_text() == content:
        return
    path.write_text(content)


@contextmanager
def _locked(build_dir: Path):
    """Hold an exclusive lock on ``build_dir`` (other processes building the
    same module wait)."""
    try:
        import fcntl
    except ImportError:  # no advisory locks: builds of one module must not race
        yield
        return
    with open(build_dir / "lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _execute(plan: _Plan) -> str:
    ninja = _ninja_binary()
    if ninja is not None:
        _write_if_changed(plan.build_dir / "build.ninja", _ninja_file(plan))
        command = [ninja, "-v"]
        if os.environ.get("MAX_JOBS"):
            command += ["-j", os.environ["MAX_JOBS"]]
        _run(command, plan.build_dir, "ninja")
    else:
        _run_direct(plan)
    return str(Path(plan.output).resolve())


def _source_hash(*parts: Any) -> str:
    digest = hashlib.sha256()

    def feed(value: Any) -> None:
        if value is None:
            digest.update(b"N")
        elif isinstance(value, str):
            data = value.encode("utf-8")
            digest.update(b"S%d:" % len(data) + data)
        elif isinstance(value, Mapping):
            digest.update(b"M%d:" % len(value))
            for key in sorted(value):
                feed(key)
                feed(value[key])
        elif isinstance(value, (list, tuple)):
            digest.update(b"L%d:" % len(value))
            for item in value:
                feed(item)
        else:
            raise ValueError(f"Unsupported type: {type(value)}")

    feed(list(parts))
    return digest.hexdigest()[:16]


_MODULE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


def _check_module_name(name: Any) -> str:
    """The module name, which becomes a folder name in the cache: letters,
    digits, ``_``, ``-`` and ``.`` only, so it cannot reach outside it."""
    if not isinstance(name, str):
        raise TypeError(f"module name must be a str, got {type(name).__name__}")
    if not _MODULE_NAME.fullmatch(name) or ".." in name:
        raise ValueError(f"module name {name!r} must be letters, digits, '_', '-' and '.' "
                         "(no path separators or '..')")
    return name


def _build_dir(name: str, build_directory: Optional[str], *hashed: Any) -> Path:
    _check_module_name(name)
    if build_directory is not None:
        path = Path(build_directory).resolve()
    else:
        cache = Path(os.environ.get("TETHER_CACHE_DIR", "~/.cache/tether")).expanduser()
        path = cache / f"{name}_{_source_hash(*hashed)}"
    path.mkdir(parents=True, exist_ok=True)
    return path


# -- the API -------------------------------------------------------------------

def build_inline(name: str, *, cpp_sources: StrSeq = None, cuda_sources: StrSeq = None, functions=None,
                 extra_cflags: Optional[Sequence[str]] = None, extra_cuda_cflags: Optional[Sequence[str]] = None,
                 extra_ldflags: Optional[Sequence[str]] = None, extra_include_paths: Optional[Sequence[str]] = None,
                 build_directory: Optional[str] = None, embed_cubin: Optional[Mapping[str, bytes]] = None,
                 backend: Optional[str] = None, output: Optional[str] = None) -> str:
    """Compile C++ source text into a shared library (or, with an ``output``
    ending in ``.o``, an object file) and return its path.

    ``functions`` names the functions to export (``TVM_FFI_DLL_EXPORT_TYPED_FUNC``
    is added for each; a mapping gives their docstrings), so they must be
    declared in ``cpp_sources``; TVM-FFI's headers are included before the
    sources. Unchanged inputs reuse the cached build."""
    _refuse_gpu(_as_list(cuda_sources), embed_cubin, backend)
    del extra_cuda_cflags  # accepted for tvm_ffi's signature; there is no GPU build
    _check_module_name(name)
    _require_supported_platform()
    source = "\n".join(_as_list(cpp_sources))
    docs = _function_docs(functions)
    source = _with_exports(source, docs)
    cflags, ldflags = list(extra_cflags or []), list(extra_ldflags or [])
    include_paths = list(extra_include_paths or [])
    includes = _include_dirs([source], include_paths)
    build_dir = _build_dir(name, build_directory, source, docs, cflags, ldflags, include_paths, includes, output)
    with _locked(build_dir):
        main = build_dir / "main.cpp"
        _write_if_changed(main, source)
        plan = _Plan(build_dir, name, [str(main.resolve())], includes, cflags, ldflags, output)
        return _execute(plan)


def load_inline(name: str, *, cpp_sources: StrSeq = None, cuda_sources: StrSeq = None, functions=None,
                extra_cflags: Optional[Sequence[str]] = None, extra_cuda_cflags: Optional[Sequence[str]] = None,
                extra_ldflags: Optional[Sequence[str]] = None, extra_include_paths: Optional[Sequence[str]] = None,
                build_directory: Optional[str] = None, embed_cubin: Optional[Mapping[str, bytes]] = None,
                keep_module_alive: bool = True, backend: Optional[str] = None) -> Module:
    """:func:`build_inline`, then ``tether.load_module`` of the result."""
    path = build_inline(name, cpp_sources=cpp_sources, cuda_sources=cuda_sources, functions=functions,
                        extra_cflags=extra_cflags, extra_cuda_cflags=extra_cuda_cflags, extra_ldflags=extra_ldflags,
                        extra_include_paths=extra_include_paths, build_directory=build_directory,
                        embed_cubin=embed_cubin, backend=backend)
    return load_module(path, keep_module_alive=keep_module_alive)


def build(name: str, *, sources: StrSeq = None, cpp_files: StrSeq = None, cuda_files: StrSeq = None,
          extra_cflags: Optional[Sequence[str]] = None, extra_cuda_cflags: Optional[Sequence[str]] = None,
          extra_ldflags: Optional[Sequence[str]] = None, extra_include_paths: Optional[Sequence[str]] = None,
          build_directory: Optional[str] = None, backend: Optional[str] = None,
          output: Optional[str] = None) -> str:
    """Compile C/C++ source files (``.c`` with the C compiler) into a shared
    library (or object file) and return its path; unchanged inputs reuse the
    cached build, and changed headers are noticed through depfiles."""
    files = [str(Path(p).resolve()) for p in _as_list(sources) + _as_list(cpp_files) + _as_list(cuda_files)]
    if not files:
        raise ValueError("sources must be provided.")
    _refuse_gpu([f for f in files if Path(f).suffix.lower() == ".cu"], None, backend)
    del extra_cuda_cflags
    _check_module_name(name)
    _require_supported_platform()
    texts = []
    for f in files:
        if _is_linker_input(f):
            if not Path(f).is_file():
                raise FileNotFoundError(f"cannot read object file {f}")
            continue
        try:
            texts.append(Path(f).read_text(errors="replace"))
        except OSError as err:
            raise FileNotFoundError(f"cannot read source {f}") from err
    cflags, ldflags = list(extra_cflags or []), list(extra_ldflags or [])
    include_paths = list(extra_include_paths or [])
    includes = _include_dirs(texts, include_paths)
    build_dir = _build_dir(name, build_directory, sorted(files), cflags, ldflags, include_paths, includes, output)
    with _locked(build_dir):
        return _execute(_Plan(build_dir, name, files, includes, cflags, ldflags, output))


def load(name: str, *, sources: StrSeq = None, cpp_files: StrSeq = None, cuda_files: StrSeq = None,
         extra_cflags: Optional[Sequence[str]] = None, extra_cuda_cflags: Optional[Sequence[str]] = None,
         extra_ldflags: Optional[Sequence[str]] = None, extra_include_paths: Optional[Sequence[str]] = None,
         build_directory: Optional[str] = None, keep_module_alive: bool = True,
         backend: Optional[str] = None) -> Module:
    """:func:`build`, then ``tether.load_module`` of the result."""
    path = build(name, sources=sources, cpp_files=cpp_files, cuda_files=cuda_files, extra_cflags=extra_cflags,
                 extra_cuda_cflags=extra_cuda_cflags, extra_ldflags=extra_ldflags,
                 extra_include_paths=extra_include_paths, build_directory=build_directory, backend=backend)
    return load_module(path, keep_module_alive=keep_module_alive)
