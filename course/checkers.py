"""Exercise checkers: call a learner's function on fixed cases and say, in one sentence, what is wrong.

Each ``check_*`` function runs the learner's function on a list of cases (simple ones first, then the edge
cases: a length-1 sequence, d_k = 1, batch axes, a fully masked row, scores large enough to overflow a naive
softmax), compares with the reference in :mod:`course.attention`, stops at the first problem, prints one
sentence and returns a :class:`CheckResult`. The sentence names the case and then the first problem found, in
this order: an exception, an input array changed in place, a missing or non-array result, (weights, output)
in the wrong order, a wrong shape (or dtype, for masks), NaN or inf, a masked position that leaked, attention
weights that do not sum to 1, a wrong value (first wrong index, both values). It then names the typical
mistake the result matches, when it matches one (scales that coincide for a case are named together), or
else says that the values are right in the wrong shape, or that a float16 or integer dtype lost precision.
Numbers are printed to 6 significant digits. A torch tensor is taken as its values, detached from autograd.

Attention exercises may return the output alone or ``(output, weights)``; weights, when given, are checked
too. A function that raises NotImplementedError (the workbook's stub) is reported as not written yet, in a
sentence that starts with "·" rather than "✗". :func:`check_permutation_test` checks a function that answers
True or False: its sentence says what the function returned and what was expected.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import (
    causal_mask,
    merge_heads,
    multi_head_attention,
    padding_mask,
    scaled_dot_product_attention,
    self_attention,
    sinusoidal_positions,
    softmax,
    split_heads,
)

__all__ = [
    "CheckResult",
    "check_attend_one",
    "check_attention",
    "check_causal_mask",
    "check_contextualize",
    "check_dot",
    "check_masked_attention",
    "check_merge_heads",
    "check_multi_head",
    "check_padding_mask",
    "check_permutation_test",
    "check_positional_encoding",
    "check_self_attention",
    "check_softmax",
    "check_softmax_jacobian",
    "check_softmax_temperature",
    "check_split_heads",
    "check_weighted_average",
]

RTOL = 1e-5
ATOL = 1e-7  # loose enough for a learner computing in float32


@dataclass(frozen=True)
class CheckResult:
    """What a checker found: ``ok`` is True when every case passes; ``message`` is the sentence it printed."""

    ok: bool
    message: str

    def __bool__(self) -> bool:
        return self.ok

    def _ipython_display_(self) -> None:
        """Show nothing when a notebook cell ends with a checker call: the sentence is printed already."""


@dataclass(frozen=True)
class _Case:
    """One call of the learner's function and what it should return.

    ``weights`` is set for attention exercises (the function may then return ``(output, weights)``),
    ``allowed`` (True = may attend, broadcast to the weights' shape) for masked ones, with ``v_arg`` the
    position of the values among ``args`` (to detect leaks by changing a masked key's value). ``mistakes``
    pairs what a typical wrong solution would return with the words that explain it; ``nonfinite_hint`` is
    added when the output has NaN or inf, ``error_hint`` when the function raises an exception whose sentence
    contains one of ``error_when`` (any exception when it is empty).
    For boolean masks, ``mask_words(index, expected, where)`` describes a wrong entry.
    """

    name: str
    args: tuple[Any, ...]
    output: NDArray[Any]
    weights: NDArray[Any] | None = None
    allowed: NDArray[np.bool_] | None = None
    v_arg: int = 2
    mistakes: tuple[tuple[NDArray[Any], str], ...] = field(default=())
    nonfinite_hint: str = ""
    error_hint: str = ""
    error_when: tuple[str, ...] = ()
    mask_words: Callable[[tuple[int, ...], bool, str], str] | None = None


class _Problem(Exception):
    """Raised inside a case check with the sentence (without the case prefix) that describes the problem."""


class _NotWritten(Exception):
    """Raised when the learner's function raises NotImplementedError: the workbook's stub, still in place."""


NOT_WRITTEN = (
    "· {title}: not written yet. Replace the `raise NotImplementedError` line with your code, then run this "
    "cell again."
)


# ----------------------------------------------------------------------------------------------------
# Formatting


def _num(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.6g}"


def _idx(name: str, index: Sequence[int]) -> str:
    if len(index) == 0:  # a single number
        return f"the {name}"
    return f"{name}[{', '.join(str(int(i)) for i in index)}]"


def _shape(shape: Sequence[int]) -> str:
    return str(tuple(int(s) for s in shape))  # (2, 3), (3,)


def _query(index: Sequence[int]) -> str:
    """Name a query from an index into (..., T_q): 'query 2', or 'query 2 of batch item [1]'."""
    *batch, i = (int(j) for j in index)
    return f"query {i}" if not batch else f"query {i} of batch item [{', '.join(map(str, batch))}]"


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


# ----------------------------------------------------------------------------------------------------
# The engine


def _copy(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _call(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """Call the learner's function on copies of ``args``, with numpy's warnings silenced (NaN is reported),
    and make sure it left those copies as they were."""
    copies = _copy(args)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            result = fn(*copies)
    except NotImplementedError:
        raise _NotWritten from None
    except Exception as e:  # the learner's bug, reported as a sentence, never a traceback
        raise _Problem(_raised(e)) from None
    _check_unchanged(fn, args, copies)
    return result


def _raised(error: Exception) -> str:
    """'your function raised TypeError: its first line', or only its type when ``str(error)`` fails too."""
    try:
        message = _first_line(str(error)).rstrip(".")  # the sentence adds its own full stop
    except Exception:
        message = ""
    return f"your function raised {type(error).__name__}" + (f": {message}" if message else "")


def _check_unchanged(fn: Callable[..., Any], args: tuple[Any, ...], copies: tuple[Any, ...]) -> None:
    """Raise :class:`_Problem` when ``fn`` changed an array it was given (``copies``, made of ``args``)."""
    for position, (original, given) in enumerate(zip(args, copies, strict=True)):
        if not isinstance(original, np.ndarray):
            continue
        same = given.shape == original.shape and given.dtype == original.dtype
        if same and np.array_equal(given, original, equal_nan=original.dtype.kind in "fc"):
            continue
        name = _parameter(fn, position)
        raise _Problem(f"your function changed its input {name} in place; compute a new array instead")


def _parameter(fn: Callable[..., Any], position: int) -> str:
    """The name of ``fn``'s positional parameter at ``position``, in backticks, or 'number N' (from 1)."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin or another callable without a signature
        parameters = []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [parameter.name for parameter in parameters if parameter.kind in kinds]
    return f"`{names[position]}`" if position < len(names) else f"number {position + 1}"


def _from_torch(value: Any, what: str) -> Any:
    """A torch tensor as a numpy array, detached from autograd and moved to the CPU (torch is not imported:
    a learner who returns a tensor has imported it); anything else as it is."""
    if not type(value).__module__.startswith("torch") or not hasattr(value, "detach"):
        return value
    if str(getattr(value, "dtype", "")) == "torch.bfloat16":
        raise _Problem(
            f"{what} is a bfloat16 tensor, which keeps only about 3 significant digits; compute in float64 "
            "(or float32)"
        )
    try:
        return value.detach().cpu().resolve_conj().resolve_neg().numpy()
    except Exception:
        return value


def _as_array(value: Any, what: str) -> NDArray[Any]:
    if value is None:
        raise _Problem(f"your function returned None instead of {what} (is a return statement missing?)")
    value = _from_torch(value, what)
    try:
        array = np.asarray(value)
    except Exception:
        raise _Problem(f"expected {what} as an array, got {type(value).__name__}") from None
    if np.issubdtype(array.dtype, np.complexfloating):
        raise _Problem(f"expected {what} as real numbers, got complex numbers (dtype {array.dtype})")
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
        raise _Problem(f"expected {what} as an array of numbers, got {type(value).__name__}")
    return array


def _split_result(result: Any, case: _Case) -> tuple[NDArray[Any], NDArray[Any] | None]:
    if isinstance(result, tuple):  # a list is taken as an array (a pure-Python answer)
        if case.weights is None or len(result) != 2:
            wanted = "the output, or (output, weights)" if case.weights is not None else "one array"
            kind = type(result).__name__
            raise _Problem(f"your function returned a {kind} of {len(result)} items; expected {wanted}")
        return _as_array(result[0], "the output"), _as_array(result[1], "the weights")
    return _as_array(result, "the output"), None


def _check_order(out: NDArray[Any], weights: NDArray[Any] | None, case: _Case) -> None:
    """Raise :class:`_Problem` when the function returned ``(weights, output)`` instead of the other way."""
    if weights is None or case.weights is None:
        return
    if out.shape != case.weights.shape or weights.shape != case.output.shape:
        return
    if out.shape != case.output.shape or (
        _equal(out, case.weights) and _equal(weights, case.output) and not _equal(out, case.output)
    ):
        raise _Problem("your function returned (weights, output); return (output, weights), the output first")


def _check_shapes(out: NDArray[Any], weights: NDArray[Any] | None, case: _Case) -> None:
    if out.shape != case.output.shape:
        expected = _shape(case.output.shape) if case.output.shape else "a single number, shape ()"
        raise _Problem(f"the output has shape {_shape(out.shape)}, expected {expected}")
    if weights is None or case.weights is None or weights.shape == case.weights.shape:
        return
    sentence = f"the weights have shape {_shape(weights.shape)}, expected {_shape(case.weights.shape)}"
    if case.weights.ndim >= 3 and weights.shape == case.weights.shape[:-3] + case.weights.shape[-2:]:
        sentence += " (one matrix per head; do not average over the heads)"
    raise _Problem(sentence)


_EMPTY = "{query} may attend to no key, so its weights and output should be all zero"


def _empty_row(query: tuple[int, ...], case: _Case) -> bool:
    """Whether the query at ``query`` (batch indices then position) may attend to no key."""
    return case.allowed is not None and not case.allowed[query].any()


def _first(wrong: NDArray[np.bool_]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(wrong)[0])


def _check_finite(got: NDArray[Any], expected: NDArray[Any], name: str, case: _Case) -> None:
    bad = ~np.isfinite(got)
    if not bad.any():
        return
    index = _first(bad)
    if _empty_row(index[:-1], case):
        raise _Problem(
            f"{_EMPTY.format(query=_query(index[:-1]))}, got {_idx(name, index)} = {_num(got[index])}"
        )
    hint = f" ({case.nonfinite_hint})" if case.nonfinite_hint else ""
    raise _Problem(f"{_idx(name, index)} is {_num(got[index])}, expected {_num(expected[index])}{hint}")


def _check_leaks(
    fn: Callable[..., Any], case: _Case, out: NDArray[Any], weights: NDArray[Any] | None
) -> None:
    """A masked key must get zero weight: read it from the weights, or else change that key's value and see
    whether the output moves."""
    if case.allowed is None:
        return
    blocked = ~case.allowed  # (..., T_q, T_k)
    if weights is not None:
        leaked = blocked & (np.abs(weights) > ATOL)
        if leaked.any():
            index = _first(leaked)
            query, key, got = index[:-1], index[-1], f"{_idx('weights', index)} = {_num(weights[index])}"
            if _empty_row(query, case):
                raise _Problem(f"{_EMPTY.format(query=_query(query))}, got {got}")
            raise _Problem(f"{_query(query)} attends to masked key {key} ({got}, expected 0)")
        return
    for key in range(blocked.shape[-1]):
        args = list(case.args)
        args[case.v_arg] = args[case.v_arg].copy()
        args[case.v_arg][..., key, :] += 1.0
        changed = _as_array(_call(fn, tuple(args)), "the output")
        moved = np.abs(changed - out).max(axis=-1) > ATOL  # (..., T_q)
        leaked = np.broadcast_to(moved, blocked.shape[:-1]) & blocked[..., key]
        if leaked.any():
            query = _first(leaked)
            if _empty_row(query, case):
                empty = _EMPTY.format(query=_query(query))
                raise _Problem(f"{empty}, but its output changes when the value of key {key} changes")
            raise _Problem(
                f"{_query(query)} attends to masked key {key} (its output changes with that key's value)"
            )


def _check_row_sums(weights: NDArray[Any], case: _Case) -> None:
    sums = weights.sum(axis=-1)  # (..., T_q)
    target = case.weights.sum(axis=-1)  # type: ignore[union-attr]  # 1, or 0 for a fully masked query
    wrong = ~np.isclose(sums, target, rtol=RTOL, atol=1e-6)
    if wrong.any():
        query = _first(wrong)
        raise _Problem(
            f"the weights of {_query(query)} sum to {_num(sums[query])}, expected {_num(target[query])}"
        )


def _check_values(got: NDArray[Any], expected: NDArray[Any], name: str, case: _Case) -> None:
    wrong = ~np.isclose(got, expected, rtol=RTOL, atol=ATOL)
    if not wrong.any():
        return
    index = _first(wrong)
    if name == "output" and case.allowed is not None and _empty_row(index[:-1], case):
        raise _Problem(
            f"{_EMPTY.format(query=_query(index[:-1]))}, got {_idx(name, index)} = {_num(got[index])}"
        )
    raise _Problem(f"{_idx(name, index)} is {_num(got[index])}, expected {_num(expected[index])}")


def _check_mask_values(got: NDArray[Any], case: _Case) -> None:
    if got.dtype != np.bool_:
        raise _Problem(f"the mask has dtype {got.dtype}, expected bool (True = may attend)")
    wrong = got != case.output
    if wrong.any():
        index = _first(wrong)
        raise _Problem(case.mask_words(index, bool(case.output[index]), _idx("mask", index)))  # type: ignore[misc]


def _equal(a: NDArray[Any], b: NDArray[Any]) -> bool:
    """Same shape and the same values (booleans exactly, numbers up to the checkers' tolerance)."""
    if a.shape != b.shape:
        return False
    if a.dtype == np.bool_ or b.dtype == np.bool_:
        return bool(np.array_equal(a, b))
    return bool(np.allclose(a, b, rtol=RTOL, atol=ATOL))


def _known_mistake(output: NDArray[Any], case: _Case) -> str | None:
    """The explanation of the first typical mistake whose result equals ``output``, if any. A mistake that
    gives the right output on this case (no scaling when d_k = 1, say) explains nothing and is skipped."""
    for alternative, explanation in case.mistakes:
        if _equal(output, alternative) and not _equal(alternative, case.output):
            return explanation
    return None


def _shape_hint(output: NDArray[Any], case: _Case) -> str | None:
    """Words for the right values in the wrong shape, if ``output`` holds them."""
    if output.shape == case.output.shape or output.size != case.output.size:
        return None
    if not _equal(output.reshape(case.output.shape), case.output):
        return None
    if np.squeeze(output).shape == np.squeeze(case.output).shape:
        extra = output.ndim > case.output.ndim
        return f"the values are right, with {'an extra' if extra else 'a missing'} axis of length 1"
    return "the values are right, in the wrong shape"


def _dtype_hint(arrays: Sequence[tuple[NDArray[Any] | None, str]], case: _Case) -> str | None:
    """Words for a result whose dtype cannot hold the expected values: float16, integers or booleans."""
    if case.output.dtype == np.bool_:
        return None
    for array, name in arrays:
        if array is None:
            continue
        if array.dtype == np.float16:
            return (
                f"the {name} has dtype float16, which keeps only about 3 significant digits; compute in "
                "float64 (or float32)"
            )
        if array.dtype.kind in "iub":
            return (
                f"the {name} has dtype {array.dtype}, which cannot hold fractions; compute with floats "
                "(np.zeros(n) rather than np.zeros(n, dtype=int), for example)"
            )
    return None


def _explain(out: NDArray[Any], weights: NDArray[Any] | None, case: _Case) -> str | None:
    """The words added after a problem: the typical mistake, the right values misshaped, or a poor dtype."""
    known = _known_mistake(out, case) or _shape_hint(out, case)
    return known or _dtype_hint(((out, "output"), (weights, "weights")), case)


def _call_case(fn: Callable[..., Any], case: _Case) -> Any:
    """Call ``fn`` on the case's arguments; an exception's sentence gets the case's hint when it applies."""
    try:
        return _call(fn, case.args)
    except _Problem as problem:
        sentence = str(problem)
        if not case.error_hint or (case.error_when and not any(w in sentence for w in case.error_when)):
            raise
        raise _Problem(f"{sentence} ({case.error_hint})") from None


def _check_case(fn: Callable[..., Any], case: _Case) -> None:
    """Raise :class:`_Problem` describing the first thing wrong with ``fn`` on ``case``."""
    out, weights = _split_result(_call_case(fn, case), case)
    _check_order(out, weights, case)  # says what to do; no typical mistake to add
    try:
        _check_shapes(out, weights, case)
        if case.output.dtype == np.bool_:
            _check_mask_values(out, case)
            return
        _check_finite(out, case.output, "output", case)
        if weights is not None:
            _check_finite(weights, case.weights, "weights", case)  # type: ignore[arg-type]
        _check_leaks(fn, case, out, weights)
        if weights is not None:
            _check_row_sums(weights, case)
            _check_values(weights, case.weights, "weights", case)  # type: ignore[arg-type]
        _check_values(out, case.output, "output", case)
    except _Problem as problem:
        explanation = _explain(out, weights, case)
        if explanation is None:
            raise
        raise _Problem(f"{problem}; {explanation}") from None


def _run(
    title: str,
    fn: Callable[..., Any],
    cases: Sequence[Any],
    check: Callable[[Callable[..., Any], Any], None] = _check_case,
) -> CheckResult:
    """Run ``check(fn, case)`` on each case (a :class:`_Case` by default), print one sentence, return it."""
    for number, case in enumerate(cases, start=1):
        try:
            check(fn, case)
        except _NotWritten:
            message = NOT_WRITTEN.format(title=title)
            print(message)
            return CheckResult(False, message)
        except _Problem as problem:
            message = f"✗ {title}, case {number} of {len(cases)} ({case.name}): {problem}."
            print(message)
            return CheckResult(False, message)
    message = f"✓ {title}: all {len(cases)} cases pass."
    print(message)
    return CheckResult(True, message)


# ----------------------------------------------------------------------------------------------------
# Warm-up (lesson 00): the two operations attention is made of


def check_dot(fn: Callable[[NDArray[Any], NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(u, v)``: the dot product of two 1-D arrays of the same length, a single number."""
    rng = np.random.default_rng(7)

    def case(name: str, u: NDArray[Any], v: NDArray[Any]) -> _Case:
        products = (u * v, "it is the element-wise product; add its entries up to get one number")
        return _Case(name, (u, v), np.asarray(float(u @ v)), mistakes=(products,))

    return _run(
        "dot",
        fn,
        [
            case("u = [1, 2, 3], v = [4, 5, 6]", np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])),
            case("length 1", np.array([3.0]), np.array([-2.0])),
            case("orthogonal vectors", np.array([1.0, 0.0]), np.array([0.0, 5.0])),
            case("random vectors of length 16", rng.standard_normal(16), rng.standard_normal(16)),
        ],
    )


def check_weighted_average(fn: Callable[[NDArray[Any], NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(vectors, weights)``: ``sum_i weights[i] * vectors[i]`` for vectors (n, d), weights (n,)."""
    rng = np.random.default_rng(8)

    def case(name: str, vectors: NDArray[Any], weights: NDArray[Any]) -> _Case:
        plain = (vectors.mean(axis=0), "it is the plain mean; multiply each vector by its weight first")
        return _Case(name, (vectors, weights), weights @ vectors, mistakes=(plain,))

    random_weights = rng.random(5)
    return _run(
        "weighted_average",
        fn,
        [
            case(
                "3 vectors of size 2",
                np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
                np.array([0.5, 0.25, 0.25]),
            ),
            case("all weight on the second vector", np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.0, 1.0])),
            case("one vector", np.array([[2.0, -1.0, 0.5]]), np.array([1.0])),
            case(
                "5 random vectors of size 4",
                rng.standard_normal((5, 4)),
                random_weights / random_weights.sum(),
            ),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Softmax

_STABLE_HINT = "did exp overflow or underflow? subtract each row's own maximum before exp"
_KEEPDIMS_HINT = (
    "x has several rows here: take each row's maximum and sum with axis=-1, keepdims=True, so that they "
    "broadcast against x"
)


def check_softmax(fn: Callable[[NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(x)``: the softmax of ``x`` along its last axis."""
    rng = np.random.default_rng(101)

    def case(name: str, x: NDArray[Any], hint: str = "") -> _Case:
        mistakes = []
        if x.ndim > 1:
            mistakes.append(
                (
                    softmax(x, axis=0),
                    "it is the softmax along axis 0; each row (the last axis) should sum to 1",
                )
            )
            whole = softmax(x.reshape(-1)).reshape(x.shape)
            mistakes.append(
                (whole, "it is normalised over the whole array; normalise each row (the last axis)")
            )
        return _Case(
            name,
            (x,),
            softmax(x),
            mistakes=tuple(mistakes),
            nonfinite_hint=hint,
            error_hint="" if x.ndim == 1 else _KEEPDIMS_HINT,
            error_when=("broadcast",),
        )

    return _run(
        "softmax",
        fn,
        [
            case("a vector of 3 scores", np.array([1.0, 2.0, 3.0])),
            case("2 rows of 4 scores", rng.standard_normal((2, 4)).round(2)),
            case("a batch of shape (2, 3, 5)", rng.standard_normal((2, 3, 5))),
            case("a length-1 row", np.array([[0.5], [-2.0]])),
            case("equal scores", np.zeros((2, 4))),
            case("large scores, 1000 to 1002", np.array([[1000.0, 1001.0, 1002.0]]), _STABLE_HINT),
            case("very negative scores, -1000 to -998", np.array([[-1000.0, -999.0, -998.0]]), _STABLE_HINT),
            case(
                "rows on very different scales",
                np.array([[0.0, 1.0, 2.0], [-1000.0, -999.0, -998.0]]),
                _STABLE_HINT,
            ),
        ],
    )


def check_softmax_temperature(fn: Callable[[NDArray[Any], float], Any]) -> CheckResult:
    """Check ``fn(x, temperature)``: the softmax of ``x / temperature`` along the last axis."""
    rng = np.random.default_rng(102)

    def case(name: str, x: NDArray[Any], tau: float, hint: str = "") -> _Case:
        mistakes = (
            (softmax(x), "it is the softmax of x itself; divide the scores by the temperature first"),
            (softmax(x * tau), "the scores were multiplied by the temperature; divide them by it"),
        )
        return _Case(
            name,
            (x, tau),
            softmax(x / tau),
            mistakes=mistakes,
            nonfinite_hint=hint,
            error_hint="" if x.ndim == 1 else _KEEPDIMS_HINT,
            error_when=("broadcast",),
        )

    return _run(
        "softmax with temperature",
        fn,
        [
            case("[1, 2, 3] at temperature 0.5", np.array([1.0, 2.0, 3.0]), 0.5),
            case("[1, 2, 3] at temperature 4", np.array([1.0, 2.0, 3.0]), 4.0),
            case("temperature 1 is the plain softmax", rng.standard_normal((2, 4)).round(2), 1.0),
            case("a batch of shape (2, 3, 5) at temperature 2", rng.standard_normal((2, 3, 5)), 2.0),
            case("scores up to 10 at temperature 0.01", np.array([[8.0, 9.0, 10.0]]), 0.01, _STABLE_HINT),
        ],
    )


def check_contextualize(fn: Callable[[NDArray[Any], NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(query, vectors)``: softmax of the dot-product scores ``vectors @ query``, then the weighted
    average of the rows of ``vectors``; query (d,), vectors (T, d), result (d,). Attention for one query,
    without scaling, with keys and values both equal to ``vectors``."""
    rng = np.random.default_rng(11)

    def case(name: str, query: NDArray[Any], vectors: NDArray[Any]) -> _Case:
        weights = softmax(vectors @ query)  # (T,)
        mistakes = (
            (vectors.mean(axis=0), "that is the plain mean; weight each row by the softmax of its score"),
            (
                (vectors @ query) @ vectors,
                "the raw scores were used as weights; apply the softmax to them first",
            ),
            (weights, "these are the weights; return the weighted average of the rows, weights @ vectors"),
        )
        return _Case(
            name, (query, vectors), weights @ vectors, mistakes=mistakes, nonfinite_hint=_STABLE_HINT
        )

    return _run(
        "contextualize",
        fn,
        [
            case("3 vectors of size 2", np.array([1.0, 0.0]), np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])),
            case("one vector", np.array([1.0, -2.0]), np.array([[3.0, 4.0]])),
            case("a zero query: equal scores", np.zeros(3), rng.normal(size=(4, 3))),
            case("scores above 1000", np.full(2, 30.0), np.array([[30.0, 30.0], [29.0, 30.0], [0.0, 1.0]])),
            case("6 random vectors of size 4", rng.normal(size=4), rng.normal(size=(6, 4))),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Scaled dot-product attention

_MATMUL_ERRORS = ("matmul", "cannot be multiplied", "mismatch")  # numpy's and torch's shape errors
_TRANSPOSE_HINT = (
    "the scores are q @ kᵀ: swap the last two axes of k with np.swapaxes(k, -1, -2); k.T reverses every "
    "axis, batch axes too"
)


def _scale_mistakes(
    attend: Callable[[float], NDArray[Any]], right: float, wrong: Sequence[tuple[float, str]], fix: str
) -> list[tuple[NDArray[Any], str]]:
    """Attention at each wrong scale, with the words for it (``wrong``: scale, 'scaling by 1/d_k'), then
    ``fix``. Scales equal to the right one for these shapes are left out; scales equal to each other share
    one explanation that names them all, so that no learner is told the wrong one."""
    groups: list[tuple[float, list[str]]] = []
    for scale, words in wrong:
        if math.isclose(scale, right):
            continue
        for known, names in groups:
            if math.isclose(known, scale):
                names.append(words)
                break
        else:
            groups.append((scale, [words]))
    return [
        (attend(scale), f"it matches {' or '.join(names)}{' (the same here)' if len(names) > 1 else ''}{fix}")
        for scale, names in groups
    ]


def _attention_mistakes(
    q: NDArray[Any],
    k: NDArray[Any],
    v: NDArray[Any],
    mask: NDArray[Any] | None = None,
    more_scales: Sequence[tuple[float, str]] = (),
) -> tuple[tuple[NDArray[Any], str], ...]:
    """What typical wrong attention functions return on these inputs, with the words for each mistake;
    ``more_scales`` adds wrong scales to the usual two (none, 1/d_k)."""
    d_k = q.shape[-1]
    weights = scaled_dot_product_attention(q, k, v, mask)[1]
    mistakes = _scale_mistakes(
        lambda scale: scaled_dot_product_attention(q, k, v, mask, scale=scale)[0],
        1 / math.sqrt(d_k),
        [(1.0, "attention without scaling"), (1 / d_k, "scaling by 1/d_k"), *more_scales],
        "; scale the scores by 1/√d_k",
    )
    mistakes.append(
        (weights, "these are the attention weights; return the output, weights @ v, or (output, weights)")
    )
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k)  # (..., T_q, T_k)
    if mask is None and scores.shape[-1] == scores.shape[-2]:
        wrong_axis = softmax(scores, axis=-2) @ v
        mistakes.append(
            (wrong_axis, "it matches a softmax over the queries (axis -2); take it over the keys (last axis)")
        )
    if mask is not None:
        inverted = scaled_dot_product_attention(q, k, v, ~mask)[0]
        mistakes.append(
            (inverted, "it matches the mask inverted; here True means the query may attend to the key")
        )
        after = (softmax(scores) * mask) @ v
        mistakes.append(
            (after, "it matches masking after the softmax; set masked scores to -inf before the softmax")
        )
        mistakes.append(
            (
                scaled_dot_product_attention(q, k, v)[0],
                "it matches attention without the mask; set the scores of masked keys to -inf before the "
                "softmax",
            )
        )
        mistakes.append(
            (
                softmax(scores * mask) @ v,
                "it matches multiplying the scores by the mask, which gives a masked key the score 0, not "
                "-inf; use np.where(mask, scores, -np.inf)",
            )
        )
    return tuple(mistakes)


def _attention_case(
    name: str,
    q: NDArray[Any],
    k: NDArray[Any],
    v: NDArray[Any],
    mask: NDArray[np.bool_] | None = None,
    hint: str = "",
) -> _Case:
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    allowed = None if mask is None else np.broadcast_to(mask, weights.shape)
    args = (q, k, v) if mask is None else (q, k, v, mask)
    return _Case(
        name,
        args,
        out,
        weights,
        allowed,
        2,
        _attention_mistakes(q, k, v, mask),
        hint,
        error_hint=_TRANSPOSE_HINT,
        error_when=_MATMUL_ERRORS,
    )


def check_attend_one(fn: Callable[[NDArray[Any], NDArray[Any], NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(q, K, V)``: attention for a single query, softmax(K q / √d_k) @ V; ``q`` (d_k,), ``K``
    (T_k, d_k), ``V`` (T_k, d_v), result (d_v,)."""
    rng = np.random.default_rng(21)

    def case(name: str, t_k: int, d_k: int, d_v: int) -> _Case:
        q, k, v = rng.standard_normal(d_k), rng.standard_normal((t_k, d_k)), rng.standard_normal((t_k, d_v))
        scores = k @ q  # (T_k,): the unscaled dot products q·k_j
        weights = softmax(scores / math.sqrt(d_k))  # (T_k,)
        mistakes = (
            *_scale_mistakes(
                lambda scale: softmax(scores * scale) @ v,
                1 / math.sqrt(d_k),
                [(1.0, "attention without scaling"), (1 / d_k, "scaling by 1/d_k")],
                "; scale the scores by 1/√d_k",
            ),
            (
                weights,
                "these are the weights over the keys; return the values averaged with them, the sum of "
                "weights[j] * V[j]",
            ),
            (
                v.mean(axis=0),
                "it matches the plain mean of the values; weight each value by its key's softmax",
            ),
        )
        return _Case(name, (q, k, v), weights @ v, mistakes=mistakes)

    return _run(
        "attend_one",
        fn,
        [
            case("T_k = 4 keys, d_k = 3, d_v = 2", 4, 3, 2),
            case("a single key, T_k = 1", 1, 5, 3),
            case("d_k = 1", 6, 1, 4),
            case("d_k = 64", 5, 64, 8),
        ],
    )


def check_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v)``: scaled dot-product attention, softmax(q kᵀ / √d_k) v, with no mask.

    ``q`` (..., T_q, d_k), ``k`` (..., T_k, d_k), ``v`` (..., T_k, d_v). ``fn`` returns the output, or
    ``(output, weights)``.
    """
    rng = np.random.default_rng(202)

    def r(*shape: int) -> NDArray[np.float64]:
        return rng.standard_normal(shape)

    return _run(
        "attention",
        fn,
        [
            _attention_case("3 positions, d_k = 4", r(3, 4), r(3, 4), r(3, 4)),
            _attention_case("cross-attention: 2 queries, 5 keys, d_v = 3", r(2, 4), r(5, 4), r(5, 3)),
            _attention_case("a length-1 sequence", r(1, 4), r(1, 4), r(1, 4)),
            _attention_case("d_k = 1", r(4, 1), r(4, 1), r(4, 2)),
            _attention_case("batch axes (2, 3)", r(2, 3, 4, 8), r(2, 3, 4, 8), r(2, 3, 4, 8)),
            _attention_case("large scores", 30 * r(3, 16), 30 * r(3, 16), r(3, 16), hint=_STABLE_HINT),
        ],
    )


def check_masked_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v, mask)``: scaled dot-product attention where ``mask``, broadcasting to
    (..., T_q, T_k), is True where a query may attend to a key. A query that may attend to no key must get
    zero weights and a zero output. ``fn`` returns the output, or ``(output, weights)``.
    """
    rng = np.random.default_rng(303)

    def r(*shape: int) -> NDArray[np.float64]:
        return rng.standard_normal(shape)

    arbitrary = np.array([[True, False, True, False], [False, True, True, True], [True, False, False, False]])
    fully = np.array([[True, False, False], [False, False, False], [True, True, True]])
    lengths = padding_mask([3, 5], 5)[:, None, :]  # (2, 1, 5)
    return _run(
        "masked attention",
        fn,
        [
            _attention_case("causal mask, T = 4", r(4, 4), r(4, 4), r(4, 4), causal_mask(4)),
            _attention_case("causal mask, T = 1", r(1, 4), r(1, 4), r(1, 4), causal_mask(1)),
            _attention_case("an arbitrary mask, 3 queries, 4 keys", r(3, 2), r(4, 2), r(4, 3), arbitrary),
            _attention_case(
                "padding mask, batch of 2, lengths 3 and 5", r(2, 5, 4), r(2, 5, 4), r(2, 5, 4), lengths
            ),
            _attention_case("d_k = 1, causal mask", r(3, 1), r(3, 1), r(3, 2), causal_mask(3)),
            _attention_case(
                "batch axes (2, 3), causal mask", r(2, 3, 4, 8), r(2, 3, 4, 8), r(2, 3, 4, 8), causal_mask(4)
            ),
            _attention_case(
                "large scores, causal mask",
                30 * r(3, 16),
                30 * r(3, 16),
                r(3, 16),
                causal_mask(3),
                _STABLE_HINT,
            ),
            _attention_case("a fully masked row (query 1)", r(3, 4), r(3, 4), r(3, 4), fully),
        ],
    )


_LAYOUT_HINT = (
    "each W is d_model × d: multiply on the right, x @ w_q; nn.Linear stores the transpose, d × d_model"
)
_TRANSPOSED_WORDS = (
    "it matches multiplying by the transposed matrices, x @ W.T (nn.Linear's layout); multiply on the right, "
    "x @ W"
)


def check_self_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, w_q, w_k, w_v)``: self-attention with Q = x W_Q, K = x W_K, V = x W_V.

    ``x`` (..., T, d_model), ``w_q`` and ``w_k`` (d_model, d_k), ``w_v`` (d_model, d_v). ``fn`` returns the
    output, or ``(output, weights)``.
    """
    rng = np.random.default_rng(404)

    def case(name: str, lead: tuple[int, ...], t: int, d_model: int, d_k: int, d_v: int) -> _Case:
        x = rng.standard_normal((*lead, t, d_model))
        w_q, w_k, w_v = (rng.standard_normal((d_model, d)) for d in (d_k, d_k, d_v))
        out, weights = self_attention(x, w_q, w_k, w_v)
        q, k, v = x @ w_q, x @ w_k, x @ w_v
        mistakes = [
            (self_attention(x, w_k, w_q, w_v)[0], "it matches W_Q and W_K swapped"),
            *_attention_mistakes(q, k, v, more_scales=[(1 / math.sqrt(d_model), "scaling by 1/√d_model")]),
        ]
        if d_model == d_k == d_v:  # with square matrices x @ W.T runs, and gives other numbers
            mistakes.append((self_attention(x, w_q.T, w_k.T, w_v.T)[0], _TRANSPOSED_WORDS))
        return _Case(
            name,
            (x, w_q, w_k, w_v),
            out,
            weights,
            mistakes=tuple(mistakes),
            error_hint=_LAYOUT_HINT,
            error_when=_MATMUL_ERRORS,
        )

    return _run(
        "self-attention",
        fn,
        [
            case("T = 4, d_model = 6, d_k = d_v = 3", (), 4, 6, 3, 3),
            case("d_k = 2, d_v = 5", (), 3, 4, 2, 5),
            case("a length-1 sequence", (), 1, 4, 3, 3),
            case("d_k = 1", (), 4, 3, 1, 2),
            case("a batch of 2", (2,), 3, 4, 4, 4),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# The softmax's Jacobian (lesson 02)


def _softmax_jacobian(p: NDArray[Any]) -> NDArray[Any]:
    """J[..., i, j] = p_i (δ_ij − p_j), the Jacobian ∂p_i/∂s_j of p = softmax(s): (..., n) -> (..., n, n)."""
    return p[..., :, None] * (np.eye(p.shape[-1]) - p[..., None, :])


def check_softmax_jacobian(fn: Callable[[NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(p)``: the Jacobian of the softmax from its output ``p`` (..., n), J_ij = p_i (δ_ij − p_j),
    of shape (..., n, n)."""
    rng = np.random.default_rng(31)

    def case(name: str, shape: tuple[int, ...], error_hint: str = "") -> _Case:
        p = softmax(rng.standard_normal(shape))  # (..., n): weights, positive and summing to 1
        diagonal = p[..., :, None] * np.eye(shape[-1])  # (..., n, n): diag(p)
        mistakes = (
            (diagonal, "it matches diag(p) alone; subtract p_i p_j from every entry"),
            (
                -p[..., :, None] * p[..., None, :],
                "it matches −p_i p_j everywhere; the diagonal also gets p_i (the δ_ij term)",
            ),
            (
                p[..., :, None] * (np.eye(shape[-1]) - p[..., :, None]),
                "it matches p_i (δ_ij − p_i), both p's as columns; make the second one a row, "
                "p[..., None, :], so that entry (i, j) subtracts p_i p_j",
            ),
            (
                p * (1 - p),
                "it matches the diagonal p_i (1 − p_i) alone, as a vector; return the full (..., n, n) "
                "matrix, with −p_i p_j off the diagonal",
            ),
            (
                _softmax_jacobian(softmax(p)),
                "it matches the Jacobian at softmax(p); p is already the softmax's output, use it as it is",
            ),
        )
        return _Case(name, (p,), _softmax_jacobian(p), mistakes=mistakes, error_hint=error_hint)

    return _run(
        "softmax_jacobian",
        fn,
        [
            case("p of shape (4,)", (4,)),
            case("a single weight, p of shape (1,)", (1,)),
            case(
                "a batch, p of shape (2, 3, 5)",
                (2, 3, 5),
                "p has batch axes here: n is p.shape[-1], and np.diag and np.outer take a single vector; "
                "build the matrices by broadcasting, with p[..., :, None] and p[..., None, :]",
            ),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Heads


def check_split_heads(fn: Callable[[NDArray[Any], int], Any]) -> CheckResult:
    """Check ``fn(x, n_heads)``: (B, T, d_model) -> (B, h, T, d_head), head i holding features i*d_head on."""

    def case(name: str, b: int, t: int, d: int, h: int) -> _Case:
        x = np.arange(b * t * d, dtype=np.float64).reshape(b, t, d)
        mistakes = (
            (
                x.reshape(b, h, t, d // h),
                "it is x.reshape(B, h, T, d_head); reshape to (B, T, h, d_head), then swap axes 1 and 2",
            ),
            (
                x.reshape(b, t, d // h, h).transpose(0, 3, 1, 2),
                "it splits the features the wrong way round; reshape to (B, T, h, d_head)",
            ),
            (
                x.reshape(b, t, h, d // h),
                "it is x.reshape(B, T, h, d_head); now swap axes 1 and 2, to put the heads before the "
                "positions",
            ),
            (
                x.reshape(b, t, h, d // h).transpose(0, 2, 3, 1),
                "it is (B, h, d_head, T), with the last two axes swapped too; use .transpose(0, 2, 1, 3)",
            ),
        )
        return _Case(name, (x, h), split_heads(x, h), mistakes=mistakes)

    return _run(
        "split_heads",
        fn,
        [
            case("B = 1, T = 2, d_model = 4, 2 heads", 1, 2, 4, 2),
            case("B = 2, T = 3, d_model = 6, 3 heads", 2, 3, 6, 3),
            case("one head", 2, 3, 4, 1),
            case("a length-1 sequence", 2, 1, 6, 2),
            case("d_head = 1", 1, 3, 4, 4),
        ],
    )


def check_merge_heads(fn: Callable[[NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(x)``: (B, h, T, d_head) -> (B, T, h*d_head), the inverse of split_heads."""

    def case(name: str, b: int, h: int, t: int, d_head: int) -> _Case:
        x = np.arange(b * h * t * d_head, dtype=np.float64).reshape(b, h, t, d_head)
        mistakes = (
            (x.reshape(b, t, h * d_head), "it is x.reshape(B, T, h*d_head); swap axes 1 and 2 first"),
            (
                x.swapaxes(1, 2),
                "it is (B, T, h, d_head): the axes are swapped; now reshape to (B, T, h*d_head)",
            ),
            (
                np.concatenate(list(np.moveaxis(x, 1, 0)), axis=1),
                "it puts the heads one after another along the positions; put them side by side along the "
                "features: swap axes 1 and 2, then reshape to (B, T, h*d_head)",
            ),
        )
        return _Case(name, (x,), merge_heads(x), mistakes=mistakes)

    return _run(
        "merge_heads",
        fn,
        [
            case("B = 1, 2 heads, T = 2, d_head = 2", 1, 2, 2, 2),
            case("B = 2, 3 heads, T = 4, d_head = 2", 2, 3, 4, 2),
            case("one head", 2, 1, 3, 4),
            case("a length-1 sequence", 2, 2, 1, 3),
            case("d_head = 1", 1, 4, 3, 1),
        ],
    )


def check_multi_head(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x_q, x_kv, w_q, w_k, w_v, w_o, n_heads)``: multi-head attention, no biases, no mask.

    ``x_q`` (B, T_q, d_model), ``x_kv`` (B, T_k, d_model), every ``w`` (d_model, d_model). ``fn`` returns the
    output (B, T_q, d_model), or ``(output, weights)`` with per-head weights (B, h, T_q, T_k).
    """
    rng = np.random.default_rng(505)

    def case(name: str, b: int, t_q: int, t_k: int, d: int, h: int) -> _Case:
        x_q = rng.standard_normal((b, t_q, d))
        x_kv = x_q if t_k == t_q else rng.standard_normal((b, t_k, d))
        w_q, w_k, w_v, w_o = (rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(4))
        out, weights = multi_head_attention(x_q, x_kv, w_q, w_k, w_v, w_o, h)
        q, k, v = x_q @ w_q, x_kv @ w_k, x_kv @ w_v
        split = (split_heads(q, h), split_heads(k, h), split_heads(v, h))  # (B, h, T, d_head) each
        heads = scaled_dot_product_attention(*split)[0]
        no_swap = scaled_dot_product_attention(*(a.reshape(b, h, -1, d // h) for a in (q, k, v)))[0]
        d_head = d // h
        mistakes = [
            (merge_heads(heads), "it matches leaving out the output projection W_O"),
            (
                no_swap.reshape(b, -1, d) @ w_o,
                "it matches reshaping to (B, h, T, d_head) without swapping the T and head axes",
            ),
            *_scale_mistakes(
                lambda scale: merge_heads(scaled_dot_product_attention(*split, scale=scale)[0]) @ w_o,
                1 / math.sqrt(d_head),
                [
                    (1.0, "attention without scaling"),
                    (1 / math.sqrt(d), "scaling by 1/√d_model"),
                    (1 / d, "scaling by 1/d_model"),
                    (1 / d_head, "scaling by 1/d_head"),
                ],
                "; scale each head by 1/√d_head",
            ),
            (
                scaled_dot_product_attention(q, k, v)[0] @ w_o,
                "it matches a single head of full width; split into n_heads heads",
            ),
            (
                multi_head_attention(x_q, x_kv, w_q.T, w_k.T, w_v.T, w_o.T, h)[0],
                _TRANSPOSED_WORDS,
            ),
            (
                weights,
                "these are the attention weights; return the output, or (output, weights)",
            ),
            (
                heads,
                "these are the heads' outputs; merge them to (B, T_q, d_model) and project with W_O",
            ),
        ]
        if t_k != t_q:
            mistakes.append(
                (
                    multi_head_attention(x_q, x_q, w_q, w_k, w_v, w_o, h)[0],
                    "it matches attending to x_q; the keys and values come from x_kv",
                )
            )
        return _Case(name, (x_q, x_kv, w_q, w_k, w_v, w_o, h), out, weights, mistakes=tuple(mistakes))

    return _run(
        "multi-head attention",
        fn,
        [
            case("self-attention, T = 3, d_model = 4, 2 heads", 1, 3, 3, 4, 2),
            case("cross-attention, 2 queries, 5 keys", 2, 2, 5, 6, 3),
            case("one head", 1, 3, 3, 4, 1),
            case("a length-1 sequence", 2, 1, 1, 4, 2),
            case("d_head = 1", 1, 3, 3, 4, 4),
            case("a batch of 3, 4 heads", 3, 4, 4, 8, 4),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Masks


def _causal_words(index: tuple[int, ...], expected: bool, where: str) -> str:
    i, j = index[-2:]
    if expected:
        return f"query {i} is blocked from key {j}, which it may see ({where} should be True)"
    return f"query {i} may attend to key {j}, a future position ({where} should be False)"


def check_causal_mask(fn: Callable[[int], Any]) -> CheckResult:
    """Check ``fn(t)``: a (t, t) boolean mask, True where query i may attend to key j, that is j <= i."""

    def case(t: int) -> _Case:
        mask = causal_mask(t)
        mistakes = (
            (
                ~mask,
                "the mask is inverted (True = blocked is nn.MultiheadAttention's convention); "
                "here True means may attend",
            ),
            (np.tri(t, k=-1, dtype=bool), "it leaves out the diagonal; each position may attend to itself"),
            (
                np.triu(np.ones((t, t), dtype=bool)),
                "it is the upper triangle, j >= i: each query sees the future; keep the lower one, j <= i",
            ),
        )
        return _Case(f"T = {t}", (t,), mask, mistakes=mistakes, mask_words=_causal_words)

    return _run("causal mask", fn, [case(4), case(1), case(2)])


def check_padding_mask(fn: Callable[[NDArray[Any], int], Any]) -> CheckResult:
    """Check ``fn(lengths, t)``: a (B, t) boolean mask, True at the real tokens, position j < lengths[b]."""

    def words(index: tuple[int, ...], expected: bool, where: str) -> str:
        b, j = index
        kind = ("a real token", "True") if expected else ("padding", "False")
        return f"position {j} of sequence {b} is {kind[0]} ({where} should be {kind[1]})"

    def case(name: str, lengths: list[int], t: int) -> _Case:
        mask = padding_mask(lengths, t)
        mistakes = (
            (~mask, "the mask is inverted; here True marks a real token"),
            (
                padding_mask(np.asarray(lengths) + 1, t),
                "it counts one position too many: position j is real when j < lengths[b], not when "
                "j <= lengths[b]",
            ),
        )
        return _Case(name, (np.array(lengths), t), mask, mistakes=mistakes, mask_words=words)

    return _run(
        "padding mask",
        fn,
        [
            case("lengths 2 and 4, t = 4", [2, 4], 4),
            case("one sequence of length 1, t = 3", [1], 3),
            case("lengths 3, 1 and 5, t = 5", [3, 1, 5], 5),
        ],
    )


# ----------------------------------------------------------------------------------------------------
# Order and positions (lesson 03)


@dataclass(frozen=True)
class _PermutationCase:
    """One call ``fn(layer, x, perm)`` of a permutation test and the answer it should give."""

    name: str
    args: tuple[Any, ...]
    expected: bool


def _check_permutation_case(fn: Callable[..., Any], case: _PermutationCase) -> None:
    """Raise :class:`_Problem` when ``fn`` on ``case`` does not return ``case.expected`` as a bool."""
    answer = _from_torch(_call(fn, case.args), "the answer")
    if isinstance(answer, np.ndarray) and answer.ndim == 0 and answer.dtype == np.bool_:
        answer = answer.item()  # a one-element answer from torch, (a == b).all(), is a bool too
    if answer is None:
        raise _Problem(
            "your function returned None instead of True or False (is a return statement missing?)"
        )
    if isinstance(answer, np.ndarray) and answer.ndim > 0:
        raise _Problem(
            f"your function returned an array of shape {_shape(answer.shape)}, expected True or False "
            "(np.allclose compares whole arrays and gives one bool)"
        )
    if not isinstance(answer, (bool, np.bool_)):
        raise _Problem(f"expected True or False, got {type(answer).__name__}")
    if bool(answer) != case.expected:
        hint = "; compare layer(x[perm]) with layer(x)[perm] using np.allclose" if case.expected else ""
        raise _Problem(f"your function returned {bool(answer)}, expected {case.expected}{hint}")


def _positional_mistakes(t: int, d_model: int) -> tuple[tuple[NDArray[Any], str], ...]:
    """What typical wrong sinusoidal encodings return for (t, d_model), with the words for each mistake."""
    pos = np.arange(t, dtype=np.float64)[:, None]  # (t, 1)
    even = np.arange(d_model) % 2 == 0  # (d_model,)
    pairs = pos / 10000.0 ** (np.arange(0, d_model, 2) / d_model)  # (t, d_model // 2): the right angles
    by_column = pos / 10000.0 ** (np.arange(d_model) / d_model)  # (t, d_model): exponent j/d_model
    by_pair = np.repeat(pos / 10000.0 ** (np.arange(d_model // 2) / d_model), 2, axis=1)  # exponent i/d_model
    right = sinusoidal_positions(t, d_model)
    return (
        (
            right.reshape(t, d_model // 2, 2)[..., ::-1].reshape(t, d_model),
            "it matches sine and cosine swapped; the sine goes in the even columns 2i, the cosine in the odd "
            "columns 2i + 1",
        ),
        (
            np.where(even, np.sin(by_column), np.cos(by_column)),
            "it matches the exponent j/d_model in column j; both columns of pair i use the same angle, "
            "pos / 10000^(2i/d_model)",
        ),
        (
            np.where(even, np.sin(by_pair), np.cos(by_pair)),
            "it matches the exponent i/d_model for pair i; use 2i/d_model",
        ),
        (
            np.concatenate([np.sin(pairs), np.cos(pairs)], axis=1),
            "it matches all the sines first, then all the cosines; interleave them, the sine of pair i in "
            "column 2i and its cosine in column 2i + 1",
        ),
    )


def check_positional_encoding(fn: Callable[[int, int], Any]) -> CheckResult:
    """Check ``fn(t, d_model)``: the sinusoidal positional encoding for an even ``d_model``, shape
    (t, d_model), with sin(pos / 10000^(2i/d_model)) in column 2i and the cosine of that angle in column
    2i + 1 (:func:`course.attention.sinusoidal_positions`)."""

    def case(name: str, t: int, d_model: int) -> _Case:
        expected = sinusoidal_positions(t, d_model)
        return _Case(name, (t, d_model), expected, mistakes=_positional_mistakes(t, d_model))

    return _run(
        "positional encoding",
        fn,
        [
            case("t = 4, d_model = 6", 4, 6),
            case("a single position, d_model = 2", 1, 2),
            case("t = 50, d_model = 16", 50, 16),
        ],
    )


def check_permutation_test(
    fn: Callable[[Callable[[NDArray[Any]], Any], NDArray[Any], NDArray[Any]], Any],
) -> CheckResult:
    """Check ``fn(layer, x, perm)``: True when permuting the rows of ``x`` permutes the rows of ``layer(x)``
    the same way, ``layer(x[perm])`` equal to ``layer(x)[perm]`` up to rounding, for this ``x`` and ``perm``;
    False otherwise. ``x`` (T, d), ``perm`` the indices 0 … T-1 in some order.

    The layers are two permutation-equivariant ones (self-attention; the same projection at every position)
    and two that are not (self-attention after adding sinusoidal positions; a running sum over positions).
    """
    rng = np.random.default_rng(606)
    t, d_model, d_k = 5, 8, 4
    x = rng.standard_normal((t, d_model))  # (T, d_model)
    w_q, w_k, w_v = (rng.standard_normal((d_model, d_k)) / math.sqrt(d_model) for _ in range(3))
    positions = sinusoidal_positions(t, d_model)  # (T, d_model)
    perm = np.array([1, 2, 0, 4, 3])  # a 3-cycle and a swap: its inverse is a different permutation

    def attend(z: NDArray[Any]) -> NDArray[Any]:
        return self_attention(z, w_q, w_k, w_v)[0]  # (T, d_k)

    def project(z: NDArray[Any]) -> NDArray[Any]:
        return np.tanh(z @ w_q)  # (T, d_k)

    def attend_with_positions(z: NDArray[Any]) -> NDArray[Any]:
        return attend(z + positions)  # the positions stay in place while the rows of z move

    def running_sum(z: NDArray[Any]) -> NDArray[Any]:
        return np.cumsum(z, axis=0)  # (T, d_model)

    def case(name: str, layer: Callable[[NDArray[Any]], NDArray[Any]], expected: bool) -> _PermutationCase:
        return _PermutationCase(name, (layer, x, perm), expected)

    return _run(
        "permutation test",
        fn,
        [
            case("self-attention", attend, True),
            case("the same projection at every position", project, True),
            case("self-attention after adding positions", attend_with_positions, False),
            case("a running sum over positions", running_sum, False),
        ],
        check=_check_permutation_case,
    )
