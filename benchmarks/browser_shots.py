"""Screenshots of Neo4j Browser running the ready-made queries of `cypher/explore/` (for
docs/browser.md). A docs helper, not a benchmark: it drives a headless Chromium over the
DevTools protocol, opens Browser connected with no auth, and for each query sets its
parameters (`:params {...}`), runs the file and saves `docs/img/browser-<query>.png`.

Needs a Neo4j with HTTP on (auth off, e.g. `tmem db start`), the example memory loaded,
Debian's `chromium` and `websocket-client` (`pip install websocket-client`). Re-run with:

    NEO4J_URI=bolt://127.0.0.1:7690 tmem import examples/team-dinner.json --replace
    python benchmarks/browser_shots.py --bolt bolt://127.0.0.1:7690 --http http://127.0.0.1:7476

(`--only scene,topic_map` for some of them; the defaults are the `tmem db start` ports.)
The parameters used are in PARAMS below; the recall ids are the top two scenes and items of
`tmem recall team-dinner "Can you suggest a good sushi place for our group outing?"
--speaker Alice --json`. Browser gets a style sheet (`:style`, STYLE below) so nodes show
their titles, turn ids, item ids and channels instead of `memory_id`, in the colours of `tmem viz`.
"""
from __future__ import annotations

import argparse
import base64
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPLORE = ROOT / "cypher" / "explore"
MEMORY = "team-dinner"

# s1 / i1: Priya's shellfish reaction and the allergy item; s3 / i5: the team dinner and the
# connected item (the top two scenes and items of the sushi recall).
PARAMS = {
    "topic_map": {"memory_id": MEMORY},
    "timeline": {"memory_id": MEMORY},
    "scene": {"memory_id": MEMORY, "scene_id": "s1"},
    "item_triggers": {"memory_id": MEMORY, "item_id": "i1"},
    "recall_path": {"memory_id": MEMORY, "scene_ids": ["s1", "s3"], "item_ids": ["i1", "i5"]},
}

# the table of item_triggers is wide (item, channel, trigger, rationale, scenes)
WIDTH = {"item_triggers": 1900}

STYLE = """
node { diameter: 50px; color: #A5ABB6; border-color: #9AA1AC; text-color-internal: #FFFFFF; font-size: 10px; }
node.Topic { color: #F79767; border-color: #F36924; diameter: 80px; caption: '{title}'; }
node.Scene { color: #57C7A0; border-color: #3FA57F; diameter: 70px; caption: '{title}'; }
node.Item { color: #8DCC93; border-color: #5DB665; text-color-internal: #2A2C34; diameter: 45px; caption: '{id}'; }
node.Trigger { color: #C9CED6; border-color: #A5ABB6; text-color-internal: #2A2C34; diameter: 45px; caption: '{channel}'; }
node.Turn { color: #68BDF6; border-color: #5CA8DB; diameter: 45px; caption: '{id}'; }
relationship { color: #A5ABB6; shaft-width: 1px; font-size: 8px; caption: '<type>'; }
"""


