"""Checkers for lesson 07's LayerNorm: LayerNorm from its definition and its backward pass, and the code
cards of LayerNorm, of the pre-LN residual step and of a pre-LN stack.

The lesson's exercise here is :func:`check_layer_norm_backward`; :func:`check_layer_norm` checks what the
lesson builds in its sections, for code cards and practice. The block's exercises are in
:mod:`course.checkers._block`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.checkers._engine import Case, CheckResult, run_cases

__all__ = [
    "LNB_NO_GAMMA",
    "LNB_NO_MEAN_TERM",
    "LNB_NO_VARIANCE_TERM",
    "LNB_STATS_CONSTANT",
    "LNB_SUM_NOT_MEAN",
    "LNB_UNBIASED",
    "LN_NO_EPS",
    "LN_NO_MEAN",
    "LN_NO_SQRT",
    "LN_SWAPPED",
    "STACK_EVERY_NORM",
    "STACK_NORMED_RESIDUAL",
    "STACK_NO_FINAL_NORM",
    "STACK_POST_LN",
    "check_card_layer_norm",
    "check_card_pre_ln_residual",
    "check_card_pre_ln_stack",
    "check_layer_norm",
    "check_layer_norm_backward",
    "layer_norm_backward",
]

Array = NDArray[np.float64]

LN_NO_MEAN = "it does not subtract the mean: normalize x - mean, then divide by sqrt(var + eps)"
LN_SWAPPED = "gamma and beta are swapped: multiply by gamma (the scale), then add beta (the shift)"
LN_NO_SQRT = "it divides by the variance; divide by its square root, sqrt(var + eps), the standard deviation"
LN_NO_EPS = "it leaves out eps: divide by sqrt(var + eps), which stays above 0 even when var is 0"


def _layer_norm(
    x: Array, gamma: Array | float, beta: Array | float, eps: float, *, ddof: int = 0, inside: bool = True
) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True, ddof=ddof) if x.shape[-1] > ddof else np.full_like(mean, np.nan)
    std = np.sqrt(var + eps) if inside else np.sqrt(var) + eps
    return (x - mean) / std * gamma + beta  # type: ignore[no-any-return]


def check_layer_norm(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, gamma, beta, eps)``: LayerNorm over the last axis of ``x`` (..., d), with the biased
    variance and ``eps`` inside the square root, then scaled by ``gamma`` and shifted by ``beta`` (d,)."""
    rng = np.random.default_rng(707)

    def case(name: str, x: Array, eps: float = 1e-2) -> Case:
        d = x.shape[-1]
        gamma, beta = 1.0 + 0.5 * rng.standard_normal(d), rng.standard_normal(d)
        expected = _layer_norm(x, gamma, beta, eps)
        mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
        with np.errstate(all="ignore"):
            no_eps = (x - mean) / np.sqrt(var) * gamma + beta
        mistakes = [
            (x / np.sqrt(var + eps) * gamma + beta, LN_NO_MEAN),
            (_layer_norm(x, beta, gamma, eps), LN_SWAPPED),
            ((x - mean) / (var + eps) * gamma + beta, LN_NO_SQRT),
            (no_eps, LN_NO_EPS),
            (
                _layer_norm(x, gamma, beta, eps, ddof=1),
                "it uses the unbiased variance (divided by d - 1); LayerNorm divides by d (np.var's default, "
                "ddof=0; torch.var needs unbiased=False)",
            ),
            (
                _layer_norm(x, gamma, beta, eps, inside=False),
                "eps is added outside the square root, sqrt(var) + eps; LayerNorm adds it inside, "
                "sqrt(var + eps)",
            ),
            (
                _layer_norm(x, np.ones(d), np.zeros(d), eps),
                "it leaves out gamma and beta: multiply the normalized x by gamma, then add beta",
            ),
        ]
        if x.ndim >= 2:
            swapped = np.swapaxes(_layer_norm(np.swapaxes(x, 0, -1), 1.0, 0.0, eps), 0, -1) * gamma + beta
            mistakes.append(
                (
                    swapped,
                    "it normalizes over the wrong axis (the positions); LayerNorm normalizes each position "
                    "over its d features, the last axis (axis=-1, keepdims=True)",
                )
            )
        return Case(name, (x, gamma, beta, eps), expected, mistakes=tuple(mistakes))

    small_spread = np.array([[1.0, 1.02, 0.98, 1.01], [2.0, -1.0, 0.5, 3.0], [0.0, 0.1, -0.1, 0.05]])
    return run_cases(
        "layer_norm",
        fn,
        [
            case("3 positions, d = 4, one row with a small spread", small_spread),
            case("batch of 2, 3 positions, d = 5", rng.standard_normal((2, 3, 5))),
            case("one position, d = 6, large values", 100.0 + 10.0 * rng.standard_normal((1, 6))),
            case("d = 1: the variance is 0, the output is beta", rng.standard_normal((3, 1))),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# LayerNorm's backward pass


def layer_norm_backward(
    x: Array, gamma: Array, grad_out: Array, eps: float = 1e-5, *, ddof: int = 0
) -> Array:
    """The gradient of a loss with respect to LayerNorm's input: with x̂ = (x - μ)/σ, σ = sqrt(var + eps) and
    g = grad_out · γ (the gradient reaching x̂), ∂loss/∂x = (g - mean(g) - x̂ · mean(g · x̂)) / σ, the means
    over the last axis. The three terms are the three paths from x_i to the output: directly, through μ and
    through σ. x, grad_out (..., d), gamma (d,). (``ddof=1``: the same formula with the unbiased variance, a
    typical mistake.)"""
    mean = x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(x.var(axis=-1, keepdims=True, ddof=ddof) + eps)
    x_hat = (x - mean) / sigma
    g = grad_out * gamma
    out: Array = (
        g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)
    ) / sigma
    return out


LNB_STATS_CONSTANT = (
    "it treats the mean and the standard deviation as constants, grad_out · gamma / sigma: x_i also moves "
    "the mean and the variance of its row, and those two paths add two terms"
)
LNB_NO_MEAN_TERM = (
    "it leaves out the path through the mean: subtract the row mean of g = grad_out · gamma as well"
)
LNB_NO_VARIANCE_TERM = (
    "it leaves out the path through the variance: subtract x̂ times the row mean of g · x̂ as well, with "
    "x̂ = (x - mean) / sigma"
)
LNB_NO_GAMMA = (
    "gamma is left out: the gradient that reaches the normalized x̂ is grad_out · gamma, since y = gamma · x̂ "
    "+ beta"
)
LNB_SUM_NOT_MEAN = (
    "the terms through the mean and the variance are sums over the row; they are means (divided by d), as "
    "the mean and the variance are"
)
LNB_UNBIASED = (
    "it uses the unbiased variance (divided by d - 1); LayerNorm's is biased (divided by d), and so is its "
    "gradient's sigma"
)


def check_layer_norm_backward(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, gamma, grad_out, eps)``: the gradient of a loss with respect to LayerNorm's input x
    (..., d), given grad_out = ∂loss/∂y (..., d) for y = LayerNorm(x) with scale ``gamma`` (d,) and the
    biased variance (:func:`layer_norm_backward`, equal to torch's autograd)."""
    rng = np.random.default_rng(717)

    def case(name: str, x: Array, eps: float = 1e-5) -> Case:
        d = x.shape[-1]
        gamma: Array = 1.0 + 0.5 * rng.standard_normal((d,))
        grad_out = rng.standard_normal(x.shape)
        mean = x.mean(axis=-1, keepdims=True)
        sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
        x_hat = (x - mean) / sigma
        g = grad_out * gamma

        def row_mean(a: Array) -> Array:
            return a.mean(axis=-1, keepdims=True)  # type: ignore[no-any-return]

        def through_all(x_hat: Array, sigma: Array) -> Array:
            """The right formula, from a wrong x̂ or sigma: the forward pass's mistakes carried back."""
            return (g - row_mean(g) - x_hat * row_mean(g * x_hat)) / sigma

        variance = x.var(axis=-1, keepdims=True) + eps  # (..., 1): sigma without its square root
        mistakes = (
            (g / sigma, LNB_STATS_CONSTANT),
            ((g - x_hat * row_mean(g * x_hat)) / sigma, LNB_NO_MEAN_TERM),
            ((g - row_mean(g)) / sigma, LNB_NO_VARIANCE_TERM),
            (layer_norm_backward(x, np.ones(d), grad_out, eps), LNB_NO_GAMMA),
            ((g - d * row_mean(g) - x_hat * d * row_mean(g * x_hat)) / sigma, LNB_SUM_NOT_MEAN),
            (layer_norm_backward(x, gamma, grad_out, eps, ddof=1), LNB_UNBIASED),
            (through_all(x / sigma, sigma), LN_NO_MEAN),
            (through_all((x - mean) / variance, variance), LN_NO_SQRT),
        )
        return Case(
            name, (x, gamma, grad_out, eps), layer_norm_backward(x, gamma, grad_out, eps), mistakes=mistakes
        )

    return run_cases(
        "layer_norm_backward",
        fn,
        [
            case("3 positions, d = 4", rng.standard_normal((3, 4))),
            case("batch of 2, 3 positions, d = 5", 3.0 * rng.standard_normal((2, 3, 5)) + 1.0),
            case("one position, d = 6, large values", 100.0 + 10.0 * rng.standard_normal((1, 6))),
            case("eps = 0.5, d = 3", rng.standard_normal((4, 3)), eps=0.5),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# The code cards: LayerNorm, the pre-LN residual step

LN_UNBIASED = (
    "it uses the unbiased variance (divided by d - 1); LayerNorm divides by d (np.var's default, ddof=0)"
)
LN_WRONG_AXIS = (
    "it normalizes over the wrong axis; normalize each position over its d features, axis=-1, keepdims=True"
)


def _ln(x: Array, gamma: Any, beta: Any, eps: float, ddof: int = 0) -> Array:
    mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True, ddof=ddof)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta  # type: ignore[no-any-return]


def check_card_layer_norm(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, gamma, beta, eps)``: LayerNorm over the last axis of x (..., d), biased variance, eps
    inside the square root, then ``* gamma + beta``, (d,) each."""
    rng = np.random.default_rng(1702)

    def case(name: str, x: Array, eps: float = 1e-5) -> Case:
        d = x.shape[-1]
        gamma, beta = 1.0 + 0.5 * rng.standard_normal(d), rng.standard_normal(d)
        mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
        mistakes = [
            (x / np.sqrt(var + eps) * gamma + beta, LN_NO_MEAN),
            (_ln(x, beta, gamma, eps), LN_SWAPPED),
            ((x - mean) / (var + eps) * gamma + beta, LN_NO_SQRT),
            (_ln(x, gamma, beta, eps, ddof=1), LN_UNBIASED),
        ]
        if x.ndim == 2 and x.shape[0] > 1:
            wrong = (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + eps) * gamma + beta
            mistakes.append((wrong, LN_WRONG_AXIS))
        return Case(name, (x, gamma, beta, eps), _ln(x, gamma, beta, eps), mistakes=tuple(mistakes))

    return run_cases(
        "layer norm",
        fn,
        [
            case("3 positions, d = 4", rng.standard_normal((3, 4)) * 2 + 1),
            case("a batch (2, 3, 5)", rng.standard_normal((2, 3, 5))),
            case("one position, d = 6, eps = 0.1", rng.standard_normal((1, 6)), 0.1),
        ],
    )


PRE_LN_POST = (
    "it is the post-LN step, norm(x + sublayer(x)); pre-LN normalizes the sublayer's input only: "
    "x + sublayer(norm(x))"
)
PRE_LN_NO_RESIDUAL = "the residual is missing: add x, the block's input, to sublayer(norm(x))"
PRE_LN_NORMED_RESIDUAL = (
    "the residual carries norm(x); it carries x itself, unnormalized: x + sublayer(norm(x))"
)
PRE_LN_NO_NORM = "the norm is missing: the sublayer reads norm(x), x + sublayer(norm(x))"


def check_card_pre_ln_residual(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, sublayer, norm)``: one pre-LN residual step, x + sublayer(norm(x)); ``sublayer`` and
    ``norm`` are functions of one array."""
    rng = np.random.default_rng(1703)

    def case(name: str, shape: tuple[int, ...]) -> Case:
        d = shape[-1]
        w, gamma, beta = rng.standard_normal((d, d)), 1.0 + rng.standard_normal(d), rng.standard_normal(d)

        def sublayer(z: Array) -> Array:
            return np.tanh(z @ w)

        def norm(z: Array) -> Array:
            return _ln(z, gamma, beta, 1e-5)

        x = rng.standard_normal(shape) * 3 + 2
        mistakes = (
            (norm(x + sublayer(x)), PRE_LN_POST),
            (sublayer(norm(x)), PRE_LN_NO_RESIDUAL),
            (norm(x) + sublayer(norm(x)), PRE_LN_NORMED_RESIDUAL),
            (x + sublayer(x), PRE_LN_NO_NORM),
        )
        return Case(name, (x, sublayer, norm), x + sublayer(norm(x)), mistakes=mistakes)

    return run_cases(
        "pre-LN residual step", fn, [case("4 positions, d = 3", (4, 3)), case("a batch (2, 3, 5)", (2, 3, 5))]
    )


STACK_NO_FINAL_NORM = (
    "the final LayerNorm is missing: a pre-LN stack ends with a residual addition, so it applies final_norm "
    "once, after the last sublayer"
)
STACK_EVERY_NORM = (
    "it applies final_norm after every sublayer; it comes once, after the last one (the residual path is "
    "never normalized in between)"
)
STACK_POST_LN = (
    "it is a post-LN stack, norm(x + sublayer(x)) at each step; pre-LN normalizes each sublayer's input "
    "only: x + sublayer(norm(x)), then final_norm once"
)
STACK_NORMED_RESIDUAL = (
    "the residual carries norm(x); it carries x itself, unnormalized: x + sublayer(norm(x)) at each step"
)


def check_card_pre_ln_stack(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, sublayers, norms, final_norm)``: a pre-LN stack, ``x = x + sublayer(norm(x))`` for each
    (sublayer, norm) pair in order, then ``final_norm(x)``; every function takes and returns one array."""
    rng = np.random.default_rng(1704)

    def case(name: str, shape: tuple[int, ...], depth: int) -> Case:
        d = shape[-1]

        def make_norm() -> Callable[[Array], Array]:
            gamma, beta = 1.0 + 0.5 * rng.standard_normal(d), rng.standard_normal(d)
            return lambda z: _ln(z, gamma, beta, 1e-5)

        def make_sublayer() -> Callable[[Array], Array]:
            w = rng.standard_normal((d, d))
            return lambda z: np.tanh(z @ w)

        sublayers = [make_sublayer() for _ in range(depth)]
        norms = [make_norm() for _ in range(depth)]
        final_norm = make_norm()
        x = rng.standard_normal(shape) * 3 + 2

        def run(step: Callable[[Array, Callable[[Array], Array], Callable[[Array], Array]], Array]) -> Array:
            z = x
            for sublayer, norm in zip(sublayers, norms, strict=True):
                z = step(z, sublayer, norm)
            return z

        pre = run(lambda z, f, n: z + f(n(z)))
        every = x
        for sublayer, norm in zip(sublayers, norms, strict=True):
            every = final_norm(every + sublayer(norm(every)))
        mistakes = (
            (pre, STACK_NO_FINAL_NORM),
            (every, STACK_EVERY_NORM),
            (run(lambda z, f, n: n(z + f(z))), STACK_POST_LN),
            (final_norm(run(lambda z, f, n: n(z) + f(n(z)))), STACK_NORMED_RESIDUAL),
        )
        return Case(name, (x, sublayers, norms, final_norm), final_norm(pre), mistakes=mistakes)

    return run_cases(
        "pre-LN stack",
        fn,
        [
            case("2 sublayers, 4 positions, d = 3", (4, 3), 2),
            case("3 sublayers, a batch (2, 3, 5)", (2, 3, 5), 3),
        ],
    )
