"""bench-embed-int8's summary: each model's CPU and wall time over all rounds against f32's, and
how close its vectors are to f32's."""

from __future__ import annotations

import numpy as np
from terag_bench.embed_int8 import against_f32


def test_ratios_add_up_every_round_and_cosines_compare_row_by_row() -> None:
    rounds = [
        {"round": 1, "model": "f32", "cpu_s_per_1000": 80.0, "wall_s_per_1000": 100.0},
        {"round": 1, "model": "q", "cpu_s_per_1000": 120.0, "wall_s_per_1000": 150.0},
        {"round": 2, "model": "f32", "cpu_s_per_1000": 120.0, "wall_s_per_1000": 100.0},
        {"round": 2, "model": "q", "cpu_s_per_1000": 180.0, "wall_s_per_1000": 50.0},
    ]
    f32 = np.eye(3, dtype=np.float32)
    turned = np.array([[1, 0, 0], [0.6, 0.8, 0], [0, 0, 1]], dtype=np.float32)
    got = against_f32(rounds, {"f32": f32, "q": turned})
    assert got["f32"] == {
        "cpu_ratio": 1.0,
        "wall_ratio": 1.0,
        "cosine_min": 1.0,
        "cosine_median": 1.0,
    }
    assert got["q"] == {
        "cpu_ratio": 1.5,  # 300 / 200, not the mean of the rounds' ratios
        "wall_ratio": 1.0,
        "cosine_min": 0.8,
        "cosine_median": 1.0,
    }
