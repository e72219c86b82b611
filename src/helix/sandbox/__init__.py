"""Sandboxes: where tool commands run, behind one interface, in tiers of isolation."""

from ._box import Box as Box
from ._box import CheckpointImage as CheckpointImage
from ._bwrap import BwrapSandbox as BwrapSandbox
from ._bwrap import default_hidden_paths as default_hidden_paths
from ._docker import DockerSandbox as DockerSandbox
from ._egress import EgressDecision as EgressDecision
from ._egress import EgressHook as EgressHook
from ._egress import EgressPolicy as EgressPolicy
from ._egress import normal_host as normal_host
from ._egress import policy_hook as policy_hook
from ._egress import url_host as url_host
from ._gvisor import GvisorSandbox as GvisorSandbox
from ._live import PROCESS_ID as PROCESS_ID
from ._live import WORLD_HOST as WORLD_HOST
from ._live import LiveWorld as LiveWorld
from ._live import OutputPage as OutputPage
from ._microvm import MicrovmSandbox as MicrovmSandbox
from ._podman import PodmanSandbox as PodmanSandbox
from ._process import ProcessSandbox as ProcessSandbox
from ._proxy import EgressProxy as EgressProxy
from ._sandbox import DEFAULT_MAX_OUTPUT as DEFAULT_MAX_OUTPUT
from ._sandbox import DEFAULT_TMP_BYTES as DEFAULT_TMP_BYTES
from ._sandbox import CommandResult as CommandResult
from ._sandbox import Sandbox as Sandbox
from ._tiers import AUTOMATIC as AUTOMATIC
from ._tiers import TIERS as TIERS
from ._tiers import StrongestSandbox as StrongestSandbox
from ._tiers import TierStatus as TierStatus
from ._tiers import check_tier as check_tier
from ._tiers import require_sandbox as require_sandbox
from ._tiers import require_tier as require_tier
from ._tiers import resolve_sandbox as resolve_sandbox
from ._tiers import sandbox_facts as sandbox_facts
from ._tiers import tier_status as tier_status
from ._tiers import tier_statuses as tier_statuses

__all__ = [
    "AUTOMATIC",
    "DEFAULT_MAX_OUTPUT",
    "DEFAULT_TMP_BYTES",
    "PROCESS_ID",
    "TIERS",
    "WORLD_HOST",
    "Box",
    "BwrapSandbox",
    "CheckpointImage",
    "CommandResult",
    "DockerSandbox",
    "EgressDecision",
    "EgressHook",
    "EgressPolicy",
    "EgressProxy",
    "GvisorSandbox",
    "LiveWorld",
    "MicrovmSandbox",
    "OutputPage",
    "PodmanSandbox",
    "ProcessSandbox",
    "Sandbox",
    "StrongestSandbox",
    "TierStatus",
    "check_tier",
    "default_hidden_paths",
    "normal_host",
    "policy_hook",
    "require_sandbox",
    "require_tier",
    "resolve_sandbox",
    "sandbox_facts",
    "tier_status",
    "tier_statuses",
    "url_host",
]
