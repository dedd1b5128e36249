"""assess says how much of the work `gpuport port` takes off."""

from __future__ import annotations

import json
from pathlib import Path

from tests.port.helpers import project

KERNEL = "__device__ int f(int v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"


def test_assess_reports_items_with_a_safe_fix(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # app.py puts torch on a GPU: the requirements get their ROCm route (a safe fix)
    app = 'import torch\nx = torch.zeros(1, device="cuda")\n'
    files = {"k.cu": KERNEL, "requirements.txt": "torch>=2.2\n", "app.py": app}
    root = project(tmp_path, files)
    res = cli("assess", str(root), "--format", "json", "--no-progress")
    data = json.loads(res.out)
    scan = data["scan"]
    assert scan["port_items"] >= 2 and scan["port_safe_fix"] == scan["port_items"]
    note = f"gpuport port: {scan['port_safe_fix']} of {scan['port_items']} items have a safe fix"
    assert any(n.startswith(note) for n in data["notes"])
    assert (root / "k.cu").read_text() == KERNEL  # assess writes nothing
