"""Cumulative budgets: per workspace, blueprint and person, per UTC day or month (docs/budgets.md).

``BudgetStore`` keeps them (SQLite or PostgreSQL, beside the events) and the charges of
model calls against them; ``helix.api.StoreSpending`` is what an engine reserves with.
"""

from ._model import KINDS as KINDS
from ._model import PERIODS as PERIODS
from ._model import BudgetCap as BudgetCap
from ._model import BudgetList as BudgetList
from ._model import BudgetNotFoundError as BudgetNotFoundError
from ._model import BudgetUsage as BudgetUsage
from ._model import Charge as Charge
from ._model import Counted as Counted
from ._model import Kind as Kind
from ._model import Passed as Passed
from ._model import Period as Period
from ._model import applies as applies
from ._model import check_cap as check_cap
from ._model import period_bounds as period_bounds
from ._open import open_budgets as open_budgets
from ._store import BudgetStore as BudgetStore

__all__ = [
    "KINDS",
    "PERIODS",
    "BudgetCap",
    "BudgetList",
    "BudgetNotFoundError",
    "BudgetStore",
    "BudgetUsage",
    "Charge",
    "Counted",
    "Kind",
    "Passed",
    "Period",
    "applies",
    "check_cap",
    "open_budgets",
    "period_bounds",
]
