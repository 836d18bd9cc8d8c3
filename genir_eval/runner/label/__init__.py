"""People in the loop: a labelling page and JSON API over a finished run (``genir-eval
label RUN_DIR``), its labels kept in SQLite beside the run and read back as gold."""

from __future__ import annotations

from genir_eval.runner.label.gold import PeopleGold, open_people_gold, with_people_gold
from genir_eval.runner.label.items import Item, run_items
from genir_eval.runner.label.queue import Workspace, open_workspace
from genir_eval.runner.label.store import STORE_FILE, LabelStore

__all__ = [
    "Item",
    "run_items",
    "Workspace",
    "open_workspace",
    "LabelStore",
    "STORE_FILE",
    "PeopleGold",
    "open_people_gold",
    "with_people_gold",
]
