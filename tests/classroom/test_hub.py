"""A class on a real JupyterHub: three learners and their instructor log in through the hub's login form in
Chromium, each gets their own JupyterLab server (a local process). Each learner answers the first question
of lesson 00's quiz; the instructor starts a live review on the projector widget, each learner's `live()`
widget shows the question (pushed by the widget's background check, no click), each answers, the projector
counts three answers and reveals, and each learner sees the verdict; the instructor's class report widget,
read from the class database (a real PostgreSQL), counts all three. The learners reach the database through
the class service (`python -m scheduler.service`, hub-managed, behind the hub's proxy), with nothing but their
server's token; the instructor with their own role.

Needs JupyterHub (requirements-test.txt), configurable-http-proxy (npm; `.ci/run` installs it on CI), the
system Chromium with the playwright package, and PostgreSQL: see tests/hub_server.py, tests/browser/ and
tests/postgres_server.py. Without them the test is skipped, except on CI (``CI`` set), where it fails.
Run alone with ``pytest -o addopts="" -p no:nbval tests/classroom/test_hub.py``;
``COURSE_BROWSER_SCREENSHOT=DIR`` keeps screenshots of each learner's login, quiz and answer.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import hub_server
import pytest
from browser import chromium
from browser import notebook as nb
from browser.test_first_day import (
    answer_right,
    keep_screenshot,
    no_violations,
    require_browser,
    right_option_name,
)
from hub_server import PASSWORD, HubServer, require_hub, write_notebook
from postgres_server import PostgresServer, free_port, learner_password

from course import Question, load_bank
from course.classroom import class_report, live_questions
from scheduler import Rating, State, postgres

LEARNERS = ("ana", "ben", "chloe")
INSTRUCTOR = "teacher"
NOTEBOOK = "quiz.ipynb"  # in each learner's home: their server's root
QUIZ_CELL = 'from course.widgets import quiz\nquiz("00")'
LIVE_CELL = "from course.widgets import live\nlive()"
CLASS_NOTEBOOK = "class.ipynb"  # in the instructor's home
PROJECTOR_CELL = 'from course.widgets import class_report_view, live_projector\nlive_projector("01")'
REPORT_CELL = "class_report_view()"
LIVE_LESSON = "01"


SERVICE = "class_service"
# The class service as a hub-managed service; every user's server token may reach it (docs/classroom.md).
SERVICE_CONFIG = """
c.JupyterHub.services = [
    {{
        "name": "course",
        "url": "http://127.0.0.1:{port}",
        "command": {command!r},
        "environment": {{"PGPASSWORD": {password!r}}},
    }},
]
c.JupyterHub.load_roles = [{{"name": "user", "scopes": ["self", "access:services!service=course"]}}]
c.Spawner.server_token_scopes = [
    "users:activity!user", "access:servers!server", "access:services!service=course"
]
"""


@pytest.fixture
def class_urls(postgres_server: PostgresServer) -> dict[str, str]:
    """A class database: the three learners and the instructor, each with their own role and password (the
    test reads their rows with them), and the class service's role (``SERVICE``: its URL without password)."""
    database = postgres_server.create_database()
    admin = postgres_server.admin_url(database)
    postgres.install(admin)
    for name in LEARNERS:
        postgres.add_learner(admin, name, password=learner_password(name))
    postgres.add_instructor(admin, INSTRUCTOR, password=learner_password(INSTRUCTOR))
    postgres.add_service(admin, SERVICE, password=learner_password(SERVICE))
    urls = {name: postgres_server.learner_url(database, name) for name in (*LEARNERS, INSTRUCTOR)}
    return {**urls, SERVICE: postgres_server.url(SERVICE, None, database)}


@contextlib.contextmanager
def hub_in_browser(tmp_path: Path, urls: dict[str, str]) -> Iterator[tuple[HubServer, Any]]:
    """A hub whose learners' servers reach the class database through the class service, a hub-managed
    service (their ``COURSE_DB`` is its URL, their token their server's), each with the quiz notebook in
    their home; the instructor's server uses the database as themselves; and a Chromium to open one context
    per learner in.

    Always cleans up: the browser, then the hub (its users' servers, their kernels and the proxy with it).
    """
    from playwright.sync_api import sync_playwright

    everyone = (*LEARNERS, INSTRUCTOR)
    command = [sys.executable, "-m", "scheduler.service", "--db", urls[SERVICE], "--connections", "3"]
    extra = SERVICE_CONFIG.format(port=free_port(), command=command, password=learner_password(SERVICE))
    hub = HubServer(tmp_path / "hub", {name: {"COURSE_DB": urls[name]} for name in everyone}, extra)
    for name in LEARNERS:
        hub.set_environment(name, "COURSE_DB", hub.url("/services/course/"))
    for name in LEARNERS:
        write_notebook(hub.home(name) / NOTEBOOK, QUIZ_CELL, LIVE_CELL)
    write_notebook(hub.home(INSTRUCTOR) / CLASS_NOTEBOOK, PROJECTOR_CELL, REPORT_CELL)
    with sync_playwright() as playwright:
        browser = None
        try:
            hub.start()
            browser = chromium.launch(playwright)  # while the hub boots
            hub.wait_ready()
            yield hub, browser
        except BaseException:
            print(f"JupyterHub log ({hub.log_path}), last lines:\n{hub.log_tail()}")
            raise
        finally:
            if browser is not None:
                browser.close()
            hub.stop()


