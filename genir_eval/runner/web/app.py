"""The viewer's server: its pages, its JSON API and the labelling app on one Starlette
server, behind the labelling page's guard (runner/label/guard.py: the Host check, the token
when bound beyond the loopback, the cross-site refusals, the body cap and its
Content-Security-Policy: scripts and styles only from the server, so no inline script runs).
The token's cookie holds its SHA-256 as the labelling page's does, and the viewer's own
labelling page (``/label-item``) claims the labeller's name for the browser's labeller
session as the labelling page does (409 for a name another browser holds).

The labelling app answers its own paths (``/label/...``, ``/api/queues/...``,
``/agreement``, its ``/static/``; its index at ``/label/``, its schema at
``/label/openapi.json``); it is opened on the first run the first time one of them is asked
for (reading the run's sessions for it takes a while, and a run without labelled kinds has
no queue).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from genir_eval.errors import GenirError
from genir_eval.runner.label import pages as label_pages
from genir_eval.runner.label.app import LabellerSession
from genir_eval.runner.label.app import make_app as make_label_app
from genir_eval.runner.label.guard import LOOPBACK_NAMES, TOKEN_COOKIE, Guard, token_cookie_value
from genir_eval.runner.label.queue import Workspace, open_workspace
from genir_eval.runner.label.store import NameTaken, check_labeller
from genir_eval.runner.web.api_schema import openapi_schema
from genir_eval.runner.web.compare import Comparison, compare_runs
from genir_eval.runner.web.index import RunIndex
from genir_eval.runner.web.links import ServerLinks
from genir_eval.runner.web.pages import compare_page, e, page, table_page
from genir_eval.runner.web.query import Query, QueryError, parse_query, query_string, select
from genir_eval.runner.web.session import session_detail
from genir_eval.runner.web.session_page import compare_session_page, session_page

__all__ = ["make_viewer_app", "LabelOptions"]

STATIC = Path(__file__).parent / "static"
_LABEL_PREFIXES = (
    "/label/",
    "/api/queues",
    "/api/agreement",
    "/api/judge",
    "/agreement",
    "/static/",
)


@dataclass
class LabelOptions:
    """How the labelling app is opened over the first run (``genir-eval label``'s options)."""

    store: str | None = None
    per_item: int = 1
    width: float = 0.2
    scenarios: Mapping[str, Path] = field(default_factory=dict)


class _Viewer:
    def __init__(self, runs: list[RunIndex], label: LabelOptions, token: str | None) -> None:
        self.runs = runs
        self.comparison: Comparison | None = compare_runs(runs) if len(runs) > 1 else None
        self.label = label
        self.token = token
        self.links = ServerLinks()
        self._space: Workspace | None = None
        self._space_error: str | None = None
        self._lock = threading.Lock()
        self.served_schema = openapi_schema(len(runs), _common_names(runs))

    def run_of(self, request: Request) -> int:
        text = request.query_params.get("run", "0")
        if not text.isdigit() or int(text) >= len(self.runs):
            raise QueryError(f"run: 0 to {len(self.runs) - 1}, got {text!r}")
        return int(text)

    def query(self, request: Request, index: RunIndex) -> Query:
        return parse_query(parse_qs(request.url.query, keep_blank_values=True), index)

    def workspace(self) -> Workspace:
        with self._lock:
            if self._space is None and self._space_error is None:
                try:
                    self._space = open_workspace(
                        self.runs[0].directory,
                        store=self.label.store,
                        per_item=self.label.per_item,
                        width_share=self.label.width,
                    )
                except GenirError as error:
                    self._space_error = str(error)
            if self._space is None:
                raise LookupError(f"no labelling here: {self._space_error}")
            return self._space

    async def index(self, request: Request) -> Response:
        if "token" in request.query_params and self.token is not None:
            response = RedirectResponse("/", status_code=303)
            response.set_cookie(
                TOKEN_COOKIE, token_cookie_value(self.token), httponly=True, samesite="strict"
            )
            return response
        if "labeller" in request.query_params:  # the labelling pages' link to their index
            return RedirectResponse("/label/?" + request.url.query, status_code=303)
        if self.comparison is None:
            return await self.table(request)
        cmp = self.comparison
        query = self.query(request, cmp.base)
        rows = await run_in_threadpool(cmp.rows, query)
        return HTMLResponse(compare_page(cmp, query, rows, self.links))

    async def table(self, request: Request) -> Response:
        run = self.run_of(request)
        index = self.runs[run]
        query = self.query(request, index)
        rows = await run_in_threadpool(select, query, index)
        return HTMLResponse(table_page(index, run, query, rows, self.links))

    async def session(self, request: Request) -> Response:
        run = self.run_of(request)
        detail = await run_in_threadpool(
            session_detail, self.runs[run], request.query_params.get("id", "")
        )
        return HTMLResponse(session_page(detail, run, self.links))

    async def compare_session(self, request: Request) -> Response:
        if self.comparison is None:
            raise LookupError("one run on view: nothing to compare")
        return HTMLResponse(
            compare_session_page(self.comparison, request.query_params.get("id", ""), self.links)
        )

    async def label_item(self, request: Request) -> Response:
        """The labelling page on one item (the viewer's label buttons): the labelling app's
        own page and script, which save through its API."""
        params = request.query_params
        space = await run_in_threadpool(self.workspace)
        queue = space.queue(params.get("queue", ""))
        item = queue.by_key.get(params.get("key", ""))
        if item is None:
            raise LookupError(f"{queue.name}: no item {params.get('key', '')!r} to label")
        labeller = params.get("labeller", "")
        if not labeller:
            hidden = "".join(
                f"<input type='hidden' name='{k}' value='{e(params.get(k, ''))}'>"
                for k in ("queue", "key")
            )
            form = (
                f"<main><h1>Label {e(item.key)}</h1><form method='get' action='/label-item'>"
                f"{hidden}<label>Your name <input name='labeller' id='labeller' required "
                "pattern='[A-Za-z0-9][A-Za-z0-9 ._\\-]{0,39}' autofocus></label> "
                "<button type='submit'>Label</button></form></main>"
            )
            return HTMLResponse(page("Label", form, self.links))
        name = check_labeller(labeller)
        session = request.scope["state"]["labeller_session"]
        try:
            await run_in_threadpool(space.store.claim_name, name, session)
        except NameTaken as error:
            return HTMLResponse(page("Name taken", f"<p>{e(error)}</p>", self.links), 409)
        html = await run_in_threadpool(
            label_pages.item_page, space, queue, item, name, reveal=False
        )
        return HTMLResponse(html)

    async def api_runs(self, request: Request) -> Response:
        return JSONResponse(
            {
                "runs": [
                    {
                        "run": k,
                        "title": r.title,
                        "sessions": len(r),
                        "headline": r.headline,
                        "scores": r.scores,
                        "judges": r.judges,
                        "tasks": sorted({t for t in r.tasks if t}),
                        "disagreements": list(r.disagreements),
                    }
                    for k, r in enumerate(self.runs)
                ]
            }
        )

    async def api_sessions(self, request: Request) -> Response:
        run = self.run_of(request)
        index = self.runs[run]
        query = self.query(request, index)
        rows = await run_in_threadpool(select, query, index)
        start = (query.page - 1) * query.size
        out = []
        for row in rows[start : start + query.size]:
            row = int(row)
            out.append(
                {
                    "session_id": index.ids[row],
                    "task_type": index.tasks[row] or None,
                    "n_turns": int(index.columns["n_turns"][row]),
                    "failed": int(index.columns["failed"][row]),
                    "missing": int(index.columns["missing"][row]),
                    "scores": {n: _json(index.columns[n][row]) for n in index.scores},
                    "href": self.links.session(run, index.ids[row]),
                }
            )
        return JSONResponse(
            {
                "total": len(rows),
                "page": query.page,
                "size": query.size,
                "view": query_string(query),
                "rows": out,
            }
        )

    async def api_session(self, request: Request) -> Response:
        run = self.run_of(request)
        detail = await run_in_threadpool(
            session_detail, self.runs[run], request.query_params.get("id", "")
        )
        return JSONResponse(detail)

    async def api_compare(self, request: Request) -> Response:
        if self.comparison is None:
            raise LookupError("one run on view: nothing to compare")
        cmp = self.comparison
        query = self.query(request, cmp.base)
        rows = await run_in_threadpool(cmp.rows, query)
        score = query.by or cmp.by_default
        start = (query.page - 1) * query.size
        return JSONResponse(
            {
                "total": len(rows),
                "page": query.page,
                "size": query.size,
                "runs": [r.title for r in cmp.runs],
                "score": score,
                "rows": [cmp.row_json(int(r), score) for r in rows[start : start + query.size]],
            }
        )

    async def schema(self, request: Request) -> Response:
        return JSONResponse(self.served_schema)

    async def refused(self, request: Request, error: Exception) -> Response:
        status = 404 if isinstance(error, LookupError) else 422
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(error)}, status_code=status)
        body = f"<main><h1>Not shown</h1><p id='error'>{e(error)}</p><p><a href='/'>back</a></p></main>"
        return HTMLResponse(page("Not shown", body, self.links), status_code=status)


