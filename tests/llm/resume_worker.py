"""A judging run the resume test starts as a subprocess and kills mid-run.

usage: resume_worker.py BASE_URL API_KEY DB_PATH N
Prints "done <i>" once judgment i is journaled; a judgment already journaled is skipped.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from llm_helpers import make_request, openai_engine


class _Server:
    def __init__(self, base_url: str, api_key: str) -> None:
        self.openai_base_url = base_url
        self.api_key = api_key


async def main(base_url: str, api_key: str, db: Path, n: int) -> None:
    engine = openai_engine(
        _Server(base_url, api_key), cache_path=db, journal_path=db, concurrency=4
    )

    async def judge(i: int) -> None:
        request = make_request(i)
        if engine.resume(request) is not None:
            return
        result = await engine.complete(request)
        await engine.record(request, result, value={"label": getattr(result, "text", None)})
        print(f"done {i}", flush=True)

    async with engine:
        await asyncio.gather(*(judge(i) for i in range(n)))
    print(f"calls {engine.calls}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])))
