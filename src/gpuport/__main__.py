"""Allow ``python -m gpuport``.

``python -m`` puts the current folder first on ``sys.path``, and the current folder is often
the project being scanned: a ``typer.py``, ``tomllib.py`` or ``yaml.py`` there would be
imported, and run, in place of the library gpuport asks for (issue 23: nothing from a
project ever runs). The entry is dropped before gpuport imports anything. What Python's own
``runpy`` imports for ``-m`` before this file runs (``types``, ``functools``, ``importlib``...)
is out of its reach (twenty-second re-run: a project's ``types.py`` ran): inside a project,
use the ``gpuport`` command or ``python -P -m gpuport``, which never put the folder there
(docs/security.md).
"""

import os
import sys


def _drop_current_folder() -> None:
    if sys.flags.safe_path or not sys.path:
        return
    try:
        here = os.path.realpath(os.getcwd())  # noqa: PTH109  (pathlib: not loaded yet)
    except OSError:  # the folder was removed: "" would still name it
        here = None
    first = sys.path[0]
    if first == "" or (here is not None and os.path.realpath(first) == here):
        del sys.path[0]


_drop_current_folder()

from gpuport.cli.entry import main  # noqa: E402  (after the path is safe)

if __name__ == "__main__":
    main()