def _common_names(runs: list[RunIndex]) -> dict[str, list[str]]:
    """The names every run has, by the parameter that takes them (the schema's enums)."""

    def common(of: Any) -> list[str]:
        first = list(dict.fromkeys(of(runs[0])))
        return [n for n in first if all(n in set(of(r)) for r in runs[1:])]

    return {
        "task": common(lambda r: sorted({t for t in r.tasks if t})),
        "judge": common(lambda r: r.judges),
        "dis": common(lambda r: list(r.disagreements)),
        "col": common(lambda r: list(r.columns)),
        "sort": common(lambda r: r.sortable()),
        "by": common(lambda r: r.scores),
    }


def _json(value: float) -> float | None:
    return None if value != value else float(value)


class _Dispatch:
    """The labelling app's paths to it, every other path to the viewer (``/label-item``, a
    labelling page, with the labeller session the labelling app gives its own)."""

    def __init__(
        self, viewer: _Viewer, app: ASGIApp, hosts: frozenset[str], token: str | None
    ) -> None:
        self.viewer = viewer
        self.app = app
        self.labelling = LabellerSession(app)
        self.hosts = hosts
        self.token = token
        self._label: ASGIApp | None = None

    def label_app(self) -> ASGIApp:
        if self._label is None:
            guarded = make_label_app(
                self.viewer.workspace(),
                hosts=self.hosts,
                token=self.token,
                scenarios=self.viewer.label.scenarios,
            )
            self._label = guarded.app if isinstance(guarded, Guard) else guarded
        return self._label

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and (
            path in ("/label", "/label/openapi.json") or path.startswith(_LABEL_PREFIXES)
        ):
            inner = {"/label": "/", "/label/": "/", "/label/openapi.json": "/openapi.json"}
            try:
                app = await run_in_threadpool(self.label_app)
            except LookupError as error:
                await JSONResponse({"error": str(error)}, status_code=404)(scope, receive, send)
                return
            if path in inner:
                scope = {**scope, "path": inner[path], "raw_path": inner[path].encode()}
            await app(scope, receive, send)
            return
        if path == "/label-item":
            await self.labelling(scope, receive, send)
            return
        await self.app(scope, receive, send)


