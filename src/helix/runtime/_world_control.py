"""What people do to a run's world: roll it back, fork it with its own world, keep a branch.

Each acts on the directory and then records what it did in the log (which is never
rewritten: a rollback is a marker). The world's state before the act is snapshotted
first, so every act can itself be undone. A run being driven is refused unless it is
paused; a run nobody drives is locked for the duration, so no process starts it midway.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from helix.errors import ConfigError, ConflictError, HelixError, NotFoundError, RunStateError
from helix.kernel.events import (
    Budget,
    EffectOutcome,
    EffectSettled,
    NewEvent,
    Payload,
    WorldConflict,
    WorldKept,
    WorldRolledBack,
    WorldSnapshotted,
)
from helix.kernel.log import Lease, RunRecord, new_run_id
from helix.kernel.session import turn_boundary
from helix.tools import ToolContext, ToolDef
from helix.world import (
    Point,
    Restored,
    WorldRecorder,
    materialize,
    restore,
    save_manifest,
    world_and_seq_at,
    world_at,
)

from ._session import append_checked

if TYPE_CHECKING:
    from ._engine import Engine


@dataclass
class _Effects:
    """The effects of the calls after a point, sorted by what a rollback does to them."""

    reverted: list[EffectOutcome] = field(default_factory=list[EffectOutcome])
    compensated: list[EffectOutcome] = field(default_factory=list[EffectOutcome])
    dropped: list[EffectOutcome] = field(default_factory=list[EffectOutcome])
    cannot_undo: list[EffectOutcome] = field(default_factory=list[EffectOutcome])
    settled: list[EffectSettled] = field(default_factory=list[EffectSettled])


@contextlib.asynccontextmanager
async def _quiet_run(
    engine: Engine, record: RunRecord, action: str, held: Lease | None = None
) -> AsyncIterator[None]:
    """Hold the run still: its lease held if nobody drives it, else it must be paused.

    ``held``: the caller's own lease on the run (it drives it, and is not stepping it).
    """
    if held is not None and held.run_id == record.id:
        yield
        return
    if await engine.is_driven(record.id):
        if record.status != "paused":
            raise RunStateError(
                f"run {record.id!r} is {record.status}: it cannot be {action} while it runs;"
                f" pause it first (helix pause {record.id})"
            )
        yield
        return
    async with engine.lock(record.id):
        yield


async def rollback(engine: Engine, run_id: str, to: Point, *, by: str) -> WorldRolledBack:
    """Restore the run's world to its start or a turn's end, and log a marker."""
    if to in ("now", "last"):
        raise ConfigError("roll back to start or to a turn number")
    store, objects = engine.store, engine.objects
    record = await store.get_run(run_id)
    async with _quiet_run(engine, record, "rolled back"):
        target, seq = await world_and_seq_at(store, objects, run_id, to)
        recorder = WorldRecorder(store, run_id, Path(record.world), objects)
        turn = record.turns
        before = await recorder.snapshot(turn)  # the world as it is now: undoable
        current = await recorder.manifest()
        done = await asyncio.to_thread(restore, objects, current, target, Path(record.world))
        effects = await _undo_effects(engine, record, seq)
        digest, _added = await asyncio.to_thread(save_manifest, objects, done.held(target))
        marker = WorldRolledBack(
            to_turn=0 if to == "start" else int(to),
            manifest=digest,
            restored=done.restored,
            removed=done.removed,
            reverted=effects.reverted,
            compensated=effects.compensated,
            dropped=effects.dropped,
            cannot_undo=effects.cannot_undo,
            conflicts=_conflicts(done),
            by=by,
        )
        events = [*before, NewEvent(marker, actor=by, turn=turn)]
        events += [NewEvent(s, actor=by, turn=turn) for s in effects.settled]
        await append_checked(store, run_id, lambda _: events)
    return marker


async def fork_with_world(
    engine: Engine,
    run_id: str,
    turn: int,
    *,
    message: str | None = None,
    model: str | None = None,
    actor: str = "system",
    fork_id: str | None = None,
    budget: Budget | None = None,
) -> RunRecord:
    """Fork at a turn boundary, giving the fork its own world as it was there.

    The world is materialised from the snapshot under ``HELIX_HOME/worlds/FORK``; a
    run recorded before snapshots existed is forked sharing its parent's directory.
    ``fork_id``: the fork's id, logged elsewhere before it was made (a strategy's
    branch): a folder left there by a fork that was interrupted is made again.
    ``budget``: the fork's own caps (else its parent's).
    """
    if model is not None:
        engine.check_model(model)
        engine.check_usable(model)
    store, objects = engine.store, engine.objects
    seq = await turn_boundary(store, run_id, turn)
    try:
        manifest = await world_at(store, objects, run_id, turn if turn > 0 else "start")
    except NotFoundError:
        return await store.fork(
            run_id,
            at_seq=seq,
            message=message,
            model=model,
            actor=actor,
            fork_id=fork_id,
            budget=budget,
        )
    fork_id = fork_id or new_run_id()
    dest = engine.home / "worlds" / fork_id
    await asyncio.to_thread(shutil.rmtree, dest, True)  # an interrupted fork's leftovers
    try:
        made = await asyncio.to_thread(materialize, objects, manifest, dest)
    except HelixError:  # a malformed manifest: refused before anything was written
        await asyncio.to_thread(shutil.rmtree, dest, True)
        raise
    if made.conflicts:  # only a manifest that holds paths under a link can do this
        await asyncio.to_thread(shutil.rmtree, dest, True)
        found = "; ".join(f"{c.path}: {c.detail}" for c in _conflicts(made))
        raise ConflictError(f"the world of {run_id} at turn {turn} cannot be made: {found}")
    digest, added = await asyncio.to_thread(save_manifest, objects, manifest)
    record = await store.fork(
        run_id,
        at_seq=seq,
        message=message,
        model=model,
        fork_id=fork_id,
        world=str(dest),
        actor=actor,
        budget=budget,
    )
    given = WorldSnapshotted(
        turn=turn, base=digest, files=len(manifest), bytes_added=added, scanned=False
    )
    await store.append(fork_id, [NewEvent(given, turn=turn)], expected_seq=record.next_seq)
    return await store.get_run(fork_id)


@dataclass(frozen=True)
class KeepOutcome:
    """What ``keep`` did."""

    original: str
    """The run that owns the directory which received the branch's world."""
    target: str
    restored: list[str]
    removed: list[str]
    performed: list[EffectOutcome]
    conflicts: list[WorldConflict] = field(default_factory=list[WorldConflict])
    """Paths of the original directory left as they were (a link where a folder was due)."""


