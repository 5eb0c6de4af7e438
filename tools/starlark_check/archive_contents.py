"""A module extension's downloads checked against what they really hold.

A repository an extension makes with http_archive (//bazel:tvm_ffi.bzl's
@tvm_ffi_headers) gets a BUILD file from this repository; whether its
globs and files exist in the archive, and whether the archive at the pinned
URL has the pinned sha256, only shows when Bazel fetches it on a user's
machine. check.py calls archive_problems for each such repository: the
archive comes from a cache folder (target/upstream, where the upstream test
runners keep the same sdist, or target/bazel_archives), else is downloaded
from the pinned URL into target/bazel_archives; its sha256 is compared with
the pin, and the BUILD file is evaluated against the archive's files after
strip_prefix, so a glob matching nothing or a named file that is not there
is reported.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _fetch(url: str, cache_dirs: list[str], download_dir: str) -> str:
    """The archive of `url`: a cached copy of the same file name, else
    downloaded into download_dir (OSError when it cannot be)."""
    name = os.path.basename(urllib.parse.urlsplit(url).path)
    for d in cache_dirs:
        if os.path.isfile(os.path.join(d, name)):
            return os.path.join(d, name)
    os.makedirs(download_dir, exist_ok=True)
    path = os.path.join(download_dir, name)
    tmp = f"{path}.{os.getpid()}.part"
    with urllib.request.urlopen(url, timeout=300) as resp, open(tmp, "wb") as f:
        shutil.copyfileobj(resp, f)
    os.replace(tmp, path)
    return path


def _members(path: str, kind: str) -> list[str]:
    """The archive's regular files."""
    if kind in ("zip", "whl", "jar") or path.endswith((".zip", ".whl")):
        with zipfile.ZipFile(path) as z:
            return [i.filename for i in z.infolist() if not i.is_dir()]
    with tarfile.open(path, "r:*") as t:
        return [m.name for m in t.getmembers() if m.isfile()]


def archive_problems(repo: str, info: dict, build_file: str, root: str, evaluate,
                     cache_dirs: list[str], download_dir: str) -> list[str]:
    """Problems of the repository `repo` made by http_archive(**info) with
    the BUILD file `build_file` (a path under root). `evaluate(files,
    build_path)` evaluates a BUILD file against a file list and returns its
    problems (check.py's evaluator)."""
    where = f"{build_file} (@{repo})"
    urls = list(info.get("urls") or []) + ([info["url"]] if info.get("url") else [])
    if not urls:
        return []  # reported where the rule is called
    try:
        path = _fetch(urls[0], cache_dirs, download_dir)
    except OSError as e:
        return [f"{where}: cannot fetch {urls[0]} to check the BUILD file against it: {e}"]
    pinned = info.get("sha256")
    if pinned and _sha256(path) != pinned:
        return [f"{where}: {urls[0]} has sha256 {_sha256(path)}, not the pinned {pinned}"]
    prefix = (info.get("strip_prefix") or "").strip("/")
    files = []
    for m in _members(path, info.get("type", "")):
        if not prefix:
            files.append(m)
        elif m.startswith(prefix + "/"):
            files.append(m[len(prefix) + 1:])
    if prefix and not files:
        return [f"{where}: strip_prefix {prefix!r} matches no file of {os.path.basename(path)}"]
    # Bazel puts the BUILD file at the top of the stripped archive.
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(os.path.join(root, build_file), os.path.join(tmp, "BUILD.bazel"))
        files = [f for f in files if f != "BUILD.bazel"] + ["BUILD.bazel"]
        return [f"{where}: {p.split(': ', 1)[1] if ': ' in p else p}" for p in evaluate(tmp, files, repo)]
