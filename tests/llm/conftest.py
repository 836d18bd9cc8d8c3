from __future__ import annotations

from collections.abc import Iterator

import pytest

from genir_eval.testing import FakeLLMServer


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(reply=lambda request: f"reply to {request.last_user_text}") as running:
        yield running
