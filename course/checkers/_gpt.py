"""Checkers for lesson 09: generation with the key/value cache, nucleus (top-p) sampling, and the exact
number of parameters of a GPT; then the lesson's code cards (``check_card_lm_loss``, ``check_card_bigram``,
``check_card_lr_schedule``).

torch is imported inside the checkers that need it, so that importing ``course.checkers`` never imports it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.checkers._engine import Case, CheckResult, Problem, check_case, run_cases
from course.checkers._softmax import LSE_STABLE_HINT

__all__ = [
    "GEN_ARGMAX",
    "GEN_FIRST_POSITION",
    "GEN_NEW_ONLY",
    "GEN_NO_CACHE",
    "GEN_NO_TEMPERATURE",
    "GEN_RECOMPUTES",
    "GEN_RESTARTS",
    "GEN_TIMES_TEMPERATURE",
    "PC_ATTENTION_3",
    "PC_NO_BIASES",
    "PC_NO_FFN_BIASES",
    "PC_NO_FINAL_NORM",
    "PC_NO_NORMS",
    "PC_NO_POSITIONS",
    "PC_OUTPUT_BIAS",
    "PC_TIED_TWICE",
    "TOPP_ASCENDING",
    "TOPP_DROPS_CROSSING",
    "TOPP_ONE_TOO_MANY",
    "TOPP_SORTED",
    "TOPP_UNNORMALISED",
    "check_card_bigram",
    "check_card_lm_loss",
    "check_card_lr_schedule",
    "check_generate_cached",
    "check_parameter_count",
    "check_top_p",
]

Array = NDArray[Any]

# ----------------------------------------------------------------------------------------------------
# Exercise 1: the generation loop with the key/value cache

GEN_NO_TEMPERATURE = (
    "the logits are not divided by the temperature: sample from softmax(logits / temperature)"
)
GEN_TIMES_TEMPERATURE = (
    "the logits are multiplied by the temperature; divide them by it: logits / temperature"
)
GEN_ARGMAX = (
    "it takes the most probable token every time; draw it from the distribution with "
    "torch.multinomial(probs, 1, generator=generator)"
)
GEN_FIRST_POSITION = (
    "the first new token was drawn from the logits of the prompt's first position; it comes from the last "
    "one's, logits[0, -1]"
)
GEN_NEW_ONLY = (
    "return the prompt followed by the new tokens, (len(prompt) + n_new,), not the new tokens alone"
)
GEN_RECOMPUTES = (
    "after the prompt, feed model.decode only the newest token, (1, 1): the cache already holds the keys and "
    "values of all the others"
)
GEN_RESTARTS = (
    "a call of model.decode after the first one was given no cache, so the positions start again at 0: pass "
    "the cache that the previous call returned"
)
GEN_NO_CACHE = (
    "the tokens are right, but they were computed by running the whole sequence through model(...) at every "
    "step; use model.decode(tokens, cache) and its cache"
)


class _Watched:
    """A :class:`course.gpt.GPT` that records how the learner calls it: ``decode`` calls as (T_new, whether
    a cache was given), and ``forward`` calls."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.config = model.config
        self.decodes: list[tuple[int, bool]] = []
        self.forwards = 0

    def decode(self, tokens: Any, cache: Any = None) -> Any:
        self.decodes.append((int(tokens.shape[-1]), bool(cache)))
        return self.model.decode(tokens, cache)

    def __call__(self, tokens: Any) -> Any:
        self.forwards += 1
        return self.model(tokens)

    def forward(self, tokens: Any) -> Any:
        return self(tokens)

    def eval(self) -> _Watched:
        self.model.eval()
        return self

    def parameters(self) -> Any:
        return self.model.parameters()


