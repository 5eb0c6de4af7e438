"""Checks of the GitHub workflow's steps as each runner will run them.

For every job, the matrix is expanded and each step is taken on each
operating system it can run on (`runs-on`, with `${{ matrix.* }}`
substituted, and the step's `if: runner.os ...`). Then:

* a `run:` under bash on Windows (Git for Windows' MSYS bash) rewrites
  arguments that look like POSIX paths before a native program sees them:
  `//...` becomes `/...`, `/std:c++17` a file path. Such a step needs
  MSYS_NO_PATHCONV=1 (or MSYS2_ARG_CONV_EXCL) in its, its job's or the
  workflow's env;
* a Bazel command on Windows needs a short `--output_user_root` (MSVC's
  tools fail past 260 characters, and Bazel's default root is deep in the
  user profile);
* a step's shell must exist on its runner (`pwsh`/`cmd` only on Windows
  unless installed; `cmd` nowhere else).

Usage: check_shells.py [WORKFLOW...] (default: .github/workflows/*.yml).
Prints one line per problem; exits 1 if there is any.
"""

from __future__ import annotations

import glob
import itertools
import os
import re
import sys

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_EXPR = re.compile(r"\$\{\{\s*matrix\.([A-Za-z0-9_-]+)\s*\}\}")
# Arguments MSYS rewrites: a word starting with one or two slashes followed
# by a name character (//..., //pkg:t, /std:c++17, /W4).
_POSIX_LIKE = re.compile(r"(?:^|[\s=])(//[\w.:/-]*|/[A-Za-z][\w:+.-]*)")
_BAZEL = re.compile(r"(?:^|[\s;&|(])(bazel|bazelisk)(?:\.exe)?\s")


def runner_os(label: str) -> str:
    label = label.lower()
    if "windows" in label:
        return "Windows"
    if "macos" in label or "mac" in label.split("-"):
        return "macOS"
    return "Linux"


def combinations(strategy: dict | None) -> list[dict]:
    matrix = (strategy or {}).get("matrix") or {}
    if isinstance(matrix, str):
        return [{}]
    axes = {k: v for k, v in matrix.items() if k not in ("include", "exclude") and isinstance(v, list)}
    combos = [dict(zip(axes, vals)) for vals in itertools.product(*axes.values())] if axes else []
    for exc in matrix.get("exclude") or []:
        combos = [c for c in combos if not all(c.get(k) == v for k, v in exc.items())]
    for inc in matrix.get("include") or []:
        matched = False
        for c in combos:
            if all(c.get(k) == v for k, v in inc.items() if k in axes):
                c.update({k: v for k, v in inc.items() if k not in axes})
                matched = True
        if not matched:
            combos.append(dict(inc))
    return combos or [{}]


def substitute(text: str, combo: dict) -> str:
    return _EXPR.sub(lambda m: str(combo.get(m.group(1), "")), text)


def step_runs_on(step_if: str | None, os_name: str) -> bool:
    if not step_if:
        return True
    for op, value in re.findall(r"runner\.os\s*(==|!=)\s*'([^']+)'", step_if):
        if op == "==" and value != os_name:
            return False
        if op == "!=" and value == os_name:
            return False
    return True


def _env_disables_conversion(*envs) -> bool:
    for env in envs:
        env = env or {}
        if str(env.get("MSYS_NO_PATHCONV", "")) == "1" or env.get("MSYS2_ARG_CONV_EXCL"):
            return True
    return False


def check_workflow(path: str) -> list[str]:
    with open(path) as f:
        wf = yaml.safe_load(f)
    rel = os.path.relpath(path, ROOT)
    problems = []
    wf_env = wf.get("env") or {}
    wf_shell = ((wf.get("defaults") or {}).get("run") or {}).get("shell")
    for job_id, job in (wf.get("jobs") or {}).items():
        job_shell = ((job.get("defaults") or {}).get("run") or {}).get("shell") or wf_shell
        for combo in combinations(job.get("strategy")):
            runs_on = job.get("runs-on", "")
            labels = runs_on if isinstance(runs_on, list) else [runs_on]
            os_name = runner_os(" ".join(substitute(str(x), combo) for x in labels))
            for i, step in enumerate(job.get("steps") or []):
                if "run" not in step or not step_runs_on(step.get("if"), os_name):
                    continue
                name = step.get("name") or f"step {i + 1}"
                where = f"{rel}: job {job_id} ({os_name}{', ' + str(combo) if combo else ''}), step '{name}'"
                shell = step.get("shell") or job_shell or ("pwsh" if os_name == "Windows" else "bash")
                run = substitute(str(step["run"]), combo)
                if shell == "cmd" and os_name != "Windows":
                    problems.append(f"{where}: shell cmd exists on Windows only")
                if os_name == "Windows" and shell.split()[0] in ("bash", "sh"):
                    if not _env_disables_conversion(wf_env, job.get("env"), step.get("env")):
                        args = sorted(set(_POSIX_LIKE.findall(run)))
                        if args:
                            problems.append(f"{where}: bash on Windows rewrites {', '.join(args)} as MSYS paths; "
                                            "set MSYS_NO_PATHCONV=1 and MSYS2_ARG_CONV_EXCL='*' (or use pwsh)")
                if os_name == "Windows" and _BAZEL.search(" " + run) and "--output_user_root" not in run:
                    problems.append(f"{where}: Bazel on Windows without a short --output_user_root "
                                    "(paths past MAX_PATH fail under MSVC)")
    return problems


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    paths = argv or sorted(glob.glob(os.path.join(ROOT, ".github", "workflows", "*.y*ml")))
    if not paths:
        print("workflow check: no workflow found")
        return 1
    problems = [p for path in paths for p in check_workflow(path)]
    for p in problems:
        print(p)
    print(f"workflow check: {len(paths)} workflow(s), {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
