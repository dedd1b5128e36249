"""Loading a function from the user's own code: the only way gpuport runs user code.

gpuport never imports, executes or builds code from a project it scans or translates (see
docs/security.md). ``gpuport validate capture/check --model REF`` and ``gpuport bench --step
REF`` are the two exceptions, and only because the user names the function on the command
line: building the model and running its forward pass, or timing the step, *is* the
measurement. Nothing here is ever triggered by the
contents of a scanned project or of a ``.gpv`` file.

``REF`` is either ``pkg.module:function`` (imported with the current directory on
``sys.path``, like ``python -m``) or ``path/to/file.py:function`` (loaded from that file, with
its folder on ``sys.path`` so it can import its siblings). ``function`` may be dotted
(``Factory.build``).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from gpuport.models import GpuportError


def _split(ref: str, what: str) -> tuple[str, str]:
    module, sep, attr = ref.strip().rpartition(":")
    names_ok = bool(attr) and all(part.isidentifier() for part in attr.split("."))
    if not sep or not module or not names_ok:
        raise GpuportError(
            f"{what} must look like 'pkg.module:function' or 'path/to/file.py:function', "
            f"not {ref!r}"
        )
    return module, attr


def _is_path(module: str) -> bool:
    return module.endswith(".py") or "/" in module or "\\" in module


@contextlib.contextmanager
def _no_bytecode() -> Iterator[None]:
    """Import without writing ``__pycache__`` into the user's folders: loading their code is
    not a reason to change their project (Python would, unless PYTHONDONTWRITEBYTECODE)."""
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        yield
    finally:
        sys.dont_write_bytecode = before


def _load_file(module: str, what: str) -> ModuleType:
    path = Path(module).expanduser()
    if not path.is_file():
        raise GpuportError(f"{what}: no such file {module!r}")
    resolved = path.resolve()
    name = "_gpuport_user_" + hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise GpuportError(f"{what}: cannot load {module!r} as Python")
    folder = str(resolved.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded  # dataclasses and typing look their module up by name
    try:
        with _no_bytecode():
            spec.loader.exec_module(loaded)
    except BaseException as exc:
        del sys.modules[name]
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        raise GpuportError(f"{what}: running {module} failed: {one_line(exc)}") from exc
    return loaded


def _import(module: str, what: str) -> ModuleType:
    cwd = str(Path.cwd())
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        with _no_bytecode():
            return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or module
        if module == missing or module.startswith(missing + "."):
            raise GpuportError(
                f"{what}: no module named {missing!r} (run from the folder that holds it, "
                "or pass path/to/file.py:function)"
            ) from None
        raise GpuportError(f"{what}: importing {module} failed: {one_line(exc)}") from exc
    except Exception as exc:
        raise GpuportError(f"{what}: importing {module} failed: {one_line(exc)}") from exc


def one_line(exc: BaseException) -> str:
    """``Type: first line of the message``, for one-line errors and skip reasons."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def load_callable(ref: str, *, what: str) -> Callable[..., Any]:
    """The function ``ref`` names; a malformed ref, missing module/attribute or a non-callable
    gives a one-line :class:`GpuportError` (``what`` names the option, e.g. ``--model``)."""
    module_name, attr = _split(ref, what)
    module = _load_file(module_name, what) if _is_path(module_name) else _import(module_name, what)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise GpuportError(f"{what}: {module_name} has no attribute {attr!r}") from None
    if not callable(obj):
        raise GpuportError(f"{what}: {module_name}:{attr} is a {type(obj).__name__}, not callable")
    return obj  # type: ignore[no-any-return]


def call_user(fn: Callable[..., Any], what: str, *args: Any, **kwargs: Any) -> Any:
    """Call user code; an exception in it becomes a one-line error naming where it came from."""
    try:
        return fn(*args, **kwargs)
    except (KeyboardInterrupt, SystemExit, GpuportError):
        raise
    except Exception as exc:
        raise GpuportError(f"{what} raised {one_line(exc)}") from exc
