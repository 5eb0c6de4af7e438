"""Checks of what Bazel, crate_universe and the toolchains do with the
module's files on a first run, beyond names and attributes (check.py).

Each function checks one class of defect and returns problem lines:

* splice_problems: every Cargo manifest a `crate.from_cargo` tag names is
  spliced the way cargo-bazel splices it (its directory, or its workspace
  root's, symlinked into a fresh temporary directory): a `path` dependency
  leaving that directory resolves under the temporary directory and fails.
* extension_label_problems: labels that a module extension writes verbatim
  into the repositories it generates (crate annotations' string lists) are
  resolved there, with the extension's repository mapping: a repository of
  this module is not visible there (`inject_repo` helps only while this
  module is the root), so it is named by its canonical name.
* hub_name_problems: crate hubs named after the module, since crate_universe
  refuses two modules' hubs of one name (a consumer's `crates`).
* make_variable_problems: Bazel's make-variable expansion of every attribute
  it expands: a `$` must start `$$`, `$(...)` or (in genrule commands) `$@`,
  `$<`, `$^`.
* constraint_problems: `target_compatible_with` takes constraint values; a
  config_setting (or a group of them) there fails analysis.
* single_file_problems: per operating system (selects resolved for it), a
  target with more than one output there (a Windows DLL and its import
  library) given to an attribute that takes one file.
* external_include_problems: labels into a Bazel Central Registry module and
  the headers included through them, against that module's real packages,
  headers and include paths (bcr_modules.json, read from its archive).
* crate_use_problems: each Rust target's dependencies against the crates
  its sources use (from its Cargo manifest).
* platform_api_problems: Unix- or Windows-only APIs and library file names
  in Rust tests that Cargo runs on every platform, outside a `cfg`.
* import_library_problems: a shared library of this repository linked by
  name (`#[link]`, `rustc-link-lib`) without the name MSVC's linker needs
  for rustc's import library (`NAME.dll` for `NAME.dll.lib`).
* py_test_problems: a py_test whose main is a pytest file that nothing calls
  pytest on (its tests never run).
"""

from __future__ import annotations

import json
import os
import re
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
CRATE_EXT = "@rules_rust//crate_universe:extensions.bzl%crate"

# ---------------------------------------------------------------------------
# cargo-bazel's splicing (rules_rust 0.69.0 crate_universe/src/splicing/
# splicer.rs: SplicerKind::new, splice_workspace, splice_package).


def _manifest(path: str) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def _workspace_root(manifest_path: str) -> str | None:
    """The first Cargo.toml with a [workspace] table, from the manifest's own
    directory up (cargo-bazel's parent_workspace)."""
    d = os.path.dirname(os.path.abspath(manifest_path))
    while True:
        cand = os.path.join(d, "Cargo.toml")
        if os.path.exists(cand):
            try:
                if "workspace" in _manifest(cand):
                    return cand
            except (OSError, tomllib.TOMLDecodeError):
                pass
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def path_dependencies(manifest: dict) -> list[tuple[str, str]]:
    """(table, path) of every `path` dependency a manifest declares."""
    out = []

    def scan(table_name, table):
        for name, spec in (table or {}).items():
            if isinstance(spec, dict) and "path" in spec:
                out.append((f"{table_name}.{name}", spec["path"]))

    for key in ("dependencies", "dev-dependencies", "build-dependencies"):
        scan(key, manifest.get(key))
    for cfg, tables in (manifest.get("target") or {}).items():
        for key in ("dependencies", "dev-dependencies", "build-dependencies"):
            scan(f"target.{cfg}.{key}", (tables or {}).get(key))
    ws = manifest.get("workspace") or {}
    scan("workspace.dependencies", ws.get("dependencies"))
    for registry, table in (manifest.get("patch") or {}).items():
        scan(f"patch.{registry}", table)
    return out


def _members(ws_manifest_path: str) -> list[str]:
    root = os.path.dirname(ws_manifest_path)
    ws = _manifest(ws_manifest_path).get("workspace") or {}
    out = [ws_manifest_path]
    for m in ws.get("members", []):
        import glob as _glob
        for d in sorted(_glob.glob(os.path.join(root, m))):
            cand = os.path.join(d, "Cargo.toml")
            if os.path.exists(cand) and cand not in out:
                out.append(cand)
    return out


def _label_path(root: str, label: str) -> str:
    label = label.lstrip("@")
    if "//" in label:
        label = label.split("//", 1)[1]
    pkg, _, name = label.partition(":")
    return os.path.join(root, pkg, name)


