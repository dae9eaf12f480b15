"""Reference implementations for lesson 09: a tiny character-level GPT assembled from the pieces of lessons
04-07, its training on a public-domain text, baselines, sampling, and generation with a key/value cache.

The model is :class:`GPT`: token and learned position embeddings, ``n_layers`` pre-LN
:class:`course.block.Block` (causal multi-head attention of lesson 07 and a feed-forward network with GELU),
a final LayerNorm and a linear map to the logits, tied to the token embedding or not. :meth:`GPT.decode`
runs it on new positions only, reusing the keys and values of the earlier ones: :func:`attend_cached` is
lesson 05's :func:`course.attention.decode_step`, in torch, on the weights of a
:class:`course.block.CausalSelfAttention`.

The text is the first 25 chapters of *Moby-Dick* (Herman Melville, 1851; public domain), in ``course/data``
with its source and licence (``course/data/NOTICE.md``). :class:`CharVocab` maps its characters to integers.

Conventions: tokens are ``(B, T)`` integers; logits ``(B, T, vocab)``; a cache holds, per layer, keys and
values ``(B, h, T_past, d_head)``. Importing this module imports torch (like :mod:`course.block`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from numpy.typing import NDArray
from torch import Tensor, nn

from course.block import Block, CausalSelfAttention

__all__ = [
    "CHECKPOINT_PATH",
    "GPT",
    "TEXT_PATH",
    "CharVocab",
    "GPTConfig",
    "LayerCache",
    "attend_cached",
    "batch_windows",
    "bigram_loss",
    "evaluate_loss",
    "flops_per_token",
    "generate",
    "load_checkpoint",
    "load_text",
    "lr_at",
    "next_token_probs",
    "parameter_count",
    "save_checkpoint",
    "top_k_logits",
    "top_p_probs",
    "train_gpt",
]

DATA = Path(__file__).resolve().parent / "data"
TEXT_PATH = DATA / "moby-dick.txt"
"""The text the lesson trains on: chapters 1-25 of *Moby-Dick*, 230,464 characters (see ``NOTICE.md``)."""
CHECKPOINT_PATH = DATA / "tiny-gpt.pt"
"""The longer run's weights (``benchmarks/train_tiny_gpt.py`` made them; float16, its settings inside)."""


def load_text(path: Path = TEXT_PATH) -> str:
    """The text of ``path`` (UTF-8), by default the lesson's *Moby-Dick* chapters."""
    return path.read_text(encoding="utf-8")


@dataclass(frozen=True)
class CharVocab:
    """The characters of a text, sorted: character ``chars[i]`` is token ``i``."""

    chars: str

    @classmethod
    def from_text(cls, text: str) -> CharVocab:
        return cls("".join(sorted(set(text))))

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> Tensor:
        """(len(text),) int64 tokens; KeyError for a character the vocabulary does not have."""
        index = {c: i for i, c in enumerate(self.chars)}
        return torch.tensor([index[c] for c in text], dtype=torch.long)

    def decode(self, tokens: Tensor | Sequence[int]) -> str:
        return "".join(self.chars[int(i)] for i in tokens)


@dataclass(frozen=True)
class GPTConfig:
    """The sizes of a :class:`GPT`: vocabulary, context (the longest sequence, as positions are learned),
    width, heads, layers, feed-forward width, and whether the output layer is the token embedding (tied)."""

    vocab: int
    context: int = 128
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 3
    d_ff: int = 256
    tied: bool = False


class LayerCache(NamedTuple):
    """One layer's cached keys and values, already split into heads: (B, h, T_past, d_head) each."""

    k: Tensor
    v: Tensor


