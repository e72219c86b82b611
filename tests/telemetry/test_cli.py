"""The person's side: ``helix run`` exports while it drives, ``helix doctor`` says where to,
and a bad setting is one clear line before anything is done."""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

import pytest

from helix.errors import ConfigError
from helix.telemetry import read_otel_settings
from tests._cli import run_helix

from ._collector import collector

_helix = partial(run_helix, drop=("HELIX_", "OTEL_"))


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "hello.yaml"
    path.write_text("steps:\n  - text: Hello from the script.\n")
    return path


def test_helix_run_exports_its_trace_only_when_an_endpoint_is_set(
    helix_home: Path, tmp_path: Path, scenario: Path
) -> None:
    world = tmp_path / "world"
    world.mkdir()
    run = ("run", "say hello", "--model", f"scripted:{scenario}", "--dir", str(world), "--json")
    with collector() as received:
        off = _helix(helix_home, *run)
        assert off.returncode == 0, off.stderr
        assert received.spans == []  # off by default: nothing is sent
        on = _helix(helix_home, *run, OTEL_EXPORTER_OTLP_ENDPOINT=received.url)
        assert on.returncode == 0, on.stderr
        spans = list(received.spans)  # sent before the command exited
    run_id = json.loads(on.stdout.splitlines()[0])["run_id"]
    names = sorted(s.name for s in spans)
    assert names == [f"chat {scenario}", "invoke_agent default", "turn 1"]
    assert {s.attributes.get("helix.run.id") for s in spans} >= {run_id}
    assert received.paths == ["/v1/traces"]


ENDPOINT = {"HELIX_OTEL_ENDPOINT": "http://x"}


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"HELIX_OTEL_ENDPOINT": "collector:4318"},
         "HELIX_OTEL_ENDPOINT: 'collector:4318' is not an http(s) URL"),
        ({"HELIX_OTEL_ENDPOINT": "ftp://x"}, "is not an http(s) URL"),
        ({"HELIX_OTEL_ENDPOINT": "http://x:99999"}, "has a bad port"),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x/?a=1"},
         "OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x/?a=1' may not"),
        ({**ENDPOINT, "HELIX_OTEL_HEADERS": "token"}, "HELIX_OTEL_HEADERS: expected key=value"),
        ({**ENDPOINT, "OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, "is not milliseconds"),
        ({**ENDPOINT, "OTEL_EXPORTER_OTLP_TIMEOUT": "0"}, "between 1 and"),
        ({**ENDPOINT, "HELIX_OTEL_GATE_REASONS": "maybe"}, "not one of on, off"),
    ],
)  # fmt: skip
def test_bad_settings_are_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        read_otel_settings(env)


def test_what_turns_export_on_and_where_it_goes() -> None:
    assert read_otel_settings({}) is None
    base = read_otel_settings({"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c.example:4318/otlp/"})
    assert base is not None
    assert base.endpoint == "https://c.example:4318/otlp/v1/traces"
    full = read_otel_settings({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/custom"})
    assert full is not None
    assert full.endpoint == "http://c:4318/custom"
    both = read_otel_settings(
        {
            "HELIX_OTEL_ENDPOINT": "http://mine:4318",
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://theirs:4318",
            "OTEL_EXPORTER_OTLP_HEADERS": "a=1,b=x%3Dy",
            "OTEL_SERVICE_NAME": "agents",
        }
    )
    assert both is not None
    assert (both.endpoint, both.source) == ("http://mine:4318/v1/traces", "HELIX_OTEL_ENDPOINT")
    assert both.headers == (("a", "1"), ("b", "x=y"))
    assert both.service_name == "agents"
    disabled = {"HELIX_OTEL_ENDPOINT": "http://mine:4318", "OTEL_SDK_DISABLED": "true"}
    assert read_otel_settings(disabled) is None
    secret = read_otel_settings({"HELIX_OTEL_ENDPOINT": "https://u:pw@c.example:4318"})
    assert secret is not None
    assert secret.shown == "https://c.example:4318/v1/traces"


def test_a_bad_setting_stops_a_command_with_one_line(helix_home: Path, tmp_path: Path) -> None:
    for args in (("runs",), ("serve", "--port", "0")):
        result = _helix(helix_home, *args, HELIX_OTEL_ENDPOINT="localhost:4318")
        assert result.returncode == 2, result.stderr
        assert result.stderr == (
            "error: HELIX_OTEL_ENDPOINT: 'localhost:4318' is not an http(s) URL"
            " (e.g. http://127.0.0.1:4318)\n"
        )


def test_without_the_extra_export_names_the_install_command(helix_home: Path) -> None:
    blocked = "import sys; sys.modules['opentelemetry.exporter.otlp.proto.http'] = None"
    for args in (("runs",), ("serve", "--port", "0")):
        result = _helix(helix_home, *args, prelude=blocked, HELIX_OTEL_ENDPOINT="http://c:4318")
        assert result.returncode == 2, result.stderr
        assert result.stderr == (
            "error: trace export needs OpenTelemetry: pip install 'helix-harness[otel]'\n"
        )
    unset = _helix(helix_home, "runs", prelude=blocked)
    assert unset.returncode == 0, unset.stderr  # off: the extra is not needed


def test_doctor_says_whether_traces_go_out_and_where(helix_home: Path) -> None:
    off = _helix(helix_home, "doctor")
    assert "traces: not exported (set HELIX_OTEL_ENDPOINT)" in off.stdout
    on = _helix(
        helix_home,
        "doctor",
        "--json",
        HELIX_OTEL_ENDPOINT="https://user:pw@c.example:4318",
        HELIX_OTEL_HEADERS="x-key=sekrit",
    )
    report = json.loads(on.stdout)
    assert report["traces"] == {
        "on": True,
        "endpoint": "https://c.example:4318/v1/traces",
        "source": "HELIX_OTEL_ENDPOINT",
        "error": None,
    }
    assert "sekrit" not in on.stdout
    assert "pw@" not in on.stdout
    bad = _helix(helix_home, "doctor", HELIX_OTEL_ENDPOINT="nope")
    assert "traces: FAILED: HELIX_OTEL_ENDPOINT: 'nope' is not an http(s) URL" in bad.stdout
