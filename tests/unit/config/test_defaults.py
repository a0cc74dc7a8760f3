"""The shipped table (config/defaults.toml) and the example file (config/lspmux.example.toml).

Loading validates every entry strictly, so these tests load through `load_config` and then
check the policy the table promises (which servers exist, which are on, routing order) and
that the linter mappings fit what the real tools print.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lspmux.config.loader import DEFAULTS_PATH, load_config
from lspmux.config.model import Config, LinterConfig, ServerConfig
from lspmux.diagnostics.linters.generic import parse_output

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "config" / "defaults.toml"
EXAMPLE = ROOT / "config" / "lspmux.example.toml"

REQUIRED_SERVERS = [
    "rust-analyzer",
    "clangd",
    "gopls",
    "pyright",
    "basedpyright",
    "pylsp",
    "ruff",
    "jedi-language-server",
    "typescript-language-server",
    "biome",
    "eslint",
    "vscode-json-language-server",
    "vscode-css-language-server",
    "vscode-html-language-server",
    "yaml-language-server",
    "bash-language-server",
    "lua-language-server",
    "jdtls",
    "zls",
    "sourcekit-lsp",
    "taplo",
    "marksman",
    "terraform-ls",
    "docker-langserver",
    "solargraph",
]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)


@pytest.fixture
def config() -> Config:
    """The table as written: nothing counts as installed, so the default choice of one server
    per role and family leaves nothing out (tests/unit/config/test_choice.py tests it)."""
    return load_config(user_config=None, installed=lambda server: False)


def test_package_defaults_are_the_repository_table() -> None:
    assert DEFAULTS_PATH.read_bytes() == SHIPPED.read_bytes()


def test_at_least_25_servers_including_the_required_ones(config: Config) -> None:
    assert len(config.servers) >= 25
    missing = [name for name in REQUIRED_SERVERS if name not in config.servers]
    assert not missing


@pytest.mark.parametrize("section", ["servers", "linters"])
def test_every_entry_is_complete(config: Config, section: str) -> None:
    entries: dict[str, ServerConfig | LinterConfig] = dict(getattr(config, section))
    for name, entry in entries.items():
        assert entry.command, name
        assert entry.file_types, f"{name} has no file_types"
        assert entry.language_ids, f"{name} has no language_ids"
        assert all(marker for marker in entry.root_markers), name


def test_python_servers_in_routing_order(config: Config) -> None:
    python = [name for name, s in config.servers.items() if ".py" in s.file_types]
    assert python == ["basedpyright", "pyright", "pylsp", "jedi-language-server", "ty", "ruff"]
    # of the first two (family "python", with the opt-in three) one runs: the first found
    enabled = [s.name for s in config.servers_for("/ws/pkg/mod.py")]
    assert enabled == ["basedpyright", "pyright", "ruff"]
    assert {config.servers[name].family for name in python[:5]} == {"python"}
    assert config.servers["ruff"].family is None


@pytest.mark.parametrize(
    ("name", "disabled"),
    [
        ("basedpyright", False),
        ("pyright", False),
        ("pylsp", True),
        ("jedi-language-server", True),
        ("ty", True),
        ("ruff", False),
        ("typescript-language-server", False),
        ("biome", False),
        ("eslint", True),
        ("deno", True),
    ],
)
def test_enablement_policy(config: Config, name: str, disabled: bool) -> None:
    assert config.servers[name].disabled is disabled


def test_linters_that_speak_lsp_have_the_linter_role(config: Config) -> None:
    ruff = config.servers["ruff"]
    assert ruff.command == ("ruff", "server")
    assert ruff.role == "linter"
    assert ruff.feature_enabled("diagnostics")
    assert ruff.feature_enabled("formatting")
    assert not ruff.feature_enabled("hover")
    assert config.servers["biome"].command == ("biome", "lsp-proxy")
    assert config.servers["biome"].role == "linter"
    assert config.servers["eslint"].role == "linter"


def test_basedpyright_checks_open_files_only(config: Config) -> None:
    # autoSearchPaths: imports of a `src/` layout resolve (the server alone defaults to off)
    assert config.servers["basedpyright"].settings == {
        "basedpyright": {"analysis": {"diagnosticMode": "openFilesOnly", "autoSearchPaths": True}}
    }
    assert config.servers["pyright"].settings["python"]["analysis"]["autoSearchPaths"] is True


def test_biome_serves_the_web_languages(config: Config) -> None:
    biome = config.servers["biome"]
    for ext in (".js", ".jsx", ".ts", ".tsx", ".json", ".jsonc", ".css"):
        assert ext in biome.file_types


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/ws/src/main.rs", ["rust-analyzer"]),
        ("/ws/src/app.tsx", ["typescript-language-server", "biome"]),
        ("/ws/package.json", ["biome", "vscode-json-language-server"]),
        ("/ws/Dockerfile", ["docker-langserver"]),
        ("/ws/go.mod", ["gopls"]),
        ("/ws/README.md", ["marksman"]),
        ("/ws/run.sh", ["bash-language-server"]),
        ("/ws/Gemfile", ["solargraph"]),
    ],
)
def test_servers_for_common_files(config: Config, path: str, expected: list[str]) -> None:
    assert [s.name for s in config.servers_for(path)] == expected


def test_linter_entries(config: Config) -> None:
    linters = config.linters
    assert linters["biome"].command == ("biome", "lint", "--reporter=json", "${file}")
    assert (linters["biome"].format, linters["biome"].input, linters["biome"].disabled) == (
        "biome",
        "file",
        True,
    )
    swiftlint = linters["swiftlint"]
    assert swiftlint.command[-1] == "${file}"
    assert (swiftlint.format, swiftlint.file_types) == ("swiftlint", (".swift",))
    assert linters["shellcheck"].command == ("shellcheck", "--format=json1", "-")
    assert linters["shellcheck"].input == "stdin"
    assert linters["hadolint"].input == "stdin"
    assert "Dockerfile" in linters["hadolint"].file_types
    assert linters["markdownlint"].format == "regex"
    assert [lt.name for lt in config.linters_for("/ws/x.sh")] == ["shellcheck"]


def _get(item: Any, dotted: str) -> Any:
    for part in dotted.split(".") if dotted else ():
        item = item[part]
    return item


def _check_mapping(output: str, mapping: dict[str, Any]) -> list[dict[str, Any]]:
    """Every path in the mapping resolves in every finding; every severity is mapped."""
    items = _get(json.loads(output), mapping["items"])
    assert isinstance(items, list)
    assert items, "the sample should produce findings"
    for item in items:
        for key in ("line", "column", "end_line", "end_column", "message", "code", "severity"):
            if key in mapping:
                assert _get(item, mapping[key]) is not None, (key, item)
        assert _get(item, mapping["severity"]) in mapping["severity_map"]
    return items


SCRIPT = "#!/bin/sh\necho $foo\n\tcd /tmp\nls *.txt | grep x\n"


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_shellcheck_mapping_fits_real_output(config: Config) -> None:
    linter = config.linters["shellcheck"]
    run = subprocess.run(
        list(linter.command), input=SCRIPT, capture_output=True, text=True, timeout=60
    )
    assert run.returncode in linter.ok_exit_codes
    items = _check_mapping(run.stdout, dict(linter.json))
    assert {i["level"] for i in items} >= {"warning", "info"}
    # json1 counts a tab as one column: `cd` after a tab starts at column 2.
    assert any(i["line"] == 3 and i["column"] == 2 for i in items)


def test_hadolint_mapping_fits_its_output_shape(config: Config) -> None:
    # The shape of `hadolint --format json -` (hadolint 2.12); the tool is not installable from
    # the registries the tests use.
    recorded = json.dumps(
        [
            {
                "code": "DL3006",
                "column": 1,
                "file": "-",
                "level": "warning",
                "line": 1,
                "message": "Always tag the version of an image explicitly",
            },
            {
                "code": "DL3059",
                "column": 1,
                "file": "-",
                "level": "info",
                "line": 3,
                "message": "Multiple consecutive `RUN` instructions. Consider consolidation.",
            },
        ]
    )
    _check_mapping(recorded, dict(config.linters["hadolint"].json))


MARKDOWNLINT_OUTPUT = [
    # markdownlint-cli 0.48 (`markdownlint --stdin --output /dev/stdout`, piped):
    'stdin:1 error MD041/first-line-heading/first-line-h1 First line in a file should be a top-level heading [Context: "## Title"]',
    "stdin:2:10 error MD009/no-trailing-spaces Trailing spaces [Expected: 0 or 2; Actual: 3]",
    # older releases print no severity word:
    "stdin:4:1 MD032/blanks-around-lists Lists should be surrounded by blank lines",
]


def test_markdownlint_regex_fits_its_output(config: Config) -> None:
    pattern = re.compile(config.linters["markdownlint"].regex or "", re.MULTILINE)
    found = [m.groupdict() for m in pattern.finditer("\n".join(MARKDOWNLINT_OUTPUT))]
    assert [(m["line"], m["column"], m["code"]) for m in found] == [
        ("1", None, "MD041"),
        ("2", "10", "MD009"),
        ("4", "1", "MD032"),
    ]
    assert found[1]["message"] == "Trailing spaces [Expected: 0 or 2; Actual: 3]"


# -- the shipped linter entries through the real parsers ---------------------------------------


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_shellcheck_entry_yields_diagnostics(config: Config) -> None:
    linter = config.linters["shellcheck"]
    output = subprocess.run(
        list(linter.command), input=SCRIPT, capture_output=True, text=True, timeout=60
    ).stdout
    diags = parse_output(linter, output, path="/ws/run.sh", text=SCRIPT)
    by_code = {d["code"]: d for d in diags}
    quote = by_code["SC2086"]  # echo $foo: columns 6..10, 1-based, end exclusive
    assert quote["range"] == {
        "start": {"line": 1, "character": 5},
        "end": {"line": 1, "character": 9},
    }
    assert quote["severity"] == 3  # info → information
    assert quote["codeDescription"]["href"] == "https://www.shellcheck.net/wiki/SC2086"
    assert by_code["SC2154"]["severity"] == 2  # warning
    assert by_code["SC2164"]["range"]["start"] == {"line": 2, "character": 1}  # after a tab


def test_hadolint_entry_yields_diagnostics(config: Config) -> None:
    linter = config.linters["hadolint"]
    output = json.dumps(
        [
            {"code": "DL3006", "column": 1, "file": "-", "level": "warning", "line": 1,
             "message": "Always tag the version of an image explicitly"},
            {"code": "SC2086", "column": 1, "file": "-", "level": "info", "line": 2,
             "message": "Double quote to prevent globbing and word splitting."},
        ]
    )  # fmt: skip
    text = "FROM debian\nRUN echo $x\n"
    diags = parse_output(linter, output, path="/ws/Dockerfile", text=text)
    assert [(d["code"], d["severity"], d["range"]["start"]["line"]) for d in diags] == [
        ("DL3006", 2, 0),
        ("SC2086", 3, 1),
    ]


def test_markdownlint_entry_yields_diagnostics(config: Config) -> None:
    linter = config.linters["markdownlint"]
    text = "# T\n\n\N{GRINNING FACE} x   \n"
    # What markdownlint-cli 0.48 prints for that text: a UTF-16 column (the emoji counts 2).
    output = (
        "stdin:3:5 error MD009/no-trailing-spaces Trailing spaces [Expected: 0 or 2; Actual: 3]\n"
    )
    [utf16] = parse_output(linter, output, path="/ws/a.md", text=text, encoding="utf-16")
    [utf32] = parse_output(linter, output, path="/ws/a.md", text=text, encoding="utf-32")
    assert utf16["range"]["start"] == {"line": 2, "character": 4}
    assert utf32["range"]["start"] == {"line": 2, "character": 3}
    assert utf16["code"] == "MD009"
    assert utf16["severity"] == 2  # markdownlint's "error" is not used: style findings warn
    assert utf16["message"] == "Trailing spaces [Expected: 0 or 2; Actual: 3]"


def test_the_example_file_is_valid_and_at_the_defaults(tmp_path: Path) -> None:
    """Uncommented, the example adds its two sample entries and changes nothing else."""
    setting = re.compile(r"^# ((\[[^\]]+\])|([A-Za-z_][A-Za-z0-9_.-]* = .*))$")
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    uncommented = [line[2:] if setting.match(line) else line for line in lines]
    assert uncommented != lines
    example = tmp_path / "example.toml"
    example.write_text("\n".join(uncommented), encoding="utf-8")

    base = load_config(user_config=None)
    with_example = load_config(extra_files=[example], user_config=None)
    assert with_example.request_timeout == base.request_timeout
    assert with_example.idle_timeout == base.idle_timeout
    assert dict(with_example.servers) == {
        **base.servers,
        "my-server": ServerConfig(
            name="my-server",
            command=("my-server", "--stdio"),
            initialization_options={},  # `initialization_options = {}` uncommented
            root_rule="cargo",  # no value means "unset": the example shows one
            family="my-language",  # likewise
            install="pip install my-server",
            package=("pypi:my-server==1.2.3",),
        ),
    }
    assert dict(with_example.linters) == {
        **base.linters,
        "my-linter": LinterConfig(
            name="my-linter",
            command=("my-linter", "${file}"),
            json={"items": "", "line": "line", "message": "message"},
            regex=r"^(?P<line>\d+):(?P<column>\d+): (?P<message>.+)$",
            source="my-linter",
            install="apt install my-linter",
            package=("npm:my-linter@4.5.6",),
        ),
    }


def test_the_example_names_every_key(tmp_path: Path) -> None:
    from lspmux.config.loader import GLOBAL_KEYS, LINTER_KEYS, SERVER_KEYS

    text = EXAMPLE.read_text(encoding="utf-8")
    keys = re.findall(r"^# ([a-z_]+) = ", text, flags=re.M)
    missing = set(GLOBAL_KEYS) | set(SERVER_KEYS) | set(LINTER_KEYS)
    missing -= set(keys)
    assert not missing