async def keep(engine: Engine, run_id: str, *, by: str, driver: Lease | None = None) -> KeepOutcome:
    """Make the original directory hold this branch's world; perform its withheld effects.

    ``driver``: the lease of the caller that drives the original run (a strategy run
    keeping its best branch), which then needs no pause.
    """
    store, objects = engine.store, engine.objects
    branch = await store.get_run(run_id)
    original = branch
    while original.parent is not None:
        original = await store.get_run(original.parent.run_id)
    if Path(original.world) == Path(branch.world):
        raise RunStateError(
            f"run {run_id!r} already works in {branch.world}: there is nothing to keep"
        )
    async with _quiet_run(engine, branch, "kept"), _quiet_run(engine, original, "changed", driver):
        ours = WorldRecorder(store, run_id, Path(branch.world), objects)
        ours_before = await ours.snapshot(branch.turns)
        wanted = await ours.manifest()
        theirs = WorldRecorder(store, original.id, Path(original.world), objects)
        theirs_before = await theirs.snapshot(original.turns)
        current = await theirs.manifest()
        target = Path(original.world)
        done = await asyncio.to_thread(restore, objects, current, wanted, target)
        digest, _added = await asyncio.to_thread(save_manifest, objects, done.held(wanted))

        def kept(changed: bool) -> WorldKept:
            return WorldKept(
                branch=run_id,
                target=original.world,
                manifest=digest,
                world_changed=changed,
                conflicts=_conflicts(done),
                by=by,
            )

        performed, settled = await _perform_withheld(engine, branch)
        theirs_kept = [*theirs_before, NewEvent(kept(True), actor=by, turn=original.turns)]
        await append_checked(store, original.id, lambda _: theirs_kept)
        mine: list[NewEvent] = [*ours_before, NewEvent(kept(False), actor=by, turn=branch.turns)]
        mine += [NewEvent(s, actor=by, turn=branch.turns) for s in settled]
        await append_checked(store, run_id, lambda _: mine)
    return KeepOutcome(
        original.id, original.world, done.restored, done.removed, performed, _conflicts(done)
    )


def _conflicts(done: Restored) -> list[WorldConflict]:
    return [WorldConflict(path=p, detail=d) for p, d in sorted(done.conflicts.items())]


async def _calls_after(engine: Engine, run_id: str, seq: int) -> list[tuple[str, str, bool]]:
    """(call id, tool name, own) of the calls started after ``seq``."""
    names: dict[str, str] = {}
    started: list[tuple[str, str, bool]] = []
    async for page in engine.store.read_pages(run_id):
        for event in page:
            if event.type == "tool.requested":
                names[event.data["call_id"]] = event.data["name"]
            elif event.type == "tool.started" and event.seq > seq:
                call_id = event.data["call_id"]
                started.append((call_id, names.get(call_id, "?"), event.run_id == run_id))
    return started


async def _effect_records(engine: Engine, run_id: str) -> tuple[dict[str, Payload], set[str]]:
    """Recorded effects by call id (own events only), and the call ids already settled."""
    from helix.kernel.events import EffectRecorded

    recorded: dict[str, Payload] = {}
    settled: set[str] = set()
    async for page in engine.store.read_pages(run_id):
        for event in page:
            if event.run_id != run_id:
                continue
            if event.type == "effect.recorded":
                recorded[event.data["call_id"]] = EffectRecorded.model_validate(event.data)
            elif event.type == "effect.settled":
                settled.add(event.data["call_id"])
    return recorded, settled