def splice_problems(root: str, tags: list) -> list[str]:
    problems = []
    for ext_key, tag, kw in tags:
        if ext_key != CRATE_EXT or tag != "from_cargo":
            continue
        hub = kw.get("name", "crates")
        manifests = [_label_path(root, m) for m in kw.get("manifests", [])]
        roots = {r for r in (_workspace_root(m) for m in manifests) if r}
        if len(roots) > 1:
            problems.append(f"MODULE.bazel: crate.from_cargo '{hub}': manifests of different workspaces "
                            f"({', '.join(sorted(os.path.relpath(r, root) for r in roots))}), which cargo-bazel refuses")
            continue
        ws = next(iter(roots), None)
        if ws and ws in manifests:
            spliced_dir, checked = os.path.dirname(ws), _members(ws)
        elif len(manifests) == 1:
            spliced_dir, checked = os.path.dirname(manifests[0]), manifests
        else:
            spliced_dir, checked = None, manifests   # each manifest copied alone
        for m in checked:
            base = spliced_dir or os.path.dirname(m)
            for table, rel in path_dependencies(_manifest(m)):
                target = os.path.normpath(os.path.join(os.path.dirname(m), rel))
                if os.path.relpath(target, base).startswith(".."):
                    problems.append(
                        f"MODULE.bazel: crate.from_cargo '{hub}': {os.path.relpath(m, root)} [{table}] path = "
                        f"\"{rel}\" leaves {os.path.relpath(base, root) or '.'}/, the directory cargo-bazel "
                        "splices (it resolves under a temporary directory); give the hub its crates with "
                        "crate.spec/from_specs instead")
    return problems


# Hubs made with crate.spec/from_specs from a manifest cargo-bazel cannot
# splice: the manifest whose registry dependencies the specs repeat, and the
# Cargo lock whose versions the hub's own (Bazel) lock must keep.
SPEC_SOURCES = {
    "tether_crates_python": ("python/Cargo.toml", "python/Cargo.lock"),
    "tether_crates_fuzz": ("rust/fuzz/Cargo.toml", "rust/fuzz/Cargo.lock"),
}


