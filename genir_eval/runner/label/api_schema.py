"""The labelling server's OpenAPI 3.0 schema (served at ``/openapi.json``; the API tests
generate requests from it and check every response against it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["openapi_schema"]

_LABELLER = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}$"}
_NUMBER_OR_NULL = {"type": "number", "nullable": True}
_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {"type": "string"}},
}
_CHOICE = {
    "type": "object",
    "required": ["value", "key", "words"],
    "properties": {
        "value": {"type": "number"},
        "key": {"type": "string"},
        "words": {"type": "string"},
    },
}
_EVENT = {
    "type": "object",
    "required": ["id", "queue", "key", "labeller", "action", "value", "saved_at"],
    "properties": {
        "id": {"type": "integer"},
        "queue": {"type": "string"},
        "key": {"type": "string"},
        "labeller": {"type": "string"},
        "action": {"type": "string", "enum": ["label", "skip"]},
        "value": _NUMBER_OR_NULL,
        "comment": {"type": "string"},
        "judge_shown": {"type": "boolean"},
        "seconds": _NUMBER_OR_NULL,
        "saved_at": {"type": "string"},
    },
}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _refusals(*codes: str) -> dict[str, Any]:
    words = {
        "400": "the Host header names another server",
        "401": "the server's token is missing",
        "403": "a cross-site request",
        "404": "no such queue, or an item not in the queue",
        "409": "the labeller's name is held by another session (the genir_label_session "
        "cookie the server sets: keep it, or choose another name)",
        "413": "a body over 8 MB",
        "415": "a body that is not JSON",
        "422": "a field that is missing or wrong, named in the error",
    }
    return {code: _json(_ERROR, words[code]) for code in codes}


def _post(summary: str, body: dict[str, Any], ok: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "post": {
            "summary": summary,
            "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
            "responses": {
                ok: _json(schema, "saved"),
                **_refusals("400", "401", "403", "404", "409", "413", "415", "422"),
            },
        }
    }


def _label_body(values: Sequence[float]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["key", "labeller", "value"],
        "properties": {
            "key": {"type": "string"},
            "labeller": _LABELLER,
            "value": {"type": "number", "enum": list(values)},
            "comment": {"type": "string", "maxLength": 2000},
            "seconds": {"type": "number", "minimum": 0, "maximum": 1e7, "exclusiveMaximum": True},
            "judge_shown": {"type": "boolean"},
        },
    }


_SKIP_BODY = {
    "type": "object",
    "required": ["key", "labeller"],
    "properties": {
        "key": {"type": "string"},
        "labeller": _LABELLER,
        "comment": {"type": "string", "maxLength": 2000},
    },
}
_UNDO_BODY = {"type": "object", "required": ["labeller"], "properties": {"labeller": _LABELLER}}
_SAVED = {"type": "object", "required": ["event"], "properties": {"event": _EVENT}}
_UNDONE = {
    "type": "object",
    "required": ["undone"],
    "properties": {"undone": {**_EVENT, "nullable": True}},
}
_ITEM = {
    "type": "object",
    "nullable": True,
    "required": ["key", "queue", "session_id", "panes", "choices"],
    "properties": {
        "key": {"type": "string"},
        "queue": {"type": "string"},
        "session_id": {"type": "string"},
        "turn": {"type": "integer", "nullable": True},
        "panes": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["heading", "text"],
                "properties": {"heading": {"type": "string"}, "text": {"type": "string"}},
            },
        },
        "choices": {"type": "array", "items": _CHOICE},
        "judged": {"type": "object", "additionalProperties": _NUMBER_OR_NULL},
    },
}
_QUEUES_REPLY = {
    "type": "object",
    "required": ["version", "queues"],
    "properties": {
        "version": {"type": "integer"},
        "queues": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "name",
                    "items",
                    "per_item",
                    "needed",
                    "width",
                    "labelled",
                    "choices",
                ],
                "properties": {
                    "name": {"type": "string"},
                    "items": {"type": "integer"},
                    "per_item": {"type": "integer"},
                    "needed": {"type": "integer"},
                    "width": {"type": "number"},
                    "labelled": {"type": "integer"},
                    "choices": {"type": "array", "items": _CHOICE},
                },
            },
        },
    },
}
_NEXT_REPLY = {
    "type": "object",
    "required": ["next", "progress"],
    "properties": {
        "next": _ITEM,
        "progress": {
            "type": "object",
            "required": ["done", "seconds_per_item"],
            "properties": {"done": {"type": "integer"}, "seconds_per_item": _NUMBER_OR_NULL},
        },
    },
}


def _judge_body(scenarios: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["scenario", "session"],
        "properties": {
            "scenario": {"type": "string", "enum": list(scenarios)},
            "session": {"type": "object", "description": "one canonical JSONL session"},
        },
    }


_JUDGED = {
    "type": "object",
    "required": ["version", "session_id", "links", "citations", "turns", "session"],
    "properties": {
        "version": {"type": "integer"},
        "session_id": {"type": "string"},
        **{
            k: {"type": "array", "items": {"type": "object"}}
            for k in ("links", "citations", "turns", "session")
        },
    },
}
_AGREEMENT = {
    "type": "object",
    "required": ["version", "queues"],
    "properties": {
        "version": {"type": "integer"},
        "queues": {"type": "array", "items": {"type": "object"}},
    },
}


def openapi_schema(
    queues: Mapping[str, Sequence[float]], scenarios: Sequence[str]
) -> dict[str, Any]:
    """The schema of a server with ``queues`` (name -> the values a label may take) and
    the ``scenarios`` ``POST /api/judge`` may name, as a JSON-ready dict. Each queue has
    its own paths, so each says exactly which labels it takes."""
    get_refusals = _refusals("400", "401")
    paths: dict[str, Any] = {
        "/api/queues": {
            "get": {
                "summary": "the queues and their calibration sample sizes",
                "responses": {"200": _json(_QUEUES_REPLY, "the queues"), **get_refusals},
            }
        }
    }
    for name, values in queues.items():
        base = f"/api/queues/{name}"
        paths[f"{base}/next"] = {
            "get": {
                "summary": f"the next {name} _ITEM for a labeller (null when none is left)",
                "parameters": [
                    {"name": "labeller", "in": "query", "required": True, "schema": _LABELLER},
                    {
                        "name": "reveal",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string", "enum": ["0", "1"]},
                    },
                ],
                "responses": {
                    "200": _json(_NEXT_REPLY, "the next item"),
                    **get_refusals,
                    **_refusals("409", "422"),
                },
            }
        }
        paths[f"{base}/labels"] = _post(f"save a {name} label", _label_body(values), "201", _SAVED)
        paths[f"{base}/skip"] = _post(f"skip a {name} item", _SKIP_BODY, "201", _SAVED)
        paths[f"{base}/undo"] = _post("undo the labeller's last action", _UNDO_BODY, "200", _UNDONE)
    paths["/api/agreement"] = {
        "get": {
            "summary": "judge-vs-people and people-vs-people _AGREEMENT, PPI means",
            "responses": {"200": _json(_AGREEMENT, "the figures"), **get_refusals},
        }
    }
    paths["/api/judge"] = {
        "post": {
            "summary": "judge one session with a named scenario's judges",
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _judge_body(scenarios)}},
            },
            "responses": {
                "200": _json(_JUDGED, "labels and scores"),
                **_refusals("400", "401", "403", "413", "415", "422"),
            },
        }
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "genir-eval labelling API", "version": "1"},
        "paths": paths,
    }
