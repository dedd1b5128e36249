"""Issue 16: settings recorded on A are applied on B for the check, and restored after."""

from __future__ import annotations

import torch

from gpuport.validate import env


def test_a_settings_are_applied_during_the_check_and_restored() -> None:
    device = torch.device("cpu")
    b = env.numeric_settings(torch, device)
    assert b.sdpa_backends is not None and "math" in b.sdpa_backends
    a = b.model_copy(
        update={
            "float32_matmul_precision": "medium",
            "deterministic_algorithms": not b.deterministic_algorithms,
            "sdpa_backends": ["math"],
        }
    )
    with env.applied(torch, a) as changed:
        assert torch.get_float32_matmul_precision() == "medium"
        assert torch.are_deterministic_algorithms_enabled() is (not b.deterministic_algorithms)
        assert not torch.backends.cuda.flash_sdp_enabled()
        assert torch.backends.cuda.math_sdp_enabled()
        fields = {c.split(":", 1)[0] for c in changed}
        assert fields == {"float32_matmul_precision", "deterministic_algorithms", "sdpa_backends"}
        assert any("ran this check with A's medium" in c for c in changed)
    after = env.numeric_settings(torch, device)
    assert after == b  # B's own settings are back


def test_nothing_changes_when_the_settings_agree() -> None:
    b = env.numeric_settings(torch, torch.device("cpu"))
    with env.applied(torch, b) as changed:
        assert changed == []
