"""All rule families. Importing this package fills the registry in ``base``."""

from gpuport.scan.rules import build, containers, deps, native, python  # noqa: F401
from gpuport.scan.rules.base import CHECKERS, RULES, FileContext, FileKind, Rule, rules_sorted

__all__ = ["CHECKERS", "RULES", "FileContext", "FileKind", "Rule", "rules_sorted"]
