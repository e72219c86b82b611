"""Accounts and tenancy: users, workspaces with roles, tokens, workspace policy ceilings."""

from ._model import ROLES as ROLES
from ._model import AccountExistsError as AccountExistsError
from ._model import AccountNotFoundError as AccountNotFoundError
from ._model import Role as Role
from ._model import StaleBlueprintVersionError as StaleBlueprintVersionError
from ._model import StoredBlueprint as StoredBlueprint
from ._model import User as User
from ._model import Workspace as Workspace
from ._model import can_act as can_act
from ._model import can_administer as can_administer
from ._model import check_name as check_name
from ._model import check_role as check_role
from ._open import open_accounts as open_accounts
from ._service import API_TOKEN_PREFIX as API_TOKEN_PREFIX
from ._service import BOOTSTRAP_USER as BOOTSTRAP_USER
from ._service import BOOTSTRAP_WORKSPACE as BOOTSTRAP_WORKSPACE
from ._service import Accounts as Accounts
from ._service import Hashing as Hashing
from ._store import AccountStore as AccountStore

__all__ = [
    "API_TOKEN_PREFIX",
    "BOOTSTRAP_USER",
    "BOOTSTRAP_WORKSPACE",
    "ROLES",
    "AccountExistsError",
    "AccountNotFoundError",
    "AccountStore",
    "Accounts",
    "Hashing",
    "Role",
    "StaleBlueprintVersionError",
    "StoredBlueprint",
    "User",
    "Workspace",
    "can_act",
    "can_administer",
    "check_name",
    "check_role",
    "open_accounts",
]
