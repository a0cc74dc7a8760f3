"""The drift corpus (tests/data/locate/drift/cases.toml): finds written against an old text,
resolved fuzzily in the new one. A case may be refused; none may land on a wrong place."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Any

import pytest

from lspmux.errors import RequestFailed
from lspmux.locate.engine import resolve_spec
from lspmux.locate.pattern import compile_find, search
from lspmux.text import line_starts, position_to_offset

from .helpers import DATA

DRIFT = DATA / "drift"
CASES: list[dict[str, Any]] = tomllib.loads((DRIFT / "cases.toml").read_text("utf-8"))["case"]
MARK = "<|>"
# How many cases resolve to the right place today: a change that resolves fewer must say why.
LEAST_RESOLVED = 50


@dataclass(frozen=True)
class Drift:
    old: str
    new: str
    spec: dict[str, Any]
    expect: int | None  # the offset in the new text, None for a refusal


def _once(text: str, snippet: str, what: str) -> int:
    assert text.count(snippet) == 1, f"{what} {snippet!r} must occur exactly once"
    return text.index(snippet)


def build(case: dict[str, Any]) -> Drift:
    """The old and new texts of a case, its spec, and where it must land (checked on the
    way: every edit applies once, the find matches the old text exactly)."""
    old = (DRIFT / case["base"]).read_text("utf-8")
    new = old
    for before, after in case["edits"]:
        at = _once(new, before, "edit")
        new = new[:at] + after + new[at + len(before) :]
    if case.get("crlf"):
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    spec: dict[str, Any] = {"find": case["find"], "fuzzy": True}
    lo, hi = 0, len(old)
    if "scope_line" in case:
        starts = line_starts(old)
        at = _once(old, case["scope_line"] + ("\r\n" if case.get("crlf") else "\n"), "scope line")
        line = starts.index(at)  # the snippet is a whole line of the old text
        spec["scope"] = {"line": line + 1}
        lo, hi = starts[line], starts[line + 1]
    hits = search(compile_find(case["find"]), old, lo, hi)
    if case.get("mistyped"):
        assert hits.count == 0, "a mistyped find must not match the old text exactly"
    else:
        assert hits.count == 1 and not hits.partial, "the find must match the old text once"
    expect: int | None = None
    if case["expect"] != "refuse":
        snippet = case["expect"]
        plain = snippet.replace(MARK, "")
        if case.get("crlf"):
            plain = plain.replace("\n", "\r\n")
        expect = _once(new, plain, "expected snippet") + snippet.index(MARK)
    return Drift(old, new, spec, expect)


def outcome(d: Drift) -> tuple[str, str]:
    """("right" | "refused" | "wrong", what happened)."""
    try:
        res = resolve_spec(d.new, None, None, d.spec).to_lsp(d.new, line_starts(d.new), "utf-16")
    except RequestFailed as err:
        assert err.CODE == -32803
        return "refused", err.message
    p = res["position"]
    at = position_to_offset(d.new, line_starts(d.new), p["line"], p["character"])
    landed = d.new[at : at + 40].split("\n")[0]
    if d.expect is not None and at == d.expect:
        return "right", landed
    return "wrong", f"landed on line {p['line'] + 1} at {landed!r}"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_a_drift_case_never_lands_on_a_wrong_place(case: dict[str, Any]) -> None:
    kind, detail = outcome(build(case))
    assert kind != "wrong", detail


def test_the_corpus_is_large_and_mostly_resolved(capsys: pytest.CaptureFixture[str]) -> None:
    langs = {c["base"].rsplit(".", 1)[1] for c in CASES}
    assert len(CASES) >= 60 and {"py", "c", "h"} <= langs
    counts = {"right": 0, "refused": 0, "wrong": 0}
    for case in CASES:
        counts[outcome(build(case))[0]] += 1
    with capsys.disabled():
        print(f"\ndrift corpus: {len(CASES)} cases, {counts}")
    assert counts["wrong"] == 0
    assert counts["right"] >= LEAST_RESOLVED
