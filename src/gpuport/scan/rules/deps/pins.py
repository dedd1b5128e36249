"""Version-pin arithmetic for GP107: does a requirement keep a package before its first
ROCm release (``below_minimum``), or only allow such releases (``floor_below``)?"""

from __future__ import annotations

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

__all__ = ["below_minimum", "floor_below"]


def floor_below(req: Requirement, minimum: str) -> bool:
    """A lower bound (``>=``, ``>``, ``~=``) under ``minimum``: newer releases stay allowed,
    older ones too (``bitsandbytes>=0.43`` where ROCm support starts at 0.50)."""
    try:
        floor = Version(minimum)
        return any(
            spec.operator in (">=", ">", "~=") and Version(spec.version) < floor
            for spec in req.specifier
        )
    except InvalidVersion:
        return False


def below_minimum(req: Requirement, minimum: str) -> bool:
    try:
        floor = Version(minimum)
    except InvalidVersion:
        return False
    for spec in req.specifier:
        text = spec.version
        try:
            if spec.operator in ("==", "===") and text.endswith(".*"):
                prefix = Version(text[:-2]).release
                if prefix < floor.release[: len(prefix)]:
                    return True
            elif spec.operator in ("==", "==="):
                if Version(text) < floor:
                    return True
            elif spec.operator == "<":
                if Version(text) <= floor:
                    return True
            elif spec.operator == "<=":
                if Version(text) < floor:
                    return True
            elif spec.operator == "~=":
                parts = Version(text).release[:-1]
                upper = Version(".".join(str(p) for p in (*parts[:-1], parts[-1] + 1)))
                if upper <= floor:
                    return True
        except (ValueError, IndexError):  # InvalidVersion, or a 5,000-digit release number
            continue
    return False
