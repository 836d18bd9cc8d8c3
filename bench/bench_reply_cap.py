"""What a reply streamed without end costs the client: the fake server's ``endless`` fault
(a 200 whose chunked body never ends) against the OpenAI provider, the client in this
process and the server in its own, so the peak RSS printed is the client's alone.

    python bench/bench_reply_cap.py                  # the default cap (16 MiB)
    python bench/bench_reply_cap.py --cap 1048576    # a cap of 1 MiB

Prints the failure the call ends with, how long it took and the client's peak RSS before
and after the call (the SDK is imported during it).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import time

from genir_eval.llm.providers.base import (
    DEFAULT_MAX_REPLY_BYTES,
    GenerateConfig,
    Message,
    ProviderError,
)
from genir_eval.llm.providers.openai_provider import OpenAIProvider
from genir_eval.testing import FakeLLMServerProcess


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _call(base_url: str, api_key: str, cap: int) -> str:
    provider = OpenAIProvider(model="m", base_url=base_url, api_key=api_key, max_reply_bytes=cap)
    try:
        await provider.generate([Message("user", "judge")], GenerateConfig(model="m"))
        return "no failure (the reply ended)"
    except ProviderError as error:
        return f"{error.error_class}: {error}"
    finally:
        await provider.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cap", type=int, default=DEFAULT_MAX_REPLY_BYTES, help="bytes")
    args = parser.parse_args()
    with FakeLLMServerProcess(script=["endless"]) as server:
        before = _peak_mb()
        start = time.monotonic()
        outcome = asyncio.run(_call(server.openai_base_url, server.api_key, args.cap))
        took = time.monotonic() - start
    print(f"cap {args.cap} bytes: {outcome}")
    print(f"after {took:.1f} s")
    print(f"client peak RSS {before:.0f} MB before the call, {_peak_mb():.0f} MB after")


if __name__ == "__main__":
    main()
