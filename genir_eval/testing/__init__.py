"""Test helpers other tests and benchmarks import: a local fake LLM server over real sockets."""

from genir_eval.testing.fake_llm_server import (
    FakeLLMServer,
    FakeLLMServerProcess,
    FakeRequest,
    Fault,
    FaultPlan,
    ServerStats,
)

__all__ = [
    "FakeLLMServer",
    "FakeLLMServerProcess",
    "FakeRequest",
    "Fault",
    "FaultPlan",
    "ServerStats",
]
