"""Lesson 09's reference code (course.gpt) and its checkers: exact counts, the cache equal to recomputation
and to lesson 05's decode_step, the checkpoint, and each checker's typical mistakes, written as a learner
would write them, with their exact sentences."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from course.attention import decode_step
from course.checkers import check_generate_cached, check_parameter_count, check_top_p
from course.checkers._gpt import (
    GEN_ARGMAX,
    GEN_FIRST_POSITION,
    GEN_NEW_ONLY,
    GEN_NO_CACHE,
    GEN_RECOMPUTES,
    GEN_RESTARTS,
    GEN_TIMES_TEMPERATURE,
    PC_ATTENTION_3,
    PC_NO_BIASES,
    PC_NO_FFN_BIASES,
    PC_NO_FINAL_NORM,
    PC_NO_NORMS,
    PC_NO_POSITIONS,
    PC_OUTPUT_BIAS,
    PC_TIED_TWICE,
    TOPP_ASCENDING,
    TOPP_DROPS_CROSSING,
    TOPP_ONE_TOO_MANY,
    TOPP_SORTED,
    TOPP_UNNORMALISED,
)
from course.gpt import (
    GPT,
    CharVocab,
    GPTConfig,
    attend_cached,
    bigram_loss,
    evaluate_loss,
    flops_per_token,
    generate,
    load_checkpoint,
    load_text,
    lr_at,
    next_token_probs,
    parameter_count,
    save_checkpoint,
    top_k_logits,
    top_p_probs,
)

SMALL = GPTConfig(vocab=11, context=12, d_model=8, n_heads=2, n_layers=2, d_ff=16)


def _model(config: GPTConfig = SMALL, seed: int = 0) -> GPT:
    torch.manual_seed(seed)
    model = GPT(config).double()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.5)
    return model.eval()


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize(
    ("d_model", "heads", "layers", "d_ff"), [(8, 2, 1, 16), (64, 4, 2, 256), (12, 3, 3, 20)]
)
def test_the_parameter_formula_counts_the_model(
    d_model: int, heads: int, layers: int, d_ff: int, tied: bool
) -> None:
    config = GPTConfig(13, 16, d_model, heads, layers, d_ff, tied)
    assert parameter_count(config) == sum(p.numel() for p in GPT(config).parameters())


def test_gpt2_small_has_its_published_count() -> None:
    assert parameter_count(GPTConfig(50257, 1024, 768, 12, 12, 3072, tied=True)) == 124_439_808


def test_the_flop_formula_is_what_torch_counts() -> None:
    config = GPTConfig(78, 32, 16, 2, 2, 64)
    model = GPT(config)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(torch.zeros(1, 32, dtype=torch.long))
    assert counter.get_total_flops() == 32 * flops_per_token(config)


def test_decoding_with_the_cache_equals_one_full_pass() -> None:
    model = _model()
    tokens = torch.randint(0, 11, (2, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full, _ = model(tokens)
        logits, cache = model.decode(tokens[:, :5])  # a prefill of 5, then one at a time
        rows = [logits]
        for t in range(5, 12):
            logits, cache = model.decode(tokens[:, t : t + 1], cache)
            rows.append(logits)
    assert torch.allclose(torch.cat(rows, dim=1), full, atol=1e-12, rtol=0)
    assert cache[0].k.shape == (2, 2, 12, 4)
    with pytest.raises(ValueError, match="do not fit in the context of 12"):
        model.decode(tokens[:, :1], cache)


def test_attend_cached_is_lesson_05s_decode_step() -> None:
    model = _model()
    attn, d = model.blocks[0].attn, 8
    x = torch.randn(1, 6, d, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    w, b = attn.w_qkv.weight.detach().numpy(), attn.w_qkv.bias.detach().numpy()
    weights = {
        "w_q": w[:d].T,
        "w_k": w[d : 2 * d].T,
        "w_v": w[2 * d :].T,
        "w_o": attn.w_o.weight.detach().numpy().T,
    }
    biases = {"b_q": b[:d], "b_k": b[d : 2 * d], "b_v": b[2 * d :], "b_o": attn.w_o.bias.detach().numpy()}
    ours: Any = None
    theirs: Any = None
    for t in range(6):
        mine, ours = attend_cached(attn, x[:, t : t + 1], ours)
        want, theirs = decode_step(x[0, t : t + 1].numpy(), theirs, **weights, n_heads=2, **biases)
        assert np.abs(mine[0].detach().numpy() - want).max() < 1e-12


def test_generation_is_the_same_with_and_without_the_cache() -> None:
    model = _model()
    prompt = torch.tensor([1, 2, 3])
    for kwargs in ({"temperature": 0.7}, {"top_k": 3}, {"top_p": 0.8}):
        runs = [
            generate(model, prompt, 9, generator=torch.Generator().manual_seed(5), use_cache=c, **kwargs)
            for c in (True, False)
        ]
        assert torch.equal(runs[0], runs[1]) and runs[0].shape == (12,) and torch.equal(runs[0][:3], prompt)


def _greedy_by_hand(model: GPT, prompt: list[int], n_new: int) -> list[int]:
    """The argmax path, one full pass over the last ``context`` tokens per step."""
    tokens = list(prompt)
    with torch.no_grad():
        for _ in range(n_new):
            logits, _ = model(torch.tensor([tokens[-model.config.context :]]))
            tokens.append(int(logits[0, -1].argmax()))
    return tokens


def test_temperature_0_is_greedy_decoding() -> None:
    model = _model()
    generator = torch.Generator().manual_seed(5)
    state = generator.get_state()
    for use_cache in (True, False):
        out = generate(
            model, torch.tensor([1, 2, 3]), 9, temperature=0, generator=generator, use_cache=use_cache
        )
        assert out.tolist() == _greedy_by_hand(model, [1, 2, 3], 9)
    assert torch.equal(generator.get_state(), state)  # no draw
    probs = next_token_probs(torch.tensor([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]]), temperature=0)
    assert probs.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]  # all on the largest, the first if tied
    with pytest.raises(ValueError, match=r"^the temperature must be 0 \(greedy\) or more, not -1.0$"):
        generate(model, torch.tensor([1]), 2, temperature=-1.0)


def test_generation_goes_on_past_the_context() -> None:
    model = _model()  # context 12
    prompt = torch.tensor([1, 2, 3])
    runs = [
        generate(model, prompt, 20, generator=torch.Generator().manual_seed(5), use_cache=c)
        for c in (True, False)
    ]
    assert torch.equal(runs[0], runs[1]) and runs[0].shape == (23,) and torch.equal(runs[0][:3], prompt)
    assert generate(model, prompt, 20, temperature=0).tolist() == _greedy_by_hand(model, [1, 2, 3], 20)
    long_prompt = torch.arange(15) % 11  # longer than the context: its last 12 tokens are read
    out = generate(model, long_prompt, 4, temperature=0)
    assert out.tolist() == _greedy_by_hand(model, long_prompt.tolist(), 4)
    assert torch.equal(out[:15], long_prompt)
    with pytest.raises(ValueError, match=r"^n_new must be 0 or more, not -1$"):
        generate(model, prompt, -1)


def test_top_k_and_top_p_keep_what_they_should() -> None:
    logits = torch.tensor([1.0, 3.0, 2.0, 3.0])
    assert top_k_logits(logits, 2).tolist() == [-math.inf, 3.0, -math.inf, 3.0]
    probs = np.array([0.125, 0.5, 0.125, 0.25])
    assert top_p_probs(probs, 0.75).tolist() == [0.0, 2 / 3, 0.0, 1 / 3]  # exactly p: no more
    assert np.allclose(
        top_p_probs(probs, 0.76), [1 / 7, 4 / 7, 0.0, 2 / 7]
    )  # a tie at 0.125: the lower index
    assert top_p_probs(np.array([[0.9, 0.1], [0.2, 0.8]]), 0.5).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_the_bigram_loss_by_hand() -> None:
    train, val = torch.tensor([0, 1, 0, 1, 0]), torch.tensor([0, 1])
    # counts of 0 -> 1: 2, 0 -> 0: 0; add-one over a vocabulary of 2: p(1 | 0) = 3 / 4
    assert bigram_loss(train, val, 2) == pytest.approx(-math.log(3 / 4), abs=1e-15)


def test_the_learning_rate_warms_up_then_decays_to_its_floor() -> None:
    assert [lr_at(s, 1.0, 4, 12) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]
    assert lr_at(4, 1.0, 4, 12) == 1.0
    assert lr_at(8, 1.0, 4, 12) == pytest.approx(0.55)
    assert lr_at(12, 1.0, 4, 12) == lr_at(50, 1.0, 4, 12) == pytest.approx(0.1)


def test_the_vocabulary_round_trips_the_text() -> None:
    text = load_text()
    vocab = CharVocab.from_text(text)
    assert (len(text), len(vocab)) == (230_464, 78)
    assert vocab.decode(vocab.encode(text[:5000])) == text[:5000]


def test_the_checkpoint_loads_and_beats_the_baselines() -> None:
    model, vocab, info = load_checkpoint()
    data = vocab.encode(load_text())
    split = int(0.9 * len(data))
    val = evaluate_loss(model, data[split:])
    assert info["steps"] == 4000 and model.config == GPTConfig(78, 128, 64, 4, 2, 256)
    assert round(val, 3) == 1.820 and val < bigram_loss(data[:split], data[split:], 78) - 0.5


def _saved(
    tmp_path: Path, config: GPTConfig = SMALL, chars: str = "abcdefghijk"
) -> tuple[Path, dict[str, Any]]:
    """A small model's checkpoint saved in ``tmp_path``, and what it holds, to be altered and saved again."""
    path = tmp_path / "small.pt"
    save_checkpoint(_model(config), CharVocab(chars), path, steps=3)
    return path, torch.load(path, weights_only=True)


