"""``python -m course export-slides``: a lesson's slides as a page whose scripts, style sheets and MathJax
all lie beside it, so that the folder opens offline (its images inline); an unknown lesson named in one
line."""

from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

import course.publishing._export as export
from course.publishing import SlideExportError, export_slides, instructor_notebook
from course.terminal.cli import main

LESSON = "02-scaled-dot-product-attention"
NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / f"{LESSON}.ipynb"
MATHJAX_URL = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"


class _Loads(HTMLParser):
    """Every ``src`` of a script and ``href`` of a link, in page order."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = {"script": "src", "link": "href"}.get(tag)
        self.urls += [value for name, value in attrs if name == wanted and value is not None]


def loads(page: Path) -> list[str]:
    parser = _Loads()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.urls


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["export-slides", *args], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str, str]:
    folder = tmp_path_factory.mktemp("export") / "slides"
    return (folder, *run("02", "--out", str(folder)))


def test_the_command_says_where_it_wrote(exported: tuple[Path, int, str, str]) -> None:
    folder, status, out, err = exported
    assert (status, err) == (0, "")
    assert out == f"Wrote the slides to {folder / f'{LESSON}.html'} (the folder opens offline in a browser)\n"


def test_no_script_or_style_sheet_comes_from_the_network(exported: tuple[Path, int, str, str]) -> None:
    urls = loads(exported[0] / f"{LESSON}.html")
    assert [url for url in urls if re.match(r"https?://", url)] == []
    course_css = ["rise.css"] if (NOTEBOOK.parent / "rise.css").is_file() else []
    assert urls == [
        "reveal.js/dist/reveal.js",
        "reveal.js/plugin/notes/notes.js",
        "reveal.js/dist/reveal.css",
        MATHJAX_URL,
        "reveal.js/dist/theme/white.css",
        *course_css,
    ]


def test_what_the_page_loads_lies_beside_it(exported: tuple[Path, int, str, str]) -> None:
    folder = exported[0]
    missing = [url for url in loads(folder / f"{LESSON}.html") if not (folder / url.split("?")[0]).is_file()]
    assert missing == []
    assets = [
        "reveal.js/LICENSE",
        "reveal.js/dist/theme/fonts/source-sans-pro/source-sans-pro.css",  # white.css imports it
        "reveal.js/dist/theme/fonts/source-sans-pro/source-sans-pro-regular.woff",
        "mathjax/LICENSE",
        "mathjax/config/TeX-AMS-MML_HTMLorMML-full.js",
        "mathjax/config/Safe.js",
        "mathjax/extensions/Safe.js",
        "mathjax/jax/input/TeX/config.js",
        "mathjax/jax/output/HTML-CSS/fonts/STIX-Web/fontdata.js",
        "mathjax/fonts/HTML-CSS/STIX-Web/woff/STIXMathJax_Main-Regular.woff",
    ]
    assert [name for name in assets if not (folder / name).is_file()] == []
    assert not (folder / "mathjax" / "jax" / "output" / "SVG").exists()  # never loaded: left out


def test_reveal_takes_the_notebooks_rise_settings(exported: tuple[Path, int, str, str]) -> None:
    page = (exported[0] / f"{LESSON}.html").read_text(encoding="utf-8")
    rise = nbformat.read(NOTEBOOK, as_version=4).metadata["rise"]
    found = re.search(r"var settings = (\{.*?\});", page)
    assert found is not None
    assert json.loads(found.group(1)) == {
        "scroll": rise["scroll"],
        "slideNumber": rise["slideNumber"],
        "theme": rise["theme"],
        "transition": rise["transition"],
        "width": 1280,
        "height": 720,
    }


def test_the_figures_stay_inline(exported: tuple[Path, int, str, str]) -> None:
    page = (exported[0] / f"{LESSON}.html").read_text(encoding="utf-8")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    stored = "".join(
        "".join(output.get("data", {}).get("text/html", ""))
        for cell in notebook.cells
        for output in cell.get("outputs", [])
    )
    figures = stored.count('src="data:image/png;base64,')
    assert figures == 5  # the lesson's five figures, stored in its HTML outputs
    assert page.count('src="data:image/png;base64,') == figures
    assert re.findall(r"<img [^>]*src=\"(?!data:)", page) == []


def test_an_unknown_lesson_is_named_with_the_known_ones(tmp_path: Path) -> None:
    status, out, err = run("99", "--out", str(tmp_path / "slides"))
    assert (status, out) == (2, "")
    assert (
        err == "export-slides: unknown lesson '99' (known: 00, 01, 02, 03, 04, 05, 06, 07, 08, 09, review)\n"
    )
    assert not (tmp_path / "slides").exists()


def test_a_lesson_is_named_as_the_workbook_names_it() -> None:
    assert instructor_notebook("2") == instructor_notebook("02") == NOTEBOOK
    assert instructor_notebook("review").name == "review.ipynb"


def test_without_revealjs_installed_it_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = export.importlib.util.find_spec
    monkeypatch.setattr(
        export.importlib.util, "find_spec", lambda name: None if name == "sphinx_revealjs" else real(name)
    )
    with pytest.raises(SlideExportError) as raised:
        export_slides(NOTEBOOK, tmp_path)
    assert (
        str(raised.value)
        == "sphinx_revealjs is not installed: pip install sphinx-revealjs==3.2.1 (see requirements.txt)"
    )
