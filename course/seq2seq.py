"""Lesson 06: the three uses of attention in an encoder-decoder Transformer, and a tiny one that reverses.

The three uses are one function, :func:`course.attention.multi_head_attention`, called with different inputs
and masks (:func:`attention_use`):

- **encoder self-attention**: queries, keys and values all come from the source sequence, and every position
  may attend to every position (only padding is blocked);
- **decoder (masked) self-attention**: queries, keys and values all come from the target sequence, and
  position t may attend only to positions <= t (a causal mask, and padding);
- **cross-attention** (encoder-decoder attention): queries come from the decoder, keys and values from the
  encoder's output (the *memory*), which may have a different length; every decoder position may attend to
  every real source position (only the source's padding is blocked).

Conventions as in :mod:`course.attention`: projections multiply on the right (``Q = X @ W_Q``), a boolean
mask holds True where a query may attend to a key. The numpy functions never import torch; the tiny model
(:class:`TinySeq2Seq`, :func:`train_reversal`) does, when it is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from course.attention import causal_mask, multi_head_attention, padding_mask, scaled_dot_product_attention

if TYPE_CHECKING:
    import torch

__all__ = [
    "USES",
    "Use",
    "attention_use",
    "cross_attention",
    "decoder_attention",
    "mha_weights",
    "mirror_weight",
    "reversal_batch",
    "train_reversal",
    "use_mask",
]

Array = NDArray[np.floating]
Use = Literal["encoder self-attention", "decoder self-attention", "cross-attention"]
USES: tuple[Use, ...] = ("encoder self-attention", "decoder self-attention", "cross-attention")


# ----------------------------------------------------------------------------------------------------
# Three uses, one function


def use_mask(use: Use, t_q: int, t_k: int, key_lengths: ArrayLike | None = None) -> NDArray[np.bool_]:
    """The boolean mask (True = may attend) each use of attention needs.

    Encoder and decoder self-attention need ``t_q == t_k``; the decoder's is causal (lower triangle). Without
    ``key_lengths`` the mask is (t_q, t_k). With ``key_lengths`` (B,), the lengths of the sequences the *keys*
    come from (the source for the encoder and for cross-attention, the target for the decoder), padded keys
    are blocked too and the mask is (B, t_q, t_k). Padding is a property of keys: it never blocks a query row.
    """
    if use not in USES:
        raise ValueError(f"use must be one of {', '.join(USES)}; got {use!r}")
    if use != "cross-attention" and t_q != t_k:
        raise ValueError(f"{use} attends from a sequence to itself: t_q = {t_q} and t_k = {t_k} differ")
    causal = use == "decoder self-attention"
    mask = causal_mask(t_q) if causal else np.ones((t_q, t_k), dtype=bool)  # (t_q, t_k), True = may attend
    if key_lengths is None:
        return mask
    keys = padding_mask(key_lengths, t_k)  # (B, t_k), True at real keys
    return mask[None, :, :] & keys[:, None, :]  # (B, t_q, t_k)


def attention_use(
    use: Use,
    x_q: ArrayLike,
    x_kv: ArrayLike,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    w_o: ArrayLike,
    n_heads: int,
    *,
    key_lengths: ArrayLike | None = None,
    b_q: ArrayLike | None = None,
    b_k: ArrayLike | None = None,
    b_v: ArrayLike | None = None,
    b_o: ArrayLike | None = None,
) -> tuple[Array, Array]:
    """One of the three uses of attention: :func:`multi_head_attention` with :func:`use_mask`'s mask.

    Shapes: ``x_q`` (..., T_q, d_model), ``x_kv`` (..., T_k, d_model) (the same array for self-attention, the
    encoder's output for cross-attention); weights and biases as in :func:`multi_head_attention`;
    ``key_lengths`` (B,) for a batch ``x_kv`` of (B, T_k, d_model) with padding.
    Returns ``output`` (..., T_q, d_model) and per-head ``weights`` (..., h, T_q, T_k).
    """
    x_q, x_kv = np.asarray(x_q), np.asarray(x_kv)
    mask = use_mask(use, x_q.shape[-2], x_kv.shape[-2], key_lengths)  # (T_q, T_k) or (B, T_q, T_k)
    if mask.ndim == 3:
        mask = mask[:, None]  # (B, 1, T_q, T_k): the same for every head
    return multi_head_attention(
        x_q, x_kv, w_q, w_k, w_v, w_o, n_heads, b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o, mask=mask
    )


def cross_attention(
    x_dec: ArrayLike,
    memory: ArrayLike,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    memory_lengths: ArrayLike | None = None,
) -> tuple[Array, Array]:
    """Single-head cross-attention: queries from the decoder, keys and values from the encoder's output.

    Shapes: ``x_dec`` (B, T_dec, d_model), ``memory`` (B, T_enc, d_model), ``w_q`` and ``w_k``
    (d_model, d_k), ``w_v`` (d_model, d_v), ``memory_lengths`` (B,): how many of each memory's T_enc
    positions are real (the rest is padding, which no query may attend to). Scaled by 1/√d_k, never masked
    causally: every decoder position may see the whole source.
    Returns ``output`` (B, T_dec, d_v) and ``weights`` (B, T_dec, T_enc).
    """
    x_dec, memory = np.asarray(x_dec), np.asarray(memory)
    q = x_dec @ np.asarray(w_q)  # (B, T_dec, d_k): the decoder asks
    k = memory @ np.asarray(w_k)  # (B, T_enc, d_k): the encoder's positions answer
    v = memory @ np.asarray(w_v)  # (B, T_enc, d_v)
    mask = None
    if memory_lengths is not None:
        mask = padding_mask(memory_lengths, memory.shape[-2])[:, None, :]  # (B, 1, T_enc): keys only
    return scaled_dot_product_attention(q, k, v, mask)


def decoder_attention(
    y: ArrayLike,
    memory: ArrayLike,
    self_w: tuple[ArrayLike, ArrayLike, ArrayLike],
    cross_w: tuple[ArrayLike, ArrayLike, ArrayLike],
) -> Array:
    """The attention half of a decoder layer, single-head, with residual connections and no normalization:
    ``h = y + masked self-attention(y)``, then ``h + cross-attention(h, memory)``.

    Shapes: ``y`` (..., T_dec, d_model), ``memory`` (..., T_enc, d_model), each matrix of ``self_w`` and
    ``cross_w`` = (W_Q, W_K, W_V) (d_model, d_model). Returns (..., T_dec, d_model).
    """
    y, memory = np.asarray(y), np.asarray(memory)
    t_dec, t_enc = y.shape[-2], memory.shape[-2]
    w_q, w_k, w_v = (np.asarray(w) for w in self_w)
    h = (
        y
        + scaled_dot_product_attention(
            y @ w_q, y @ w_k, y @ w_v, use_mask("decoder self-attention", t_dec, t_dec)
        )[0]
    )
    c_q, c_k, c_v = (np.asarray(w) for w in cross_w)
    cross = scaled_dot_product_attention(
        h @ c_q, memory @ c_k, memory @ c_v, use_mask("cross-attention", t_dec, t_enc)
    )[0]  # (..., T_dec, d_model)
    out: Array = h + cross
    return out


def mha_weights(mha: Any) -> dict[str, Array]:
    """The weights of a ``torch.nn.MultiheadAttention`` (with one ``in_proj_weight``), in this course's
    layout, as float64 numpy arrays: ``w_q``, ``w_k``, ``w_v``, ``w_o`` (d_model, d_model), each the transpose
    of torch's, and ``b_q``, ``b_k``, ``b_v``, ``b_o`` (d_model,). Pass them to :func:`attention_use`."""
    d = mha.embed_dim
    w_in = mha.in_proj_weight.detach().double().numpy()  # (3·d, d): W_Q, W_K, W_V stacked, each transposed
    b_in = mha.in_proj_bias.detach().double().numpy()  # (3·d,)
    return {
        "w_q": w_in[:d].T,
        "w_k": w_in[d : 2 * d].T,
        "w_v": w_in[2 * d :].T,
        "w_o": mha.out_proj.weight.detach().double().numpy().T,
        "b_q": b_in[:d],
        "b_k": b_in[d : 2 * d],
        "b_v": b_in[2 * d :],
        "b_o": mha.out_proj.bias.detach().double().numpy(),
    }


def mirror_weight(weights: ArrayLike) -> float:
    """The mean attention weight on the mirrored position: query t on key T - 1 - t (the anti-diagonal).

    ``weights``: (..., T, T) cross-attention weights of a model that reverses sequences of length T; 1.0
    means every query puts all its weight on the source token it must copy, 1/T is what uniform weights give.
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must be (..., T, T), got shape {w.shape}")
    anti = np.flip(w, axis=-1).diagonal(axis1=-2, axis2=-1)  # (..., T): weights[..., t, T-1-t]
    return float(anti.mean())


# ----------------------------------------------------------------------------------------------------
# A tiny encoder-decoder trained to reverse sequences (torch)


def reversal_batch(
    batch: int, length: int, vocab: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random source sequences and their reversals, for teacher forcing.

    Returns ``src`` (batch, length) of tokens 0..vocab-1, ``tgt_in`` (batch, length): the start token
    ``vocab`` followed by the reversed source less its last token, and ``tgt_out`` (batch, length): the
    reversed source, what each decoder position must predict.
    """
    import torch

    src = torch.randint(0, vocab, (batch, length), generator=generator)  # (B, T)
    tgt_out = src.flip(1)  # (B, T)
    start = torch.full((batch, 1), vocab)  # (B, 1): the start token, a token of its own
    tgt_in = torch.cat([start, tgt_out[:, :-1]], dim=1)  # (B, T): shifted right by one
    return src, tgt_in, tgt_out


def _model_class() -> type[Any]:
    import torch
    from torch import nn

    class TinySeq2Seq(nn.Module):
        """Embeddings with learned positions, one encoder self-attention, one masked decoder
        self-attention and one single-head cross-attention, each with a residual connection, then a linear
        read-out. No layer normalization, no feed-forward: the smallest model that has all three uses."""

        def __init__(self, vocab: int, length: int, d_model: int, n_heads: int) -> None:
            super().__init__()
            self.vocab = vocab
            self.src_embed = nn.Embedding(vocab, d_model)
            self.tgt_embed = nn.Embedding(vocab + 1, d_model)  # + the start token
            self.src_pos = nn.Embedding(length, d_model)
            self.tgt_pos = nn.Embedding(length, d_model)
            self.encoder_attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
            self.decoder_attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
            self.cross_attn = nn.MultiheadAttention(d_model, 1, batch_first=True)
            self.readout = nn.Linear(d_model, vocab)

        def encode(self, src: torch.Tensor) -> torch.Tensor:
            """(B, T_enc) tokens -> the memory (B, T_enc, d_model)."""
            x = self.src_embed(src) + self.src_pos(torch.arange(src.shape[1]))  # (B, T_enc, d)
            memory: torch.Tensor = x + self.encoder_attn(x, x, x, need_weights=False)[0]  # all see all
            return memory

        def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            """(B, T_dec) tokens, memory -> logits (B, T_dec, vocab), cross weights (B, T_dec, T_enc)."""
            t = tgt_in.shape[1]
            y = self.tgt_embed(tgt_in) + self.tgt_pos(torch.arange(t))  # (B, T_dec, d)
            blocked = torch.ones(t, t, dtype=torch.bool).triu(1)  # True = blocked (nn.MultiheadAttention)
            y = y + self.decoder_attn(y, y, y, attn_mask=blocked, need_weights=False)[0]
            cross, weights = self.cross_attn(y, memory, memory)  # queries: decoder; keys, values: memory
            return self.readout(y + cross), weights

        def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return self.decode(tgt_in, self.encode(src))

        @torch.no_grad()
        def generate(self, src: torch.Tensor) -> torch.Tensor:
            """Autoregressive greedy decoding: (B, T) source -> (B, T) output, one token per step, each step
            fed the tokens the model itself produced so far."""
            memory = self.encode(src)  # computed once
            out = torch.full((src.shape[0], 1), self.vocab)  # (B, 1): the start token
            for _ in range(src.shape[1]):
                logits, _ = self.decode(out, memory)  # (B, t, vocab)
                out = torch.cat([out, logits[:, -1].argmax(-1, keepdim=True)], dim=1)  # append the choice
            return out[:, 1:]

    return TinySeq2Seq


def train_reversal(
    *,
    length: int = 7,
    vocab: int = 10,
    d_model: int = 32,
    n_heads: int = 2,
    steps: int = 200,
    batch: int = 64,
    lr: float = 3e-3,
    seed: int = 0,
) -> tuple[Any, list[float]]:
    """Train a tiny encoder-decoder to reverse random sequences of ``length`` tokens (teacher forcing,
    cross-entropy, Adam). Deterministic for a given ``seed`` and thread count; about a second on one core.

    Returns the model (an ``nn.Module`` with ``encode``, ``decode``, ``generate`` and ``forward(src, tgt_in)
    -> (logits (B, T, vocab), cross-attention weights (B, T_dec, T_enc))``) and the loss of every step.
    """
    import torch
    from torch.nn import functional as F

    torch.manual_seed(seed)
    model = _model_class()(vocab, length, d_model, n_heads)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    generator = torch.Generator().manual_seed(seed)
    losses: list[float] = []
    for _ in range(steps):
        src, tgt_in, tgt_out = reversal_batch(batch, length, vocab, generator)
        logits, _ = model(src, tgt_in)  # (B, T, vocab)
        loss = F.cross_entropy(logits.reshape(-1, vocab), tgt_out.reshape(-1))
        optimizer.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    return model, losses