def test_a_checkpoint_round_trips(tmp_path: Path) -> None:
    path, _ = _saved(tmp_path)
    model, vocab, info = load_checkpoint(path, config=SMALL, vocab=CharVocab("abcdefghijk"))
    assert model.config == SMALL and vocab.chars == "abcdefghijk" and info == {"steps": 3}
    tied = GPTConfig(11, 12, 8, 2, 2, 16, tied=True)
    path, _ = _saved(tmp_path, tied)
    model, _, _ = load_checkpoint(path)
    assert model.config == tied and model.unembed.weight is model.embed.weight


def _altered(tmp_path: Path, change: Any) -> Path:
    path, saved = _saved(tmp_path)
    change(saved)
    torch.save(saved, path)
    return path


def test_a_checkpoint_of_another_shape_names_the_weight(tmp_path: Path) -> None:
    def wider_embedding(saved: dict[str, Any]) -> None:
        saved["state"]["embed.weight"] = torch.zeros(11, 10, dtype=torch.float16)

    path = _altered(tmp_path, wider_embedding)
    message = f"{path}: embed.weight has the shape (11, 10), the model {SMALL} needs (11, 8)"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        load_checkpoint(path)


def test_a_checkpoint_with_an_extra_or_a_missing_weight_names_it(tmp_path: Path) -> None:
    def extra(saved: dict[str, Any]) -> None:
        saved["state"]["blocks.2.norm1.weight"] = torch.ones(8, dtype=torch.float16)

    def missing(saved: dict[str, Any]) -> None:
        del saved["state"]["norm.bias"]

    path = _altered(tmp_path, extra)
    message = f"{path} holds weights this model does not have: blocks.2.norm1.weight"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        load_checkpoint(path)
    path = _altered(tmp_path, missing)
    with pytest.raises(ValueError, match=f"^{re.escape(f'{path} lacks weights this model has: norm.bias')}$"):
        load_checkpoint(path)