def make_viewer_app(
    runs: list[RunIndex],
    *,
    hosts: Iterable[str] | None = None,
    token: str | None = None,
    label: LabelOptions | None = None,
) -> ASGIApp:
    """The viewer over ``runs`` (the first the base of a comparison) with the labelling app
    on the first, behind one guard: ``hosts`` the names the Host header may give (the
    loopback's by default), ``token`` required on every request when set."""
    viewer = _Viewer(runs, label or LabelOptions(), token)
    names = frozenset(hosts or LOOPBACK_NAMES)
    routes = [
        Route("/", viewer.index),
        Route("/table", viewer.table),
        Route("/session", viewer.session),
        Route("/compare/session", viewer.compare_session),
        Route("/label-item", viewer.label_item),
        Route("/openapi.json", viewer.schema),
        Route("/api/runs", viewer.api_runs),
        Route("/api/sessions", viewer.api_sessions),
        Route("/api/session", viewer.api_session),
        Route("/api/compare", viewer.api_compare),
        Mount("/view-static", StaticFiles(directory=STATIC), name="view-static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={
            QueryError: viewer.refused,
            LookupError: viewer.refused,
            ValueError: viewer.refused,
            GenirError: viewer.refused,
        },
    )
    return Guard(_Dispatch(viewer, app, names, token), hosts=names, token=token)
