"""The viewer's JSON API as OpenAPI 3.0 (served at ``/openapi.json``; tests generate requests
from it with schemathesis and check every answer against it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["openapi_schema"]

_ERROR = {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}
_NUMBER = {"type": "number", "nullable": True}
_SCORES = {"type": "object", "additionalProperties": _NUMBER}


def _query(name: str, schema: dict[str, Any], description: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": schema, "description": description, **extra}


_FLAG = {"type": "string", "enum": ["0", "1"]}


def _names(names: Sequence[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(names)} if names else {"type": "string"}


def _filters(names: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """The table's query parameters; ``names`` the values each named one may take (those
    every run on view has)."""
    return [
        _query("q", {"type": "string", "maxLength": 500}, "text in the queries and answers"),
        _query("task", _names(names["task"]), "a task type"),
        _query("judge", _names(names["judge"]), "sessions this judge judged"),
        _query("failed", _FLAG, "1: sessions with a failed judgment (the judge's, when named)"),
        _query("missing", _FLAG, "1: sessions with a missing score"),
        _query("dis", _names(names["dis"]), "a judge-vs-people disagreement column"),
        _query("dis_min", {"type": "number"}, "the disagreement at least this large"),
        _query(
            "col",
            {"type": "array", "items": _names(names["col"])},
            "a range's column (with its lo and hi: a range is the three together)",
            style="form",
            explode=True,
        ),
        _query(
            "lo",
            {"type": "array", "items": {"type": "number"}},
            "a range's low end",
            style="form",
            explode=True,
        ),
        _query(
            "hi",
            {"type": "array", "items": {"type": "number"}},
            "a range's high end",
            style="form",
            explode=True,
        ),
        _query("sort", _names(names["sort"]), "the column to sort by"),
        _query("desc", _FLAG, "1: largest first"),
        _query("page", {"type": "integer", "minimum": 1, "maximum": 10**9}, "1-based page"),
        _query("size", {"type": "integer", "minimum": 1, "maximum": 500}, "rows a page"),
    ]


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _get(summary: str, parameters: list[dict[str, Any]], schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "get": {
            "summary": summary,
            "parameters": parameters,
            "responses": {
                "200": _json(schema, "found"),
                "400": _json(_ERROR, "the Host header names another server"),
                "401": _json(_ERROR, "the server's token is missing"),
                "404": _json(_ERROR, "no such run or session"),
                "422": _json(_ERROR, "a parameter that is wrong, named in the error"),
            },
        }
    }


_SESSION_ROW = {
    "type": "object",
    "required": ["session_id", "task_type", "n_turns", "failed", "missing", "scores", "href"],
    "properties": {
        "session_id": {"type": "string"},
        "task_type": {"type": "string", "nullable": True},
        "n_turns": {"type": "integer"},
        "failed": {"type": "integer"},
        "missing": {"type": "integer"},
        "scores": _SCORES,
        "href": {"type": "string"},
    },
}
_PAGE = {
    "type": "object",
    "required": ["total", "page", "size", "rows", "view"],
    "properties": {
        "total": {"type": "integer"},
        "page": {"type": "integer"},
        "size": {"type": "integer"},
        "view": {"type": "string"},
        "rows": {"type": "array", "items": _SESSION_ROW},
    },
}
_COMPARED = {
    "type": "object",
    "required": ["total", "page", "size", "runs", "score", "rows"],
    "properties": {
        "total": {"type": "integer"},
        "page": {"type": "integer"},
        "size": {"type": "integer"},
        "runs": {"type": "array", "items": {"type": "string"}},
        "score": {"type": "string", "nullable": True},
        "rows": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["session_id", "values", "deltas", "changed_scores"],
                "properties": {
                    "session_id": {"type": "string"},
                    "task_type": {"type": "string", "nullable": True},
                    "score": {"type": "string", "nullable": True},
                    "values": {"type": "array", "items": _NUMBER},
                    "deltas": {"type": "array", "items": _NUMBER},
                    "changed_scores": {"type": "integer"},
                },
            },
        },
    },
}
_RUNS = {
    "type": "object",
    "required": ["runs"],
    "properties": {
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["run", "title", "sessions", "scores", "judges", "disagreements"],
                "properties": {
                    "run": {"type": "integer"},
                    "title": {"type": "string"},
                    "sessions": {"type": "integer"},
                    "headline": {"type": "string", "nullable": True},
                    "scores": {"type": "array", "items": {"type": "string"}},
                    "judges": {"type": "array", "items": {"type": "string"}},
                    "tasks": {"type": "array", "items": {"type": "string"}},
                    "disagreements": {"type": "array", "items": {"type": "string"}},
                },
            },
        }
    },
}
_DETAIL = {
    "type": "object",
    "required": ["session_id", "scores", "turns", "judges", "disagreements"],
    "properties": {
        "run": {"type": "string"},
        "session_id": {"type": "string"},
        "task_type": {"type": "string", "nullable": True},
        "n_turns": {"type": "integer"},
        "scores": _SCORES,
        "disagreements": _SCORES,
        "judges": {"type": "object"},
        "turns": {"type": "array", "items": {"type": "object"}},
    },
}


def openapi_schema(runs: int, names: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The schema of a server over ``runs`` runs; ``names`` the task types, judges,
    disagreement columns, range columns, sort columns and scores (``by``) every run has."""
    run = _query(
        "run",
        {"type": "integer", "minimum": 0, "maximum": runs - 1},
        "the run's number (0: the first given)",
    )
    filters = _filters(names)
    return {
        "openapi": "3.0.3",
        "info": {"title": "genir-eval viewer", "version": "1"},
        "paths": {
            "/api/runs": _get("the runs on view", [], _RUNS),
            "/api/sessions": _get("a page of a run's session table", [run, *filters], _PAGE),
            "/api/session": _get(
                "one session, every judgment",
                [run, _query("id", {"type": "string"}, "the session id", required=True)],
                _DETAIL,
            ),
            "/api/compare": _get(
                "the sessions every run has, aligned, the most changed first",
                [*filters, _query("by", _names(names["by"]), "the score whose change orders")],
                _COMPARED,
            ),
        },
    }
