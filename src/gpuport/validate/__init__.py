"""``gpuport validate``: does the model compute the same numbers on ROCm as on CUDA?

Capture on machine A (:func:`capture`), check on machine B (:func:`check`) or compare two
captures (:func:`diff_files`); the answer is a :class:`ParityReport`. torch and safetensors are
imported only when a function runs (extra ``gpuport[validate]``).
"""

from gpuport.models import register_consistency_check
from gpuport.validate.capture import CaptureOptions, capture, capture_model
from gpuport.validate.check import CheckOptions, check, check_model
from gpuport.validate.diff import diff_files
from gpuport.validate.model import CaptureSummary, ParityReport, Row, Status, Verdict
from gpuport.validate.report import report_problem

# a loaded report's statuses, counts and verdict are re-derived from its rows (issues 14, 23)
register_consistency_check(ParityReport, report_problem)

__all__ = [
    "CaptureOptions",
    "CaptureSummary",
    "CheckOptions",
    "ParityReport",
    "Row",
    "Status",
    "Verdict",
    "capture",
    "capture_model",
    "check",
    "check_model",
    "diff_files",
]
