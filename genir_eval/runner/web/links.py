"""Where a viewer page's links go: the server's routes, or the bundle's files (a static copy
has no server behind it, so its links are file names and it offers no labelling)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

__all__ = ["ServerLinks", "BundleLinks", "Links"]


class Links:
    bundle = False

    def table(self, run: int, query: str) -> str:
        raise NotImplementedError

    def compare(self, query: str) -> str:
        raise NotImplementedError

    def session(self, run: int, session_id: str) -> str | None:
        raise NotImplementedError

    def compare_session(self, session_id: str) -> str | None:
        raise NotImplementedError

    def label(self, queue: str, key: str) -> str | None:
        raise NotImplementedError

    def static(self, name: str) -> str:
        raise NotImplementedError


class ServerLinks(Links):
    def table(self, run: int, query: str) -> str:
        head = urlencode({"run": run})
        return f"/table?{head}&{query}" if query else f"/table?{head}"

    def compare(self, query: str) -> str:
        return f"/?{query}" if query else "/"

    def session(self, run: int, session_id: str) -> str | None:
        return "/session?" + urlencode({"run": run, "id": session_id})

    def compare_session(self, session_id: str) -> str | None:
        return "/compare/session?" + urlencode({"id": session_id})

    def label(self, queue: str, key: str) -> str | None:
        return "/label-item?" + urlencode({"queue": queue, "key": key})

    def static(self, name: str) -> str:
        return f"/view-static/{name}"


@dataclass
class BundleLinks(Links):
    """The bundle's file names: ``index.html`` the view, ``session-N.html`` each session it
    lists (``N`` its row in the view's base run), ``compare-N.html`` its side-by-side page."""

    rows: dict[str, int] = field(default_factory=dict)
    bundle = True

    def table(self, run: int, query: str) -> str:
        return "index.html"

    def compare(self, query: str) -> str:
        return "index.html"

    def session(self, run: int, session_id: str) -> str | None:
        row = self.rows.get(session_id)
        return None if row is None else f"session-{run}-{row}.html"

    def compare_session(self, session_id: str) -> str | None:
        row = self.rows.get(session_id)
        return None if row is None else f"compare-{row}.html"

    def label(self, queue: str, key: str) -> str | None:
        return None

    def static(self, name: str) -> str:
        return name
