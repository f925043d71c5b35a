"""(4) Each lecture notebook's headless run time, and the whole course's.

Each notebook runs top to bottom as the tests run it (``tests/nbrun.py``: nbclient, a fresh
kernel, ``SDPA_HEADLESS=1``, Agg).  The baseline is an empty notebook run the same way in
the same process, i.e. the kernel start-up every notebook pays.  Targets: every notebook
under 20 s, the whole course (the sum, run one after another) under 2 minutes.
Run alone: ``.venv/bin/python benchmarks/bench_notebooks.py``.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import nbformat

from timing import ROOT, header, row, verdict
from sdpa_course.chapters import CHAPTERS

sys.path.insert(0, str(ROOT / "tests"))
from nbrun import execute_notebook, lecture_notebooks  # noqa: E402

TARGET_EACH = 20.0
TARGET_TOTAL = 120.0


def empty_notebook_seconds() -> float:
    """Headless run time of a notebook with one empty cell: the kernel's start-up and shut-down."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "empty.ipynb"
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")])
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(notebook, path)
        return execute_notebook(path)[1]


def run_one(path: Path, baseline: float) -> float | None:
    """Seconds for one notebook, printed with its verdict; None (and the error) if it fails."""
    try:
        seconds = execute_notebook(path)[1]
    except Exception as error:  # a failing notebook is reported, the others still run
        row(path.name, f"ERROR: {type(error).__name__}: {str(error).strip().splitlines()[-1][:80]}")
        return None
    row(path.name, f"{seconds:5.1f} s = {seconds / baseline:4.1f}x empty", f"< {TARGET_EACH:.0f} s",
        verdict(seconds, TARGET_EACH))
    return seconds


def main(argv=None) -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    header("(4) lecture notebooks, headless (nbclient), one after another")
    baseline = empty_notebook_seconds()
    row("baseline: an empty notebook", f"{baseline:5.1f} s")
    found = {path.name for path in lecture_notebooks()}
    for chapter in CHAPTERS:
        if Path(chapter.notebook).name not in found:
            row(Path(chapter.notebook).name, "skipped: does not exist yet")
    times = [run_one(path, baseline) for path in lecture_notebooks()]
    measured = [t for t in times if t is not None]
    if not measured:
        row("whole course", "skipped: no lecture notebook ran")
        return
    total = sum(measured)
    complete = "" if len(measured) == len(times) else f" ({len(times) - len(measured)} failed, not counted)"
    row(f"whole course, {len(measured)} notebooks{complete}", f"{total:5.1f} s = {total / baseline:4.1f}x empty",
        f"< {TARGET_TOTAL:.0f} s", verdict(total, TARGET_TOTAL))


if __name__ == "__main__":
    main()
