#!/usr/bin/env python3
"""Remove outputs, execution counts and widget state from notebooks (nbgrader metadata is kept).

    python scripts/strip_outputs.py [paths...]   # default: every notebook tracked or not under the repo
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
SKIPPED_PARTS = {".venv", ".ipynb_checkpoints", "artifacts", "build"}


def strip(path: Path) -> bool:
    """Strip one notebook in place; return True if it changed."""
    notebook = nbformat.read(path, as_version=4)
    changed = notebook.metadata.pop("widgets", None) is not None
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        if cell.outputs or cell.execution_count is not None:
            cell.outputs, cell.execution_count, changed = [], None, True
        for key in ("execution", "collapsed", "scrolled"):
            changed |= cell.metadata.pop(key, None) is not None
    if changed:
        nbformat.write(notebook, path)
    return changed


def notebooks(paths: list[str]) -> list[Path]:
    if paths:
        return [Path(p) for p in paths]
    return sorted(p for p in ROOT.rglob("*.ipynb") if not SKIPPED_PARTS & set(p.relative_to(ROOT).parts))


if __name__ == "__main__":
    for path in notebooks(sys.argv[1:]):
        if strip(path):
            print(f"stripped {path}")
