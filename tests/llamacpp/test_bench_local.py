"""``helix bench models`` measures what Helix adds to a call to a real local server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helix._util import free_port

from .conftest import ALIAS, LlamaServer

pytestmark = pytest.mark.xdist_group("llama")


def _bench(home: Path, url: str) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("HELIX_", "LLAMACPP_"))}
    return subprocess.run(
        [sys.executable, "-m", "helix", "bench", "models", "--json", "--quick"],
        capture_output=True,
        text=True,
        env={**inherited, "HELIX_HOME": str(home), "LLAMACPP_BASE_URL": url},
        stdin=subprocess.DEVNULL,
        timeout=600,
    )


def test_local_call_overhead_is_measured_against_the_real_server(
    tmp_path: Path, llama: LlamaServer
) -> None:
    result = _bench(tmp_path, llama.url)
    assert result.returncode == 0, result.stderr
    figures = [json.loads(line) for line in result.stdout.splitlines()]
    (local,) = [f for f in figures if f["name"] == "local_call_overhead"]
    assert local["suite"] == "models"
    assert local["unit"] == "ms/call"
    assert local["params"] == {"provider": "llamacpp", "model": ALIAS, "calls": 6}
    assert local["baseline"] > 0  # the bare request's milliseconds
    assert local["ratio"] == pytest.approx(local["value"] / local["baseline"], rel=1e-3, abs=1e-6)
    assert {f["name"] for f in figures} == {"adapter_overhead", "local_call_overhead"}


def test_without_a_server_the_figure_is_left_out_and_the_reason_said(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    result = _bench(tmp_path, url)
    assert result.returncode == 0, result.stderr
    names = {json.loads(line)["name"] for line in result.stdout.splitlines()}
    assert names == {"adapter_overhead"}
    assert f"no llama.cpp server answers at {url}: local_call_overhead not measured" in (
        result.stderr
    )