def lock_versions(path: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for pkg in _manifest(path).get("package", []):
        if "source" in pkg:
            out.setdefault(pkg["name"], set()).add(pkg["version"])
    return out


def spec_problems(root: str, tags: list, sources: dict | None = None) -> list[str]:
    """Each from_specs hub's specs against the registry dependencies of its
    source manifest (same crates, version requirements and features), and
    its lock file against the source lock (same versions)."""
    sources = SPEC_SOURCES if sources is None else sources
    problems = []
    hubs = {kw.get("name", "crates"): kw for k, t, kw in tags if k == CRATE_EXT and t == "from_specs"}
    for hub, kw in sorted(hubs.items()):
        if hub not in sources:
            problems.append(f"MODULE.bazel: crate.from_specs '{hub}': no source manifest known for it "
                            "(tools/starlark_check/surface.py SPEC_SOURCES)")
            continue
        manifest_rel, lock_rel = sources[hub]
        manifest = _manifest(os.path.join(root, manifest_rel))
        wanted = {}
        for name, spec in (manifest.get("dependencies") or {}).items():
            if isinstance(spec, str):
                spec = {"version": spec}
            if "path" in spec or "git" in spec:
                continue
            wanted[spec.get("package", name)] = (spec.get("version"), sorted(spec.get("features", [])),
                                                  spec.get("default-features", True))
        specs = {}
        for k, t, skw in tags:
            if k == CRATE_EXT and t == "spec" and (not skw.get("repositories") or hub in skw["repositories"]):
                specs[skw["package"]] = (skw.get("version"), sorted(skw.get("features", [])),
                                         skw.get("default_features", True))
        for name in sorted(set(wanted) | set(specs)):
            if name not in specs:
                problems.append(f"MODULE.bazel: crate hub '{hub}' has no crate.spec for {name}, a dependency of "
                                f"{manifest_rel}")
            elif name not in wanted:
                problems.append(f"MODULE.bazel: crate hub '{hub}': crate.spec {name} is no registry dependency "
                                f"of {manifest_rel}")
            elif specs[name] != wanted[name]:
                problems.append(f"MODULE.bazel: crate hub '{hub}': crate.spec {name} {specs[name]} differs from "
                                f"{manifest_rel}'s {wanted[name]} (version, features, default features)")
        lock = kw.get("cargo_lockfile")
        if not lock:
            problems.append(f"MODULE.bazel: crate.from_specs '{hub}' has no cargo_lockfile")
            continue
        lock_path = _label_path(root, lock)
        if os.path.abspath(lock_path) == os.path.abspath(os.path.join(root, lock_rel)):
            problems.append(f"MODULE.bazel: crate.from_specs '{hub}' takes {lock_rel}, which cargo-bazel rewrites "
                            "for the hub's own workspace: give it a lock of its own")
            continue
        if not os.path.exists(lock_path):
            problems.append(f"MODULE.bazel: crate.from_specs '{hub}': no lock file {lock}")
            continue
        theirs = lock_versions(os.path.join(root, lock_rel))
        ours = lock_versions(lock_path)
        for name in sorted(set(theirs) & set(ours)):
            if theirs[name] != ours[name]:
                problems.append(f"{os.path.relpath(lock_path, root)}: {name} {sorted(ours[name])}, but {lock_rel} "
                                f"pins {sorted(theirs[name])} (make lint-bazel UPDATE_LOCKS=1 rewrites it)")
    return problems


# ---------------------------------------------------------------------------
# Labels across module extensions (rules_rust 0.69.0
# crate_universe/extensions.bzl: `_relative_label_list = attr.string_list`,
# the annotation attributes below are written verbatim into the generated
# BUILD files; label-typed ones such as build_script_toolchains are
# canonicalized in the calling module and need nothing).
STRING_LABEL_ATTRS = {
    "build_script_compile_data", "build_script_data", "build_script_deps", "build_script_link_deps",
    "build_script_proc_macro_deps", "build_script_tools", "compile_data", "data", "deps",
    "proc_macro_deps", "rustc_env_files",
}
# Attributes whose strings may hold `$(location @repo//...)`.
STRING_EXPANDED_ATTRS = {"build_script_env", "rustc_env", "build_script_rustc_env", "rustc_flags"}
# What rules_rust's own module sees (its MODULE.bazel at 0.69.0: the
# non-dev bazel_deps and use_repo'd repositories), which the repositories
# its extensions generate see too.
RULES_RUST_VISIBLE = {
    "rules_rust", "bazel_tools", "bazel_features", "bazel_skylib", "platforms", "rules_cc",
    "rules_license", "rules_shell", "build_bazel_apple_support", "rust_toolchains", "rust_host_tools",
    "rrra", "rrc", "rules_rust_tinyjson",
}
_APPARENT = re.compile(r"(?<![@\w])@([A-Za-z0-9_.+-]+)//")


_CANONICAL = re.compile(r"@@([A-Za-z0-9_.-]+)\+//")


def visible_to_crate_extension(repo: str, hubs: set[str], injected: set[str] = frozenset()) -> bool:
    """Whether the crate extension's repositories see @repo wherever this
    module is used. `inject_repo` counts only when this module is the root
    (Bazel ignores it in a dependency's MODULE.bazel), so it is not enough
    for a module others depend on: `injected` is accepted for reporting
    only."""
    return repo in RULES_RUST_VISIBLE or repo in hubs or any(repo.startswith(h + "__") for h in hubs)


def _bazel8(mod) -> bool:
    """module(bazel_compatibility) admits no Bazel before 8, whose canonical
    repository names are `<module>+` (Bazel 7: `<module>~`)."""
    for c in mod.bazel_compatibility:
        m = re.fullmatch(r">=\s*(\d+)(?:\.\d+)*", c.strip())
        if m and int(m.group(1)) >= 8:
            return True
    return False


def extension_label_problems(mod) -> list[str]:
    problems = []
    hubs = {kw.get("name", "crates") for k, t, kw in mod.tags if k == CRATE_EXT and t in ("from_cargo", "from_specs")}
    injected = mod.injected.get(CRATE_EXT, set())
    for ext_key, tag, kw in mod.tags:
        if ext_key != CRATE_EXT or tag != "annotation":
            continue
        for attr, value in kw.items():
            if attr in STRING_LABEL_ATTRS:
                strings = [v for v in value if isinstance(v, str)]
            elif attr in STRING_EXPANDED_ATTRS:
                strings = list(value.values()) if isinstance(value, dict) else [v for v in value if isinstance(v, str)]
            else:
                continue
            where = f"MODULE.bazel: crate.annotation({kw.get('crate')}) {attr}: '{{}}'"
            for s in strings:
                for repo in _APPARENT.findall(s):
                    if visible_to_crate_extension(repo, hubs):
                        continue
                    why = ("is given to the extension by inject_repo, which Bazel ignores when this module is "
                           "a dependency") if repo in injected else "the crate extension's repositories cannot see"
                    problems.append(where.format(s) + f" names @{repo}, which {why}; name it by its canonical "
                                    f"name @@{repo}+// (with module(bazel_compatibility = [\">=8.0.0\"]))")
                for repo in _CANONICAL.findall(s):
                    if mod.repos.get(repo) != "dep":
                        problems.append(where.format(s) + f" names @@{repo}+, but {repo} is no bazel_dep of the module")
                    elif not _bazel8(mod):
                        problems.append(where.format(s) + f" names @@{repo}+, a Bazel 8 canonical name, but "
                                        "module(bazel_compatibility) admits older Bazel")
    return problems


def hub_name_problems(mod) -> list[str]:
    """crate_universe fails when two modules of a build define hubs of the
    same name (extensions.bzl: "Defined two crate universes with the same
    name in different MODULE.bazel files"): a module others depend on names
    its hubs after itself (and may use them under shorter names)."""
    problems = []
    for ext_key, tag, kw in mod.tags:
        if ext_key == CRATE_EXT and tag in ("from_cargo", "from_specs"):
            name = kw.get("name", "crates")
            if mod.name and not name.startswith(mod.name + "_"):
                problems.append(f"MODULE.bazel: crate.{tag} '{name}': a consumer's hub of the same name fails "
                                f"crate_universe; name it {mod.name}_{name} (use_repo(crate, {name} = "
                                f"\"{mod.name}_{name}\") keeps @{name} here)")
    return problems


def generated_build_problems(repo_dir: str, hubs: set[str], injected: set[str]) -> list[str]:
    """Apparent repository names in BUILD files cargo-bazel generated, against
    what the crate extension's repositories can see."""
    problems = []
    for d, _, names in os.walk(repo_dir):
        for n in names:
            if not (n.startswith("BUILD") and n.endswith(".bazel")):
                continue
            text = open(os.path.join(d, n)).read()
            for repo in sorted(set(_APPARENT.findall(text))):
                if not visible_to_crate_extension(repo, hubs, injected):
                    problems.append(f"{n}: names @{repo}, which the crate extension's repositories cannot see")
    return problems


# ---------------------------------------------------------------------------
# Make variables (Bazel's LocationExpander / TemplateExpander): attributes
# expanded per rule kind.
EXPANDED_ATTRS = {
    "copts", "conlyopts", "cxxopts", "linkopts", "defines", "local_defines", "rustc_flags",
    "rustc_env", "env", "args", "cmd", "cmd_bash", "build_script_env",
}
_VAR_NAME = re.compile(r"^[A-Za-z_@][A-Za-z0-9_@.]*$|^(location|locations|execpath|execpaths|rootpath|rootpaths|"
                       r"rlocationpath|rlocationpaths)\s+\S+$")


def make_variable_errors(text: str, genrule: bool) -> list[str]:
    errors = []
    i = 0
    while i < len(text):
        if text[i] != "$":
            i += 1
            continue
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if nxt == "$":
            i += 2
        elif nxt == "(":
            end = text.find(")", i)
            if end < 0:
                errors.append(f"unterminated '$(' in '{text}'")
                break
            body = text[i + 2:end]
            if not _VAR_NAME.match(body.strip()):
                errors.append(f"'$({body})' is no make variable or location function")
            i = end + 1
        elif genrule and nxt in "@<^":
            i += 2
        else:
            errors.append(f"'${nxt}' in '{text}' is a make-variable error (write '$$' for a literal '$')")
            i += 2
    return errors


def _strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from _strings(x)
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from _strings(x)


def make_variable_problems(mod) -> list[str]:
    problems = []
    for (pkg, name), t in sorted(mod.targets.items()):
        for attr in EXPANDED_ATTRS & set(t.attrs):
            for s in _strings(t.attrs[attr]):
                for e in make_variable_errors(s, genrule=t.kind == "genrule"):
                    problems.append(f"{t.where}: {t.kind} '{name}' {attr}: {e}")
    for ext_key, tag, kw in mod.tags:
        if tag == "annotation":
            for attr in ("build_script_env", "rustc_env", "build_script_rustc_env", "rustc_flags"):
                for s in _strings(kw.get(attr, [])):
                    for e in make_variable_errors(s, genrule=False):
                        problems.append(f"MODULE.bazel: crate.annotation({kw.get('crate')}) {attr}: {e}")
    return problems


# ---------------------------------------------------------------------------
# target_compatible_with: constraint_value labels only.
CONFIG_KINDS = {"config_setting", "config_setting_group"}


def _local(label: str) -> tuple[str, str] | None:
    if label.startswith("@//"):
        pkg, _, name = label[3:].partition(":")
        return pkg, name
    return None


def constraint_problems(ev, mod) -> list[str]:
    problems = []
    for (pkg, name), t in sorted(mod.targets.items()):
        for label in _strings(t.attrs.get("target_compatible_with", [])):
            key = _local(ev.canon(label, pkg))
            if key and key in mod.targets and mod.targets[key].kind in CONFIG_KINDS:
                problems.append(f"{t.where}: '{name}' target_compatible_with names {label}, a "
                                f"{mod.targets[key].kind}, not a constraint value (select on it instead)")
    return problems


# ---------------------------------------------------------------------------
# Per-OS outputs fed to single-file attributes. Kinds with more than one
# default output on an OS: rules_rust 0.69.0 rust/private/rustc.bzl gives a
# Windows cdylib its interface library (`.dll.lib`) beside the `.dll`.
MULTI_OUTPUT = {"rust_shared_library": {"windows"}}
_SINGLE_FN = re.compile(r"\$\((location|execpath|rootpath|rlocationpath)\s+([^)\s]+)\)")
OS_CONSTRAINTS = {"@platforms//os:linux": "linux", "@platforms//os:macos": "macos", "@platforms//os:windows": "windows"}


def compatible(ev, t, os_name: str) -> bool:
    for label in _strings(t.attrs.get("target_compatible_with", [])):
        c = ev.canon(label, t.package)
        if c == "@platforms//:incompatible":
            return False
        if c in OS_CONSTRAINTS and OS_CONSTRAINTS[c] != os_name:
            return False
    return True


def single_file_problems(ev, mod, os_name: str) -> list[str]:
    problems = []

    def multi(label, pkg):
        key = _local(ev.canon(label, pkg))
        t = mod.targets.get(key) if key else None
        return t is not None and os_name in MULTI_OUTPUT.get(t.kind, set())

    for (pkg, name), t in sorted(mod.targets.items()):
        if not compatible(ev, t, os_name):
            continue
        uses = []
        if t.kind == "copy_file":
            uses.append(("src", t.attrs.get("src")))
        if t.kind in ("py_test", "py_binary") and isinstance(t.attrs.get("main"), str):
            uses.append(("main", t.attrs["main"]))
        for attr in EXPANDED_ATTRS & set(t.attrs):
            for s in _strings(t.attrs[attr]):
                for fn, label in _SINGLE_FN.findall(s):
                    uses.append((f"{attr} $({fn})", label))
        for what, label in uses:
            if isinstance(label, str) and multi(label, pkg):
                problems.append(f"{t.where}: {t.kind} '{name}' {what}: {label} has more than one file on "
                                f"{os_name} (a DLL and its import library); pick one (//tools/bazel:single_file.bzl) "
                                "or limit the target's platforms")
    return problems


# ---------------------------------------------------------------------------
# External modules' packages and include paths (bcr_modules.json).


def load_bcr_facts(path: str | None = None) -> dict:
    with open(path or os.path.join(HERE, "bcr_modules.json")) as f:
        return json.load(f)


_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def external_include_problems(ev, mod, facts: dict) -> list[str]:
    problems = []
    # 1. Every label into a described module names one of its targets.
    for (pkg, name), t in sorted(mod.targets.items()):
        for attr in ("deps", "hdrs", "srcs", "implementation_deps", "data"):
            for label in _strings(t.attrs.get(attr, [])):
                c = ev.canon(label, pkg)
                repo, _, rest = c[1:].partition("//")
                if repo in facts:
                    tpkg, _, tname = rest.partition(":")
                    known = facts[repo]["packages"]
                    if tpkg not in known:
                        problems.append(f"{t.where}: '{name}' {attr}: {label}: module {repo} "
                                        f"{facts[repo]['version']} has no package //{tpkg} (its packages: "
                                        f"{', '.join('//' + p for p in sorted(known))})")
                    elif tname not in known[tpkg]["targets"] and tname not in known[tpkg].get("files", []):
                        problems.append(f"{t.where}: '{name}' {attr}: {label}: no target '{tname}' in "
                                        f"{repo}//{tpkg}")

    # 2. Each include naming a header of a described module is reachable by
    # the including target: angle includes only through include paths.
    def roots_of(label, pkg, seen):
        """(angle roots, quote roots) as path -> header set providers."""
        c = ev.canon(label, pkg)
        if c in seen:
            return set(), set()
        seen.add(c)
        repo, _, rest = c[1:].partition("//")
        tpkg, _, tname = rest.partition(":")
        angle, quote = set(), set()
        if repo in facts:
            lib = facts[repo]["packages"].get(tpkg, {}).get("targets", {}).get(tname)
            if lib is None:
                return angle, quote
            for h in lib.get("hdrs", []):
                full = f"{tpkg}/{h}" if tpkg else h
                quote.add((repo, full))
                for inc in lib.get("includes", []):
                    base = os.path.normpath(os.path.join(tpkg, inc)).lstrip("./")
                    if full.startswith(base + "/") or base in ("", "."):
                        angle.add((repo, os.path.relpath(full, base) if base not in ("", ".") else full))
            for dep in lib.get("deps", []):
                a, q = roots_of(f"@{repo}//{dep.lstrip('/')}" if dep.startswith("//") else dep, tpkg, seen)
                angle |= a
                quote |= q
            return angle, quote
        key = _local(c)
        t = mod.targets.get(key) if key else None
        if t is None or not t.kind.startswith("cc_"):
            return angle, quote
        strip = t.attrs.get("strip_include_prefix")
        prefix = t.attrs.get("include_prefix")
        for h in _strings(t.attrs.get("hdrs", [])):
            hc = ev.canon(h, t.package)
            hrepo, _, hrest = hc[1:].partition("//")
            hp, _, hn = hrest.partition(":")
            path = f"{hp}/{hn}" if hp else hn
            if strip is not None or prefix is not None:
                s = (strip or "").strip("/") if (strip or "").startswith("/") else os.path.join(t.package, strip or "")
                rel = os.path.relpath(path, s) if s else path
                if rel.startswith(".."):
                    continue
                v = os.path.join(prefix or "", rel)
                angle.add((hrepo or "", v))
                quote.add((hrepo or "", v))
        for dep in _strings(t.attrs.get("deps", [])):
            a, q = roots_of(dep, t.package, seen)
            angle |= a
            quote |= q
        return angle, quote

    headers = {(repo, h): repo for repo, info in facts.items() for p, pk in info["packages"].items()
               for lib in pk["targets"].values() for h in [f"{p}/{x}" if p else x for x in lib.get("hdrs", [])]}
    for (pkg, name), t in sorted(mod.targets.items()):
        if not t.kind.startswith("cc_"):
            continue
        angle, quote = set(), set()
        for dep in _strings(t.attrs.get("deps", [])):
            a, q = roots_of(dep, pkg, set())
            angle |= a
            quote |= q
        for src in list(_strings(t.attrs.get("srcs", []))) + list(_strings(t.attrs.get("hdrs", []))):
            key = _local(ev.canon(src, pkg))
            if not key:
                continue
            path = os.path.join(mod.root, *[p for p in key if p])
            if not os.path.isfile(path):
                continue
            for form, inc in _INCLUDE.findall(open(path, errors="replace").read()):
                owners = {repo for (repo, h) in headers if h == inc or h.endswith("/" + inc)}
                if not owners:
                    continue
                found = {v for (_, v) in angle} if form == "<" else {v for (_, v) in angle | quote}
                if inc not in found:
                    problems.append(f"{t.where}: '{name}': {os.path.relpath(path, mod.root)} includes "
                                    f"{form}{inc}{'>' if form == '<' else chr(34)}, a header of "
                                    f"{', '.join(sorted(owners))}, which no dependency puts on an include path")
    return problems


# ---------------------------------------------------------------------------
# Crates used by a Rust target's sources against its deps.
RUST_KINDS = {"rust_library", "rust_shared_library", "rust_binary", "rust_test"}


def _cargo_manifest_for(root: str, path: str) -> str | None:
    d = os.path.dirname(os.path.join(root, path))
    while d.startswith(root):
        cand = os.path.join(d, "Cargo.toml")
        if os.path.exists(cand) and "package" in _manifest(cand):
            return cand
        d = os.path.dirname(d)
    return None


def _declared_crates(manifest: dict, dev: bool) -> set[str]:
    keys = ["dependencies"] + (["dev-dependencies"] if dev else [])
    out = set()
    tables = [manifest.get(k) or {} for k in keys]
    for tables_of in (manifest.get("target") or {}).values():
        tables += [(tables_of or {}).get(k) or {} for k in keys]
    for table in tables:
        out |= {n.replace("-", "_") for n in table}
    return out


def crate_use_problems(ev, mod) -> list[str]:
    problems = []
    for (pkg, name), t in sorted(mod.targets.items()):
        if t.kind not in RUST_KINDS:
            continue
        srcs = [_local(ev.canon(s, pkg)) for s in _strings(t.attrs.get("srcs", []))]
        paths = [os.path.join(*[p for p in k if p]) for k in srcs if k]
        paths = [p for p in paths if p.endswith(".rs") and os.path.isfile(os.path.join(mod.root, p))]
        if not paths:
            continue
        manifest_path = _cargo_manifest_for(mod.root, paths[0])
        if not manifest_path:
            continue
        manifest = _manifest(manifest_path)
        own = (manifest.get("package") or {}).get("name", "").replace("-", "_")
        declared = _declared_crates(manifest, dev=t.kind == "rust_test") - {own}
        text = "\n".join(re.sub(r"//[^\n]*", "", open(os.path.join(mod.root, p)).read()) for p in paths)
        used = {c for c in declared if re.search(rf"(?<![\w:]){re.escape(c)}::|\bextern crate {re.escape(c)}\b", text)}
        have = set()
        for dep in _strings(t.attrs.get("deps", [])) if isinstance(t.attrs.get("deps"), (list, tuple)) else []:
            c = ev.canon(dep, pkg)
            key = _local(c)
            if key and key in mod.targets:
                d = mod.targets[key]
                have.add((d.attrs.get("crate_name") or key[1]).replace("-", "_"))
            else:
                have.add(c.rsplit(":", 1)[-1].replace("-", "_"))
        if "@rules_rust_pyo3//private:current_rust_pyo3_toolchain" in [ev.canon(d, pkg) for d in _strings(t.attrs.get("deps", []))]:
            have.add("pyo3")   # the toolchain's crate (check.PYO3_TOOLCHAIN_CRATE)
        for dep in _strings(t.attrs.get("proc_macro_deps", [])):
            have.add(ev.canon(dep, pkg).rsplit(":", 1)[-1].replace("-", "_"))
        for c in sorted(used - have):
            problems.append(f"{t.where}: {t.kind} '{name}' uses crate {c} ({os.path.relpath(manifest_path, mod.root)} "
                            "declares it) but its deps give no crate of that name")
    return problems


# ---------------------------------------------------------------------------
# Platform-specific APIs in Rust tests.
PLATFORM_APIS = [
    (re.compile(r"\blibc::(dlopen|dlsym|dladdr|dlerror|dlclose|Dl_info|RTLD_\w+)"), "unix", "libc::{}"),
    (re.compile(r"\bstd::os::unix\b"), "unix", "std::os::unix"),
    (re.compile(r"\bstd::os::windows\b"), "windows", "std::os::windows"),
    # A library file name built from a pattern ("lib{name}.so"): the
    # platform's is DLL_PREFIX/DLL_SUFFIX (std::env::consts).
    (re.compile(r"\"[^\"\n]*\{[^\"\n]*\.(so|dylib|dll)\""), "file", "a .{} file name built from a pattern"),
]
_CFG = re.compile(r"#!?\[cfg\(([^\]]*)\)\]")


def _gated_spans(text: str) -> list[tuple[int, int]]:
    """Byte spans of items carrying a #[cfg(...)] that names a platform."""
    spans = []
    for m in _CFG.finditer(text):
        if not re.search(r"\b(unix|windows|target_os|target_family|target_env)\b", m.group(1)):
            continue
        if m.group(0).startswith("#!["):
            return [(0, len(text))]
        j = text.find("{", m.end())
        semi = text.find(";", m.end())
        if j < 0 or (0 <= semi < j):
            spans.append((m.start(), semi if semi >= 0 else len(text)))
            continue
        depth = 0
        for k in range(j, len(text)):
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    spans.append((m.start(), k))
                    break
    return spans


def rust_test_files(root: str, files: list[str]) -> list[str]:
    return [f for f in files if f.endswith(".rs") and ("/tests/" in f or f.endswith("/tests.rs"))
            and _cargo_manifest_for(root, f)]


def platform_api_problems(root: str, files: list[str]) -> list[str]:
    problems = []
    for f in rust_test_files(root, files):
        text = open(os.path.join(root, f), errors="replace").read()
        spans = _gated_spans(text)
        for rx, _, what in PLATFORM_APIS:
            for m in rx.finditer(text):
                if any(a <= m.start() <= b for a, b in spans):
                    continue
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{f}:{line}: {what.format(m.group(1) if m.groups() else '')} outside a "
                                "platform cfg, in a test Cargo runs on every platform")
    return problems


