"""``helix cluster config``: a Ray cluster-launcher config for a pool of SSH machines.

Ray's launcher (``ray up FILE``) with the ``local`` provider: one head and fixed
workers, each reached over SSH, Helix installed on each (``helix-harness[ray]``), Ray
started with token authentication on. The token is never in the file: every node
reads it from ``~/.ray/auth_token`` (Ray's own default place), which the launcher copies
from the same file on the machine that runs ``ray up`` (``file_mounts``).

Everything that reaches the file is checked first: host names and addresses, the
user, the key's path and the name, so nothing there can carry shell syntax.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from helix.errors import ConfigError

TOKEN_FILE = "~/.ray/auth_token"
"""Where every node (and the machine running ``ray up``) keeps the cluster token."""
GCS_PORT = 6379
_HOST_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"{_HOST_LABEL}(\.{_HOST_LABEL})*")
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,62}")
_PATH = re.compile(r"[A-Za-z0-9_./~+-]{1,1024}")
_MAX_HOSTS = 1000


def check_host(host: str) -> str:
    """``host`` if it is a host name or an IP address; ``ConfigError`` otherwise.

    Only letters, digits, dots, ``-`` (and ``:`` in an IPv6 address): no shell syntax.
    """
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if len(host) > 253 or not _HOSTNAME.fullmatch(host):
        raise ConfigError(
            f"invalid host {host!r}: a host name (letters, digits, '-', '.') or an IP address"
        )
    return host


@dataclass(frozen=True, slots=True)
class SshPool:
    """The machines of an SSH pool and how to reach them."""

    hosts: list[str]
    user: str
    key: str | None = None
    """The SSH private key's path (on the machine that runs ``ray up``)."""
    head: str | None = None
    """The head machine; default: the first host. The others are the workers."""
    name: str = "helix"
    version: str | None = None
    """The ``helix-harness`` version to install (default: the newest)."""
    workers: list[str] = field(init=False)

    def __post_init__(self) -> None:
        if not self.hosts:
            raise ConfigError("--ssh needs at least one host")
        if len(self.hosts) > _MAX_HOSTS:
            raise ConfigError(f"--ssh takes at most {_MAX_HOSTS} hosts")
        hosts = [check_host(h) for h in self.hosts]
        if len(set(hosts)) != len(hosts):
            raise ConfigError("--ssh names a host twice")
        head = check_host(self.head) if self.head is not None else hosts[0]
        if not _USER.fullmatch(self.user):
            raise ConfigError(f"invalid --user {self.user!r}: letters, digits, '_', '.', '-'")
        if self.key is not None and not _PATH.fullmatch(self.key):
            raise ConfigError(
                f"invalid --key {self.key!r}: a path of letters, digits and _ . / ~ + -"
            )
        if not _NAME.fullmatch(self.name):
            raise ConfigError(f"invalid --name {self.name!r}: letters, digits, '_', '-'")
        if self.version is not None and not re.fullmatch(r"[0-9A-Za-z.+-]{1,64}", self.version):
            raise ConfigError(f"invalid version {self.version!r}")
        object.__setattr__(self, "hosts", hosts)
        object.__setattr__(self, "head", head)
        object.__setattr__(self, "workers", [h for h in hosts if h != head])


def launcher_config(pool: SshPool) -> str:
    """The cluster-launcher YAML for ``pool`` (``ray up`` takes it)."""
    import yaml

    package = "helix-harness[ray]" + (f"=={pool.version}" if pool.version else "")
    env = "RAY_AUTH_MODE=token RAY_USAGE_STATS_ENABLED=0"
    auth: dict[str, str] = {"ssh_user": pool.user}
    if pool.key is not None:
        auth["ssh_private_key"] = pool.key
    workers = len(pool.workers)
    config = {
        "cluster_name": pool.name,
        "provider": {"type": "local", "head_ip": pool.head, "worker_ips": pool.workers},
        "auth": auth,
        "min_workers": workers,
        "max_workers": workers,
        "upscaling_speed": 1.0,
        "idle_timeout_minutes": 5,
        "file_mounts": {TOKEN_FILE: TOKEN_FILE},
        "initialization_commands": [],
        "setup_commands": [
            "chmod 600 ~/.ray/auth_token",
            f"python3 -m pip install --upgrade '{package}'",
        ],
        "head_setup_commands": [],
        "worker_setup_commands": [],
        "head_start_ray_commands": [
            "ray stop",
            f"ulimit -n 65536; {env} ray start --head --port={GCS_PORT}"
            " --autoscaling-config=~/ray_bootstrap_config.yaml --disable-usage-stats"
            " --labels=helix.role=head",
        ],
        "worker_start_ray_commands": [
            "ray stop",
            f"ulimit -n 65536; {env} ray start --address=$RAY_HEAD_IP:{GCS_PORT}"
            " --disable-usage-stats --labels=helix.role=worker",
        ],
    }
    header = (
        f"# A Ray cluster of SSH machines for Helix (helix cluster config).\n"
        f"# Start it:  ray up THIS_FILE   (the cluster token must be in {TOKEN_FILE} here)\n"
        f"# Then:      helix serve --executor ray --ray-address {_address(pool.head)}\n"
    )
    return header + yaml.safe_dump(config, sort_keys=False)


def _address(host: str | None) -> str:
    assert host is not None
    return f"[{host}]:{GCS_PORT}" if ":" in host else f"{host}:{GCS_PORT}"
