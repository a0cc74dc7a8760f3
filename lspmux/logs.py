"""Logging that never blocks the event loop.

The proxy's log goes to stderr (or `--log-file`). A client that starts lspmux with a pipe for
stderr and never reads it (pygls's `LanguageClient.start_io` does that) would fill the pipe's
64 KiB, and a plain `StreamHandler` would then block the whole process on its next log line:
no more answers. `NonBlockingHandler` formats the record on the caller's thread, hands the line
to a bounded queue and lets a writer thread do the blocking write. When the queue is full, lines
are dropped and counted; the count is written as a line of its own once the reader catches up.

Where the log goes decides its level when nothing sets one (`default_level`): stderr is for
lspmux's own debugging, and an editor shows it as errors (Neovim's lsp.log writes every stderr
line as `[ERROR]`), so it gets warnings and errors only; a log file the user asked for gets what
happens too (info). What the user should see travels to the editor as `window/logMessage` or
`window/showMessage` instead, with the matching MessageType (see `session.tell`).
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections import deque
from typing import TextIO

#: Lines held for a slow reader before new ones are dropped.
QUEUE_LINES = 10_000

#: The level of lspmux's log when no flag, variable or configuration sets one: on stderr, what
#: is wrong; in a log file, what happens too.
STDERR_DEFAULT = "warning"
FILE_DEFAULT = "info"


def default_level(logger: str = "lspmux") -> str:
    """The level `logger` logs at when nothing sets one: STDERR_DEFAULT when it writes to a
    stream (stderr), FILE_DEFAULT when it writes to a file or is not set up at all."""
    handlers = logging.getLogger(logger).handlers
    if handlers and not any(isinstance(h, logging.FileHandler) for h in handlers):
        return STDERR_DEFAULT
    return FILE_DEFAULT


class NonBlockingHandler(logging.Handler):
    def __init__(self, stream: TextIO, *, max_lines: int = QUEUE_LINES) -> None:
        super().__init__()
        self.stream = stream
        self.max_lines = max_lines
        self.dropped = 0
        self._lines: deque[str] = deque()
        self._wake = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._write_loop, name="lspmux-log", daemon=True)
        self._thread.start()
        atexit.register(self.flush_for, 0.5)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record) + "\n"
        except Exception:
            self.handleError(record)
            return
        with self._wake:
            if len(self._lines) >= self.max_lines:
                self.dropped += 1
                return
            self._lines.append(line)
            self._wake.notify()

    def _write_loop(self) -> None:
        while True:
            with self._wake:
                while not self._lines and not self._closed:
                    self._wake.wait()
                if not self._lines and self._closed:
                    return
                batch = "".join(self._lines)
                self._lines.clear()
                dropped, self.dropped = self.dropped, 0
            if dropped:
                batch = (
                    f"lspmux: {dropped} log lines were dropped: nobody read the log fast enough "
                    "(use --log-file to keep them all)\n" + batch
                )
            try:
                self.stream.write(batch)
                self.stream.flush()
            except (OSError, ValueError):  # the reader is gone: nothing more to do
                return

    def flush_for(self, seconds: float) -> None:
        """Give the writer up to `seconds` to empty the queue (at exit)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self._wake:
                if not self._lines:
                    return
            time.sleep(0.01)

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()
        super().close()
