"""The registry of question kinds: complete, in order, and a `Kind` reads as its bare name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bank_samples import RECALL

from course.bank import Kind, Question, load_bank
from course.bank import _bank as bank
from course.bank._kinds import KINDS, SPECS, KindSpec
from course.terminal.asking import ASKERS
from course.widgets._panel import CONTROLS


def test_every_kind_has_its_spec_in_registry_order() -> None:
    assert list(SPECS) == list(Kind)
    assert all(isinstance(spec, KindSpec) and spec.kind is kind for kind, spec in SPECS.items())
    assert KINDS == tuple(kind.value for kind in SPECS) == ("recall", "choice", "numeric", "code")
    assert bank.KINDS is KINDS
    assert all(type(name) is str for name in KINDS)


def test_every_hint_is_for_a_key_the_kind_refuses() -> None:
    kind_keys = {key for spec in SPECS.values() for key in spec.keys}
    for spec in SPECS.values():
        assert set(spec.hints) <= kind_keys - set(spec.keys), spec.kind


@pytest.mark.parametrize("kind", list(Kind))
def test_a_kind_reads_as_its_bare_name(kind: Kind) -> None:
    assert f"{kind}" == str(kind) == "%s" % kind == format(kind) == kind.value  # noqa: UP031
    assert f"{kind:>10}" == f"{kind.value:>10}"
    assert kind == kind.value and hash(kind) == hash(kind.value)
    assert kind.value in {kind} and Kind(kind.value) is kind
    assert json.dumps(kind) == json.dumps(kind.value)


def test_choice_formats_as_choice() -> None:
    assert f"{Kind.CHOICE}" == "choice"
    assert Kind.CHOICE == "choice"


def test_the_loader_gives_kind_members(tmp_path: Path) -> None:
    (tmp_path / "00-a.toml").write_text('lesson = "00"\n' + RECALL, encoding="utf-8")
    question = load_bank(tmp_path)["00-a"]
    assert question.kind is Kind.RECALL
    assert question == Question("00-a", "00", "recall", "P", "A", "E", "S", source="00-a.toml")
    with pytest.raises(TypeError) as caught:
        _ = question.correct_option
    assert str(caught.value) == "question '00-a' is a recall question; only choice questions have options"


def test_every_front_end_shows_every_kind() -> None:
    # A new kind needs its spec (above) and one function per front end: the terminal's and the widgets'.
    assert list(ASKERS) == list(Kind)
    assert sorted(CONTROLS) == sorted(Kind)
