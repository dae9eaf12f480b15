"""A lesson's slides as a folder that opens offline: ``<lesson>.html`` (nbconvert's reveal slides, its images
inline) and beside it the reveal.js and MathJax 2.7 it loads, copied from two pip packages (sphinx-revealjs
ships reveal.js, jupyter-server-mathjax ships MathJax), so that nothing comes from the network.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import nbformat

from course.lessons import LESSONS
from course.publishing._workbook import INSTRUCTOR_DIR

__all__ = ["MATHJAX_DIR", "REVEAL_DIR", "SlideExportError", "export_slides", "instructor_notebook"]

REVEAL_DIR = "reveal.js"
MATHJAX_DIR = "mathjax"
_TEMPLATE = Path(__file__).resolve().parent / "slides_template"
_COURSE_CSS = INSTRUCTOR_DIR / "rise.css"  # caps cells' heights on a 1280 x 720 slide
# MathJax's config beside the page: jupyter-server-mathjax ships HTML-CSS output, not CHTML
_MATHJAX_URL = f"{MATHJAX_DIR}/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
# what the page's MathJax loads: all but the SVG output and the menu's other languages
_MATHJAX_LEFT_OUT = ("jax/output/SVG", "localization")
_REVEAL_FILES = ("LICENSE", "dist/reveal.js", "dist/reveal.css", "plugin/notes/notes.js")
_WIDTH, _HEIGHT = 1280, 720


class SlideExportError(Exception):
    """The slides cannot be written: an unknown lesson, or a package that holds reveal.js or MathJax is
    missing."""


def instructor_notebook(lesson: str) -> Path:
    """The instructor notebook of `lesson`, an id of `LESSONS` ("2" and "02" both give lesson 02)."""
    text = lesson.strip()
    found = f"{int(text):02d}" if text.isascii() and text.isdigit() else text
    if found not in LESSONS:
        raise SlideExportError(f"unknown lesson {lesson!r} (known: {', '.join(LESSONS)})")
    return INSTRUCTOR_DIR / LESSONS[found][1]


def _package_dir(package: str, inside: str, pin: str) -> Path:
    """`inside` the installed `package`, found without importing it (sphinx_revealjs would import Sphinx)."""
    spec = importlib.util.find_spec(package)
    found = None if spec is None or not spec.submodule_search_locations else spec.submodule_search_locations
    folder = Path(next(iter(found))) / inside if found else None
    if folder is None or not folder.is_dir():
        raise SlideExportError(f"{package} is not installed: pip install {pin} (see requirements.txt)")
    return folder


def _copy_reveal(theme: str, target: Path) -> None:
    source = _package_dir("sphinx_revealjs", "_static/revealjs", "sphinx-revealjs==3.2.1")
    themes = source / "dist" / "theme"
    if not (themes / f"{theme}.css").is_file():
        raise SlideExportError(f"reveal.js has no theme {theme!r} (metadata.rise.theme)")
    for name in (*_REVEAL_FILES, f"dist/theme/{theme}.css"):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, target / name)
    shutil.copytree(themes / "fonts", target / "dist" / "theme" / "fonts", dirs_exist_ok=True)


def _copy_mathjax(target: Path) -> None:
    source = _package_dir("jupyter_server_mathjax", "static", "jupyter-server-mathjax==0.2.6")

    def left_out(folder: str, names: list[str]) -> list[str]:
        here = Path(folder).relative_to(source)
        return [name for name in names if (here / name).as_posix() in _MATHJAX_LEFT_OUT]

    shutil.copytree(source, target, ignore=left_out, dirs_exist_ok=True)


def _reveal_settings(notebook: nbformat.NotebookNode) -> dict[str, Any]:
    """Reveal's settings from the notebook's ``metadata.rise`` (RISE's names), on a 1280 x 720 slide."""
    rise = notebook.metadata.get("rise", {})
    return {
        "scroll": bool(rise.get("scroll", False)),
        "slideNumber": rise.get("slideNumber", False),
        "theme": str(rise.get("theme", "white")),
        "transition": str(rise.get("transition", "slide")),
        "width": _WIDTH,
        "height": _HEIGHT,
    }


def export_slides(notebook_path: Path, out_dir: Path) -> Path:
    """Write `notebook_path`'s slides to ``out_dir/<stem>.html`` with the files it loads; return the page."""
    from nbconvert.exporters import SlidesExporter

    notebook = nbformat.read(notebook_path, as_version=4)
    settings = _reveal_settings(notebook)
    out_dir.mkdir(parents=True, exist_ok=True)
    _copy_reveal(settings["theme"], out_dir / REVEAL_DIR)
    _copy_mathjax(out_dir / MATHJAX_DIR)
    css = []
    if _COURSE_CSS.is_file():
        shutil.copyfile(_COURSE_CSS, out_dir / _COURSE_CSS.name)
        css.append(_COURSE_CSS.name)
    exporter = SlidesExporter(  # type: ignore[no-untyped-call]  # nbconvert's traitlets carry no types
        extra_template_basedirs=[str(_TEMPLATE.parent)],
        template_name=_TEMPLATE.name,
        reveal_url_prefix=REVEAL_DIR,
        reveal_theme=settings["theme"],
        reveal_transition=settings["transition"],
        reveal_scroll=settings["scroll"],
        reveal_width=str(_WIDTH),
        reveal_height=str(_HEIGHT),
        mathjax_url=_MATHJAX_URL,
    )
    resources = {"course_reveal": settings, "course_css": css, "metadata": {"name": notebook_path.stem}}
    body, _ = exporter.from_notebook_node(notebook, resources=resources)
    page = out_dir / f"{notebook_path.stem}.html"
    page.write_text(body, encoding="utf-8")
    return page
