"""A prediction that counts, in JupyterLab and headless Chromium (issue 37): in the learner's workbook, the
welcome's dot-product prompt answered wrong by keyboard, the cell run, its hidden check cell run; the check
cell and the widget show the prediction beside the result, the widget says it in its live region, the
progress file holds the prediction, and the card it names is in the next day's review. axe-core finds nothing
wrong in the widget or the check cell's output.

Needs the system Chromium and the playwright package, as ``tests/browser/test_first_day.py`` (whose helpers it
uses).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import nbformat
import pytest

from browser import notebook as nb
from browser.test_first_day import (
    keep_screenshot,
    lab_in_browser,
    no_violations,
    open_notebook,
    require_browser,
)
from course.progress import items, local_tz
from course.publishing._predictions import CHECK_LINE, notebook_predictions
from scheduler import Store, day_start, due_queue

PREDICTION = "00-predict-dot-product"
CARD = "00-dot-product-value"
REVEALED = re.compile(r"^You predicted: 10 \(not right\)\. Result: .*12\. The answer: 12\.$")

# Run the cell at `index` of the current notebook and select the next, as Shift+Enter on it does.
_RUN_CELL = """(index) => {
  const panel = window.jupyterapp.shell.currentWidget;
  panel.content.activeCellIndex = index;
  window.jupyterapp.commands.execute('notebook:run-cell-and-select-next');
  return true;
}"""


@pytest.mark.browser
@pytest.mark.timeout(240, method="signal")
def test_a_wrong_prediction_by_keyboard_is_shown_beside_the_result_and_brings_its_card_back(
    tmp_path: Path,
) -> None:
    require_browser()
    from playwright.sync_api import expect  # here: without playwright the test is skipped, not broken

    with lab_in_browser(tmp_path) as (lab, page, db):
        welcome = nbformat.read(tmp_path / "course" / "workbook" / "00-welcome.ipynb", as_version=4)
        [place] = [p for p in notebook_predictions(welcome.cells) if p.prediction_id == PREDICTION]
        assert place.widget is not None and place.check is not None
        imports = next(cell for cell in welcome.cells if "from course import" in cell.source)
        cells = [imports, *welcome.cells[place.prompt : place.check + 1]]  # the learner's copy, check hidden
        assert cells[-1].metadata["jupyter"] == {"source_hidden": True}
        nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / "course" / "predict.ipynb")
        open_notebook(lab, page, "predict.ipynb", db)
        panel = nb.current_panel(page)
        for index in (0, 1, 2):  # the imports, the prompt, the widget
            page.evaluate(_RUN_CELL, index)
        widget = panel.locator(".course-widget", has_text="Your prediction")
        widget.get_by_role("textbox").wait_for()
        nb.wait_math_typeset(page, ".course-widget .widget-htmlmath")
        check_cell = panel.locator(".jp-Cell").nth(len(cells) - 1)
        expect(check_cell.get_by_text("assert u @ v")).to_be_hidden()  # its source is collapsed
        expect(check_cell.locator(".jp-PlaceholderText")).to_have_text(CHECK_LINE)
        no_violations(page, ".course-widget")
        keep_screenshot(page, "before-commit", show=widget)

        before = datetime.now(timezone.utc)
        widget.get_by_role("textbox").focus()
        page.keyboard.type("10")
        page.keyboard.press("Tab")
        expect(widget.get_by_role("button", name="Commit", exact=True)).to_be_focused()
        page.keyboard.press("Enter")
        status = widget.get_by_role("status")
        expect(status).to_have_text("Committed: you predicted 10. Now run the next cell.")
        expect(widget.get_by_role("textbox")).to_be_disabled()
        expect(widget.get_by_role("button", name="Skip", exact=True)).to_be_disabled()
        after = datetime.now(timezone.utc)

        for index in range(3, len(cells)):  # the cell that computes, then the check cell
            page.evaluate(_RUN_CELL, index)
        nb.wait_for_text(page, ".jp-OutputArea-output", "You predicted: 10")
        shown = check_cell.locator(".jp-OutputArea-output")
        expect(shown).to_contain_text("You predicted: 10 (✗ not right). Result: ")
        expect(shown).to_contain_text("The answer: 12.")
        expect(status).to_have_text(REVEALED)  # said in the widget's live region
        expect(widget).to_contain_text("The answer: 12.")
        nb.wait_math_typeset(page, ".jp-OutputArea-output")
        no_violations(page, ".course-widget")
        no_violations(page, ".jp-OutputArea-output")
        keep_screenshot(page, "after-reveal", show=check_cell)

        with Store.open(db, create=False) as store:
            [made] = store.predictions()
            assert (made.item_id, made.answer, made.right) == (PREDICTION, "10", False)
            assert before <= made.predicted_at <= after
            [nudge] = store.nudges()
            tomorrow = day_start(made.predicted_at, local_tz()) + timedelta(days=1)
            assert (nudge.item_id, nudge.due) == (CARD, tomorrow)
            queue = due_queue(store, items(), tomorrow + timedelta(hours=1), local_tz())
            assert CARD in [item.id for item in queue]
