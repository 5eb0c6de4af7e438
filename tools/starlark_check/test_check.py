"""Tests of the Starlark consistency check: a fixture module with an orphan
file, a test file without a test target, an unknown attribute and labels
that do not resolve must be reported, and nothing else; a module extension
of the module is run and its downloads checked against the archives they
fetch; the repository itself must pass."""

import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import archive_contents  # noqa: E402
import check  # noqa: E402

FIXTURE = os.path.join(HERE, "testdata", "fixture")
EXTENSION_FIXTURE = os.path.join(HERE, "testdata", "extension_fixture")


def fixture_problems(tmp_path, fixture=FIXTURE):
    # The fixture's files carry a .in suffix so that Bazel and the check of
    # the repository itself do not take them for real packages and sources.
    for name in os.listdir(fixture):
        shutil.copy(os.path.join(fixture, name), tmp_path / name[: -len(".in")])
    return check.check_module(str(tmp_path)).problems


def test_reports_orphan_source_file(tmp_path):
    assert "orphan.c: belongs to no target" in fixture_problems(tmp_path)


def test_reports_test_file_without_test_target(tmp_path):
    problems = fixture_problems(tmp_path)
    assert "lonely_test.cc: test file with no test target" in problems
    assert not any(p.startswith("lib_test.c:") for p in problems)


def test_reports_unknown_attribute(tmp_path):
    assert "BUILD.bazel: cc_library 'lib' has no attribute 'linkstatik'" in fixture_problems(tmp_path)


def test_reports_unresolved_labels(tmp_path):
    problems = fixture_problems(tmp_path)
    assert "BUILD.bazel: label @//:no_such_target: no target or file 'no_such_target' in //" in problems
    assert "BUILD.bazel: label @undeclared_repo//:thing: repository @undeclared_repo is not declared in MODULE.bazel" in problems


def test_genrule_outputs_are_targets_and_its_attributes_checked(tmp_path):
    problems = fixture_problems(tmp_path)
    assert "BUILD.bazel: genrule 'gen' has no attribute 'cmdd'" in problems
    assert not any("gen.c" in p for p in problems)


def test_reports_nothing_else(tmp_path):
    assert sorted(fixture_problems(tmp_path)) == sorted([
        "BUILD.bazel: genrule 'gen' has no attribute 'cmdd'",
        "BUILD.bazel: cc_library 'lib' has no attribute 'linkstatik'",
        "BUILD.bazel: label @//:no_such_target: no target or file 'no_such_target' in //",
        "BUILD.bazel: label @undeclared_repo//:thing: repository @undeclared_repo is not declared in MODULE.bazel",
        "lonely_test.cc: belongs to no target",
        "lonely_test.cc: test file with no test target",
        "orphan.c: belongs to no target",
    ])


def test_module_extension_of_the_module_is_run(tmp_path):
    # The extension's .bzl file is loaded (so it belongs to a target) and its
    # implementation runs: what it makes resolves, what it does not is reported.
    assert sorted(fixture_problems(tmp_path, EXTENSION_FIXTURE)) == sorted([
        "MODULE.bazel: http_archive 'unchecked' downloads without a checksum (sha256 or integrity)",
        "MODULE.bazel: http_archive 'unchecked': http://example.org/unchecked.tar.gz is not an https URL",
        "MODULE.bazel: use_repo names @never_made, which //:deps.bzl%deps does not make (it makes good, unchecked)",
        "MODULE.bazel: label @//:missing.BUILD.bazel: no target or file 'missing.BUILD.bazel' in //",
        "BUILD.bazel: label @good//:nope: //:good.BUILD.bazel defines no 'nope'",
    ])


def test_glob_patterns():
    assert check.glob_match("src/a/b.rs", "src/**/*.rs")
    assert check.glob_match("src/b.rs", "src/**/*.rs")
    assert not check.glob_match("tests/b.rs", "src/**/*.rs")
    assert not check.glob_match("a/test_x.py", "test_*.py")


@pytest.mark.skipif("TEST_SRCDIR" in os.environ, reason="bazel test runs in a sandbox holding this "
                    "package's files only; make lint runs the check on the whole checkout")
def test_repository_passes():
    root = os.path.normpath(os.path.join(HERE, "..", ".."))
    assert check.main([root]) == 0


def _archive(tmp_path, files: dict) -> tuple:
    """A .tar.gz of `files` under the folder pkg-1.0/, in a cache folder."""
    import hashlib
    import tarfile

    src = tmp_path / "src" / "pkg-1.0"
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    cache = tmp_path / "cache"
    cache.mkdir()
    path = cache / "pkg-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as t:
        t.add(src, arcname="pkg-1.0")
    return str(cache), hashlib.sha256(path.read_bytes()).hexdigest()


ARCHIVE_BUILD = """load("@rules_cc//cc:cc_library.bzl", "cc_library")

cc_library(
    name = "headers",
    hdrs = glob(["include/**/*.h"]) + ["extra/one.h"],
    strip_include_prefix = "include",
)
"""


def _archive_problems(tmp_path, build_text, files, sha=None, strip_prefix="pkg-1.0"):
    cache, digest = _archive(tmp_path, files)
    (tmp_path / "pkg.BUILD.bazel").write_text(build_text)
    info = {"urls": ["https://example.invalid/pkg-1.0.tar.gz"], "sha256": sha or digest,
            "strip_prefix": strip_prefix}
    return archive_contents.archive_problems("pkg", info, "pkg.BUILD.bazel", str(tmp_path),
                                             check.evaluate_external_build, [cache], str(tmp_path / "dl"))


def test_archive_build_file_matches_its_archive(tmp_path):
    # Cached archives are used as they are: nothing is downloaded.
    assert _archive_problems(tmp_path, ARCHIVE_BUILD, {"include/a/x.h": "", "extra/one.h": ""}) == []


def test_archive_build_file_names_what_the_archive_lacks(tmp_path):
    assert sorted(_archive_problems(tmp_path, ARCHIVE_BUILD, {"inc/a/x.h": ""})) == [
        "pkg.BUILD.bazel (@pkg): glob(['include/**/*.h']) in // matches nothing",
        "pkg.BUILD.bazel (@pkg): label @//:extra/one.h: no target or file 'extra/one.h' in //",
    ]


def test_archive_checksum_and_prefix_are_checked(tmp_path):
    wrong = "0" * 64
    (found,) = _archive_problems(tmp_path, ARCHIVE_BUILD, {"include/x.h": "", "extra/one.h": ""}, sha=wrong)
    assert found.startswith("pkg.BUILD.bazel (@pkg): https://example.invalid/pkg-1.0.tar.gz has sha256 ")
    assert found.endswith(f"not the pinned {wrong}")


def test_archive_strip_prefix_must_match(tmp_path):
    assert _archive_problems(tmp_path, ARCHIVE_BUILD, {"include/x.h": ""}, strip_prefix="pkg-2.0") == [
        "pkg.BUILD.bazel (@pkg): strip_prefix 'pkg-2.0' matches no file of pkg-1.0.tar.gz"]
