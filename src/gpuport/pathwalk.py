"""Where a path the user typed really leads, walked as the kernel walks it.

``os.path.abspath`` drops ``sub/..`` as text; the kernel first follows ``sub`` (a link the
project may ship, ``sub -> /elsewhere/inner``) and then goes up from where it led
(``/elsewhere``). An output check done on the text saw no link in ``P/sub/../victim.txt`` and
the report replaced ``/elsewhere/victim.txt`` (red-team re-run 11).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["first_link_in"]


def first_link_in(path: Path, root: Path) -> Path | None:
    """The first symbolic link that the walk to ``path``'s folder meets inside ``root`` (a real
    path), or None. ``path`` is taken as typed (relative to the current folder), its ``..``
    applied after each link is followed; the last component, the file itself, is not judged
    here. Links outside ``root`` (the way to the project) are fine."""
    raw = Path(Path.cwd(), path)  # joined, not normalised: ``..`` kept
    here = Path(raw.anchor)
    for part in raw.parts[1:-1]:
        if part == "..":
            here = here.parent
            continue
        step = here / part
        if step.is_symlink() and (here == root or here.is_relative_to(root)):
            return step
        here = Path(os.path.realpath(step))
    return None
