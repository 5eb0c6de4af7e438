"""The repository's own module extensions and the repository rules they call,
evaluated for the consistency check (check.py) without Bazel.

MODULE.bazel may `use_extension("//some:file.bzl", "name")` a module
extension defined in this repository. The check loads that .bzl file with
stub rules, runs the extension's implementation against a stub
`module_ctx` when MODULE.bazel calls `use_repo` on it, and records every
repository the implementation makes (http_archive, http_file). It reports:

* a `use_repo` name the extension does not make (Bazel fails on it only
  when the module is resolved, on a user's machine);
* a download without a checksum, a checksum that is not a sha256, a URL
  that is not https;
* an attribute the repository rule does not have;
* through the labels it records (resolved by check.py): a `build_file` that
  does not exist.
"""

from __future__ import annotations

import re

import rule_stubs as stubs

# Starlark given to every .bzl file: module_extension() returns a struct the
# MODULE.bazel prelude recognises, with the implementation to run.
BZL_PRELUDE = """
def module_extension(implementation, doc = "", tag_classes = {}, environ = [], os_dependent = False,
                     arch_dependent = False):
    return struct(_tether_module_extension = True, implementation = implementation)
"""

# Starlark for MODULE.bazel's prelude: what the extension's implementation
# is handed (no modules use its tags: none of the extensions defines any).
MODULE_CTX_PRELUDE = """
def _extension_metadata(root_module_direct_deps = None, root_module_direct_dev_deps = None, reproducible = False):
    return struct(reproducible = reproducible)

_MODULE_CTX = struct(
    modules = [],
    os = struct(name = "linux", arch = "amd64", environ = {}),
    extension_metadata = _extension_metadata,
    is_dev_dependency = lambda tag: False,
    getenv = lambda name, default = None: default,
)

def _run_local_extension(key, names):
    ext = _LOCAL_EXT[key]
    if not hasattr(ext, "_tether_module_extension"):
        problem("use_extension of " + key + ": not a module_extension()")
        return
    _begin_extension(key)
    ext.implementation(_MODULE_CTX)
    _end_extension(key, list(names))
"""

_USE_EXTENSION = re.compile(r'use_extension\(\s*"((?:@)?//[^"]*|:[^"]*)"\s*,\s*"(\w+)"')
_SHA256 = re.compile(r"[0-9a-f]{64}")


def local_extensions(module_source: str) -> list[tuple[str, str]]:
    """(bzl label, extension name) of each use_extension of a .bzl file of
    this module, in order: the prelude loads them before MODULE.bazel runs."""
    return list(dict.fromkeys(_USE_EXTENSION.findall(module_source)))


def module_prelude_loads(extensions: list[tuple[str, str]]) -> str:
    """load() statements binding each local extension into `_LOCAL_EXT`."""
    loads = [f'load("{bzl}", _local_ext{i} = "{name}")' for i, (bzl, name) in enumerate(extensions)]
    binds = [f'_LOCAL_EXT["{bzl}%{name}"] = _local_ext{i}' for i, (bzl, name) in enumerate(extensions)]
    return "\n".join(loads) + "\n_LOCAL_EXT = {}\n" + "\n".join(binds) + "\n"


class RepoRecorder:
    """Records the repositories repository rules make, for one module."""

    def __init__(self, ev):
        self.ev = ev               # check.Evaluator: its module, label canon and problems
        self.created: set[str] | None = None
        # repository -> (rule, its attributes, its BUILD file's path in this module or "")
        self.archives: dict[str, tuple[str, dict, str]] = {}

    def rule(self, key: str):
        """A stub of the repository rule `key` ("<bzl>%<rule>")."""
        allowed = stubs.REPO_RULES[key]
        rule_name = key.split("%")[1]

        def call(**kw):
            ev = self.ev
            name = kw.get("name", "?")
            for a in kw:
                if a not in allowed:
                    ev.problem(f"{rule_name} has no attribute '{a}'")
            sha = kw.get("sha256", "")
            if not sha and not kw.get("integrity"):
                ev.problem(f"{rule_name} '{name}' downloads without a checksum (sha256 or integrity)")
            elif sha and not _SHA256.fullmatch(sha):
                ev.problem(f"{rule_name} '{name}': sha256 {sha!r} is not 64 lowercase hex digits")
            urls = list(kw.get("urls", [])) + ([kw["url"]] if kw.get("url") else [])
            if not urls:
                ev.problem(f"{rule_name} '{name}' has no url")
            for url in urls:
                if not url.startswith("https://"):
                    ev.problem(f"{rule_name} '{name}': {url} is not an https URL")
            build_file = ""
            if "build_file" in kw:
                canon = ev.canon(str(kw["build_file"]), "")
                if (canon, ev.where, True) not in ev.mod.label_refs:  # Label() already recorded it
                    ev.mod.label_refs.append((canon, ev.where, True))
                build_file = canon[1:] if canon.startswith("@//") else canon
            ev.mod.repos[name] = "build_file:" + build_file
            build_path = ""
            if build_file.startswith("//"):
                pkg, _, file_name = build_file[2:].partition(":")
                build_path = f"{pkg}/{file_name}" if pkg else file_name
            self.archives[name] = (rule_name, dict(kw), build_path)
            if self.created is not None:
                self.created.add(name)
        return call

    def begin_extension(self, key: str):
        self.created = set()

    def end_extension(self, key: str, names: list):
        for n in names:
            if n not in self.created:
                self.ev.problem(f"use_repo names @{n}, which {key} does not make "
                                f"(it makes {', '.join(sorted(self.created)) or 'nothing'})")
        self.created = None
