"""All rule families. Importing this package fills the registry in ``base``."""

from gpuport.scan.rules import (  # noqa: F401
    build,
    containers,
    deps,
    environment,
    native,
    python,
)
from gpuport.scan.rules.base import CHECKERS, RULES, FileContext, FileKind, Rule, rules_sorted

__all__ = ["CHECKERS", "RULES", "FileContext", "FileKind", "Rule", "rules_sorted"]
