"""Reference implementations for lesson 07: LayerNorm, causal multi-head self-attention as an ``nn.Module``,
the Transformer block (post-LN and pre-LN), and a tiny decoder-only model trained on repeated sequences.

Unlike :mod:`course.attention` this module is written in torch (it trains models), so importing it imports
torch; ``course.checkers`` imports it only inside the lesson 07 checkers.

Conventions: a batch of sequences is ``(B, T, d_model)``; attention weights are ``(B, h, T, T)``; a boolean
mask holds True where a query **may attend** to a key, as in :mod:`course.attention`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

PERIODS = (4, 10)

__all__ = [
    "Block",
    "CausalSelfAttention",
    "TinyDecoder",
    "copy_encoder_layer",
    "follow_last_occurrence",
    "induction_score",
    "layer_norm",
    "next_token_accuracy",
    "previous_token_score",
    "repeated_batch",
    "train_repeated",
]


def layer_norm(
    x: Tensor, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5
) -> Tensor:
    """LayerNorm over the last axis, from its definition: ``(x - mean) / sqrt(var + eps) * weight + bias``.

    ``var`` is the *biased* variance (divided by d, not d - 1) and ``eps`` is added *inside* the square root,
    exactly as ``nn.LayerNorm``. Shapes: ``x`` (..., d); ``weight`` and ``bias`` (d,) or None (1 and 0).
    """
    mean = x.mean(dim=-1, keepdim=True)  # (..., 1)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # (..., 1), biased: divided by d
    y = (x - mean) / torch.sqrt(var + eps)  # (..., d): mean 0, variance ~1 in each row
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention with an optional causal mask, dropout on the attention weights.

    ``w_qkv`` is one ``nn.Linear(d_model, 3 d_model)`` whose weight, (3 d_model, d_model), stacks W_Qᵀ, W_Kᵀ,
    W_Vᵀ (``nn.Linear`` stores (out, in) and computes x Wᵀ, so Q = x @ w_qkv.weight[:d_model].T + bias), the
    layout of ``nn.MultiheadAttention.in_proj_weight``; ``w_o`` is the output projection. The causal mask,
    (max_len, max_len) booleans, True where j <= i, is a registered buffer: it is saved in ``state_dict`` and
    moves with ``.to(device)``, but it is not a parameter. ``forward(x)`` takes (B, T, d_model), T <= max_len,
    and returns the output (B, T, d_model) and the weights (B, h, T, T), after dropout (those that multiply
    V).
    """

    mask: Tensor

    def __init__(
        self, d_model: int, n_heads: int, dropout: float = 0.0, max_len: int = 64, causal: bool = True
    ) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model = {d_model} is not divisible by n_heads = {n_heads}")
        self.n_heads, self.causal = n_heads, causal
        self.w_qkv = nn.Linear(d_model, 3 * d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        b, t, d = x.shape
        h = self.n_heads
        q, k, v = self.w_qkv(x).split(d, dim=-1)  # (B, T, d) each
        q, k, v = (z.view(b, t, h, d // h).transpose(1, 2) for z in (q, k, v))  # (B, h, T, d_head) each
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // h)  # (B, h, T, T), scaled by the per-head d_k
        if self.causal:
            scores = scores.masked_fill(~self.mask[:t, :t], float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, h, T, T)
        heads = weights @ v  # (B, h, T, d_head)
        out = self.w_o(heads.transpose(1, 2).reshape(b, t, d))  # (B, T, d)
        return out, weights


class Block(nn.Module):
    """A Transformer block: self-attention and a feed-forward network, each wrapped in a residual connection
    and a LayerNorm.

    Post-LN (``norm_first=False``, the paper): ``x = norm1(x + attn(x))``, ``x = norm2(x + ffn(x))``.
    Pre-LN (``norm_first=True``, GPT-2 and most models since): ``x = x + attn(norm1(x))``,
    ``x = x + ffn(norm2(x))``. ``d_ff=None`` leaves out the feed-forward network (an attention-only block);
    ``residual=False`` drops the ``x +`` (for the ablation of lesson 07); ``activation`` is the feed-forward
    network's, "relu" (the paper's) or "gelu" (GPT-2's). ``forward(x)`` returns the output (B, T, d_model) and
    the attention weights (B, h, T, T).
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int | None = None,
        *,
        dropout: float = 0.0,
        norm_first: bool = True,
        causal: bool = True,
        residual: bool = True,
        max_len: int = 64,
        eps: float = 1e-5,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        if activation not in ("relu", "gelu"):
            raise ValueError(f"activation is 'relu' or 'gelu', not {activation!r}")
        self.norm_first, self.residual, self.eps = norm_first, residual, eps
        self.attn = CausalSelfAttention(d_model, n_heads, dropout, max_len, causal)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.ffn: nn.Sequential | None = None
        if d_ff is not None:
            self.norm2 = nn.LayerNorm(d_model, eps=eps)
            self.ffn = nn.Sequential(
                nn.Linear(d_model, d_ff),
                nn.ReLU() if activation == "relu" else nn.GELU(),
                nn.Dropout(dropout),
                nn.Linear(d_ff, d_model),
            )
        self.drop = nn.Dropout(dropout)

    def _add(self, x: Tensor, y: Tensor) -> Tensor:
        return x + y if self.residual else y

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        if self.norm_first:
            a, weights = self.attn(self.norm1(x))
            x = self._add(x, self.drop(a))
            if self.ffn is not None:
                x = self._add(x, self.drop(self.ffn(self.norm2(x))))
        else:
            a, weights = self.attn(x)
            x = self.norm1(self._add(x, self.drop(a)))
            if self.ffn is not None:
                x = self.norm2(self._add(x, self.drop(self.ffn(x))))
        return x, weights


@torch.no_grad()
def copy_encoder_layer(layer: nn.TransformerEncoderLayer, block: Block) -> None:
    """Copy the weights of ``nn.TransformerEncoderLayer`` (batch_first, ReLU) into ``block`` in place.

    ``self_attn.in_proj_weight`` (3 d_model, d_model) stacks W_Qᵀ, W_Kᵀ, W_Vᵀ, the layout of
    ``block.attn.w_qkv.weight``, so the copy is direct;
    ``linear1``/``linear2`` are the feed-forward network; ``norm1``/``norm2`` the LayerNorms.
    """
    if block.ffn is None:
        raise ValueError(
            "the block has no feed-forward network (d_ff=None); nn.TransformerEncoderLayer has one"
        )
    block.attn.w_qkv.weight.copy_(layer.self_attn.in_proj_weight)
    block.attn.w_qkv.bias.copy_(layer.self_attn.in_proj_bias)
    block.attn.w_o.weight.copy_(layer.self_attn.out_proj.weight)
    block.attn.w_o.bias.copy_(layer.self_attn.out_proj.bias)
    ffn_in, ffn_out = block.ffn[0], block.ffn[3]
    assert isinstance(ffn_in, nn.Linear) and isinstance(ffn_out, nn.Linear)
    for mine, theirs in [(ffn_in, layer.linear1), (ffn_out, layer.linear2)]:
        mine.weight.copy_(theirs.weight)
        mine.bias.copy_(theirs.bias)
    for norm, their_norm in [(block.norm1, layer.norm1), (block.norm2, layer.norm2)]:
        norm.weight.copy_(their_norm.weight)
        norm.bias.copy_(their_norm.bias)


class TinyDecoder(nn.Module):
    """A decoder-only language model: token and learned position embeddings, ``n_layers`` pre-LN causal
    blocks (attention-only when ``d_ff`` is None), a final LayerNorm and a linear unembedding.

    ``forward(tokens)`` takes (B, T) integer tokens and returns the logits (B, T, vocab) and the attention
    weights of every layer, a list of (B, h, T, T).
    """

    def __init__(
        self,
        vocab: int,
        d_model: int,
        n_heads: int,
        n_layers: int,
        max_len: int,
        *,
        d_ff: int | None = None,
        residual: bool = True,
    ) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(
            Block(d_model, n_heads, d_ff, residual=residual, max_len=max_len) for _ in range(n_layers)
        )
        self.norm = nn.LayerNorm(d_model)
        self.unembed = nn.Linear(d_model, vocab)

    def forward(self, tokens: Tensor) -> tuple[Tensor, list[Tensor]]:
        t = tokens.shape[1]
        x = self.embed(tokens) + self.position(torch.arange(t, device=tokens.device))  # (B, T, d_model)
        all_weights = []
        for block in self.blocks:
            x, weights = block(x)
            all_weights.append(weights)  # (B, h, T, T)
        return self.unembed(self.norm(x)), all_weights  # (B, T, vocab)


def repeated_batch(
    generator: torch.Generator, batch: int, length: int, vocab: int, periods: tuple[int, int] = (4, 10)
) -> tuple[Tensor, Tensor]:
    """Sequences of ``length`` tokens that repeat a random chunk: each sequence draws a period p in
    ``periods`` (inclusive), p random tokens, and repeats them until it is ``length`` long, so that token t
    equals token t - p for t >= p. The period varies, so only the content tells where the copy is.

    Returns ``tokens`` (B, length) and ``periods`` (B,).
    """
    low, high = periods
    p = torch.randint(low, high + 1, (batch,), generator=generator)  # (B,)
    chunk = torch.randint(0, vocab, (batch, high), generator=generator)  # (B, high)
    t = torch.arange(length)  # (length,)
    index = t[None, :] % p[:, None]  # (B, length): position t copies chunk position t mod p
    return chunk.gather(1, index), p


def follow_last_occurrence(tokens: Tensor) -> Tensor:
    """The rule "the next token is the one that followed the current token last time": for each position t,
    ``tokens[s + 1]`` for the largest s < t with ``tokens[s] == tokens[t]``, or -1 where token t has not
    occurred before. (B, T) -> (B, T).

    On :func:`repeated_batch` sequences the rule is wrong where the chunk holds a token twice: the token one
    period back, not its last occurrence, is then the one whose follower comes next.
    """
    t = tokens.shape[1]
    same = tokens[:, :, None] == tokens[:, None, :]  # (B, T, T): [b, t, s] = tokens[s] == tokens[t]
    same &= torch.tril(torch.ones(t, t, dtype=torch.bool), diagonal=-1)  # s < t
    last = torch.where(same, torch.arange(t), -1).max(dim=-1).values  # (B, T): the last s, or -1
    follower = tokens.gather(1, last + 1)  # (B, T): tokens[last + 1] (last < t, so last + 1 <= t)
    return torch.where(last >= 0, follower, -1)


def _predictable(periods: Tensor, length: int) -> Tensor:
    """(B, length - 1) booleans: True where position t already holds a copy (t >= p), so that its next token
    t + 1 copies token t + 1 - p, the one after the earlier occurrence of token t."""
    t = torch.arange(length - 1)
    return t[None, :] >= periods[:, None]


def next_token_accuracy(logits: Tensor, tokens: Tensor, periods: Tensor) -> float:
    """Fraction of the predictable next tokens predicted right: those at the positions t >= p, whose token
    occurred before, followed by the token to predict."""
    ok = logits[:, :-1].argmax(dim=-1) == tokens[:, 1:]  # (B, T-1)
    where = _predictable(periods, tokens.shape[1])
    return float(ok[where].float().mean())


def train_repeated(
    model: TinyDecoder,
    *,
    steps: int,
    batch: int,
    length: int,
    vocab: int,
    lr: float = 1e-2,
    seed: int = 0,
    progress: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Train ``model`` with Adam on :func:`repeated_batch` sequences, with the cross-entropy of the
    predictable next tokens. ``progress(step, loss)`` is called after every step (a tqdm bar's update, say).
    Returns the loss of every step."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    for step in range(steps):
        tokens, periods = repeated_batch(generator, batch, length, vocab, PERIODS)
        logits, _ = model(tokens)
        where = _predictable(periods, length)  # (B, T-1)
        loss = nn.functional.cross_entropy(logits[:, :-1][where], tokens[:, 1:][where])
        optimizer.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        losses.append(loss.item())
        if progress is not None:
            progress(step, losses[-1])
    model.eval()
    return losses


def previous_token_score(weights: Tensor, periods: Tensor | None = None) -> Tensor:
    """Mean weight that each head puts on the previous position, over the batch and positions 1..T-1, or,
    with ``periods``, over the positions 1..p-1 of each sequence's first copy of its chunk (the keys an
    induction head reads).

    ``weights`` (B, h, T, T), ``periods`` (B,) -> (h,). A perfect previous-token head scores 1.
    """
    previous = weights.diagonal(offset=-1, dim1=-2, dim2=-1)  # (B, h, T-1): [b, h, t-1] = weight of t on t-1
    if periods is None:
        return previous.mean(dim=(0, 2))
    first_copy = torch.arange(1, weights.shape[-1])[None, :] < periods[:, None]  # (B, T-1): 1 <= t < p
    return previous.permute(1, 0, 2)[:, first_copy].mean(dim=-1)  # (h,)


def induction_score(weights: Tensor, tokens: Tensor, periods: Tensor) -> Tensor:
    """Mean weight that each head puts, from a position t whose next token is a copy, on the positions s <= t
    right after an earlier occurrence of token t (tokens[s - 1] == tokens[t]): where an induction head looks.

    ``weights`` (B, h, T, T), ``tokens`` (B, T), ``periods`` (B,) -> (h,). A perfect induction head scores 1.
    """
    t = tokens.shape[1]
    previous = torch.cat([torch.full_like(tokens[:, :1], -1), tokens[:, :-1]], dim=1)  # (B, T): token s - 1
    targets = previous[:, None, :] == tokens[:, :, None]  # (B, T, T): [b, t, s] = tokens[s-1] == tokens[t]
    targets &= torch.tril(torch.ones(t, t, dtype=torch.bool))  # s <= t
    on_target = (weights * targets[:, None]).sum(dim=-1)  # (B, h, T)
    rows = torch.zeros(tokens.shape, dtype=torch.bool)
    rows[:, :-1] = _predictable(periods, t)  # (B, T): the positions whose next token is a copy
    return on_target.permute(1, 0, 2)[:, rows].mean(dim=-1)  # (h,)