def _generation_model() -> Any:
    """A small random GPT whose next-token distributions are far from uniform (weights 20 times GPT-2's
    initial scale), so that the temperature and the sampling matter."""
    import torch

    from course.gpt import GPT, GPTConfig

    torch.manual_seed(909)
    model = GPT(GPTConfig(vocab=12, context=16, d_model=16, n_heads=2, n_layers=2, d_ff=32)).double()
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() >= 2:
                parameter.normal_(0.0, 0.4)
    return model.eval()


def _variant_tokens(model: Any, prompt: Any, n_new: int, temperature: float, seed: int, bug: str) -> Array:
    """What a learner's loop with ``bug`` returns (uncached, which gives the same tokens)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    tokens = prompt.tolist()
    new = []
    with torch.no_grad():
        for step in range(n_new):
            logits, _ = model(torch.tensor([tokens]))
            row = logits[0, 0 if bug == "first" and step == 0 else -1]
            scaled = {"no temperature": row, "times": row * temperature}.get(bug, row / temperature)
            probs = torch.softmax(scaled, dim=-1)
            token = (
                int(probs.argmax())
                if bug == "argmax"
                else int(torch.multinomial(probs, 1, generator=generator))
            )
            tokens.append(token)
            new.append(token)
    return np.array(new if bug == "new only" else tokens)


@dataclass(frozen=True)
class _GenSpec:
    name: str
    prompt: tuple[int, ...]
    n_new: int
    temperature: float
    seed: int


def check_generate_cached(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(model, prompt, n_new, temperature, generator)``: ``prompt`` (T,) int64 tokens followed by
    ``n_new`` tokens sampled one at a time, (T + n_new,), each drawn with ``torch.multinomial(probs, 1,
    generator=generator)`` from softmax(logits / temperature) of the last position, the model run through
    ``model.decode(tokens, cache)``: the prompt once, then each new token alone with the cache.

    The tokens must equal those of ``course.gpt.generate`` with the same seed, and the calls must use the
    cache (the checker watches them)."""
    import torch

    from course.gpt import generate

    model = _generation_model()
    specs = [
        _GenSpec("a prompt of 3 tokens, 8 new, temperature 1", (2, 8, 5), 8, 1.0, 11),
        _GenSpec("a prompt of 1 token, 10 new, temperature 0.5", (7,), 10, 0.5, 12),
        _GenSpec(
            "a prompt of 5 tokens, 11 new (the whole context of 16), temperature 2",
            (1, 5, 9, 2, 6),
            11,
            2.0,
            13,
        ),
    ]

    def check(fn: Callable[..., Any], spec: _GenSpec) -> None:
        name, n_new, temperature, seed = spec.name, spec.n_new, spec.temperature, spec.seed
        prompt = torch.tensor(spec.prompt)
        expected = generate(
            model, prompt, n_new, temperature=temperature, generator=torch.Generator().manual_seed(seed)
        )
        mistakes = tuple(
            (_variant_tokens(model, prompt, n_new, temperature, seed, bug), words)
            for bug, words in (
                ("no temperature", GEN_NO_TEMPERATURE),
                ("times", GEN_TIMES_TEMPERATURE),
                ("argmax", GEN_ARGMAX),
                ("first", GEN_FIRST_POSITION),
                ("new only", GEN_NEW_ONLY),
            )
        )
        watched = _Watched(model)
        seeded = torch.Generator().manual_seed(seed)

        def learner(prompt: Any) -> Any:
            return fn(watched, prompt, n_new, temperature, seeded)

        case = Case(name, (prompt,), expected.numpy(), mistakes=mistakes)
        try:
            check_case(learner, case)
        except Problem:
            _check_calls(watched, n_new, strict=False)
            raise
        _check_calls(watched, n_new, strict=True)

    return run_cases("generation with the KV cache", fn, specs, check)


def _check_calls(watched: _Watched, n_new: int, *, strict: bool) -> None:
    """Raise :class:`Problem` when the learner's calls did not use the cache the way generation should."""
    later = watched.decodes[1:]
    if any(t_new > 1 for t_new, _ in later):
        raise Problem(GEN_RECOMPUTES)
    if any(not cached for _, cached in later):
        raise Problem(GEN_RESTARTS)
    if strict and (watched.forwards or len(watched.decodes) < n_new):
        raise Problem(GEN_NO_CACHE)


