"""The two packages: sdpa_lib is the reference (numpy and the standard library only), sdpa_course the rest."""
import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = {"matplotlib", "ipywidgets", "nbgrader", "yaml", "jupyter_client", "IPython", "sdpa_course", "PIL"}


def imported_after(statement: str) -> set[str]:
    """Top-level names of every module a fresh interpreter has loaded after running ``statement``."""
    code = f"import sys; {statement}; print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT / "tests")
    assert result.returncode == 0, result.stderr
    return set(result.stdout.split())


def test_import_sdpa_lib_loads_only_numpy_and_the_standard_library():
    """Does ``import sdpa_lib`` (and every one of its modules) stay out of the Jupyter stack?"""
    modules = [path.stem for path in (ROOT / "sdpa_lib").glob("*.py") if path.stem != "__init__"]
    loaded = imported_after("import sdpa_lib; " + "; ".join(f"import sdpa_lib.{name}" for name in modules))
    allowed = set(sys.stdlib_module_names) | {"__main__", "numpy", "sdpa_lib", "_distutils_hack"}
    loaded = {name for name in loaded if not name.startswith("__editable__")}  # pip's finder of an editable install
    assert not loaded & HEAVY, f"sdpa_lib pulled in {sorted(loaded & HEAVY)}"
    assert loaded <= allowed, f"sdpa_lib imported modules outside numpy and the standard library: {sorted(loaded - allowed)}"


def test_the_check_can_fail():
    """Is the import check able to see a heavy import (the course package loads matplotlib for its widgets)?"""
    assert "matplotlib" in imported_after("import sdpa_course.widgets")


def test_sdpa_lib_never_imports_the_course():
    """No module of the reference names sdpa_course in an import statement."""
    for path in (ROOT / "sdpa_lib").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(name.split(".")[0] == "sdpa_course" for name in names), f"{path.name} imports {names}"


def sys_path_inserts(path: Path) -> list[str]:
    """The source of every ``sys.path.insert(...)`` call in a Python file."""
    text = path.read_text()
    return [ast.get_source_segment(text, node) for node in ast.walk(ast.parse(text, str(path)))
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "sys.path.insert"]


def test_no_source_puts_the_repository_on_sys_path():
    """The packages are installed; only the tests (and benchmarks reusing them) add the tests folder to sys.path."""
    offenders = []
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in {".venv", "build", ".git"} or not sys_path_inserts(path):
            continue
        inserted = sys_path_inserts(path)
        tests_folder = relative == Path("tests/conftest.py") or (
            relative.parts[0] == "benchmarks" and all('ROOT / "tests"' in call for call in inserted))
        if not tests_folder:
            offenders.append(f"{relative}: {inserted}")
    assert not offenders, offenders


@pytest.mark.slow
def test_wheel_carries_both_packages_and_their_data(tmp_path):
    """Does a built wheel hold both packages and the data files read with importlib.resources, and nothing else?"""
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                             "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    names = zipfile.ZipFile(next(tmp_path.glob("*.whl"))).namelist()
    for needed in ("sdpa_lib/attention.py", "sdpa_course/data/h200_sdpa_reference.csv", "sdpa_course/data/README.md",
                   "sdpa_course/glossary.yaml", "sdpa_course/quiz/bank/ch05_softmax.yaml", "sdpa_course/lessons/cost.py"):
        assert needed in names, f"{needed} is missing from the wheel"
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"sdpa_lib", "sdpa_course"}, tops
