"""Tests of the Starlark consistency check: a fixture module with an orphan
file, a test file without a test target, an unknown attribute and labels
that do not resolve must be reported, and nothing else; the repository
itself must pass."""

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

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


def test_repository_passes():
    root = os.path.normpath(os.path.join(HERE, "..", ".."))
    assert check.main([root]) == 0
