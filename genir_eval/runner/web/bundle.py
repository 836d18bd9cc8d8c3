"""``view --bundle DIR``: the current view as static files that open from ``file://`` with no
server: ``index.html`` (the table, its rows also as a JSON block the script searches),
a page per session it lists (and per run, when runs are compared), the style sheet and the
script. It writes only regular files it creates, in a folder it owns (a new or empty one, or
one an earlier bundle made); a file it wrote before and does not write now is removed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from genir_eval.paths import (
    check_output_path,
    claim_folder,
    owned_files,
    record_files,
    write_output,
)
from genir_eval.runner.web.compare import compare_runs
from genir_eval.runner.web.index import RunIndex
from genir_eval.runner.web.links import BundleLinks
from genir_eval.runner.web.pages import compare_page, table_page
from genir_eval.runner.web.query import Query, select
from genir_eval.runner.web.session import session_detail
from genir_eval.runner.web.session_page import compare_session_page, session_page

__all__ = ["write_bundle", "BUNDLE_LIMIT"]

BUNDLE_LIMIT = 500
STATIC = Path(__file__).parent / "static"


def write_bundle(
    runs: Sequence[RunIndex], query: Query, out: str | Path, *, limit: int = BUNDLE_LIMIT
) -> tuple[Path, int, int]:
    """Write the view ``query`` of ``runs`` (compared when more than one) to ``out``; returns
    the folder, the sessions written and the sessions the view holds."""
    folder = Path(out)
    marker = claim_folder(folder, "view", signature=("viewer.js",), option="--bundle")
    base = runs[0]
    cmp = compare_runs(runs) if len(runs) > 1 else None
    rows = cmp.rows(query) if cmp is not None else select(query, base)
    kept: np.ndarray = rows[:limit]
    note = f" (the first {len(kept)} of {len(rows)} in this copy)" if len(kept) < len(rows) else ""
    links = BundleLinks(rows={base.ids[int(r)]: int(r) for r in kept})
    pages: dict[str, str] = {}
    if cmp is None:
        pages["index.html"] = table_page(base, 0, query, kept, links, limit_note=note)
    else:
        pages["index.html"] = compare_page(cmp, query, kept, links)
    for r in kept:
        sid = base.ids[int(r)]
        for k, run in enumerate(runs):
            if sid in run.position:
                pages[f"session-{k}-{int(r)}.html"] = session_page(
                    session_detail(run, sid), k, links
                )
        if cmp is not None:
            pages[f"compare-{int(r)}.html"] = compare_session_page(cmp, sid, links)
    written = [*pages, "viewer.js", "viewer.css"]
    # every file is written through genir_eval.paths (a fresh temporary file renamed into
    # place); each path is checked first, so a device, a FIFO or a link standing at one is
    # refused before anything is removed or written
    for name in written:
        check_output_path(folder / name, "--bundle")
    for name in owned_files(marker):
        stale = folder / name
        if name not in written and stale.is_file() and not stale.is_symlink():
            stale.unlink()
    for name, text in pages.items():
        write_output(folder / name, text, "--bundle")
    for name in ("viewer.js", "viewer.css"):
        write_output(folder / name, (STATIC / name).read_text(encoding="utf-8"), "--bundle")
    record_files(folder, "view", written)
    return folder, len(kept), len(rows)
