"""Tests of surface.py, one class of first-run defect each: a small module
with the defect is reported, the same module without it is not, and the
repository itself has none."""

import os
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check  # noqa: E402
import surface  # noqa: E402

MODULE_HEAD = """
module(name = "m", version = "0.1.0")
bazel_dep(name = "platforms", version = "1.0.0")
bazel_dep(name = "bazel_skylib", version = "1.8.2")
bazel_dep(name = "rules_cc", version = "0.2.14")
bazel_dep(name = "rules_rust", version = "0.69.0")
bazel_dep(name = "rules_rust_pyo3", version = "0.69.0")
bazel_dep(name = "rules_python", version = "1.6.3")
bazel_dep(name = "doctest", version = "2.4.11")
"""


def write(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(textwrap.dedent(text))


def evaluate(tmp_path, files, platform=None):
    write(str(tmp_path), files)
    mod = check.check_module(str(tmp_path), platform=platform)
    ev = check.Evaluator(mod, check.list_files(str(tmp_path), []))
    return mod, ev


# -- crate_universe splicing ----------------------------------------------------

CARGO_FILES = {
    "a/Cargo.toml": '[package]\nname = "a"\nversion = "0.1.0"\n[workspace]\n[dependencies]\nb = { path = "../b" }\n',
    "a/src/lib.rs": "",
    "b/Cargo.toml": '[package]\nname = "b"\nversion = "0.1.0"\n',
    "b/src/lib.rs": "",
    "Cargo.lock": "",
    "a/Cargo.lock": "",
}


def splice_module(manifests, lock):
    return MODULE_HEAD + f"""
crate = use_extension("@rules_rust//crate_universe:extensions.bzl", "crate")
crate.from_cargo(name = "crates", cargo_lockfile = "{lock}", manifests = {manifests!r})
use_repo(crate, "crates")
"""


def test_path_dependency_leaving_the_spliced_directory(tmp_path):
    mod, _ = evaluate(tmp_path, {**CARGO_FILES, "MODULE.bazel": splice_module(["//a:Cargo.toml"], "//a:Cargo.lock"),
                                 "a/BUILD.bazel": 'exports_files(["Cargo.toml", "Cargo.lock"])\n'})
    found = surface.splice_problems(str(tmp_path), mod.tags)
    assert len(found) == 1 and 'path = "../b"' in found[0], found


def test_path_dependency_inside_the_workspace(tmp_path):
    files = dict(CARGO_FILES)
    files["Cargo.toml"] = '[workspace]\nmembers = ["a", "b"]\n'
    files["a/Cargo.toml"] = files["a/Cargo.toml"].replace("[workspace]\n", "")
    files["MODULE.bazel"] = splice_module(["//:Cargo.toml", "//a:Cargo.toml"], "//:Cargo.lock")
    files["BUILD.bazel"] = 'exports_files(["Cargo.toml", "Cargo.lock"])\n'
    files["a/BUILD.bazel"] = 'exports_files(["Cargo.toml"])\n'
    mod, _ = evaluate(tmp_path, files)
    assert surface.splice_problems(str(tmp_path), mod.tags) == []


def test_specs_against_their_manifest_and_lock(tmp_path):
    write(str(tmp_path), {
        "p/Cargo.toml": '[package]\nname = "p"\nversion = "0.1.0"\n[dependencies]\nlibc = "0.2"\n'
                        'q = { path = "../q" }\npyo3 = { version = "0.23", features = ["x"] }\n',
        "p/Cargo.lock": '[[package]]\nname = "libc"\nversion = "0.2.1"\nsource = "registry+x"\n',
        "own.lock": '[[package]]\nname = "libc"\nversion = "0.2.0"\nsource = "registry+x"\n',
    })
    crate = "@rules_rust//crate_universe:extensions.bzl%crate"
    tags = [(crate, "spec", {"package": "libc", "version": "0.2", "repositories": ["h"]}),
            (crate, "from_specs", {"name": "h", "cargo_lockfile": "//:own.lock"})]
    found = surface.spec_problems(str(tmp_path), tags, {"h": ("p/Cargo.toml", "p/Cargo.lock")})
    assert any("no crate.spec for pyo3" in p for p in found), found
    assert any("libc ['0.2.0'], but p/Cargo.lock pins ['0.2.1']" in p for p in found), found
    assert not any(" q" in p for p in found)
    tags[0][2]["version"] = "0.2"
    tags.append((crate, "spec", {"package": "pyo3", "version": "0.23", "features": ["x"], "repositories": ["h"]}))
    write(str(tmp_path), {"own.lock": '[[package]]\nname = "libc"\nversion = "0.2.1"\nsource = "registry+x"\n'})
    assert surface.spec_problems(str(tmp_path), tags, {"h": ("p/Cargo.toml", "p/Cargo.lock")}) == []
    # The source lock itself is rewritten by cargo-bazel for the hub.
    tags[1][2]["cargo_lockfile"] = "//p:Cargo.lock"
    found = surface.spec_problems(str(tmp_path), tags, {"h": ("p/Cargo.toml", "p/Cargo.lock")})
    assert len(found) == 1 and "a lock of its own" in found[0]


# -- labels across module extensions ---------------------------------------------

ANNOTATION_MODULE = MODULE_HEAD + """
crate = use_extension("@rules_rust//crate_universe:extensions.bzl", "crate")
crate.from_cargo(name = "crates", cargo_lockfile = "//:Cargo.lock", manifests = ["//:Cargo.toml"])
crate.annotation(
    crate = "pyo3-ffi",
    repositories = ["crates"],
    build_script_data = ["@rules_rust_pyo3//:current_pyo3_toolchain", "@crates__x-1.0//:y"],
    build_script_toolchains = ["@rules_rust_pyo3//:current_pyo3_toolchain"],
    build_script_env = {"A": "$(execpath @platforms//:x)"},
)
use_repo(crate, "crates")
"""


def test_string_label_of_this_module_not_visible_to_the_extension(tmp_path):
    files = {"MODULE.bazel": ANNOTATION_MODULE, "Cargo.toml": '[package]\nname = "pyo3-ffi"\nversion = "0.1.0"\n',
             "Cargo.lock": '[[package]]\nname = "pyo3-ffi"\n', "BUILD.bazel": 'exports_files(["Cargo.toml", "Cargo.lock"])\n'}
    mod, _ = evaluate(tmp_path, files)
    found = surface.extension_label_problems(mod)
    assert len(found) == 1 and "@rules_rust_pyo3" in found[0] and "cannot see" in found[0], found
    # inject_repo holds only while the module is the root: still reported.
    files["MODULE.bazel"] = ANNOTATION_MODULE + 'inject_repo(crate, "rules_rust_pyo3")\n'
    mod, _ = evaluate(tmp_path, files)
    found = surface.extension_label_problems(mod)
    assert len(found) == 1 and "inject_repo" in found[0] and "dependency" in found[0], found
    # The canonical name, with Bazel 8's naming guaranteed.
    canonical = ANNOTATION_MODULE.replace('"@rules_rust_pyo3//:current_pyo3_toolchain", "@crates',
                                          '"@@rules_rust_pyo3+//:current_pyo3_toolchain", "@crates')
    files["MODULE.bazel"] = canonical
    mod, _ = evaluate(tmp_path, files)
    found = surface.extension_label_problems(mod)
    assert len(found) == 1 and "admits older Bazel" in found[0], found
    files["MODULE.bazel"] = canonical.replace('module(name = "m", version = "0.1.0")',
                                              'module(name = "m", version = "0.1.0", bazel_compatibility = [">=8.0.0"])')
    mod, _ = evaluate(tmp_path, files)
    assert surface.extension_label_problems(mod) == []
    assert not any("rules_rust_pyo3" in p for p in mod.problems)   # the canonical label resolves


def test_generated_build_files_against_the_extension_mapping(tmp_path):
    write(str(tmp_path), {"BUILD.pyo3-ffi-0.23.5.bazel": 'cargo_build_script(data = ["@rules_rust_pyo3//:t", '
                                                          '"@crates__libc-0.2.1//:libc", "@@rules_rust_pyo3+//:t"])\n'})
    found = surface.generated_build_problems(str(tmp_path), {"crates"}, set())
    assert found == ["BUILD.pyo3-ffi-0.23.5.bazel: names @rules_rust_pyo3, which the crate extension's "
                     "repositories cannot see"]


# -- make variables ---------------------------------------------------------------


def test_make_variable_syntax():
    assert surface.make_variable_errors("-Wl,-rpath,$$ORIGIN", genrule=False) == []
    assert surface.make_variable_errors("$(location //a:b) $(BINDIR)", genrule=False) == []
    assert len(surface.make_variable_errors("-Wl,-rpath,$ORIGIN", genrule=False)) == 1
    assert surface.make_variable_errors("cp $< $@", genrule=True) == []
    assert len(surface.make_variable_errors("cp $< $@", genrule=False)) == 2
    assert len(surface.make_variable_errors("$(loc x y z)", genrule=False)) == 1


def test_make_variable_in_rustc_flags_reported(tmp_path):
    mod, _ = evaluate(tmp_path, {
        "MODULE.bazel": MODULE_HEAD,
        "BUILD.bazel": """
            load("@rules_rust//rust:defs.bzl", "rust_shared_library")
            rust_shared_library(
                name = "l",
                srcs = ["l.rs"],
                rustc_flags = select({
                    "@platforms//os:macos": [],
                    "//conditions:default": ["-Clink-arg=-Wl,-rpath,$ORIGIN"],
                }),
            )
        """,
        "l.rs": "",
    })
    found = surface.make_variable_problems(mod)
    assert len(found) == 1 and "rustc_flags" in found[0] and "$$" in found[0], found


# -- constraint values and single files per OS --------------------------------------

PLATFORM_BUILD = {
    "MODULE.bazel": MODULE_HEAD,
    "platforms/BUILD.bazel": """
        load("@bazel_skylib//lib:selects.bzl", "selects")
        selects.config_setting_group(name = "elf", match_any = ["@platforms//os:linux"])
    """,
    "l.rs": "",
}


def test_config_setting_in_target_compatible_with(tmp_path):
    mod, ev = evaluate(tmp_path, {**PLATFORM_BUILD, "BUILD.bazel": """
        load("@rules_rust//rust:defs.bzl", "rust_shared_library")
        rust_shared_library(name = "l", srcs = ["l.rs"], target_compatible_with = ["//platforms:elf"])
        rust_shared_library(name = "k", srcs = ["l.rs"], target_compatible_with = select({
            "//platforms:elf": [],
            "//conditions:default": ["@platforms//:incompatible"],
        }))
    """})
    found = surface.constraint_problems(ev, mod)
    assert len(found) == 1 and "'l'" in found[0] and "config_setting_group" in found[0], found


SINGLE_FILE_BUILD = """
load("@bazel_skylib//rules:copy_file.bzl", "copy_file")
load("@rules_rust//rust:defs.bzl", "rust_shared_library")
rust_shared_library(name = "core", srcs = ["l.rs"])
copy_file(name = "dll", src = ":core", out = "core.dll", target_compatible_with = {tcw})
genrule(name = "g", srcs = [":core"], outs = ["g.txt"], cmd = "cat $(location :core) > $@",
        target_compatible_with = ["@platforms//os:linux"])
"""


def test_two_file_target_in_single_file_attribute_on_windows(tmp_path):
    files = {**PLATFORM_BUILD, "BUILD.bazel": SINGLE_FILE_BUILD.format(tcw='["@platforms//os:windows"]')}
    found = {}
    for os_name in ("linux", "macos", "windows"):
        mod, ev = evaluate(tmp_path, files, platform=os_name)
        found[os_name] = surface.single_file_problems(ev, mod, os_name)
    assert found["linux"] == [] and found["macos"] == []
    assert len(found["windows"]) == 1 and "copy_file 'dll' src" in found["windows"][0], found
    files["BUILD.bazel"] = SINGLE_FILE_BUILD.format(tcw='["@platforms//os:macos"]')
    mod, ev = evaluate(tmp_path, files, platform="windows")
    assert surface.single_file_problems(ev, mod, "windows") == []


# -- external modules' packages and include paths -------------------------------------

FACTS = surface.load_bcr_facts()


def test_bcr_module_without_root_package_and_include_path(tmp_path):
    files = {"MODULE.bazel": MODULE_HEAD, "t.cc": "#include <doctest/doctest.h>\n", "BUILD.bazel": """
        load("@rules_cc//cc:cc_test.bzl", "cc_test")
        cc_test(name = "t", srcs = ["t.cc"], deps = ["@doctest"])
        cc_test(name = "u", srcs = ["t.cc"], deps = ["@doctest//doctest"])
    """}
    mod, ev = evaluate(tmp_path, files)
    found = surface.external_include_problems(ev, mod, FACTS)
    assert any("'t' deps: @doctest" in p and "no package //" in p for p in found), found
    assert any("'u'" in p and "includes <doctest/doctest.h>" in p for p in found), found


def test_header_rerooted_by_a_local_library(tmp_path):
    files = {"MODULE.bazel": MODULE_HEAD, "t.cc": '#include <doctest/doctest.h>\n#include "doctest/doctest.h"\n',
             "BUILD.bazel": """
        load("@rules_cc//cc:cc_library.bzl", "cc_library")
        load("@rules_cc//cc:cc_test.bzl", "cc_test")
        cc_library(name = "doctest", hdrs = ["@doctest//doctest:doctest.h"], include_prefix = "doctest",
                   strip_include_prefix = "/doctest", deps = ["@doctest//doctest"])
        cc_test(name = "t", srcs = ["t.cc"], deps = [":doctest"])
    """}
    mod, ev = evaluate(tmp_path, files)
    assert surface.external_include_problems(ev, mod, FACTS) == []


# -- crates used against deps ------------------------------------------------------


def test_crate_used_but_not_a_dependency(tmp_path):
    files = {
        "MODULE.bazel": MODULE_HEAD,
        "p/Cargo.toml": '[package]\nname = "p"\nversion = "0.1.0"\n[dependencies]\nparking_lot = "0.12"\nlibc = "0.2"\n',
        "p/src/lib.rs": "use parking_lot::Mutex;\n// libc::foo in a comment\npub fn f() {}\n",
        "p/BUILD.bazel": """
            load("@rules_rust//rust:defs.bzl", "rust_library")
            exports_files(["Cargo.toml"])
            rust_library(name = "p", srcs = ["src/lib.rs"], deps = ["@crates//:libc"])
        """,
    }
    mod, ev = evaluate(tmp_path, files)
    found = surface.crate_use_problems(ev, mod)
    assert len(found) == 1 and "parking_lot" in found[0], found
    files["p/BUILD.bazel"] = files["p/BUILD.bazel"].replace('"@crates//:libc"', '"@crates//:parking_lot"')
    mod, ev = evaluate(tmp_path, files)
    assert surface.crate_use_problems(ev, mod) == []


# -- platform-specific APIs in tests ---------------------------------------------------

UNGATED = """
fn lib_path(name: &str) -> String { format!("lib{name}.so") }
fn open() { unsafe { libc::dlopen(std::ptr::null(), 0) }; }
"""
GATED = """
fn lib_path(name: &str) -> String {
    format!("{}{name}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX)
}
#[cfg(unix)]
mod dl {
    pub fn open() { unsafe { libc::dlopen(std::ptr::null(), 0) }; }
}
#[cfg(windows)]
mod dl {
    use std::os::windows::ffi::OsStrExt;
}
"""


def test_platform_apis_in_tests(tmp_path):
    write(str(tmp_path), {"c/Cargo.toml": '[package]\nname = "c"\nversion = "0.1.0"\n', "c/tests/load.rs": UNGATED,
                          "c/tests/ok.rs": GATED})
    found = surface.platform_api_problems(str(tmp_path), ["c/tests/load.rs", "c/tests/ok.rs"])
    assert len(found) == 2 and all(p.startswith("c/tests/load.rs:") for p in found), found


# -- py_test mains -----------------------------------------------------------------


def test_py_test_whose_pytest_file_never_runs(tmp_path):
    files = {
        "MODULE.bazel": MODULE_HEAD,
        "test_a.py": "def test_x():\n    assert False\n",
        "test_b.py": "import pytest\n\ndef test_x():\n    pass\n\nif __name__ == '__main__':\n    pytest.main([__file__])\n",
        "BUILD.bazel": """
            load("@rules_python//python:py_test.bzl", "py_test")
            py_test(name = "test_a", srcs = ["test_a.py"])
            py_test(name = "test_b", srcs = ["test_b.py"])
        """,
    }
    mod, ev = evaluate(tmp_path, files)
    found = surface.py_test_problems(ev, mod)
    assert len(found) == 1 and "'test_a'" in found[0], found


# -- the repository --------------------------------------------------------------------


@pytest.mark.skipif("TEST_SRCDIR" in os.environ, reason="bazel test runs in a sandbox holding this "
                    "package's files only; make lint runs the check on the whole checkout")
def test_repository_has_no_surface_problem():
    root = os.path.abspath(os.path.join(HERE, "..", ".."))
    files = check.list_files(root, check.nested_module_roots(check.list_files(root, [])))
    mod = check.check_module(root)
    assert surface.run(root, mod, files) == []


# -- hub names across modules ----------------------------------------------------------


def test_hub_names_are_the_modules_and_aliases_resolve(tmp_path):
    module = MODULE_HEAD + """
crate = use_extension("@rules_rust//crate_universe:extensions.bzl", "crate")
crate.from_cargo(name = "{hub}", cargo_lockfile = "//:Cargo.lock", manifests = ["//:Cargo.toml"])
use_repo(crate, crates = "{hub}")
"""
    files = {"Cargo.toml": '[package]\nname = "p"\nversion = "0.1.0"\n',
             "Cargo.lock": '[[package]]\nname = "libc"\nversion = "0.2.1"\n',
             "BUILD.bazel": 'exports_files(["Cargo.toml", "Cargo.lock"])\nfilegroup(name = "f", srcs = '
                            '["@crates//:libc", "@crates//:nothere"])\n',
             "MODULE.bazel": module.format(hub="crates")}
    mod, _ = evaluate(tmp_path, files)
    found = surface.hub_name_problems(mod)
    assert len(found) == 1 and "name it m_crates" in found[0], found
    files["MODULE.bazel"] = module.format(hub="m_crates")
    mod, _ = evaluate(tmp_path, files)
    assert surface.hub_name_problems(mod) == []
    # Labels through the short name are checked against the hub's lock file.
    assert [p for p in mod.problems if "@crates//" in p] == [
        "BUILD.bazel: label @crates//:nothere: 'nothere' is not in the lock file of @crates"]
