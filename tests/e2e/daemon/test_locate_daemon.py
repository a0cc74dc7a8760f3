"""`lspmux locate` against a running `lspmux server`, basedpyright answering the symbols: one
`lspmux/locate` request resolved in the daemon's hosted session prints what a private proxy
prints — the position, the `--json` result, the miss with its nearest candidates."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import proxy_env
from tests.e2e.daemon_harness import (  # noqa: F401 (daemon is a fixture)
    DaemonUnderTest,
    daemon_fixture,
)

WORDS = [
    ["app.py:Greeter.greet@return <|>message"],
    ["--range", "--json", "app.py@undefined_<|>name"],
    ["app.py:Greeter.nope"],
    ["app.py:main~@print(greeter.<|>gret())"],
]


def locate(words: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    """(exit code, stdout, the command's own lines on stderr): a private proxy's log lines
    (its servers' start and stop) are not the command's output."""
    done = subprocess.run(
        [sys.executable, "-m", "lspmux", "locate", *words],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    said = [line for line in done.stderr.splitlines(True) if line.startswith("lspmux locate:")]
    return done.returncode, done.stdout, "".join(said)


async def test_the_daemon_prints_what_a_private_proxy_prints(
    daemon: DaemonUnderTest, workspace: Path, tmp_path: Path
) -> None:
    await daemon.start()
    private = proxy_env(tmp_path)  # a runtime folder of its own: no daemon there
    through = [locate(words, workspace, daemon.env) for words in WORDS]
    alone = [locate(words, workspace, private) for words in WORDS]
    assert through == alone
    assert through[0] == (0, "app.py:12:16\n", "")
    code, _, err = through[2]
    assert code == 1 and "nearest" in err and "Greeter.greet" in err, err
    # the answers came from one session, the daemon's hosted one, not from one session each
    log = daemon.log.read_text(errors="replace")
    asked = re.findall(r"(client-\d+) → b'[^\n]*\"method\": ?\"locate/resolve", log)
    assert len(asked) == len(WORDS) and len(set(asked)) == 1, asked
