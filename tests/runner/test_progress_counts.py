"""What a run says of its progress and of the work it reused: counts that only grow (no
total that grows as the judges find calls, so nothing moves backwards), and whether a rerun
resumed from the output folder's journal or the offline twins were computed again."""

from __future__ import annotations

import io
import re

from genir_eval.report.summary import reuse_words
from genir_eval.runner.progress import Progress

LINE = re.compile(r"^judging: ([\d,]+) calls done, ([\d,]+) under way, [\d.,]+/s, failed 0")


def test_the_progress_line_never_moves_backwards() -> None:
    progress = Progress(stream=io.StringIO(), quiet=True)
    seen = []
    # the judges find their calls as they go: 1, then 267 more, then 449 more
    for found, answered in ((1, 0), (267, 1), (449, 300), (0, 416)):
        progress.add_total(found)
        for _ in range(answered):
            progress.update()
        match = LINE.match(progress.line())
        assert match is not None, progress.line()
        seen.append((int(match.group(1).replace(",", "")), int(match.group(2).replace(",", ""))))
    assert seen == [(0, 1), (1, 267), (301, 416), (717, 0)]
    assert "/" not in progress.line().split(",")[0]  # no done/total


def _info(calls: int, resumed: int, lookups: int, provider: str) -> dict[str, object]:
    return {
        "provider_calls": calls,
        "cache": {"resumed": resumed, "lookups": lookups, "hits": lookups // 2},
        "engines": [{"provider": provider}],
    }


def test_what_a_run_reused_is_said_as_it_is() -> None:
    # a first offline run into a new folder: nothing resumed, the twins not cached
    assert reuse_words(_info(88, 0, 0, "offline")) == (
        "0 resumed (no earlier judgments in this output folder's journal); offline twins are "
        "not cached (computed again, at no cost)"
    )
    # the rerun into the same folder resumes every judgment
    assert reuse_words(_info(0, 88, 0, "offline")) == "88 resumed from the output folder's journal"
    # a model run with a cache
    assert reuse_words(_info(10, 0, 40, "openai")) == (
        "0 resumed (no earlier judgments in this output folder's journal), 20 cache hits of "
        "40 lookups"
    )
