"""Run a notebook headless the way the tests and benchmarks do (nbclient, no front end)."""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[1]
# Headless: static figures instead of widgets; the quiz's wrong-answer book goes to a scratch file,
# never the learner's own.
HEADLESS_ENV = {"SDPA_HEADLESS": "1", "MPLBACKEND": "Agg",
                "SDPA_QUIZ_STORE": os.path.join(tempfile.gettempdir(), "sdpa-notebook-tests-quiz.json")}


def kernel_config() -> Config:
    """The kernel transport chosen by tests/conftest.py (Unix sockets), or the default outside pytest."""
    folder = os.environ.get("SDPA_KERNEL_SOCKETS")
    return Config(json.loads(Path(folder, "jupyter_config.json").read_text())) if folder else Config()


def execute_notebook(path: Path, *, timeout: int = 300, allow_errors: bool = False):
    """Execute ``path`` top to bottom in its own folder; return (notebook, seconds).

    Raises nbclient's CellExecutionError (with the failing cell and traceback) on error
    unless ``allow_errors``.
    """
    notebook = nbformat.read(path, as_version=4)
    os.environ.update(HEADLESS_ENV)  # inherited by the kernel started below
    language = os.environ.get("SDPA_LANG")
    os.environ["SDPA_LANG"] = notebook.metadata.get("language", "en")  # a translated notebook runs in its language
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": str(path.parent)}}, config=kernel_config())
    started = time.perf_counter()
    try:
        client.execute()
    finally:  # the rest of this test process keeps its own language
        if language is None:
            os.environ.pop("SDPA_LANG", None)
        else:
            os.environ["SDPA_LANG"] = language
    return notebook, time.perf_counter() - started


def lecture_notebooks() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def translated_lecture_notebooks() -> list[Path]:
    """The generated translations of the lecture notebooks (``zh/notebooks/``)."""
    return sorted((ROOT / "zh" / "notebooks").glob("[0-9][0-9]_*.ipynb"))
