"""Exercise checkers: call a learner's function on fixed cases and say, in one sentence, what is wrong.

``check_dot(dot)`` and the other ``check_*`` functions print that sentence and return a :class:`CheckResult`
(true when every case passes). The engine that runs the cases and words the sentence is
:mod:`course.checkers._engine`; the checkers live in one module per lesson: ``_warmup`` (00), ``_softmax``
(01), ``_attention`` (02), ``_self_attention`` (03), ``_heads`` (04), ``_masks`` (05), ``_uses`` (06),
``_block`` (07) and ``_cost`` (08).
"""

from __future__ import annotations

from course.checkers._attention import (
    check_attend_one,
    check_attention,
    check_fixed_attention,
    check_softmax_jacobian,
)
from course.checkers._block import check_causal_self_attention, check_layer_norm, check_pre_ln_block
from course.checkers._cost import check_causal_linear_attention, check_chunked_attention, check_window_mask
from course.checkers._engine import CheckResult
from course.checkers._heads import check_grouped_query, check_merge_heads, check_multi_head, check_split_heads
from course.checkers._masks import (
    check_causal_mask,
    check_decoding_mask,
    check_masked_attention,
    check_padding_mask,
)
from course.checkers._self_attention import (
    check_permutation_test,
    check_positional_encoding,
    check_rotary,
    check_self_attention,
)
from course.checkers._softmax import (
    check_contextualize,
    check_logsumexp,
    check_softmax,
    check_softmax_temperature,
)
from course.checkers._uses import check_cross_attention, check_decoder_attention
from course.checkers._warmup import check_dot, check_weighted_average

__all__ = [
    "CheckResult",
    "check_attend_one",
    "check_attention",
    "check_causal_linear_attention",
    "check_causal_mask",
    "check_causal_self_attention",
    "check_chunked_attention",
    "check_contextualize",
    "check_cross_attention",
    "check_decoder_attention",
    "check_decoding_mask",
    "check_dot",
    "check_fixed_attention",
    "check_grouped_query",
    "check_layer_norm",
    "check_logsumexp",
    "check_masked_attention",
    "check_merge_heads",
    "check_multi_head",
    "check_padding_mask",
    "check_permutation_test",
    "check_positional_encoding",
    "check_pre_ln_block",
    "check_rotary",
    "check_self_attention",
    "check_softmax",
    "check_softmax_jacobian",
    "check_softmax_temperature",
    "check_split_heads",
    "check_weighted_average",
    "check_window_mask",
]
