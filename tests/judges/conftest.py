"""Shared fixtures of the judge tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from genir_eval.testing.fake_llm_server import FakeLLMServer


@pytest.fixture
def fake_server() -> Iterator[Callable[[Any], FakeLLMServer]]:
    """Starts local fake LLM servers with a scripted reply; stops them all after the test."""
    servers: list[FakeLLMServer] = []

    def start(script: Any) -> FakeLLMServer:
        server = FakeLLMServer(reply=script).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
