"""Consistency check of the Bazel module without Bazel.

Evaluates MODULE.bazel and every BUILD.bazel (and the .bzl files they load)
with starlark-rust (the starlark-pyo3 package), the rules replaced by stubs
that record their calls, then verifies:

* every attribute a rule, macro or extension tag is given exists in the real
  rule at the pinned version (rule_stubs.py lists them, with their sources);
* every label resolves: a target or a file of this repository's packages, a
  crate of the Cargo lock file behind a crate_universe hub, a package of the
  pip lock file, or a repository the module declares;
* every source file (Rust, C, C++, headers, Python, shell, Starlark) belongs
  to a target (or is exported), and every test file is the source of a test;
* the module's own extensions run (module_extensions.py), and each archive
  they download has its pinned sha256 and holds what the BUILD file given to
  it names (archive_contents.py; the root module only).

Usage: check.py [ROOT] — ROOT defaults to the repository. A directory with
its own MODULE.bazel below ROOT is a separate module and is checked on its
own, with its `local_path_override` dependencies mapped to their paths.
Prints one line per problem and exits 1 if there is any.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

import starlark as sl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import archive_contents  # noqa: E402
import module_extensions as mext  # noqa: E402
import rule_stubs as stubs  # noqa: E402
import surface  # noqa: E402

SOURCE_EXTS = {".rs", ".c", ".h", ".cc", ".cpp", ".hpp", ".py", ".sh", ".bzl"}
TEST_FILE_PATTERNS = ["test_*.py", "*_test.c", "*_test.cc", "*_test.cpp", "*/tests/*.rs"]
BUILD_NAMES = ("BUILD.bazel", "BUILD")
# Always-present repositories (Bazel's own, and the conditions pseudo-package).
BUILTIN_REPOS = {"bazel_tools", "platforms"}
SKIP_DIRS = {".git", "target", ".venv", "node_modules", "__pycache__", ".pytest_cache"}


@dataclass
class Target:
    kind: str
    attrs: dict
    package: str
    where: str


@dataclass
class Module:
    root: str                      # directory of MODULE.bazel
    name: str = ""
    repos: dict = field(default_factory=dict)    # apparent name -> kind ("dep", "local:<path>", "crates:<lock>", "pip:<lock>", "build_file:<label>")
    targets: dict = field(default_factory=dict)  # (package, name) -> Target
    packages: set = field(default_factory=set)
    loaded_files: set = field(default_factory=set)
    exported: set = field(default_factory=set)   # repo-relative paths
    label_refs: list = field(default_factory=list)  # (label, package, where)
    problems: list = field(default_factory=list)
    tags: list = field(default_factory=list)     # (extension key, tag, attributes) of MODULE.bazel
    injected: dict = field(default_factory=dict)  # extension key -> repos given to it by inject_repo
    platform: str | None = None                  # the OS selects were resolved for (None: all branches)
    bazel_compatibility: list = field(default_factory=list)  # module(bazel_compatibility = ...)
    repo_alias: dict = field(default_factory=dict)  # apparent name -> extension repository (use_repo(ext, a = "r"))


def list_files(root: str, exclude_roots: list[str]) -> list[str]:
    """Repo-relative paths of the files under root (git's view when it is a
    checkout: tracked and untracked but not ignored), less nested modules."""
    files = None
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                             cwd=root, capture_output=True, check=True)
        files = [f for f in out.stdout.decode().split("\0") if f and os.path.exists(os.path.join(root, f))]
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True).stdout.strip()
        if os.path.realpath(top) != os.path.realpath(root):
            files = None  # a fixture inside another checkout: walk it instead
    except (OSError, subprocess.CalledProcessError):
        files = None
    if files is None:
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("bazel-")]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return sorted(f for f in files if not any(f == e or f.startswith(e + "/") for e in exclude_roots))


def nested_module_roots(files: list[str]) -> list[str]:
    return sorted(os.path.dirname(f) for f in files if os.path.basename(f) == "MODULE.bazel" and os.path.dirname(f))


class Evaluator:
    def __init__(self, mod: Module, files: list[str]):
        self.mod = mod
        self.files = files
        self.file_set = set(files)
        self.packages = {os.path.dirname(f) for f in files if os.path.basename(f) in BUILD_NAMES}
        mod.packages = self.packages
        self.package = ""
        self.where = ""
        self.dialect = sl.Dialect.extended()
        self.globals = sl.Globals.extended_by([sl.LibraryExtension.StructType, sl.LibraryExtension.Print])
        self.bzl_cache: dict[str, sl.FrozenModule] = {}
        self.repo_recorder = mext.RepoRecorder(self)

    # ---- problems and labels ------------------------------------------------
    def problem(self, msg: str):
        self.mod.problems.append(f"{self.where}: {msg}")

    def canon(self, label: str, package: str | None = None) -> str:
        """Label relative to `package` -> '@repo//pkg:name' ('' repo = this module)."""
        package = self.package if package is None else package
        if label.startswith("@@"):
            label = label[1:]
            # A Bazel 8 canonical name of a module's repository: `<module>+`.
            repo, sep, rest = label[1:].partition("//")
            if sep and repo.endswith("+") and "+" not in repo[:-1]:
                label = f"@{repo[:-1]}//{rest}"
        if label.startswith("@"):
            repo, _, rest = label[1:].partition("//")
            if not _:
                return f"@{repo}//:{repo}" if repo else "//:"
            if repo == self.mod.name:
                repo = ""
            pkg, _, name = rest.partition(":")
            return f"@{repo}//{pkg}:{name or os.path.basename(pkg)}"
        if label.startswith("//"):
            pkg, _, name = label[2:].partition(":")
            return f"@//{pkg}:{name or os.path.basename(pkg)}"
        return f"@//{package}:{label.lstrip(':')}"

    # ---- the stubs given to Starlark ---------------------------------------
    def record(self, kind: str, kw: dict, known=None):
        name = kw.get("name")
        if not isinstance(name, str):
            self.problem(f"{kind} without a name")
            return
        attrs, _ = stubs.KINDS[kind] if known is None else (known, False)
        extra = stubs.TEST if stubs.KINDS.get(kind, (None, False))[1] else set()
        if kind in ("rust_binary", "py_binary", "cc_binary"):
            extra = stubs.EXECUTABLE
        for a in kw:
            if a not in attrs and a not in stubs.COMMON and a not in extra:
                self.problem(f"{kind} '{name}' has no attribute '{a}'")
        key = (self.package, name)
        if key in self.mod.targets:
            self.problem(f"target '{name}' defined twice in //{self.package}")
        self.mod.targets[key] = Target(kind, kw, self.package, self.where)
        if kind == "genrule":
            # Each output is a file target of the package.
            for out in flatten(kw.get("outs", [])):
                if (self.package, out) in self.mod.targets:
                    self.problem(f"genrule '{name}' output '{out}' is already a target of //{self.package}")
                self.mod.targets[(self.package, out)] = Target("generated_file", {"name": out}, self.package, self.where)
        for a, v in kw.items():
            if a in stubs.LABEL_ATTRS:
                for label in flatten(v):
                    if isinstance(label, str):
                        self.mod.label_refs.append((self.canon(label), self.where, a in stubs.SOURCE_ATTRS))

    def rule_fn(self, kind: str):
        return lambda **kw: self.record(kind, kw)

    def macro_rust_test_suite(self, name, srcs, shared_srcs=[], **kw):
        for a in kw:
            if a not in stubs.RUST_TEST_SUITE and a not in stubs.COMMON and a not in stubs.TEST:
                self.problem(f"rust_test_suite '{name}' has no attribute '{a}'")
        tests = []
        for src in srcs:
            test_name = src[:-3].replace("/", "_")
            self.record("rust_test", dict(kw, name=test_name, srcs=[src] + list(shared_srcs), crate_root=src))
            tests.append(test_name)
        self.record("test_suite", {"name": name, "tests": tests})

    def macro_pyo3_extension(self, name, srcs, **kw):
        for a in kw:
            if a not in stubs.PYO3_EXTENSION and a not in stubs.COMMON:
                self.problem(f"pyo3_extension '{name}' has no attribute '{a}'")
        py_only = {"imports", "stubs", "compilation_mode", "module_name"}
        rust_kw = {k: v for k, v in kw.items() if k not in py_only}
        # rules_rust_pyo3 0.69.0 private/pyo3.bzl: the macro links the pyo3
        # crate of the registered rust_pyo3_toolchain ahead of `deps`.
        rust_kw["deps"] = [PYO3_TOOLCHAIN_CRATE] + list(rust_kw.get("deps", []))
        self.record("rust_shared_library", dict(rust_kw, name=name + "_shared", srcs=srcs))
        self.record("py_pyo3_library", {"name": name, **{k: v for k, v in kw.items() if k in py_only | {"visibility", "tags"}}})

    def glob(self, include, exclude=[], allow_empty=False, exclude_directories=1):
        pkg = self.package
        prefix = pkg + "/" if pkg else ""
        out = []
        for f in self.files:
            if not f.startswith(prefix):
                continue
            rel = f[len(prefix):]
            # A file in a subpackage is not this package's.
            parts = rel.split("/")
            if any("/".join([pkg] + parts[:i]).strip("/") in self.packages for i in range(1, len(parts))):
                continue
            if any(glob_match(rel, p) for p in include) and not any(glob_match(rel, p) for p in exclude):
                out.append(rel)
        if not out and not allow_empty:
            self.problem(f"glob({list(include)}) in //{pkg} matches nothing")
        return sorted(out)

    def select(self, branches, no_match_error=""):
        if self.mod.platform is not None:
            # Configured for one OS: the branch Bazel would take there.
            for cond in branches:
                if cond != "//conditions:default":
                    self.mod.label_refs.append((self.canon(cond), self.where, False))
            for cond, value in branches.items():
                if cond != "//conditions:default" and condition_matches(self.canon(cond), self.mod.platform):
                    return value
            if "//conditions:default" in branches:
                return branches["//conditions:default"]
            self.problem(f"select() has no branch for {self.mod.platform} and no default")
            return []
        merged = None
        for cond, value in branches.items():
            if cond != "//conditions:default":
                self.mod.label_refs.append((self.canon(cond), self.where, False))
            if isinstance(value, list):
                merged = (merged or []) + value
            elif isinstance(value, dict):
                merged = {**(merged or {}), **value}
            else:
                merged = value if merged is None else merged
        return merged if merged is not None else []

    def exports_files(self, srcs, visibility=None, licenses=None):
        for s in srcs:
            path = os.path.join(self.package, s) if self.package else s
            if path not in self.file_set:
                self.problem(f"exports_files names '{s}', which is not a file of //{self.package}")
            self.mod.exported.add(path)

    def package_fn(self, **kw):
        for k, v in kw.items():
            if k == "default_visibility":
                continue
            if k not in {"default_applicable_licenses", "default_testonly", "default_deprecation", "features", "default_package_metadata"}:
                self.problem(f"package() has no parameter '{k}'")

    def label_fn(self, package: str):
        def label(s):
            c = self.canon(s, package)
            self.mod.label_refs.append((c, self.where, True))
            repo, _, rest = c[1:].partition("//")
            return f"@{repo or self.mod.name}//{rest}"
        return label

    def base_module(self, package_for_labels: str) -> sl.Module:
        m = sl.Module()
        for kind in ("filegroup", "genrule", "test_suite", "platform", "toolchain", "config_setting", "alias"):
            m.add_callable(kind, self.rule_fn(kind))
        m.add_callable("glob", self.glob)
        m.add_callable("select", self.select)
        m.add_callable("exports_files", self.exports_files)
        m.add_callable("package", self.package_fn)
        m.add_callable("Label", self.label_fn(package_for_labels))
        m.add_callable("toolchain_type", lambda **kw: self.record("filegroup", {"name": kw["name"]}, set(kw)))
        m.add_callable("_package_name", lambda: self.package)
        m.add_callable("_record_local_rule", lambda kind, names, kw: self.record(kind, dict(kw), set(names)))
        prelude = ("native = struct(glob = glob, select = select, exports_files = exports_files, filegroup = filegroup,"
                   " test_suite = test_suite, package_name = _package_name, alias = alias, config_setting = config_setting)\n")
        sl.eval(m, sl.parse("<prelude>", prelude + mext.BZL_PRELUDE + LOCAL_RULE_PRELUDE, self.dialect), self.globals)
        return m

    # ---- loads ------------------------------------------------------------------
    def load(self, label: str) -> sl.FrozenModule:
        c = self.canon(label)
        if c.startswith("@//"):
            pkg, _, name = c[3:].partition(":")
            path = os.path.join(pkg, name) if pkg else name
            if path not in self.file_set:
                raise ValueError(f"load of {label}: no file {path}")
            self.mod.loaded_files.add(path)
            if path not in self.bzl_cache:
                m = self.base_module(pkg)
                self.add_loaded_stubs(m)
                saved = self.where
                self.where = path
                src = open(os.path.join(self.mod.root, path)).read()
                sl.eval(m, sl.parse(path, src, self.dialect), self.globals, sl.FileLoader(self.load))
                self.where = saved
                self.bzl_cache[path] = m.freeze()
            return self.bzl_cache[path]
        key = "@" + c[1:].split("//")[0] + "//" + c.split("//", 1)[1]
        offered = stubs.LOADS.get(key)
        if offered is None:
            raise ValueError(f"load of {label}: no stub for {key} (add it to rule_stubs.LOADS)")
        m = sl.Module()
        for sym, kind in offered.items():
            if kind == "macro:rust_test_suite":
                m.add_callable(sym, self.macro_rust_test_suite)
            elif kind == "macro:pyo3_extension":
                m.add_callable(sym, self.macro_pyo3_extension)
            elif kind.startswith("repo:"):
                m.add_callable(sym, self.repo_recorder.rule(kind[len("repo:"):]))
            elif kind == "struct:selects":
                m.add_callable("_config_setting_group", self.rule_fn("config_setting_group"))
                sl.eval(m, sl.parse(key, "selects = struct(config_setting_group = _config_setting_group)\n", self.dialect), self.globals)
            else:
                m.add_callable(sym, self.rule_fn(kind))
        return m.freeze()

    def add_loaded_stubs(self, m):
        pass

    # ---- files --------------------------------------------------------------
    def eval_build(self, path: str, package: str):
        self.package, self.where = package, path
        m = self.base_module(package)
        src = open(os.path.join(self.mod.root, path)).read()
        try:
            sl.eval(m, sl.parse(path, src, self.dialect), self.globals, sl.FileLoader(self.load))
        except sl.StarlarkError as e:
            self.problem(f"evaluation failed: {first_error_line(str(e))}")

    def eval_module(self):
        path = "MODULE.bazel"
        self.where = path
        m = sl.Module()
        tag_calls = []

        def module(name="", version="", compatibility_level=0, repo_name="", bazel_compatibility=[]):
            self.mod.name = name
            self.mod.bazel_compatibility = list(bazel_compatibility)

        def bazel_dep(name, version="", repo_name=None, dev_dependency=False, max_compatibility_level=-1):
            self.mod.repos[repo_name or name] = "dep"

        def local_path_override(module_name, path):
            self.mod.repos[module_name] = "local:" + path

        def git_override(module_name, remote, commit="", **kw):
            self.mod.repos.setdefault(module_name, "dep")

        def _use_repo(names, renamed={}):
            for n in names:
                self.mod.repos.setdefault(n, "dep")
            for apparent, real in renamed.items():
                self.mod.repo_alias[apparent] = real
                self.mod.repos.setdefault(apparent, "dep")

        def _inject_repo(key, names):
            self.mod.injected.setdefault(key, set()).update(names)

        def register_toolchains(*labels, dev_dependency=False):
            for label in labels:
                if not label.endswith(":all"):
                    self.mod.label_refs.append((self.canon(label, ""), path, False))

        def make_tag(ext_key: str, tag: str):
            allowed = stubs.EXTENSIONS[ext_key][tag]

            def call(**kw):
                for a in kw:
                    if a not in allowed:
                        self.problem(f"{ext_key.split('%')[1]}.{tag} has no attribute '{a}'")
                tag_calls.append((ext_key, tag, kw))
            return call

        lines = []
        for i, (ext_key, tags) in enumerate(stubs.EXTENSIONS.items()):
            fields = []
            for tag in tags:
                fn = f"_ext{i}_{tag}"
                m.add_callable(fn, make_tag(ext_key, tag))
                fields.append(f"{tag} = {fn}")
            fields.append(f"_key = {ext_key!r}")
            lines.append(f"_EXT[{ext_key!r}] = struct({', '.join(fields)})")

        for i, key in enumerate(stubs.REPO_RULES):
            m.add_callable(f"_repo_rule{i}", self.repo_recorder.rule(key))
            lines.append(f"_REPO_RULES[{key!r}] = _repo_rule{i}")
        for fn in (module, bazel_dep, local_path_override, git_override, _use_repo, _inject_repo, register_toolchains, self.problem):
            m.add_callable(fn.__name__, fn)
        m.add_callable("_begin_extension", self.repo_recorder.begin_extension)
        m.add_callable("_end_extension", self.repo_recorder.end_extension)
        module_src = open(os.path.join(self.mod.root, path)).read()
        # This module's own extensions are loaded (and their files owned) first.
        prelude = mext.module_prelude_loads(mext.local_extensions(module_src)) + mext.MODULE_CTX_PRELUDE
        prelude += "_EXT = {}\n_REPO_RULES = {}\n" + "\n".join(lines) + """
