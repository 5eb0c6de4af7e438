"""Tests of the cargo-bazel runner with the real cargo-bazel (the binary
`make lint-bazel` builds, named by CARGO_BAZEL): a hub whose manifest has a
path dependency outside its directory fails to splice, the same crates as a
workspace splice and generate (annotations passed as rules_rust encodes
them), and a lock file cargo-bazel would rewrite is reported."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import crate_universe  # noqa: E402

BINARY = os.environ.get("CARGO_BAZEL", "")
if not BINARY and "TEST_SRCDIR" in os.environ:
    pytest.skip("bazel test has no cargo-bazel binary (make lint-bazel builds it and runs this file)",
                allow_module_level=True)

MODULE = """
module(name = "m", version = "0.1.0")
bazel_dep(name = "rules_rust", version = "0.69.0")
crate = use_extension("@rules_rust//crate_universe:extensions.bzl", "crate")
crate.from_cargo(name = "crates", cargo_lockfile = "{lock}", manifests = {manifests!r})
crate.annotation(crate = "b", repositories = ["crates"], build_script_data = ["@elsewhere//:x"])
use_repo(crate, "crates")
"""


def write(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(textwrap.dedent(text))


def run(tmp_path, files):
    assert BINARY and os.access(BINARY, os.X_OK), "CARGO_BAZEL must name the cargo-bazel binary"
    root = str(tmp_path / "repo")
    write(root, files)
    mod, _ = crate_universe.module_tags(root)
    (ext_key, tag, kw), = [t for t in mod.tags if t[1] == "from_cargo"]
    return crate_universe.run_hub(BINARY, root, str(tmp_path / "out"), kw, tag, mod), tmp_path / "out" / "crates"


CRATES = {
    "b/Cargo.toml": '[package]\nname = "b"\nversion = "0.1.0"\nedition = "2021"\nbuild = "build.rs"\n',
    "b/src/lib.rs": "",
    "b/build.rs": "fn main() {}\n",
    "BUILD.bazel": "",
}


def test_path_dependency_outside_the_spliced_directory_fails(tmp_path):
    files = dict(CRATES)
    files["a/Cargo.toml"] = ('[package]\nname = "a"\nversion = "0.1.0"\nedition = "2021"\n[workspace]\n'
                             '[dependencies]\nb = { path = "../b" }\n')
    files["a/src/lib.rs"] = ""
    files["a/Cargo.lock"] = ""
    files["MODULE.bazel"] = MODULE.format(lock="//a:Cargo.lock", manifests=["//a:Cargo.toml"])
    problems, _ = run(tmp_path, files)
    assert len(problems) == 1 and "cargo-bazel splice failed" in problems[0], problems
    assert "b/Cargo.toml" in problems[0]


def workspace_files(lock):
    files = dict(CRATES)
    files["Cargo.toml"] = '[workspace]\nresolver = "2"\nmembers = ["a", "b"]\n'
    files["a/Cargo.toml"] = ('[package]\nname = "a"\nversion = "0.1.0"\nedition = "2021"\n'
                             '[dependencies]\nb = { path = "../b" }\n')
    files["a/src/lib.rs"] = ""
    files["Cargo.lock"] = lock
    files["MODULE.bazel"] = MODULE.format(lock="//:Cargo.lock",
                                          manifests=["//:Cargo.toml", "//a:Cargo.toml", "//b:Cargo.toml"])
    return files


def test_workspace_splices_and_generates(tmp_path):
    root = tmp_path / "repo"
    write(str(root), workspace_files(""))
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=root, check=True, capture_output=True)
    problems, out = run(tmp_path, workspace_files((root / "Cargo.lock").read_text()))
    assert problems == [], problems
    assert 'name = "b"' in (out / "repo" / "BUILD.bazel").read_text()
    assert json.load(open(out / "config.json"))["annotations"]["b *"]["build_script_data"] == ["@elsewhere//:x"]


def test_stale_lock_file_is_reported(tmp_path):
    stale = 'version = 3\n\n[[package]]\nname = "a"\nversion = "0.1.0"\n\n[[package]]\nname = "b"\nversion = "0.1.0"\n'
    problems, _ = run(tmp_path, workspace_files(stale))
    assert len(problems) == 1 and "rewrites Cargo.lock" in problems[0], problems
