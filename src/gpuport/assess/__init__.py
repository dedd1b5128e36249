"""``gpuport assess``: one readiness report for a project, built from every other command.

:func:`load_settings` reads the project's ``[tool.gpuport]`` / ``gpuport.toml`` (flags win),
:func:`assess` runs scan, a hipify dry run, cost, and attaches bench runs, validate reports and
doctor, then the decision engine (:mod:`gpuport.assess.verdict`) turns the evidence into a
verdict, an effort estimate and conclusions that link back to it. torch is imported only when
``--run-bench`` asks for a benchmark.
"""

from gpuport.assess.config import Settings, load_settings
from gpuport.assess.model import Assessment, Conclusion, Evidence, Readiness
from gpuport.assess.run import AssessOptions, assess

__all__ = [
    "AssessOptions",
    "Assessment",
    "Conclusion",
    "Evidence",
    "Readiness",
    "Settings",
    "assess",
    "load_settings",
]
