"""Line breaks not every reader sees (thirty-eighth re-run).

``str.splitlines`` breaks a line at characters the readers of the files gpuport edits or
writes do not (Docker, CMake, pip: only ``\\n``; Python and C++: ``\\n`` and ``\\r``; YAML 1.1
also at U+0085, U+2028, U+2029): a line placed by one reading and read by the other puts text
out of a comment. ``port`` neither edits nor writes such a text, and ``hipify --annotate``
adds no comment line to one.
"""

from __future__ import annotations

__all__ = ["odd_line_break"]

_ODD_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def odd_line_break(text: str) -> str | None:
    """The first line break in ``text`` that not every reader of it sees (see above), named,
    or None. ``port`` neither edits nor writes a text that holds one."""
    for ch in _ODD_BREAKS:
        if ch in text:
            return f"U+{ord(ch):04X}"
    if "\r" in text and "\r" in text.replace("\r\n", ""):
        return "a lone carriage return"
    return None