# ---------------------------------------------------------------------------
# Linking a shared library of this repository by name on MSVC: rustc names a
# cdylib's import library `NAME.dll.lib`, and MSVC's linker reads `-l NAME`
# as `NAME.lib`, so the name must be `NAME.dll` there.
_LINK_ATTR = re.compile(r'#\[link\(name\s*=\s*"([^"]+)"')
_LINK_LIB = re.compile(r'rustc-link-lib=(?:dylib=)?([A-Za-z0-9_.]+)')


def cdylib_names(root: str, mod) -> set[str]:
    names = {(t.attrs.get("crate_name") or n).replace("-", "_")
             for (p, n), t in mod.targets.items() if t.kind == "rust_shared_library"}
    return {n for n in names if not n.endswith("_shared") and not n.startswith("_")}


def import_library_problems(root: str, files: list[str], mod) -> list[str]:
    problems = []
    libs = cdylib_names(root, mod)
    for f in files:
        if not f.endswith(".rs"):
            continue
        text = open(os.path.join(root, f), errors="replace").read()
        for m in _LINK_ATTR.finditer(text):
            name = m.group(1)
            if name not in libs:
                continue
            # The plain attribute (not inside a cfg_attr excluding MSVC), and
            # no MSVC variant naming NAME.dll.
            line_start = text.rfind("\n", 0, m.start()) + 1
            prefix = text[line_start:m.start()]
            msvc_variant = re.search(rf'cfg_attr\([^)]*msvc[^)]*\)\s*,\s*link\(name\s*=\s*"{re.escape(name)}\.dll"', text)
            if not msvc_variant or "cfg_attr" not in prefix + text[m.start() - 80:m.start()]:
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{f}:{line}: #[link(name = \"{name}\")] on MSVC reads {name}.lib, but rustc names "
                                f"the import library {name}.dll.lib: link {name}.dll there (cfg_attr on target_env = \"msvc\")")
        if os.path.basename(f) == "build.rs":
            for m in _LINK_LIB.finditer(text):
                name = m.group(1)
                if name in libs and f"dylib={name}.dll" not in text:
                    line = text.count("\n", 0, m.start()) + 1
                    problems.append(f"{f}:{line}: rustc-link-lib {name} has no MSVC form ({name}.dll, for the import "
                                    f"library {name}.dll.lib)")
    return problems


