"""The pinned source distribution of apache-tvm-ffi, downloaded from PyPI
and checked against its sha256, unpacked once under a cache directory.

Upstream's tests travel in that archive (``tests/python``, ``tests/cpp``);
the test runners read them from there and never copy them into this
repository.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tarfile
import urllib.request
from pathlib import Path

VERSION = "0.1.15.post2"
FILENAME = f"apache_tvm_ffi-{VERSION}.tar.gz"
SHA256 = "909be9ef5af07726aa9afd38a3111abc4d86cfd5927ebedfa9166232ce7d287b"
INDEX = "https://pypi.org/simple/apache-tvm-ffi/"


def _sdist_url() -> str:
    req = urllib.request.Request(INDEX, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        files = json.load(resp)["files"]
    for f in files:
        if f["filename"] == FILENAME:
            return f["url"]
    raise RuntimeError(f"{FILENAME} is not listed on {INDEX}")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def unpacked(cache: Path) -> Path:
    """The top directory of the unpacked archive (downloaded when missing)."""
    cache.mkdir(parents=True, exist_ok=True)
    top = cache / f"apache_tvm_ffi-{VERSION}"
    if (top / "tests").is_dir():
        return top
    archive = cache / FILENAME
    if not archive.is_file() or _sha256(archive) != SHA256:
        tmp = archive.with_suffix(".part")
        with urllib.request.urlopen(_sdist_url(), timeout=300) as resp, open(tmp, "wb") as out:
            shutil.copyfileobj(resp, out)
        got = _sha256(tmp)
        if got != SHA256:
            tmp.unlink()
            raise RuntimeError(f"{FILENAME}: sha256 {got} does not match the pinned {SHA256}")
        tmp.replace(archive)
    with tarfile.open(archive) as tar:
        root = cache.resolve()
        for member in tar.getmembers():  # refuse members that would land outside the cache
            dest = (cache / member.name).resolve()
            if root not in dest.parents and dest != root:
                raise RuntimeError(f"{FILENAME}: member {member.name!r} escapes the cache directory")
            if member.issym() or member.islnk():
                raise RuntimeError(f"{FILENAME}: member {member.name!r} is a link")
        tar.extractall(cache)
    return top


if __name__ == "__main__":
    print(unpacked(Path(sys.argv[1] if len(sys.argv) > 1 else os.path.join("target", "upstream"))))
