"""Lesson 09's ``benchmarks/train_tiny_gpt.py``: ``--resume`` goes on with the schedule where it stopped, so
every further step keeps the rate of the run's last steps, the floor of its cosine."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from course.gpt import GPT, GPTConfig, lr_at, make_optimizer, train_gpt

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "train_tiny_gpt.py"
_SPEC = importlib.util.spec_from_file_location("train_tiny_gpt", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
script = importlib.util.module_from_spec(_SPEC)
sys.modules["train_tiny_gpt"] = script
_SPEC.loader.exec_module(script)

SHIPPED_INFO = {"steps": 4000, "batch": 16, "peak_lr": 0.01, "final_lr": 0.001, "dropout": 0.1, "seed": 0}


def test_a_fresh_run_warms_up_and_decays_over_its_steps() -> None:
    assert script.schedule(4000) == script.Schedule(start=0, peak=0.01, warmup=100, total=4000)


def test_resuming_the_shipped_checkpoint_keeps_its_floor_rate() -> None:
    plan = script.schedule(1000, SHIPPED_INFO)
    assert plan == script.Schedule(start=4000, peak=0.01, warmup=100, total=4000)
    rates = [lr_at(step, plan.peak, plan.warmup, plan.total) for step in range(4000, 5000)]
    assert rates == [pytest.approx(0.001, rel=1e-12)] * 1000
    assert lr_at(3999, 0.01, 100, 4000) == pytest.approx(0.001, rel=1e-5)  # the run's last step


def _rates(model: GPT, data: torch.Tensor, plan: Any, steps: int) -> list[float]:
    """The learning rate ``train_gpt`` set at each step of ``plan``."""
    optimizer = make_optimizer(model, plan.peak)
    seen: list[float] = []
    train_gpt(
        model, data, steps=steps, batch=2, lr=plan.peak, warmup=plan.warmup, start=plan.start,
        total=plan.total, optimizer=optimizer,
        progress=lambda step, loss: seen.append(optimizer.param_groups[0]["lr"]),
    )  # fmt: skip
    return seen


def test_a_resumed_run_follows_the_schedule_it_left() -> None:
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab=5, context=4, d_model=8, n_heads=2, n_layers=1, d_ff=16))
    data = torch.arange(40) % 5
    first = script.Schedule(start=0, peak=0.01, warmup=2, total=6)
    rates = _rates(model, data, first, 6)
    info = {"steps": 6, "peak_lr": 0.01, "warmup": 2, "schedule_total": 6, "final_lr": rates[-1]}
    resumed = _rates(model, data, script.schedule(3, info), 3)
    assert rates == [lr_at(step, 0.01, 2, 6) for step in range(6)]
    assert resumed == [lr_at(6, 0.01, 2, 6)] * 3 == [pytest.approx(0.001, rel=1e-12)] * 3
