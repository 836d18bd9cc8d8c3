"""Headless Chromium for the report tests: where it is, how it is started.

Skips only when Chromium is absent outside CI; under CI (``CI=true``) a missing browser is a
failure, since ``.ci/install_chromium.sh`` is meant to provide it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def chromium() -> str:
    found = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    if found:
        return found
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("chromium is missing under CI: run .ci/install_chromium.sh first")
    pytest.skip("chromium is not installed (.ci/install_chromium.sh installs it)")


def run_chromium(profile: Path, *args: str) -> str:
    """Run Chromium once with its own profile folder; its stdout (e.g. ``--dump-dom``)."""
    profile.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    return done.stdout


#: Runs in a copy of the report (whose CSP otherwise forbids any script): measures where
#: the wanted elements are laid out and what text the first screen shows, and writes it as
#: JSON into the page, for ``--dump-dom`` to carry out.
_PROBE = """<script>
(() => {
  const wanted = %s;
  const height = window.innerHeight;
  const out = {width: document.documentElement.scrollWidth,
               height: document.documentElement.scrollHeight,
               viewport: [window.innerWidth, height], elements: {},
               body_font_size: parseFloat(getComputedStyle(document.body).fontSize)};
  for (const selector of wanted) {
    const element = document.querySelector(selector);
    if (!element) { out.elements[selector] = null; continue; }
    const box = element.getBoundingClientRect();
    out.elements[selector] = {top: box.top + window.scrollY, bottom: box.bottom + window.scrollY,
                              left: box.left, right: box.right,
                              visible: box.height > 0 && element.checkVisibility(),
                              folded: !!element.closest('details:not([open])'),
                              font_size: parseFloat(getComputedStyle(element).fontSize),
                              overflows: element.scrollWidth > element.clientWidth};
  }
  // the text of the first screen: every text node laid out above the fold
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = [];
  const range = document.createRange();
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.textContent.trim() || !node.parentElement.checkVisibility()) continue;
    range.selectNodeContents(node);
    const rects = Array.from(range.getClientRects());
    if (rects.some(r => r.height > 0 && r.top < height && r.bottom > 0)) seen.push(node.textContent);
  }
  out.first_screen = seen.join(' ').replace(/\\s+/g, ' ');
  const pre = document.createElement('pre');
  pre.id = 'layout-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def layout(report: Path, width: int, height: int, selectors: list[str], profile: Path) -> dict:
    """Where ``selectors``' first elements lie (page coordinates, px) and the first screen's
    text, in a ``width`` x ``height`` window: the report with one measuring script let in."""
    import json

    from genir_eval.report.html import CSP

    probe = report.with_name(f"layout-{width}.html")
    text = report.read_text(encoding="utf-8").replace(
        CSP, "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'"
    )
    script = _PROBE % json.dumps(selectors)
    probe.write_text(text.replace("</body>", script + "</body>"), encoding="utf-8")
    try:
        dom = run_chromium(profile, f"--window-size={width},{height}", "--dump-dom", probe.as_uri())
    finally:
        probe.unlink()
    start = dom.index('<pre id="layout-probe">') + len('<pre id="layout-probe">')
    end = dom.index("</pre>", start)
    import html

    return dict(json.loads(html.unescape(dom[start:end])))
