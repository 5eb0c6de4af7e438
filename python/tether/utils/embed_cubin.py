#!/usr/bin/env python3
"""Embedding a CUDA binary (CUBIN) into a compiled object file.

C++ code that declares ``TVM_FFI_EMBED_CUBIN(name)`` refers to two symbols,
``__tvm_ffi__cubin_<name>`` (first byte of the image) and
``__tvm_ffi__cubin_<name>_end`` (one past its last byte).  :func:`embed_cubin`
supplies them: it wraps the CUBIN bytes in a relocatable object with GNU
``ld -r -b binary``, marks that object's stack non-executable, moves the
data to a read-only section and renames ``ld``'s ``_binary_*`` symbols with
``objcopy``, links it together with the object compiled from the C++ code
(``ld -r``), and finally makes the two symbols local so several objects may
embed images under the same name.

Nothing here needs a GPU, only GNU binutils (``ld`` and ``objcopy``) on
``PATH``; when one is missing, ``RuntimeError`` names it.  The module is
also a command-line tool::

    python -m tether.utils.embed_cubin --output-obj new.o --input-obj old.o \\
        --cubin kernel.cubin --name my_kernels [--verbose]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Optional, Sequence

__all__ = ["embed_cubin", "main"]

_REQUIRED_TOOLS = ("ld", "objcopy")


def _cubin_symbols(name: str) -> tuple:
    return f"__tvm_ffi__cubin_{name}", f"__tvm_ffi__cubin_{name}_end"


def _require_tools() -> None:
    missing = [tool for tool in _REQUIRED_TOOLS if shutil.which(tool) is None]
    if missing:
        raise RuntimeError(
            f"embed_cubin needs GNU binutils, but {' and '.join(repr(t) for t in missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not on PATH; install binutils "
            "(for example `apt-get install binutils`) to embed CUBIN images"
        )


def _run(step: str, what: str, cmd: list, verbose: bool, cwd: Optional[Path] = None) -> None:
    """Run one tool invocation; RuntimeError with its output when it fails."""
    if verbose:
        print(f"\n[{step}] {what}")
        print(f"Command: {' '.join(cmd)}")
        if cwd is not None:
            print(f"Working directory: {cwd}")
    try:
        done = subprocess.run(cmd, cwd=None if cwd is None else str(cwd), capture_output=True, check=False)
    except FileNotFoundError as missing:
        raise RuntimeError(f"{cmd[0]} is not available ({missing}); install GNU binutils") from missing
    stdout = done.stdout.decode("utf-8", errors="replace")
    stderr = done.stderr.decode("utf-8", errors="replace")
    if done.returncode != 0:
        raise RuntimeError(
            f"{cmd[0]} ({what}) failed with status {done.returncode}\n"
            f"Command: {' '.join(cmd)}\nstdout: {stdout}\nstderr: {stderr}"
        )
    if verbose and stdout:
        print(f"stdout: {stdout}")
    if verbose and stderr:
        print(f"stderr: {stderr}")


def embed_cubin(
    cubin_path: Path,
    input_obj_path: Path,
    output_obj_path: Path,
    name: str,
    verbose: bool = False,
) -> None:
    """Write ``output_obj_path``: ``input_obj_path`` plus the CUBIN image.

    Parameters
    ----------
    cubin_path
        The CUBIN file to embed.
    input_obj_path
        The object compiled from C++ code using ``TVM_FFI_EMBED_CUBIN(name)``.
    output_obj_path
        Where the combined relocatable object is written.
    name
        The name given to ``TVM_FFI_EMBED_CUBIN``; the image is reachable
        through the local symbols ``__tvm_ffi__cubin_<name>`` and
        ``__tvm_ffi__cubin_<name>_end``.
    verbose
        Print each command and its output.

    Raises
    ------
    FileNotFoundError
        When the CUBIN file or the input object does not exist.
    RuntimeError
        When ``ld`` or ``objcopy`` is missing or fails.
    """
    cubin_path, input_obj_path, output_obj_path = Path(cubin_path), Path(input_obj_path), Path(output_obj_path)
    if not cubin_path.exists():
        raise FileNotFoundError(f"CUBIN file not found: {cubin_path}")
    if not input_obj_path.exists():
        raise FileNotFoundError(f"Input object file not found: {input_obj_path}")
    _require_tools()
    start_sym, end_sym = _cubin_symbols(name)
    if verbose:
        print(f"Input CUBIN: {cubin_path} ({cubin_path.stat().st_size} bytes)")
        print(f"Input object: {input_obj_path} ({input_obj_path.stat().st_size} bytes)")
        print(f"Output object: {output_obj_path}")
        print(f"Symbol name: {name}")

    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        # ``ld -b binary`` derives its symbol names from the input file name
        # (``_binary_<mangled name>_start``/``_end``), so give the image a
        # known name and run ld from its directory.
        image = work / f"embedded_{name}.cubin"
        image.write_bytes(cubin_path.read_bytes())
        raw_obj = work / f"cubin_{name}.o"
        renamed_obj = work / f"cubin_{name}_renamed.o"

        _run("Step 1/4", "binary", ["ld", "-r", "-b", "binary", "-o", str(raw_obj), image.name], verbose, cwd=work)
        _run(
            "Step 1.5/4",
            "add stack section",
            ["objcopy", "--add-section", ".note.GNU-stack=/dev/null",
             "--set-section-flags", ".note.GNU-stack=noload,readonly", str(raw_obj)],
            verbose,
        )
        _run(
            "Step 2/4",
            "rename symbols",
            ["objcopy", "--rename-section", ".data=.rodata,alloc,load,readonly,data,contents",
             "--redefine-sym", f"_binary_embedded_{name}_cubin_start={start_sym}",
             "--redefine-sym", f"_binary_embedded_{name}_cubin_end={end_sym}",
             str(raw_obj), str(renamed_obj)],
            verbose,
        )
        _run("Step 3/4", "merge", ["ld", "-r", "-o", str(output_obj_path), str(input_obj_path), str(renamed_obj)],
             verbose)
        # Made local only after the merge, so the C++ code's references to
        # them are resolved by the link above.
        _run(
            "Step 4/4",
            "localize symbols",
            ["objcopy", "--localize-symbol", start_sym, "--localize-symbol", end_sym, str(output_obj_path)],
            verbose,
        )

    if verbose:
        print(f"\nCreated combined object file: {output_obj_path}")
        print(f"  code from {input_obj_path.name}, CUBIN as local symbols {start_sym} and {end_sym},")
        print("  and a .note.GNU-stack section (non-executable stack)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tether.utils.embed_cubin",
        description="Embed CUBIN data into an object file that uses the TVM_FFI_EMBED_CUBIN macro",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "The C++ source compiled to --input-obj declares TVM_FFI_EMBED_CUBIN(<name>) and\n"
            "gets kernels with TVM_FFI_EMBED_CUBIN_GET_KERNEL(<name>, \"kernel\").\n"
            "Requires GNU binutils (ld, objcopy) on PATH."
        ),
    )
    parser.add_argument("--output-obj", type=str, required=True, metavar="PATH",
                        help="object file to write (e.g. new.o)")
    parser.add_argument("--input-obj", type=str, required=True, metavar="PATH",
                        help="object file compiled from code using TVM_FFI_EMBED_CUBIN (e.g. old.o)")
    parser.add_argument("--cubin", type=str, required=True, metavar="PATH",
                        help="CUBIN file to embed (e.g. kernel.cubin)")
    parser.add_argument("--name", type=str, required=True, metavar="NAME",
                        help="name used in the TVM_FFI_EMBED_CUBIN macro (e.g. my_kernels)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each command and its output")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command-line entry point; returns the process exit status.

    0 on success, 1 when an input file is missing, 2 when a tool is missing
    or fails, 3 on any other error.
    """
    args = _parser().parse_args(argv)
    try:
        output = Path(args.output_obj).resolve()
        output.parent.mkdir(parents=True, exist_ok=True)
        embed_cubin(Path(args.cubin).resolve(), Path(args.input_obj).resolve(), output, args.name, args.verbose)
        if not args.verbose:
            print(f"Created {output}")
        return 0
    except FileNotFoundError as err:
        print(f"Error: {err}", file=sys.stderr)
        return 1
    except RuntimeError as err:
        print(f"Error: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # noqa: BLE001 - report anything else with its traceback
        print(f"Unexpected error: {err}", file=sys.stderr)
        traceback.print_exc()
        return 3


if __name__ == "__main__":
    sys.exit(main())
