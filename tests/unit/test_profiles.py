"""The test profiles (tests/profiles.py): CI keeps every example and every backstop case; a
local run does a quarter of each, the same quarter on every run with the same seed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests import profiles


@pytest.fixture
def profile() -> Iterator[None]:
    yield
    settings.load_profile(profiles.profile_name())  # the run's own, whatever a test loaded


def test_ci_runs_every_example_and_every_case(profile: None) -> None:
    settings.load_profile("ci")
    assert profiles.strength() == 1.0
    assert profiles.examples(400) == 400 and profiles.examples(30) == 30
    cases = list(range(1000))
    assert profiles.sample(cases, "backstop") == cases
    assert settings.default.derandomize and settings.default.database is None


def test_dev_runs_a_quarter_the_same_way_every_time(profile: None) -> None:
    settings.load_profile("dev")
    assert profiles.examples(400) == 100 and profiles.examples(2) == 1
    cases = list(range(1000))
    picked = profiles.sample(cases, "backstop")
    assert len(picked) == 250 and picked == sorted(set(picked))
    assert profiles.sample(cases, "backstop") == picked  # deterministic
    assert profiles.sample(cases, "another backstop") != picked  # each draws its own
    assert profiles.sample(["one"], "tiny") == ["one"]  # never nothing


def test_the_ci_variable_picks_the_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    for value, name in (("true", "ci"), ("1", "ci"), ("", "dev"), ("false", "dev")):
        monkeypatch.setenv("CI", value)
        assert profiles.profile_name() == name
    monkeypatch.setenv("HYPOTHESIS_PROFILE", "ci")
    monkeypatch.setenv("CI", "")
    assert profiles.profile_name() == "ci"
