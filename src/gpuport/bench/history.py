"""Local SQLite history of bench runs, so ``gpuport compare`` can name runs by id or label.

Why SQLite: it is in the standard library, one file under the user data dir,
safe against two processes adding runs at once, and lets us index the few
columns a listing or a lookup needs while keeping the whole run as JSON. The
JSON is validated on the way out, so a row damaged by hand or by another tool
is refused with one line rather than half-read.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import platformdirs
from pydantic import BaseModel, ConfigDict, ValidationError

from gpuport.bench.model import BenchRun, CaseStatus
from gpuport.integrity import check_digest
from gpuport.models import GpuportError, consistency_problem, load_result
from gpuport.safeparse import ParseError, json_value

ENV_VAR = "GPUPORT_HISTORY"
#: seconds one connection's statements may take in all (a history is a few thousand rows)
QUERY_LIMIT_S = 20.0
SCHEMA = 1  # version of the tables below; bump and migrate when they change
MIN_PREFIX = 4  # shorter id prefixes match too much to be a useful reference
_CANDIDATES = 5  # how many runs an error message lists

_TABLES = ("schema_version", "runs")  # all a gpuport history holds, with two indexes on runs
_CREATE = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS runs (
        id TEXT PRIMARY KEY,
        label TEXT,
        device TEXT NOT NULL,
        suite TEXT NOT NULL,
        started TEXT NOT NULL,
        n_results INTEGER NOT NULL,
        n_ok INTEGER NOT NULL,
        data TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS runs_label ON runs (label)",
    "CREATE INDEX IF NOT EXISTS runs_started ON runs (started)",
)
# Literal statements (no string building), newest first = latest ``started``, then latest added.
_INSERT = (
    "INSERT INTO runs (id, label, device, suite, started, n_results, n_ok, data) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_BY_ID = "SELECT id, label, device, suite, started, n_results, n_ok FROM runs WHERE id = ?"
_NEWEST = (
    "SELECT id, label, device, suite, started, n_results, n_ok FROM runs "
    "ORDER BY started DESC, rowid DESC LIMIT ?"
)
_LATEST_BY_LABEL = (
    "SELECT id, label, device, suite, started, n_results, n_ok FROM runs WHERE label = ? "
    "ORDER BY started DESC, rowid DESC LIMIT 1"
)
# substr() rather than LIKE: ids or refs containing % or _ stay literal.
_BY_PREFIX = (
    "SELECT id, label, device, suite, started, n_results, n_ok FROM runs "
    "WHERE substr(id, 1, ?) = ? ORDER BY started DESC, rowid DESC LIMIT ?"
)
_DATA = "SELECT data FROM runs WHERE id = ?"


class RunSummary(BaseModel):
    """One line of ``gpuport history``: enough to pick a run without loading it."""

    model_config = ConfigDict(frozen=True)

    id: str
    label: str | None
    device: str
    suite: str
    started: str
    n_results: int
    n_ok: int

    def display(self) -> str:
        """``id (label, device)``: how error messages name a candidate."""
        extra = ", ".join(" ".join(x.split()) for x in (self.label, self.device, self.started) if x)
        return f"{' '.join(self.id.split())} ({extra})"  # one line, whatever the labels hold


def default_history_path() -> Path:
    """``$GPUPORT_HISTORY`` if set, else ``history.sqlite`` in the user data dir."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir("gpuport")) / "history.sqlite"


