"""The README's examples run as written: its Python, shell and C++ blocks
are executed in order in one scratch folder (a C++ block starting with
`// file: NAME` is written to NAME; shell blocks run with the test venv's
tools on PATH), so the documentation cannot rot."""

import os
import re
import shutil
import subprocess
import sys

import pytest

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def section(name: str) -> str:
    text = open(README, encoding="utf-8").read()
    start = text.index(f"### {name}")
    end = text.find("\n### ", start + 1)
    return text[start:end if end >= 0 else None]


def run_blocks(text: str, cwd) -> int:
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    ran = 0
    for lang, body in BLOCK.findall(text):
        if lang == "python":
            r = subprocess.run([sys.executable, "-c", body], cwd=cwd, env=env, capture_output=True, text=True)
        elif lang == "sh":
            r = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=cwd, env=env, capture_output=True, text=True)
        elif lang == "cpp" and body.startswith("// file: "):
            name = body.split("\n", 1)[0][len("// file: "):].strip()
            (cwd / name).write_text(body)
            continue
        else:
            continue
        assert r.returncode == 0, f"README {lang} block failed:\n{body}\n--- stderr ---\n{r.stderr[-3000:]}"
        ran += 1
    return ran


def test_python_example(tmp_path):
    assert run_blocks(section("From Python"), tmp_path) == 1


def test_tensor_and_kernel_examples(tmp_path):
    pytest.importorskip("numpy", reason="NumPy is a test dependency (installed by make test)")
    pytest.importorskip("tvm_ffi", reason="the kernel example compiles against apache-tvm-ffi's headers")
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    if shutil.which("tether-config", path=path) is None or shutil.which("c++", path=path) is None:
        pytest.skip("the example's shell step needs tether-config (a pip-installed tether) and c++ on PATH")
    assert run_blocks(section("Tensors: NumPy and native kernels"), tmp_path) == 3


def test_cpp_layer_example(tmp_path):
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    if shutil.which("tether-config", path=path) is None or shutil.which("c++", path=path) is None:
        pytest.skip("the example's shell step needs tether-config (a pip-installed tether) and c++ on PATH")
    assert run_blocks(section("From C++"), tmp_path) == 3


def test_nanobind_example(tmp_path):
    pytest.importorskip("nanobind", reason="nanobind is a test dependency (installed by make test)")
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    if shutil.which("tether-config", path=path) is None or shutil.which("c++", path=path) is None:
        pytest.skip("the example's shell step needs tether-config (a pip-installed tether) and c++ on PATH")
    assert run_blocks(section("From nanobind"), tmp_path) == 2
