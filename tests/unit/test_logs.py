"""Logging to a stderr nobody reads never blocks (lspmux.logs)."""

from __future__ import annotations

import io
import logging
import os
import threading
from pathlib import Path

from lspmux.logs import NonBlockingHandler, default_level


def test_logging_to_a_pipe_nobody_reads_does_not_block() -> None:
    read_fd, write_fd = os.pipe()
    stream = io.TextIOWrapper(io.FileIO(write_fd, "w"), encoding="utf-8")
    handler = NonBlockingHandler(stream, max_lines=100)
    logger = logging.getLogger("lspmux.test.nonblocking")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    line = "x" * 200
    done = threading.Event()

    def flood() -> None:  # 2 MB of log: 30 times what a pipe holds
        for _ in range(10_000):
            logger.info(line)
        done.set()

    thread = threading.Thread(target=flood, daemon=True)
    thread.start()
    # A plain StreamHandler blocks forever here: the pipe is never read.
    assert done.wait(60), "logging blocked on a pipe nobody reads"
    assert handler.dropped > 0
    # Once somebody reads, the writer catches up and says how many lines it dropped.
    seen = b""
    while b"log lines were dropped" not in seen:
        chunk = os.read(read_fd, 65536)
        assert chunk, "the pipe closed before the drop count was written"
        seen += chunk
        if len(seen) > 8_000_000:
            break
        if b"log lines were dropped" not in seen:
            logger.info("after")  # keep the writer going
    assert b"log lines were dropped" in seen
    handler.close()
    os.close(read_fd)


def test_lines_reach_the_stream_in_order() -> None:
    buf = io.StringIO()
    handler = NonBlockingHandler(buf)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("lspmux.test.order")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    for i in range(500):
        logger.info("line %d", i)
    handler.flush_for(10)
    handler.close()
    handler._thread.join(10)
    assert buf.getvalue().splitlines() == [f"line {i}" for i in range(500)]


def test_the_default_level_follows_where_the_log_goes(tmp_path: Path) -> None:
    """stderr (an editor shows it as errors) gets warnings and up; a log file, info too."""
    logger = logging.getLogger("lspmux.test.default")
    logger.propagate = False
    logger.handlers[:] = []
    assert default_level(logger.name) == "info"  # not set up: Python's own default applies
    stderr = NonBlockingHandler(io.StringIO())
    logger.handlers[:] = [stderr]
    assert default_level(logger.name) == "warning"
    to_file = logging.FileHandler(tmp_path / "lspmux.log")
    logger.handlers[:] = [to_file]
    assert default_level(logger.name) == "info"
    for handler in (stderr, to_file):
        handler.close()
    logger.handlers[:] = []
