"""``helix cluster up|down|status``: a local multi-node Ray cluster of real ``ray start``s.

``up`` starts a head and N worker nodes on this machine, each a ``ray start --block``
process of its own (so the processes it starts are known, and only those are stopped),
each on ports of its own, with token authentication on: the token is ``HELIX_RAY_TOKEN`` if set,
else a new random one, kept with the address and pids in a 0600 state file under
``HELIX_HOME/cluster``. ``status`` asks the cluster for its nodes; ``down`` stops the
processes ``up`` started (and everything below them) and removes the state file.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from helix._util import free_port
from helix.errors import ConfigError, ConflictError, NotFoundError, StoreUnavailableError
from helix.runtime import NodeInfo

from ._cluster_state import (
    ClusterProcess,
    LocalCluster,
    alive,
    cluster_dir,
    descendants,
    read_state,
    remove_state,
    running,
    start_ticks,
    write_state,
)
from ._ray import RAY_TOKEN_ENV, RayAddress, connect_ray, node_info, ray_environment

HOST = "127.0.0.1"
"""Where this machine reaches the head. Ray itself listens on the machine's interface
address too (its token authentication is what keeps others out)."""
_LABEL_PART = re.compile(r"[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?")
_MAX_NODES = 32
"""A label Ray gives every node: its id, shown once already."""

Tell = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """What ``helix cluster up`` starts."""

    nodes: int = 1
    """Worker nodes besides the head."""
    cpus: float | None = None
    """CPUs each node offers (default: Ray's count of this machine's)."""
    labels: dict[str, str] = field(default_factory=dict)
    """Labels of every worker node (the head has ``helix.role=head``)."""
    object_store_bytes: int | None = None
    """Each node's object store (default: Ray's)."""

    def __post_init__(self) -> None:
        if not 0 <= self.nodes <= _MAX_NODES:
            raise ConfigError(f"--nodes must be 0 to {_MAX_NODES}, not {self.nodes}")
        if self.cpus is not None and not 0 < self.cpus <= 1024:
            raise ConfigError(f"--cpus must be above 0 (and at most 1024), not {self.cpus:g}")
        if self.object_store_bytes is not None and self.object_store_bytes < 78643200:
            raise ConfigError("the object store needs at least 75 MiB")
        for key, value in self.labels.items():
            check_label(key, value)


def check_label(key: str, value: str) -> None:
    """``ConfigError`` unless ``key=value`` is a label Ray takes (letters, digits, ``-_.``)."""
    if not _LABEL_PART.fullmatch(key) or not _LABEL_PART.fullmatch(value):
        raise ConfigError(
            f"invalid label {key}={value}: key and value are 1-63 letters, digits, '-', '_'"
            " or '.', starting and ending with a letter or digit"
        )
    if key.startswith(("ray.io", "helix.")):
        raise ConfigError(f"label {key!r}: ray.io… and helix.… keys are reserved")


def parse_labels(texts: list[str]) -> dict[str, str]:
    """``--label k=v`` options as a dict; ``ConfigError`` for one without ``=`` or invalid."""
    labels: dict[str, str] = {}
    for text in texts:
        key, equals, value = text.partition("=")
        if not equals:
            raise ConfigError(f"--label {text!r}: write it as KEY=VALUE")
        check_label(key, value)
        labels[key] = value
    return labels


def cluster_up(
    home: Path, spec: ClusterSpec, *, env: Mapping[str, str], tell: Tell, timeout_s: float = 180
) -> LocalCluster:
    """Start the head and ``spec.nodes`` workers; return once all are alive in the cluster.

    ``ConflictError`` if a cluster started here is up already. On a failure everything
    started is stopped again and the state file removed. A node that stops while the
    cluster starts (a port taken meanwhile by another program, on a busy machine) has
    the whole cluster started once more, on fresh ports, before ``up`` gives up.
    """
    _need_ray()
    existing = read_state(home)
    if existing is not None:
        if any(alive(p) for p in existing.processes):
            raise ConflictError(
                f"a cluster is up already at {existing.address}: helix cluster down first"
            )
        remove_state(home)  # left by a cluster whose processes are gone
    token = env.get(RAY_TOKEN_ENV) or secrets.token_hex(32)
    # unbuffered: a node that dies (Ray ends them with os._exit) leaves all it said in its log
    child_env = {**env, **ray_environment(token), "PYTHONUNBUFFERED": "1"}
    for attempt in range(_ATTEMPTS):
        try:
            return _up_once(home, spec, token, child_env, tell, timeout_s)
        except _NodeStopped as stopped:
            if attempt + 1 == _ATTEMPTS:
                raise StoreUnavailableError(str(stopped)) from None
            tell(f"{stopped}; starting the cluster again …")
    raise AssertionError("unreachable")


_ATTEMPTS = 2
"""How many times ``cluster_up`` starts a cluster whose nodes stop while it starts."""


class _NodeStopped(StoreUnavailableError):
    """A node ``cluster_up`` started stopped before the cluster was complete."""


def _up_once(
    home: Path,
    spec: ClusterSpec,
    token: str,
    child_env: dict[str, str],
    tell: Tell,
    timeout_s: float,
) -> LocalCluster:
    port = free_port(HOST)
    address = f"{HOST}:{port}"
    logs = cluster_dir(home) / "logs"
    logs.mkdir(exist_ok=True, mode=0o700)
    started: list[ClusterProcess] = []
    try:
        tell(f"starting the head node at {address} …")
        head_args = ["--head", f"--port={port}", "--include-dashboard=false",
                     f"--ray-client-server-port={free_port(HOST)}"]  # fmt: skip
        started.append(_start(logs, "head", head_args, {"helix.role": "head"}, spec, child_env))
        write_state(home, LocalCluster(address, token, tuple(started)))
        _wait_for_port(port, started[0], timeout_s)
        for index in range(1, spec.nodes + 1):
            name = f"worker-{index}"
            labels = {"helix.role": "worker", "helix.node": name, **spec.labels}
            tell(f"starting {name} …")
            started.append(_start(logs, name, [f"--address={address}"], labels, spec, child_env))
            write_state(home, LocalCluster(address, token, tuple(started)))
        cluster = LocalCluster(address, token, tuple(started))
        _wait_for_nodes(cluster, 1 + spec.nodes, timeout_s)
        return cluster
    except BaseException:
        _stop(started, ours=True)
        remove_state(home)
        raise


def local_cluster_nodes(home: Path) -> tuple[LocalCluster, list[NodeInfo]]:
    """The nodes of the cluster ``up`` started here (``helix cluster status``).

    ``NotFoundError`` if none was; ``StoreUnavailableError`` if its head has stopped.
    """
    cluster = read_state(home)
    if cluster is None:
        raise NotFoundError("no cluster is up here (helix cluster up starts one)")
    head = next((p for p in cluster.processes if p.name == "head"), None)
    if head is None or not alive(head):
        raise StoreUnavailableError(
            f"the cluster's head node at {cluster.address} is not running"
            " (helix cluster down cleans up, helix cluster up starts a new one)"
        )
    return cluster, cluster_nodes(RayAddress(cluster.address, cluster.token))


def cluster_down(home: Path, *, timeout_s: float = 30) -> tuple[LocalCluster, list[int]]:
    """Stop every process ``up`` started (and all below them); remove the state file.

    Returns the cluster and the pids stopped (none if they had ended already).
    ``NotFoundError`` if no cluster was started here.
    """
    cluster = read_state(home)
    if cluster is None:
        raise NotFoundError("no cluster is up here (helix cluster up starts one)")
    stopped = _stop(list(cluster.processes), timeout_s=timeout_s)
    remove_state(home)
    return cluster, stopped


def cluster_nodes(cluster: RayAddress) -> list[NodeInfo]:
    """The cluster's nodes as Ray's GCS knows them (this process connects as a driver)."""
    _need_ray()
    try:
        connect_ray(cluster)  # sets the token's variables before it first imports Ray
        import ray

        listed = ray.nodes()  # type: ignore[no-untyped-call]
    except Exception as error:  # Ray's own errors (a refused token, a head gone)
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise StoreUnavailableError(
            f"cannot reach the Ray cluster at {cluster.address}: {reason}"
        ) from None
    found = [node_info(node, id_label=False) for node in listed]
    return sorted(
        found,
        key=lambda n: (n.labels.get("helix.role") != "head", n.labels.get("helix.node", ""), n.id),
    )


def _need_ray() -> None:
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise ConfigError("Ray is not installed: pip install 'helix-harness[ray]'")


# -- processes ---------------------------------------------------------------------------


def _start(
    logs: Path,
    name: str,
    args: list[str],
    labels: dict[str, str],
    spec: ClusterSpec,
    env: dict[str, str],
) -> ClusterProcess:
    """One ``ray start --block`` node, in a session of its own, its output in a log file."""
    command = [
        sys.executable, "-m", "ray.scripts.scripts", "start", "--block", *args,
        "--disable-usage-stats",
        f"--node-manager-port={free_port(HOST)}", f"--object-manager-port={free_port(HOST)}",
        f"--dashboard-agent-listen-port={free_port(HOST)}",
        f"--dashboard-agent-grpc-port={free_port(HOST)}",
        f"--runtime-env-agent-port={free_port(HOST)}", f"--metrics-export-port={free_port(HOST)}",
        "--labels=" + ",".join(f"{k}={v}" for k, v in labels.items()),
    ]  # fmt: skip
    if spec.cpus is not None:
        command.append(f"--num-cpus={spec.cpus:g}")
    if spec.object_store_bytes is not None:
        command.append(f"--object-store-memory={spec.object_store_bytes}")
    log = logs / f"{name}.log"
    descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
            start_new_session=True,  # Ctrl-C at this terminal, or its closing, leaves it up
        )  # fmt: skip
    _STARTED[process.pid] = process  # held: never reaped unseen by subprocess's clean-up
    ticks = start_ticks(process.pid)
    if ticks is None:
        raise _NodeStopped(f"ray start for {name} ended at once; see {log}")
    return ClusterProcess(name, process.pid, ticks, labels, str(log))


def _stop(
    processes: list[ClusterProcess], *, timeout_s: float = 30, ours: bool = False
) -> list[int]:
    """SIGTERM each live process (workers first), then SIGKILL what is left below them.

    ``ours``: processes this process just started, known by pid and start time alone
    (their command lines are not read back: nothing but the start time can change).
    """
    live = [p for p in processes if (running(p) if ours else alive(p))]
    tree = {p.pid for p in live} | descendants({p.pid for p in live})
    for process in sorted(live, key=lambda p: p.name == "head"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(start_ticks(pid) is not None for pid in tree):
        time.sleep(0.1)
    for pid in tree:
        if start_ticks(pid) is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    for process in live:  # ours when this process started them: reap, no zombie left
        with contextlib.suppress(ChildProcessError):
            os.waitpid(process.pid, os.WNOHANG)
    return sorted(tree)


def _wait_for_port(port: int, head: ClusterProcess, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not running(head):
            raise _NodeStopped(
                f"the head node did not start{_how_it_ended(head)}: {_tail(head.log)}"
            )
        with socket.socket() as probe:
            probe.settimeout(1)
            if probe.connect_ex((HOST, port)) == 0:
                return
        time.sleep(0.2)
    raise StoreUnavailableError(f"the head node did not listen within {timeout_s:g} s")


def _wait_for_nodes(cluster: LocalCluster, count: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    address = RayAddress(cluster.address, cluster.token)
    while True:
        for process in cluster.processes:
            if not running(process):
                raise _NodeStopped(
                    f"node {process.name} stopped{_how_it_ended(process)}: {_tail(process.log)}"
                )
        if sum(n.state == "alive" for n in cluster_nodes(address)) >= count:
            return
        if time.monotonic() > deadline:
            raise StoreUnavailableError(
                f"the cluster did not have {count} nodes within {timeout_s:g} s"
            )
        time.sleep(0.5)


def _how_it_ended(process: ClusterProcess) -> str:
    """`` (exit code N)`` or `` (killed by SIGX)`` for a node this process started."""
    child = _STARTED.get(process.pid)
    if child is not None:
        code = child.poll()
    else:
        try:
            pid, status = os.waitpid(process.pid, os.WNOHANG)
        except ChildProcessError:
            return ""  # not ours, or reaped already
        code = None if pid == 0 else os.waitstatus_to_exitcode(status)
    if code is None:
        return ""  # still running (another program took its pid?)
    if code < 0:
        names = {int(s): s.name for s in signal.Signals}
        return f" (killed by {names.get(-code, f'signal {-code}')})"
    return f" (exit code {code})"


_STARTED: dict[int, subprocess.Popen[bytes]] = {}
"""The ``ray start`` processes this process started, by pid."""


def _tail(log: str) -> str:
    try:
        lines = Path(log).read_text(errors="replace").strip().splitlines()
    except OSError:
        return f"see {log}"
    return (lines[-1] if lines else "no output") + f" (see {log})"
