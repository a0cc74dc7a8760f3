"""`lspmux config --schema`: the example config (every key uncommented) and the built-in table
validate against it, and what the loader refuses the schema refuses too."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from lspmux.config.checks import GLOBAL_KEYS, LINTER_KEYS, SERVER_KEYS
from lspmux.config.schema import schema

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "config" / "lspmux.example.toml"
SETTING = re.compile(r"^# ((\[[^\]]+\])|([A-Za-z_][A-Za-z0-9_.-]* = .*))$")


def _validate(doc: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(schema()).validate(doc)


def test_the_example_with_every_key_set_validates() -> None:
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    uncommented = [line[2:] if SETTING.match(line) else line for line in lines]
    doc = tomllib.loads("\n".join(uncommented))
    assert doc["servers"]["my-server"]["package"] and "listen" in doc
    _validate(doc)
    _validate(tomllib.loads(EXAMPLE.read_text(encoding="utf-8")))


def test_the_builtin_table_validates() -> None:
    _validate(tomllib.loads((ROOT / "config" / "defaults.toml").read_text(encoding="utf-8")))


def test_every_key_has_a_type_and_a_description() -> None:
    top = schema()["properties"]
    server = top["servers"]["additionalProperties"]["properties"]
    linter = top["linters"]["additionalProperties"]["properties"]
    for props, keys in ((top, GLOBAL_KEYS), (server, SERVER_KEYS), (linter, LINTER_KEYS)):
        assert set(keys) <= set(props)
        for key in keys:
            assert set(props[key]) - {"description"}, f"{key}: no type"
            assert props[key].get("description"), f"{key}: no description"


@pytest.mark.parametrize(
    "doc",
    [
        {"servers": {"ruff": {"disable": True}}},  # a typo of `disabled`
        {"servers": {"ruff": {"request_timeout": "soon"}}},
        {"servers": {"ruff": {"role": "checker"}}},
        {"linters": {"x": {"run_on": ["typing"]}}},
        {"instance_timeout": True},
        {"request_timout": 3},
    ],
)
def test_what_the_loader_refuses_the_schema_refuses(doc: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        _validate(doc)


def test_the_command_prints_it() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lspmux", "config", "--schema"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert json.loads(proc.stdout) == schema()


def test_the_shipped_schema_file_is_up_to_date() -> None:
    """config/lspmux.schema.json (for editors to point at) is what the command prints:
    regenerate it with `lspmux config --schema > config/lspmux.schema.json`."""
    shipped = json.loads((ROOT / "config" / "lspmux.schema.json").read_text(encoding="utf-8"))
    assert shipped == schema()