def cypher_literal(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(cypher_literal(v) for v in value) + "]"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return json.dumps(value)


def query_text(name: str) -> str:
    """The file without its `// :param` lines (those are set with `:params`)."""
    lines = (EXPLORE / f"{name}.cypher").read_text().splitlines()
    return "\n".join(l for l in lines if not l.lstrip().startswith("// :param")).strip()


class Chromium:
    def __init__(self, binary: str, port: int, width: int, height: int):
        import websocket  # websocket-client

        self.profile = tempfile.mkdtemp(prefix="browser-shots-")
        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={width},{height}",
             f"--remote-debugging-port={port}", "--remote-allow-origins=*",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tabs = None
        for _ in range(100):
            try:
                tabs = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
                break
            except OSError:
                time.sleep(0.2)
        if tabs is None:
            self.close()
            raise RuntimeError("chromium did not open its DevTools port")
        page = next(t for t in tabs if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"])
        self.n = 0
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def call(self, method: str, **params):
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.n:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result")

    def js(self, expr: str):
        res = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"JS error: {res['exceptionDetails']}")
        return res["result"].get("value")

    def wait_for(self, expr: str, timeout: float = 30.0, step: float = 0.5):
        end = time.time() + timeout
        while time.time() < end:
            value = self.js(expr)
            if value:
                return value
            time.sleep(step)
        raise TimeoutError(expr)

    def screenshot(self, path: Path, clip: dict | None = None):
        params = {"format": "png"}
        if clip:
            params["clip"] = {**clip, "scale": 1}
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", **params)["data"]))

    def close(self):
        try:
            self.ws.close()
        except OSError as exc:
            print(f"closing the DevTools socket: {exc}", file=sys.stderr)
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


class Browser:
    """Neo4j Browser in a Chromium tab."""

    def __init__(self, chrome: Chromium):
        self.c = chrome

    def open(self, http: str, bolt: str):
        url = f"{http.rstrip('/')}/browser/?" + urllib.parse.urlencode(
            {"dbms": bolt, "preselectAuthMethod": "NO_AUTH"})
        self.c.call("Page.navigate", url=url)
        self.c.wait_for("document.body && document.body.innerText.includes('Connected to Neo4j')"
                        " && !!document.querySelector('[data-testid=activeEditor] textarea')", 60)
        # the product-usage banner takes room above the frames: close it if present
        self.c.js("""(() => { for (const el of document.querySelectorAll('div')) {
            if (el.children.length < 4 && el.innerText && el.innerText.startsWith('To help make Neo4j Browser better')) {
              const b = el.querySelector('button, [role=button], svg'); if (b) { b.dispatchEvent(new MouseEvent('click', {bubbles: true})); return true; } } }
            return false })()""")

    def frames(self) -> int:
        return self.c.js("document.querySelectorAll('[data-testid=frame]').length")

    def run(self, text: str):
        """Paste `text` into the main editor (a paste keeps it verbatim: typing it would let
        the editor auto-indent every line) and press its Run button."""
        self.c.js(f"""(() => {{
            const ta = document.querySelector('[data-testid=activeEditor] textarea'); ta.focus();
            const dt = new DataTransfer(); dt.setData('text/plain', {json.dumps(text)});
            ta.dispatchEvent(new ClipboardEvent('paste', {{clipboardData: dt, bubbles: true, cancelable: true}}));
            document.querySelector('[data-testid="editor-Run"]').click(); }})()""")

    def run_and_wait(self, text: str, timeout: float = 30.0) -> str:
        """Run a command, wait for its frame (the top one) to finish; return its text."""
        before = self.frames()
        self.run(text)
        self.c.wait_for(f"document.querySelectorAll('[data-testid=frame]').length > {before}"
                        " || document.querySelectorAll('[data-testid=frame]').length == 1", timeout)
        return self.c.wait_for("""(() => { const f = document.querySelector('[data-testid=frame]');
            if (!f) return ''; const t = f.innerText;
            const done = f.querySelector('svg g.node, table, [data-testid=frameStatusbar], pre') || /error/i.test(t);
            return done ? t : ''; })()""", timeout)

    def clear(self):
        self.run(":clear")
        self.c.wait_for("document.querySelectorAll('[data-testid=frame]').length == 0", 10)


def shoot(browser: Browser, name: str, out: Path, settle: float, width: int, height: int) -> str:
    c = browser.c
    params = PARAMS[name]
    c.call("Emulation.setDeviceMetricsOverride", width=WIDTH.get(name, width), height=height,
           deviceScaleFactor=1, mobile=False)
    browser.clear()
    browser.run_and_wait(":params {" + ", ".join(f"{k}: {cypher_literal(v)}" for k, v in params.items()) + "}")
    browser.clear()
    text = browser.run_and_wait(query_text(name))
    if re.search(r"\b(error|exception)\b", text, re.IGNORECASE) and "Neo." in text:
        raise RuntimeError(f"{name}: Browser reports an error:\n{text[:800]}")
    if "no changes, no records" in text:
        raise RuntimeError(f"{name}: no records (is memory {MEMORY!r} loaded?)")
    graph = c.js("!!document.querySelector('[data-testid=frame] svg g.node')")
    time.sleep(settle if graph else 1.0)  # let the force layout settle
    rect = c.js("""(() => { const r = document.querySelector('[data-testid=frame]').getBoundingClientRect();
        return {x: r.x, y: r.y, width: r.width, height: r.height}; })()""")
    path = out / f"browser-{name}.png"
    c.screenshot(path, rect)
    summary = c.js("""(() => { const f = document.querySelector('[data-testid=frame]');
        const s = f.querySelector('[data-testid=frameStatusbar]');
        return (s ? s.innerText : '') + ' | nodes=' + f.querySelectorAll('svg g.node').length
               + ' rows=' + f.querySelectorAll('table tr, [role=row]').length; })()""")
    return f"{path} ({path.stat().st_size // 1024} KB) {summary.strip()}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bolt", default="bolt://127.0.0.1:7687")
    ap.add_argument("--http", default="http://127.0.0.1:7474")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    ap.add_argument("--only", default=",".join(PARAMS), help="comma-separated query names")
    ap.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    ap.add_argument("--port", type=int, default=9341, help="DevTools port")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=900)
    ap.add_argument("--settle", type=float, default=6.0, help="seconds for a graph layout to settle")
    args = ap.parse_args(argv)
    if not args.chromium:
        sys.exit("chromium is not installed")
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in PARAMS]
    if unknown:
        sys.exit(f"unknown queries: {unknown}; known: {list(PARAMS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    chrome = Chromium(args.chromium, args.port, args.width, args.height)
    try:
        browser = Browser(chrome)
        browser.open(args.http, args.bolt)
        browser.run_and_wait(":style " + " ".join(STYLE.split()))
        for name in names:
            print(shoot(browser, name, args.out, args.settle, args.width, args.height), flush=True)
    finally:
        chrome.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
