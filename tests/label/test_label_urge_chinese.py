"""The labelling page on the real URGE sample, in Debian's headless Chromium at 1280 and 800
px: the Chinese query and answer are there in words and drawn with real glyphs, not the
empty boxes Chromium draws without a CJK font (``.ci/install_chromium.sh`` installs
``fonts-noto-cjk``).

Whether a glyph is drawn is read from pixels: two different characters drawn in the page's
own font on a canvas differ, where a font without them draws the same box for both."""

from __future__ import annotations

import contextlib
import io
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from label_helpers import label_server

from genir_eval.cli import main

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
WAIT = 120.0
_HAN = re.compile(r"[\u4e00-\u9fff]")

#: Draws two characters in the font of the element holding them and says whether their
#: pixels differ (a missing font draws the same .notdef box for both).
_DRAWN = """
const element = document.getElementById('item');
const style = getComputedStyle(element);
const chars = arguments[0];
function pixels(ch) {
  const canvas = document.createElement('canvas');
  canvas.width = 64; canvas.height = 64;
  const context = canvas.getContext('2d');
  context.font = `32px ${style.fontFamily}`;
  context.fillText(ch, 8, 44);
  return Array.from(context.getImageData(0, 0, 64, 64).data).join(',');
}
const drawn = chars.map(pixels);
return {family: style.fontFamily, differ: drawn[0] !== drawn[1],
        inked: drawn.every(d => d.split(',').some(v => v !== '0'))};
"""


@pytest.fixture(scope="module")
def urge_run(urge_sample_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("urge-label") / "run"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(
            ["run", str(ROOT / "scenarios" / "urge-offline.toml"), "--out", str(out)]
            + ["--quiet", "--cache", "none"]
        )
    assert code == 0
    return out


def _wait(condition: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + WAIT
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {WAIT} s for {what}")
        time.sleep(0.1)


@pytest.mark.parametrize("width", (1280, 800))
def test_the_urge_labelling_page_draws_its_chinese(
    urge_run: Path, tmp_path: Path, browser: Callable[[], Any], width: int
) -> None:
    with label_server(urge_run, "--store", str(tmp_path / "l.sqlite")) as (url, _):
        driver = browser()
        driver.set_window_size(width, 900)
        driver.get(url + "label/link_usefulness?labeller=ann")
        text = _wait(
            lambda: driver.execute_script(
                "const m = document.getElementById('item'); return m ? m.innerText : ''"
            ),
            "the item",
        )
        han = list(dict.fromkeys(_HAN.findall(text)))
        assert len(han) >= 2, "the URGE item shows its Chinese query and answer"
        drawn = driver.execute_script(_DRAWN, han[:2])
        assert drawn["inked"], drawn
        assert drawn["differ"], f"the same box for {han[:2]} in {drawn['family']}: no CJK font"
        assert driver.execute_script("return document.documentElement.scrollWidth") <= width
        folder = Path(os.environ.get("GENIR_SCREENSHOTS") or tmp_path)
        folder.mkdir(parents=True, exist_ok=True)
        png = folder / f"label-urge-{width}.png"
        assert driver.save_screenshot(str(png)) and png.stat().st_size > 10_000
