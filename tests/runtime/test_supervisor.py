"""The supervisor: one-for-one restarts, an intensity limit, cancellation is not a crash."""

from __future__ import annotations

import asyncio

import pytest

from helix.runtime import ChildSpec, open_supervisor


async def test_a_crashing_child_is_restarted_until_it_succeeds() -> None:
    attempts = 0
    restarts: list[tuple[str, str, int]] = []

    async def flaky() -> None:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise RuntimeError(f"crash {attempts}")

    async def on_restart(child: str, error: BaseException, n: int) -> None:
        restarts.append((child, str(error), n))

    async with open_supervisor(on_restart=on_restart) as supervisor:
        supervisor.start_child(ChildSpec("c1", flaky))
    assert attempts == 3
    assert restarts == [("c1", "crash 1", 1), ("c1", "crash 2", 2)]


async def test_past_the_intensity_limit_the_supervisor_gives_up() -> None:
    gave_up: list[str] = []

    async def always() -> None:
        raise ValueError("broken")

    async def on_give_up(child: str, error: BaseException) -> None:
        gave_up.append(f"{child}: {error}")

    async with open_supervisor(on_give_up=on_give_up) as supervisor:
        supervisor.start_child(ChildSpec("c1", always, max_restarts=2, period_s=60))
    assert gave_up == ["c1: broken"]


async def test_one_for_one_leaves_siblings_alone() -> None:
    steady_ran = asyncio.Event()
    crashes = 0

    async def steady() -> None:
        await asyncio.sleep(0.05)
        steady_ran.set()

    async def crashy() -> None:
        nonlocal crashes
        crashes += 1
        if crashes == 1:
            raise RuntimeError("once")

    async with open_supervisor() as supervisor:
        supervisor.start_child(ChildSpec("steady", steady))
        supervisor.start_child(ChildSpec("crashy", crashy))
    assert steady_ran.is_set()
    assert crashes == 2


async def test_cancelling_a_child_is_not_a_crash() -> None:
    restarted = False

    async def forever() -> None:
        await asyncio.sleep(3600)

    async def on_restart(*_: object) -> None:
        nonlocal restarted
        restarted = True

    async with open_supervisor(on_restart=on_restart) as supervisor:
        supervisor.start_child(ChildSpec("c1", forever))
        await asyncio.sleep(0.01)
        supervisor.cancel_child("c1")
    assert not restarted


async def test_temporary_children_are_never_restarted() -> None:
    runs = 0

    async def once() -> None:
        nonlocal runs
        runs += 1
        raise RuntimeError("no")

    async with open_supervisor() as supervisor:
        supervisor.start_child(ChildSpec("c1", once, restart="temporary"))
    assert runs == 1


async def test_a_child_id_runs_once_at_a_time() -> None:
    async with open_supervisor() as supervisor:
        supervisor.start_child(ChildSpec("c1", lambda: asyncio.sleep(0.05)))
        with pytest.raises(ValueError, match="already running"):
            supervisor.start_child(ChildSpec("c1", lambda: asyncio.sleep(0.05)))


async def test_a_fatal_error_is_given_up_at_once_even_through_task_groups() -> None:
    attempts = 0
    restarts: list[int] = []
    gave_up: list[BaseException] = []

    async def misconfigured() -> None:
        nonlocal attempts
        attempts += 1
        async with asyncio.TaskGroup() as group:  # the error arrives wrapped in a group
            group.create_task(asyncio.sleep(0))
            raise KeyError("no key")

    async def on_restart(_child: str, _error: BaseException, n: int) -> None:
        restarts.append(n)

    async def on_give_up(_child: str, error: BaseException) -> None:
        gave_up.append(error)

    async with open_supervisor(on_restart=on_restart, on_give_up=on_give_up) as supervisor:
        supervisor.start_child(ChildSpec("c1", misconfigured, fatal=(KeyError,)))
    assert (attempts, restarts, len(gave_up)) == (1, [], 1)


async def test_an_error_that_is_not_fatal_is_still_restarted() -> None:
    attempts = 0

    async def flaky() -> None:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise RuntimeError("once")

    async with open_supervisor() as supervisor:
        supervisor.start_child(ChildSpec("c1", flaky, fatal=(KeyError,)))
    assert attempts == 2
