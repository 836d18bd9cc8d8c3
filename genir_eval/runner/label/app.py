"""The labelling server: pages and the JSON API they use, on Starlette.

Guarded as a local tool that may be opened to a team: every response carries a strict
Content-Security-Policy (scripts and styles only from the server itself), the Host header
must name the server (no DNS rebinding), a request that changes state must be JSON from the
server's own origin (a foreign ``Origin`` or a cross-site fetch is refused; a plain HTML
form from another site cannot send JSON), and a server bound beyond the loopback
requires a token (``Authorization: Bearer`` or the cookie ``/?token=`` sets).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from genir_eval.errors import GenirError
from genir_eval.runner.label import pages
from genir_eval.runner.label.api_schema import openapi_schema
from genir_eval.runner.label.guard import (
    CSP,
    LOOPBACK_NAMES,
    TOKEN_COOKIE,
    Guard,
    token_cookie_value,
)
from genir_eval.runner.label.items import Item
from genir_eval.runner.label.queue import Queue, Workspace
from genir_eval.runner.label.store import (
    Event,
    NameTaken,
    NotInQueue,
    check_labeller,
    new_session,
)

__all__ = ["make_app", "CSP", "TOKEN_COOKIE", "SESSION_COOKIE"]

STATIC = Path(__file__).parent / "static"
#: The cookie naming a labeller's browser session: a name belongs to the session that
#: first labelled under it, so two people who type the same name are told apart.
SESSION_COOKIE = "genir_label_session"
_SESSION_SHAPE = re.compile(r"[A-Za-z0-9_-]{16,64}")


class LabellerSession:
    """Gives every request its labeller session (``scope['state']['labeller_session']``):
    the cookie's, or a new one the response sets. ``SameSite=Lax``, not ``Strict``: a
    labeller following a link to the page from elsewhere keeps their session (a new one
    would find their own name taken); the cookie says who labels, it authorises nothing."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session = None
        for key, value in scope["headers"]:
            if key.lower() != b"cookie":
                continue
            for part in value.decode("latin-1").split(";"):
                name, _, given = part.strip().partition("=")
                if name == SESSION_COOKIE and _SESSION_SHAPE.fullmatch(given):
                    session = given
        fresh = session is None
        session = session or new_session()
        scope.setdefault("state", {})["labeller_session"] = session

        async def with_cookie(message: Message) -> None:
            if fresh and message["type"] == "http.response.start":
                cookie = (
                    f"{SESSION_COOKIE}={session}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax"
                )
                message = {
                    **message,
                    "headers": [*message.get("headers", []), (b"set-cookie", cookie.encode())],
                }
            await send(message)

        await self.app(scope, receive, with_cookie)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _item_json(queue: Queue, item: Item, *, reveal: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "key": item.key,
        "queue": queue.name,
        "session_id": item.session_id,
        "turn": item.turn,
        "panes": [{"heading": p.heading, "text": p.text} for p in item.panes],
        "choices": [
            {"value": c.value, "key": c.key, "words": c.words}
            for c in item.choices or queue.choices
        ],
    }
    if reveal:
        out["judged"] = dict(item.judged)
    return out


def _event_json(event: Event) -> dict[str, Any]:
    return {
        "id": event.id,
        "queue": event.queue,
        "key": event.item,
        "labeller": event.labeller,
        "action": event.action,
        "value": event.value,
        "comment": event.comment,
        "judge_shown": event.judge_shown,
        "seconds": event.seconds,
        "saved_at": event.saved_at,
    }


