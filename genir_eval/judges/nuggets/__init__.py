"""The nugget judge kind: which of the facts a query needed each answer states, as the TREC
2024 RAG track evaluates cited answers (AutoNuggetizer, Pradeep et al., arXiv 2411.09607).

Everything that knows the kind lives here: the judge (:mod:`.judge`: creation, importance,
assignment; its replies parsed in :mod:`.replies`, its sources pooled in :mod:`.pools`), the
nugget files people edit and evaluations publish (:mod:`.files`: genir-eval's and the
nuggetizer's JSONL, a collection's file, graded importance), its prompts (``prompts/``), its
offline twin (:mod:`.twin`, reading a nugget over the whole answer with :mod:`.coverage`) and
its kind (:mod:`.kind`). Importing the package registers the judge and its twin.
"""

from genir_eval.judges.base import register_judge
from genir_eval.judges.nuggets import twin as _twin  # noqa: F401 - registers the twin
from genir_eval.judges.nuggets.files import (
    Nugget,
    NuggetSet,
    read_nugget_file,
    write_nugget_file,
    write_nuggetizer_file,
)
from genir_eval.judges.nuggets.judge import NAME, NUGGETS_FILE, NuggetJudge, query_id

register_judge(NAME)(NuggetJudge)

__all__ = [
    "NUGGETS_FILE",
    "Nugget",
    "NuggetJudge",
    "NuggetSet",
    "query_id",
    "read_nugget_file",
    "write_nugget_file",
    "write_nuggetizer_file",
]
