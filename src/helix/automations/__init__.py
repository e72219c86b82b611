"""Automations: workspace-owned triggers (cron, signed webhook, run event) that start runs.

The models, the cron parser, the store (SQLite and PostgreSQL, beside the events), the
webhook signature and the slot arithmetic. The server's scheduler fires them
(docs/automations.md).
"""

from ._cron import CronSchedule as CronSchedule
from ._model import MISSED_ALL_CAP as MISSED_ALL_CAP
from ._model import MISSED_LOOKBACK_S as MISSED_LOOKBACK_S
from ._model import Automation as Automation
from ._model import AutomationCreated as AutomationCreated
from ._model import AutomationList as AutomationList
from ._model import AutomationSpec as AutomationSpec
from ._model import BlueprintTarget as BlueprintTarget
from ._model import CronTrigger as CronTrigger
from ._model import EventTrigger as EventTrigger
from ._model import Firing as Firing
from ._model import GraphTarget as GraphTarget
from ._model import MissedPolicy as MissedPolicy
from ._model import RunEventType as RunEventType
from ._model import Target as Target
from ._model import Trigger as Trigger
from ._model import WebhookTrigger as WebhookTrigger
from ._model import WorkflowTarget as WorkflowTarget
from ._open import open_automations as open_automations
from ._signature import REPLAY_WINDOW_S as REPLAY_WINDOW_S
from ._signature import SIGNATURE_HEADER as SIGNATURE_HEADER
from ._signature import TIMESTAMP_HEADER as TIMESTAMP_HEADER
from ._signature import SignatureError as SignatureError
from ._signature import check_signature as check_signature
from ._signature import new_secret as new_secret
from ._signature import sign as sign
from ._slots import slots_to_fire as slots_to_fire
from ._store import AutomationExistsError as AutomationExistsError
from ._store import AutomationNotFoundError as AutomationNotFoundError
from ._store import AutomationStore as AutomationStore

__all__ = [
    "MISSED_ALL_CAP",
    "MISSED_LOOKBACK_S",
    "REPLAY_WINDOW_S",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "Automation",
    "AutomationCreated",
    "AutomationExistsError",
    "AutomationList",
    "AutomationNotFoundError",
    "AutomationSpec",
    "AutomationStore",
    "BlueprintTarget",
    "CronSchedule",
    "CronTrigger",
    "EventTrigger",
    "Firing",
    "GraphTarget",
    "MissedPolicy",
    "RunEventType",
    "SignatureError",
    "Target",
    "Trigger",
    "WebhookTrigger",
    "WorkflowTarget",
    "check_signature",
    "new_secret",
    "open_automations",
    "sign",
    "slots_to_fire",
]
