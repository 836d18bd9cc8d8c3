"""The labelling API against its own OpenAPI schema: schemathesis generates requests from
the schema (valid and not) and checks every answer (no server error, a documented status,
the documented body and content type), against the server on a real socket."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from label_helpers import label_server
from schemathesis.specs.openapi.checks import positive_data_acceptance

pytestmark = pytest.mark.fuzz


@pytest.fixture(scope="module")
def api_schema(hostile_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    store = tmp_path_factory.mktemp("schema") / "labels.sqlite"
    with label_server(hostile_run, "--store", str(store)) as (url, _):
        yield schemathesis.openapi.from_url(url + "openapi.json")


def _fuzz(operation: object, excluded: list[object]) -> None:
    """Hypothesis-generated calls of one operation, each answer checked against the schema."""

    @given(case=operation.as_strategy())  # type: ignore[attr-defined]
    @settings(
        max_examples=25,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def call(case: schemathesis.Case) -> None:
        case.call_and_validate(excluded_checks=excluded)

    call()


def test_the_api_keeps_to_its_schema(api_schema: schemathesis.BaseSchema) -> None:
    operations = [result.ok() for result in api_schema.get_all_operations()]
    # the queues, then 4 routes a queue (next, labels, skip, undo), agreement and judge
    assert len(operations) == 1 + 4 * 4 + 2, "every route of the API is in the schema"
    for operation in operations:
        # a session's rules are more than its JSON schema says (statements cover the
        # response, citations name links): a schema-valid session may be refused with 422
        excluded = [positive_data_acceptance] if operation.path == "/api/judge" else []
        _fuzz(operation, excluded)
