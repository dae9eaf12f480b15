"""Every code card of the bank: its solution passes its checker, its starter is "not written yet", and wrong
solutions written as a learner would write them each get the sentence that names their mistake.

The table WRONG holds (card id, the learner's code, the whole sentence the checker must answer). Each card has
at least two rows, each naming a different typical mistake (a few also check the hint for an overflow).
The code runs through `course.checkers.run_code`, as the notebook runs it.
"""

from __future__ import annotations

from collections import Counter

import pytest

from course.bank import Kind, Question, load_bank
from course.checkers import run_code

CARDS = {
    question.id: question
    for lesson in load_bank().lessons()
    for question in load_bank().questions(lesson)
    if question.kind == Kind.CODE
}

WRONG: list[tuple[str, str, str]] = [
    (
        "01-code-stable-softmax",
        """
def softmax(x):
    return np.exp(x - x.max(axis=-1, keepdims=True))
""",
        (
            "✗ softmax, case 1 of 5 (a vector of 4 scores): output[0] is 0.367879, expected 0.224208; "
            "the exponentials are not divided by their sum; divide each row by its own sum, so that "
            "it sums to 1."
        ),
    ),
    (
        "01-code-stable-softmax",
        """
def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()
""",
        (
            "✗ softmax, case 2 of 5 (3 rows of 4 scores): output[0, 0] is 0.0732075, expected "
            "0.467276; it divides by the sum of the whole array; divide each row by its own sum, "
            "e.sum(axis=-1, keepdims=True), so that every row sums to 1."
        ),
    ),
    (
        "01-code-stable-softmax",
        """
def softmax(x):
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)
""",
        (
            "✗ softmax, case 5 of 5 (scores near 1000 and -1000): output[0, 0] is nan, expected "
            "0.665241 (did exp overflow or underflow? subtract each row's own maximum before exp)."
        ),
    ),
    (
        "01-code-softmax-temperature",
        """
def softmax_temperature(x, temperature):
    z = x * temperature
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
        (
            "✗ softmax with temperature, case 1 of 4 (4 scores, temperature 0.5): output[0] is "
            "0.263477, expected 0.113957; the scores are multiplied by the temperature; divide them "
            "by it: softmax(x / temperature)."
        ),
    ),
    (
        "01-code-softmax-temperature",
        """
def softmax_temperature(x, temperature):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) / temperature
""",
        (
            "✗ softmax with temperature, case 1 of 4 (4 scores, temperature 0.5): output[0] is "
            "0.448416, expected 0.113957; the weights are divided by the temperature after the "
            "softmax, so they no longer sum to 1; divide the scores before it."
        ),
    ),
    (
        "01-code-softmax-temperature",
        """
def softmax_temperature(x, temperature):
    e = np.exp(x / temperature)
    return e / e.sum(axis=-1, keepdims=True)
""",
        (
            "✗ softmax with temperature, case 4 of 4 (temperature 0.01: scores / temperature near "
            "1000): output[0, 1] is nan, expected 1 (did exp overflow or underflow? subtract each "
            "row's own maximum before exp)."
        ),
    ),
    (
        "01-code-weighted-average",
        """
def attend(query, vectors):
    scores = vectors @ query
    return scores @ vectors
""",
        (
            "✗ weighted average, case 1 of 3 (4 vectors of width 3): output[0] is 1.47745, expected "
            "0.210343; the dot products themselves weight the rows; turn them into weights with a "
            "softmax first, so that they are positive and sum to 1."
        ),
    ),
    (
        "01-code-weighted-average",
        """
def attend(query, vectors):
    scores = vectors @ query / np.sqrt(len(query))
    e = np.exp(scores - scores.max())
    return e / e.sum() @ vectors
""",
        (
            "✗ weighted average, case 1 of 3 (4 vectors of width 3): output[0] is 0.0699263, expected "
            "0.210343; the dot products are divided by √d; this card's weights are the softmax of the "
            "plain dot products."
        ),
    ),
    (
        "02-code-scaled-scores",
        """
def scaled_scores(q, k):
    return q @ np.swapaxes(k, -1, -2) / q.shape[-1]
""",
        (
            "✗ scaled scores, case 1 of 3 (3 queries, 5 keys, d_k = 4): output[0, 0] is -0.00870292, "
            "expected -0.0174058; it divides by d_k; divide by its square root, √d_k."
        ),
    ),
    (
        "02-code-scaled-scores",
        """
def scaled_scores(q, k):
    return q @ np.swapaxes(k, -1, -2)
""",
        (
            "✗ scaled scores, case 1 of 3 (3 queries, 5 keys, d_k = 4): output[0, 0] is -0.0348117, "
            "expected -0.0174058; the scores are not scaled; divide q @ kᵀ by √d_k."
        ),
    ),
    (
        "02-code-attention",
        """
def attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v, weights
""",
        (
            "✗ attention, case 1 of 4 (2 queries, 3 keys, d_k = 4, d_v = 2): weights[0, 0] is "
            "0.644971, expected 0.502799; it matches attention without scaling; scale the scores by "
            "1/√d_k."
        ),
    ),
    (
        "02-code-attention",
        """
def attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights, weights @ v
""",
        (
            "✗ attention, case 1 of 4 (2 queries, 3 keys, d_k = 4, d_v = 2): your function returned "
            "(weights, output); return (output, weights), the output first."
        ),
    ),
    (
        "02-code-attention",
        """
def attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / q.shape[-1]
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v, weights
""",
        (
            "✗ attention, case 1 of 4 (2 queries, 3 keys, d_k = 4, d_v = 2): weights[0, 0] is "
            "0.419593, expected 0.502799; it matches scaling by 1/d_k; scale the scores by 1/√d_k."
        ),
    ),
    (
        "02-code-softmax-backward",
        """
def softmax_backward(p, grad_p):
    return p * grad_p
""",
        (
            "✗ softmax backward, case 1 of 3 (one row of 4 weights): output[0] is 0.0133455, expected "
            "0.00323127; it keeps only the diagonal of the Jacobian, p_i g_i; subtract the weighted "
            "mean of the gradient too: p * (g - (p * g).sum(axis=-1, keepdims=True))."
        ),
    ),
    (
        "02-code-softmax-backward",
        """
def softmax_backward(p, grad_p):
    return p * (grad_p - grad_p.sum(axis=-1, keepdims=True))
""",
        (
            "✗ softmax backward, case 1 of 3 (one row of 4 weights): output[0] is -0.0371422, "
            "expected 0.00323127; it subtracts the plain sum of the gradient; subtract its mean "
            "weighted by p, (p * g).sum(axis=-1, keepdims=True)."
        ),
    ),
    (
        "02-code-softmax-backward",
        """
def softmax_backward(p, grad_p):
    return p * (grad_p - (p * grad_p).sum())
""",
        (
            "✗ softmax backward, case 2 of 3 (3 rows of 5 weights): output[0, 0] is 0.0289811, "
            "expected 0.0222685; the weighted sum runs over the whole array; take it along each row, "
            "axis=-1, keepdims=True."
        ),
    ),
    (
        "03-code-self-attention",
        """
def self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.T / math.sqrt(x.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v, weights
""",
        (
            "✗ self-attention, case 1 of 3 (T = 4, d_model = 8, d_k = 2, d_v = 3): weights[0, 0] is "
            "0.674014, expected 0.905546; it matches scaling by 1/√d_model; scale by 1/√d_k, the "
            "width of the projected queries and keys."
        ),
    ),
    (
        "03-code-self-attention",
        """
def self_attention(x, w_q, w_k, w_v):
    q, k = x @ w_q, x @ w_k
    scores = q @ k.T / math.sqrt(k.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ x, weights
""",
        (
            "✗ self-attention, case 1 of 3 (T = 4, d_model = 8, d_k = 2, d_v = 3): the output has "
            "shape (4, 8), expected (4, 3); it averages the embeddings x themselves; the values are x "
            "@ w_v."
        ),
    ),
    (
        "03-code-self-attention",
        """
def self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_q, x @ w_v
    scores = q @ k.T / math.sqrt(k.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v, weights
""",
        (
            "✗ self-attention, case 1 of 3 (T = 4, d_model = 8, d_k = 2, d_v = 3): weights[0, 0] is "
            "0.961985, expected 0.905546; it matches keys computed with w_q; the keys are x @ w_k."
        ),
    ),
    (
        "03-code-self-attention",
        """
def self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.T / math.sqrt(k.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ v
""",
        (
            "✗ self-attention, case 1 of 3 (T = 4, d_model = 8, d_k = 2, d_v = 3): your function returned "
            "one array, not the pair (output, weights); return the attention weights too: return output, "
            "weights."
        ),
    ),
    (
        "03-code-position-code",
        """
def position_code(pos, d_model):
    angle = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
    code = np.empty(d_model)
    code[0::2], code[1::2] = np.cos(angle), np.sin(angle)
    return code
""",
        (
            "✗ position code, case 1 of 3 (pos = 3, d_model = 6): output[0] is -0.989992, expected "
            "0.14112; it matches sine and cosine swapped; the sine goes in the even columns 2i, the "
            "cosine in the odd columns 2i + 1."
        ),
    ),
    (
        "03-code-position-code",
        """
def position_code(pos, d_model):
    angle = pos / 10000 ** (np.arange(d_model // 2) / d_model)
    code = np.empty(d_model)
    code[0::2], code[1::2] = np.sin(angle), np.cos(angle)
    return code
""",
        (
            "✗ position code, case 1 of 3 (pos = 3, d_model = 6): output[2] is 0.602261, expected "
            "0.138798; it matches the exponent i/d_model for pair i; use 2i/d_model."
        ),
    ),
    (
        "03-code-position-code",
        """
def position_code(pos, d_model):
    angle = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
    return np.concatenate([np.sin(angle), np.cos(angle)])
""",
        (
            "✗ position code, case 1 of 3 (pos = 3, d_model = 6): output[1] is 0.138798, expected "
            "-0.989992; it matches all the sines first, then all the cosines; interleave them, the "
            "sine of pair i in column 2i and its cosine in column 2i + 1."
        ),
    ),
    (
        "03-code-learned-positions",
        """
def embed(tokens, token_table, position_table):
    return token_table[tokens] + position_table[tokens]
""",
        (
            "✗ learned positions, case 1 of 3 (2 sequences of 3 tokens, max_len = 8): output[0, 0, 0] "
            "is 2.60418, expected 2.86765; it looks the position table up with the token ids; look it "
            "up with the positions 0 to T - 1, position_table[:T]."
        ),
    ),
    (
        "03-code-learned-positions",
        """
def embed(tokens, token_table, position_table):
    t = tokens.shape[1]
    return token_table[tokens] + position_table[1 : t + 1]
""",
        (
            "✗ learned positions, case 1 of 3 (2 sequences of 3 tokens, max_len = 8): output[0, 0, 0] "
            "is 3.01033, expected 2.86765; it matches positions counted from 1; the first position is "
            "0, position_table[0]."
        ),
    ),
    (
        "04-code-split-heads",
        """
def split_heads(x, n_heads):
    b, t, width = x.shape
    return x.reshape(b, n_heads, t, width // n_heads)
""",
        (
            "✗ split heads, case 1 of 3 (B = 2, T = 3, 2 heads of 4): output[0, 0, 1, 0] is "
            "-0.855804, expected -1.54917; it reshapes straight to (B, h, T, d_head), which mixes "
            "positions and features; reshape to (B, T, h, d_head), then swap axes 1 and 2."
        ),
    ),
    (
        "04-code-split-heads",
        """
def split_heads(x, n_heads):
    b, t, width = x.shape
    return x.reshape(b, t, n_heads, width // n_heads)
""",
        (
            "✗ split heads, case 1 of 3 (B = 2, T = 3, 2 heads of 4): the output has shape (2, 3, 2, "
            "4), expected (2, 2, 3, 4); the head axis is still after the positions, (B, T, h, "
            "d_head); swap axes 1 and 2."
        ),
    ),
    (
        "04-code-split-heads",
        """
def split_heads(x, n_heads):
    b, t, width = x.shape
    return x.reshape(b, t, width // n_heads, n_heads).transpose(0, 3, 1, 2)
""",
        (
            "✗ split heads, case 1 of 3 (B = 2, T = 3, 2 heads of 4): output[0, 0, 0, 1] is "
            "-0.817179, expected 0.861426; head i takes every h-th feature; it takes the block of "
            "features i·d_head to (i+1)·d_head - 1: reshape to (B, T, h, d_head)."
        ),
    ),
    (
        "04-code-merge-heads",
        """
def merge_heads(x):
    b, h, t, d = x.shape
    return x.reshape(b, t, h * d)
""",
        (
            "✗ merge heads, case 1 of 3 (B = 2, 2 heads, T = 3, d_head = 4): output[0, 0, 4] is "
            "1.65699, expected -0.233248; it reshapes straight to (B, T, h·d_head), which mixes heads "
            "and positions; move the head axis after the positions first, transpose(0, 2, 1, 3)."
        ),
    ),
    (
        "04-code-merge-heads",
        """
def merge_heads(x):
    return x.sum(axis=1)
""",
        (
            "✗ merge heads, case 1 of 3 (B = 2, 2 heads, T = 3, d_head = 4): the output has shape (2, "
            "3, 4), expected (2, 3, 8); the heads are added up; they are concatenated, side by side, "
            "(B, T, h·d_head)."
        ),
    ),
    (
        "04-code-merge-heads",
        """
def merge_heads(x):
    b, h, t, d = x.shape
    return x.transpose(0, 2, 3, 1).reshape(b, t, h * d)
""",
        (
            "✗ merge heads, case 1 of 3 (B = 2, 2 heads, T = 3, d_head = 4): output[0, 0, 1] is "
            "-0.233248, expected -1.30603; the heads' features are interleaved; head i's features go "
            "side by side in the block i·d_head to (i+1)·d_head - 1: transpose(0, 2, 1, 3), then "
            "reshape."
        ),
    ),
    (
        "04-code-repeat-kv",
        """
def repeat_kv(kv, n_heads):
    return np.tile(kv, (1, n_heads // kv.shape[1], 1, 1))
""",
        (
            "✗ repeat key/value heads, case 1 of 4 (2 key/value heads for 4 query heads): output[0, "
            "1, 0, 0] is 1.86245, expected 0.755486; it repeats the key/value heads in the wrong "
            "order (np.tile gives heads 0, 1, 0, 1, …); query head i shares key/value head i // "
            "(n_heads // h_kv): np.repeat(kv, n_heads // h_kv, axis=1)."
        ),
    ),
    (
        "04-code-repeat-kv",
        """
def repeat_kv(kv, n_heads):
    return np.repeat(kv, n_heads // kv.shape[1], axis=2)
""",
        (
            "✗ repeat key/value heads, case 1 of 4 (2 key/value heads for 4 query heads): the output "
            "has shape (2, 2, 6, 2), expected (2, 4, 3, 2); it repeats along the positions, axis 2; "
            "repeat along the heads, axis 1, to (B, n_heads, T, d_head)."
        ),
    ),
    (
        "05-code-causal-mask",
        """
def causal_mask(t, s):
    return np.tril(np.ones((t, s), dtype=bool))
""",
        (
            "✗ causal mask, case 1 of 4 (t = 2, s = 5): query 0 is blocked from key 1, which it may "
            "see (mask[0, 1] should be True); it is aligned top-left, j <= i, as `is_causal=True` "
            "builds it: the queries are the last t_q positions, so query i may see keys j <= i + (t_k "
            "- t_q)."
        ),
    ),
    (
        "05-code-causal-mask",
        """
def causal_mask(t, s):
    i, j = np.arange(t)[:, None], np.arange(s)[None, :]
    return j < i + (s - t)
""",
        (
            "✗ causal mask, case 1 of 4 (t = 2, s = 5): query 0 is blocked from key 3, which it may "
            "see (mask[0, 3] should be True); each query misses its own key, one too few: query i may "
            "see keys j <= i + (t_k - t_q), the bound included."
        ),
    ),
    (
        "05-code-causal-mask",
        """
def causal_mask(t, s):
    i, j = np.arange(t)[:, None], np.arange(s)[None, :]
    return j > i + (s - t)
""",
        (
            "✗ causal mask, case 1 of 4 (t = 2, s = 5): query 0 is blocked from key 0, which it may "
            "see (mask[0, 0] should be True); the mask is inverted (True = blocked is "
            "nn.MultiheadAttention's convention); here True means may attend."
        ),
    ),
    (
        "05-code-masked-softmax",
        """
def masked_softmax(scores, mask):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) * mask
""",
        (
            "✗ masked softmax, case 1 of 5 (3 queries, 4 keys): output[0, 0] is 0.241931, expected "
            "0.505277; the weights are masked after the softmax, so they no longer sum to 1; set the "
            "blocked scores to -inf before it: np.where(mask, scores, -np.inf)."
        ),
    ),
    (
        "05-code-masked-softmax",
        """
def masked_softmax(scores, mask):
    s = scores * mask
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
        (
            "✗ masked softmax, case 1 of 5 (3 queries, 4 keys): output[0, 0] is 0.395903, expected "
            "0.505277; the scores are multiplied by the mask, which gives a blocked key the score 0, "
            "not -inf; use np.where(mask, scores, -np.inf)."
        ),
    ),
    (
        "05-code-masked-softmax",
        """
def masked_softmax(scores, mask):
    s = np.where(mask, -np.inf, scores)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
        (
            "✗ masked softmax, case 1 of 5 (3 queries, 4 keys): output[0, 0] is 0, expected 0.505277; "
            "the mask is inverted: here True means the query may attend to the key."
        ),
    ),
    (
        "05-code-masked-softmax",
        """
def masked_softmax(scores, mask):
    e = np.exp(np.where(mask, scores, -np.inf))
    return e / e.sum(axis=-1, keepdims=True)
""",
        (
            "✗ masked softmax, case 5 of 5 (scores near 1000, 3 queries, 4 keys): output[0, 0] is nan, "
            "expected 0.138946 (did exp overflow or underflow? subtract each row's own maximum before exp)."
        ),
    ),
    (
        "05-code-padding-mask",
        """
def padding_mask(lengths, t):
    return np.arange(t)[None, :] <= lengths[:, None]
""",
        (
            "✗ padding mask, case 1 of 3 (lengths 2, 4, 3, t = 4): position 2 of sequence 0 is "
            "padding (mask[0, 2] should be False); it counts one position too many: position j is "
            "real when j < lengths[b], not when j <= lengths[b]."
        ),
    ),
    (
        "05-code-padding-mask",
        """
def padding_mask(lengths, t):
    return np.arange(t)[:, None] < lengths[None, :]
""",
        (
            "✗ padding mask, case 1 of 3 (lengths 2, 4, 3, t = 4): the output has shape (4, 3), "
            "expected (3, 4); the mask is transposed: it has one row per sequence and one column per "
            "position, (B, t), True where j < lengths[b]."
        ),
    ),
    (
        "05-code-padding-mask",
        """
def padding_mask(lengths, t):
    return np.arange(t)[None, :] >= lengths[:, None]
""",
        (
            "✗ padding mask, case 1 of 3 (lengths 2, 4, 3, t = 4): position 0 of sequence 0 is a real "
            "token (mask[0, 0] should be True); the mask is inverted; here True marks a real token."
        ),
    ),
    (
        "06-code-cross-attention",
        """
def cross_attention(x_dec, memory, w_q, w_k, w_v):
    q, k, v = memory @ w_q, x_dec @ w_k, x_dec @ w_v
    scores = q @ k.T / math.sqrt(q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v, weights
""",
        (
            "✗ cross-attention, case 1 of 3 (3 decoder positions, 5 encoder positions): the output "
            "has shape (5, 4), expected (3, 4); it matches taking the queries from the encoder "
            "(memory @ w_q); in cross-attention the queries come from the decoder, x_dec @ w_q, and "
            "only the keys and values from memory."
        ),
    ),
    (
        "06-code-cross-attention",
        """
def cross_attention(x_dec, memory, w_q, w_k, w_v):
    q, k, v = x_dec @ w_q, x_dec @ w_k, x_dec @ w_v
    scores = q @ k.T / math.sqrt(q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v, weights
""",
        (
            "✗ cross-attention, case 1 of 3 (3 decoder positions, 5 encoder positions): the weights "
            "have shape (3, 3), expected (3, 5); it matches taking the keys and values from the "
            "decoder; in cross-attention they come from memory, the encoder's output."
        ),
    ),
    (
        "06-code-cross-attention",
        """
def cross_attention(x_dec, memory, w_q, w_k, w_v):
    q, k, v = x_dec @ w_q, memory @ w_k, memory @ w_v
    scores = q @ k.T / math.sqrt(x_dec.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v, weights
""",
        (
            "✗ cross-attention, case 1 of 3 (3 decoder positions, 5 encoder positions): weights[0, 0] "
            "is 0.647107, expected 0.815232; it matches scaling by 1/√d_model; scale by 1/√d_k, the "
            "width of the queries and keys."
        ),
    ),
    (
        "06-code-cross-attention",
        """
def cross_attention(x_dec, memory, w_q, w_k, w_v):
    q, k, v = x_dec @ w_q, memory @ w_k, memory @ w_v
    scores = q @ k.T / math.sqrt(q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v
""",
        (
            "✗ cross-attention, case 1 of 3 (3 decoder positions, 5 encoder positions): your function "
            "returned one array, not the pair (output, weights); return the attention weights too: return "
            "output, weights."
        ),
    ),
    (
        "06-code-use-mask-padded",
        """
def use_mask(use, t_q, t_k, key_lengths):
    real = np.arange(t_k)[None, None, :] < key_lengths[:, None, None]
    if use == "encoder":
        return np.ones((t_q, t_k), dtype=bool) & real
    return np.tril(np.ones((t_q, t_k), dtype=bool)) & real
""",
        (
            '✗ mask of each use, case 3 of 5 ("cross", t_q = 3, t_k = 5, key lengths 5, 2): query 0 of '
            "sequence 0 is blocked from key 1, which it may see (mask[0, 0, 1] should be True); "
            "cross-attention gets a causal mask; the whole source is known before decoding starts, so every "
            "decoder position may attend to every real source position."
        ),
    ),
    (
        "06-code-use-mask-padded",
        """
def use_mask(use, t_q, t_k, key_lengths):
    real = np.arange(t_k)[None, None, :] < key_lengths[:, None, None]
    allowed = np.ones((t_q, t_k), dtype=bool)
    if use != "cross":
        allowed = np.tril(allowed)
    return allowed & real
""",
        (
            '✗ mask of each use, case 1 of 5 ("encoder", t_q = 4, t_k = 4, key lengths 4, 2): query 0 of '
            "sequence 0 is blocked from key 1, which it may see (mask[0, 0, 1] should be True); the "
            "encoder's self-attention gets a causal mask; an encoder reads its whole input, both ways."
        ),
    ),
    (
        "06-code-use-mask-padded",
        """
def use_mask(use, t_q, t_k, key_lengths):
    real = np.arange(t_k)[None, None, :] < key_lengths[:, None, None]
    allowed = np.ones((t_q, t_k), dtype=bool)
    if use == "decoder":
        allowed = np.triu(allowed)
    return allowed & real
""",
        (
            '✗ mask of each use, case 2 of 5 ("decoder", t_q = 4, t_k = 4, key lengths 3, 4): query 0 of '
            "sequence 0 may attend to key 1, which it must not see (mask[0, 0, 1] should be False); the "
            "decoder's mask is the upper triangle, j >= i, the future; keep the lower one, j <= i."
        ),
    ),
    (
        "06-code-use-mask-padded",
        """
def use_mask(use, t_q, t_k, key_lengths):
    real = np.arange(t_q)[None, :, None] < key_lengths[:, None, None]
    allowed = np.ones((t_q, t_k), dtype=bool)
    if use == "decoder":
        allowed = np.tril(allowed)
    return allowed & real
""",
        (
            '✗ mask of each use, case 1 of 5 ("encoder", t_q = 4, t_k = 4, key lengths 4, 2): query 0 of '
            "sequence 1 may attend to key 2, which it must not see (mask[1, 0, 2] should be False); the "
            "padding is applied on the query axis; key_lengths bounds the keys j, the last axis: "
            "real[:, None, :]."
        ),
    ),
    (
        "06-code-use-mask-padded",
        """
def use_mask(use, t_q, t_k, key_lengths):
    pad = np.arange(t_k)[None, None, :] >= key_lengths[:, None, None]
    allowed = np.ones((t_q, t_k), dtype=bool)
    if use == "decoder":
        allowed = np.tril(allowed)
    return allowed & pad
""",
        (
            '✗ mask of each use, case 1 of 5 ("encoder", t_q = 4, t_k = 4, key lengths 4, 2): query 0 of '
            "sequence 0 is blocked from key 0, which it may see (mask[0, 0, 0] should be True); the padding "
            "mask is inverted: it keeps the padded keys and blocks the real ones; key j is real when "
            "j < key_lengths[b]."
        ),
    ),
    (
        "06-code-use-mask-padded",
        """
def use_mask(use, t_q, t_k, key_lengths):
    allowed = np.ones((len(key_lengths), t_q, t_k), dtype=bool)
    if use == "decoder":
        allowed = np.tril(allowed)
    return allowed
""",
        (
            '✗ mask of each use, case 1 of 5 ("encoder", t_q = 4, t_k = 4, key lengths 4, 2): query 0 of '
            "sequence 1 may attend to key 2, which it must not see (mask[1, 0, 2] should be False); the "
            "padding is missing: block the keys j >= key_lengths[b] of each sequence, in every use."
        ),
    ),
    (
        "06-code-decoder-mask",
        """
def decoder_mask(lengths, t):
    causal = np.tril(np.ones((t, t), dtype=bool))
    real = np.arange(t)[None, :] < lengths[:, None]
    return causal[None, :, :] & real[:, :, None]
""",
        (
            "✗ decoder mask, case 1 of 3 (lengths 2, 4, t = 4): query 2 of sequence 0 is blocked from "
            "key 0, which it may see (mask[0, 2, 0] should be True); the padding is applied on the "
            "query axis; padding is a property of the keys: lengths[b] bounds j, the last axis, "
            "mask[:, None, :]."
        ),
    ),
    (
        "06-code-decoder-mask",
        """
def decoder_mask(lengths, t):
    real = np.arange(t)[None, :] < lengths[:, None]
    return np.broadcast_to(real[:, None, :], (len(lengths), t, t))
""",
        (
            "✗ decoder mask, case 1 of 3 (lengths 2, 4, t = 4): query 0 of sequence 0 may attend to "
            "key 1, which it must not see (mask[0, 0, 1] should be False); the causal part is "
            "missing: query i sees keys j <= i that are real."
        ),
    ),
    (
        "06-code-decoder-mask",
        """
def decoder_mask(lengths, t):
    return np.tril(np.ones((t, t), dtype=bool))
""",
        (
            "✗ decoder mask, case 1 of 3 (lengths 2, 4, t = 4): the output has shape (4, 4), expected "
            "(2, 4, 4); the padding is missing: one (t, t) causal mask for all; block the keys j >= "
            "lengths[b] of each sequence, (B, t, t)."
        ),
    ),
    (
        "07-code-layer-norm",
        """
def layer_norm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True, ddof=1)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta
""",
        (
            "✗ layer norm, case 1 of 3 (3 positions, d = 4): output[0, 0] is -0.0751272, expected "
            "-0.172318; it uses the unbiased variance (divided by d - 1); LayerNorm divides by d "
            "(np.var's default, ddof=0)."
        ),
    ),
    (
        "07-code-layer-norm",
        """
def layer_norm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / (var + eps) * gamma + beta
""",
        (
            "✗ layer norm, case 1 of 3 (3 positions, d = 4): output[0, 0] is 0.0850396, expected "
            "-0.172318; it divides by the variance; divide by its square root, sqrt(var + eps), the "
            "standard deviation."
        ),
    ),
    (
        "07-code-layer-norm",
        """
def layer_norm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * beta + gamma
""",
        (
            "✗ layer norm, case 1 of 3 (3 positions, d = 4): output[0, 0] is 0.558395, expected "
            "-0.172318; gamma and beta are swapped: multiply by gamma (the scale), then add beta (the "
            "shift)."
        ),
    ),
    (
        "07-code-layer-norm",
        """
def layer_norm(x, gamma, beta, eps):
    mean = x.mean(axis=0)
    var = x.var(axis=0)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta
""",
        (
            "✗ layer norm, case 1 of 3 (3 positions, d = 4): output[0, 0] is -0.642765, expected "
            "-0.172318; it normalizes over the wrong axis; normalize each position over its d "
            "features, axis=-1, keepdims=True."
        ),
    ),
    (
        "07-code-pre-ln-stack",
        """
def pre_ln_stack(x, sublayers, norms, final_norm):
    for sublayer, norm in zip(sublayers, norms):
        x = x + sublayer(norm(x))
    return x
""",
        (
            "✗ pre-LN stack, case 1 of 2 (2 sublayers, 4 positions, d = 3): output[0, 0] is 0.447988, "
            "expected -0.173946; the final LayerNorm is missing: a pre-LN stack ends with a residual "
            "addition, so it applies final_norm once, after the last sublayer."
        ),
    ),
    (
        "07-code-pre-ln-stack",
        """
def pre_ln_stack(x, sublayers, norms, final_norm):
    for sublayer, norm in zip(sublayers, norms):
        x = norm(x) + sublayer(norm(x))
    return final_norm(x)
""",
        (
            "✗ pre-LN stack, case 1 of 2 (2 sublayers, 4 positions, d = 3): output[0, 0] is 1.19364, "
            "expected -0.173946; the residual carries norm(x); it carries x itself, unnormalized: x + "
            "sublayer(norm(x)) at each step."
        ),
    ),
    (
        "07-code-pre-ln-stack",
        """
def pre_ln_stack(x, sublayers, norms, final_norm):
    for sublayer, norm in zip(sublayers, norms):
        x = final_norm(x + sublayer(norm(x)))
    return x
""",
        (
            "✗ pre-LN stack, case 1 of 2 (2 sublayers, 4 positions, d = 3): output[0, 0] is 0.357324, "
            "expected -0.173946; it applies final_norm after every sublayer; it comes once, after the last "
            "one (the residual path is never normalized in between)."
        ),
    ),
    (
        "07-code-feed-forward",
        """
def feed_forward(x, w1, b1, w2, b2):
    return (x @ w1 + b1) @ w2 + b2
""",
        (
            "✗ feed-forward, case 1 of 2 (3 positions, d_model = 4, d_ff = 8): output[0, 0] is "
            "-4.27572, expected -2.67588; the ReLU is missing: max(0, x @ w1 + b1) before the second "
            "layer."
        ),
    ),
    (
        "07-code-feed-forward",
        """
def feed_forward(x, w1, b1, w2, b2):
    h = np.maximum(0, x @ w1 + b1)
    return np.maximum(0, h @ w2 + b2)
""",
        (
            "✗ feed-forward, case 1 of 2 (3 positions, d_model = 4, d_ff = 8): output[0, 0] is 0, "
            "expected -2.67588; the ReLU is applied after the second layer too; the output, h @ w2 + "
            "b2, may be negative."
        ),
    ),
    (
        "07-code-feed-forward",
        """
def feed_forward(x, w1, b1, w2, b2):
    h = np.maximum(0, x @ w1) + b1
    return h @ w2 + b2
""",
        (
            "✗ feed-forward, case 1 of 2 (3 positions, d_model = 4, d_ff = 8): output[0, 0] is "
            "-2.83363, expected -2.67588; the ReLU is applied before b1 is added; add the bias first: "
            "np.maximum(0, x @ w1 + b1)."
        ),
    ),
    (
        "08-code-online-softmax",
        """
def online_update(m, l, acc, s, v):
    m_new = np.maximum(m, s.max(axis=-1))
    scale = np.exp(m - m_new)
    p = np.exp(s - m_new[:, None])
    return m_new, l + p.sum(axis=-1), acc * scale[:, None] + p @ v
""",
        (
            "✗ online softmax update, case 1 of 3 (3 queries, a block of 3 keys after a first block): "
            "l[0] is 2.74225, expected 1.36483; the running sum of exp(s - m) is not rescaled: "
            "multiply it by exp(m_old - m_new) whenever the maximum grows, as the accumulated output "
            "is."
        ),
    ),
    (
        "08-code-online-softmax",
        """
def online_update(m, l, acc, s, v):
    m_new = np.maximum(m, s.max(axis=-1))
    scale = np.exp(m - m_new)
    p = np.exp(s - m_new[:, None])
    return m_new, l * scale + p.sum(axis=-1), acc + p @ v
""",
        (
            "✗ online softmax update, case 1 of 3 (3 queries, a block of 3 keys after a first block): "
            "acc[0, 0] is 0.231832, expected -0.915679; the accumulated output is not rescaled: "
            "multiply it by exp(m_old - m_new) whenever the maximum grows, as the running sum is."
        ),
    ),
    (
        "08-code-online-softmax",
        """
def online_update(m, l, acc, s, v):
    m_new = s.max(axis=-1)
    scale = np.exp(m - m_new)
    p = np.exp(s - m_new[:, None])
    return m_new, l * scale + p.sum(axis=-1), acc * scale[:, None] + p @ v
""",
        (
            "✗ online softmax update, case 1 of 3 (3 queries, a block of 3 keys after a first block): "
            "m[1] is -1.64061, expected 0.461323; the new maximum is the block's own; it is the "
            "larger of the running maximum and the block's, np.maximum(m, s.max(axis=-1))."
        ),
    ),
    (
        "08-code-online-softmax",
        """
def online_update(m, l, acc, s, v):
    m_new = np.maximum(m, s.max(axis=-1))
    p = np.exp(s - m_new[:, None])
    return m_new, l + p.sum(axis=-1)
""",
        (
            "✗ online softmax update, case 1 of 3 (3 queries, a block of 3 keys after a first block): "
            "return three arrays, (m, l, acc): the new running maximum, sum and accumulated output."
        ),
    ),
    (
        "08-code-sliding-window",
        """
def window_mask(n, window):
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    return (j <= i) & (j >= i - window)
""",
        (
            "✗ sliding-window mask, case 1 of 4 (n = 6, window = 3): query 3 may attend to key 0, "
            "which it must not see (mask[3, 0] should be False); the window holds window + 1 keys, "
            "one too many: query i sees keys i - window < j <= i."
        ),
    ),
    (
        "08-code-sliding-window",
        """
def window_mask(n, window):
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    return np.abs(i - j) < window
""",
        (
            "✗ sliding-window mask, case 1 of 4 (n = 6, window = 3): query 0 may attend to key 1, "
            "which it must not see (mask[0, 1] should be False); the band is symmetric, so each query "
            "also sees the next keys, its future; keep only j <= i."
        ),
    ),
    (
        "08-code-sliding-window",
        """
def window_mask(n, window):
    return np.tril(np.ones((n, n), dtype=bool))
""",
        (
            "✗ sliding-window mask, case 1 of 4 (n = 6, window = 3): query 3 may attend to key 0, "
            "which it must not see (mask[3, 0] should be False); it is the plain causal mask: every "
            "past key is allowed; keep only the last `window` keys."
        ),
    ),
    (
        "08-code-linear-attention",
        """
def linear_attention(q, k, v):
    return q @ (k.T @ v) / (q @ k.sum(axis=0))[:, None]
""",
        (
            "✗ linear attention, case 1 of 4 (4 queries, 5 keys, d_k = 3, d_v = 2): output[0, 0] is "
            "0.893562, expected -0.567938; it uses q and k themselves; apply the feature map φ(x) = "
            "elu(x) + 1 to both first, so that every weight is positive."
        ),
    ),
    (
        "08-code-linear-attention",
        """
def linear_attention(q, k, v):
    fq = np.where(q > 0, q + 1, np.exp(q))
    fk = np.where(k > 0, k + 1, np.exp(k))
    return fq @ (fk.T @ v)
""",
        (
            "✗ linear attention, case 1 of 4 (4 queries, 5 keys, d_k = 3, d_v = 2): output[0, 0] is "
            "-3.84643, expected -0.567938; the numerator is not divided by φ(q_i) · Σ_j φ(k_j), so "
            "the weights do not sum to 1."
        ),
    ),
    (
        "08-code-linear-attention",
        """
def linear_attention(q, k, v):
    fq = np.where(q > 0, q, np.exp(q) - 1)
    fk = np.where(k > 0, k, np.exp(k) - 1)
    return fq @ (fk.T @ v) / (fq @ fk.sum(axis=0))[:, None]
""",
        (
            "✗ linear attention, case 1 of 4 (4 queries, 5 keys, d_k = 3, d_v = 2): output[0, 0] is "
            "-2.77953, expected -0.567938; it uses elu(x) without the + 1, which can be negative; "
            "φ(x) = elu(x) + 1 is always positive."
        ),
    ),
    (
        "08-code-linear-attention",
        """
def linear_attention(q, k, v):
    fq = np.where(q > 0, q + 1, np.exp(np.minimum(q, 0)))
    fk = np.where(k > 0, k + 1, np.exp(np.minimum(k, 0)))
    weights = fq @ fk.T
    return weights / weights.sum(axis=-1, keepdims=True) @ v
""",
        (
            "✗ linear attention, case 4 of 4 (600 queries, 800 keys, d_k = 4, d_v = 3): the values are "
            "right, but at its peak your function holds as much memory as the whole (600, 800) matrix φ(q) "
            "φ(k)ᵀ would in float32, or more; linear attention never builds it: compute φ(k)ᵀ v, (d_k, "
            "d_v), and φ(k).sum(axis=0), (d_k,), once, then multiply φ(q) by them."
        ),
    ),
    (
        "02-code-attention",
        """
def attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True) / math.sqrt(q.shape[-1])
    return weights @ v, weights
""",
        (
            "✗ attention, case 1 of 4 (2 queries, 3 keys, d_k = 4, d_v = 2): the weights of query 0 sum to "
            "0.5, expected 1; it matches dividing the weights by √d_k after the softmax; scale the scores "
            "before it."
        ),
    ),
    (
        "02-code-attention",
        """
def attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v
""",
        (
            "✗ attention, case 1 of 4 (2 queries, 3 keys, d_k = 4, d_v = 2): your function returned one "
            "array, not the pair (output, weights); return the attention weights too: return output, weights."
        ),
    ),
    (
        "03-code-position-code",
        """
def position_code(pos, d_model):
    angle = (pos + 1) / 10000 ** (np.arange(0, d_model, 2) / d_model)
    code = np.empty(d_model)
    code[0::2], code[1::2] = np.sin(angle), np.cos(angle)
    return code
""",
        (
            "✗ position code, case 1 of 3 (pos = 3, d_model = 6): output[0] is -0.756802, expected 0.14112; "
            "it matches positions counted from 1; the first position is 0, whose row holds sin 0 = 0 and "
            "cos 0 = 1 in every pair."
        ),
    ),
    (
        "05-code-causal-mask",
        """
def causal_mask(t, s):
    i = np.arange(t)[:, None]
    j = np.arange(s)[None, :]
    return (j <= i + (s - t)).T
""",
        (
            "✗ causal mask, case 1 of 4 (t = 2, s = 5): the output has shape (5, 2), expected (2, 5); the "
            "mask is transposed: rows are the t_q queries and columns the t_k keys, shape (t_q, t_k)."
        ),
    ),
    (
        "07-code-layer-norm",
        """
def layer_norm(x, gamma, beta, eps):
    var = x.var(axis=-1, keepdims=True)
    return x / np.sqrt(var + eps) * gamma + beta
""",
        (
            "✗ layer norm, case 1 of 3 (3 positions, d = 4): output[0, 0] is 0.292707, expected -0.172318; "
            "it does not subtract the mean: normalize x - mean, then divide by sqrt(var + eps)."
        ),
    ),
    (
        "09-code-lm-loss",
        """
def lm_loss(logits, tokens):
    z = logits - logits.max(axis=-1, keepdims=True)
    log_probs = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return -log_probs[np.arange(len(tokens)), tokens].mean()
""",
        (
            "✗ language-model loss, case 1 of 3 (6 positions, a vocabulary of 5): the output is "
            "1.77756, expected 1.16713; each position is scored on its own token; it predicts the "
            "next one: score logits[:-1] against tokens[1:]."
        ),
    ),
    (
        "09-code-lm-loss",
        """
def lm_loss(logits, tokens):
    z = logits[1:] - logits[1:].max(axis=-1, keepdims=True)
    log_probs = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return -log_probs[np.arange(len(tokens) - 1), tokens[:-1]].mean()
""",
        (
            "✗ language-model loss, case 1 of 3 (6 positions, a vocabulary of 5): the output is "
            "1.81299, expected 1.16713; the shift goes the wrong way: position t predicts token t + "
            "1, so pair logits[:-1] with tokens[1:]."
        ),
    ),
    (
        "09-code-lm-loss",
        """
def lm_loss(logits, tokens):
    return -logits[np.arange(len(tokens) - 1), tokens[1:]].mean()
""",
        (
            "✗ language-model loss, case 1 of 3 (6 positions, a vocabulary of 5): the output is "
            "-0.608931, expected 1.16713; it uses the raw logits as log-probabilities; normalise them "
            "first: log softmax(logits) = logits - logsumexp(logits)."
        ),
    ),
    (
        "09-code-lm-loss",
        """
def lm_loss(logits, tokens):
    z = logits[:-1] - logits[:-1].max(axis=-1, keepdims=True)
    log_probs = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return -log_probs[np.arange(len(tokens) - 1), tokens[1:]].sum()
""",
        (
            "✗ language-model loss, case 1 of 3 (6 positions, a vocabulary of 5): the output is "
            "5.83566, expected 1.16713; it sums over the positions; the loss is their mean, in nats "
            "per token."
        ),
    ),
    (
        "09-code-lm-loss",
        """
def lm_loss(logits, tokens):
    e = np.exp(logits[:-1])
    probs = e / e.sum(axis=-1, keepdims=True)
    return -np.log(probs[np.arange(len(tokens) - 1), tokens[1:]]).mean()
""",
        (
            "✗ language-model loss, case 3 of 3 (5 positions, a vocabulary of 6, logits near 1000): the "
            "output is nan, expected 2.93337 (did exp overflow, or underflow to 0, whose log is -inf? "
            "subtract each row's own maximum m before exp and add m back after the log)."
        ),
    ),
    (
        "09-code-bigram",
        """
def bigram_probs(ids, vocab):
    counts = np.zeros((vocab, vocab))
    np.add.at(counts, (ids[1:], ids[:-1]), 1)
    counts += 1
    return counts / counts.sum(axis=1, keepdims=True)
""",
        (
            "✗ bigram table, case 1 of 2 (12 tokens of a vocabulary of 4): output[0, 1] is 0.333333, "
            "expected 0.166667; the table is transposed: row a must hold the counts of what follows "
            "a, counts[ids[:-1], ids[1:]]."
        ),
    ),
    (
        "09-code-bigram",
        """
def bigram_probs(ids, vocab):
    counts = np.zeros((vocab, vocab))
    np.add.at(counts, (ids[:-1], ids[1:]), 1)
    return counts / counts.sum(axis=1, keepdims=True)
""",
        (
            "✗ bigram table, case 1 of 2 (12 tokens of a vocabulary of 4): output[0, 0] is 0.5, "
            "expected 0.333333; a pair never seen gets probability 0 (and a character never followed "
            "by anything a row of NaN): add 1 to every count before normalising."
        ),
    ),
    (
        "09-code-bigram",
        """
def bigram_probs(ids, vocab):
    counts = np.ones((vocab, vocab))
    np.add.at(counts, (ids[:-1], ids[1:]), 1)
    return counts / counts.sum()
""",
        (
            "✗ bigram table, case 1 of 2 (12 tokens of a vocabulary of 4): output[0, 0] is 0.0740741, "
            "expected 0.333333; it divides by the sum of the whole table; divide each row by its own "
            "sum, so that p(. | a) sums to 1."
        ),
    ),
    (
        "09-code-bigram",
        """
def bigram_probs(ids, vocab):
    counts = np.zeros((vocab, vocab))
    counts[ids[:-1], ids[1:]] += 1
    counts += 1
    return counts / counts.sum(axis=1, keepdims=True)
""",
        (
            "✗ bigram table, case 1 of 2 (12 tokens of a vocabulary of 4): output[1, 0] is 0.25, expected "
            "0.222222; a pair that occurs more than once is counted once: counts[a, b] += 1 with index "
            "arrays adds 1 once per distinct pair; np.add.at(counts, (ids[:-1], ids[1:]), 1) counts every "
            "occurrence."
        ),
    ),
    (
        "09-code-lr-schedule",
        """
def lr_at(step, peak, warmup, total, floor):
    if step < warmup:
        return peak * step / warmup
    progress = min(1.0, (step - warmup) / (total - warmup))
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))
""",
        (
            "✗ learning-rate schedule, case 1 of 2 (peak 1e-2, 4 warm-up steps, 12 in all, floor "
            "0.1): output[0] is 0, expected 0.0025; the warm-up starts at 0 at step 0, a step that "
            "trains nothing; start at peak / warmup: peak * (step + 1) / warmup."
        ),
    ),
    (
        "09-code-lr-schedule",
        """
def lr_at(step, peak, warmup, total, floor):
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / (total - warmup))
    return peak * 0.5 * (1 + math.cos(math.pi * progress))
""",
        (
            "✗ learning-rate schedule, case 1 of 2 (peak 1e-2, 4 warm-up steps, 12 in all, floor "
            "0.1): output[5] is 0.0096194, expected 0.00965746; the cosine decays to 0; it ends at "
            "floor * peak: peak * (floor + (1 - floor) * cosine term)."
        ),
    ),
    (
        "09-code-lr-schedule",
        """
def lr_at(step, peak, warmup, total, floor):
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, step / total)
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))
""",
        (
            "✗ learning-rate schedule, case 1 of 2 (peak 1e-2, 4 warm-up steps, 12 in all, floor "
            "0.1): output[4] is 0.00775, expected 0.01; the cosine is measured from step 0; it starts "
            "after the warm-up: progress = (step - warmup) / (total - warmup)."
        ),
    ),
]


def _card(card_id: str) -> Question:
    return CARDS[card_id]


def test_every_lesson_01_to_09_has_three_code_cards_or_more() -> None:
    per_lesson = Counter(card_id[:2] for card_id in CARDS)
    assert all(
        per_lesson[lesson] >= 3 for lesson in ("01", "02", "03", "04", "05", "06", "07", "08", "09")
    ), per_lesson
    assert all(card_id.split("-")[1] == "code" for card_id in CARDS)


def test_every_card_has_two_wrong_variants_and_every_variant_a_card() -> None:
    variants = Counter(card_id for card_id, _, _ in WRONG)
    assert set(variants) == set(CARDS)
    assert min(variants.values()) >= 2, variants


@pytest.mark.parametrize("card_id", sorted(CARDS))
def test_the_solution_passes(card_id: str) -> None:
    card = _card(card_id)
    assert card.solution and card.function and card.checker
    verdict = run_code(card.solution, card.function, card.checker)
    assert verdict.ok, verdict.sentence
    assert verdict.sentence.startswith("✓ ") and verdict.sentence.endswith(" cases pass.")


@pytest.mark.parametrize("card_id", sorted(CARDS))
def test_the_starter_is_not_written_yet(card_id: str) -> None:
    card = _card(card_id)
    assert card.starter and card.function and card.checker
    verdict = run_code(card.starter, card.function, card.checker)
    assert not verdict.ok
    assert verdict.sentence.startswith("· ") and ": not written yet." in verdict.sentence


@pytest.mark.parametrize(
    ("card_id", "code", "sentence"), WRONG, ids=[f"{row[0]}-{i}" for i, row in enumerate(WRONG)]
)
def test_a_wrong_solution_gets_its_named_mistake(card_id: str, code: str, sentence: str) -> None:
    card = _card(card_id)
    assert card.function and card.checker
    verdict = run_code(code, card.function, card.checker)
    assert not verdict.ok
    assert verdict.sentence == sentence


@pytest.mark.parametrize("card_id", sorted(CARDS))
def test_the_wrong_variants_of_a_card_name_different_mistakes(card_id: str) -> None:
    sentences = [sentence for other, _, sentence in WRONG if other == card_id]
    explanations = {sentence.split("; ", 1)[-1] if "; " in sentence else sentence for sentence in sentences}
    assert len(explanations) == len(sentences), sentences
