"""Checks the built documentation site in a real browser.

``python tools/docs/check_site.py SITE_DIR OUT_DIR`` serves SITE_DIR on a
loopback port, then:

* reads every HTML file of the site and fails on an internal link or image
  that points at no file, or (in the Sphinx pages) at an anchor the target
  page lacks;
* opens every Sphinx page in headless Chromium (Debian's ``chromium``,
  driven over the DevTools protocol) and fails on a console error, an
  uncaught exception, a failed request or an image that did not load;
* saves screenshots of the index and two guide pages into OUT_DIR.

It exits nonzero, naming each problem, when anything fails.
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import websocket  # websocket-client, pinned in docs/requirements.txt

SCREENSHOTS = {
    "index.html": "index.png",
    "guides/python.html": "guide-python.png",
    "guides/cpp.html": "guide-cpp.png",
}


class LinkParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])
        if tag == "a" and a.get("href"):
            self.links.append(("href", a["href"]))
        if tag in ("img", "script") and a.get("src"):
            self.links.append(("src", a["src"]))
        if tag == "link" and a.get("href") and a.get("rel") in ("stylesheet", "icon"):
            self.links.append(("href", a["href"]))


@functools.lru_cache(maxsize=None)
def parse(path: Path) -> LinkParser:
    p = LinkParser()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    return p


def check_links(site: Path) -> list[str]:
    problems = []
    for page in sorted(site.rglob("*.html")):
        in_rustdoc = "rustdoc" in page.relative_to(site).parts
        for kind, url in parse(page).links:
            parts = urllib.parse.urlsplit(url)
            if parts.scheme or url.startswith("//") or url.startswith("javascript:"):
                continue  # external: not this site's to check
            target = page if not parts.path else (page.parent / urllib.parse.unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            rel = page.relative_to(site)
            if not target.exists():
                problems.append(f"{rel}: {kind} {url!r} points at no file")
                continue
            if site.resolve() not in target.parents and target != site.resolve():
                problems.append(f"{rel}: {kind} {url!r} leaves the site")
                continue
            if parts.fragment and not in_rustdoc and target.suffix == ".html":
                if "rustdoc" in target.relative_to(site.resolve()).parts:
                    continue
                if parts.fragment not in parse(target).ids:
                    problems.append(f"{rel}: {kind} {url!r}: no anchor #{parts.fragment}")
    return problems


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(site: Path):
    handler = functools.partial(Quiet, directory=str(site))
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def find_chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("check_site: no chromium on PATH (Debian: apt-get install chromium)")


class Browser:
    def __init__(self) -> None:
        self.profile = tempfile.mkdtemp(prefix="tether-docs-chromium-")
        self.proc = subprocess.Popen(
            [find_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--remote-debugging-port=0", f"--user-data-dir={self.profile}",
             "--window-size=1280,1600", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.time() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            if time.time() > deadline or self.proc.poll() is not None:
                self.close()
                raise SystemExit("check_site: chromium did not start")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        req = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(req, timeout=30) as r:
            target = json.load(r)
        self.ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=60)
        self.next_id = 0
        self.events: list[dict] = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=1280, height=1600, deviceScaleFactor=1, mobile=False)

    def call(self, method: str, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_for(self, method: str, timeout: float = 60) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            for i, e in enumerate(self.events):
                if e["method"] == method:
                    del self.events[i]
                    return
            self.ws.settimeout(max(0.1, deadline - time.time()))
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
        raise RuntimeError(f"timed out waiting for {method}")

    def visit(self, url: str) -> list[str]:
        """Loads ``url``; returns the console errors, failed loads and broken images."""
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        # Let late scripts (search index, highlighting) report.
        self.call("Runtime.evaluate", expression="new Promise(r => setTimeout(r, 300))", awaitPromise=True)
        problems = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                problems.append(f"console {p['type']}: {text}")
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                problems.append(f"uncaught exception: {d.get('exception', {}).get('description', d.get('text'))}")
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                entry = p["entry"]
                problems.append(f"log error: {entry.get('text')} {entry.get('url', '')}".strip())
            elif m == "Network.loadingFailed" and not p.get("canceled"):
                problems.append(f"failed request: {p.get('errorText')} ({p.get('type')})")
        broken = self.call(
            "Runtime.evaluate",
            expression="JSON.stringify(Array.from(document.images)"
                       ".filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src))",
            returnByValue=True,
        )["result"]["value"]
        problems += [f"image did not load: {src}" for src in json.loads(broken)]
        return problems

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    site, out = Path(argv[1]).resolve(), Path(argv[2]).resolve()
    if not (site / "index.html").exists():
        print(f"check_site: {site} has no index.html (run `make docs` first)")
        return 1
    out.mkdir(parents=True, exist_ok=True)
    problems = check_links(site)
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                   if "rustdoc" not in p.relative_to(site).parts and "_sources" not in p.parts)
    server = serve(site)
    browser = Browser()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        for page in pages:
            problems += [f"{page}: {p}" for p in browser.visit(base + page)]
            if page in SCREENSHOTS:
                browser.screenshot(out / SCREENSHOTS[page])
        for page in ("rustdoc/tether_core/index.html",):
            problems += [f"{page}: {p}" for p in browser.visit(base + page)]
    finally:
        browser.close()
        server.shutdown()
    missing = [name for name in SCREENSHOTS.values() if not (out / name).exists()]
    problems += [f"screenshot not taken: {m}" for m in missing]
    for p in problems:
        print(f"check_site: {p}")
    print(f"check_site: {len(pages)} pages opened, {len(SCREENSHOTS)} screenshots in {out}, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
