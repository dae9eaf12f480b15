"""Exercise checkers: call a learner's function on fixed cases and say, in one sentence, what is wrong.

``check_standardize(standardize)`` and the other ``check_*`` functions print that sentence and return a
:class:`CheckResult` (true when every case passes). The engine that runs the cases and words the sentence is
:mod:`course.checkers._engine` (its verdict, :class:`CheckResult`, is ``_result``'s); the checkers live in
one module per lesson: ``_warmup`` (00), ``_softmax`` (01), ``_attention`` (02), ``_self_attention`` (03),
``_heads`` (04), ``_masks`` (05, with ``_kv_cache`` for its key/value cache exercise), ``_uses`` (06),
``_block`` (07, with ``_layer_norm`` for LayerNorm), ``_cost`` (08) and ``_gpt`` (09); ``_bugs`` counts the
bugs left in a find-the-bug exercise. The code cards' checkers, ``check_card_*``, one short step of a lesson
each, stand beside their lesson's exercise checkers, in the same module; what they share is in
``_card_parts``.

A code question of the question bank is graded by one of these checkers. `run_code_limited` grades a
learner's code, in the notebook and the terminal alike: the code runs in a child process with a time and a
memory limit, the checker here, given a stand-in for the learner's function (`course.checkers._apart`).
`run_code` runs the code in this process: for the course's own code (solutions, starters) and the tests
(`course.checkers._running`). Both return a `CodeVerdict`.

A checker's sentence may name one of the typical mistakes listed in `MISTAKES` (`mistake_in`); a code card
lists those it practises, and a listener (`listen`, as `course.widgets` does) hears every verdict,
so that such a mistake brings the card back. A code card's own grading is `muted`.
"""

from __future__ import annotations

from course.checkers._apart import run_code_limited
from course.checkers._attention import (
    check_attention,
    check_card_attention,
    check_card_scaled_scores,
    check_card_softmax_backward,
    check_channels_first_attention,
    check_fixed_attention,
    check_query_gradient,
    check_softmax_jacobian,
)
from course.checkers._block import (
    check_card_feed_forward,
    check_causal_self_attention,
    check_pre_ln_block,
    check_pre_ln_decoder_block,
)
from course.checkers._cost import (
    check_card_linear_attention,
    check_card_online_softmax,
    check_card_sliding_window,
    check_causal_linear_attention,
    check_chunked_attention,
    check_sink_window_mask,
    check_window_mask,
)
from course.checkers._gpt import (
    check_card_bigram,
    check_card_lm_loss,
    check_card_lr_schedule,
    check_generate_cached,
    check_parameter_count,
    check_top_p,
)
from course.checkers._heads import (
    check_card_merge_heads,
    check_card_repeat_kv,
    check_card_split_heads,
    check_grouped_query,
    check_head_contributions,
    check_split_qkv,
)
from course.checkers._kv_cache import check_cached_attention
from course.checkers._layer_norm import (
    check_card_layer_norm,
    check_card_pre_ln_residual,
    check_card_pre_ln_stack,
    check_layer_norm,
    check_layer_norm_backward,
)
from course.checkers._listening import Listener, listen, muted, unlisten
from course.checkers._masks import (
    check_card_causal_mask,
    check_card_masked_softmax,
    check_card_padding_mask,
    check_causal_mask,
    check_decoding_mask,
    check_left_padded_attention,
    check_masked_attention,
    check_padding_mask,
    check_prefix_lm_mask,
)
from course.checkers._mistakes import MISTAKES, Mistake, mistake_in
from course.checkers._result import CheckResult
from course.checkers._running import CodeVerdict, run_code
from course.checkers._self_attention import (
    check_card_learned_positions,
    check_card_position_code,
    check_card_self_attention,
    check_positional_encoding,
    check_relative_attention,
    check_rotary,
    check_value_gradient,
)
from course.checkers._softmax import (
    check_card_softmax,
    check_card_softmax_temperature,
    check_card_weighted_average,
    check_cosine_attention,
    check_logsumexp,
    check_retemper,
    check_softmax,
    check_top_k_softmax,
)
from course.checkers._uses import (
    check_card_cross_attention,
    check_card_decoder_mask,
    check_card_use_mask,
    check_cross_attention,
    check_decoder_attention,
)
from course.checkers._warmup import check_log_product, check_standardize

__all__ = [
    "MISTAKES",
    "CheckResult",
    "CodeVerdict",
    "Listener",
    "Mistake",
    "check_attention",
    "check_cached_attention",
    "check_card_attention",
    "check_card_bigram",
    "check_card_causal_mask",
    "check_card_cross_attention",
    "check_card_decoder_mask",
    "check_card_feed_forward",
    "check_card_layer_norm",
    "check_card_learned_positions",
    "check_card_linear_attention",
    "check_card_lm_loss",
    "check_card_lr_schedule",
    "check_card_masked_softmax",
    "check_card_merge_heads",
    "check_card_online_softmax",
    "check_card_padding_mask",
    "check_card_position_code",
    "check_card_pre_ln_residual",
    "check_card_pre_ln_stack",
    "check_card_repeat_kv",
    "check_card_scaled_scores",
    "check_card_self_attention",
    "check_card_sliding_window",
    "check_card_softmax",
    "check_card_softmax_backward",
    "check_card_softmax_temperature",
    "check_card_split_heads",
    "check_card_use_mask",
    "check_card_weighted_average",
    "check_causal_linear_attention",
    "check_causal_mask",
    "check_causal_self_attention",
    "check_channels_first_attention",
    "check_chunked_attention",
    "check_cosine_attention",
    "check_cross_attention",
    "check_decoder_attention",
    "check_decoding_mask",
    "check_fixed_attention",
    "check_generate_cached",
    "check_grouped_query",
    "check_head_contributions",
    "check_layer_norm",
    "check_layer_norm_backward",
    "check_left_padded_attention",
    "check_log_product",
    "check_logsumexp",
    "check_masked_attention",
    "check_padding_mask",
    "check_parameter_count",
    "check_positional_encoding",
    "check_pre_ln_block",
    "check_pre_ln_decoder_block",
    "check_prefix_lm_mask",
    "check_query_gradient",
    "check_relative_attention",
    "check_retemper",
    "check_rotary",
    "check_sink_window_mask",
    "check_softmax",
    "check_softmax_jacobian",
    "check_split_qkv",
    "check_standardize",
    "check_top_k_softmax",
    "check_top_p",
    "check_value_gradient",
    "check_window_mask",
    "listen",
    "mistake_in",
    "muted",
    "run_code",
    "run_code_limited",
    "unlisten",
]
