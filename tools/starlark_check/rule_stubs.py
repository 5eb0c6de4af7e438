"""Attribute lists of the Bazel rules, macros and module-extension tags the
repository's Starlark uses, read from the rule sets' own sources at the
versions MODULE.bazel pins. The consistency check (check.py) rejects any
attribute not listed here, so a typo or an attribute the pinned version does
not have fails `make lint` instead of a user's `bazel build`.

Each list names the file it was read from. To move a pin, re-read those files
at the new tag and update the list and the source line.
"""

# Attributes Bazel gives every rule (Build Encyclopedia, "common attributes").
COMMON = {
    "name", "visibility", "tags", "testonly", "features", "deprecation",
    "target_compatible_with", "exec_compatible_with", "exec_properties",
    "compatible_with", "restricted_to", "applicable_licenses", "package_metadata",
    "toolchains", "aspect_hints", "transitive_configs", "licenses", "distribs",
}
# Common to every test rule / every executable rule.
TEST = {"args", "env", "env_inherit", "size", "timeout", "flaky", "shard_count", "local"}
EXECUTABLE = {"args", "env", "output_licenses"}

# rules_rust 0.69.0, rust/private/rust.bzl: _common_attrs,
# _experimental_use_cc_common_link_attrs, _rust_test_attrs, _rust_binary_attrs
# and the per-rule additions (public attributes only).
_RUST_COMMON = {
    "aliases", "alwayslink", "compile_data", "crate_features", "crate_name", "crate_root",
    "data", "deps", "edition", "lint_config", "proc_macro_deps",
    "require_explicit_unstable_features", "rustc_env", "rustc_env_files", "rustc_flags",
    "srcs", "stamp", "version",
}
_RUST_CC_LINK = {"experimental_use_cc_common_link", "malloc"}
RUST_LIBRARY = _RUST_COMMON | {"disable_pipelining"}
RUST_SHARED_LIBRARY = _RUST_COMMON | _RUST_CC_LINK | {"platform"}
RUST_BINARY = _RUST_COMMON | {"binary_name", "crate_type", "env", "linker_script", "out_binary", "platform"}
RUST_TEST = _RUST_COMMON | {"crate", "env", "env_inherit", "use_libtest_harness", "platform"}
# rust_test_suite(name, srcs, shared_srcs = [], **kwargs): a macro making one
# rust_test per file of srcs, each taking kwargs.
RUST_TEST_SUITE = RUST_TEST | {"shared_srcs"}

# rules_rust_pyo3 0.69.0 (rules_rust extensions/pyo3): private/pyo3.bzl
# pyo3_extension's parameters (other kwargs go to rust_shared_library) and
# private/pyo3_toolchain.bzl's rules.
PYO3_EXTENSION = RUST_SHARED_LIBRARY | {
    "imports", "stubs", "compilation_mode", "module_name",
}
RUST_PYO3_TOOLCHAIN = {"pyo3", "pyo3_introspection"}
PYO3_TOOLCHAIN = set()

# rules_cc 0.2.14, cc/private/rules_impl/attrs.bzl (common_attrs,
# cc_binary_attrs), cc_library.bzl and cc_test.bzl.
_CC_COMMON = {
    "srcs", "module_interfaces", "data", "includes", "defines", "local_defines", "copts",
    "conlyopts", "cxxopts", "hdrs_check", "additional_linker_inputs", "win_def_file",
}
CC_LIBRARY = _CC_COMMON | {
    "hdrs", "textual_hdrs", "deps", "implementation_deps", "strip_include_prefix",
    "include_prefix", "additional_compiler_inputs", "alwayslink", "linkstatic", "linkstamp",
    "linkopts",
}
CC_BINARY = _CC_COMMON | {
    "deps", "reexport_deps", "linkopts", "nocopts", "linkstatic", "malloc", "link_extra_lib",
    "stamp", "linkshared", "env",
}
CC_TEST = CC_BINARY | {"env_inherit"}

# rules_python, python/private/attributes.bzl, py_library.bzl and
# py_executable.bzl at commit 6854dc38 (2025-04-05; the snapshot available
# here, before 1.6.3, whose attributes are a superset for these rules).
_PY_COMMON = {
    "data", "deps", "imports", "srcs", "srcs_version", "precompile",
    "precompile_invalidation_mode", "precompile_optimize_level", "precompile_source_retention",
    "pyi_deps", "pyi_srcs",
}
PY_LIBRARY = _PY_COMMON | {"experimental_venvs_site_packages"}
PY_BINARY = _PY_COMMON | {
    "env", "stamp", "interpreter_args", "legacy_create_init", "main", "main_module",
    "pyc_collection", "python_version",
}
PY_TEST = PY_BINARY | {"env_inherit"}

# rules_shell, shell/private/sh_executable.bzl (make_sh_executable_rule).
SH_TEST = {"srcs", "data", "deps", "env", "env_inherit", "use_bash_launcher"}

