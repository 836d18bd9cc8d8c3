"""An API key never reaches the cache file, the journal, the stderr summary, the stats or a
Failure, even when the server's error body quotes it back."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Literal

import pytest
from llm_helpers import make_request

from genir_eval.cli.engine_options import add_engine_arguments, engine_from_args
from genir_eval.llm import (
    Completion,
    Failure,
    Journal,
    ProviderError,
)
from genir_eval.llm.providers.base import redactor
from genir_eval.testing import FakeLLMServer
from genir_eval.testing.fake_llm_server import _error_body

SECRET = "sk-LEAKCHECK-7f3a9c1e5b2d4e6f8a0b"
# A masked echo ("sk-LEA...0b") would still carry part of the key: look for a middle piece too.
FRAGMENTS = (SECRET, SECRET[3:15], SECRET[-12:])


def _leaks(text: str | bytes, where: str) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    return [f"{where}: {fragment!r}" for fragment in FRAGMENTS if fragment.encode() in data]


def test_api_key_is_written_nowhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    parser = argparse.ArgumentParser()
    add_engine_arguments(parser)
    with FakeLLMServer(api_key=SECRET, reply=lambda r: f"reply to {r.last_user_text}") as server:
        # A retried 500, a permanent 401 and a 429 with Retry-After among the replies, so
        # failures and error messages are journaled and counted too.
        server.push_script([None, "server_error", None, "unauthorized", "rate_limit"])
        args = parser.parse_args(
            ["--base-url", server.openai_base_url, "--model", "fake-model"]
            + ["--cache", str(tmp_path / "cache.sqlite"), "--concurrency", "2"]
        )

        async def go() -> tuple[list[Completion | Failure], dict[str, object], str]:
            async with engine_from_args(args) as engine:
                results = []
                for i in range(6):
                    request = make_request(i)
                    result = await engine.complete(request)
                    await engine.record(request, result, value={"label": i})
                    results.append(result)
                return results, engine.stats(), engine.summary()

        results, stats, summary = asyncio.run(go())
    assert SECRET in server.stats.auth_values or f"Bearer {SECRET}" in server.stats.auth_values
    assert sum(isinstance(r, Failure) for r in results) == 1  # the 401
    captured = capsys.readouterr()
    assert "genir-eval:" in captured.err  # the summary was printed

    leaks: list[str] = []
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert any(p.name == "cache.sqlite" for p in files)
    for path in files:
        leaks += _leaks(path.read_bytes(), str(path.relative_to(tmp_path)))
    leaks += _leaks(captured.err, "stderr")
    leaks += _leaks(captured.out, "stdout")
    leaks += _leaks(json.dumps(stats), "stats()")
    leaks += _leaks(summary, "summary()")
    leaks += _leaks(repr(results), "results")
    assert leaks == []


class _EchoingServer(FakeLLMServer):
    """Answers a scripted ``bad_request`` or ``server_error`` with an error body that quotes
    the request's credentials back, whole and masked (as some gateways and proxies do)."""

    async def _completion(
        self,
        protocol: Literal["openai", "anthropic"],
        headers: dict[str, str],
        body: bytes,
        writer: asyncio.StreamWriter,
    ) -> bool:
        head = self.script[0] if self.script else None
        if head is None or head.kind not in ("bad_request", "server_error"):
            return await super()._completion(protocol, headers, body, writer)
        self.script.popleft()
        key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        message = (
            f"rejected: Authorization={headers.get('authorization')!r} "
            f"x-api-key={headers.get('x-api-key')!r} masked={key[:12]}...{key[-10:]}"
        )
        status = 400 if head.kind == "bad_request" else 500
        self.stats.by_status[status] += 1
        self._send(writer, status, _error_body(protocol, "invalid_request_error", message))
        await writer.drain()
        return True


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_error_bodies_echoing_the_key_are_redacted(
    provider: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(f"{provider.upper()}_API_KEY", SECRET)
    parser = argparse.ArgumentParser()
    add_engine_arguments(parser)
    with _EchoingServer(api_key=SECRET, reply=lambda r: f"reply to {r.last_user_text}") as server:
        # A retried 500 and a permanent 400, both quoting the credentials back.
        server.push_script([None, "server_error", None, "bad_request"])
        base_url = server.openai_base_url if provider == "openai" else server.anthropic_base_url
        args = parser.parse_args(
            ["--provider", provider, "--base-url", base_url, "--model", "fake-model"]
            + ["--cache", str(tmp_path / "cache.sqlite"), "--concurrency", "1"]
        )

        async def go() -> tuple[list[Completion | Failure], dict[str, object], str, str]:
            async with engine_from_args(args) as engine:
                results = []
                for i in range(4):
                    request = make_request(i)
                    result = await engine.complete(request)
                    await engine.record(request, result, value={"label": i})
                    results.append(result)
                # The provider itself, called without the engine, raises redacted errors too.
                server.push_script(["bad_request"])
                try:
                    await engine.provider.generate(
                        request.messages, request.config, request=request
                    )
                except ProviderError as error:
                    direct = f"{error!s} {error!r} {error.__cause__!r}"
                else:
                    direct = "no error"
                return results, engine.stats(), engine.summary(), direct

        results, stats, summary, direct = asyncio.run(go())
    assert server.stats.by_status[400] == 2 and server.stats.by_status[500] == 1
    failures = [r for r in results if isinstance(r, Failure)]
    assert len(failures) == 1 and failures[0].error_class == "permanent"
    assert "[redacted]" in failures[0].message and "rejected" in failures[0].message
    assert "[redacted]" in direct
    captured = capsys.readouterr()

    leaks: list[str] = []
    for path in sorted(p for p in tmp_path.rglob("*") if p.is_file()):
        leaks += _leaks(path.read_bytes(), str(path.relative_to(tmp_path)))
    with Journal(tmp_path / "cache.sqlite") as journal:
        messages = [e.error_message or "" for e in journal.entries()]
    assert any("[redacted]" in m for m in messages)
    leaks += _leaks(" ".join(messages), "journal error messages")
    leaks += _leaks(captured.err, "stderr")
    leaks += _leaks(captured.out, "stdout")
    leaks += _leaks(json.dumps(stats), "stats()")
    leaks += _leaks(summary, "summary()")
    leaks += _leaks(repr(results), "results")
    leaks += _leaks(direct, "provider error")
    assert leaks == []


def test_redact_replaces_the_key_and_its_long_ends() -> None:
    # Computed by hand: the key whole, its first 12 and last 10 characters (both >= 8) go;
    # 7 characters are too few to identify a key and stay.
    pattern = redactor([SECRET])
    assert pattern is not None
    text = f"Bearer {SECRET} / {SECRET[:12]}...{SECRET[-10:]} / {SECRET[:7]}"
    assert pattern.sub("[redacted]", text) == (
        f"Bearer [redacted] / [redacted]...[redacted] / {SECRET[:7]}"
    )
    assert redactor(["", "abc"]) is None


@pytest.mark.parametrize(
    "echo",
    [
        f"{SECRET[:7]}...{SECRET[-4:]}",  # OpenAI's "Incorrect API key provided: sk-proj...abcd"
        f"{SECRET[:7]}****{SECRET[-4:]}",
        f"{SECRET[:3]}…{SECRET[-2:]}",
        f"{SECRET[:7]}{'*' * 20}{SECRET[-4:]}",
    ],
)
def test_masked_echoes_of_the_key_are_redacted(echo: str) -> None:
    pattern = redactor([SECRET])
    assert pattern is not None
    text = f"Incorrect API key provided: {echo}. You can find your API key at ..."
    assert pattern.sub("[redacted]", text) == (
        "Incorrect API key provided: [redacted]. You can find your API key at ..."
    )


def test_credentials_in_the_base_url_are_secrets(tmp_path: Path) -> None:
    """``https://user:key@host``: the key is redacted from errors; run.json and the cache
    key keep only scheme, host, port and path."""
    from genir_eval.llm.providers.openai_provider import OpenAIProvider
    from genir_eval.runner import parse_scenario, run_scenario

    password = "pw-" + SECRET[3:]
    with FakeLLMServer(reply=lambda r: '{"M": 2, "T": 2, "O": 2}') as server:
        url = server.openai_base_url.replace("://", f"://gateway:{password}@")
        provider = OpenAIProvider(model="m", base_url=url, api_key=server.api_key)
        # the user name too: some gateways take the key as the user name
        assert provider.redact(f"GET {url} failed") == (
            f"GET {url.replace(f'gateway:{password}', '[redacted]:[redacted]')} failed"
        )
        scenario = parse_scenario(
            {
                "input": {
                    "path": str(Path(__file__).parents[2] / "fixtures" / "demo_sessions.csv")
                },
                "llm": {"provider": "openai", "base_url": url},
                "engine": {"cache": str(tmp_path / "cache.sqlite")},
                "judges": [{"name": "link_usefulness.dna"}],
                "meta": {"n_boot": 10},
                "output": {"csv": True},
            },
            base_dir=tmp_path,
        )
        run_scenario(scenario, out_dir=tmp_path / "run")
    leaks: list[str] = []
    for path in sorted((tmp_path / "run").iterdir()) + [tmp_path / "cache.sqlite"]:
        if path.is_file():
            data = path.read_bytes()
            leaks += [
                f"{path.name}"
                for fragment in (password, password[3:15])
                if fragment.encode() in data
            ]
    assert leaks == []
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["scenario"]["document"]["llm"]["base_url"] == server.openai_base_url


@pytest.mark.parametrize("n", [8, 9, 10])
def test_redact_takes_ends_from_eight_characters_and_leaves_seven(n: int) -> None:
    # the bound, by hand: the first or last 8, 9, 10 characters of the key identify it and
    # go; 7 stay (too few to identify a key, and replacing them would garble messages)
    pattern = redactor([SECRET])
    assert pattern is not None
    text = f"a {SECRET[:n]} b {SECRET[-n:]} c {SECRET[:7]} d {SECRET[-7:]} e"
    assert pattern.sub("[redacted]", text) == (
        f"a [redacted] b [redacted] c {SECRET[:7]} d {SECRET[-7:]} e"
    )