async def _body(request: Request, required: tuple[str, ...]) -> dict[str, Any]:
    raw = await request.body()
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise _Bad("the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise _Bad("the body must be a JSON object")
    for key in required:
        if key not in data:
            raise _Bad(f"{key}: required")
    return data


class _Bad(ValueError):
    """A request the API refuses with 422 and this message."""


def _string(data: Mapping[str, Any], key: str, *, limit: int = 2000) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise _Bad(f"{key}: a string")
    if len(value) > limit:
        raise _Bad(f"{key}: at most {limit} characters")
    return value


class _Server:
    """The pages and the API over one workspace (each method is a route or an error
    handler)."""

    def __init__(self, space: Workspace, token: str | None, scenarios: Mapping[str, Path]) -> None:
        self.space = space
        self.token = token
        self.scenarios = dict(scenarios)
        self.served_schema = openapi_schema(
            {q.name: [c.value for c in q.choices] for q in space.queues.values()},
            sorted(self.scenarios),
        )

    def queue_of(self, request: Request) -> Queue:
        try:
            return self.space.queue(request.path_params["queue"])
        except LookupError as error:
            raise NotInQueue(str(error)) from None

    async def labeller_of(self, request: Request, value: Any) -> str:
        """The labeller's name, held by this request's session (:class:`NameTaken` when
        another session holds it)."""
        try:
            name = check_labeller(value)
        except ValueError as error:
            raise _Bad(str(error)) from None
        session = request.scope["state"]["labeller_session"]
        await run_in_threadpool(self.space.store.claim_name, name, session)
        return name

    async def index(self, request: Request) -> Response:
        if "token" in request.query_params and self.token is not None:
            response = RedirectResponse("/", status_code=303)
            response.set_cookie(
                TOKEN_COOKIE, token_cookie_value(self.token), httponly=True, samesite="strict"
            )
            return response
        name = request.query_params.get("labeller") or None
        if name is not None:
            try:
                await self.labeller_of(request, name)
            except _Bad as error:
                return HTMLResponse(f"<p>{pages._e(error)}</p>", status_code=422)
            except NameTaken as error:
                return HTMLResponse(f"<p>{pages._e(error)}</p>", status_code=409)
        return HTMLResponse(await run_in_threadpool(pages.index_page, self.space, name))

    async def label_page(self, request: Request) -> Response:
        queue = self.queue_of(request)
        name = request.query_params.get("labeller")
        if not name:
            return RedirectResponse("/", status_code=303)
        try:
            labeller = await self.labeller_of(request, name)
        except NameTaken as error:
            return HTMLResponse(f"<p>{pages._e(error)}</p>", status_code=409)
        reveal = request.query_params.get("reveal") == "1"
        key = await run_in_threadpool(
            self.space.store.next_item, queue.name, labeller, queue.per_item
        )
        if key is None:
            return HTMLResponse(
                await run_in_threadpool(pages.done_page, self.space, queue, labeller)
            )
        page = await run_in_threadpool(
            pages.item_page, self.space, queue, queue.by_key[key], labeller, reveal=reveal
        )
        return HTMLResponse(page)

    async def agreement_page(self, request: Request) -> Response:
        return HTMLResponse(await run_in_threadpool(pages.agreement_page, self.space))

    async def list_queues(self, request: Request) -> Response:
        def figures() -> list[dict[str, Any]]:
            out = []
            for q in self.space.queues.values():
                size = q.size(self.space.store)
                out.append(
                    {
                        "name": q.name,
                        "items": len(q.items),
                        "per_item": q.per_item,
                        "needed": size.asked,
                        "width": size.width,
                        "labelled": len(self.space.store.labels(q.name)),
                        "choices": [
                            {"value": c.value, "key": c.key, "words": c.words} for c in q.choices
                        ],
                    }
                )
            return out

        return JSONResponse({"version": 1, "queues": await run_in_threadpool(figures)})

    async def next_item(self, request: Request) -> Response:
        queue = self.queue_of(request)
        labeller = await self.labeller_of(request, request.query_params.get("labeller", ""))
        reveal = request.query_params.get("reveal") == "1"
        key = await run_in_threadpool(
            self.space.store.next_item, queue.name, labeller, queue.per_item
        )
        done, seconds = await run_in_threadpool(self.space.store.done_by, queue.name, labeller)
        item = None if key is None else _item_json(queue, queue.by_key[key], reveal=reveal)
        return JSONResponse({"next": item, "progress": {"done": done, "seconds_per_item": seconds}})

    async def post_label(self, request: Request) -> Response:
        queue = self.queue_of(request)
        data = await _body(request, ("key", "labeller", "value"))
        labeller = await self.labeller_of(request, data["labeller"])
        value = data["value"]
        allowed = [c.value for c in queue.choices]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value not in allowed:
            raise _Bad(f"value: one of {', '.join(str(v) for v in allowed)} for {queue.name}")
        seconds = data.get("seconds")
        if seconds is not None and (
            isinstance(seconds, bool)
            or not isinstance(seconds, (int, float))
            or not 0 <= seconds < 1e7
        ):
            raise _Bad("seconds: a number of seconds, 0 or more")
        shown = data.get("judge_shown", False)
        if not isinstance(shown, bool):
            raise _Bad("judge_shown: true or false")
        event = await run_in_threadpool(
            lambda: self.space.store.save(
                queue.name,
                _string(data, "key", limit=4000),
                labeller,
                value=float(value),
                comment=_string(data, "comment"),
                judge_shown=shown,
                seconds=None if seconds is None else float(seconds),
            )
        )
        return JSONResponse({"event": _event_json(event)}, status_code=201)

    async def post_skip(self, request: Request) -> Response:
        queue = self.queue_of(request)
        data = await _body(request, ("key", "labeller"))
        labeller = await self.labeller_of(request, data["labeller"])
        event = await run_in_threadpool(
            lambda: self.space.store.save(
                queue.name,
                _string(data, "key", limit=4000),
                labeller,
                value=None,
                comment=_string(data, "comment"),
            )
        )
        return JSONResponse({"event": _event_json(event)}, status_code=201)

    async def post_undo(self, request: Request) -> Response:
        queue = self.queue_of(request)
        data = await _body(request, ("labeller",))
        labeller = await self.labeller_of(request, data["labeller"])
        event = await run_in_threadpool(self.space.store.undo, queue.name, labeller)
        return JSONResponse({"undone": None if event is None else _event_json(event)})

    async def agreement(self, request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(self.space.agreement))

    async def judge(self, request: Request) -> Response:
        data = await _body(request, ("scenario", "session"))
        name = data["scenario"]
        if not isinstance(name, str) or name not in self.scenarios:
            raise _Bad(f"scenario: one of {', '.join(sorted(self.scenarios)) or '(none given)'}")
        if not isinstance(data["session"], dict):
            raise _Bad("session: a canonical JSONL session object")
        from genir_eval.runner.label.judging import judge_session

        result = await run_in_threadpool(judge_session, self.scenarios[name], data["session"])
        return JSONResponse(result)

    async def schema(self, request: Request) -> Response:
        return JSONResponse(self.served_schema)

    async def not_in_queue(self, request: Request, error: Exception) -> Response:
        return _error(404, str(error))

    async def name_taken(self, request: Request, error: Exception) -> Response:
        return _error(409, str(error))

    async def bad(self, request: Request, error: Exception) -> Response:
        return _error(422, str(error))

    async def genir_error(self, request: Request, error: Exception) -> Response:
        return _error(422, str(error))


def make_app(
    space: Workspace,
    *,
    hosts: Iterable[str] | None = None,
    token: str | None = None,
    scenarios: Mapping[str, Path] | None = None,
) -> ASGIApp:
    """The server's ASGI application over ``space``; ``hosts`` the names the Host header
    may give (the loopback names by default), ``token`` required on every request when set,
    ``scenarios`` the scenarios ``POST /api/judge`` may name. The checks in front of it are
    :mod:`genir_eval.runner.label.guard`'s."""
    server = _Server(space, token, scenarios or {})
    routes = [
        Route("/", server.index),
        Route("/label/{queue}", server.label_page),
        Route("/agreement", server.agreement_page),
        Route("/openapi.json", server.schema),
        Route("/api/queues", server.list_queues),
        Route("/api/queues/{queue}/next", server.next_item),
        Route("/api/queues/{queue}/labels", server.post_label, methods=["POST"]),
        Route("/api/queues/{queue}/skip", server.post_skip, methods=["POST"]),
        Route("/api/queues/{queue}/undo", server.post_undo, methods=["POST"]),
        Route("/api/agreement", server.agreement),
        Route("/api/judge", server.judge, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={
            NotInQueue: server.not_in_queue,
            NameTaken: server.name_taken,
            _Bad: server.bad,
            GenirError: server.genir_error,
        },
    )
    return Guard(LabellerSession(app), hosts=hosts or LOOPBACK_NAMES, token=token)
