"""The viewer's server in-process (Starlette's test client): pages and API answer what the
run folder holds, untrusted text stays text, and the labelling page's guard stands in front
of every path."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from view_helpers import HOSTILE, tiny_run

from genir_eval.runner.label.app import CSP, TOKEN_COOKIE
from genir_eval.runner.web.app import make_viewer_app
from genir_eval.runner.web.index import open_index

HOSTS = {"testserver"}


@pytest.fixture(scope="module")
def client(small_run: Path) -> TestClient:
    return TestClient(make_viewer_app([open_index(small_run)], hosts=HOSTS))


def test_the_table_page_filters_as_its_url_says(client: TestClient) -> None:
    page = client.get("/?dis=disagree:annotators:dna&dis_min=1")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CSP
    text = page.text
    # the two sessions the judge and the annotators disagree on by 1 or more, largest first
    assert text.index("id='row-s2'") < text.index("id='row-s0'")
    assert "id='row-s1'" not in text and "id='row-s3'" not in text
    assert "<span id='count'>2 sessions</span>" in text
    # the filter is in the form the page shows, so the view is a link
    assert "<option value='disagree:annotators:dna' selected>" in text


def test_untrusted_text_is_escaped_everywhere(client: TestClient) -> None:
    for path in ("/?q=garden", "/session?id=s2"):
        text = client.get(path).text
        assert HOSTILE not in text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
        assert "<script>" not in text.replace("<script src='/view-static/viewer.js' defer>", "")


def test_the_session_page_shows_every_judgment_and_the_people(client: TestClient) -> None:
    text = client.get("/session?id=s0").text
    # each judgment has its own anchor, its label, its reason and the prompt's digest
    assert "id='j-1-dna-link_1-0'" in text and "href='#j-1-dna-link_1-0'" in text
    assert "reason s0 1" in text and "prompt abc123" in text
    # the annotators' label beside the judge's: link 1 judged 3, annotated 1
    assert "<td class='num' title=''>3.000</td><td class='num people'>1.000</td>" in text
    # a label button per item opens the labelling page on it, by the key the label store
    # writes (runner/label/keys.py: link:["s0",1,1])
    assert "/label-item?queue=link_usefulness&amp;key=link%3A%5B%22s0%22%2C1%2C1%5D" in text
    assert "/label-item?queue=session_satisfaction&amp;key=session%3A%5B%22s0%22%5D" in text


def test_a_failed_judgment_shows_with_its_reason(client: TestClient) -> None:
    text = client.get("/session?id=s2").text
    assert "dna · link:2: timeout: the model did not answer" in text


def test_the_api_pages_filters_and_sorts(client: TestClient) -> None:
    answer = client.get("/api/sessions?sort=sdcg_urge&desc=1&size=2&page=2").json()
    assert answer["total"] == 4 and answer["view"] == "sort=sdcg_urge&desc=1&size=2&page=2"
    assert [r["session_id"] for r in answer["rows"]] == ["s3", "s2"]
    assert answer["rows"][1]["scores"]["sdcg_urge"] is None  # missing, never 0
    assert answer["rows"][1]["failed"] == 1


def test_the_api_gives_a_session_with_its_text_as_data(client: TestClient) -> None:
    detail = client.get("/api/session?id=s2").json()
    assert detail["turns"][0]["query"] == "garden " + HOSTILE
    assert detail["turns"][0]["links"][0]["annotators"] == 3.0
    assert detail["judges"]["dna"]["prompt_version"] == "abc123"


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/api/sessions?col=nope&lo=1", 422, "col: no 'nope'"),
        ("/api/sessions?run=3", 422, "run: 0 to 0"),
        ("/api/session?id=nope", 404, "no session 'nope'"),
        ("/api/compare", 404, "one run on view"),
    ],
)
def test_a_wrong_request_is_refused_with_its_reason(
    client: TestClient, path: str, status: int, words: str
) -> None:
    answer = client.get(path)
    assert answer.status_code == status
    assert words in answer.json()["error"]


def test_a_wrong_filter_on_a_page_is_a_page_saying_why(client: TestClient) -> None:
    answer = client.get("/?sort=nope")
    assert answer.status_code == 422
    assert "sort: no &#x27;nope&#x27; in this run" in answer.text


def test_another_host_name_is_refused(small_run: Path) -> None:
    app = make_viewer_app([open_index(small_run)])  # the loopback's names only
    # the guard also takes the address the connection came to (the scope's server: the
    # test client's base URL), so the connection comes to the loopback and names another
    client = TestClient(app, base_url="http://127.0.0.1:8765")
    assert client.get("/api/runs").status_code == 200
    answer = client.get("/api/runs", headers={"Host": "evil.example:8765"})
    assert answer.status_code == 400 and "not this server's name" in answer.json()["error"]


def test_a_token_guards_every_path_and_the_link_sets_it(small_run: Path) -> None:
    client = TestClient(make_viewer_app([open_index(small_run)], hosts=HOSTS, token="s3cret"))
    for path in ("/", "/api/runs", "/session?id=s0", "/view-static/viewer.js", "/label/"):
        assert client.get(path).status_code == 401, path
    assert client.get("/api/runs", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    opened = client.get("/?token=s3cret", follow_redirects=False)
    assert opened.status_code == 303
    # the cookie holds the token's SHA-256, as the labelling page's does, never the token
    assert opened.cookies[TOKEN_COOKIE] == hashlib.sha256(b"s3cret").hexdigest()
    assert client.get("/api/runs").status_code == 200  # the cookie it set


def test_two_runs_are_compared_most_changed_first(small_run: Path, tmp_path: Path) -> None:
    other = tiny_run(tmp_path / "b", name="tiny-b", shift={"s0": 0.5, "s1": -1.5})
    client = TestClient(make_viewer_app([open_index(small_run), open_index(other)], hosts=HOSTS))
    answer = client.get("/api/compare").json()
    assert answer["runs"] == ["tiny", "tiny-b"] and answer["score"] == "sdcg_urge"
    assert [(r["session_id"], r["deltas"]) for r in answer["rows"]] == [
        ("s1", [-1.5]),
        ("s0", [0.5]),
        ("s3", [0.0]),
        ("s2", [None]),
    ]
    page = client.get("/").text
    assert "4 sessions in all 2 runs" in page
    assert page.index("id='row-s1'") < page.index("id='row-s0'")
    deltas = client.get("/compare/session?id=s1").text
    assert "<td class=num>-1.500</td>" in deltas


def test_the_openapi_schema_names_every_api_route(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert sorted(schema["paths"]) == ["/api/compare", "/api/runs", "/api/session", "/api/sessions"]
    json.dumps(schema)


def test_labelling_a_run_without_its_input_says_why(client: TestClient) -> None:
    # the labelling page reads the run's sessions from its input; this run names none
    page = client.get("/label-item?queue=link_usefulness&key=link:s0:1:1")
    assert page.status_code == 404
    assert "no labelling here" in page.text and "the run names no input" in page.text
    assert client.get("/label/").json()["error"].startswith("no labelling here")