# bazel_skylib 1.8.2: rules/copy_file.bzl and lib/selects.bzl.
COPY_FILE = {"src", "out", "is_executable", "allow_symlink"}
CONFIG_SETTING_GROUP = {"match_any", "match_all"}

# Native rules (Build Encyclopedia for Bazel 8).
FILEGROUP = {"srcs", "data", "output_group"}
# Bazel 8.4.2 (the pinned .bazelversion), the native genrule (Build
# Encyclopedia, "genrule"; src/main/starlark/builtins_bzl/common/...
# genrule attributes of the native rule class). Its `outs` become targets.
GENRULE = {
    "srcs", "outs", "cmd", "cmd_bash", "cmd_bat", "cmd_ps", "executable", "local", "message",
    "output_licenses", "output_to_bindir", "tools",
}
TEST_SUITE = {"tests"}
PLATFORM = {"constraint_values", "parents", "exec_properties", "flags", "missing_toolchain_error", "required_settings"}
TOOLCHAIN = {"toolchain", "toolchain_type", "target_compatible_with", "exec_compatible_with", "target_settings", "use_target_platform_constraints"}
CONFIG_SETTING = {"constraint_values", "define_values", "flag_values", "values"}
ALIAS = {"actual"}

# Which attributes hold labels (their values are resolved by the check).
LABEL_ATTRS = {
    "srcs", "hdrs", "textual_hdrs", "deps", "implementation_deps", "data", "compile_data",
    "proc_macro_deps", "crate", "crate_root", "main", "src", "tests", "actual", "toolchain",
    "toolchain_type", "constraint_values", "target_compatible_with", "exec_compatible_with",
    "match_any", "match_all", "pyo3", "pyo3_introspection", "additional_linker_inputs",
    "rustc_env_files", "linker_script", "win_def_file", "parents", "shared_srcs", "tools",
}
# Attributes whose files count as owned by the target (the orphan check).
SOURCE_ATTRS = {"srcs", "hdrs", "textual_hdrs", "data", "compile_data", "crate_root", "main", "src", "shared_srcs"}

# Rule kinds: attributes, and whether the rule is a test.
KINDS = {
    "rust_library": (RUST_LIBRARY, False),
    "rust_shared_library": (RUST_SHARED_LIBRARY, False),
    "rust_binary": (RUST_BINARY, False),
    "rust_test": (RUST_TEST, True),
    "rust_pyo3_toolchain": (RUST_PYO3_TOOLCHAIN, False),
    "pyo3_toolchain": (PYO3_TOOLCHAIN, False),
    "py_pyo3_library": (PYO3_EXTENSION, False),
    "cc_library": (CC_LIBRARY, False),
    "cc_binary": (CC_BINARY, False),
    "cc_test": (CC_TEST, True),
    "py_library": (PY_LIBRARY, False),
    "py_binary": (PY_BINARY, False),
    "py_test": (PY_TEST, True),
    "sh_test": (SH_TEST, True),
    "copy_file": (COPY_FILE, False),
    "config_setting_group": (CONFIG_SETTING_GROUP, False),
    "filegroup": (FILEGROUP, False),
    "genrule": (GENRULE, False),
    "test_suite": (TEST_SUITE, False),
    "platform": (PLATFORM, False),
    "toolchain": (TOOLCHAIN, False),
    "config_setting": (CONFIG_SETTING, False),
    "alias": (ALIAS, False),
}

# What each load() label offers: symbol -> rule kind, or a macro handled by
# check.py ("macro:<name>").
LOADS = {
    "@rules_rust//rust:defs.bzl": {
        "rust_library": "rust_library", "rust_shared_library": "rust_shared_library",
        "rust_binary": "rust_binary", "rust_test": "rust_test",
        "rust_test_suite": "macro:rust_test_suite",
    },
    "@rules_rust_pyo3//:defs.bzl": {
        "pyo3_extension": "macro:pyo3_extension",
        "pyo3_toolchain": "pyo3_toolchain", "rust_pyo3_toolchain": "rust_pyo3_toolchain",
    },
    "@rules_cc//cc:cc_library.bzl": {"cc_library": "cc_library"},
    "@rules_cc//cc:cc_binary.bzl": {"cc_binary": "cc_binary"},
    "@rules_cc//cc:cc_test.bzl": {"cc_test": "cc_test"},
    "@rules_python//python:py_library.bzl": {"py_library": "py_library"},
    "@rules_python//python:py_binary.bzl": {"py_binary": "py_binary"},
    "@rules_python//python:py_test.bzl": {"py_test": "py_test"},
    "@rules_shell//shell:sh_test.bzl": {"sh_test": "sh_test"},
    "@bazel_skylib//rules:copy_file.bzl": {"copy_file": "copy_file"},
    "@bazel_skylib//lib:selects.bzl": {"selects": "struct:selects"},
    # Repository rules, for the repository's own module extensions
    # (module_extensions.py runs them).
    "@bazel_tools//tools/build_defs/repo:http.bzl": {
        "http_archive": "repo:@bazel_tools//tools/build_defs/repo:http.bzl%http_archive",
        "http_file": "repo:@bazel_tools//tools/build_defs/repo:http.bzl%http_file",
    },
}

