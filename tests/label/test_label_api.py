"""The labelling API over a real socket, the server started as a user starts it: what it
refuses (a foreign origin, another Host, a form, a missing token, an item not in the
queue), and what it keeps (a second server on the store, a server killed mid-save)."""

from __future__ import annotations

import http.client
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from label_helpers import call, label_server

from genir_eval.runner.label.store import LabelStore


@pytest.mark.slow
def test_refusals_and_security_headers(hostile_run: Path, tmp_path: Path) -> None:
    with label_server(hostile_run, "--store", str(tmp_path / "l.sqlite")) as (url, _):
        status, reply = call(url + "api/queues/link_usefulness/next?labeller=ann")
        assert status == 200
        item = reply["next"]["key"]
        assert "judged" not in reply["next"], "the judges' labels are hidden unless asked"
        asked = call(url + "api/queues/link_usefulness/next?labeller=ann&reveal=1")[1]["next"]
        assert asked["key"] == item and set(asked["judged"]) == {"link_usefulness.dna"}
        labels = url + "api/queues/link_usefulness/labels"
        body = {"key": item, "labeller": "ann", "value": 2}
        assert call(labels, "POST", body, {"Origin": "http://evil.example"}) == (
            403,
            {"error": "cross-site request refused (Origin 'http://evil.example')"},
        )
        status, reply = call(labels, "POST", body, {"Sec-Fetch-Site": "cross-site"})
        assert status == 403
        status, reply = call(labels, "POST", body, {"Host": "evil.example"})
        assert status == 400 and "Host" in reply["error"]
        status, reply = call(labels, "POST", {**body, "key": "link:nowhere:1:1"})
        assert status == 404
        assert reply == {"error": "item 'link:nowhere:1:1' is not in the 'link_usefulness' queue"}
        status, reply = call(labels, "POST", {**body, "value": 7})
        assert status == 422 and reply["error"].startswith("value: one of 0, 1, 2, 3 ")
        status, reply = call(labels, "POST", {**body, "labeller": "<script>"})
        assert status == 422 and reply["error"].startswith("labeller:")
        # an HTML form cannot send JSON: a form-encoded post is refused
        import urllib.error
        import urllib.request

        form = urllib.request.Request(labels, data=b"item=x&labeller=ann&value=2", method="POST")
        form.add_header("Content-Type", "application/x-www-form-urlencoded")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(form, timeout=60)
        assert refused.value.code == 415
        refused.value.close()
        # none of the refusals saved anything; the same-origin label is saved
        assert LabelStore(tmp_path / "l.sqlite").events() == []
        origin = url.rstrip("/")
        assert call(labels, "POST", body, {"Origin": origin})[0] == 201
        with urllib.request.urlopen(url, timeout=60) as page:
            csp = page.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert "default-src 'none'" in csp


def test_beyond_the_loopback_needs_a_token(hostile_run: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "genir_eval", "label", str(hostile_run), "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "GENIR_EVAL_LABEL_TOKEN"},
    )
    assert done.returncode == 2
    assert "needs a token" in done.stderr and "Traceback" not in done.stderr


def test_a_token_is_asked_for_when_given(hostile_run: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "l.sqlite")
    with label_server(hostile_run, "--store", store, "--token", "s3cret") as (url, _):
        assert call(url + "api/queues")[0] == 401
        assert call(url + "api/queues", headers={"Authorization": "Bearer wrong"})[0] == 401
        status, _ = call(url + "api/queues", headers={"Authorization": "Bearer s3cret"})
        assert status == 200


@pytest.mark.slow
def test_a_second_server_on_the_store_shares_its_state(hostile_run: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "l.sqlite")
    with label_server(hostile_run, "--store", store) as (one, _):
        with label_server(hostile_run, "--store", store) as (two, _):
            first = call(one + "api/queues/turn_satisfaction/next?labeller=ann")[1]["next"]["key"]
            assert (
                call(two + "api/queues/turn_satisfaction/next?labeller=ann")[1]["next"]["key"]
                == first
            )
            body = {"key": first, "labeller": "ann", "value": 4}
            assert call(one + "api/queues/turn_satisfaction/labels", "POST", body)[0] == 201
            after = call(two + "api/queues/turn_satisfaction/next?labeller=ann")[1]
            assert after["next"]["key"] != first and after["progress"]["done"] == 1
            undone = call(two + "api/queues/turn_satisfaction/undo", "POST", {"labeller": "ann"})
            assert undone[1]["undone"]["key"] == first
            again = call(one + "api/queues/turn_satisfaction/next?labeller=ann")[1]
            assert again["next"]["key"] == first
    # a server asking the store for another number of people per item is refused
    done = subprocess.run(
        [sys.executable, "-m", "genir_eval", "label", str(hostile_run), "--store", store]
        + ["--per-item", "3", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "--per-item 1" in done.stderr


@pytest.mark.slow
def test_a_server_killed_mid_save_loses_no_label_it_answered(
    hostile_run: Path, tmp_path: Path
) -> None:
    store = tmp_path / "l.sqlite"
    saved: list[int] = []
    stop = threading.Event()

    with label_server(hostile_run, "--store", str(store)) as (url, process):
        item = call(url + "api/queues/link_usefulness/next?labeller=a0")[1]["next"]["key"]

        def post(worker: int) -> None:
            n = 0
            while not stop.is_set() and n < 2000:
                body = {"key": item, "labeller": f"w{worker}-{n}", "value": n % 4}
                try:
                    status, reply = call(url + "api/queues/link_usefulness/labels", "POST", body)
                except (OSError, http.client.HTTPException, ValueError):
                    # the server is gone: refused, reset, or killed mid-reply (a cut status
                    # line or body); a reply it finished is counted above
                    return
                if status == 201:
                    saved.append(reply["event"]["id"])
                n += 1

        workers = [threading.Thread(target=post, args=(w,)) for w in range(4)]
        for w in workers:
            w.start()
        while len(saved) < 40 and any(w.is_alive() for w in workers):
            threading.Event().wait(0.05)
        os.kill(process.pid, signal.SIGKILL)  # while the workers are still posting
        process.wait()
        stop.set()
        for w in workers:
            w.join(timeout=120)
    assert len(saved) >= 40
    kept = {e.id for e in LabelStore(store).events()}
    assert set(saved) <= kept
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    # and a new server starts on the store and carries on
    with label_server(hostile_run, "--store", str(store)) as (url, _):
        status, reply = call(url + "api/queues")
        assert status == 200 and reply["queues"][0]["labelled"] == 1


def test_a_posted_session_is_judged_by_a_named_scenario(hostile_run: Path, tmp_path: Path) -> None:
    from label_helpers import _session

    store = str(tmp_path / "l.sqlite")
    with label_server(hostile_run, "--store", store) as (url, _):
        session = _session("posted", "Milk boils at 100 degrees.", "Milk boils near 100 degrees.")
        status, reply = call(url + "api/judge", "POST", {"scenario": "hostile", "session": session})
        assert status == 200, reply
        assert reply["session_id"] == "posted"
        assert {row["link_id"] for row in reply["links"]} == {1, 2}
        assert all("link_usefulness.dna" in row["labels"] for row in reply["links"])
        assert reply["citations"] and reply["session"][0]["scores"]["satisfaction.urs"] is not None
        status, reply = call(url + "api/judge", "POST", {"scenario": "nope", "session": session})
        assert (status, reply) == (422, {"error": "scenario: one of hostile"})
        broken = {**session, "turns": "none"}
        status, reply = call(url + "api/judge", "POST", {"scenario": "hostile", "session": broken})
        assert status == 422 and "turns" in reply["error"]
