"""The lecture notebooks: committed clean, and each runs top to bottom headless."""
from __future__ import annotations

import json
import re
import subprocess

import pytest

from nbrun import ROOT, execute_notebook, lecture_notebooks, translated_lecture_notebooks

NOTEBOOKS = lecture_notebooks() + translated_lecture_notebooks()  # the Chinese run the same code, their strings translated


def tracked_notebooks() -> list[str]:
    listing = subprocess.run(["git", "ls-files", "*.ipynb"], cwd=ROOT, capture_output=True, text=True)
    return listing.stdout.split() or [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.ipynb")]


@pytest.mark.parametrize("relative_path", tracked_notebooks())
def test_notebook_is_committed_without_outputs(relative_path):
    """Is every committed notebook free of outputs, execution counts and widget state?"""
    notebook = json.loads((ROOT / relative_path).read_text(encoding="utf-8"))
    dirty = [i for i, cell in enumerate(notebook["cells"])
             if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count"))]
    assert not dirty, f"{relative_path}: cells {dirty} keep outputs; run `make strip`"
    assert "widgets" not in notebook.get("metadata", {}), f"{relative_path} keeps widget state; run `make strip`"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT).with_suffix("")) for p in NOTEBOOKS])
def test_lecture_notebook_runs_headless(path):
    """Does the chapter run top to bottom without a front end?"""
    execute_notebook(path)


LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT).with_suffix("")) for p in NOTEBOOKS])
def test_every_relative_link_leads_to_a_file(path):
    """Does each link of a markdown cell to another file of the course (a chapter, an exercise, a guide) resolve?"""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    targets = [target.split("#")[0] for cell in notebook["cells"] if cell["cell_type"] == "markdown"
               for target in LINK.findall("".join(cell["source"]))]
    broken = [t for t in targets if t and not re.match(r"[a-z]+:", t) and not (path.parent / t).exists()]
    assert broken == []
