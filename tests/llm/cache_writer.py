"""One of two processes writing the same cache file at once (the concurrent-writers test).

usage: cache_writer.py DB_PATH WRITER_ID N
Writes N entries of its own and N entries shared with the other writer.
"""

from __future__ import annotations

import asyncio
import sys

from llm_helpers import make_request

from genir_eval.llm import Cache, Completion, Usage
from genir_eval.llm.store.cache import cache_key


async def main(db: str, writer: str, n: int) -> None:
    cache = Cache(db)

    async def put(i: int, tag: str) -> None:
        request = make_request(i, task=f"writer.{tag}")
        key, inputs = cache_key(f"provider-{tag}", None, request)
        await cache.put(
            key,
            inputs,
            provider=f"provider-{tag}",
            task=request.task,
            completion=Completion(text=f"reply {tag} {i}", usage=Usage(10, 2)),
        )

    await asyncio.gather(*(put(i, writer) for i in range(n)), *(put(i, "shared") for i in range(n)))
    await cache.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
