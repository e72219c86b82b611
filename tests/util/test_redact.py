"""The redaction filter: which values count as secrets, and how they are masked."""

from __future__ import annotations

import pytest

from helix._util import MASK, redact, secret_values


@pytest.mark.parametrize(
    "name",
    ["OPENAI_API_KEY", "GH_TOKEN", "AWS_SECRET", "DB_PASSWORD", "SMTP_PASS", "password"],
)
def test_values_of_secret_named_variables_are_found(name: str) -> None:
    assert secret_values({name: "value-123456"}) == ["value-123456"]


@pytest.mark.parametrize("name", ["PATH", "HOME", "KEYBOARD", "TOKENIZER_PATH", "LANG"])
def test_ordinary_variables_are_not(name: str) -> None:
    assert secret_values({name: "value-123456"}) == []


def test_passwords_inside_urls_are_found_whatever_the_name() -> None:
    env = {
        "DATABASE_URL": "postgresql://app:pa55word-long@db/app",
        "HELIX_DB": "postgresql://helix@db/helix",  # no password
        "HOMEPAGE": "https://example.com/@user",
        "SHORT": "redis://:abc@cache",  # too short to mask safely
    }
    assert secret_values(env) == ["pa55word-long"]


def test_short_values_are_not_treated_as_secrets() -> None:
    assert secret_values({"X_TOKEN": "abc"}) == []


def test_redact_masks_the_longest_secret_first() -> None:
    text = "a=abcdef-long b=abcdef"
    assert redact(text, ["abcdef", "abcdef-long"], scan_env=False) == f"a={MASK} b={MASK}"


def test_redact_reads_the_environment_unless_told_not_to(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "tok-from-the-env")
    assert redact("see tok-from-the-env") == f"see {MASK}"
    assert redact("see tok-from-the-env", scan_env=False) == "see tok-from-the-env"
