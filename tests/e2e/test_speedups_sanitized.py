"""lspmux's C speedups (`lspmux/_speedups.c`) built with AddressSanitizer and
UndefinedBehaviorSanitizer, then fuzzed: whatever bytes a server writes, the extension reads
none outside them and does nothing C leaves undefined — it runs in the daemon, where a crash
would take every client's session with it.

The build uses the machine's C compiler (`cc`, which scripts/setup-tests installs; gcc brings
the sanitizers' runtimes) and this interpreter's headers. The fuzzing runs in a child
interpreter with the sanitizer runtimes preloaded and `PYTHONMALLOC=malloc`, so that each
bytes object is an allocation of its own and a read past its end is caught. A harness check
comes first: the same build with one read past the end planted must be caught.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "lspmux" / "_speedups.c"
pytestmark = pytest.mark.timeout(600)

#: The child: loads the sanitized build as `lspmux._speedups`, then runs the unit tests'
#: fuzzing strategy against it (the Python's answer or None, for every body).
CHILD = """
import importlib.util, sys
so, examples = sys.argv[1], int(sys.argv[2])
spec = importlib.util.spec_from_file_location("lspmux._speedups", so)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
sys.modules["lspmux._speedups"] = mod
from hypothesis import HealthCheck, given, settings
import tests.unit.test_speedups as T

@settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
@given(T.FUZZ_PIECES)
def fuzz(body):
    T.same_as_python(mod, bytes(bytearray(body)))
    mod.contains(body, body[len(body) // 2 :])
    mod.contains(bytearray(body), b'"d')

import tests.unit.wire.test_wire_speedups as W

@settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
@given(W.FRAME_PIECES | W.HEAD_PIECES)
def fuzz_wire(data):
    W.same_as_python(mod, bytes(bytearray(data)))

import tests.unit.test_speedups_hover as H

@settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
@given(H.FUZZ_HOVERS)
def fuzz_hover(body):
    H.same_as_python(mod, bytes(bytearray(body)))

fuzz()
fuzz_wire()
fuzz_hover()
T.same_as_python(mod, T.bench_list(3_000))
print("sanitized: clean")
"""


def _build(tmp: Path, source: Path, sanitizers: str) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler (cc): scripts/setup-tests installs Debian's gcc")
    include = sysconfig.get_paths()["include"]
    target = tmp / f"_speedups{sysconfig.get_config_var('EXT_SUFFIX')}"
    argv = [compiler, "-shared", "-fPIC", "-g", "-O1", "-fno-omit-frame-pointer"]
    argv += [f"-fsanitize={sanitizers}", "-fno-sanitize-recover=all", f"-I{include}"]
    subprocess.run([*argv, str(source), "-o", str(target)], check=True, capture_output=True)
    return target


def _runtime(name: str) -> str:
    compiler = shutil.which("cc") or shutil.which("gcc") or "cc"
    found = subprocess.run(
        [compiler, f"-print-file-name={name}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert os.path.isabs(found), f"{name}: the compiler does not ship it ({found})"
    return found


#: The child for the native lane: the sanitized build as `lspmux._speedups`, then the session
#: tests that send requests and answers through it (`session/native.py`), and the reader's
#: (`Connection.buffer_updated`), in this process.
LANE_CHILD = """
import importlib.util, sys
so = sys.argv[1]
spec = importlib.util.spec_from_file_location("lspmux._speedups", so)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
sys.modules["lspmux._speedups"] = mod
import pytest
from lspmux import speedups
assert speedups.native is mod, speedups.status
# -s: a sanitizer's report goes to the real stderr, not to a capture lost with the process
code = pytest.main(["-q", "-s", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly",
                    "tests/unit/session/test_session_native.py",
                    "tests/unit/session/test_session_native_scan.py",
                    "tests/unit/session/test_session_fast.py",
                    "tests/unit/session/test_session_answer_once.py",
                    "tests/unit/wire/test_wire_reader.py"])
print("lane sanitized:", code)
sys.exit(int(code))
"""


def _fuzz(build: Path, examples: int) -> subprocess.CompletedProcess[str]:
    return _child(build, CHILD, str(examples))


def _child(build: Path, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PYTHONMALLOC": "malloc",
        "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0",
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
        "LD_PRELOAD": f"{_runtime('libasan.so')} {_runtime('libubsan.so')}",
    }
    return subprocess.run(
        [sys.executable, "-c", code, str(build), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=500,
    )  # fmt: skip


def _planted(tmp_path: Path, line: str, bug: str) -> Path:
    """The sanitized build of the source with `bug` planted before `line`."""
    source = SOURCE.read_text()
    assert line in source
    (tmp_path / "_speedups.c").write_text(source.replace(line, f"{bug} /* planted */\n{line}"))
    return _build(tmp_path, tmp_path / "_speedups.c", "address,undefined")


def test_the_harness_catches_a_read_past_the_end(tmp_path: Path) -> None:
    build = _planted(
        tmp_path, "    if (docs == 0) goto decline;", "    if (n > 0 && body[n + 8] == 7) docs = 0;"
    )
    run = _fuzz(build, 200)
    assert run.returncode != 0 and "AddressSanitizer" in run.stderr, run.stderr[-2000:]


def test_fuzzed_bodies_under_the_sanitizers(tmp_path: Path) -> None:
    run = _fuzz(_build(tmp_path, SOURCE, "address,undefined"), 3_000)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    assert "sanitized: clean" in run.stdout


def test_the_lane_harness_catches_a_reference_dropped_twice(tmp_path: Path) -> None:
    build = _planted(tmp_path, "    ok = 1;\n#undef TAKE", "    Py_DECREF(framed);")
    run = _child(build, LANE_CHILD)
    assert run.returncode != 0 and "heap-use-after-free" in run.stderr, run.stderr[-2000:]


def test_the_native_lane_under_the_sanitizers(tmp_path: Path) -> None:
    """The lane handles Python objects (the session's tables, the exchanges): a reference
    dropped once too often is a read of freed memory, which AddressSanitizer reports."""
    run = _child(_build(tmp_path, SOURCE, "address,undefined"), LANE_CHILD)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "lane sanitized: 0" in run.stdout
