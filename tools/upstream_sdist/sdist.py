"""The pinned source distribution of apache-tvm-ffi (the peer), found on
the package index, downloaded once and checked against its sha256, and the
parts of it the test runners need extracted under a cache directory.

Upstream's own tests travel in that archive (``tests/python``,
``tests/cpp``), and so do its examples (``examples/<name>``); the runners
(tools/upstream_cpp, tools/upstream_py, tools/cmake_examples) read them
from there and never copy them into this repository.
"""

from __future__ import annotations

import hashlib
import html.parser
import json
import os
import shutil
import sys
import tarfile
import urllib.parse
import urllib.request

PEER_PROJECT = "apache-tvm-ffi"
PEER_VERSION = "0.1.15.post2"
SDIST_NAME = f"apache_tvm_ffi-{PEER_VERSION}.tar.gz"
SDIST_SHA256 = "909be9ef5af07726aa9afd38a3111abc4d86cfd5927ebedfa9166232ce7d287b"
SDIST_TOP = f"apache_tvm_ffi-{PEER_VERSION}"
DEFAULT_INDEX = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs += [v for k, v in attrs if k == "href" and v]


def sdist_url(index: str) -> str:
    """The sdist's URL from the index's simple API (PEP 691 JSON, else HTML)."""
    page = index.rstrip("/") + f"/{PEER_PROJECT}/"
    req = urllib.request.Request(page, headers={
        "Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.5"})
    with urllib.request.urlopen(req, timeout=120) as resp:
        body = resp.read()
        kind = resp.headers.get("Content-Type", "")
    if "json" in kind:
        urls = [f["url"] for f in json.loads(body)["files"] if f["filename"] == SDIST_NAME]
    else:
        parser = _Links()
        parser.feed(body.decode())
        urls = [h for h in parser.hrefs if urllib.parse.urlsplit(h).path.endswith("/" + SDIST_NAME)]
    if not urls:
        raise SystemExit(f"{SDIST_NAME} is not listed at {page}")
    return urllib.parse.urljoin(page, urls[0].split("#")[0])


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch_sdist(out: str, given: str | None, index: str) -> str:
    path = given or os.path.join(out, SDIST_NAME)
    if not os.path.exists(path):
        if given:
            raise SystemExit(f"no file {given}")
        url = sdist_url(index)
        log(f"downloading {url}")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tmp = path + ".part"
        with urllib.request.urlopen(url, timeout=300) as resp, open(tmp, "wb") as f:
            shutil.copyfileobj(resp, f)
        os.replace(tmp, path)
    digest = sha256(path)
    if digest != SDIST_SHA256:
        raise SystemExit(f"{path}: sha256 {digest}, expected {SDIST_SHA256}")
    return path


def extract_tests(sdist: str, out: str, kind: str = "cpp") -> str:
    """tests/<kind> of the sdist under out/src (extracted once per sdist and
    kind); the directory's path."""
    dest = os.path.join(out, "src")
    tests = os.path.join(dest, "tests", kind)
    stamp = os.path.join(dest, f".sha256-{kind}")
    if os.path.exists(stamp) and open(stamp).read() == SDIST_SHA256:
        return tests
    shutil.rmtree(tests, ignore_errors=True)
    prefix = f"{SDIST_TOP}/tests/{kind}/"
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix) and (m.isfile() or m.isdir())]
        for m in members:
            m.name = m.name[len(SDIST_TOP) + 1:]
        # The "data" filter (Python 3.12+, backported) refuses links and
        # paths leaving `dest`.
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(dest, members=members, **safe)
    with open(stamp, "w") as f:
        f.write(SDIST_SHA256)
    return tests


def extract_example(sdist: str, dest: str, name: str) -> str:
    """examples/<name> of the sdist, extracted afresh as the directory
    ``dest`` (whatever was there is removed first: the examples build in
    place, and each run starts from upstream's files); ``dest``'s path."""
    if not name or "/" in name or name in (".", ".."):
        raise SystemExit(f"not an example name: {name!r}")
    prefix = f"{SDIST_TOP}/examples/{name}/"
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix) and (m.isfile() or m.isdir())]
        if not members:
            raise SystemExit(f"{sdist} has no examples/{name}")
        for m in members:
            m.name = m.name[len(prefix):] or "."
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(dest, members=members, **safe)
    return dest


# Members of the sdist a tether wheel carries (upstream's public C++ headers,
# the DLPack header they include, and the licenses that cover them), as
# (path in the archive under SDIST_TOP, path under the destination).
_HEADER_TREES = (("include/tvm/ffi/", "tvm/ffi/"), ("3rdparty/dlpack/include/dlpack/", "dlpack/"))
_LICENSE_FILES = ("LICENSE", "NOTICE")


def extract_headers(sdist: str, include_dest: str, license_dest: str) -> int:
    """Upstream's ``tvm/ffi`` headers and ``dlpack/dlpack.h`` under
    ``include_dest`` and its LICENSE and NOTICE under ``license_dest`` (both
    replaced afresh); the number of headers written."""
    for sub in ("tvm", "dlpack"):
        shutil.rmtree(os.path.join(include_dest, sub), ignore_errors=True)
    shutil.rmtree(license_dest, ignore_errors=True)
    os.makedirs(license_dest)
    count = 0
    with tarfile.open(sdist) as tar:
        for m in tar.getmembers():
            if not m.name.startswith(SDIST_TOP + "/") or not m.isfile():
                continue
            rel = m.name[len(SDIST_TOP) + 1:]
            target = None
            for prefix, dest_prefix in _HEADER_TREES:
                if rel.startswith(prefix) and rel.endswith(".h") and ".." not in rel.split("/"):
                    target = os.path.join(include_dest, dest_prefix + rel[len(prefix):])
                    count += 1
            if rel in _LICENSE_FILES:
                target = os.path.join(license_dest, rel)
            if target is None:
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            src = tar.extractfile(m)
            assert src is not None, m.name
            with src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
    if count == 0 or not os.path.isfile(os.path.join(include_dest, "tvm", "ffi", "c_api.h")):
        raise SystemExit(f"{sdist} holds no tvm/ffi headers")
    return count


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    headers = sub.add_parser("headers", help="extract the headers a tether wheel carries")
    headers.add_argument("--cache", required=True, help="where the sdist is downloaded and kept")
    headers.add_argument("--sdist", help="use this copy of the sdist (still sha256-checked) instead of downloading")
    headers.add_argument("--index", default=DEFAULT_INDEX)
    headers.add_argument("--dest", required=True, help="the include directory to write tvm/ffi and dlpack into")
    headers.add_argument("--licenses", required=True, help="the directory to write upstream's LICENSE and NOTICE into")
    args = parser.parse_args(argv)
    sdist = fetch_sdist(args.cache, args.sdist, args.index)
    count = extract_headers(sdist, args.dest, args.licenses)
    log(f"{count} headers of {SDIST_NAME} under {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
