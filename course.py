#!/usr/bin/env python3
"""Set up and run the course on a fresh machine that has only Python 3.10+.

    python3 course.py lab            # create .venv, install, open JupyterLab at the start page
    python3 course.py lab --lang zh  # the same in Chinese: zh/notebooks/00_start_here.ipynb, quiz and figures
    python3 course.py test           # create .venv, install, run every test (extra args go to pytest)

The virtual environment lives in ``.venv`` next to this file.  It is (re)installed
only when ``pyproject.toml`` changed since the last install, so both commands are
cheap to run again.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".installed-pyproject-sha256"
START_PAGES = {"en": "notebooks/00_start_here.ipynb", "zh": "zh/notebooks/00_start_here.ipynb"}


def venv_python() -> Path:
    """Path of the interpreter inside ``.venv`` (POSIX or Windows layout)."""
    unix = VENV / "bin" / "python"
    return unix if unix.exists() else VENV / "Scripts" / "python.exe"


def ensure_environment() -> Path:
    """Create ``.venv`` and install the course with its test extra, once per pyproject."""
    if sys.version_info < (3, 10):
        sys.exit(f"Python 3.10 or newer is needed; this is {sys.version.split()[0]}.")
    if not venv_python().exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not STAMP.exists() or STAMP.read_text().strip() != digest:
        python = str(venv_python())
        run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
        run([python, "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[test]"])
        STAMP.write_text(digest)
    return venv_python()


def run(command: list[str]) -> None:
    """Run a set-up step and stop with its exit code if it fails."""
    print("+", " ".join(command), flush=True)
    completed = subprocess.run(command, cwd=ROOT)
    if completed.returncode:
        sys.exit(completed.returncode)


def language_option(extra: list[str]) -> tuple[str, list[str]]:
    """``--lang en|zh`` (or ``--lang=zh``) taken out of ``extra``; the language is English without it."""
    rest, language = [], "en"
    words = iter(extra)
    for word in words:
        if word == "--lang":
            language = next(words, "")
        elif word.startswith("--lang="):
            language = word.split("=", 1)[1]
        else:
            rest.append(word)
    if language not in START_PAGES:
        sys.exit(f"course.py: --lang must be one of {', '.join(START_PAGES)}; got {language!r}")
    return language, rest


def open_lab(python: Path, extra: list[str]) -> int:
    """Start JupyterLab on 127.0.0.1 with token authentication, at the start page of the chosen language.

    The language goes to the kernels as ``SDPA_LANG``: the quiz, the figures' fonts and the course's
    messages follow it.
    """
    language, extra = language_option(extra)
    command = [str(python), "-m", "jupyter", "lab", "--ip=127.0.0.1",
               f"--ServerApp.root_dir={ROOT}", START_PAGES[language], *extra]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers and CI machines often run as root
        print("note: running as root; JupyterLab needs --allow-root for that", flush=True)
        command.append("--allow-root")
    print("+", " ".join(command), flush=True)
    return subprocess.call(command, cwd=ROOT, env={**os.environ, "SDPA_LANG": language})


def run_tests(python: Path, extra: list[str]) -> int:
    """Run the whole pytest suite on every core (pytest-xdist)."""
    command = [str(python), "-m", "pytest", "-n", "auto", "--dist", "loadgroup", *extra]
    print("+", " ".join(command), flush=True)
    return subprocess.call(command, cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": "0"})


def main(argv: list[str]) -> int:
    actions = {"lab": open_lab, "test": run_tests}
    if not argv or argv[0] not in actions:
        print(__doc__)
        return 2
    python = ensure_environment()
    return actions[argv[0]](python, argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