def new_page(browser: Any) -> Any:
    """A page in a browser context of its own: its own cookies, so its own hub login."""
    return browser.new_context(viewport={"width": 1280, "height": 900}).new_page()


def login(page: Any, hub: HubServer, user: str) -> None:
    """Log in through the hub's login form; the hub starts the user's server (not waited for here)."""
    page.goto(hub.url("/hub/login"))
    page.get_by_label("Username:").fill(user)
    page.get_by_label("Password:").fill(PASSWORD)
    keep_screenshot(page, f"{user}-login")
    page.locator("#login_submit").click()
    page.wait_for_url(lambda url: "/hub/login" not in url, timeout=30_000)


def open_user_notebook(page: Any, hub: HubServer, user: str, path: str, expected_db: str) -> None:
    """Once the user's server runs (the hub sends the page to its Lab), open `path` in it and wait for the
    kernel; check the kernel's environment while at it."""
    page.wait_for_url(lambda url: f"/user/{user}/lab" in url, timeout=120_000)
    page.goto(hub.url(f"/user/{user}/lab/tree/{path}"))
    nb.wait_kernel_idle(page, path, timeout_ms=60_000)
    seen = nb.kernel_exec(
        page,
        "import os, sys\nprint(sys.prefix)\nprint(os.environ['JUPYTERHUB_USER'])\n"
        "print(os.environ['COURSE_DB'])",
    )
    assert seen.splitlines() == [sys.prefix, user, expected_db], (
        "the kernel runs in this environment, for this hub user, with their class database"
    )


def show_quiz(page: Any) -> Any:
    """Run the notebook (its one cell shows the quiz); the quiz's output, once its first question shows."""
    nb.run_all(page)
    nb.wait_for_text(page, ".jp-OutputArea-output", "Quiz: lesson 00", timeout_ms=60_000)
    quiz = page.locator(".jp-OutputArea-output", has_text="Quiz: lesson 00")
    quiz.get_by_text("Question 1 / ").wait_for()
    nb.wait_math_typeset(page, ".widget-htmlmath")
    return quiz


def answer_first_question(page: Any, quiz: Any, question: Question) -> None:
    """Answer the quiz's first question (`question`) right, and wait for the widget to say it was saved."""
    answer_right(page, quiz, question)
    quiz.get_by_text("Previous question: Saved: Good.").wait_for()


def join_live(page: Any) -> Any:
    """The learner's live widget (the notebook's second cell), waiting for the instructor."""
    nb.wait_for_text(page, ".jp-OutputArea-output", "Waiting for your instructor", timeout_ms=60_000)
    return page.locator(".jp-OutputArea-output", has_text="Live class review")


def answer_live(page: Any, widget: Any, question: Question) -> str:
    """Once the question shows in the learner's live widget (pushed by its background check), click its right
    option; the label it had. Waits for the widget to say it was sent."""
    button = widget.get_by_role("button", name=right_option_name(question))
    button.wait_for(timeout=30_000)
    label = button.get_attribute("title") or ""
    button.click()
    widget.get_by_text("You can change it until the answer is revealed.").first.wait_for()  # and its status
    return label.split(":")[0].removeprefix("Answer ")


def start_projector(page: Any) -> Any:
    """Run the instructor's notebook (the projector, then the class report) and press Start."""
    nb.run_all(page)
    nb.wait_for_text(page, ".jp-OutputArea-output", "Press Start to begin", timeout_ms=60_000)
    nb.wait_for_text(page, ".jp-OutputArea-output", "Class report", timeout_ms=60_000)
    # found by its Reveal button: its title changes once the session starts
    projector = page.locator(".jp-OutputArea-output").filter(has=page.get_by_role("button", name="Reveal"))
    projector.get_by_role("button", name="Start", exact=True).click()
    projector.get_by_text("0 answered").wait_for(timeout=30_000)
    return projector


