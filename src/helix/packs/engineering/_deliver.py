"""``deliver``: the run's work as a commit on its branch, pushed, with a review summary.

In the pack's worktree (``_worktree``), ``deliver`` stages every change of the world
(``git add -A``), commits it on the run's branch with the message and a review
summary (the agent's summary, the tests before and after, the diffstat), pushes the
branch to a remote configured in the repository (``origin`` by default), and keeps
the summary beside the world (``review.md``). The push cannot be taken back: the call
registers an ``irreversible`` effect, its facets say ``external``, and the pack's gate
asks a person first (docs/packs/engineering.md).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from helix.tools import Effect, ToolContext, ToolResult, UiPart, tool

from ._git import GitError, Worktree, git, worktree_of
from ._tests import test_history

MAX_DIFF_CHARS = 60_000
_REMOTE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_AUTHOR = {"GIT_AUTHOR_NAME": "Helix agent", "GIT_AUTHOR_EMAIL": "helix@localhost"}


@dataclass(frozen=True, slots=True)
class Stat:
    """One file of the diffstat (``None`` counts: a binary file)."""

    path: str
    added: int | None
    removed: int | None


def _tests_line(entry: dict[str, object] | None) -> str:
    if entry is None:
        return "not run"
    verdict = "green" if entry.get("green") else "failing"
    return f"{verdict} ({entry.get('counts')})"


def review_summary(
    record: Worktree, summary: str, history: list[dict[str, object]], stats: list[Stat]
) -> str:
    """The review summary a delivery's commit carries (and ``review.md`` holds)."""
    before = history[0] if history else None
    after = history[-1] if len(history) > 1 else None
    added = sum(s.added or 0 for s in stats)
    removed = sum(s.removed or 0 for s in stats)
    lines = [
        f"Review summary (Helix run {record.run_id}, branch {record.branch})",
        "",
        summary.strip() or "(no summary given)",
        "",
        f"Tests before: {_tests_line(before)}",
        f"Tests after: {_tests_line(after)}",
        "",
        f"Files changed: {len(stats)} (+{added} -{removed})",
    ]
    for stat in stats:
        counts = "binary" if stat.added is None else f"+{stat.added} -{stat.removed}"
        lines.append(f"  {stat.path} {counts}")
    return "\n".join(lines)


def _stats(numstat: str) -> list[Stat]:
    out: list[Stat] = []
    for line in numstat.splitlines():
        parts = line.split("\t", 2)
        if len(parts) != 3:
            continue
        added, removed, path = parts
        out.append(
            Stat(
                path,
                int(added) if added.isdigit() else None,
                int(removed) if removed.isdigit() else None,
            )
        )
    return out


async def _deliver(
    ctx: ToolContext, record: Worktree, message: str, summary: str, remote: str
) -> ToolResult:
    here = ctx.world

    async def run(*args: str, check: bool = True) -> tuple[int, str, str]:
        return await git(*args, cwd=here, worktree=record, check=check)

    await run("remote", "get-url", remote)  # configured, or GitError says so
    await run("add", "-A", "--", ".")
    staged, _, _ = await run("diff", "--cached", "--quiet", "--no-ext-diff", check=False)
    _, ahead, _ = await run("rev-list", "--count", f"{record.base}..HEAD")
    if staged == 0 and int(ahead.strip() or 0) == 0:
        return ToolResult(ok=False, output="nothing to deliver: the world has no change")
    plain = ("--no-ext-diff", "--no-textconv", "--no-color")
    _, numstat, _ = await run("diff", "--numstat", *plain, "--cached", record.base)
    stats = _stats(numstat)
    history = await asyncio.to_thread(test_history, ctx.run_id, here)
    review = review_summary(record, summary, history, stats)
    if staged != 0:
        who = dict(_AUTHOR)
        known, _, _ = await run("config", "user.email", check=False)
        if known != 0:  # nobody configured: Helix commits in its own name too
            who |= {
                "GIT_COMMITTER_NAME": who["GIT_AUTHOR_NAME"],
                "GIT_COMMITTER_EMAIL": who["GIT_AUTHOR_EMAIL"],
            }
        await git(
            "commit",
            "--quiet",
            "--no-verify",
            "-m",
            message.strip(),
            "-m",
            review,
            cwd=here,
            worktree=record,
            env=who,
        )
    _, commit, _ = await run("rev-parse", "HEAD")
    commit = commit.strip()
    _, patch, _ = await run("diff", *plain, record.base, commit)
    await run("push", "--porcelain", "--no-verify", remote, f"{commit}:refs/heads/{record.branch}")
    await asyncio.to_thread((here.parent / "review.md").write_text, review + "\n", "utf-8")
    shown = patch if len(patch) <= MAX_DIFF_CHARS else patch[:MAX_DIFF_CHARS] + "\n[diff cut]\n"
    props = {
        "title": f"Delivered {record.branch}",
        "branch": record.branch,
        "commit": commit,
        "remote": remote,
        "files": [
            {"path": s.path[:500], "added": s.added, "removed": s.removed} for s in stats[:500]
        ],
        "diff": shown,
        "summary": review[:8000],
    }
    effect = Effect(
        "irreversible",
        {"remote": remote, "branch": record.branch, "commit": commit},
        f"pushed {record.branch} ({commit[:12]}) to {remote}",
    )
    return ToolResult(
        ok=True,
        output=f"delivered: branch {record.branch} at {commit} pushed to {remote}\n\n{review}",
        effects=(effect,),
        ui=UiPart("engineering.diff", props),
    )


@tool(effect="external")
async def deliver(
    ctx: ToolContext, message: str, summary: str, remote: str = "origin"
) -> ToolResult:
    """Commit the run's changes on its branch and push the branch, with a review summary.

    `message` is the commit's subject line; `summary` says what was wrong and what
    changed, for the person reviewing. The commit also records the tests before and
    after (from `run_tests`) and the diffstat. `remote` names a remote configured in
    the repository. Works in the worktree the engineering pack made for the run.
    """
    if not message.strip() or "\n" in message.strip():
        return ToolResult(ok=False, output="message must be one non-empty line")
    if not _REMOTE.fullmatch(remote):
        return ToolResult(ok=False, output=f"remote {remote!r} is not a remote's name")
    record = await asyncio.to_thread(worktree_of, ctx.run_id, ctx.world)
    if record is None:
        return ToolResult(
            ok=False,
            output="this run's world is not a worktree the engineering pack made: start the"
            " run on a git checkout with a blueprint naming the pack (plugins: [engineering])",
        )
    try:
        return await _deliver(ctx, record, message, summary, remote)
    except GitError as error:
        return ToolResult(ok=False, output=str(error))
    except (OSError, ValueError) as error:
        return ToolResult(ok=False, output=f"cannot deliver: {error}")