# ----------------------------------------------------------------------------------------------------
# Exercise 2: nucleus (top-p) sampling

TOPP_DROPS_CROSSING = (
    "it drops the token whose probability carries the kept mass past p; keep the most probable tokens until "
    "their mass first reaches p, that token included"
)
TOPP_ONE_TOO_MANY = (
    "when the most probable tokens add up to exactly p it keeps one more; stop as soon as the kept mass is "
    "p or more"
)
TOPP_UNNORMALISED = (
    "the kept probabilities are not renormalised: divide them by their sum, so that they sum to 1"
)
TOPP_SORTED = (
    "the probabilities come back sorted; put each one back at its token's index (np.put_along_axis, or "
    "index with the inverse of the argsort)"
)
TOPP_ASCENDING = "it keeps the least probable tokens; sort the probabilities in decreasing order"


def _top_p_variant(probs: Array, p: float, bug: str) -> Array:
    order = np.argsort(probs if bug == "ascending" else -probs, axis=-1, kind="stable")
    ranked = np.take_along_axis(probs, order, axis=-1)
    cumulative = np.cumsum(ranked, axis=-1)
    if bug == "drops crossing":
        keep_ranked = cumulative <= p
    elif bug == "one too many":
        keep_ranked = cumulative - ranked <= p
    else:
        keep_ranked = cumulative - ranked < p
    kept_ranked = np.where(keep_ranked, ranked, 0.0)
    if bug == "sorted":
        sorted_back: Array = kept_ranked / kept_ranked.sum(axis=-1, keepdims=True)
        return sorted_back
    kept = np.zeros_like(probs)
    np.put_along_axis(kept, order, kept_ranked, axis=-1)
    with np.errstate(all="ignore"):
        return kept if bug == "unnormalised" else kept / kept.sum(axis=-1, keepdims=True)