@pytest.mark.browser
@pytest.mark.timeout(300, method="signal")
def test_three_learners_on_a_hub_quiz_join_a_live_review_and_show_in_the_class_report(
    tmp_path: Path, class_urls: dict[str, str]
) -> None:
    require_hub()
    require_browser()
    bank = load_bank()
    first = bank.questions("00")[0]
    asked = live_questions(bank, [LIVE_LESSON])[0]  # the projector asks its lesson's questions in order
    assert asked.kind == "choice"
    with hub_in_browser(tmp_path, class_urls) as (hub, browser):
        pages = {name: new_page(browser) for name in (*LEARNERS, INSTRUCTOR)}
        for name, page in pages.items():  # every login first: the hub starts the four servers together
            login(page, hub, name)
        for name in LEARNERS:
            open_user_notebook(pages[name], hub, name, NOTEBOOK, hub.url("/services/course/"))
        open_user_notebook(pages[INSTRUCTOR], hub, INSTRUCTOR, CLASS_NOTEBOOK, class_urls[INSTRUCTOR])
        quizzes = {name: show_quiz(pages[name]) for name in LEARNERS}
        for name in LEARNERS:
            keep_screenshot(pages[name], f"{name}-quiz")
            answer_first_question(pages[name], quizzes[name], first)
            keep_screenshot(pages[name], f"{name}-saved")
        lives = {name: join_live(pages[name]) for name in LEARNERS}
        projector = start_projector(pages[INSTRUCTOR])
        labels = {name: answer_live(pages[name], lives[name], asked) for name in LEARNERS}
        assert len(set(labels.values())) == 1, "every learner sees the projector's letters"
        projector.get_by_text("3 answered").wait_for(timeout=30_000)  # the projector's own background check
        keep_screenshot(pages[INSTRUCTOR], "projector-answers")
        projector.get_by_role("button", name="Reveal", exact=True).click()
        projector.get_by_text(f"Answer: {labels['ana']}.").first.wait_for()
        for name in LEARNERS:
            lives[name].get_by_text(f"✓ Right: {labels[name]}.").first.wait_for(timeout=30_000)
            keep_screenshot(pages[name], f"{name}-live-revealed")
        keep_screenshot(pages[INSTRUCTOR], "projector-revealed")
        no_violations(pages["ana"], ".jp-OutputArea-output")  # her quiz and live widgets, answered
        no_violations(pages[INSTRUCTOR], ".jp-OutputArea-output")  # the projector and the class report
        report = pages[INSTRUCTOR].locator(".jp-OutputArea-output", has_text="Class report")
        report.get_by_role("button", name="Refresh", exact=True).click()
        report.get_by_text("3 learners answered").first.wait_for(timeout=30_000)
        keep_screenshot(pages[INSTRUCTOR], "class-report")
    assert (hub.stray, hub.left_over_pids()) == ([], []), "the hub stops its servers, kernels and proxy"

    records = postgres.class_records(class_urls[INSTRUCTOR])
    assert sorted(records.answers) == list(LEARNERS)
    for name in LEARNERS:
        mine = [(answer.item_id, answer.rating, answer.state_before) for answer in records.answers[name]]
        assert mine == [(first.id, Rating.GOOD, State.NEW)], name  # the live answer is not in the schedule
        assert sorted(records.due_times[name]) == [first.id], name
        assert sorted(postgres.class_records(class_urls[name]).answers) == [name]  # their rows alone
    report_now = class_report(
        records.answers, records.due_times, bank, datetime.now(timezone.utc), timezone.utc
    )
    assert report_now.learners == 3
    assert [(row.question_id, row.learners, row.answers, row.misses) for row in report_now.questions] == [
        (first.id, 3, 3, 0)
    ]
    assert [(row.lesson, row.learners, row.answers, row.misses) for row in report_now.lessons] == [
        ("00", 3, 3, 0)
    ]
    with postgres.LiveRoom.open(class_urls[INSTRUCTOR]) as room:
        session = room.state()
        assert session is not None and (session.instructor, session.position) == (INSTRUCTOR, 1)
        answers = room.answers(session.session, 1)
    assert answers.counts == {str(asked.correct_option): 3}


@pytest.mark.parametrize("ci", ["", "1"])
def test_a_missing_proxy_skips_locally_and_fails_on_ci(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ci: str
) -> None:
    monkeypatch.setattr("hub_server.shutil.which", lambda name: None)
    monkeypatch.setattr(hub_server, "PROXY_FOLDER", tmp_path / "proxy")
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(outcome) as raised:
        require_hub({"CI": ci})
    assert raised.value.msg == (
        "configurable-http-proxy not found: `npm install --prefix .ci/proxy configurable-http-proxy` "
        "(needs node: `apt-get install nodejs npm` on Debian) to run the hub test"
    )


def test_a_missing_jupyterhub_package_gives_its_own_advice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hub_server.importlib.util.find_spec", lambda name: None)
    with pytest.raises(pytest.fail.Exception) as raised:
        require_hub({"CI": "1"})
    assert raised.value.msg == (
        "JupyterHub not found: `pip install -r requirements-test.txt` to run the hub test"
    )
