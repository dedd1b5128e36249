"""Kept for code written against it: ``lazyre.compile`` is :func:`gpuport.textre.compile`.

Patterns on project text compile on first use and run on RE2, in linear time (issue 23); new
code imports :mod:`gpuport.textre`.
"""

from __future__ import annotations

from gpuport.textre import TextPattern as LazyPattern
from gpuport.textre import compile

__all__ = ["LazyPattern", "compile"]
