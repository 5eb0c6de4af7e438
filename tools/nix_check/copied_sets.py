"""Whether each of the flake's checks can pass, as far as its sources go.

A Nix check sees only what it copies into the store. A file copied alone
(`${./tests/c/abi_test.c}`) leaves its neighbours behind, so its
`#include "check.h"` fails in the build sandbox, on a user's machine; a
Python suite copied without the README it reads, or a crate without the
path dependency or workspace it names, fails the same way. This tool reads
what the evaluated flake really copies (sources.nix: each check's script,
inputs and source sets with their files, evaluated against stub nixpkgs)
and reports:

* a reference from a copied file to a repository file outside the copied
  set: C/C++ `#include "..."` relative to the including file, Python paths
  built from the file's folder (`os.path.join(HERE, "..", "README.md")`,
  `"../x"` literals), Cargo.toml path dependencies, inherited workspace
  fields (the workspace's Cargo.toml) and workspace members;
* a module a copied Python suite `pytest.importorskip`s that the check's
  Python environment lacks (the tests would skip silently), unless listed in
  OPTIONAL_MODULES with the reason.

Usage: copied_sets.py [ROOT]; exits 1 when there is a problem.
"""

from __future__ import annotations

import ast
import json
import os
import posixpath
import re
import subprocess
import sys
import tomllib

# Store references in a check's script: /nix/store/<hash>-<name>[/<subpath>].
STORE_REF = re.compile(r"/nix/store/([0-9a-z]{32})-([^/\s'\"$;]+)((?:/[^\s'\"$;]*)?)")
QUOTE_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
C_EXTS = {".c", ".h", ".cc", ".cpp", ".hpp", ".cxx"}
# Python module -> the name of the Nix package providing it, where they differ.
MODULE_PACKAGES = {"tvm_ffi": "apache-tvm-ffi"}
# Modules the suites may skip without, and why.
OPTIONAL_MODULES = {
    "torch": "PyTorch interop tests are optional everywhere; torch is no test dependency",
}


# -- what a file refers to -----------------------------------------------------

def _norm(base_dir: str, rel: str) -> str | None:
    """`rel` from `base_dir` as a repository path, or None when it leaves it."""
    path = posixpath.normpath(posixpath.join(base_dir, rel))
    return None if path.startswith("../") or path == ".." or posixpath.isabs(path) else path


def c_references(path: str, text: str) -> list[str]:
    """Quoted includes, resolved beside the including file (where the
    compiler looks first)."""
    here = posixpath.dirname(path)
    return [p for p in (_norm(here, inc) for inc in QUOTE_INCLUDE.findall(text)) if p]


