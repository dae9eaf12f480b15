"""The README's example of a mistake that comes back, in JupyterLab and headless Chromium: lesson 05's
exercise (the cached attention of the learner's workbook) answered with a causal mask aligned top-left, as
``is_causal=True`` builds it. Under the checker's sentence the lesson says that the review brings back the
code card `causal_mask` tomorrow, and the progress file holds that nudge, due at the start of the next day.

Needs the system Chromium and the playwright package, as ``tests/browser/test_first_day.py`` (whose helpers
it uses).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import nbformat
import pytest

from browser import notebook as nb
from browser.test_first_day import keep_screenshot, lab_in_browser, open_notebook, require_browser
from course.progress import local_tz
from scheduler import Store, day_start

LESSON = "05-masked-self-attention.ipynb"
# The learner's answer to the exercise: right but for the mask, j <= i, the top-left alignment.
TOP_LEFT = """def my_cached_attention(x_new, k_cache, v_cache, w_q, w_k, w_v):
    k_all = np.concatenate([k_cache, x_new @ w_k])
    v_all = np.concatenate([v_cache, x_new @ w_v])
    i, j = np.arange(len(x_new))[:, None], np.arange(len(k_all))[None, :]
    allowed = j <= i
    out, _ = scaled_dot_product_attention(x_new @ w_q, k_all, v_all, allowed)
    return out, k_all, v_all


_ = check_cached_attention(my_cached_attention)"""
SHOWN = (
    "↻ Your review brings back the code card that practises this mistake tomorrow: `causal_mask` "
    "(lesson 05), to write again from memory."
)


@pytest.mark.browser
@pytest.mark.timeout(240, method="signal")
def test_a_top_left_mask_in_lesson_05s_exercise_brings_its_card_back_tomorrow(tmp_path: Path) -> None:
    require_browser()
    from playwright.sync_api import expect  # here: without playwright the test is skipped, not broken

    with lab_in_browser(tmp_path) as (lab, page, db):
        workbook = nbformat.read(tmp_path / "course" / "workbook" / LESSON, as_version=4)
        imports = next(cell for cell in workbook.cells if "from course.checkers import" in cell.source)
        exercise = next(cell for cell in workbook.cells if "check_cached_attention(" in cell.source)
        assert "raise NotImplementedError" in exercise.source  # the learner's copy: a stub to write
        cells = [nbformat.v4.new_code_cell(imports.source), nbformat.v4.new_code_cell(TOP_LEFT)]
        nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / "course" / "exercise.ipynb")
        open_notebook(lab, page, "exercise.ipynb", db)
        before = datetime.now(timezone.utc)
        nb.run_all(page)
        nb.wait_for_text(page, ".jp-OutputArea-output", "↻", timeout_ms=120_000)
        output = nb.current_panel(page).locator(".jp-OutputArea-output", has_text="↻")
        expect(output).to_have_text(
            re.compile(
                r"^✗ cached attention, case \d of \d \(.*\): .*aligned top-left.*\n"
                + re.escape(SHOWN)
                + r"\s*$",
                re.DOTALL,
            )
        )
        keep_screenshot(page, "brought-back", show=output)
        after = datetime.now(timezone.utc)
        with Store.open(db, create=False) as store:
            nudges = store.nudges()
        assert [(n.item_id, n.reason) for n in nudges] == [("05-code-causal-mask", "causal-top-left")]
        [nudge] = nudges
        assert before <= nudge.nudged_at <= after
        tomorrow = day_start(nudge.nudged_at, local_tz()) + timedelta(days=1)
        assert nudge.due == tomorrow
