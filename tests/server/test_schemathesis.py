"""Generated requests for every operation of the OpenAPI document: never a 5xx.

Schemathesis's pytest plugin does not load on this pytest, so the operations are
walked here and each one's strategy run with Hypothesis directly.
"""

from __future__ import annotations

from typing import Any

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok

from .conftest import LiveServer


@schemathesis.serializer("application/x-ndjson")
def _ndjson(_context: Any, value: Any) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def test_no_generated_request_makes_the_server_fail(live: LiveServer) -> None:
    link = httpx.post(f"{live.url}/api/v1/auth/link", json={"token": live.bootstrap_token})
    headers = {"Authorization": f"Bearer {link.json()['token']}"}
    schema = schemathesis.openapi.from_url(f"{live.url}/api/v1/openapi.json")
    results = list(schema.get_all_operations())
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert len(operations) == len(results)  # the document itself is valid
    assert len(operations) >= 18
    statuses: list[int] = []
    # Setting the password ends the session the others use: it goes last.
    operations.sort(key=lambda operation: operation.path.endswith("/me/password"))

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=30,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def run(case: Any) -> None:
            answer = case.call_and_validate(
                headers=headers, checks=[not_a_server_error], timeout=10
            )
            statuses.append(answer.status_code)

        run()
    assert len(statuses) > 10 * len(operations)
    assert {200, 404, 422} <= set(statuses)  # the generator reached past validation
