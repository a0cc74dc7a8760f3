"""A backend remembers the progress its server runs now (`Backend.progress_now`), for the
PROGRESS column of `lspmux status`: begun, reported on, ended, the latest begun first."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from lspmux.backends.backend import Backend
from lspmux.config.model import ServerConfig
from tests.unit.backends.helpers import NullHost


def progress(token: Any, **value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "$/progress", "params": {"token": token, "value": value}}


def test_progress_now_follows_begin_report_and_end(tmp_path: Path) -> None:
    config = ServerConfig(name="s", command=(sys.executable,))
    backend = Backend(config, tmp_path, [sys.executable], host=NullHost())
    assert backend.progress_now() is None
    backend._on_notification(progress(1, kind="begin", title="Indexing", percentage=0))
    assert backend.progress_now() == {"title": "Indexing", "percentage": 0}
    backend._on_notification(progress(1, kind="report", message="3/9 files", percentage=33))
    assert backend.progress_now() == {"title": "Indexing", "message": "3/9 files", "percentage": 33}
    backend._on_notification(progress("b", kind="begin", title="Checking"))
    assert backend.progress_now() == {"title": "Checking"}  # the latest begun
    backend._on_notification(progress("b", kind="end"))
    assert backend.progress_now() == {"title": "Indexing", "message": "3/9 files", "percentage": 33}
    backend._on_notification(progress(2, kind="report", message="never begun"))
    backend._on_notification(progress(1, kind="end", message="done"))
    assert backend.progress_now() is None
