"""A team labelling over the network (issue 46, class 8): the server bound to every address
answers requests addressed to this machine (its addresses, its host name) and still refuses
a name that is not this machine's (DNS rebinding); a non-ASCII token authenticates; the
request body is capped as it streams, chunked or not; a --token on the command line is
warned about. The guard's checks are driven through its ASGI interface here, and through a
real server where the socket matters."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from label_helpers import call, label_server

from genir_eval.runner.label.guard import (
    MAX_BODY,
    TOKEN_COOKIE,
    Guard,
    has_token,
    host_allowed,
    machine_names,
    token_cookie_value,
)


async def _echo(scope: Any, receive: Any, send: Any) -> None:
    """An app answering 200 with the length of the body it read."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": str(len(body)).encode()})


def _drive(
    guard: Guard,
    *,
    method: str = "GET",
    path: str = "/",
    host: str = "127.0.0.1:8765",
    headers: dict[str, bytes] | None = None,
    chunks: list[bytes] | None = None,
    server: tuple[str, int] = ("127.0.0.1", 8765),
    query: bytes = b"",
) -> tuple[int, bytes, int]:
    """One request through ``guard``: its status, body, and how many body chunks the guard
    pulled."""
    raw = [(b"host", host.encode("latin-1"))]
    raw += [(k.lower().encode(), v) for k, v in (headers or {}).items()]
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query,
        "headers": raw,
        "server": server,
        "scheme": "http",
    }
    pending = list(chunks or [b""])
    pulled = 0

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        if not pending:
            return {"type": "http.disconnect"}
        pulled += 1
        chunk = pending.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(pending)}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(guard(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body, pulled


# -- the Host header -------------------------------------------------------------------

#: (Host header, the connection's local address, allowed?) with the server bound to
#: 0.0.0.0; the host name is added below (the machine's own, read from socket).
HOSTS = [
    ("127.0.0.1:8765", ("127.0.0.1", 8765), True),
    ("localhost:8765", ("127.0.0.1", 8765), True),
    ("[::1]:8765", ("::1", 8765), True),
    ("192.0.2.7:8765", ("192.0.2.7", 8765), True),  # the address the request came to
    ("192.0.2.7", ("192.0.2.7", 8765), True),
    ("203.0.113.250:8765", ("192.0.2.7", 8765), False),  # another machine's address
    ("evil.example:8765", ("192.0.2.7", 8765), False),  # rebinding: a name resolved here
    ("evil.example", ("127.0.0.1", 8765), False),
    ("", ("127.0.0.1", 8765), False),
    ("127.0.0.1.evil.example:8765", ("127.0.0.1", 8765), False),
]


@pytest.mark.parametrize(("host", "server", "allowed"), HOSTS)
def test_the_host_must_be_this_machine(host: str, server: tuple[str, int], allowed: bool) -> None:
    names = machine_names("0.0.0.0")
    assert "203.0.113.250" not in names, "a documentation address is no machine's"
    assert host_allowed(host, names, {"server": server}) is allowed
    guard = Guard(_echo, hosts=names, token=None)
    assert (_drive(guard, host=host, server=server)[0] == 200) is allowed


def test_the_machines_host_name_is_one_of_its_names() -> None:
    names = machine_names("0.0.0.0")
    hostname = socket.gethostname().lower()
    assert hostname in names
    assert set(_local_addresses()) <= names, "the address it sends from is one of its names"
    assert host_allowed(f"{hostname.upper()}:8765", names, {"server": ("0.0.0.0", 8765)})
    assert not host_allowed("not-" + hostname, names, {"server": ("0.0.0.0", 8765)})


# -- the token -------------------------------------------------------------------------

TOKENS = ["s3cret", "clé-équipe-ü", "チーム秘密", "emoji-\U0001f511"]


@pytest.mark.parametrize("token", TOKENS)
def test_a_token_authenticates_as_the_bytes_of_its_utf8(token: str) -> None:
    guard = Guard(_echo, hosts=machine_names(), token=token)
    secret = token.encode("utf-8")
    bearer = {"authorization": b"Bearer " + secret}
    assert _drive(guard, headers=bearer)[0] == 200
    assert _drive(guard, headers={"authorization": b"Bearer " + secret + b"x"})[0] == 401
    # the same characters sent as Latin-1 are other bytes: refused
    latin = token.encode("latin-1", errors="replace")
    if latin != secret:
        assert _drive(guard, headers={"authorization": b"Bearer " + latin})[0] == 401
    assert _drive(guard, query=b"token=" + quote(token).encode())[0] == 200
    assert _drive(guard, query=b"token=" + quote(token + "x").encode())[0] == 401
    cookie = f"{TOKEN_COOKIE}={token_cookie_value(token)}".encode()
    assert _drive(guard, headers={"cookie": cookie})[0] == 200
    assert _drive(guard)[0] == 401


def test_the_cookie_holds_a_digest_not_the_token() -> None:
    token = "s3cret"
    assert token not in token_cookie_value(token)
    scope = {"headers": [(b"cookie", f"{TOKEN_COOKIE}={token}".encode())], "path": "/x"}
    assert not has_token(token, scope)


# -- the body cap ----------------------------------------------------------------------


def _post(guard: Guard, chunks: list[bytes], length: int | None = None) -> tuple[int, bytes, int]:
    headers = {"content-type": b"application/json"}
    if length is not None:
        headers["content-length"] = str(length).encode()
    return _drive(guard, method="POST", path="/api/x", headers=headers, chunks=chunks)


def test_a_chunked_body_over_the_cap_is_refused_as_it_streams() -> None:
    guard = Guard(_echo, hosts=machine_names(), token=None, max_body=1000)
    status, body, pulled = _post(guard, [b"x" * 400] * 100)  # 40,000 bytes, no length
    assert status == 413 and b"over 1000 bytes" in body
    assert pulled == 3  # 1,200 bytes read: stopped at the first chunk past the cap


def test_a_body_longer_than_its_content_length_says_is_refused() -> None:
    guard = Guard(_echo, hosts=machine_names(), token=None, max_body=1000)
    assert _post(guard, [b"x" * 600, b"x" * 600], length=10)[0] == 413


def test_a_body_within_the_cap_reaches_the_app_whole() -> None:
    guard = Guard(_echo, hosts=machine_names(), token=None, max_body=1000)
    assert _post(guard, [b"x" * 500, b"x" * 500])[:2] == (200, b"1000")
    assert _post(guard, [b"x" * 2000], length=2000)[0] == 413


@pytest.mark.slow
def test_a_chunked_upload_to_the_server_is_stopped_at_the_cap(
    hostile_run: Path, tmp_path: Path
) -> None:
    """A real socket: a chunked POST of 4 x the cap gets 413 and the server never holds
    more than the cap of it (the reply comes before the client has sent it all)."""
    with label_server(hostile_run, "--store", str(tmp_path / "l.sqlite")) as (url, _):
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(
                f"POST /api/queues/turn_satisfaction/undo HTTP/1.1\r\nHost: 127.0.0.1:{port}"
                "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
            )
            chunk = b"%x\r\n%s\r\n" % (1 << 20, b" " * (1 << 20))
            sent = 0
            try:
                for _ in range(4 * MAX_BODY >> 20):
                    sock.sendall(chunk)
                    sent += 1 << 20
            except OSError:  # the server answered and closed while we were still sending
                pass
            reply = b""
            while b"\r\n\r\n" not in reply:
                part = sock.recv(65536)
                if not part:
                    break
                reply += part
        assert reply.startswith(b"HTTP/1.1 413"), reply[:200]


# -- a server bound to every address ---------------------------------------------------


def _local_addresses() -> list[str]:
    """This machine's non-loopback IPv4 addresses (from `hostname -I`'s source, the kernel's
    routes: a UDP socket connected nowhere in particular sends nothing)."""
    found = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
            found.append(probe.getsockname()[0])
        except OSError:
            pass
    return [a for a in found if not a.startswith("127.")]


def _status(port: int, address: str, host: str, token: str) -> int:
    with socket.create_connection((address, port), timeout=60) as sock:
        sock.sendall(
            f"GET /api/queues HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n".encode()
            + b"Authorization: Bearer "
            + token.encode("utf-8")
            + b"\r\n\r\n"
        )
        reply = b""
        while True:
            part = sock.recv(65536)
            if not part:
                break
            reply += part
    return int(reply.split(b" ", 2)[1])


@pytest.mark.slow
def test_a_team_reaches_the_server_by_the_machines_address_and_name(
    hostile_run: Path, tmp_path: Path
) -> None:
    token = "équipe-Ω"
    env = {**os.environ, "GENIR_EVAL_LABEL_TOKEN": token}
    store = str(tmp_path / "l.sqlite")
    with label_server(hostile_run, "--store", store, "--host", "0.0.0.0", env=env) as (url, _):
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        hostname = socket.gethostname()
        assert _status(port, "127.0.0.1", f"{hostname}:{port}", token) == 200
        assert _status(port, "127.0.0.2", f"127.0.0.2:{port}", token) == 200
        for address in _local_addresses():
            assert _status(port, address, f"{address}:{port}", token) == 200
        assert _status(port, "127.0.0.1", f"evil.example:{port}", token) == 400
        assert _status(port, "127.0.0.2", f"127.0.0.3:{port}", token) == 400
        assert _status(port, "127.0.0.1", f"127.0.0.1:{port}", token + "x") == 401


@pytest.mark.slow
def test_a_token_on_the_command_line_is_warned_about(hostile_run: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "genir_eval", "label", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "process list" in done.stdout and "GENIR_EVAL_LABEL_TOKEN" in done.stdout
    store = str(tmp_path / "l.sqlite")
    with label_server(hostile_run, "--store", store, "--token", "t") as (_, process):
        said = process.said  # type: ignore[attr-defined]
    assert "warning: --token on the command line" in said and "GENIR_EVAL_LABEL_TOKEN" in said
    env = {**os.environ, "GENIR_EVAL_LABEL_TOKEN": "t"}
    with label_server(hostile_run, "--store", store, env=env) as (url, process):
        assert "warning" not in process.said  # type: ignore[attr-defined]
        assert call(url + "api/queues", headers={"Authorization": "Bearer t"})[0] == 200
        assert call(url + "api/queues")[0] == 401


# -- who labels, and how many at once ------------------------------------------------------


def _queue_store(path: Path, n: int = 3) -> tuple[Any, list[str]]:
    from genir_eval.runner.label.keys import item_key
    from genir_eval.runner.label.store import LabelStore

    keys = [item_key("turn", "s", i) for i in range(1, n + 1)]
    store = LabelStore(path, create=True)
    store.ensure_queue("turn_satisfaction", [(k, None) for k in keys], per_item=2)
    return store, keys


def test_two_people_typing_one_name_are_told_apart(tmp_path: Path) -> None:
    from genir_eval.runner.label.store import NameTaken

    store, _ = _queue_store(tmp_path / "l.sqlite")
    store.claim_name("ann", "session-one")
    store.claim_name("ann", "session-one")  # the same person coming back
    with pytest.raises(NameTaken, match="'ann' is taken"):
        store.claim_name("ann", "session-two")
    store.claim_name("ann 2", "session-two")
    store.claim_name("bob", "session-one")  # one browser may label under several names


def test_per_item_2_never_hands_an_item_to_three_at_once(tmp_path: Path) -> None:
    from genir_eval.runner.label.store import LEASE_SECONDS

    store, keys = _queue_store(tmp_path / "l.sqlite")
    q = "turn_satisfaction"
    t = 1_000_000.0
    # worked by hand: ann and bob take item 1 (two leases = per_item), carol gets item 2
    assert store.next_item(q, "ann", 2, now=t) == keys[0]
    assert store.next_item(q, "bob", 2, now=t) == keys[0]
    assert store.next_item(q, "carol", 2, now=t) == keys[1]
    assert store.next_item(q, "ann", 2, now=t + 1) == keys[0], "a reload keeps one's item"
    store.save(q, keys[0], "ann", value=4)  # ann's lease ends with her label
    assert store.next_item(q, "dan", 2, now=t + 2) == keys[1]  # 1 label + bob's lease
    # bob walks away: his lease ends and dan may take item 1
    later = t + LEASE_SECONDS + 1
    assert store.next_item(q, "carol", 2, now=later) == keys[0]
    assert store.next_item(q, "dan", 2, now=later) == keys[1]
    assert store.next_item(q, "erin", 2, now=later) == keys[1]
    assert store.next_item(q, "fay", 2, now=later) == keys[2]


@pytest.mark.slow
def test_the_server_tells_two_browsers_with_one_name_apart(
    hostile_run: Path, tmp_path: Path
) -> None:
    from label_helpers import browser

    with label_server(hostile_run, "--store", str(tmp_path / "l.sqlite")) as (url, _):
        one, two = browser(), browser()
        nxt = url + "api/queues/turn_satisfaction/next?labeller=ann"
        status, reply = call(nxt, opener=one)
        assert status == 200 and reply["next"] is not None
        status, reply = call(nxt, opener=two)
        assert status == 409 and "'ann' is taken" in reply["error"]
        assert call(nxt, opener=one)[0] == 200
        status, _ = call(url + "api/queues/turn_satisfaction/next?labeller=ann2", opener=two)
        assert status == 200
        body = {"key": "x", "labeller": "ann"}
        assert call(url + "api/queues/turn_satisfaction/undo", "POST", body, opener=two)[0] == 409


@pytest.mark.slow
def test_the_server_hands_an_item_to_per_item_people_at_once(
    hostile_run: Path, tmp_path: Path
) -> None:
    store = str(tmp_path / "l.sqlite")
    with label_server(hostile_run, "--store", store, "--per-item", "2") as (url, _):
        nxt = url + "api/queues/turn_satisfaction/next?labeller="
        handed = [call(nxt + who)[1]["next"]["key"] for who in ("ann", "bob", "carol")]
        assert handed[0] == handed[1] != handed[2]


@pytest.mark.slow
def test_a_token_that_is_not_utf8_is_one_line(hostile_run: Path) -> None:
    env: dict[Any, Any] = {k.encode(): v.encode() for k, v in os.environ.items()}
    env[b"GENIR_EVAL_LABEL_TOKEN"] = b"caf\xe9"  # Latin-1 bytes: no UTF-8 text
    done = subprocess.run(
        [sys.executable, "-m", "genir_eval", "label", str(hostile_run), "--host", "0.0.0.0"],
        capture_output=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert b"not valid UTF-8" in done.stderr and b"Traceback" not in done.stderr
