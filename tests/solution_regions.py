"""Read an instructor cell's solution regions, for the workbook tests (independent of `course.publishing`)."""

from __future__ import annotations

__all__ = ["BEGIN", "END", "split_regions"]

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def split_regions(source: str) -> tuple[list[str], list[list[str]]]:
    """The lines outside the solution regions, and the lines inside each region (markers excluded)."""
    outside: list[str] = []
    regions: list[list[str]] = []
    inside: list[str] | None = None
    for line in source.splitlines():
        if line.strip() == BEGIN:
            inside = []
        elif line.strip() == END:
            assert inside is not None, "END without BEGIN"
            regions.append(inside)
            inside = None
        elif inside is not None:
            inside.append(line)
        else:
            outside.append(line)
    assert inside is None, "BEGIN without END"
    return outside, regions
