"""Helpers for the issue-14 regression cases: real links, real FIFOs, a hang that fails."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

HANG_S = 20.0


@contextlib.contextmanager
def fails_if_it_hangs(*fifos: Path, seconds: float = HANG_S) -> Iterator[None]:
    """Run the block; if it is still running after ``seconds`` (blocked on one of ``fifos``),
    open their write ends to release it and fail the test instead of blocking forever."""
    done = threading.Event()
    hung: list[bool] = []

    def watchdog() -> None:
        if done.wait(seconds):
            return
        hung.append(True)
        while not done.is_set():
            for fifo in fifos:
                with contextlib.suppress(OSError):
                    fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                    os.close(fd)  # the reader sees end of file
            done.wait(0.05)

    thread = threading.Thread(target=watchdog, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(5)
    if hung:
        pytest.fail(f"blocked for more than {seconds:g} s reading a FIFO")


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path
