"""Train lesson 09's tiny GPT for longer than the notebook does, and save the checkpoint the notebook loads.

    python benchmarks/train_tiny_gpt.py     # writes course/data/tiny-gpt.pt (about 4 minutes, one thread)
    python benchmarks/train_tiny_gpt.py --resume --steps 1000 --out my-gpt.pt   # go on from the checkpoint

The model and the data are the notebook's: ``GPTConfig(vocab, context=128, d_model=64, n_heads=4,
n_layers=2, d_ff=256)``, untied, on the first 90 % of ``course/data/moby-dick.txt`` (the last 10 % is the
validation text). Seeded (``torch.manual_seed(0)`` for the weights, the windows of step s from a generator
seeded with s), float32, one thread, dropout 0.1, AdamW with a warm-up and a cosine decay
(``course.gpt.train_gpt``). The weights are saved in float16 (about 240 KB). ``--resume`` starts from the
checkpoint's weights and step, with a fresh optimizer, and keeps the learning rate of the run's last step.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from course.gpt import (
    CHECKPOINT_PATH,
    GPT,
    CharVocab,
    GPTConfig,
    evaluate_loss,
    load_checkpoint,
    load_text,
    save_checkpoint,
    train_gpt,
)

STEPS, BATCH, LR, WARMUP, DROPOUT, SEED = 4000, 16, 1e-2, 100, 0.1, 0


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
    start, lr, total = 0, LR, args.steps
    if args.resume:
        loaded, _, info = load_checkpoint(CHECKPOINT_PATH, torch.float32)
        start, lr = int(info["steps"]), float(info["final_lr"])
        total = start + args.steps
        model = GPT(loaded.config, dropout=DROPOUT)
        model.load_state_dict(loaded.state_dict())
    else:
        model = GPT(
            GPTConfig(len(vocab), context=128, d_model=64, n_heads=4, n_layers=2, d_ff=256), dropout=DROPOUT
        )
    began = time.perf_counter()

    def progress(step: int, loss: float) -> None:
        if (step + 1) % 250 == 0:
            print(f"step {step + 1:>5}: loss {loss:.3f} ({time.perf_counter() - began:.0f} s)", flush=True)

    warmup = 0 if args.resume else WARMUP
    train_gpt(
        model, train, steps=args.steps, batch=BATCH, lr=lr, warmup=warmup, seed=SEED, start=start,
        total=total, progress=progress,
    )  # fmt: skip
    val_loss = evaluate_loss(model, val)
    print(f"validation loss {val_loss:.4f} nats per character after {start + args.steps} steps")
    info = {
        "steps": start + args.steps,
        "batch": BATCH,
        "peak_lr": LR,
        "final_lr": LR * 0.1,
        "dropout": DROPOUT,
        "seed": SEED,
        "val_loss_float32": round(val_loss, 4),
        "made_by": "python benchmarks/train_tiny_gpt.py" + (" --resume" if args.resume else ""),
    }
    save_checkpoint(model, vocab, args.out, **info)
    print(f"saved {args.out} ({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
