"""A real browser for the HTML report's scenarios (test_html.py): headless Chromium (Debian's
`chromium`, which scripts/test installs) opens a page from disk with the network off and
hands back the DOM after the page's script ran. The page writes its own state into the DOM
(report.js: data-* on <body>, each bar, box and cell), so --dump-dom is all the protocol
needed. The network is off three ways: every host name resolves to nothing
(--host-resolver-rules), every request goes to a proxy that is not there, and the page's own
Content-Security-Policy (default-src 'none'); the page counts what it fetched itself
(resource timing) and every error, console.error and policy violation."""
import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser

from harness import Skip, check, lift_memory_limit

NO_NETWORK = ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
              "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>"]


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise Skip("no chromium on PATH (Debian's `chromium` package; scripts/test installs it)")


def run_chromium(args, url, timeout=60):
    with tempfile.TemporaryDirectory() as profile:
        argv = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
                "--enable-logging=stderr", "--v=0", *NO_NETWORK, *args, url]
        # Chromium reserves far more address space than the runner's RLIMIT_AS allows.
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=lift_memory_limit)


class Element:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, attrs, parent, [], ""

    def all_text(self):
        return self.text + "".join(c.all_text() for c in self.children)


class Dom(HTMLParser):
    """Every element with its attributes and text, in document order."""
    VOID = {"meta", "input", "br", "img", "link", "hr", "rect", "path", "line"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {}, None)
        self.at, self.elements = self.root, []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        e = Element(tag, dict(attrs), self.at)
        self.at.children.append(e)
        self.elements.append(e)
        if tag not in self.VOID:
            self.at = e

    def handle_startendtag(self, tag, attrs):
        e = Element(tag, dict(attrs), self.at)
        self.at.children.append(e)
        self.elements.append(e)

    def handle_endtag(self, tag):
        e = self.at
        while e is not self.root and e.tag != tag:
            e = e.parent
        if e is not self.root:
            self.at = e.parent

    def handle_data(self, data):
        self.at.text += data

    def find(self, tag=None, **attrs):
        """Elements of tag (None: any) whose attributes equal attrs (class_: holds the
        class)."""
        out = []
        for e in self.elements:
            if tag and e.tag != tag:
                continue
            ok = True
            for k, v in attrs.items():
                if k == "class_":
                    ok = ok and v in (e.attrs.get("class") or "").split()
                else:
                    ok = ok and e.attrs.get(k.replace("_", "-")) == v
            if ok:
                out.append(e)
        return out


def open_page(path, fragment="", size="1280,800"):
    """The page's DOM after its script ran in a window of size, checked for what every page
    must be: rendered, no error, nothing fetched, nothing the browser refused, no wider than
    the window."""
    url = "file://" + os.path.abspath(path) + ("#" + fragment if fragment else "")
    r = run_chromium(["--dump-dom", f"--window-size={size}"], url)
    check(r.returncode == 0, f"chromium failed on {path} (rc {r.returncode}): {r.stderr[-2000:]}")
    dom = Dom(r.stdout)
    body = dom.find("body")
    check(body and body[0].attrs.get("data-ready") == "1",
          f"{path}: the page's script did not finish: "
          f"{body[0].attrs.get('data-error-text') if body else ''}\n{r.stderr[-3000:]}")
    body = body[0].attrs
    check(body.get("data-errors") == "0", f"{path}: errors in the page: {body.get('data-error-text')}")
    check(body.get("data-resources") == "0", f"{path}: the page fetched "
          f"{body.get('data-resources')} resources")
    console = [line for line in r.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    check(not console, f"{path}: console messages: {console}")
    refused = [line for line in r.stderr.splitlines() if "Content Security Policy" in line]
    check(not refused, f"{path}: refused by the page's policy: {refused}")
    check(body.get("data-fits") == "1", f"{path}: wider than a {size} window")
    return dom, body


def screenshot(path, out, fragment="", size="1280,800"):
    """A PNG of the page at size (the first screen; 1280x800 is the laptop the issue names)."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    url = "file://" + os.path.abspath(path) + ("#" + fragment if fragment else "")
    r = run_chromium(["--hide-scrollbars", f"--window-size={size}", f"--screenshot={out}"], url)
    check(r.returncode == 0 and os.path.getsize(out) > 1000, f"no screenshot of {path}: "
          f"{r.stderr[-2000:]}")