def test_a_checkpoint_whose_config_has_other_fields_names_them(tmp_path: Path) -> None:
    def unknown(saved: dict[str, Any]) -> None:
        saved["config"]["dropout"] = 0.1

    def lacking(saved: dict[str, Any]) -> None:
        del saved["config"]["tied"]

    path = _altered(tmp_path, unknown)
    message = f"{path}: its config has fields GPTConfig does not have: dropout"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        load_checkpoint(path)
    path = _altered(tmp_path, lacking)
    with pytest.raises(ValueError, match=f"^{re.escape(f'{path}: its config lacks the fields tied')}$"):
        load_checkpoint(path)


def test_a_checkpoint_whose_vocabulary_is_not_its_config_s_says_so(tmp_path: Path) -> None:
    def shorter(saved: dict[str, Any]) -> None:
        saved["chars"] = "abcdefghij"

    path = _altered(tmp_path, shorter)
    message = f"{path}: its vocabulary has 10 characters, its config vocab=11"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        load_checkpoint(path)


def test_a_checkpoint_that_is_not_the_one_asked_for_says_what_differs(tmp_path: Path) -> None:
    path, _ = _saved(tmp_path)
    wanted = GPTConfig(11, 16, 8, 2, 3, 16)
    message = f"{path} holds another model: context 12 (not 16), n_layers 2 (not 3)"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        load_checkpoint(path, config=wanted)
    message = f"{path} holds another vocabulary: 11 characters 'abcdefghijk', not 'abcdefghijK'"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        load_checkpoint(path, vocab=CharVocab("abcdefghijK"))