# ---------------------------------------------------------------------------
# py_test mains.


def py_test_problems(ev, mod) -> list[str]:
    problems = []
    for (pkg, name), t in sorted(mod.targets.items()):
        if t.kind != "py_test":
            continue
        main = t.attrs.get("main")
        srcs = list(_strings(t.attrs.get("srcs", [])))
        if not isinstance(main, str):
            main = name + ".py" if name + ".py" in srcs else (srcs[0] if len(srcs) == 1 else None)
        if main is None:
            continue
        key = _local(ev.canon(main, pkg))
        if not key:
            continue
        path = os.path.join(mod.root, *[p for p in key if p])
        if not os.path.isfile(path):
            continue
        text = open(path).read()
        if re.search(r"^def test_\w+\(", text, re.M) and "pytest.main(" not in text and "unittest.main(" not in text:
            problems.append(f"{t.where}: py_test '{name}': its main {key[1]} defines pytest tests but runs none "
                            "when executed (use //tools/bazel:pytest_main.py as main with the file as argument)")
    return problems


# ---------------------------------------------------------------------------


def run(root: str, main_mod, files: list[str]) -> list[str]:
    """Every check above on the module at root (main_mod: check.py's
    unconfigured evaluation; the per-OS ones are evaluated here)."""
    import check  # noqa: PLC0415 (check imports this module)

    ev = check.Evaluator(main_mod, files)
    problems = []
    problems += splice_problems(root, main_mod.tags)
    problems += spec_problems(root, main_mod.tags)
    problems += extension_label_problems(main_mod)
    problems += hub_name_problems(main_mod)
    problems += make_variable_problems(main_mod)
    problems += constraint_problems(ev, main_mod)
    problems += external_include_problems(ev, main_mod, load_bcr_facts())
    problems += crate_use_problems(ev, main_mod)
    problems += platform_api_problems(root, files)
    problems += py_test_problems(ev, main_mod)
    problems += import_library_problems(root, files, main_mod)
    for os_name in check.PLATFORM_OSES:
        m = check.check_module(root, platform=os_name)
        problems += single_file_problems(check.Evaluator(m, files), m, os_name)
    return list(dict.fromkeys(problems))
