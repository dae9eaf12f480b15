"""Train lesson 09's tiny GPT for longer than the notebook does, and save the checkpoint the notebook loads.

    python benchmarks/train_tiny_gpt.py     # writes course/data/tiny-gpt.pt (about 4 minutes, one thread)
    python benchmarks/train_tiny_gpt.py --resume --steps 1000 --out my-gpt.pt   # go on from the checkpoint

The model and the data are the notebook's: ``GPTConfig(vocab, context=128, d_model=64, n_heads=4,
n_layers=2, d_ff=256)``, untied, on the first 90 % of ``course/data/moby-dick.txt`` (the last 10 % is the
validation text). Seeded (``torch.manual_seed(0)`` for the weights, the windows of step s from a generator
seeded with s), float32, one thread, dropout 0.1, AdamW with a warm-up and a cosine decay
(``course.gpt.train_gpt``). The weights are saved in float16 (about 240 KB). ``--resume`` starts from the
checkpoint's weights and step, with a fresh optimizer, and goes on with its learning-rate schedule where it
stopped: the schedule had decayed to its floor, peak / 10, and every further step keeps that rate.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, NamedTuple

import torch

from course.gpt import (
    CHECKPOINT_PATH,
    GPT,
    CharVocab,
    GPTConfig,
    evaluate_loss,
    load_checkpoint,
    load_text,
    lr_at,
    save_checkpoint,
    train_gpt,
)

STEPS, BATCH, LR, WARMUP, DROPOUT, SEED = 4000, 16, 1e-2, 100, 0.1, 0


class Schedule(NamedTuple):
    """Where a run starts and the learning-rate schedule it follows (``course.gpt.lr_at``'s arguments)."""

    start: int
    peak: float
    warmup: int
    total: int


def schedule(steps: int, info: dict[str, Any] | None = None) -> Schedule:
    """A fresh run of ``steps`` steps, or, given a checkpoint's ``info``, its schedule resumed where it
    stopped (checkpoints saved before ``warmup`` and ``schedule_total`` were recorded ended their schedule
    at their last step, with the warm-up of ``WARMUP``)."""
    if info is None:
        return Schedule(0, LR, WARMUP, steps)
    total = int(info.get("schedule_total", info["steps"]))
    return Schedule(int(info["steps"]), float(info["peak_lr"]), int(info.get("warmup", WARMUP)), total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--out", type=Path, default=CHECKPOINT_PATH)
    parser.add_argument("--resume", action="store_true", help="go on from the shipped checkpoint")
    args = parser.parse_args()
    torch.set_num_threads(1)
    text = load_text()
    vocab = CharVocab.from_text(text)
    data = vocab.encode(text)
    split = int(0.9 * len(data))
    train, val = data[:split], data[split:]
    torch.manual_seed(SEED)
    if args.resume:
        loaded, _, info = load_checkpoint(CHECKPOINT_PATH, torch.float32)
        plan = schedule(args.steps, info)
        model = GPT(loaded.config, dropout=DROPOUT)
        model.load_state_dict(loaded.state_dict())
    else:
        plan = schedule(args.steps)
        model = GPT(
            GPTConfig(len(vocab), context=128, d_model=64, n_heads=4, n_layers=2, d_ff=256), dropout=DROPOUT
        )
    began = time.perf_counter()

    def progress(step: int, loss: float) -> None:
        if (step + 1) % 250 == 0:
            print(f"step {step + 1:>5}: loss {loss:.3f} ({time.perf_counter() - began:.0f} s)", flush=True)

    train_gpt(
        model, train, steps=args.steps, batch=BATCH, lr=plan.peak, warmup=plan.warmup, seed=SEED,
        start=plan.start, total=plan.total, progress=progress,
    )  # fmt: skip
    end = plan.start + args.steps
    val_loss = evaluate_loss(model, val)
    print(f"validation loss {val_loss:.4f} nats per character after {end} steps")
    info = {
        "steps": end,
        "batch": BATCH,
        "peak_lr": plan.peak,
        "final_lr": lr_at(end - 1, plan.peak, plan.warmup, plan.total),
        "warmup": plan.warmup,
        "schedule_total": plan.total,
        "dropout": DROPOUT,
        "seed": SEED,
        "val_loss_float32": round(val_loss, 4),
        "made_by": "python benchmarks/train_tiny_gpt.py" + (" --resume" if args.resume else ""),
    }
    save_checkpoint(model, vocab, args.out, **info)
    print(f"saved {args.out} ({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