def use_extension(bzl, name, dev_dependency = False, isolate = False):
    key = bzl + "%" + name
    if key in _LOCAL_EXT:
        return struct(_local_key = key)
    if key not in _EXT:
        problem("use_extension of " + key + ": no stub (add it to rule_stubs.EXTENSIONS)")
        return struct()
    return _EXT[key]

def use_repo(extension_proxy, *names, **renamed):
    if hasattr(extension_proxy, "_local_key"):
        _run_local_extension(extension_proxy._local_key, list(names) + list(renamed.values()))
    _use_repo(list(names), renamed)

def inject_repo(extension_proxy, *args, **kwargs):
    if hasattr(extension_proxy, "_key"):
        _inject_repo(extension_proxy._key, list(args) + list(kwargs.keys()))

def use_repo_rule(bzl, name, dev_dependency = False):
    key = bzl + "%" + name
    if key not in _REPO_RULES:
        problem("use_repo_rule of " + key + ": no stub (add it to rule_stubs.REPO_RULES)")
        return None
    return _REPO_RULES[key]
"""
        try:
            sl.eval(m, sl.parse("<module prelude>", prelude, self.dialect), self.globals, sl.FileLoader(self.load))
            sl.eval(m, sl.parse(path, module_src, self.dialect), self.globals)
        except sl.StarlarkError as e:
            self.problem(f"evaluation failed: {first_error_line(str(e))}")
        self.mod.tags = tag_calls
        # Hubs: which lock file each crate_universe / pip hub is made from.
        for ext_key, tag, kw in tag_calls:
            if tag in ("from_cargo", "from_specs"):
                self.mod.repos[kw.get("name", "crates")] = "crates:" + kw.get("cargo_lockfile", "")
                for label in [kw.get("cargo_lockfile", "")] + list(kw.get("manifests", [])):
                    self.mod.label_refs.append((self.canon(label, ""), path, True))
            elif tag == "parse":
                self.mod.repos[kw["hub_name"]] = "pip:" + kw.get("requirements_lock", "")
                self.mod.label_refs.append((self.canon(kw["requirements_lock"], ""), path, True))
            elif tag == "annotation":
                apparent = {r: a for a, r in self.mod.repo_alias.items()}
                for repo in kw.get("repositories", []):
                    self.mod.label_refs.append((f"@{apparent.get(repo, repo)}//:{kw['crate']}", path, False))
                for label in list(kw.get("build_script_data", [])) + list(kw.get("build_script_toolchains", [])):
                    self.mod.label_refs.append((self.canon(label, ""), path, False))
        # A hub used under another name: labels through that name are the hub's.
        for apparent, real in self.mod.repo_alias.items():
            if real in self.mod.repos:
                self.mod.repos[apparent] = self.mod.repos[real]


# Local rules (`rule()` in a .bzl of the repository): each call is recorded
# as a target of kind "rule:<implementation>" with the rule's attributes.
LOCAL_RULE_PRELUDE = """
def _attr(**kwargs):
    return struct(**kwargs)