# Module-extension tags (MODULE.bazel): "<bzl file>%<extension>" -> tag -> attributes.
EXTENSIONS = {
    # rules_rust 0.69.0, rust/extensions.bzl (_RUST_TOOLCHAIN_TAG | _COMMON_TAG_KWARGS).
    "@rules_rust//rust:extensions.bzl%rust": {
        "toolchain": {
            "aliases", "extra_exec_rustc_flags", "extra_rustc_flags", "extra_rustc_flags_triples",
            "extra_target_triples", "rust_analyzer_version", "target_settings", "versions",
            "allocator_library", "dev_components", "edition", "rustfmt_version", "sha256s", "urls",
        },
    },
    # rules_rust 0.69.0, crate_universe/extensions.bzl (_from_cargo, _from_specs, _spec, _annotation).
    "@rules_rust//crate_universe:extensions.bzl%crate": {
        "from_cargo": {
            "name", "manifests", "cargo_config", "cargo_lockfile", "generate_binaries",
            "generate_build_scripts", "host_tools", "isolated", "lockfile",
            "skip_cargo_lockfile_overwrite", "strip_internal_dependencies_from_cargo_lockfile",
            "supported_platform_triples",
        },
        "from_specs": {
            "name", "cargo_config", "cargo_lockfile", "generate_binaries", "generate_build_scripts",
            "host_tools", "isolated", "lockfile", "skip_cargo_lockfile_overwrite",
            "strip_internal_dependencies_from_cargo_lockfile", "supported_platform_triples",
        },
        "spec": {
            "package", "repositories", "artifact", "branch", "default_features", "features", "git",
            "lib", "path", "rev", "tag", "version",
        },
        "annotation": {
            "crate", "repositories", "version", "additive_build_file", "additive_build_file_content",
            "alias_rule", "build_script_data_glob", "build_script_toolchains", "compile_data_glob",
            "compile_data_glob_excludes", "data_glob", "disable_pipelining", "extra_aliased_targets",
            "gen_all_binaries", "gen_binaries", "gen_build_script", "override_target_bin",
            "override_target_build_script", "override_target_lib", "override_target_proc_macro",
            "patch_args", "patch_tool", "patches", "shallow_since", "build_script_compile_data",
            "build_script_data", "build_script_deps", "build_script_env", "build_script_exec_properties",
            "build_script_link_deps", "build_script_proc_macro_deps", "build_script_rundir",
            "build_script_rustc_env", "build_script_tools", "compile_data", "crate_features", "data",
            "deps", "proc_macro_deps", "rustc_env", "rustc_env_files", "rustc_flags",
        },
    },
    # rules_python (commit above), python/private/python.bzl _toolchain.
    "@rules_python//python/extensions:python.bzl%python": {
        "toolchain": {"configure_coverage_tool", "ignore_root_user_error", "is_default", "python_version"},
    },
    # rules_python (commit above), python/private/pypi/extension.bzl and attrs.bzl (pip.parse).
    "@rules_python//python/extensions:pip.bzl%pip": {
        "parse": {
            "hub_name", "python_version", "requirements_lock", "requirements_by_platform",
            "requirements_linux", "requirements_darwin", "requirements_windows",
            "experimental_index_url", "experimental_extra_index_urls", "extra_pip_args",
            "download_only", "enable_implicit_namespace_pkgs", "environment", "envsubst",
            "isolated", "pip_data_exclude", "python_interpreter", "python_interpreter_target",
            "quiet", "timeout", "extra_hub_aliases",
        },
    },
}

# Repository rules available through use_repo_rule: attributes.
# (@bazel_tools//tools/build_defs/repo:http.bzl, Bazel 8.)
REPO_RULES = {
    "@bazel_tools//tools/build_defs/repo:http.bzl%http_archive": {
        "name", "build_file", "build_file_content", "sha256", "integrity", "strip_prefix",
        "type", "url", "urls", "patches", "patch_args", "patch_cmds", "add_prefix",
        "workspace_file", "workspace_file_content", "remote_file_urls", "remote_file_integrity",
        "canonical_id", "auth_patterns", "netrc", "remote_patches", "remote_patch_strip", "patch_tool",
    },
    "@bazel_tools//tools/build_defs/repo:http.bzl%http_file": {
        "name", "sha256", "integrity", "url", "urls", "executable", "downloaded_file_path",
        "canonical_id", "auth_patterns", "netrc",
    },
}