def test_a_file_that_is_not_a_checkpoint_says_so(tmp_path: Path) -> None:
    path = tmp_path / "weights.pt"
    torch.save({"embed.weight": torch.zeros(2, 2)}, path)
    keys = "['chars', 'config', 'info', 'state']"
    message = f"{path} is not a checkpoint of course.gpt: it holds ['embed.weight'], not {keys}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        load_checkpoint(path)


# -- the checkers ------------------------------------------------------------------------------------------


def _learner_generate(bug: str = "") -> Any:
    def fn(model: Any, prompt: Any, n_new: int, temperature: float, generator: Any) -> Any:
        tokens = prompt.tolist()
        logits, cache = model.decode(prompt[None], None)
        for step in range(n_new):
            row = logits[0, 0] if bug == "first" and step == 0 else logits[0, -1]
            scaled = row * temperature if bug == "times" else row / temperature
            probs = torch.softmax(scaled, dim=-1)
            token = (
                probs.argmax()[None] if bug == "argmax" else torch.multinomial(probs, 1, generator=generator)
            )
            tokens.append(int(token))
            if bug == "recompute":
                logits, cache = model.decode(torch.tensor([tokens]), cache)
            elif bug == "restart":
                logits, cache = model.decode(token[None], None)
            elif bug == "no cache":
                logits, _ = model(torch.tensor([tokens]))
            else:
                logits, cache = model.decode(token[None], cache)
        return torch.tensor(tokens[len(prompt) :] if bug == "new only" else tokens)

    return fn