attr = struct(label = _attr, label_list = _attr, output = _attr, output_list = _attr, string = _attr,
              string_list = _attr, string_dict = _attr, bool = _attr, int = _attr)

def DefaultInfo(**kwargs):
    return struct(**kwargs)

def depset(direct = [], **kwargs):
    return direct

def rule(implementation, attrs = {}, doc = "", **kwargs):
    kind = "rule:" + str(implementation)
    names = list(attrs.keys())

    def _instance(**kw):
        _record_local_rule(kind, names, kw)

    return _instance
"""

# The pyo3 crate as pyo3_extension links it (from the rust_pyo3_toolchain).
PYO3_TOOLCHAIN_CRATE = "@rules_rust_pyo3//private:current_rust_pyo3_toolchain"

# Which OS each platform condition label holds on (//platforms:elf is the
# group of ELF systems; the others are @platforms constraint values).
CONDITION_OS = {
    "@platforms//os:linux": {"linux"},
    "@platforms//os:macos": {"macos"},
    "@platforms//os:windows": {"windows"},
    "@//platforms:elf": {"linux"},
}
PLATFORM_OSES = ("linux", "macos", "windows")


def condition_matches(label: str, os_name: str) -> bool:
    return os_name in CONDITION_OS.get(label, set())


def flatten(v):
    if isinstance(v, (list, tuple)):
        for x in v:
            yield from flatten(x)
    elif isinstance(v, dict):
        for k in v:
            yield k
    else:
        yield v


def glob_match(path: str, pattern: str) -> bool:
    rx = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            rx += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            rx += ".*"
            i += 2
        elif pattern[i] == "*":
            rx += "[^/]*"
            i += 1
        else:
            rx += re.escape(pattern[i])
            i += 1
    return re.fullmatch(rx, path) is not None


def first_error_line(msg: str) -> str:
    lines = [l for l in msg.splitlines() if l.startswith("error:") or l.startswith(" -->")]
    return " ".join(lines) or msg.strip().splitlines()[-1]


def lock_packages(root: str, lock_label: str, kind: str) -> set[str]:
    path = os.path.join(root, lock_label.lstrip("/").replace(":", "/").lstrip("/"))
    text = open(path).read()
    if kind == "crates":
        return set(re.findall(r'^name = "([^"]+)"', text, re.M))
    return {re.sub(r"[-_.]+", "_", n).lower() for n in re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", text, re.M)}


def resolve(ev: Evaluator, other_modules: dict[str, Module]):
    mod = ev.mod
    for label, where, _ in mod.label_refs:
        repo, _, rest = label[1:].partition("//")
        pkg, _, name = rest.partition(":")
        if repo == "" or repo == mod.name:
            if pkg == "conditions" and name == "default":
                continue
            if pkg not in mod.packages:
                mod.problems.append(f"{where}: label {label}: no package //{pkg}")
            elif (pkg, name) not in mod.targets and os.path.join(pkg, name).lstrip("/") not in ev.file_set:
                mod.problems.append(f"{where}: label {label}: no target or file '{name}' in //{pkg}")
            continue
        if repo in BUILTIN_REPOS:
            continue
        kind = mod.repos.get(repo)
        if kind is None:
            mod.problems.append(f"{where}: label {label}: repository @{repo} is not declared in MODULE.bazel")
        elif kind.startswith("local:") and repo in other_modules:
            other = other_modules[repo]
            if pkg not in other.packages or ((pkg, name) not in other.targets and not os.path.exists(os.path.join(other.root, pkg, name))):
                mod.problems.append(f"{where}: label {label}: no such target in module {repo}")
        elif kind.startswith("crates:") or kind.startswith("pip:"):
            known = lock_packages(mod.root, kind.split(":", 1)[1], kind.split(":")[0])
            wanted = name if kind.startswith("crates:") else re.sub(r"[-_.]+", "_", (pkg or name)).lower()
            if wanted not in known:
                mod.problems.append(f"{where}: label {label}: '{wanted}' is not in the lock file of @{repo}")
        elif kind.startswith("build_file:"):
            bf = kind.split(":", 1)[1]
            if bf:
                bpath = os.path.join(mod.root, bf.lstrip("/").replace(":", "/").lstrip("/"))
                if os.path.exists(bpath) and not re.search(r'name = "%s"' % re.escape(name), open(bpath).read()):
                    mod.problems.append(f"{where}: label {label}: {bf} defines no '{name}'")


def evaluate_external_build(root: str, files: list[str], repo_name: str) -> list[str]:
    """Problems of the BUILD.bazel at root evaluated as the top package of
    the repository `repo_name` holding `files` (a downloaded archive's)."""
    mod = Module(root=root, name=repo_name)
    ev = Evaluator(mod, files)
    ev.eval_build("BUILD.bazel", "")
    resolve(ev, {})
    return mod.problems


def check_module(root: str, mapping: dict[str, Module] | None = None, archives: bool = False,
                 platform: str | None = None) -> Module:
    files_all = list_files(root, [])
    nested = nested_module_roots(files_all)
    files = [f for f in files_all if not any(f.startswith(n + "/") for n in nested)]
    mod = Module(root=root, platform=platform)
    ev = Evaluator(mod, files)
    if "MODULE.bazel" in ev.file_set:
        ev.eval_module()
    for path in files:
        if os.path.basename(path) in BUILD_NAMES:
            ev.eval_build(path, os.path.dirname(path))
    resolve(ev, mapping or {})
    # What the module's own extensions download, against the BUILD files
    # given to it (fetched or taken from the cache; archive_contents.py).
    cache = os.path.join(root, "target", "bazel_archives")
    for name, (rule, info, build_path) in (ev.repo_recorder.archives.items() if archives else ()):
        if rule == "http_archive" and build_path in ev.file_set:
            mod.problems += archive_contents.archive_problems(
                name, info, build_path, root, evaluate_external_build,
                [os.path.join(root, "target", "upstream"), cache], cache)

    # Ownership: files named by source attributes (after glob), exported, loaded.
    owned = set(mod.exported) | mod.loaded_files
    tested = set()
    for (pkg, _), t in mod.targets.items():
        is_test = stubs.KINDS.get(t.kind, (None, False))[1]
        for a, v in t.attrs.items():
            if a not in stubs.SOURCE_ATTRS:
                continue
            for label in flatten(v):
                if not isinstance(label, str) or label.startswith("@@") or (label.startswith("@") and not label.startswith("@//")):
                    continue
                c = ev.canon(label, pkg)
                p, _, n = c[3:].partition(":")
                path = os.path.join(p, n) if p else n
                owned.add(path)
                if is_test and a in ("srcs", "crate_root", "main"):
                    tested.add(path)
    for path, _, is_src in mod.label_refs:
        if is_src and path.startswith("@//"):
            p, _, n = path[3:].partition(":")
            owned.add(os.path.join(p, n) if p else n)
    for path in files:
        base = os.path.basename(path)
        if base in BUILD_NAMES or base == "MODULE.bazel":
            continue
        ext = os.path.splitext(path)[1]
        if ext in SOURCE_EXTS or base in ("Cargo.toml", "Cargo.lock", "build.rs"):
            if path not in owned:
                mod.problems.append(f"{path}: belongs to no target")
        if any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(base, p) for p in TEST_FILE_PATTERNS) and ext in SOURCE_EXTS:
            if path not in tested:
                mod.problems.append(f"{path}: test file with no test target")
    return mod


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = os.path.abspath(argv[0] if argv else os.path.join(os.path.dirname(__file__), "..", ".."))
    main_mod = check_module(root, archives=True)
    problems = list(main_mod.problems)
    # What Bazel, crate_universe and the toolchains make of the files (surface.py).
    problems += surface.run(root, main_mod, list_files(root, nested_module_roots(list_files(root, []))))
    count = 1
    for sub in nested_module_roots(list_files(root, [])):
        sub_root = os.path.join(root, sub)
        # A nested module that depends on this one by path is checked against it.
        mapping = {}
        sub_mod = Module(root=sub_root)
        Evaluator(sub_mod, list_files(sub_root, [])).eval_module()
        for repo, kind in sub_mod.repos.items():
            if kind.startswith("local:") and os.path.realpath(os.path.join(sub_root, kind[6:])) == os.path.realpath(root):
                mapping[repo] = main_mod
        if not mapping:
            continue  # an unrelated module (a test fixture): checked by its own test
        m = check_module(sub_root, mapping)
        problems += [f"{sub}/{p}" for p in m.problems]
        count += 1
    problems = list(dict.fromkeys(problems))
    for p in problems:
        print(p)
    print(f"starlark check: {count} module(s), {len(main_mod.targets)} targets in the root module, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
