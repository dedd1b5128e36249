"""JSON for reports made of plain dataclasses, written without pydantic.

``gpuport hipify`` reports in dataclasses so that a run never imports pydantic (start-up,
issue 18). :func:`dumps` writes such a report as pydantic's ``model_dump_json(indent=2)``
would: fields in declaration order, enums as their values, non-ASCII text as it is, and
fields marked ``metadata=EXCLUDED`` left out. Reading one back is pydantic's job
(``TypeAdapter(Report).validate_json``), as for every other gpuport result file.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

__all__ = ["EXCLUDED", "dumps", "plain"]

EXCLUDED = {"exclude": True}  # dataclasses.field(metadata=EXCLUDED): not in the JSON


def plain(value: Any) -> Any:
    """``value`` as JSON's types: dataclasses as objects, enums as their values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.metadata.get("exclude")
        }
    if isinstance(value, enum.Enum):
        return plain(value.value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"not JSON: {type(value).__name__}")


def dumps(value: Any) -> str:
    """The JSON text of ``value`` (see :func:`plain`), indented by two spaces."""
    return json.dumps(plain(value), indent=2, ensure_ascii=False)
