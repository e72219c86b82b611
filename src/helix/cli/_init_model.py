"""``helix init``'s model step: a provider, its key checked or its local server asked."""

from __future__ import annotations

import typer

from ._common import fail
from ._init_steps import Choices, Flags, Redo, flag

_EXAMPLES = {"openai": "gpt-4.1", "anthropic": "claude-sonnet-4-5", "google": "gemini-2.5-pro"}


def model_step(choices: Choices, flags: Flags, interactive: bool) -> None:
    """Settle the model (and its key variable, or its server's address) into ``choices``.

    At a terminal, a server that does not answer or a key the provider refuses goes back
    to the choice of provider; otherwise they end ``helix init`` (exit 2).
    """
    while True:
        try:
            _model(choices, flags, interactive)
            return
        except Redo:
            if not interactive:
                raise AssertionError("a step is redone only at a terminal") from None
            flags = _without_model(flags)


def _model(choices: Choices, flags: Flags, interactive: bool) -> None:
    from helix.errors import ModelNameError
    from helix.providers import PROVIDERS, parse_model_name

    if flags.model is not None:
        name = flags.model.strip()
        provider = name.partition(":")[0].strip().lower()
        if ":" in name:
            try:
                provider, _ = parse_model_name(name)
            except ModelNameError as error:
                fail(f"--model: {error}")
        elif provider not in PROVIDERS or not PROVIDERS[provider].local:
            local = ", ".join(n for n, s in PROVIDERS.items() if s.local)
            fail(f"--model: {name!r} is not provider:model (a local provider alone is: {local})")
    else:
        name = ""
        provider = _ask_provider(interactive)
    if provider in PROVIDERS and PROVIDERS[provider].local:
        _local_model(choices, provider, name, flags, interactive)
        return
    if flags.base_url is not None:
        variable = PROVIDERS[provider].base_url_env if provider in PROVIDERS else None
        local = ", ".join(n for n, s in PROVIDERS.items() if s.local)
        where = f"; {provider}'s address comes from {variable}" if variable else ""
        fail(f"--base-url is for a local server ({local}){where}")
    _hosted_model(choices, provider, name, flags, interactive)


def _ask_provider(interactive: bool) -> str:
    import os

    from helix.providers import PROVIDERS

    if not interactive:
        fail("--model is needed when init asks nothing (no terminal, or --yes)")
    from ._init_prompt import choose

    typer.echo("\nWhich model provider?")
    labels = []
    for name, spec in PROVIDERS.items():
        if spec.local:
            labels.append(f"{name:<11} a local server at {spec.base_url}")
        else:
            state = "set" if spec.key_env and os.environ.get(spec.key_env) else "not set"
            labels.append(f"{name:<11} key in {spec.key_env} ({state})")
    names = list(PROVIDERS)
    return choose("Provider", names, labels=labels, default="openai")


def _local_model(
    choices: Choices, provider: str, name: str, flags: Flags, interactive: bool
) -> None:
    import os

    from helix.providers import PROVIDERS

    from ._init_checks import CheckFailed, base_url_setting, check_base_url, list_models

    spec = PROVIDERS[provider]
    current = (spec.connect(os.environ).base_url or "").rstrip("/")
    if flags.base_url is not None:
        url = flag("--base-url", check_base_url, flags.base_url)
    elif interactive:
        from ._init_prompt import ask

        url = ask(f"The {provider} server's address", check_base_url, default=current)
    else:
        url = current
    try:
        listed = list_models(provider, url, os.environ)
    except CheckFailed as problem:
        message = f"the {provider} server does not answer: {problem}"
        hint = _start_hint(provider)
        if not interactive:
            fail(f"{message}; {hint}, or pass --base-url")
        typer.echo(f"  {message}; {hint}.")
        raise Redo from None
    models = listed.models
    if not models:
        if not interactive:
            fail(f"the {provider} server at {url} lists no models: load or pull one first")
        typer.echo(f"  the server at {url} lists no models: load or pull one first.")
        raise Redo
    typer.echo(f"{provider} at {url} serves: {', '.join(models)}")
    model = _pick(provider, name.partition(":")[2].strip(), models, interactive)
    choices.model = f"{provider}:{model}"
    if url != current or flags.base_url is not None:
        variable, value = base_url_setting(provider, url)
        choices.env = {variable: value}
    choices.key_env, choices.key_optional = spec.key_env, True


def _pick(provider: str, model: str, models: tuple[str, ...], interactive: bool) -> str:
    """The model named (if the server serves it), the only one, or one chosen."""
    if model and model not in models:
        if not interactive:
            fail(f"--model: the {provider} server does not serve {model!r}; it serves "
                 + ", ".join(models))  # fmt: skip
        typer.echo(f"  it does not serve {model!r}.")
        model = ""
    if model:
        return model
    if len(models) == 1:
        return models[0]
    if not interactive:
        fail(f"--model: the server serves several models; name one: {', '.join(models)}")
    from ._init_prompt import choose

    return choose("Model", list(models), default=models[0])


def _hosted_model(
    choices: Choices, provider: str, name: str, flags: Flags, interactive: bool
) -> None:
    import os

    from ._init_checks import CheckFailed, key_variable, verify_key

    if not name:
        from ._init_prompt import ask

        examples = {
            "openai": "gpt-4.1",
            "anthropic": "claude-sonnet-4-5",
            "google": "gemini-2.5-pro",
        }
        model = ask("Model", _non_empty, default=examples.get(provider))
        name = f"{provider}:{model}"
    choices.model = name
    variable = key_variable(provider)
    choices.key_env = variable
    if variable is None:
        return
    present = bool(os.environ.get(variable))
    if not present:
        if flags.check_key:
            fail(f"--check-key: {variable} is not set")
        typer.echo(f"{variable} is not set: export it before `helix run` (never in a file).")
        return
    check = flags.check_key
    if interactive and not check:
        from ._init_prompt import confirm

        check = confirm(f"{variable} is set. Check it with one call to {provider}?", default=True)
    if not check:
        return
    try:
        url = verify_key(provider, os.environ)
    except CheckFailed as problem:
        if not interactive:
            fail(f"the key check failed: {problem}")
        typer.echo(f"  the key check failed: {problem}")
        from ._init_prompt import confirm

        if not confirm("Keep this model anyway?", default=False):
            raise Redo from None
        return
    typer.echo(f"  {variable} works ({url} answered).")


def _non_empty(answer: str) -> str:
    if not answer:
        raise ValueError("give a model name")
    return answer


def _start_hint(provider: str) -> str:
    hints = {
        "ollama": "start it with `ollama serve`",
        "llamacpp": "start it with `llama-server -m MODEL.gguf --port 8080`",
        "vllm": "start it with `vllm serve MODEL`",
        "lmstudio": "start its server in LM Studio",
    }
    return hints.get(provider, "start it")


def _without_model(flags: Flags) -> Flags:
    return Flags(
        flags.workspace, None, None, False, flags.tier, flags.budget, flags.max_turns,
        flags.approval_timeout, flags.deny_tools, flags.network,
    )  # fmt: skip