def _no_hook(tool: ToolDef | None) -> str:
    """Why a call with no recorded effect cannot be undone."""
    if tool is not None and tool.effect == "external":
        return "its effects outside the world cannot be undone"
    return "its tool is unknown here: its effects cannot be undone"


async def _undo_effects(engine: Engine, record: RunRecord, seq: int) -> _Effects:
    """Sort the effects of calls after ``seq``; run the compensations; drop the withheld."""
    from helix.kernel.events import EffectRecorded

    found = _Effects()
    recorded, settled = await _effect_records(engine, record.id)
    # Last first, as a saga unwinds: a later call may depend on an earlier one's effect.
    for call_id, name, own in reversed(await _calls_after(engine, record.id, seq)):
        tool = engine.tools.get(name) if name in engine.tools else None
        effect = recorded.get(call_id)
        if tool is not None and tool.effect == "none" and effect is None:
            continue
        if tool is not None and tool.effect == "world":
            found.reverted.append(EffectOutcome(call_id=call_id, tool=name, detail="restored"))
            continue
        if not own:
            detail = "done by the parent run, before the fork"
            found.cannot_undo.append(EffectOutcome(call_id=call_id, tool=name, detail=detail))
            continue
        if not isinstance(effect, EffectRecorded):
            if tool is None or tool.effect not in ("external-withhold", "external-compensate"):
                detail = _no_hook(tool)
                found.cannot_undo.append(EffectOutcome(call_id=call_id, tool=name, detail=detail))
            continue
        if call_id in settled:
            detail = "already performed" if effect.kind == "withheld" else "already compensated"
            bucket = found.cannot_undo if effect.kind == "withheld" else found.compensated
            bucket.append(EffectOutcome(call_id=call_id, tool=name, detail=detail))
            continue
        if effect.kind == "irreversible":
            undone = EffectOutcome(call_id=call_id, tool=name, detail=effect.summary)
            found.cannot_undo.append(undone)
            continue
        if effect.kind == "withheld":
            found.dropped.append(EffectOutcome(call_id=call_id, tool=name, detail=effect.summary))
            found.settled.append(
                EffectSettled(call_id=call_id, outcome="dropped", detail=effect.summary)
            )
            continue
        outcome = await _run_hook(engine, record, tool, "undo", call_id, dict(effect.args))
        if outcome is None:
            detail = "no undo hook in this process: " + effect.summary
            found.cannot_undo.append(EffectOutcome(call_id=call_id, tool=name, detail=detail))
        elif outcome[0]:
            found.compensated.append(EffectOutcome(call_id=call_id, tool=name, detail=outcome[1]))
            found.settled.append(
                EffectSettled(call_id=call_id, outcome="compensated", detail=outcome[1])
            )
        else:
            found.cannot_undo.append(EffectOutcome(call_id=call_id, tool=name, detail=outcome[1]))
            found.settled.append(
                EffectSettled(call_id=call_id, outcome="failed", detail=outcome[1])
            )
    return found


async def _perform_withheld(
    engine: Engine, record: RunRecord
) -> tuple[list[EffectOutcome], list[EffectSettled]]:
    """Perform the branch's withheld effects that are still pending (in call order)."""
    recorded, settled = await _effect_records(engine, record.id)
    performed: list[EffectOutcome] = []
    events: list[EffectSettled] = []
    for call_id, effect in recorded.items():
        data = effect.model_dump()
        if data["kind"] != "withheld" or call_id in settled:
            continue
        name = data["tool"]
        tool = engine.tools.get(name) if name in engine.tools else None
        outcome = await _run_hook(engine, record, tool, "perform", call_id, dict(data["args"]))
        if outcome is None:
            detail = f"no perform hook for {name} in this process: still pending"
            performed.append(EffectOutcome(call_id=call_id, tool=name, detail=detail))
            continue
        ok, detail = outcome
        performed.append(EffectOutcome(call_id=call_id, tool=name, detail=detail))
        events.append(
            EffectSettled(call_id=call_id, outcome="performed" if ok else "failed", detail=detail)
        )
    return performed, events


async def _run_hook(
    engine: Engine,
    record: RunRecord,
    tool: ToolDef | None,
    which: str,
    call_id: str,
    args: dict[str, object],
) -> tuple[bool, str] | None:
    hook = None if tool is None else (tool.undo if which == "undo" else tool.perform)
    if hook is None:
        return None
    context = ToolContext(
        run_id=record.id, call_id=call_id, world=Path(record.world), sandbox=engine.sandbox
    )
    try:
        return True, await hook(context, args)
    except (HelixError, OSError, ValueError, KeyError) as error:
        return False, f"{which} failed: {type(error).__name__}: {error}"


async def compare(engine: Engine, run_a: str, run_b: str) -> tuple[RunRecord, RunRecord, str]:
    """Both runs' registry rows and the diff from A's last world to B's."""
    from helix.world import WorldBrowser

    first = await engine.store.get_run(run_a)
    second = await engine.store.get_run(run_b)
    browser = WorldBrowser(engine.store, engine.objects)
    text = await browser.diff(run_a, "last", "last", other=run_b)
    return first, second, text
