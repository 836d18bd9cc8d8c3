"""The viewer in a real browser: Debian's headless Chromium through its chromedriver, against
the server started as a user starts it (``genir-eval view``, its own process): filters and the
URL, keyboard navigation, two runs aligned, the label button, the bundle from ``file://``,
and what the pages show at 1280 and 800 px."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from view_process import view_server

from genir_eval.runner.label.keys import item_key
from genir_eval.runner.label.store import LabelStore

pytestmark = pytest.mark.browser

WAIT = 120.0
DISAGREE = "disagree:annotators:link_usefulness.dna"


def _wait(condition: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + WAIT
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {WAIT} s for {what}")
        time.sleep(0.1)


def _rows(driver: Any) -> list[str]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#sessions tbody tr'))"
        ".filter(r => !r.hidden).map(r => r.dataset.session || r.id)"
    )


def _press(driver: Any, keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(keys).perform()


def _select(driver: Any, field: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", field)).select_by_value(value)


def test_filters_go_in_the_url_and_come_back_from_it(
    small_run: Path, browser: Callable[..., Any]
) -> None:
    with view_server(str(small_run)) as url:
        driver = browser()
        driver.get(url)
        assert _rows(driver) == ["s0", "s1", "s2", "s3"]
        _select(driver, "dis", "disagree:annotators:dna")
        driver.find_element("id", "dis_min").send_keys("1")
        driver.find_element("id", "apply").click()
        _wait(lambda: "dis=" in driver.current_url, "the filtered page")
        assert _rows(driver) == ["s2", "s0"]  # the largest disagreement first
        query = parse_qs(urlsplit(driver.current_url).query)
        assert query["dis"] == ["disagree:annotators:dna"] and query["dis_min"] == ["1"]
        # any column sorts, from the form, and the filter stays
        _select(driver, "sort", "satisfaction.urs")
        driver.find_element("id", "apply").click()
        _wait(lambda: "sort=satisfaction.urs" in driver.current_url, "the sorted page")
        assert _rows(driver) == ["s2", "s0"]  # URS 4 then 8
        # a column's header sorts by it, the largest first on a second click
        driver.find_element("css selector", "a.sort[data-column='satisfaction.urs']").click()
        _wait(lambda: "desc=1" in driver.current_url, "the page sorted the other way")
        assert _rows(driver) == ["s0", "s2"]
        # the link opened afresh shows the same view, its filters in the form
        link = driver.current_url
        other = browser()
        other.get(link)
        assert _rows(other) == ["s0", "s2"]
        assert other.find_element("id", "dis_min").get_attribute("value") == "1"
        assert "dna vs annotators at least 1" in other.find_element("tag name", "header").text
        # search, task and failed judgments, from the form
        other.get(url)
        other.find_element("id", "q").send_keys("garden")
        _select(other, "task", "A")
        other.find_element("id", "failed").click()
        other.find_element("id", "apply").click()
        _wait(lambda: "failed=1" in other.current_url, "the failed filter")
        assert _rows(other) == ["s2"]


def test_the_keyboard_moves_opens_and_searches(
    small_run: Path, browser: Callable[..., Any]
) -> None:
    with view_server(str(small_run)) as url:
        driver = browser()
        driver.get(url + "?sort=sdcg_urge&desc=1")
        _press(driver, "jj")
        current = driver.execute_script(
            "return document.querySelector('tr.current').dataset.session"
        )
        assert current == "s0"  # s1 then s0
        _press(driver, "k")
        _press(driver, "\ue007")  # Enter
        _wait(lambda: "/session?" in driver.current_url, "the session page")
        assert "id=s1" in driver.current_url
        assert driver.find_element("tag name", "h1").text == "s1"
        driver.back()
        _wait(lambda: "/session?" not in driver.current_url, "the table again")
        _press(driver, "/")
        assert driver.switch_to.active_element.get_attribute("id") == "q"


def test_the_label_button_opens_the_labelling_page_on_that_item(
    urge_run: Path, tmp_path: Path, browser: Callable[..., Any]
) -> None:
    store = tmp_path / "labels.sqlite"
    with view_server(str(urge_run), "--store", str(store)) as url:
        driver = browser()
        driver.get(url + "session?id=urge-0")
        button = driver.find_element("css selector", "#link-1-2 a.label")
        button.click()
        _wait(lambda: driver.find_elements("id", "labeller"), "the name form")
        driver.find_element("id", "labeller").send_keys("ann\ue007")
        _wait(lambda: driver.find_elements("id", "item"), "the labelling page")
        item = driver.find_element("id", "item")
        key = item_key("link", "urge-0", 1, 2)  # the key the label store writes
        assert item.get_attribute("data-item") == key
        _press(driver, "3")
        labels = _wait(lambda: LabelStore(store).labels("link_usefulness"), "the saved label")
        assert labels[key]["ann"].value == 3.0
        # the name is this browser's labeller session's: another browser is told it is taken
        other = url + "label-item?" + urlencode({"queue": "link_usefulness", "key": key})
        with pytest.raises(urllib.error.HTTPError) as taken:
            urllib.request.urlopen(other + "&labeller=ann", timeout=60)
        assert taken.value.code == 409 and b"taken" in taken.value.read()
        taken.value.close()


def test_two_runs_are_aligned_the_most_changed_first(
    urge_run: Path, urge_run_b: Path, browser: Callable[..., Any]
) -> None:
    with view_server(str(urge_run), str(urge_run_b)) as url:
        driver = browser()
        driver.get(url + "?by=sdcg_urge@link_usefulness.true")
        aligned = driver.find_element("id", "aligned").text
        assert aligned.startswith("12 sessions in all 2 runs (of 12, 12)")
        deltas = driver.execute_script(
            "return Array.from(document.querySelectorAll('#sessions tbody tr td.delta'))"
            ".map(td => td.textContent)"
        )
        changes = [abs(float(d.replace("−", "-"))) for d in deltas]
        assert len(changes) == 12 and changes == sorted(changes, reverse=True)
        assert changes[0] > 0  # TRUE without the users' signals labels differently
        # a row opens the session across the runs, each score with its change
        driver.find_element("css selector", "#sessions tbody tr td a").click()
        _wait(lambda: driver.find_elements("id", "deltas"), "the session across runs")
        head = driver.find_element("css selector", "#deltas thead").text
        assert "urge-offline" in head and "urge-offline-b" in head


def test_the_bundle_opens_from_a_file(
    small_run: Path, tmp_path: Path, browser: Callable[..., Any]
) -> None:
    out = tmp_path / "copy"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "genir_eval",
            "view",
            str(small_run),
            "--bundle",
            str(out),
            "--view",
            "sort=satisfaction.urs",
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    driver = browser()
    driver.get((out / "index.html").as_uri())
    assert _rows(driver) == ["s3", "s2", "s1", "s0"]
    # its search narrows the rows it holds, from its own JSON
    driver.find_element("id", "q").send_keys("garden")
    _wait(lambda: _rows(driver) == ["s2", "s0"], "the rows narrowed")
    assert driver.find_element("id", "count").text == "2 sessions"
    driver.find_element("css selector", "tr[data-session='s2'] td a").click()
    _wait(lambda: driver.current_url.endswith("session-0-2.html"), "the session's file")
    assert driver.find_element("tag name", "h1").text == "s2"
    # the hostile query is text on the page, never markup
    assert "<script>alert(1)</script>" in driver.find_element("css selector", ".query").text
    assert driver.execute_script("return document.querySelectorAll('img').length") == 0


def _fits(driver: Any, element: Any) -> bool:
    """The element is inside the window's width and the page does not scroll sideways."""
    box = driver.execute_script(
        "const r = arguments[0].getBoundingClientRect(); "
        "return [r.left, r.right, window.innerWidth, document.documentElement.scrollWidth]",
        element,
    )
    left, right, width, scroll = box
    return left >= 0 and right <= width + 1 and scroll <= width + 1


