"""Tests of the workflow check: a Windows bash step passing `//...` to Bazel
is reported unless MSYS path conversion is off, Bazel on Windows needs a
short output root, steps limited to other systems are not taken on Windows,
and the repository's own workflow passes."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check_shells  # noqa: E402

BAZEL_JOB = """
jobs:
  bazel:
    strategy:
      matrix:
        include:
          - os: ubuntu-24.04
          - os: windows-2022
            startup: --output_user_root=C:/_b
    runs-on: ${{{{ matrix.os }}}}
{job_env}
    steps:
      - name: test
        shell: bash
        run: bazelisk ${{{{ matrix.startup }}}} test //...
      - name: linux only
        if: runner.os == 'Linux'
        shell: bash
        run: bazel build //pkg:target
"""


def problems(tmp_path, text):
    path = tmp_path / "ci.yml"
    path.write_text(text)
    return check_shells.check_workflow(str(path))


def test_windows_bash_rewrites_labels(tmp_path):
    found = problems(tmp_path, BAZEL_JOB.format(job_env=""))
    assert len(found) == 1, found
    assert "Windows" in found[0] and "//..." in found[0] and "MSYS_NO_PATHCONV" in found[0]


def test_conversion_off_in_job_env(tmp_path):
    env = '    env:\n      MSYS_NO_PATHCONV: "1"\n'
    assert problems(tmp_path, BAZEL_JOB.format(job_env=env)) == []


def test_bazel_on_windows_needs_short_output_root(tmp_path):
    text = BAZEL_JOB.format(job_env='    env:\n      MSYS_NO_PATHCONV: "1"\n').replace(
        "            startup: --output_user_root=C:/_b\n", "")
    found = problems(tmp_path, text)
    assert len(found) == 1 and "--output_user_root" in found[0], found


def test_pwsh_default_on_windows_is_not_rewritten(tmp_path):
    text = BAZEL_JOB.format(job_env="").replace("        shell: bash\n        run: bazelisk", "        run: bazelisk")
    assert problems(tmp_path, text) == []


def test_matrix_axes_expand(tmp_path):
    combos = check_shells.combinations({"matrix": {"os": ["a", "b"], "py": ["3.9"], "include": [{"os": "b", "x": 1}]}})
    assert combos == [{"os": "a", "py": "3.9"}, {"os": "b", "py": "3.9", "x": 1}]


def test_repository_workflow_passes():
    paths = [os.path.join(check_shells.ROOT, ".github", "workflows", n)
             for n in os.listdir(os.path.join(check_shells.ROOT, ".github", "workflows")) if n.endswith((".yml", ".yaml"))]
    assert paths
    assert [p for path in paths for p in check_shells.check_workflow(path)] == []
