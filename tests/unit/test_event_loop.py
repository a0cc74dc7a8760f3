"""The event loop choice (`$LSPMUX_EVENT_LOOP`): what each value means, that a wrong one is an
error naming the allowed ones, and that the suite's own loop is the chosen one."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

from lspmux.cli_common import (
    EVENT_LOOP_ENV,
    EVENT_LOOPS,
    EventLoopChoiceError,
    event_loop_choice,
    run_loop,
)


def test_unset_or_empty_means_uvloop_when_installed() -> None:
    assert event_loop_choice({}) == "uvloop"
    assert event_loop_choice({EVENT_LOOP_ENV: " "}) == "uvloop"


def test_unset_means_asyncio_without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as if it were not installed
    assert event_loop_choice({}) == "asyncio"


@pytest.mark.parametrize("value", ["asyncio", "uvloop", "AsyncIO", " uvloop\n"])
def test_each_allowed_value_is_taken_whatever_its_case(value: str) -> None:
    assert event_loop_choice({EVENT_LOOP_ENV: value}) == value.strip().lower()


def test_an_unknown_value_is_an_error_naming_the_allowed_ones() -> None:
    with pytest.raises(EventLoopChoiceError) as err:
        event_loop_choice({EVENT_LOOP_ENV: "trio"})
    message = str(err.value)
    assert f"{EVENT_LOOP_ENV}='trio'" in message
    assert all(name in message for name in EVENT_LOOPS)


def test_uvloop_asked_for_but_missing_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)
    with pytest.raises(EventLoopChoiceError, match=r"pip install uvloop.*asyncio"):
        event_loop_choice({EVENT_LOOP_ENV: "uvloop"})


def test_run_loop_refuses_a_bad_value_with_exit_code_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(EVENT_LOOP_ENV, "tokio")

    async def never() -> int:
        raise AssertionError("the coroutine must not run")

    assert run_loop(never()) == 2
    assert "one of uvloop, asyncio" in capsys.readouterr().err


@pytest.mark.parametrize("choice", EVENT_LOOPS)
def test_run_loop_runs_on_the_chosen_loop(monkeypatch: pytest.MonkeyPatch, choice: str) -> None:
    monkeypatch.setenv(EVENT_LOOP_ENV, choice)

    async def loop_module() -> int:
        module = type(asyncio.get_running_loop()).__module__
        return 1 if module.startswith("uvloop") else 0

    assert run_loop(loop_module()) == (choice == "uvloop")


async def test_the_suites_own_loop_is_the_chosen_one() -> None:
    """tests/conftest.py hands pytest-asyncio the loop `$LSPMUX_EVENT_LOOP` names, and passes
    the choice on to the processes the tests start."""
    chosen = os.environ[EVENT_LOOP_ENV]
    module = type(asyncio.get_running_loop()).__module__
    assert module.startswith("uvloop") == (chosen == "uvloop"), module
