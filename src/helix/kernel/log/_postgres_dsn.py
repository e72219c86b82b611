"""What messages about a PostgreSQL store say: its server and database, never a password."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit


def describe(dsn: str) -> str:
    """Name the server and database of a DSN for messages, leaving out any password."""
    parts = urlsplit(dsn)
    userinfo, _, hosts = parts.netloc.rpartition("@")
    query = parse_qs(parts.query)
    user = unquote(userinfo.partition(":")[0]) or ",".join(query.get("user", []))
    hosts = unquote(hosts) or ",".join(query.get("host", [])) or "localhost"
    database = unquote(parts.path.lstrip("/")) or ",".join(query.get("dbname", [])) or user
    return f"{user}@{hosts}/{database}" if user else f"{hosts}/{database}"


def cannot_open(where: str, error: BaseException, dsn: str) -> str:
    """Why the store at ``where`` did not open, with any password of the DSN masked."""
    parts = urlsplit(dsn)
    passwords = [*parse_qs(parts.query).get("password", []), parts.password or ""]
    reason = one_line(error)
    for secret in filter(None, passwords):
        reason = reason.replace(secret, "***").replace(unquote(secret), "***")
    return f"cannot open the PostgreSQL store at {where}: {reason}"


def one_line(error: BaseException) -> str:
    """The error's message on one line (its class name if it has none)."""
    text = " ".join(str(error).split())
    return text or type(error).__name__
