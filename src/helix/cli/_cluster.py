"""``helix cluster``: a local Ray cluster (up, status, down); a launcher config (config).

For real machines, ``config`` writes a Ray cluster-launcher config for an SSH pool.

The machinery is ``helix.distributed``'s; Ray is imported only by ``up`` and ``status``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import print_json_line, run_now

_JSON = typer.Option("--json", help="One JSON object: the address and every node.")

cluster_app = typer.Typer(
    help="Start, stop and inspect a local Ray cluster; write a config for an SSH pool.",
    no_args_is_help=True,
)


def _home() -> Path:
    from helix.config import Settings

    return run_now(Settings.from_env).home


@cluster_app.command("up")
def up(
    nodes: Annotated[
        int, typer.Option("--nodes", help="Worker nodes besides the head (0-32).")
    ] = 1,
    label: Annotated[
        list[str] | None,
        typer.Option("--label", metavar="KEY=VALUE", help="A label of every worker node (repeat)."),
    ] = None,
    cpus: Annotated[
        float | None, typer.Option("--cpus", help="CPUs each node offers (default: Ray's count).")
    ] = None,
    object_store_mb: Annotated[
        int | None,
        typer.Option("--object-store-mb", help="Each node's object store in MiB (at least 75)."),
    ] = None,
) -> None:
    """Start a local Ray cluster: a head and --nodes workers, token authentication on.

    The token is HELIX_RAY_TOKEN if set, else a new random one; it is kept with the
    address and the processes in a 0600 file under HELIX_HOME/cluster and printed once.
    """
    import os

    from helix.distributed import ClusterSpec, cluster_up, parse_labels

    home = _home()
    labels = run_now(lambda: parse_labels(label or []))
    megabytes = None if object_store_mb is None else object_store_mb * 2**20
    spec = run_now(lambda: ClusterSpec(nodes, cpus, labels, megabytes))

    def tell(line: str) -> None:
        typer.echo(line, err=True)

    given = bool(os.environ.get("HELIX_RAY_TOKEN"))
    cluster = run_now(lambda: cluster_up(home, spec, env=dict(os.environ), tell=tell))
    workers = f"{nodes} worker node{'s' * (nodes != 1)}"
    typer.echo(f"cluster up at {cluster.address}: the head and {workers}")
    if given:
        typer.echo("token: HELIX_RAY_TOKEN, as set in this environment")
    else:
        typer.echo("use it from a server (this token is shown once; keep it secret):")
        typer.echo(f"  export HELIX_RAY_TOKEN={cluster.token}")
    typer.echo(f"  helix serve --executor ray --ray-address {cluster.address}")
    typer.echo("stop it with: helix cluster down")


@cluster_app.command("status")
def status(json: Annotated[bool, _JSON] = False) -> None:
    """Show the local cluster's nodes: alive or dead, address, CPU and memory, labels."""
    from helix.api import Node
    from helix.distributed import local_cluster_nodes

    from ._nodes import node_table

    home = _home()
    cluster, infos = run_now(lambda: local_cluster_nodes(home))
    found = [Node.of(info) for info in infos]
    if json:
        nodes = [n.model_dump(mode="json") for n in found]
        print_json_line({"address": cluster.address, "nodes": nodes})
        return
    alive = sum(n.state == "alive" for n in found)
    typer.echo(f"cluster at {cluster.address}: {alive} of {len(found)} nodes alive")
    typer.echo(node_table(found))


@cluster_app.command("down")
def down() -> None:
    """Stop the local cluster's processes (only those up started) and forget it."""
    from helix.distributed import cluster_down

    home = _home()
    cluster, stopped = run_now(lambda: cluster_down(home))
    count = len(stopped)
    typer.echo(
        f"cluster at {cluster.address} is down ({count} process{'es' * (count != 1)} stopped)"
    )


@cluster_app.command("config")
def config(
    ssh: Annotated[
        str,
        typer.Option("--ssh", metavar="HOST[,HOST…]", help="The pool's machines, comma-separated."),
    ],
    user: Annotated[
        str | None, typer.Option("--user", help="The SSH user (default: yours).")
    ] = None,
    key: Annotated[
        str | None, typer.Option("--key", metavar="PATH", help="The SSH private key's path.")
    ] = None,
    head: Annotated[
        str | None, typer.Option("--head", help="The head machine (default: the first host).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="FILE", help="Write it here, not to stdout.")
    ] = None,
    name: Annotated[str, typer.Option("--name", help="The cluster's name.")] = "helix",
) -> None:
    """Print a Ray cluster-launcher config for an SSH pool (then: ray up FILE).

    The token is never written into it: each node reads the cluster token from
    ~/.ray/auth_token, copied there from the same file on this machine.
    """
    import getpass

    from helix._version import __version__
    from helix.distributed import SshPool, launcher_config

    hosts = [h.strip() for h in ssh.split(",") if h.strip()]
    login = user or run_now(getpass.getuser)
    pool = run_now(
        lambda: SshPool(hosts, login, key=key, head=head, name=name, version=__version__)
    )
    text = launcher_config(pool)
    if out is None:
        typer.echo(text, nl=False)
        return
    run_now(lambda: _write(out, text))
    typer.echo(f"wrote {out}; start the pool with: ray up {out}", err=True)


def _write(path: Path, text: str) -> None:
    from helix.errors import ConfigError

    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot write {path}: {error.strerror}") from None