def check_top_p(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(probs, p)``: nucleus sampling's distribution, (..., V) like ``probs``: in each row the most
    probable tokens whose probabilities first reach ``p`` (the one that crosses it included), the rest 0,
    renormalised. Compared with ``course.gpt.top_p_probs``."""
    from course.gpt import top_p_probs

    rng = np.random.default_rng(1909)

    def case(name: str, probs: Array, p: float) -> Case:
        mistakes = tuple(
            (_top_p_variant(probs, p, bug), words)
            for bug, words in (
                ("drops crossing", TOPP_DROPS_CROSSING),
                ("one too many", TOPP_ONE_TOO_MANY),
                ("unnormalised", TOPP_UNNORMALISED),
                ("sorted", TOPP_SORTED),
                ("ascending", TOPP_ASCENDING),
            )
        )
        return Case(name, (probs, p), top_p_probs(probs, p), mistakes=mistakes)

    def random_probs(shape: tuple[int, ...]) -> Array:
        e = np.exp(2 * rng.standard_normal(shape))
        out: Array = e / e.sum(axis=-1, keepdims=True)
        return out

    return run_cases(
        "top-p sampling",
        fn,
        [
            case("6 tokens, p = 0.8", random_probs((6,)), 0.8),
            case(
                "mass exactly p: [0.5, 0.25, 0.125, 0.125], p = 0.75",
                np.array([0.125, 0.5, 0.125, 0.25]),
                0.75,
            ),
            case("3 rows of 8 tokens, p = 0.5", random_probs((3, 8)), 0.5),
            case("one token above p: [0.05, 0.9, 0.05], p = 0.6", np.array([0.05, 0.9, 0.05]), 0.6),
            case("p = 1: every token kept", random_probs((5,)), 1.0),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Exercise 3: the exact number of parameters

PC_NO_BIASES = (
    "it leaves out the biases of the linear layers: 4 d_model in attention (3 d_model for W_QKV, d_model for "
    "W_O) and d_ff + d_model in the feed-forward network, per block"
)
PC_NO_FFN_BIASES = (
    "it leaves out the feed-forward network's biases: d_ff for the first layer and d_model for the second, "
    "per block"
)
PC_NO_NORMS = "it leaves out the LayerNorms: 2 d_model each (gamma and beta), two per block and the final one"
PC_NO_FINAL_NORM = "it leaves out the final LayerNorm after the last block: 2 d_model (gamma and beta)"
PC_NO_POSITIONS = "it leaves out the position embedding: one learned vector per position, context * d_model"
PC_TIED_TWICE = (
    "with tied weights the output layer is the token embedding itself: count its vocab * d_model numbers once"
)
PC_OUTPUT_BIAS = "the output layer has no bias here (nn.Linear(d_model, vocab, bias=False)): do not add vocab"
PC_ATTENTION_3 = (
    "it counts 3 d_model² for attention, W_Q, W_K and W_V; the output projection W_O adds d_model² + d_model"
)


def _count(vocab: int, context: int, d: int, layers: int, d_ff: int, tied: bool, bug: str = "") -> int:
    attention = (3 if bug == "attention 3" else 4) * d * d + (
        0 if bug == "no biases" else 3 * d if bug == "attention 3" else 4 * d
    )
    ffn = 2 * d * d_ff + (0 if bug in ("no biases", "no ffn biases") else d_ff + d)
    norms = 0 if bug == "no norms" else 4 * d
    final = 0 if bug in ("no norms", "no final") else 2 * d
    positions = 0 if bug == "no positions" else context * d
    output = (vocab * d if (not tied or bug == "tied twice") else 0) + (vocab if bug == "output bias" else 0)
    return vocab * d + positions + layers * (attention + ffn + norms) + final + output


def check_parameter_count(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(vocab, context, d_model, n_layers, d_ff, tied)``: the exact number of parameters of
    ``course.gpt.GPT`` of that size (``course.gpt.parameter_count``, which the tests check against the
    model's own ``sum(p.numel() for p in model.parameters())``)."""

    def case(name: str, vocab: int, context: int, d: int, layers: int, d_ff: int, tied: bool) -> Case:
        sizes = (vocab, context, d, layers, d_ff, tied)
        mistakes = tuple(
            (np.array(_count(vocab, context, d, layers, d_ff, tied, bug)), words)
            for bug, words in (
                ("no biases", PC_NO_BIASES),
                ("no ffn biases", PC_NO_FFN_BIASES),
                ("no norms", PC_NO_NORMS),
                ("no final", PC_NO_FINAL_NORM),
                ("no positions", PC_NO_POSITIONS),
                ("tied twice", PC_TIED_TWICE),
                ("output bias", PC_OUTPUT_BIAS),
                ("attention 3", PC_ATTENTION_3),
            )
        )
        return Case(name, sizes, np.array(_count(vocab, context, d, layers, d_ff, tied)), mistakes=mistakes)

    return run_cases(
        "parameter count",
        fn,
        [
            # First: with 2 layers (and d_ff = 4 d_model), leaving out the feed-forward biases (2 · 5 d_model)
            # and leaving out the LayerNorms (2 · 4 d_model + 2 d_model) both remove 10 d_model; with 3 layers
            # they differ (90 and 84 here), so each mistake is named for what it is.
            case("a small model: vocab 10, context 8, d_model 6, 3 layers, d_ff 24", 10, 8, 6, 3, 24, False),
            case(
                "this lesson's model: vocab 78, context 128, d_model 64, 2 layers, d_ff 256",
                78,
                128,
                64,
                2,
                256,
                False,
            ),
            case("the same, tied", 78, 128, 64, 2, 256, True),
            case(
                "GPT-2 small: vocab 50257, context 1024, d_model 768, 12 layers, d_ff 3072, tied",
                50257,
                1024,
                768,
                12,
                3072,
                True,
            ),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# The code cards: the language-model loss, a bigram table, the learning-rate schedule

LM_NOT_SHIFTED = (
    "each position is scored on its own token; it predicts the next one: score logits[:-1] against tokens[1:]"
)
LM_WRONG_WAY = (
    "the shift goes the wrong way: position t predicts token t + 1, so pair logits[:-1] with tokens[1:]"
)
LM_NO_LOG_SOFTMAX = (
    "it uses the raw logits as log-probabilities; normalise them first: log softmax(logits) = logits - "
    "logsumexp(logits)"
)
LM_SUM = "it sums over the positions; the loss is their mean, in nats per token"


def _log_softmax(x: Array) -> Array:
    m = x.max(axis=-1, keepdims=True)
    out: Array = x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))
    return out


def _lm_loss(logits: Array, tokens: Array, bug: str = "") -> Array:
    scores = logits if bug == "raw" else _log_softmax(logits)
    if bug == "not shifted":
        picked = np.take_along_axis(scores, tokens[:, None], axis=-1)[:, 0]
    elif bug == "wrong way":
        picked = np.take_along_axis(scores[1:], tokens[:-1, None], axis=-1)[:, 0]
    else:
        picked = np.take_along_axis(scores[:-1], tokens[1:, None], axis=-1)[:, 0]
    return np.array(-picked.sum() if bug == "sum" else -picked.mean())


def check_card_lm_loss(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(logits, tokens)``: the next-token cross-entropy of one sequence, logits (T, V) and tokens
    (T,) int: the mean over t < T - 1 of -log softmax(logits[t])[tokens[t + 1]], a number."""
    rng = np.random.default_rng(1901)

    def case(name: str, t: int, v: int, scale: float, shift: float = 0.0) -> Case:
        logits = shift + scale * rng.standard_normal((t, v))
        tokens = rng.integers(0, v, t)
        mistakes = tuple(
            (_lm_loss(logits, tokens, bug), words)
            for bug, words in (
                ("not shifted", LM_NOT_SHIFTED),
                ("wrong way", LM_WRONG_WAY),
                ("raw", LM_NO_LOG_SOFTMAX),
                ("sum", LM_SUM),
            )
        )
        expected = _lm_loss(logits, tokens)
        return Case(name, (logits, tokens), expected, mistakes=mistakes, nonfinite_hint=LSE_STABLE_HINT)

    return run_cases(
        "language-model loss",
        fn,
        [
            case("6 positions, a vocabulary of 5", 6, 5, 1.0),
            case("10 positions, a vocabulary of 8, large logits", 10, 8, 30.0),
            # Above exp's overflow (709.8): exp(logits) is inf, a naive log(softmax) NaN.
            case("5 positions, a vocabulary of 6, logits near 1000", 5, 6, 3.0, 1000.0),
        ],
    )


BIGRAM_TRANSPOSED = (
    "the table is transposed: row a must hold the counts of what follows a, counts[ids[:-1], ids[1:]]"
)
BIGRAM_NO_SMOOTHING = (
    "a pair never seen gets probability 0 (and a character never followed by anything a row of NaN): add 1 "
    "to every count before normalising"
)
BIGRAM_WHOLE_TABLE = (
    "it divides by the sum of the whole table; divide each row by its own sum, so that p(. | a) sums to 1"
)
BIGRAM_FANCY_INDEX = (
    "a pair that occurs more than once is counted once: counts[a, b] += 1 with index arrays adds 1 once per "
    "distinct pair; np.add.at(counts, (ids[:-1], ids[1:]), 1) counts every occurrence"
)


def _bigram(ids: Array, vocab: int, bug: str = "") -> Array:
    counts = np.zeros((vocab, vocab))
    if bug == "transposed":
        np.add.at(counts, (ids[1:], ids[:-1]), 1)
    elif bug == "fancy index":
        counts[ids[:-1], ids[1:]] += 1  # a repeated pair is counted once
    else:
        np.add.at(counts, (ids[:-1], ids[1:]), 1)
    smoothed = counts if bug == "no smoothing" else counts + 1
    with np.errstate(all="ignore"):
        table: Array = smoothed / (smoothed.sum() if bug == "whole" else smoothed.sum(axis=1, keepdims=True))
    return table


def check_card_bigram(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(ids, vocab)``: the (vocab, vocab) bigram table of the token sequence ``ids`` (n,) int,
    row a the probabilities of the token after a, from the counts with add-one smoothing."""
    rng = np.random.default_rng(1902)

    def case(name: str, ids: Array, vocab: int) -> Case:
        mistakes = tuple(
            (_bigram(ids, vocab, bug), words)
            for bug, words in (
                ("transposed", BIGRAM_TRANSPOSED),
                ("no smoothing", BIGRAM_NO_SMOOTHING),
                ("whole", BIGRAM_WHOLE_TABLE),
                ("fancy index", BIGRAM_FANCY_INDEX),
            )
        )
        return Case(name, (ids, vocab), _bigram(ids, vocab), mistakes=mistakes)

    return run_cases(
        "bigram table",
        fn,
        [
            case("12 tokens of a vocabulary of 4", rng.integers(0, 4, 12), 4),
            case("'abab' as [0, 1, 0, 1], a vocabulary of 3 (token 2 never seen)", np.array([0, 1, 0, 1]), 3),
        ],
    )


LR_WARMUP_FROM_ZERO = (
    "the warm-up starts at 0 at step 0, a step that trains nothing; start at peak / warmup: "
    "peak * (step + 1) / warmup"
)
LR_NO_FLOOR = "the cosine decays to 0; it ends at floor * peak: peak * (floor + (1 - floor) * cosine term)"
LR_DECAY_FROM_ZERO = (
    "the cosine is measured from step 0; it starts after the warm-up: progress = (step - warmup) / (total - "
    "warmup)"
)


def _lr(step: int, peak: float, warmup: int, total: int, floor: float, bug: str = "") -> float:
    if step < warmup:
        return peak * (step if bug == "from zero" else step + 1) / warmup
    start = 0 if bug == "decay from zero" else warmup
    progress = min(1.0, (step - start) / max(1, total - start))
    low = 0.0 if bug == "no floor" else floor
    return peak * (low + (1 - low) * 0.5 * (1 + math.cos(math.pi * progress)))


def check_card_lr_schedule(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(step, peak, warmup, total, floor)``: a linear warm-up from peak / warmup (step 0) to peak
    (step warmup - 1), then a cosine decay from peak (step warmup) to floor * peak (step total and after).
    The learner's numbers for a range of steps are compared as one array."""

    def case(name: str, peak: float, warmup: int, total: int, floor: float) -> Case:
        steps = range(total + 2)

        def curve(bug: str = "") -> Array:
            return np.array([_lr(s, peak, warmup, total, floor, bug) for s in steps])

        mistakes = tuple(
            (curve(bug), words)
            for bug, words in (
                ("from zero", LR_WARMUP_FROM_ZERO),
                ("no floor", LR_NO_FLOOR),
                ("decay from zero", LR_DECAY_FROM_ZERO),
            )
        )
        return Case(name, (peak, warmup, total, floor), curve(), mistakes=mistakes)

    def over_steps(learner: Callable[..., Any]) -> Callable[..., Any]:
        def run(peak: float, warmup: int, total: int, floor: float) -> Any:
            return [learner(s, peak, warmup, total, floor) for s in range(total + 2)]

        return run

    return run_cases(
        "learning-rate schedule",
        over_steps(fn),
        [
            case("peak 1e-2, 4 warm-up steps, 12 in all, floor 0.1", 1e-2, 4, 12, 0.1),
            case("peak 3e-4, 10 warm-up steps, 30 in all, floor 0", 3e-4, 10, 30, 0.0),
        ],
    )
