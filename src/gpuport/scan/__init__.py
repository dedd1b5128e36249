"""`gpuport scan`: will this project run on ROCm, and what blocks it?"""

from gpuport.scan.engine import ScanOptions, scan_path
from gpuport.scan.model import Finding, ScanReport, SkippedFile

__all__ = ["Finding", "ScanOptions", "ScanReport", "SkippedFile", "scan_path"]
