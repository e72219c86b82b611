"""Model names, keys, roles and prices."""

from __future__ import annotations

import logging

import pytest

from helix._util import MASK, redact
from helix.errors import MissingKeyError, ModelNameError
from helix.providers import TokenUsage
from helix.providers._cost import Price, PriceBook
from helix.providers._fallback import FallbackModel
from helix.providers._provider import PROVIDERS
from helix.providers._registry import (
    ROLES,
    build_model,
    model_for_role,
    open_model,
    parse_model_name,
    role_name,
)
from helix.providers._retry import RetryingModel


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("openai:gpt-4.1", ("openai", "gpt-4.1")),
        ("ollama:qwen2.5-coder:7b", ("ollama", "qwen2.5-coder:7b")),
        ("Anthropic:claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("scripted:/tmp/s.yaml", ("scripted", "/tmp/s.yaml")),
    ],
)
def test_model_names(name: str, parsed: tuple[str, str]) -> None:
    assert parse_model_name(name) == parsed


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("gpt-4.1", "use provider:model"),
        ("openai:", "use provider:model"),
        (":gpt", "use provider:model"),
        ("", "use provider:model"),
        ("acme:model-1", "unknown provider 'acme'"),
    ],
)
def test_malformed_and_unknown_names(name: str, message: str) -> None:
    with pytest.raises(ModelNameError, match=message):
        open_model(name, env={})


@pytest.mark.parametrize("provider", [p for p, s in PROVIDERS.items() if s.key_required])
def test_missing_key_names_the_variable(provider: str) -> None:
    with pytest.raises(MissingKeyError) as caught:
        open_model(f"{provider}:m", env={})
    assert str(caught.value) == f"{provider} needs an API key: set {PROVIDERS[provider].key_env}"


def test_local_servers_need_no_key() -> None:
    model = open_model("ollama:llama3.2", env={"OLLAMA_HOST": "10.1.2.3"})
    assert model.name == "ollama:llama3.2"


def test_build_model_wraps_retries_and_chains_fallbacks() -> None:
    env = {"OPENAI_API_KEY": "k" * 10, "ANTHROPIC_API_KEY": "a" * 10}
    single = build_model("openai:gpt-4.1", env=env)
    assert isinstance(single, RetryingModel)
    chain = build_model(["openai:gpt-4.1", "anthropic:claude-sonnet-4-5"], env=env)
    assert isinstance(chain, FallbackModel)
    assert chain.name == "openai:gpt-4.1 | anthropic:claude-sonnet-4-5"
    with pytest.raises(ModelNameError):
        build_model([], env=env)


def test_roles_fall_back_to_default() -> None:
    roles = {"default": "openai:gpt-4.1", "summarizer": ["groq:llama-3.1-8b", "openai:gpt-4.1"]}
    assert model_for_role(roles, "planner") == "openai:gpt-4.1"
    assert model_for_role(roles, "summarizer") == ["groq:llama-3.1-8b", "openai:gpt-4.1"]
    with pytest.raises(ModelNameError, match="unknown role"):
        model_for_role(roles, "boss")
    with pytest.raises(ModelNameError, match="no model for role"):
        model_for_role({}, "worker")


def test_prices_from_genai_prices() -> None:
    book = PriceBook()
    cost = book.cost("openai", "gpt-4.1", TokenUsage(1_000_000, 1_000_000))
    assert cost is not None
    assert cost > 0
    cached = book.cost("anthropic", "claude-sonnet-4-5", TokenUsage(1000, 100, 800))
    full = book.cost("anthropic", "claude-sonnet-4-5", TokenUsage(1000, 100))
    assert cached is not None
    assert full is not None
    assert cached < full


def test_unknown_price_is_null_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    book = PriceBook()
    with caplog.at_level(logging.WARNING):
        assert book.cost("openai", "no-such-model-zz", TokenUsage(10, 10)) is None
        assert book.cost("openai", "no-such-model-zz", TokenUsage(10, 10)) is None
    assert len([r for r in caplog.records if "no-such-model-zz" in r.getMessage()]) == 1


def test_overrides_and_free_models() -> None:
    book = PriceBook({"openai:gpt-4.1": Price(input=1.0, output=2.0, cached_input=0.5)})
    assert book.cost("openai", "gpt-4.1", TokenUsage(1_000_000, 1_000_000, 500_000)) == 2.75
    assert book.cost("ollama", "anything", TokenUsage(5, 5)) == 0.0
    assert book.cost("scripted", "demo.yaml", TokenUsage(5, 5)) == 0.0


def test_price_file(tmp_path: pytest.TempPathFactory) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "prices.toml"
    path.write_text('"acme:m1" = {input = 3.0, output = 6.0}\n')
    book = PriceBook.from_file(path)
    assert book.cost("acme", "m1", TokenUsage(1_000_000, 0)) == 3.0
    path.write_text("nonsense = 1")
    from helix.errors import ConfigError

    with pytest.raises(ConfigError, match="cannot read prices"):
        PriceBook.from_file(path)


def test_redaction_masks_known_and_environment_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-abcdef-123")
    text = "key sk-live-999999 and tok-abcdef-123 and short abc"
    assert redact(text, ["sk-live-999999", "abc"]) == f"key {MASK} and {MASK} and short abc"


def test_roles_by_their_current_and_older_names() -> None:
    roles = {"main": "openai:gpt-4.1", "summary": "openai:gpt-4.1-mini"}
    assert ROLES == ("main", "summary", "judge", "planner", "worker")
    assert model_for_role(roles, "summarizer") == "openai:gpt-4.1-mini"
    assert model_for_role(roles, "judge") == "openai:gpt-4.1"  # main serves the rest
    assert model_for_role({"default": "openai:o3"}, "main") == "openai:o3"
    assert role_name("default") == "main"
    with pytest.raises(ModelNameError, match="main, summary, judge, planner, worker"):
        role_name("boss")