def test_the_generation_checker(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_generate_cached(_learner_generate())
    for bug, words in [
        ("times", GEN_TIMES_TEMPERATURE),
        ("argmax", GEN_ARGMAX),
        ("first", GEN_FIRST_POSITION),
        ("recompute", GEN_RECOMPUTES),
        ("restart", GEN_RESTARTS),
        ("no cache", GEN_NO_CACHE),
    ]:
        result = check_generate_cached(_learner_generate(bug))
        assert not result and result.message.endswith(words + "."), (bug, result.message)
    result = check_generate_cached(_learner_generate("new only"))
    assert "the output has shape (8,), expected (11,)" in result.message
    assert GEN_NEW_ONLY  # named in the exercise's text instead: a shape problem is reported first
    capsys.readouterr()


def _learner_top_p(bug: str = "") -> Any:
    def fn(probs: Any, p: float) -> Any:
        order = np.argsort(probs if bug == "ascending" else -probs, axis=-1)
        ranked = np.take_along_axis(probs, order, axis=-1)
        total = np.cumsum(ranked, axis=-1)
        keep = {"crossing": total <= p, "one more": total - ranked <= p}.get(bug, total - ranked < p)
        kept = np.where(keep, ranked, 0.0)
        if bug != "unnormalised":
            kept = kept / kept.sum(axis=-1, keepdims=True)
        if bug == "sorted":
            return kept
        out = np.zeros_like(probs)
        np.put_along_axis(out, order, kept, axis=-1)
        return out

    return fn


@pytest.mark.parametrize(
    ("bug", "words"),
    [
        ("crossing", TOPP_DROPS_CROSSING),
        ("one more", TOPP_ONE_TOO_MANY),
        ("unnormalised", TOPP_UNNORMALISED),
        ("sorted", TOPP_SORTED),
        ("ascending", TOPP_ASCENDING),
    ],
)
def test_the_top_p_checker_names_each_mistake(
    bug: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert check_top_p(top_p_probs) and check_top_p(_learner_top_p())
    result = check_top_p(_learner_top_p(bug))
    assert not result and result.message.endswith(words + "."), result.message
    capsys.readouterr()


def _learner_count(bug: str = "") -> Any:
    def fn(vocab: int, context: int, d: int, layers: int, d_ff: int, tied: bool) -> int:
        biases = bug != "no biases"
        attention = (3 if bug == "attention 3" else 4) * d * d + (
            3 * d if bug == "attention 3" else 4 * d
        ) * biases
        ffn = 2 * d * d_ff + (d_ff + d) * (biases and bug != "no ffn biases")
        norms = 0 if bug == "no norms" else 4 * d
        final = 0 if bug in ("no norms", "no final") else 2 * d
        output = (0 if tied and bug != "tied twice" else vocab * d) + (vocab if bug == "output bias" else 0)
        positions = 0 if bug == "no positions" else context * d
        return vocab * d + positions + layers * (attention + ffn + norms) + final + output

    return fn


@pytest.mark.parametrize(
    ("bug", "words"),
    [
        ("no biases", PC_NO_BIASES),
        ("no ffn biases", PC_NO_FFN_BIASES),
        ("no norms", PC_NO_NORMS),
        ("no final", PC_NO_FINAL_NORM),
        ("no positions", PC_NO_POSITIONS),
        ("output bias", PC_OUTPUT_BIAS),
        ("attention 3", PC_ATTENTION_3),
    ],
)
def test_the_parameter_count_checker_names_each_mistake(
    bug: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert check_parameter_count(_learner_count())
    result = check_parameter_count(_learner_count(bug))
    assert not result and result.message.endswith(words + "."), result.message
    assert result.message.startswith("✗ parameter count, case 1 of 4")
    capsys.readouterr()


@pytest.mark.parametrize(
    ("bug", "message"),
    [
        (
            "no ffn biases",
            "✗ parameter count, case 1 of 4 (a small model: vocab 10, context 8, d_model 6, 3 layers, d_ff "
            "24): the output is 1620, expected 1710; it leaves out the feed-forward network's biases: d_ff "
            "for the first layer and d_model for the second, per block.",
        ),
        (
            "no norms",
            "✗ parameter count, case 1 of 4 (a small model: vocab 10, context 8, d_model 6, 3 layers, d_ff "
            "24): the output is 1626, expected 1710; it leaves out the LayerNorms: 2 d_model each (gamma and "
            "beta), two per block and the final one.",
        ),
    ],
)
def test_the_parameter_count_checker_tells_the_feed_forward_biases_from_the_norms(
    bug: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Both leave out 640 parameters of this lesson's model (2 layers, d_ff = 4 d_model); the first case
    # (3 layers) tells them apart, and an integer count gets no hint about fractions.
    counts = _learner_count(bug)
    assert counts(78, 128, 64, 2, 256, False) == _learner_count()(78, 128, 64, 2, 256, False) - 640
    result = check_parameter_count(counts)
    assert not result and result.message == message
    capsys.readouterr()


def test_the_parameter_count_checker_catches_a_tied_layer_counted_twice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = check_parameter_count(_learner_count("tied twice"))
    assert result.message == (
        "✗ parameter count, case 3 of 4 (the same, tied): the output is 118272, expected 113280; "
        + PC_TIED_TWICE
        + "."
    )
    capsys.readouterr()
