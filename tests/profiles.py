"""How hard the suite tries: the `ci` profile when `CI` is set, the `dev` profile otherwise.

CI runs every property test with the examples its test asks for, and every exhaustive backstop
whole. A developer's run (`dev`) tries a quarter as hard, so that the unit suite stays quick:
Hypothesis draws a quarter of the examples, and a backstop checks a seeded quarter of its cases.
`HYPOTHESIS_PROFILE=ci` (or `CI=true`) runs a developer's machine at CI's strength.

A test states its example count at CI's strength, `@settings(max_examples=examples(400))`:
400 in CI, 100 locally. A backstop iterates `sample(cases, "what")`: every case in CI, a fixed
quarter locally, chosen by a seed that the run's header prints and `LSPMUX_SAMPLE_SEED`
changes, so that a local failure reruns the same way.

tests/conftest.py registers and loads the profiles before any test module is imported (these
helpers read the loaded profile when a test module is imported).
"""

from __future__ import annotations

import os
import random
import zlib
from collections.abc import Sequence
from typing import TypeVar

from hypothesis import settings

T = TypeVar("T")

CI_EXAMPLES = 100  # Hypothesis's own default
DEV_EXAMPLES = 25
SAMPLE_SEED_ENV = "LSPMUX_SAMPLE_SEED"
SAMPLE_SEED = int(os.environ.get(SAMPLE_SEED_ENV) or 18)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def profile_name() -> str:
    return os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if in_ci() else "dev")


def register() -> str:
    """Register both profiles and load the one this run uses; returns its name."""
    # Hypothesis's own `ci` profile (derandomized, no example database, blobs printed), which
    # it loads by itself when it sees CI, with the example count spelled out.
    ci = settings.get_profile("ci")
    settings.register_profile("ci", parent=ci, max_examples=CI_EXAMPLES)
    settings.register_profile(
        "dev", parent=settings.get_profile("default"), max_examples=DEV_EXAMPLES
    )
    name = profile_name()
    settings.load_profile(name)
    return name


def strength() -> float:
    """The loaded profile's share of CI's effort: 1.0 in CI, 0.25 locally."""
    return min(1.0, settings.default.max_examples / CI_EXAMPLES)


def examples(at_ci: int) -> int:
    """A property test's example count: `at_ci` in CI, scaled down with the profile locally."""
    return max(1, round(at_ci * strength()))


def sample(cases: Sequence[T], what: str) -> list[T]:
    """Every case in CI; locally a share of them (`strength()`), the same on every run with the
    same seed. `what` names the backstop, so that each one draws its own cases."""
    if strength() >= 1.0:
        return list(cases)
    rng = random.Random(SAMPLE_SEED ^ zlib.crc32(what.encode()))
    picked = sorted(rng.sample(range(len(cases)), max(1, round(len(cases) * strength()))))
    return [cases[i] for i in picked]


def describe() -> str:
    """One line for the run's header."""
    name = profile_name()
    if strength() >= 1.0:
        return (
            f"test profile: {name} (Hypothesis {settings.default.max_examples} examples per "
            "property unless a test asks for more; exhaustive backstops whole)"
        )
    return (
        f"test profile: {name} ({strength():.0%} of CI's Hypothesis examples; exhaustive "
        f"backstops sampled with seed {SAMPLE_SEED}, ${SAMPLE_SEED_ENV} to change; "
        "HYPOTHESIS_PROFILE=ci or CI=true for CI's strength)"
    )
