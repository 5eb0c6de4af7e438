"""The start-up switch ``TETHER_PROVIDE_TVM_FFI=1`` (read by the wheel's
``.pth``): tether serves as ``tvm_ffi`` from the first ``import tvm_ffi``,
and a process that never imports it pays nothing (tether is not imported,
nor is PyTorch through it). The optional torch add-on's build child never
starts a build of its own."""

import os
import subprocess
import sys
import textwrap

import pytest
from plugins import run_python


_run = run_python


def test_a_process_that_never_imports_tvm_ffi_does_not_import_tether():
    code = "import sys; print(sorted(m for m in ('tether', 'torch', 'numpy') if m in sys.modules))"
    assert _run(code, TETHER_PROVIDE_TVM_FFI="1") == "[]"


def test_the_first_import_of_tvm_ffi_gives_tether():
    code = """
        import sys
        import tvm_ffi
        import tvm_ffi.core
        import tether
        print(tvm_ffi is tether, tvm_ffi.core is tether.core, 'tether' in sys.modules)
    """
    assert _run(code, TETHER_PROVIDE_TVM_FFI="1") == "True True True"


def test_without_the_switch_tvm_ffi_is_not_tether():
    # Compared by folder, not by name: the checkout itself may be called
    # "tether".
    code = """
        import importlib.util, os
        spec = importlib.util.find_spec("tvm_ffi")
        tether_dir = os.path.dirname(importlib.util.find_spec("tether").origin)
        print(spec is None or os.path.dirname(spec.origin or "") != tether_dir)
    """
    env = dict(os.environ)
    env.pop("TETHER_PROVIDE_TVM_FFI", None)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr


def test_the_torch_addon_build_child_starts_no_build_of_its_own(monkeypatch, tmp_path):
    from tether import _optional_torch_c_dlpack as addon

    seen = {}

    def fake_run(cmd, check, capture_output, env):
        seen.update(env)
        return subprocess.CompletedProcess(cmd, 0, b"", b"")

    monkeypatch.setenv("TETHER_PROVIDE_TVM_FFI", "1")
    monkeypatch.delenv("TETHER_DISABLE_TORCH_C_DLPACK", raising=False)
    monkeypatch.setattr(addon.subprocess, "run", fake_run)
    addon._build_addon(tmp_path, "libaddon.so", "cpu")
    assert seen["TETHER_DISABLE_TORCH_C_DLPACK"] == "1"
    assert "TETHER_PROVIDE_TVM_FFI" not in seen
