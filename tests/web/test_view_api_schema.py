"""The viewer's JSON API against its own OpenAPI schema: schemathesis generates requests from
the schema (valid and not) and checks every answer (no server error, a documented status,
the documented body and content type), against the server on a real socket."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance
from view_helpers import tiny_run
from view_process import view_server

pytestmark = pytest.mark.fuzz


@pytest.fixture(scope="module")
def api_schema(small_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    other = tiny_run(tmp_path_factory.mktemp("b") / "run", name="b", shift={"s0": 1.0})
    with view_server(str(small_run), str(other)) as url:
        yield schemathesis.openapi.from_url(url + "openapi.json")


def _fuzz(operation: object, excluded: list[object]) -> None:
    @given(case=operation.as_strategy())  # type: ignore[attr-defined]
    @settings(
        max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    def call(case: schemathesis.Case) -> None:
        case.call_and_validate(excluded_checks=excluded)

    call()


def test_the_api_keeps_to_its_schema(api_schema: schemathesis.BaseSchema) -> None:
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) == 4, "every route of the API is in the schema"
    for operation in operations:
        # a range is a col, a lo and a hi together, more than a JSON schema of three arrays
        # says: a lo without its col is refused with 422 (its message names it)
        ranged = any(p.name == "col" for p in operation.query)
        _fuzz(operation, [positive_data_acceptance] if ranged else [])
