"""Write the README's benchmark figures from the benchmarks' result files (``benchmarks/results/``).

Run it from the repository root after a benchmark's default run: ``python benchmarks/figures.py`` rewrites
each block between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->`` in README.md from NAME.json, with the
benchmark's own ``readme_block``; ``--check`` changes nothing and exits 1, naming what differs, when a block
is not what its file makes or a file a result depends on has changed since it was made.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence

from _results import REPO, read_results, stale

__all__ = ["BENCHMARKS", "README", "block", "blocks", "problems", "rewritten"]

BENCHMARKS = ("prediction_bench", "optimal_retention", "retention_sim")
"""The benchmarks whose figures the README shows, each with a ``readme_block(figures) -> str``."""
README = REPO / "README.md"


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- {name}:begin -->\n)(.*?)([ \t]*<!-- {name}:end -->)", re.S)


def block(name: str) -> str:
    """The README block of benchmark ``name``, as its result file makes it."""
    return importlib.import_module(name).readme_block(read_results(name)).rstrip("\n") + "\n"


def blocks() -> dict[str, str]:
    """Each benchmark's README block, as its result file makes it."""
    return {name: block(name) for name in BENCHMARKS}


def rewritten(text: str, made: dict[str, str]) -> str:
    """``text`` with each benchmark's block replaced by ``made``'s; a ValueError when a block's markers are
    missing."""
    for name, block in made.items():
        pattern = _pattern(name)
        if not pattern.search(text):
            raise ValueError(f"README.md has no <!-- {name}:begin --> ... <!-- {name}:end --> block")
        text = pattern.sub(lambda m, block=block: m.group(1) + block + m.group(3), text)
    return text


def problems() -> list[str]:
    """What is out of date: a result made before a change to a file it depends on, a README block that
    differs from its result file."""
    found = [
        f"benchmarks/results/{name}.json is older than {', '.join(changed)}: rerun "
        f"python benchmarks/{name}.py, then python benchmarks/figures.py"
        for name in BENCHMARKS
        if (changed := stale(name))
    ]
    text = README.read_text(encoding="utf-8")
    made = blocks()
    for name, block in made.items():
        match = _pattern(name).search(text)
        if match is None or match.group(2) != block:
            found.append(
                f"README.md's {name} block is not what its result file makes: "
                "run python benchmarks/figures.py"
            )
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when out of date")
    args = parser.parse_args(argv)
    if args.check:
        found = problems()
        print("\n".join(found) if found else "The README's benchmark figures are up to date.")
        return 1 if found else 0
    README.write_text(rewritten(README.read_text(encoding="utf-8"), blocks()), encoding="utf-8")
    late = [name for name in BENCHMARKS if stale(name)]
    print("README.md's benchmark figures written" + (f"; rerun first: {', '.join(late)}" if late else "."))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "benchmarks"))
    raise SystemExit(main())
