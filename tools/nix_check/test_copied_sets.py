"""Tests of the Nix copied-set check: references leaving what a check copies
(C includes, Python paths, Cargo path dependencies and workspaces) and
suites that would skip for a missing test dependency are reported; what the
whole source set copies passes; the repository's flake passes."""

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import copied_sets as cs  # noqa: E402

SOURCE = "/nix/store/" + "1" * 32 + "-source"


def make_repo(tmp_path, files: dict) -> set:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return set(files)


REPO = {
    "README.md": "# readme\n",
    "Cargo.toml": '[workspace]\nmembers = ["rust/sys"]\n[workspace.package]\nversion = "0.1.0"\n',
    "rust/sys/Cargo.toml": '[package]\nname = "sys"\nversion.workspace = true\n',
    "rust/sys/src/lib.rs": "",
    "tests/c/check.h": "#define CHECK(x) (x)\n",
    "tests/c/abi_test.c": '#include "check.h"\n#include "tether/c_api.h"\nint main(void) { return 0; }\n',
    "tests/python/test_readme.py": (
        "import os\nimport pytest\n"
        'README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")\n'
        'np = pytest.importorskip("numpy")\n'
        'tvm_ffi = pytest.importorskip("tvm_ffi.libinfo", reason="peer")\n'
        'torch = pytest.importorskip("torch")\n'),
    "tests/plugin/Cargo.toml": '[package]\nname = "plugin"\n[workspace]\n[dependencies]\nsys = { path = "../../rust/sys" }\n',
}


def problems_for(tmp_path, copied, script="", packages=()):
    repo = make_repo(tmp_path, REPO)
    check = {"script": script, "src": "", "inputs": [{"name": "python3-env", "packages": list(packages)}]}
    return cs.check_problems(str(tmp_path), repo, "t", check, {SOURCE: sorted(copied)})


def test_whole_source_set_passes(tmp_path):
    script = f"cp -r {SOURCE} source\ncd source/tests/python\npython -m pytest\n"
    assert problems_for(tmp_path, REPO, script, ["numpy", "apache-tvm-ffi"]) == []


def test_include_beside_the_file_must_be_copied(tmp_path):
    copied = set(REPO) - {"tests/c/check.h"}
    assert problems_for(tmp_path, copied, f"cc {SOURCE}/tests/c/abi_test.c") == [
        f"check 't': tests/c/abi_test.c (copied as {SOURCE}) refers to tests/c/check.h, which it does not copy"]


def test_python_path_from_the_file_must_be_copied(tmp_path):
    copied = set(REPO) - {"README.md"}
    script = f"cp -r {SOURCE} source\ncd source/tests/python\npython -m pytest\n"
    assert problems_for(tmp_path, copied, script, ["numpy", "apache-tvm-ffi"]) == [
        f"check 't': tests/python/test_readme.py (copied as {SOURCE}) refers to README.md, which it does not copy"]


def test_cargo_path_dependency_and_workspace_must_be_copied(tmp_path):
    without_sys = set(REPO) - {"rust/sys/Cargo.toml", "rust/sys/src/lib.rs"}
    found = problems_for(tmp_path, without_sys, f"cp -r {SOURCE} s")
    assert f"check 't': tests/plugin/Cargo.toml (copied as {SOURCE}) refers to rust/sys/Cargo.toml, which it does not copy" in found
    assert f"check 't': Cargo.toml (copied as {SOURCE}) refers to rust/sys/Cargo.toml, which it does not copy" in found
    # A member inheriting its version needs the workspace's manifest.
    without_root = set(REPO) - {"Cargo.toml"}
    assert problems_for(tmp_path, without_root, f"cp -r {SOURCE} s") == [
        f"check 't': rust/sys/Cargo.toml (copied as {SOURCE}) refers to Cargo.toml, which it does not copy"]


def test_importorskip_of_a_missing_test_dependency(tmp_path):
    script = f"cp -r {SOURCE} source\ncd source/tests/python\npython -m pytest\n"
    # torch is optional (OPTIONAL_MODULES); tvm_ffi comes from apache-tvm-ffi.
    assert problems_for(tmp_path, REPO, script, ["numpy"]) == [
        "check 't': tests/python/test_readme.py skips without tvm_ffi (package apache-tvm-ffi), "
        "which the check's Python environment lacks"]


needs_nix = pytest.mark.skipif(shutil.which("nix-instantiate") is None,
                               reason="nix-instantiate (Debian's nix-bin, installed by make lint-nix) is not on PATH")


@needs_nix
def test_a_file_named_literally_is_copied_alone(tmp_path):
    # `${./tests/c/abi_test.c}` in a flake: the store path is the file alone.
    repo = make_repo(tmp_path, REPO)
    store = next(iter(cs.literal_store_paths(str(tmp_path), ["tests/c/abi_test.c"])))
    check = {"script": f"cc {store} -o t", "src": "", "inputs": []}
    assert cs.check_problems(str(tmp_path), repo, "c", check, {}) == [
        "check 'c': tests/c/abi_test.c (copied as ./tests/c/abi_test.c) refers to tests/c/check.h, "
        "which it does not copy"]


@needs_nix
def test_repository_flake_passes():
    root = os.path.normpath(os.path.join(HERE, "..", ".."))
    if subprocess.run(["git", "rev-parse"], cwd=root, capture_output=True).returncode != 0:
        pytest.skip("lists the repository's files with git; this copy is not a checkout")
    assert cs.main([root]) == 0
