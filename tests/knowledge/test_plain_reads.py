"""The bundled targets are read without pydantic (``gpuport hipify``'s start-up, issue 18):
the plain read must give exactly what pydantic's validation gives, and must never accept an
entry pydantic refuses (it then leaves the entry to pydantic, which words the error)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from gpuport.knowledge import (
    KNOWLEDGE_DIR,
    TargetInfo,
    _entries,
    _plain_target,
    load_targets,
    resolve_target,
)
from gpuport.models import GpuportError

BUNDLED = _entries(KNOWLEDGE_DIR / "targets.toml", "target")


def test_every_bundled_target_reads_plainly_as_pydantic_validates_it() -> None:
    adapter = TypeAdapter(TargetInfo)
    for entry in BUNDLED:
        plain = _plain_target(entry)
        assert plain is not None, entry["name"]
        assert plain == adapter.validate_python(entry), entry["name"]
    assert list(load_targets().values()) == [_plain_target(e) for e in BUNDLED]
    assert resolve_target("mi300x").capability in (None, (9, 4))


GOOD: dict[str, Any] = {
    "name": "gfx9xx",
    "family": "CDNA",
    "generation": "test",
    "wave_size": 64,
    "fp8": "none",
    "lds_kib": 64,
    "products": ["Test"],
    "sources": ["https://example.org/x"],
    "checked": dt.date(2026, 11, 25),
    "capability": [9, 9],
}

BAD = [
    {"lds_kib": 0},
    {"lds_kib": 2048},
    {"family": "XYZ"},
    {"wave_size": 48},
    {"fp8": "e4m3"},
    {"products": []},
    {"sources": ["not a url"]},
    {"sources": []},
    {"verified": ["nonsense"]},
    {"capability": [9]},
    {"checked": "someday"},
    {"unknown_key": 1},
    {"name": 7},
]


def test_a_good_entry_reads_plainly_with_its_pairs_as_tuples() -> None:
    target = _plain_target(GOOD)
    assert target is not None and target.capability == (9, 9)
    assert target == TypeAdapter(TargetInfo).validate_python(GOOD)


@pytest.mark.parametrize("change", BAD, ids=lambda c: ",".join(f"{k}={v!r}" for k, v in c.items()))
def test_a_bad_entry_is_left_to_pydantic_which_refuses_it(change: dict[str, Any]) -> None:
    entry = {**GOOD, **change}
    assert _plain_target(entry) is None
    with pytest.raises(ValidationError):
        TypeAdapter(TargetInfo).validate_python(entry)


# pydantic's lax mode takes these (True as 1, "9" as 9); the plain read leaves them to it
COERCED = [{"lds_kib": True}, {"capability": ["9", "4"]}, {"wave_size": 64.0}]


@pytest.mark.parametrize(
    "change", COERCED, ids=lambda c: ",".join(f"{k}={v!r}" for k, v in c.items())
)
def test_what_pydantic_would_coerce_is_left_to_it(change: dict[str, Any]) -> None:
    assert _plain_target({**GOOD, **change}) is None


def test_a_bad_user_target_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "targets.toml").write_text(
        '[[target]]\nname = "gfx9xx"\nfamily = "CDNA"\ngeneration = "t"\nwave_size = 64\n'
        'fp8 = "none"\nlds_kib = 0\nproducts = ["T"]\nsources = ["https://example.org"]\n'
        "checked = 2026-11-25\n",
        encoding="utf-8",
    )
    with pytest.raises(GpuportError, match=r"entry 'gfx9xx'.*lds_kib"):
        load_targets(tmp_path)