@pytest.mark.parametrize("width", [1280, 800])
def test_what_the_pages_show_at_both_widths(
    urge_run: Path, urge_run_b: Path, tmp_path: Path, browser: Callable[..., Any], width: int
) -> None:
    from PIL import Image

    with view_server(str(urge_run)) as url:
        driver = browser(width, 1000)
        # the table filtered to the sessions where DNA and the annotators disagree most
        driver.get(url + f"?dis={DISAGREE}&dis_min=1")
        shot = tmp_path / f"table-{width}.png"
        driver.save_screenshot(str(shot))
        with Image.open(shot) as image:
            assert image.size[0] == width
        header = driver.find_element("tag name", "header")
        assert "link_usefulness.dna vs annotators at least 1" in header.text
        rows = _rows(driver)
        assert rows and len(rows) < 12
        first = driver.find_element("css selector", "#sessions tbody tr")
        assert first.is_displayed() and _fits(driver, header)
        assert driver.find_element("id", "count").text == f"{len(rows)} sessions"
        # the session page: the first turn's query and answer, its judgments
        driver.get(url + f"session?id={rows[0]}")
        driver.save_screenshot(str(tmp_path / f"session-{width}.png"))
        assert driver.find_element("tag name", "h1").text == rows[0]
        turn = driver.find_element("id", "turn-1")
        assert turn.find_element("css selector", ".log.query").is_displayed()
        assert len(turn.find_elements("css selector", "article.judgment")) > 0
        assert _fits(driver, turn.find_element("css selector", ".log.query"))
    with view_server(str(urge_run), str(urge_run_b)) as url:
        driver = browser(width, 1000)
        driver.get(url)
        driver.save_screenshot(str(tmp_path / f"compare-{width}.png"))
        assert "urge-offline vs urge-offline-b" in driver.find_element("tag name", "h1").text
        assert _fits(driver, driver.find_element("id", "aligned"))
        assert driver.find_element("css selector", "#sessions tbody tr").is_displayed()
