"""A candidate policy: what ``helix policy replay`` judges a run's logged calls against.

A policy file is YAML, TOML or JSON with the blueprint's own shapes, and only the
sections that decide calls::

    policy:                       # the capability ceiling (a blueprint's ``policy``)
      deny_tools: [run_command]
      arguments: {run_command: {command: [{pattern: "pytest.*"}]}}
    approvals:                    # approval rules (a blueprint's ``approvals.rules``)
      rules: [{tool: write_file, action: ask}]
    sandbox:                      # egress lists (a blueprint's ``sandbox.network``/``deny``)
      network: ["*.python.org"]
      deny: [evil.example]
    budget: {usd: 0.5, max_seconds: 600}

A section left out keeps what the run itself had (its blueprint's, and for the
ceiling the workspace's too); a section given replaces it whole, so
``approvals: {rules: []}`` means "the default approvals", and ``policy: {}`` "no
ceiling". Unknown fields are refused, so a typo is never a silently looser policy.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from helix._util import FileProblem, first_problem, parse_structured
from helix.errors import PolicyError
from helix.gates import ApprovalRule, EgressPolicy, Policy

from ._blueprint import Blueprint


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CandidateApprovals(_Strict):
    """The approval rules to judge with (first match wins, else the defaults)."""

    rules: tuple[ApprovalRule, ...] = ()


class CandidateEgress(_Strict):
    """The domains a tool with a URL may reach (``*.example.com`` for subdomains)."""

    network: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    """Refused domains; they win over ``network``."""


class CandidateBudget(_Strict):
    """Caps the budget gate judges against the spend logged before each call."""

    usd: float | None = Field(default=None, gt=0)
    max_seconds: float | None = Field(default=None, gt=0)


class CandidatePolicy(_Strict):
    """The sections of a policy to try; those left out keep the run's own."""

    policy: Policy | None = None
    """The effective ceiling (it replaces the blueprint's and the workspace's)."""
    approvals: CandidateApprovals | None = None
    sandbox: CandidateEgress | None = None
    budget: CandidateBudget | None = None

    @classmethod
    def parse(cls, data: object, *, source: str) -> CandidatePolicy:
        """Validate a policy's settings; ``PolicyError`` names ``source``, field and reason."""
        if not isinstance(data, dict):
            raise PolicyError(f"{source}: a policy is a mapping with some of {_SECTIONS}")
        if not data:
            raise PolicyError(f"{source}: the policy is empty: give some of {_SECTIONS}")
        try:
            return cls.model_validate(data)
        except ValidationError as error:
            item = error.errors()[0]
            if item["type"] == "extra_forbidden":
                where = ".".join(str(part) for part in item["loc"])
                raise PolicyError(f"{source}: {where}: unknown field") from None
            raise PolicyError(f"{source}: {first_problem(error)}") from None

    @classmethod
    def load(cls, path: str | Path) -> CandidatePolicy:
        """Read a YAML, TOML or JSON policy file (by its suffix)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise PolicyError(f"{path}: cannot read the policy: {error}") from None
        return cls.from_text(text, format=path.suffix.lstrip("."), source=str(path))

    @classmethod
    def from_text(
        cls, text: str, *, format: str = "yaml", source: str = "policy"
    ) -> CandidatePolicy:
        """Parse a policy's text (``format``: ``yaml``/``yml``, ``toml`` or ``json``).

        YAML anchors and aliases are refused: a few lines of them can stand for a
        document too large to check (a server takes this text from its members).
        """
        if format.lower() in ("yaml", "yml"):
            _refuse_aliases(text, source)
        try:
            data = parse_structured(text, f".{format}", "policy")
        except FileProblem as problem:
            raise PolicyError(f"{source}: does not parse: {problem}") from None
        return cls.parse(data, source=source)

    def ceiling(self, blueprint: Blueprint, workspace: Policy) -> Policy:
        """The ceiling to judge with: this one, else the run's (blueprint ∩ workspace)."""
        return self.policy if self.policy is not None else workspace.intersect(blueprint.policy)

    def rules(self, blueprint: Blueprint) -> tuple[ApprovalRule, ...]:
        """The approval rules to judge with: these, else the run's."""
        return self.approvals.rules if self.approvals is not None else blueprint.approvals.rules

    def egress(self, blueprint: Blueprint) -> EgressPolicy:
        """The egress lists to judge with: these, else the run's."""
        lists = self.sandbox if self.sandbox is not None else blueprint.sandbox
        return EgressPolicy(allow=lists.network, deny=lists.deny)


_SECTIONS = ", ".join(CandidatePolicy.model_fields)


def _refuse_aliases(text: str, source: str) -> None:
    import yaml

    try:
        aliased = any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text))
    except yaml.YAMLError as error:
        lines = str(error).strip().splitlines() or [type(error).__name__]
        raise PolicyError(f"{source}: does not parse: {lines[0]}") from None
    if aliased:
        raise PolicyError(f"{source}: YAML anchors and aliases are not accepted in a policy")
