"""Runs crate_universe's generator, cargo-bazel, on the module's crate hubs
as `bazel` would on its first run, and fails when it fails.

For each `crate.from_cargo` / `crate.from_specs` tag of MODULE.bazel (read
with tools/starlark_check's evaluator), this writes the splicing manifest
and the config rules_rust's extension writes (crate_universe/extensions.bzl
and private/generate_utils.bzl at the pinned version), then runs
`cargo-bazel splice` and `cargo-bazel generate` on the real manifests and
lock files, each in a scratch directory under --out. The lock file given
to cargo-bazel is a copy, so nothing in the tree is written; it fails when:

* splice or generate fails (a manifest cargo-bazel cannot splice, a lock
  file it cannot use);
* the lock file would be rewritten (Bazel writes it back into the tree:
  the lock is out of date for the hub);
* a generated BUILD file names a repository that the extension's
  repositories cannot see (starlark_check/surface.py's rule);
* a `@hub//:crate` label used by a BUILD file of the module is not among
  the hub's generated targets.

The from_specs hubs have lock files of their own (tools/bazel/*.Cargo.lock),
made from their source manifests' Cargo locks with --update-locks.

Usage: crate_universe.py --cargo-bazel PATH [--out DIR] [--root DIR] [--update-locks]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "starlark_check"))

import check  # noqa: E402
import surface  # noqa: E402

# rules_rust 0.69.0 crate_universe/private/generate_utils.bzl render_config()
# with the bzlmod extension's values (extensions.bzl _generate_hub_and_spokes).
RENDER_DEFAULTS = {
    "build_file_template": "//:BUILD.{name}-{version}.bazel",
    "crate_label_template": "@{repository}__{name}-{version}//:{target}",
    "crate_alias_template": "//:{name}-{version}",
    "crate_repository_template": "{repository}__{name}-{version}",
    "crates_module_template": "//:{file}",
    "default_alias_rule": "alias",
    "default_package_name": None,
    "generate_cargo_toml_env_vars": True,
    "generate_target_compatible_with": True,
    "platforms_template": "@rules_rust//rust/platform:{triple}",
    "vendor_mode": "remote",
    "generate_rules_license_metadata": False,
}
# Annotation attributes as crate.annotation() encodes them (private/crate.bzl
# _annotation): every field, unset ones null, disable_pipelining false.
ANNOTATION_SKIP = {"crate", "repositories", "version"}
ANNOTATION_FIELDS = (
    "additive_build_file", "additive_build_file_content", "alias_rule", "build_script_compile_data",
    "build_script_data", "build_script_tools", "build_script_data_glob", "build_script_deps",
    "build_script_env", "build_script_exec_properties", "build_script_link_deps",
    "build_script_proc_macro_deps", "build_script_rundir", "build_script_rustc_env",
    "build_script_toolchains", "build_script_use_default_shell_env", "compile_data", "compile_data_glob",
    "compile_data_glob_excludes", "crate_features", "data", "data_glob", "deps", "extra_aliased_targets",
    "gen_binaries", "gen_build_script", "patch_args", "patch_tool", "patches", "proc_macro_deps",
    "rustc_env", "rustc_env_files", "rustc_flags", "shallow_since", "override_targets",
)
OPT_BOOL = {"auto": None, "off": False, "on": True}


def module_tags(root: str):
    mod = check.Module(root=root)
    ev = check.Evaluator(mod, check.list_files(root, check.nested_module_roots(check.list_files(root, []))))
    ev.eval_module()
    if mod.problems:
        raise SystemExit("MODULE.bazel does not evaluate:\n" + "\n".join(mod.problems))
    return mod, ev


def canonical(label: str, mod) -> str:
    """A label attribute canonicalized in the root module, as Bazel 8 does."""
    if label.startswith("@@"):
        return label
    if label.startswith("//") or label.startswith(":"):
        return "@@//" + label.lstrip("/:")
    repo, _, rest = label[1:].partition("//")
    return f"@@{repo}+//{rest}"


def annotations_for(hub: str, mod) -> dict:
    out = {}
    for ext_key, tag, kw in mod.tags:
        if ext_key != surface.CRATE_EXT or tag != "annotation":
            continue
        repos = kw.get("repositories") or []
        if repos and hub not in repos:
            continue
        ann = dict.fromkeys(ANNOTATION_FIELDS)
        ann["disable_pipelining"] = False
        for k, v in kw.items():
            if k in ANNOTATION_SKIP:
                continue
            if k == "build_script_toolchains":
                v = [canonical(x, mod) for x in v]   # attr.label_list
            if k == "gen_build_script":
                v = OPT_BOOL[v]
            ann[k] = v
        out[f"{kw['crate']} {kw.get('version', '*')}"] = ann
    return out


def specs_for(hub: str, mod) -> dict:
    out = {}
    for ext_key, tag, kw in mod.tags:
        if ext_key != surface.CRATE_EXT or tag != "spec":
            continue
        repos = kw.get("repositories") or []
        if repos and hub not in repos:
            continue
        spec = {k.replace("_", "-"): v for k, v in kw.items() if k not in ("package", "repositories")}
        out[kw["package"]] = spec
    return out


def triples(mod) -> list[str]:
    for ext_key, tag, kw in mod.tags:
        if tag == "toolchain" and ext_key.endswith("rust:extensions.bzl%rust"):
            return sorted(set(kw.get("extra_target_triples", [])))
    return []


def supported_flags(binary: str, sub: str) -> str:
    return subprocess.run([binary, sub, "--help"], capture_output=True, text=True).stdout


def run_hub(binary: str, root: str, out: str, kw: dict, tag: str, mod, update_locks: bool = False) -> list[str]:
    hub = kw.get("name", "crates")
    work = os.path.join(out, hub)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    manifests = {surface._label_path(root, m): m for m in kw.get("manifests", [])} if tag == "from_cargo" else {}
    splicing_manifest = {
        "resolver_version": "2",
        "cargo_config": None,
        "direct_packages": specs_for(hub, mod),
        "manifests": manifests,
    }
    config = {
        "generate_binaries": bool(kw.get("generate_binaries", False)),
        "generate_build_scripts": bool(kw.get("generate_build_scripts", True)),
        "annotations": annotations_for(hub, mod),
        "rendering": dict(RENDER_DEFAULTS, repository_name=hub, regen_command="bazel mod deps --lockfile_mode=update"),
        "cargo_config": None,
        "supported_platform_triples": kw.get("supported_platform_triples") or triples(mod),
    }
    for name, data in (("splicing_manifest.json", splicing_manifest), ("config.json", config)):
        with open(os.path.join(work, name), "w") as f:
            json.dump(data, f, indent=2)
    problems = []
    lock_label = kw.get("cargo_lockfile")
    lock_copy = None
    lock_src = None
    if lock_label:
        lock_src = surface._label_path(root, lock_label)
        lock_copy = os.path.join(work, "Cargo.lock")
        # A from_specs hub's own lock is (re)made from its source manifest's
        # Cargo lock, so it keeps the versions Cargo builds with.
        seed = lock_src
        if update_locks and tag == "from_specs" and hub in surface.SPEC_SOURCES:
            seed = os.path.join(root, surface.SPEC_SOURCES[hub][1])
        shutil.copy(seed, lock_copy)
    cargo = shutil.which("cargo")
    rustc = shutil.which("rustc")
    splice_help = supported_flags(binary, "splice")
    gen_help = supported_flags(binary, "generate")
    cmd = [binary, "splice", "--output-dir", os.path.join(work, "splicing-output"),
           "--splicing-manifest", os.path.join(work, "splicing_manifest.json"),
           "--config", os.path.join(work, "config.json"), "--cargo", cargo, "--rustc", rustc,
           "--workspace-dir", os.path.join(work, "splicing-workspace")]
    if lock_copy:
        cmd += ["--cargo-lockfile", lock_copy]
    if "--repository-name" in splice_help:
        cmd += ["--repository-name", hub]
    if "--nonhermetic-root-bazel-workspace-dir" in splice_help:
        cmd += ["--nonhermetic-root-bazel-workspace-dir", root]
    if kw.get("skip_cargo_lockfile_overwrite") and "--skip-cargo-lockfile-overwrite" in splice_help:
        cmd += ["--skip-cargo-lockfile-overwrite"]
    env = dict(os.environ, CARGO_BAZEL_REPIN="", RUST_BACKTRACE="0")
    env.pop("CARGO_BAZEL_REPIN")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return [f"crate hub '{hub}': cargo-bazel splice failed:\n" + (r.stderr or r.stdout).strip()]
    metadata = os.path.join(work, "splicing-output", "metadata.json")
    spliced_lock = os.path.join(work, "splicing-output", "Cargo.lock")
    gen_lock = lock_copy or spliced_lock
    cmd = [binary, "generate", "--config", os.path.join(work, "config.json"),
           "--splicing-manifest", os.path.join(work, "splicing_manifest.json"),
           "--cargo-lockfile", gen_lock, "--repository-dir", os.path.join(work, "repo"),
           "--metadata", metadata, "--cargo", cargo, "--rustc", rustc,
           "--nonhermetic-root-bazel-workspace-dir", root,
           "--paths-to-track", os.path.join(work, "paths_to_track.json"),
           "--warnings-output-path", os.path.join(work, "warnings.json")]
    if kw.get("skip_cargo_lockfile_overwrite") and "--skip-cargo-lockfile-overwrite" in gen_help:
        cmd += ["--skip-cargo-lockfile-overwrite"]
    if kw.get("strip_internal_dependencies_from_cargo_lockfile") and "--strip-internal-dependencies-from-cargo-lockfile" in gen_help:
        cmd += ["--strip-internal-dependencies-from-cargo-lockfile"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return [f"crate hub '{hub}': cargo-bazel generate failed:\n" + (r.stderr or r.stdout).strip()]
    if lock_copy and update_locks and tag == "from_specs":
        shutil.copy(lock_copy, lock_src)
        print(f"crate_universe: wrote {os.path.relpath(lock_src, root)}")
    elif lock_copy and not filecmp.cmp(lock_src, lock_copy, shallow=False):
        problems.append(f"crate hub '{hub}': cargo-bazel rewrites {os.path.relpath(lock_src, root)} "
                        f"(diff {lock_src} {lock_copy}); Bazel would write that into the tree")
    hubs = {k.get("name", "crates") for e, t, k in mod.tags if e == surface.CRATE_EXT and t in ("from_cargo", "from_specs")}
    injected = mod.injected.get(surface.CRATE_EXT, set())
    problems += [f"crate hub '{hub}': {p}" for p in surface.generated_build_problems(os.path.join(work, "repo"), hubs, injected)]
    return problems


def hub_targets(out: str, hub: str) -> set[str]:
    path = os.path.join(out, hub, "repo", "BUILD.bazel")
    if not os.path.exists(path):
        return set()
    return set(re.findall(r'name = "([^"]+)"', open(path).read()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cargo-bazel", required=True)
    ap.add_argument("--out", default=os.path.join(ROOT, "target", "crate_universe"))
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--update-locks", action="store_true",
                    help="rewrite the from_specs hubs' lock files from their source manifests' Cargo locks")
    args = ap.parse_args(argv)
    if not os.access(args.cargo_bazel, os.X_OK):
        print(f"crate_universe: no cargo-bazel at {args.cargo_bazel}")
        return 1
    root = os.path.abspath(args.root)
    mod, ev = module_tags(root)
    problems = []
    hubs = []
    for ext_key, tag, kw in mod.tags:
        if ext_key == surface.CRATE_EXT and tag in ("from_cargo", "from_specs"):
            hubs.append(kw.get("name", "crates"))
            print(f"crate_universe: splice + generate '{hubs[-1]}' ({tag})", flush=True)
            problems += run_hub(os.path.abspath(args.cargo_bazel), root, os.path.abspath(args.out), kw, tag, mod,
                                args.update_locks)
    problems += surface.spec_problems(root, mod.tags)
    if not hubs:
        problems.append("MODULE.bazel has no crate hub")
    # The module's @hub//:crate labels against what generate produced.
    full = check.check_module(root)
    for label, where, _ in full.label_refs:
        repo, _, rest = label[1:].partition("//")
        repo = full.repo_alias.get(repo, repo)   # a hub used under a shorter name
        if repo in hubs and not any(p.startswith(f"crate hub '{repo}': cargo-bazel") for p in problems):
            name = rest.partition(":")[2]
            if where == "MODULE.bazel":
                # An annotation's crate: one of the hub's crate repositories.
                repo_dir = os.path.join(os.path.abspath(args.out), repo, "repo")
                if not any(re.fullmatch(rf"BUILD\.{re.escape(name)}-[0-9][^/]*\.bazel", f) for f in os.listdir(repo_dir)):
                    problems.append(f"{where}: crate.annotation for {name}: no such crate in the hub @{repo}")
            elif name not in hub_targets(os.path.abspath(args.out), repo):
                problems.append(f"{where}: {label}: the generated hub @{repo} has no target '{name}'")
    for p in dict.fromkeys(problems):
        print(p)
    print(f"crate_universe: {len(hubs)} hub(s), {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