def python_references(path: str, text: str) -> list[str]:
    """Paths a Python file builds from its own folder: os.path.join(<its
    folder>, "..", ...) with constant parts, and "../"-relative literals."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    here = posixpath.dirname(path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" \
                and len(node.args) >= 2 and not isinstance(node.args[0], ast.Constant) \
                and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args[1:]):
            found.append(posixpath.join(*[a.value for a in node.args[1:]]))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("../") \
                and "\n" not in node.value:
            found.append(node.value)
    return [p for p in (_norm(here, f) for f in found) if p]


def _inherits_workspace(table) -> bool:
    if isinstance(table, dict):
        if table.get("workspace") is True:
            return True
        return any(_inherits_workspace(v) for v in table.values())
    return False


def cargo_references(path: str, text: str, repo: set[str]) -> list[str]:
    """Cargo.toml files a manifest needs: its path dependencies', its
    workspace root's (when it inherits from it) and its members'."""
    try:
        manifest = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    here = posixpath.dirname(path)
    found = []

    def deps_of(table):
        for key in ("dependencies", "dev-dependencies", "build-dependencies"):
            for dep in (table.get(key) or {}).values():
                if isinstance(dep, dict) and isinstance(dep.get("path"), str):
                    found.append(posixpath.join(dep["path"], "Cargo.toml"))

    deps_of(manifest)
    for target in (manifest.get("target") or {}).values():
        if isinstance(target, dict):
            deps_of(target)
    workspace = manifest.get("workspace")
    if isinstance(workspace, dict):
        deps_of(workspace)
        for member in workspace.get("members") or []:
            if isinstance(member, str) and "*" not in member:
                found.append(posixpath.join(member, "Cargo.toml"))
    elif _inherits_workspace(manifest.get("package")) or _inherits_workspace(manifest.get("dependencies")):
        # The nearest manifest above with a [workspace] table is the root.
        d = here
        while d:
            d = posixpath.dirname(d)
            candidate = posixpath.join(d, "Cargo.toml") if d else "Cargo.toml"
            if candidate in repo:
                found.append(posixpath.relpath(candidate, here or "."))
                break
    return [p for p in (_norm(here, f) for f in found) if p]


def references(path: str, text: str, repo: set[str]) -> list[str]:
    ext = os.path.splitext(path)[1]
    if ext in C_EXTS:
        return c_references(path, text)
    if ext == ".py":
        return python_references(path, text)
    if posixpath.basename(path) == "Cargo.toml":
        return cargo_references(path, text, repo)
    return []


_REFERENCES: dict[str, list[str]] = {}


def _folders(files) -> set[str]:
    """Every folder holding one of `files`, at any depth."""
    out = set()
    for f in files:
        d = posixpath.dirname(f)
        while d and d not in out:
            out.add(d)
            d = posixpath.dirname(d)
    return out


def escaping_references(root: str, repo: set[str], copied: set[str]) -> list[tuple[str, str]]:
    """(file, target) for each reference from a copied file to a repository
    file or folder none of whose files is copied."""
    out = []
    repo_dirs = _folders(repo)
    copied_dirs = _folders(copied)
    for path in sorted(copied):
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue
        if os.path.splitext(path)[1] not in C_EXTS | {".py"} and posixpath.basename(path) != "Cargo.toml":
            continue
        if path not in _REFERENCES:  # the same files recur in every system's checks
            with open(full, encoding="utf-8", errors="replace") as f:
                _REFERENCES[path] = references(path, f.read(), repo)
        for target in _REFERENCES[path]:
            if target in repo:
                if target not in copied:
                    out.append((path, target))
            elif target in repo_dirs and target not in copied_dirs:
                out.append((path, target + "/"))
    return out


def importorskip_modules(root: str, files: list[str]) -> dict[str, str]:
    """Top-level module -> first file that importorskips it."""
    found = {}
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            try:
                tree = ast.parse(f.read())
            except SyntaxError:
                continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "importorskip" and node.args \
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.setdefault(node.args[0].value.split(".")[0], path)
    return found


# -- what a check copies -------------------------------------------------------

def repo_files(root: str) -> set[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                         cwd=root, capture_output=True, check=True)
    return {f for f in out.stdout.decode().split("\0") if f and os.path.isfile(os.path.join(root, f))}


def literal_store_paths(root: str, rels: list[str]) -> dict[str, str]:
    """Store path -> repository path, for paths a flake names literally
    (`${./x}` copies x alone); computed by Nix without writing the store."""
    if not rels:
        return {}
    expr = "[ " + " ".join('"${%s}"' % json.dumps(os.path.join(os.path.abspath(root), r))[1:-1].replace(" ", "\\ ")
                           for r in rels) + " ]"
    out = subprocess.run(["nix-instantiate", "--eval", "--strict", "--json", "--readonly-mode", "-E", expr],
                         capture_output=True, text=True, check=True)
    return dict(zip(json.loads(out.stdout), rels))


def check_problems(root: str, repo: set[str], name: str, check: dict, sources: dict[str, list[str]]) -> list[str]:
    problems = []
    script = check["script"]
    refs = list(STORE_REF.finditer(script))
    # (what, files, copy destination or None, the repository folder it is)
    copied_sets = []
    if check.get("src"):
        copied_sets.append((check["src"], set(sources.get(check["src"], [])), None, ""))
    unknown = []
    for m in refs:
        store = m.group(0)[: len("/nix/store/") + 33 + len(m.group(2))]
        # `cp -r <store path> <dest>`: the suite later runs from inside dest.
        dest = re.match(r"\s+(\S+)", script[m.end():]) if script[: m.start()].rstrip().endswith("cp -r") else None
        dest = dest.group(1) if dest else None
        if store in sources:
            copied_sets.append((store, set(sources[store]), dest, ""))
        elif m.group(1) not in ("0" * 32, "1" * 32):  # the stubs' derivations and source sets
            unknown.append((m, store, dest))
    # Paths named literally: find which repository path each store path is.
    if unknown:
        names = {u[0].group(2) for u in unknown}
        candidates = sorted({r for r in repo | _folders(repo) if posixpath.basename(r) in names})
        by_store = literal_store_paths(root, candidates)
        for m, store, dest in unknown:
            rel = by_store.get(store)
            if rel is None:
                continue  # a store path of another derivation
            copied = {rel} if rel in repo else {r for r in repo if r.startswith(rel + "/")}
            # Relative to the copy, its files keep their paths below rel.
            copied_sets.append((f"./{rel}", copied, dest, rel))
    for what, copied, dest, prefix in copied_sets:
        for path, target in escaping_references(root, repo, copied):
            problems.append(f"check '{name}': {path} (copied as {what}) refers to {target}, which it does not copy")
        if re.search(r"\bpytest\b", script):
            problems += _missing_test_modules(root, name, check, copied, dest, prefix, script)
    return problems


def _missing_test_modules(root, name, check, copied, dest, prefix, script) -> list[str]:
    """Modules the suites run by the script (from the folder it cds into
    inside the copy, else every copied Python file) importorskip but the
    check's inputs lack."""
    test_dirs = []
    if dest:
        test_dirs = [posixpath.join(prefix, c[len(dest) + 1:]) for c in re.findall(r"\bcd\s+(\S+)", script)
                     if c.startswith(dest + "/")]
    files = sorted(f for f in copied if f.endswith(".py") and (not test_dirs or any(
        f.startswith(d.rstrip("/") + "/") for d in test_dirs)))
    have = set()
    for inp in check.get("inputs", []):
        have.update(inp.get("packages", []))
    problems = []
    for module, path in sorted(importorskip_modules(root, files).items()):
        package = MODULE_PACKAGES.get(module, module)
        if package not in have and module not in OPTIONAL_MODULES:
            problems.append(f"check '{name}': {path} skips without {module} (package {package}), "
                            "which the check's Python environment lacks")
    return problems


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = os.path.abspath(argv[0] if argv else os.path.join(os.path.dirname(__file__), "..", ".."))
    out = subprocess.run(["nix-instantiate", "--eval", "--strict", "--json", "--readonly-mode",
                          os.path.join(root, "tools", "nix_check", "sources.nix")],
                         capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr, file=sys.stderr)
        return 1
    repo = repo_files(root)
    problems = []
    checked = 0
    for system, info in sorted(json.loads(out.stdout).items()):
        sources = {s["storePath"]: s["files"] for s in info["sources"]}
        for name, check in sorted(info["checks"].items()):
            problems += [f"{system}: {p}" for p in check_problems(root, repo, name, check, sources)]
            checked += 1
    for p in problems:
        print(p)
    print(f"nix copied-set check: {checked} checks, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
