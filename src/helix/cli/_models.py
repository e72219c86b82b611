"""``helix models`` and ``helix models recommend``: providers, local models, and a pick.

Key values are never printed: only whether the variable holding one is set.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ._common import EXIT_FAILED, fail, print_json_line, run

if TYPE_CHECKING:
    from helix.providers import Hardware, LocalModel, ProviderSpec, Recommendation, ServerListing

_JSON = typer.Option("--json", help="One JSON object per line.")

models_app = typer.Typer(help="List model providers and local models; recommend one.")


@models_app.callback(invoke_without_command=True)
def models(ctx: typer.Context, json: Annotated[bool, _JSON] = False) -> None:
    """List the providers Helix knows and the models local servers offer."""
    if ctx.invoked_subcommand is not None:
        return
    from helix.providers import PROVIDERS, list_servers

    env = dict(os.environ)
    servers = run(lambda: list_servers(env))
    if json:
        for spec in PROVIDERS.values():
            print_json_line({"kind": "provider", **_provider_dict(spec, env)})
        for server in servers:
            print_json_line({"kind": "server", **_server_dict(server)})
            for model in server.models:
                print_json_line({"kind": "model", **_model_dict(model)})
        return
    typer.echo("providers")
    for spec in PROVIDERS.values():
        key, base = _key_status(spec, env), _base_status(spec, env)
        typer.echo(f"  {spec.name:<11} {spec.family:<10} {key:<36} {base}")
    typer.echo("local servers")
    for server in servers:
        if not server.reachable:
            typer.echo(f"  {server.provider:<11} {server.url}  unreachable: {server.error}")
            continue
        count = len(server.models)
        typer.echo(f"  {server.provider:<11} {server.url}  {count} model{'s' * (count != 1)}")
        for model in server.models:
            typer.echo(f"    {model.full_name:<40} {_model_facts(model)}")


@models_app.command("recommend")
def recommend_command(json: Annotated[bool, _JSON] = False) -> None:
    """Detect this machine's hardware and pick the largest local model that fits it.

    From the models the local servers offer; with no local server running, from the
    hardware alone: the size that fits, and the commands that fetch and serve it.
    """
    import asyncio

    from helix.providers import detect_hardware, list_servers, recommend, why_no_pick

    env = dict(os.environ)

    async def survey() -> tuple[Hardware, list[ServerListing]]:
        hardware, servers = await asyncio.gather(
            asyncio.to_thread(detect_hardware), list_servers(env)
        )
        return hardware, servers

    hardware, servers = run(survey)
    if not any(s.reachable for s in servers):
        _from_hardware(hardware, servers, json=json)
        return
    pick = recommend([m for s in servers for m in s.models], hardware)
    problem = None if pick is not None else why_no_pick(servers, hardware)
    if json:
        listed = {"hardware": _hardware_dict(hardware), "source": "servers"}
        print_json_line({**listed, **_pick_dict(pick, problem)})
    else:
        typer.echo(f"hardware: {hardware.describe()}")
        if pick is not None:
            typer.echo(f"pick: {pick.model.full_name}")
            typer.echo(f"why: {pick.reason}")
            typer.echo(f"use it as the model {pick.model.full_name!r}, or as 'local:auto'")
    if problem is not None:
        fail(problem, EXIT_FAILED)


def _from_hardware(hardware: Hardware, servers: list[ServerListing], *, json: bool) -> None:
    """No local server answered: the model size this machine holds, and how to serve it."""
    from helix.providers import suggest_model, why_none_fits

    down = "; ".join(f"{s.provider} at {s.url}: {s.error}" for s in servers)
    suggestion = suggest_model(hardware)
    if json:
        answer: dict[str, Any] = {"hardware": _hardware_dict(hardware), "source": "hardware"}
        answer["servers"] = [_server_dict(server) for server in servers]
        if suggestion is None:
            print_json_line({**answer, "model": None, "error": why_none_fits(hardware)})
        else:
            print_json_line({**answer, **_pick_dict(suggestion.pick, None), **{
                "llamacpp_model": suggestion.llamacpp_model,
                "start": {"ollama": list(suggestion.ollama), "llamacpp": list(suggestion.llamacpp)},
            }})  # fmt: skip
    else:
        typer.echo(f"hardware: {hardware.describe()}")
        typer.echo(f"no local model server answered ({down}): sized from the hardware alone")
        if suggestion is not None:
            pick = suggestion.pick
            typer.echo(f"pick: {pick.model.full_name}")
            typer.echo(f"why: {pick.reason}")
            typer.echo("start it with Ollama:  " + "  then  ".join(suggestion.ollama))
            typer.echo(f"or with llama.cpp:     {suggestion.llamacpp[0]}")
            typer.echo(
                f"then use it as the model {suggestion.ollama_model!r} (llama.cpp:"
                f" {suggestion.llamacpp_model!r}), or as 'local:auto'"
            )
    if suggestion is None:
        fail(why_none_fits(hardware), EXIT_FAILED)


def _key_status(spec: ProviderSpec, env: dict[str, str]) -> str:
    if spec.key_env is None:
        return "no key needed"
    if env.get(spec.key_env):
        return f"{spec.key_env} set"
    return f"{spec.key_env} not set" + ("" if spec.key_required else " (optional)")


def _base_status(spec: ProviderSpec, env: dict[str, str]) -> str:
    if spec.base_url_env and env.get(spec.base_url_env):
        return f"address from {spec.base_url_env}"
    return "default address"


def _provider_dict(spec: ProviderSpec, env: dict[str, str]) -> dict[str, Any]:
    return {
        "name": spec.name,
        "family": spec.family,
        "local": spec.local,
        "key_env": spec.key_env,
        "key_set": bool(spec.key_env and env.get(spec.key_env)),
        "key_required": spec.key_required,
        "base_url_env": spec.base_url_env,
        "base_url_set": bool(spec.base_url_env and env.get(spec.base_url_env)),
    }


def _server_dict(server: ServerListing) -> dict[str, Any]:
    return {
        "provider": server.provider,
        "url": server.url,
        "reachable": server.reachable,
        "error": server.error,
        "models": len(server.models),
    }


def _model_dict(model: LocalModel) -> dict[str, Any]:
    return {
        "provider": model.provider,
        "name": model.name,
        "model": model.full_name,
        "params_b": model.params_b,
        "quant": model.quant,
        "size_gb": None if model.size_gb is None else round(model.size_gb, 2),
    }


def _model_facts(model: LocalModel) -> str:
    facts = [
        "?B" if model.params_b is None else f"{model.params_b:g}B",
        model.quant or "quant unknown",
        "size unknown" if model.size_gb is None else f"{model.size_gb:.1f} GB",
    ]
    return "  ".join(facts) + ("  (embedding)" if model.embedding else "")


def _hardware_dict(hardware: Hardware) -> dict[str, Any]:
    return {
        "cores": hardware.cores,
        "ram_gb": round(hardware.ram_gb, 2),
        "gpus": [{"name": g.name, "vram_gb": round(g.vram_gb, 2)} for g in hardware.gpus],
    }


def _pick_dict(pick: Recommendation | None, problem: str | None) -> dict[str, Any]:
    if pick is None:
        return {"model": None, "error": problem}
    return {
        "model": pick.model.full_name,
        "provider": pick.model.provider,
        "name": pick.model.name,
        "device": pick.device,
        "need_gb": round(pick.need_gb, 2),
        "reason": pick.reason,
    }