class History:
    """The run history in one SQLite file; each call opens and closes its own connection.

    Short-lived connections keep a long ``gpuport`` process from holding the file
    locked and make the object safe to keep around. Nothing is created on disk
    until the first :meth:`add`; reading a history that does not exist yet is an
    empty history.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_history_path()
        #: the file came from the environment (HOME, XDG_DATA_HOME, GPUPORT_HISTORY), which a
        #: project's .envrc can set, not from the command line
        self.from_environment = path is None

    # -- writing -----------------------------------------------------------------

    def add(self, run: BenchRun) -> str:
        """Store ``run``; refuse a second run with the same id. Returns the id."""
        self._refuse_in_project()  # before any folder is made through the project's link
        n_ok = sum(1 for r in run.results if r.status == CaseStatus.OK)
        row = (
            run.id,
            run.label,
            run.device.name,
            run.suite,
            run.started,
            len(run.results),
            n_ok,
            run.model_dump_json(),
        )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise GpuportError(
                f"cannot create the history folder {self.path.parent}: {exc.strerror or exc}"
            ) from None
        created = self._create_new()
        try:
            with self._connect(create=created) as conn:
                try:
                    with conn:
                        conn.execute(_INSERT, row)
                except sqlite3.IntegrityError:
                    raise GpuportError(
                        f"run {run.id} is already in the history {self.path}"
                    ) from None
                except sqlite3.Error as exc:
                    raise self._error(exc) from None
        except BaseException:
            # not left as an empty file that a later run would refuse
            with contextlib.suppress(OSError):
                if created and self.path.lstat().st_size == 0 and self.path.is_file():
                    self.path.unlink()
            raise
        return run.id

    # -- reading -----------------------------------------------------------------

    def list(self, limit: int = 20) -> builtins.list[RunSummary]:
        """The newest ``limit`` runs, newest first (``limit <= 0``: all of them)."""
        with self._reader() as conn:
            if conn is None:
                return []
            rows = self._query(conn, _NEWEST, (limit if limit > 0 else -1,))
        return [_summary(row) for row in rows]

    def get(self, ref: str) -> BenchRun:
        """The run named by a full id, a unique id prefix (≥ 4 chars) or a label (latest).

        A reference that matches one run by prefix and another by label is
        ambiguous and refused, rather than silently preferring one reading.
        """
        ref = ref.strip()
        if not ref:
            raise GpuportError("empty run reference: give a run id, id prefix, label or file")
        with self._reader() as conn:
            if conn is None:
                raise GpuportError(f"no run {ref!r}: the history {self.path} is empty")
            exact = self._query(conn, _BY_ID, (ref,))
            if exact:
                return self._load(conn, str(exact[0][0]))
            by_label = self._query(conn, _LATEST_BY_LABEL, (ref,))
            by_prefix: list[tuple[object, ...]] = []
            if len(ref) >= MIN_PREFIX:
                by_prefix = self._query(conn, _BY_PREFIX, (len(ref), ref, _CANDIDATES + 1))
            matches = {str(row[0]): _summary(row) for row in [*by_label, *by_prefix]}
            if len(matches) == 1:
                return self._load(conn, next(iter(matches)))
            if matches:
                shown = list(matches.values())[:_CANDIDATES]
                more = " ..." if len(matches) > _CANDIDATES else ""
                raise GpuportError(
                    f"run reference {ref!r} is ambiguous: it matches "
                    f"{'; '.join(s.display() for s in shown)}{more}; give more of the id"
                )
            recent = self._query(conn, _NEWEST, (_CANDIDATES,))
        hint = ""
        if len(ref) < MIN_PREFIX:
            hint = f" (id prefixes need at least {MIN_PREFIX} characters)"
        if not recent:
            raise GpuportError(f"no run {ref!r}: the history {self.path} is empty")
        listed = "; ".join(_summary(row).display() for row in recent)
        raise GpuportError(
            f"no run {ref!r} in the history {self.path}{hint}; recent runs: {listed}"
        )

    # -- internals ---------------------------------------------------------------

    def _load(self, conn: sqlite3.Connection, run_id: str) -> BenchRun:
        rows = self._query(conn, _DATA, (run_id,))
        data = rows[0][0] if rows else None
        if not isinstance(data, str | bytes):
            raise GpuportError(f"run {run_id} in the history {self.path} has no stored data")
        where = f"run {run_id} in the history {self.path}"
        try:
            parsed = json_value(data)
        except ParseError as exc:
            raise GpuportError(f"{where} is corrupt: {exc}") from None
        if isinstance(parsed, dict):
            check_digest(parsed, where)
        try:
            run = BenchRun.model_validate(parsed)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise GpuportError(f"{where} is corrupt: {loc}: {first['msg']}") from None
        problem = consistency_problem(run)
        if problem:
            raise GpuportError(f"{where} is not a consistent run: {problem}")
        return run

    @contextlib.contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection | None]:
        """A read-only connection to a gpuport history (nothing in the file changes, no table
        is created); None for a file that is not there (an empty history)."""
        if not self.path.exists():
            yield None
            return
        with self._connect(read_only=True) as conn:
            yield conn

    def _create_new(self) -> bool:
        """Whether the history file is to be made (nothing there, not even a link); else check,
        read-only, that the file there is a gpuport history (False)."""
        if not (self.path.exists() or self.path.is_symlink()):
            return True
        with self._connect(read_only=True):
            return False  # a gpuport history: written to; anything else was refused

    def in_project(self) -> bool:
        """Whether the history file is in (or reached through) a project this run leaves out:
        a project's .envrc that sets HOME to itself (or GPUPORT_HISTORY into itself) chose the
        file, and a link it ships could lead anywhere (twenty-fifth re-run F4, F7)."""
        from gpuport import subproc

        # the avoided projects of this run, and the one the current folder lies in (`gpuport
        # bench` run inside a project whose .envrc set HOME: twenty-sixth re-run F4)
        if not self.from_environment:
            return False  # a file the user named (`--history FILE`)
        here = subproc.project_around(os.curdir)
        return subproc.reaches_into(self.path) or subproc.reaches_into(self.path, here)

    @contextlib.contextmanager
    def _connect(
        self, *, read_only: bool = False, create: bool = False
    ) -> Iterator[sqlite3.Connection]:
        """A connection to a file that holds gpuport's tables and nothing else; any SQLite
        failure becomes one line. ``read_only``: opened so (list, get, compare); ``create``: no
        file was there, it is made now and given the tables. Any other file, a user's own
        database that ``GPUPORT_HISTORY`` named (twenty-eighth re-run F1), is refused and left
        as it was. Each statement has :data:`QUERY_LIMIT_S` seconds (a history whose
        ``schema_version`` was a view over an endless recursive query hung ``assess
        --bench``), and a file whose tables are not plain tables, or that holds triggers, is
        refused."""
        self._refuse_in_project()
        mode = "ro" if read_only else "rwc" if create else "rw"
        uri = f"file:{quote(os.fsencode(self.path.absolute()))}?mode={mode}"
        try:
            conn = sqlite3.connect(uri, timeout=10, uri=True)
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            conn.execute("PRAGMA trusted_schema=OFF")
            deadline = [0.0]

            def _stop() -> int:
                return 1 if time.monotonic() > deadline[0] else 0

            conn.set_progress_handler(_stop, 10_000)
            deadline[0] = time.monotonic() + QUERY_LIMIT_S
            self._check_objects(conn)
            if create and not conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall():
                self._ensure_schema(conn)  # the file made now (not one that appeared since)
            else:
                self._check_tables(conn)
                self._check_version(conn, insert=not read_only)
            yield conn
        except sqlite3.Error as exc:  # not a database, interrupted at the time limit...
            raise self._error(exc) from None
        finally:
            conn.close()

    def _refuse_in_project(self) -> None:
        if self.in_project():
            raise GpuportError(
                f"the history file {self.path} lies in the project being worked on (or is "
                "reached through it): not used; set GPUPORT_HISTORY to a file of your own"
            )

    def _check_objects(self, conn: sqlite3.Connection) -> None:
        """Refuse a file whose ``runs``/``schema_version`` are not tables, or with triggers
        (an ``INSERT INTO runs`` would run the file's own SQL)."""
        rows = conn.execute(
            "SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger') LIMIT 1"
        ).fetchall()
        if rows:
            kind, name = rows[0]
            raise GpuportError(
                f"the history file {self.path} holds a {kind} ({name}), which a gpuport history "
                f"never has: not used (set {ENV_VAR} to another file, or move this one away)"
            )

    def _check_tables(self, conn: sqlite3.Connection) -> None:
        """Refuse a file whose tables are not exactly gpuport's (SQLite's own aside)."""
        rows = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite!_%' ESCAPE '!' LIMIT 20"
        ).fetchall()
        names = {str(name) for name, _sql in rows}
        virtual = any("VIRTUAL" in str(sql).upper()[:30] for _name, sql in rows)
        if names != set(_TABLES) or virtual:
            what = "none of gpuport's tables" if not names & set(_TABLES) else "other tables"
            raise GpuportError(
                f"the history file {self.path} is not a gpuport history (it has {what}): not "
                f"used, nor changed (set {ENV_VAR} to another file, or move this one away)"
            )

    def _ensure_schema(self, conn: sqlite3.Connection) -> None:
        """Create the tables in a new, empty file."""
        try:
            with conn:
                for statement in _CREATE:
                    conn.execute(statement)
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        self._check_version(conn, insert=True)

    def _check_version(self, conn: sqlite3.Connection, *, insert: bool) -> None:
        """Refuse a newer schema; a history without a version row (cut off while it was made)
        gets one when written to, and is read as the current version."""
        try:
            with conn:
                found = conn.execute("SELECT version FROM schema_version").fetchmany(2)
                if not found:
                    if insert:
                        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA,))
                    return
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        version = found[0][0]
        if not isinstance(version, int) or version > SCHEMA:
            raise GpuportError(
                f"the history {self.path} has schema version {version}; "
                f"this gpuport reads version {SCHEMA} (upgrade gpuport or use another file)"
            )

    def _query(
        self, conn: sqlite3.Connection, sql: str, params: tuple[object, ...]
    ) -> builtins.list[tuple[object, ...]]:
        try:
            return [tuple(row) for row in conn.execute(sql, params).fetchall()]
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def _error(self, exc: sqlite3.Error) -> GpuportError:
        return GpuportError(
            f"cannot use the history file {self.path}: {exc} "
            f"(set {ENV_VAR} to use another file, or move this one away)"
        )


def _summary(row: tuple[object, ...]) -> RunSummary:
    run_id, label, device, suite, started, n_results, n_ok = row
    return RunSummary(
        id=str(run_id),
        label=None if label is None else str(label),
        device=str(device),
        suite=str(suite),
        started=str(started),
        n_results=int(str(n_results)),
        n_ok=int(str(n_ok)),
    )


def resolve_run(ref: str, history: History | None = None) -> BenchRun:
    """A run from a result file if ``ref`` names one, else from the history.

    A ref that looks like a path (``.json`` suffix or a slash) but names no file
    is reported as a missing file, not looked up as a label: that is almost
    always a typo in a file name.
    """
    path = Path(ref)
    try:
        is_file = path.is_file()
        exists = is_file or path.exists()
    except (OSError, ValueError):
        is_file = exists = False
    if is_file:
        return load_result(path, BenchRun)
    looks_like_path = path.suffix.lower() == ".json" or "/" in ref or os.sep in ref
    if looks_like_path:
        raise GpuportError(f"{ref} is not a file" if exists else f"no such file: {ref}")
    return (history if history is not None else History()).get(ref)
