"""gpuport's own cache folder (platformdirs), unless a project being worked on owns the way there.

A project's ``.envrc`` can set ``HOME`` (or ``XDG_CACHE_HOME``) to the project and ship a
``.cache`` link to any folder of the user's: gpuport would then write its cache files where
the project chose (twenty-fourth re-run). While a project is avoided (:func:`gpuport.subproc.
avoid_always`), a cache folder that is inside it, or reached through any folder of it, is not
used: the names are scanned again and the version asked again, nothing is written.
"""

from __future__ import annotations

from pathlib import Path

from gpuport import subproc


def cache_dir() -> Path | None:
    """The user cache folder for gpuport, or None when it is not to be used now."""
    try:
        import platformdirs
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    folder = Path(platformdirs.user_cache_dir("gpuport"))
    return None if subproc.reaches_into(folder) else folder
