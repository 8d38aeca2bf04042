"""The documentation site in a real browser: every page loads, every formula is typeset, no
console error, and every link inside the site reaches an existing page and anchor.

The site is built with ``mkdocs build --strict`` into a temporary folder (once per run, the
``docs_build`` fixture of tests/package/conftest.py, shared with test_docs.py), served on
127.0.0.1 by :mod:`http.server` in a thread, and opened page by page in headless Chromium
(the system's ``chromium`` and ``chromium-driver`` packages, driven by selenium).  MathJax
is served with the site (``docs/js/mathjax/``), so the check runs offline; a page that
asked for a script from another host would fail it.

Skipped, with the reason, when Chromium, its driver, selenium or MkDocs is missing.  On
Debian: ``apt-get install -y chromium chromium-driver`` and
``pip install selenium`` (in the ``test`` extra).
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver",)

# The checks run in the page once MathJax has finished typesetting.  Raw delimiters are
# looked for in the rendered text outside code (a code sample may show a backslash).
PAGE_STATE = r"""
const done = arguments[arguments.length - 1];
const report = () => {
  const main = document.querySelector('[role="main"]') || document.body;
  const copy = main.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style, mjx-container, mjx-assistive-mml')
      .forEach(e => e.remove());
  const text = copy.textContent;
  const raw = ['\\(', '\\)', '\\[', '\\]', '$$'].filter(d => text.includes(d));
  const spans = Array.from(document.querySelectorAll('.arithmatex'));
  const untypeset = spans.filter(s => !s.querySelector('mjx-container'))
                         .map(s => s.textContent.slice(0, 80));
  const errors = Array.from(document.querySelectorAll(
      'mjx-merror, mjx-container [style*="color: red"], mjx-container [data-mjx-error]'))
      .map(e => (e.closest('mjx-container').parentElement || e).textContent.slice(0, 80));
  const items = (window.MathJax && MathJax.startup && MathJax.startup.document)
      ? Array.from(MathJax.startup.document.math) : [];
  const empty = items.filter(m => !String(m.math).trim()).length;
  const external = Array.from(document.querySelectorAll('script[src], link[href]'))
      .map(e => e.src || e.href).filter(u => u && !u.startsWith(location.origin));
  done({
    ready: document.readyState,
    title: document.title,
    mathjax: !!(window.MathJax && window.MathJax.startup),
    formulas: spans.length,
    typeset: document.querySelectorAll('.arithmatex mjx-container').length,
    untypeset: untypeset, empty: empty, raw: raw, errors: errors, external: external,
    ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id),
    links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
  });
};
if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
  MathJax.startup.promise.then(report, e => done({failed: String(e)}));
} else {
  report();
}
"""


def _which(names: tuple[str, ...]) -> str | None:
    return next((p for n in names if (p := shutil.which(n))), None)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib name)
        pass


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    browser_path, driver_path = _which(BROWSERS), _which(DRIVERS)
    if browser_path is None or driver_path is None:
        pytest.skip("Chromium or chromedriver is not installed "
                    "(apt-get install -y chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium is not installed (pip install selenium)")
    options = webdriver.ChromeOptions()
    options.binary_location = browser_path
    profile = tmp_path_factory.mktemp("chromium-profile")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=driver_path)
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def served_site(browser, docs_build):
    site = docs_build  # one strict build per run, shared with test_docs.py (conftest.py)
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _page_url(base: str, site: Path, page: Path) -> str:
    rel = page.relative_to(site).as_posix()
    return urljoin(base, rel[: -len("index.html")] if rel.endswith("index.html") else rel)


@pytest.mark.slow
def test_every_page_loads_typesets_and_logs_no_error(served_site, browser):
    site, base = served_site
    pages = sorted(p for p in site.rglob("*.html") if "js" not in p.relative_to(site).parts)
    # the nav of mkdocs.yml has ~30 pages; far fewer means the build or the walk broke
    assert len(pages) >= 25, [p.relative_to(site).as_posix() for p in pages]
    problems: list[str] = []
    ids: dict[str, set[str]] = {}
    links: list[tuple[str, str]] = []
    formulas = 0
    for page in pages:
        url = _page_url(base, site, page)
        browser.get(url)
        state = browser.execute_async_script(PAGE_STATE)
        name = page.relative_to(site).as_posix()
        if "failed" in state:
            problems.append(f"{name}: MathJax failed: {state['failed']}")
            continue
        if state["ready"] != "complete" or not state["title"]:
            problems.append(f"{name}: not loaded ({state['ready']!r}, title {state['title']!r})")
        if not state["mathjax"]:
            problems.append(f"{name}: MathJax did not start")
        if state["untypeset"] or state["typeset"] < state["formulas"]:
            problems.append(f"{name}: {state['formulas'] - state['typeset']} formulas not "
                            f"typeset, e.g. {state['untypeset'][:3]}")
        if state["empty"]:
            problems.append(f"{name}: {state['empty']} empty formulas (a lost .. math:: body)")
        if state["raw"]:
            problems.append(f"{name}: raw TeX delimiters {state['raw']} left in the text")
        if state["errors"]:
            problems.append(f"{name}: TeX errors in {state['errors'][:3]}")
        if state["external"]:
            problems.append(f"{name}: loads from another host: {state['external'][:3]}")
        for entry in browser.get_log("browser"):
            if entry["level"] in ("SEVERE", "WARNING"):
                problems.append(f"{name}: console {entry['level']}: {entry['message'][:200]}")
        formulas += state["typeset"]
        ids[url] = set(state["ids"])
        links += [(name, href) for href in state["links"]]
    for name, href in links:
        target, fragment = urldefrag(href)
        if not target.startswith(base):
            continue  # another site (the docs link to papers and repositories)
        path = urlparse(target).path
        if not path.endswith("/") and not path.endswith(".html"):
            continue  # a file offered for download (images, the search index)
        if target not in ids:
            problems.append(f"{name}: link to a missing page {href}")
        elif fragment and fragment not in ids[target]:
            problems.append(f"{name}: link to a missing anchor {href}")
    assert not problems, "\n".join(problems)
    # the reference alone has hundreds of formulas: a count near zero means the math
    # spans were not produced (the rst_roles hook) rather than all typeset
    assert formulas > 500, formulas
