"""The labelling page in a real browser: Debian's headless Chromium through its chromedriver,
against the server started as a user starts it (``genir-eval label``, its own process)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from label_helpers import BIG, RTL, SCRIPT, SYSTEM, call, label_server

from genir_eval.runner.label.keys import item_key
from genir_eval.runner.label.store import LabelStore

pytestmark = pytest.mark.browser

WAIT = 120.0


def _wait(condition: Callable[[], Any], what: str) -> Any:
    """Polls ``condition`` until it is true (a busy machine is slow, never wrong)."""
    deadline = time.monotonic() + WAIT
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {WAIT} s for {what}")
        time.sleep(0.1)


def _item(driver: Any) -> str:
    """The key of the item shown ("" while a page loads: the element may go stale)."""
    from selenium.common.exceptions import WebDriverException

    try:
        key = driver.execute_script(
            "const m = document.getElementById('item'); return m ? m.dataset.item : null"
        )
    except WebDriverException:
        return ""
    return "" if key is None else str(key)


def _press(driver: Any, key: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(key).perform()


def _open(driver: Any, url: str) -> str:
    driver.get(url)
    return _wait(lambda: _item(driver), "the item")


def _next(driver: Any, before: str) -> str:
    def moved() -> str | None:
        key = _item(driver)
        return key if key and key != before else None

    return _wait(moved, "the next item")


def test_keyboard_labels_comments_and_undo(
    hostile_run: Path, tmp_path: Path, browser: Callable[[], Any]
) -> None:
    store = tmp_path / "labels.sqlite"
    with label_server(hostile_run, "--store", str(store)) as (url, _):
        driver = browser()
        first = _open(driver, url + "label/link_usefulness?labeller=ann")
        assert "item 1 of" in driver.find_element("id", "progress").text
        _press(driver, "2")
        second = _next(driver, first)
        assert "item 2 of" in driver.find_element("id", "progress").text
        # c opens the comment; the keys typed there are text, not labels
        _press(driver, "c")
        _press(driver, "3 looks wrong")
        assert driver.find_element("id", "comment").get_attribute("value") == "3 looks wrong"
        from selenium.webdriver.common.keys import Keys

        _press(driver, Keys.ESCAPE)
        _press(driver, "0")
        third = _next(driver, second)
        _press(driver, "s")
        _next(driver, third)
        labels = LabelStore(store).labels("link_usefulness")
        assert labels[first]["ann"].value == 2.0
        assert labels[second]["ann"].value == 0.0
        assert labels[second]["ann"].comment == "3 looks wrong"
        assert labels[first]["ann"].seconds is not None and labels[first]["ann"].seconds > 0
        assert third not in labels  # skipped, not labelled
        # undo twice: the skip, then the label of the second item, which comes back
        after = _item(driver)
        _press(driver, "u")
        _wait(lambda: _item(driver) == third, "the skipped item back")
        _press(driver, "u")
        _wait(lambda: _item(driver) == second, "the undone item back")
        assert second not in LabelStore(store).labels("link_usefulness")
        assert after != second
        _press(driver, "1")
        _next(driver, second)
        assert LabelStore(store).labels("link_usefulness")[second]["ann"].value == 1.0


def test_two_labellers_at_once_each_item_to_both(
    hostile_run: Path, tmp_path: Path, browser: Callable[[], Any]
) -> None:
    store = tmp_path / "labels.sqlite"
    with label_server(hostile_run, "--store", str(store), "--per-item", "2") as (url, _):
        ann, bob = browser(), browser()
        a = _open(ann, url + "label/citation_support?labeller=ann")
        b = _open(bob, url + "label/citation_support?labeller=bob")
        assert a == b  # two people per item: both are shown the first
        _press(ann, "f")
        _press(bob, "n")
        a2, b2 = _next(ann, a), _next(bob, b)
        assert a2 == b2
        by = LabelStore(store).labels("citation_support")[a]
        assert {name: e.value for name, e in by.items()} == {"ann": 2.0, "bob": 0.0}
        # a third person finds the first item labelled by two, and the second out to two
        # (ann and bob are reading it): another one, so no item is out to three at once
        carol = browser()
        assert _open(carol, url + "label/citation_support?labeller=carol") not in {a, a2}
        status, figures = call(url + "api/agreement")
        assert status == 200
        support = next(q for q in figures["queues"] if q["queue"] == "citation_support")
        assert support["labels"] == 2 and support["between_people"]["items"] == 1


def _pane_texts(driver: Any) -> list[str]:
    return [e.get_attribute("textContent") for e in driver.find_elements("css selector", ".log")]


def _label_until(driver: Any, wanted: str, key: str) -> None:
    """Label with ``key`` until the item shown holds ``wanted`` in a pane."""
    for _ in range(30):
        if any(wanted in text for text in _pane_texts(driver)):
            return
        before = _item(driver)
        _press(driver, key)
        _next(driver, before)
    raise AssertionError(f"no item shows {wanted!r}")


def test_hostile_log_text_renders_as_text(
    hostile_run: Path, tmp_path: Path, browser: Callable[[], Any]
) -> None:
    store = tmp_path / "labels.sqlite"
    with label_server(hostile_run, "--store", str(store)) as (url, _):
        driver = browser()
        for session in ("s-script", "s-system", "s-rtl", "s-big"):
            # a labeller per session: each walks the queue from its start
            who = f"ann-{session}"
            _open(driver, url + f"label/citation_support?labeller={who}")
            # skip the items of other sessions away until this session's first statement
            for _ in range(30):
                if _item(driver) == item_key("support", session, 1, 1, 1):
                    break
                before = _item(driver)
                _press(driver, "s")
                _next(driver, before)
            texts = _pane_texts(driver)
            assert len(texts) == 2, "statement and passage side by side"
            if session == "s-script":
                assert SCRIPT in texts[0] and SCRIPT in texts[1]
                assert driver.execute_script("return window.pwned === undefined")
                assert len(driver.find_elements("css selector", "img")) == 0
                scripts = driver.find_elements("css selector", "script")
                assert [s.get_attribute("src") for s in scripts] == [url + "static/label.js"]
            elif session == "s-system":
                assert SYSTEM in texts[0]
            elif session == "s-rtl":
                assert RTL in texts[0]
                # the override turns only its own block: the buttons read left to right
                style = driver.execute_script(
                    "return getComputedStyle(document.querySelector('.log')).unicodeBidi"
                )
                assert style == "isolate"
                assert driver.find_element("id", "skip").text.endswith("skip")
            else:
                assert BIG.strip() in texts[0]
                assert len(texts[0]) > 1_000_000
            # the page keeps working: a key still labels
            before = _item(driver)
            _press(driver, "p")
            _next(driver, before)
            assert LabelStore(store).labels("citation_support")[before][who].value == 1.0


def test_screenshot_at_1280(hostile_run: Path, tmp_path: Path, browser: Callable[[], Any]) -> None:
    with label_server(hostile_run, "--store", str(tmp_path / "l.sqlite")) as (url, _):
        driver = browser()
        _open(driver, url + "label/citation_support?labeller=ann")
        width = driver.execute_script("return document.documentElement.scrollWidth")
        assert width <= 1280, "no sideways scrolling at 1280 px"
        png = tmp_path / "page.png"
        assert driver.save_screenshot(str(png))
        assert png.stat().st_size > 10_000


def test_the_judges_labels_are_hidden_unless_asked(
    hostile_run: Path, tmp_path: Path, browser: Callable[[], Any]
) -> None:
    store = tmp_path / "labels.sqlite"
    with label_server(hostile_run, "--store", str(store)) as (url, _):
        driver = browser()
        first = _open(driver, url + "label/turn_satisfaction?labeller=ann")
        assert driver.find_elements("css selector", ".judged") == []
        _press(driver, "4")
        second = _next(driver, first)
        driver.get(url + "label/turn_satisfaction?labeller=ann&reveal=1")
        _wait(lambda: _item(driver) == second, "the same item, the judges shown")
        assert "satisfaction.urs" in driver.find_element("css selector", ".judged").text
        _press(driver, "2")
        _next(driver, second)
        labels = LabelStore(store).labels("turn_satisfaction")
        assert labels[first]["ann"].judge_shown is False
        assert labels[second]["ann"].judge_shown is True
        assert labels[second]["ann"].judge_label is not None
