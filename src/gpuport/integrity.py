"""Result files that check themselves: a content digest written with every bench run and
validate report, checked when one is loaded.

The digest is ``sha256:`` over the file's own JSON data without the ``digest`` key, keys
sorted, so any change made after the run (a headline value, one sample, a count, an added
field) is seen, however the file was reformatted. A file with no digest (written before
gpuport had them) loads with a warning. One whose digest does not match is "edited after
the run": refused, unless the command was given ``--accept-edited``, when it is used with
a warning. The digest catches edits, not forgeries: someone who recomputes it can forge a
file, which is why the loaders also recompute every derived figure from the raw samples
and counts (see :func:`gpuport.bench.verify.run_problem` and
:func:`gpuport.validate.report.report_problem`).

Warnings go through :mod:`warnings` as :class:`ResultFileWarning`; the CLI prints each as
one line. Cores stay free of printing.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from gpuport.errors import GpuportError

__all__ = [
    "ResultFileWarning",
    "accepting_edited",
    "check_digest",
    "digest_of",
]

#: Set by ``--accept-edited`` (compare, assess, cost) for the command's duration.
_ACCEPT_EDITED: ContextVar[bool] = ContextVar("gpuport_accept_edited", default=False)


class ResultFileWarning(UserWarning):
    """Something a user should know about a result file that was still used."""


@contextmanager
def accepting_edited(accept: bool) -> Iterator[None]:
    """Within this block, edited result files are used with a warning instead of refused."""
    token = _ACCEPT_EDITED.set(accept)
    try:
        yield
    finally:
        _ACCEPT_EDITED.reset(token)


def digest_of(data: dict[str, Any]) -> str:
    """The content digest of a result file's JSON data (its own ``digest`` key left out)."""
    body = {k: v for k, v in data.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def check_digest(data: dict[str, Any], where: str) -> None:
    """Refuse (or, under ``--accept-edited``, warn about) data whose digest does not match."""
    stored = data.get("digest")
    if stored is None:
        warnings.warn(
            ResultFileWarning(
                f"{where} has no content digest (written by an older gpuport): "
                "edits made after the run cannot be detected"
            ),
            stacklevel=2,
        )
        return
    if stored == digest_of(data):
        return
    if _ACCEPT_EDITED.get():
        warnings.warn(
            ResultFileWarning(f"{where} was edited after the run; used as --accept-edited asks"),
            stacklevel=2,
        )
        return
    raise GpuportError(
        f"{where} was edited after the run: its content digest does not match "
        "(pass --accept-edited to use it anyway)"
    )