def attend_cached(
    attn: CausalSelfAttention, x_new: Tensor, cache: LayerCache | None
) -> tuple[Tensor, LayerCache]:
    """Causal self-attention of the new positions ``x_new`` (B, T_new, d_model) only, with ``attn``'s weights,
    reusing the cached keys and values of the earlier positions (``cache``, None when there are none).

    Lesson 05's ``decode_step`` in torch: project only the new positions, append their keys and values to the
    cache, let the new queries see every cached position and the new ones up to themselves (the bottom-right
    causal mask). Returns the output (B, T_new, d_model) and the grown cache (B, h, T_past + T_new, d_head).
    """
    b, t_new, d = x_new.shape
    h = attn.n_heads
    q, k, v = attn.w_qkv(x_new).split(d, dim=-1)  # (B, T_new, d) each
    q, k, v = (z.view(b, t_new, h, d // h).transpose(1, 2) for z in (q, k, v))  # (B, h, T_new, d_head)
    if cache is not None:
        k = torch.cat([cache.k, k], dim=-2)  # (B, h, T_past + T_new, d_head)
        v = torch.cat([cache.v, v], dim=-2)
    t_all = k.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d // h)  # (B, h, T_new, T_all)
    i = torch.arange(t_new, device=x_new.device)[:, None] + (t_all - t_new)  # the new queries' positions
    allowed = torch.arange(t_all, device=x_new.device)[None, :] <= i  # (T_new, T_all): bottom-right
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    heads = weights @ v  # (B, h, T_new, d_head)
    return attn.w_o(heads.transpose(1, 2).reshape(b, t_new, d)), LayerCache(k, v)


class GPT(nn.Module):
    """A decoder-only language model: token embedding + learned positions, ``n_layers`` pre-LN causal blocks
    (course.block.Block with a GELU feed-forward network), a final LayerNorm, and a linear output layer
    without bias, whose weight is the token embedding's when ``tied``.

    ``forward(tokens)`` (B, T), T <= context, returns the logits (B, T, vocab) and every layer's attention
    weights, a list of (B, h, T, T). ``decode(tokens, cache)`` does the same for new positions only, with a
    key/value cache per layer.
    """

    def __init__(self, config: GPTConfig, *, dropout: float = 0.0) -> None:
        super().__init__()
        self.config = config
        c = config
        self.embed = nn.Embedding(c.vocab, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            Block(c.d_model, c.n_heads, c.d_ff, dropout=dropout, max_len=c.context, activation="gelu")
            for _ in range(c.n_layers)
        )
        self.norm = nn.LayerNorm(c.d_model)
        self.unembed = nn.Linear(c.d_model, c.vocab, bias=False)
        if c.tied:
            self.unembed.weight = self.embed.weight  # one (vocab, d_model) matrix, used twice
        self.apply(_init)

    def _embed(self, tokens: Tensor, start: int) -> Tensor:
        t = tokens.shape[1]
        if start + t > self.config.context:
            raise ValueError(
                f"{start + t} positions do not fit in the context of {self.config.context} "
                "(the positions are learned: there is no embedding beyond the context)"
            )
        positions = torch.arange(start, start + t, device=tokens.device)
        x: Tensor = self.drop(self.embed(tokens) + self.position(positions))  # (B, T, d_model)
        return x

    def forward(self, tokens: Tensor) -> tuple[Tensor, list[Tensor]]:
        x = self._embed(tokens, 0)
        all_weights = []
        for block in self.blocks:
            x, weights = block(x)
            all_weights.append(weights)  # (B, h, T, T)
        return self.unembed(self.norm(x)), all_weights  # (B, T, vocab)

    def decode(
        self, tokens: Tensor, cache: Sequence[LayerCache] | None = None
    ) -> tuple[Tensor, list[LayerCache]]:
        """The logits (B, T_new, vocab) of the new positions ``tokens`` (B, T_new), which follow the positions
        held in ``cache`` (None, or the list that an earlier call returned), and the grown cache."""
        start = 0 if not cache else int(cache[0].k.shape[-2])
        x = self._embed(tokens, start)
        grown = []
        for layer, block in enumerate(self.blocks):
            assert isinstance(block, Block) and block.ffn is not None
            a, layer_cache = attend_cached(block.attn, block.norm1(x), cache[layer] if cache else None)
            x = x + block.drop(a)
            x = x + block.drop(block.ffn(block.norm2(x)))
            grown.append(layer_cache)
        return self.unembed(self.norm(x)), grown


def _init(module: nn.Module) -> None:
    """Normal(0, 0.02) for every weight matrix and both embeddings, zero biases. GPT-2's released code uses
    0.02 for its token embedding and its layers' weights, but 0.01 for its position embedding."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)


def parameter_count(config: GPTConfig) -> int:
    """The exact number of parameters of ``GPT(config)``, counted from the formula.

    Embeddings V d + positions context d; per block: two LayerNorms (2 d each), attention 4 d² + 4 d
    (W_QKV and W_O with biases), feed-forward 2 d d_ff + d_ff + d; the final LayerNorm 2 d; the output layer
    V d unless it is tied to the embedding.
    """
    v, d, f = config.vocab, config.d_model, config.d_ff
    block = 2 * (2 * d) + (4 * d * d + 4 * d) + (2 * d * f + f + d)
    return v * d + config.context * d + config.n_layers * block + 2 * d + (0 if config.tied else v * d)


def flops_per_token(config: GPTConfig, t: int | None = None) -> int:
    """Forward floating-point operations per token (2 per multiply-add) of the matrix products, at a
    sequence of ``t`` tokens (by default the context): 2 N, N the parameters that multiply (every weight
    matrix but the embeddings'), plus attention's two products per layer, the scores Q K^T and the weighted
    sum of the values, 2 * t * d_model each: 2 N + 4 n_layers t d_model.

    Both products are counted over all ``t`` positions, as if no mask halved them (a causal model computes
    them anyway, and torch's FlopCounterMode counts what is computed). This is the forward third of PaLM's
    training count 6 N + 12 L H Q T (Chowdhery et al., 2022, appendix B; H Q = d_model), and the two
    products Chinchilla's appendix F counts (Hoffmann et al., 2022), without its softmax. Kaplan et al.
    (2020) write 2 N + 2 n_layer n_ctx d_attn, one attention term."""
    t = config.context if t is None else t
    d, f = config.d_model, config.d_ff
    matrices = config.n_layers * (4 * d * d + 2 * d * f) + config.vocab * d
    return 2 * matrices + 2 * 2 * config.n_layers * t * d


# ----------------------------------------------------------------------------------------------------
# Baselines and the loss


def bigram_loss(train: Tensor, val: Tensor, vocab: int, smoothing: float = 1.0) -> float:
    """Cross-entropy (nats per character) on ``val`` of the bigram model counted on ``train``: p(b | a) =
    (count(a, b) + smoothing) / (count(a) + smoothing * vocab)."""
    counts = torch.zeros(vocab, vocab, dtype=torch.float64)
    counts.index_put_(
        (train[:-1], train[1:]), torch.ones(len(train) - 1, dtype=torch.float64), accumulate=True
    )
    probs = (counts + smoothing) / (counts + smoothing).sum(dim=1, keepdim=True)  # (V, V): rows sum to 1
    return float(-probs[val[:-1], val[1:]].log().mean())


def batch_windows(
    data: Tensor, batch: int, context: int, generator: torch.Generator
) -> tuple[Tensor, Tensor]:
    """``batch`` random windows of ``context`` tokens of ``data`` and the same windows shifted by one, the
    next-token targets: (batch, context) each."""
    starts = torch.randint(0, len(data) - context, (batch,), generator=generator)
    index = starts[:, None] + torch.arange(context)[None, :]  # (batch, context)
    return data[index], data[index + 1]


@torch.no_grad()
def evaluate_loss(model: GPT, data: Tensor, context: int | None = None, batch: int = 64) -> float:
    """Mean cross-entropy (nats per character) of ``model`` on ``data``, cut into consecutive windows of
    ``context`` inputs (by default the model's context): every character but the first of each window is
    predicted once. Deterministic: no sampling of windows."""
    context = model.config.context if context is None else context
    n = (len(data) - 1) // context
    inputs = data[: n * context].view(n, context)
    targets = data[1 : n * context + 1].view(n, context)
    was_training = model.training
    model.eval()
    total = 0.0
    for i in range(0, n, batch):
        logits, _ = model(inputs[i : i + batch])
        total += float(
            nn.functional.cross_entropy(
                logits.flatten(0, 1), targets[i : i + batch].flatten(), reduction="sum"
            )
        )
    model.train(was_training)
    return total / (n * context)


def lr_at(step: int, peak: float, warmup: int, total: int, floor: float = 0.1) -> float:
    """The learning rate at ``step``: a linear warm-up from peak / warmup to ``peak`` over the first
    ``warmup`` steps, then a cosine decay to ``floor * peak`` at step ``total``."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))


def train_gpt(
    model: GPT,
    data: Tensor,
    *,
    steps: int,
    batch: int = 16,
    lr: float = 3e-3,
    warmup: int = 20,
    seed: int = 0,
    start: int = 0,
    total: int | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Train ``model`` on random windows of ``data`` with AdamW (weight decay 0.1 on the matrices), the
    learning rate of :func:`lr_at` (``total`` steps in all, by default ``start + steps``), gradients clipped
    to norm 1. ``start`` resumes at that step (with the ``optimizer`` of the earlier run, if kept): the
    windows of step s are drawn from a generator seeded with ``seed`` and s, whatever ran before.
    ``progress(step, loss)`` is called after every step. Returns the loss of every step."""
    total = start + steps if total is None else total
    if optimizer is None:
        optimizer = make_optimizer(model, lr)
    model.train()
    losses = []
    dtype = model.embed.weight.dtype
    for step in range(start, start + steps):
        generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
        x, y = batch_windows(data, batch, model.config.context, generator)
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, lr, warmup, total)
        logits, _ = model(x)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1).to(dtype), y.flatten())
        optimizer.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        if progress is not None:
            progress(step, losses[-1])
    model.eval()
    return losses


def make_optimizer(model: nn.Module, lr: float = 3e-3) -> torch.optim.AdamW:
    """AdamW with weight decay 0.1 on the matrices (the parameters of two or more axes), none on the biases,
    LayerNorms and ... embeddings too are matrices (GPT-2 decays them)."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.99))


# ----------------------------------------------------------------------------------------------------
# Sampling


def top_k_logits(logits: Tensor, k: int) -> Tensor:
    """``logits`` (..., V) with every entry below the k-th largest of its row set to -inf (ties at the k-th
    value are kept)."""
    kth = logits.topk(k, dim=-1).values[..., -1:]  # (..., 1)
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_probs(probs: NDArray[np.floating], p: float) -> NDArray[np.floating]:
    """Nucleus (top-p) sampling's distribution: keep, in each row of ``probs`` (..., V), the most probable
    tokens whose probabilities first add up to ``p`` or more (the token that crosses p included), set the
    others to 0 and renormalise. Ties are broken by the lower token index first."""
    probs = np.asarray(probs, dtype=float)
    order = np.argsort(-probs, axis=-1, kind="stable")  # (..., V): most probable first
    sorted_probs = np.take_along_axis(probs, order, axis=-1)
    before = np.cumsum(sorted_probs, axis=-1) - sorted_probs  # the mass of the tokens ranked above each one
    keep_sorted = before < p  # a token is kept while the mass above it is still short of p
    keep = np.zeros_like(keep_sorted)
    np.put_along_axis(keep, order, keep_sorted, axis=-1)
    kept = np.where(keep, probs, 0.0)
    out: NDArray[np.floating] = kept / kept.sum(axis=-1, keepdims=True)
    return out


def next_token_probs(
    logits: Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> Tensor:
    """The distribution to sample the next token from, (..., V): softmax(logits / temperature), restricted to
    the ``top_k`` largest logits and then to the nucleus ``top_p`` when they are given. Temperature 0 is
    the limit τ -> 0, greedy decoding: all the mass on the largest logit (the first, if tied)."""
    if temperature < 0:
        raise ValueError(f"the temperature must be 0 (greedy) or more, not {temperature}")
    if temperature == 0:
        greedy = torch.zeros(logits.shape, dtype=torch.float64)
        return greedy.scatter_(-1, logits.argmax(dim=-1, keepdim=True), 1.0)
    logits = logits / temperature
    if top_k is not None:
        logits = top_k_logits(logits, top_k)
    probs = torch.softmax(logits.double(), dim=-1)
    if top_p is not None:
        probs = torch.from_numpy(top_p_probs(probs.numpy(), top_p))
    return probs


@torch.no_grad()
def generate(
    model: GPT,
    prompt: Tensor,
    n_new: int,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
) -> Tensor:
    """``prompt`` (T,) followed by ``n_new`` generated tokens, (T + n_new,), as many as asked: the model sees
    the last ``context`` tokens at most (the prompt's last ones too, when it is longer).

    Each new token is drawn with ``torch.multinomial(probs, 1, generator=generator)`` from
    :func:`next_token_probs` of the last position's logits; at temperature 0 it is the argmax (greedy
    decoding, no draw). With ``use_cache`` the prompt is run once and each new token alone, through
    :meth:`GPT.decode`, until the context is full; from then on the window of the last ``context`` tokens
    is run again at every step (the positions are learned: a cached key belongs to its position, so the
    cache cannot slide). Without, the whole window is run at every step. Both give the same tokens (the
    logits agree to rounding).
    """
    if n_new < 0:
        raise ValueError(f"n_new must be 0 or more, not {n_new}")
    if len(prompt) == 0:
        raise ValueError("the prompt must hold at least one token")
    model.eval()
    context = model.config.context
    tokens = prompt.tolist()
    cache: list[LayerCache] | None = None
    for _ in range(n_new):
        window = tokens[-context:]
        if not use_cache:
            logits, _ = model(torch.tensor([window]))  # (1, T, V): the whole window again
        elif cache is None or int(cache[0].k.shape[-2]) >= context:
            logits, cache = model.decode(torch.tensor([window]))  # (1, T, V): the prompt, or a full window
        else:
            logits, cache = model.decode(torch.tensor([tokens[-1:]]), cache)  # (1, 1, V): the new token
        if temperature == 0:
            tokens.append(int(logits[0, -1].argmax()))  # greedy: the most probable token, no draw
            continue
        probs = next_token_probs(logits[0, -1], temperature, top_k, top_p)  # (V,)
        tokens.append(int(torch.multinomial(probs, 1, generator=generator)))
    return torch.tensor(tokens)


# ----------------------------------------------------------------------------------------------------
# Checkpoints


def save_checkpoint(model: GPT, vocab: CharVocab, path: Path, **info: Any) -> None:
    """Save the weights (in float16, to keep the file small), the config, the vocabulary and ``info``."""
    state = {name: tensor.half() for name, tensor in model.state_dict().items() if tensor.is_floating_point()}
    torch.save({"config": vars(model.config), "chars": vocab.chars, "state": state, "info": info}, path)


def load_checkpoint(
    path: Path = CHECKPOINT_PATH,
    dtype: torch.dtype = torch.float64,
    *,
    config: GPTConfig | None = None,
    vocab: CharVocab | None = None,
) -> tuple[GPT, CharVocab, dict[str, Any]]:
    """The model saved at ``path`` (in ``dtype``, float64 by default, for sums that do not depend on the
    CPU's arithmetic), in eval mode, its vocabulary and the ``info`` it was saved with.

    A ValueError names the file and what differs when the file is not such a checkpoint: a config with
    fields :class:`GPTConfig` lacks or misses, a vocabulary of another size than the config's, weights the
    model does not have, lacks, or has in another shape; or when it is not the ``config`` or the ``vocab``
    asked for."""
    saved = torch.load(path, weights_only=True)
    keys = {"config", "chars", "state", "info"}
    if not isinstance(saved, dict) or set(saved) != keys:
        found = sorted(saved) if isinstance(saved, dict) else type(saved).__name__
        raise ValueError(f"{path} is not a checkpoint of course.gpt: it holds {found}, not {sorted(keys)}")
    fields = [field.name for field in dataclasses.fields(GPTConfig)]
    unknown = [name for name in saved["config"] if name not in fields]
    if unknown:
        raise ValueError(f"{path}: its config has fields GPTConfig does not have: {', '.join(unknown)}")
    lacking = [name for name in fields if name not in saved["config"]]
    if lacking:
        raise ValueError(f"{path}: its config lacks the fields {', '.join(lacking)}")
    saved_config = GPTConfig(**saved["config"])
    chars = saved["chars"]
    if len(chars) != saved_config.vocab:
        raise ValueError(
            f"{path}: its vocabulary has {len(chars)} characters, its config vocab={saved_config.vocab}"
        )
    if config is not None and saved_config != config:
        differ = [
            f"{name} {getattr(saved_config, name)} (not {getattr(config, name)})"
            for name in fields
            if getattr(saved_config, name) != getattr(config, name)
        ]
        raise ValueError(f"{path} holds another model: {', '.join(differ)}")
    if vocab is not None and chars != vocab.chars:
        raise ValueError(
            f"{path} holds another vocabulary: {len(chars)} characters {chars!r}, not {vocab.chars!r}"
        )
    model = GPT(saved_config).to(dtype)
    expected = {name: t for name, t in model.state_dict().items() if t.is_floating_point()}  # no mask buffers
    state = saved["state"]
    extra = [name for name in state if name not in expected]
    if extra:
        raise ValueError(f"{path} holds weights this model does not have: {', '.join(extra)}")
    missing = [name for name in expected if name not in state]
    if missing:
        raise ValueError(f"{path} lacks weights this model has: {', '.join(missing)}")
    for name, tensor in state.items():
        if tensor.shape != expected[name].shape:
            raise ValueError(
                f"{path}: {name} has the shape {tuple(tensor.shape)}, the model {saved_config} "
                f"needs {tuple(expected[name].shape)}"
            )
    model.load_state_dict({k: v.to(dtype) for k, v in state.items()}, strict=False)
    return model.eval(), CharVocab(chars), dict(saved["info"])
