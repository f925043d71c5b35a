"""A class on JupyterHub, end to end: deploy/jupyterhub/ as launched by its README, driven through REST APIs.

The trial hub (deploy/jupyterhub/launch_trial.py: configurable-http-proxy, shared-password login,
one home folder per user under a temporary folder, nbgrader's exchange in it) runs on free ports
of 127.0.0.1.  Through the hub's API (a service token) the test starts the servers of one
instructor and three students; through the servers' own APIs, each user with their own token:

- the instructor generates and releases ch05_softmax and ch12_interview (formgrader's API);
- alice answers with the solutions, bob partly, carol not at all; each fetches, writes (the
  contents API) and submits (nbgrader's Assignments extension);
- the instructor collects, grades both assignments with ``sdpa-course grade`` typed in a
  terminal of their server, grades alice's first written answer by hand (formgrader's API: a
  score and a comment), regenerates ch12's feedback and releases the feedback of both;
- every student fetches their feedback.

The tests then read what each party sees.  Without node, configurable-http-proxy or jupyterhub
the file skips with one line saying what to install; with ``SDPA_REQUIRE_BROWSER=1`` (CI) it fails.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib.util
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from browser_support import REQUIRE_ENV, browser_required, stop
from exercise_harness import (SOLUTIONS, WRONG_JACOBIAN, cells_by_id, points_per_test, read, solution_cells,
                              visible_text, work)

from sdpa_course.grading.autograde import interpreter_path

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "deploy" / "jupyterhub" / "launch_trial.py"
COURSE_ID, INSTRUCTOR = "sdpa", "instructor"
CODE, WRITTEN = "ch05_softmax", "ch12_interview"  # ch12's exam answers are markdown cells graded by hand
STUDENTS = ("alice", "bob", "carol")  # the solution, part of it, nothing
HAND_GRADED, HAND_SCORE = "exam1_answer", 2.0
HAND_COMMENT = "Right variance argument; now say what the saturated softmax does to the gradient."
ALICE_ANSWER = "Without the division the scores have variance d_k, so the softmax saturates."
INSTRUCTOR_PLUGINS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                      "@jupyter/nbgrader:course-list")
START_SECONDS, CALL_SECONDS, GRADE_SECONDS = 180, 300, 600

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("jupyterhub")]


def missing_tools() -> list[str]:
    """What the trial hub needs that is not installed, each with how to install it."""
    missing = []
    if shutil.which("node") is None:
        missing.append("node (apt-get install nodejs npm)")
    if shutil.which("configurable-http-proxy") is None:
        missing.append("configurable-http-proxy (npm install -g configurable-http-proxy)")
    if importlib.util.find_spec("jupyterhub") is None:
        missing.append("jupyterhub (pip install -e '.[test]')")
    return missing


MISSING = missing_tools()
if MISSING and not browser_required():
    pytest.skip(f"the JupyterHub test needs {', '.join(MISSING)}", allow_module_level=True)


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Hub:
    """The hub's public URL and REST calls through it, each with the caller's token."""

    def __init__(self, url: str, tokens: dict[str, str]):
        self.url, self.tokens = url, tokens

    def call(self, who: str, path: str, method: str = "GET", body=None, timeout: float = CALL_SECONDS):
        """``(status, headers, body bytes)`` of ``method path`` with ``who``'s token (an HTTP error is a status too)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method,
                                         headers={"Authorization": f"token {self.tokens[who]}"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    def json(self, who: str, path: str, method: str = "GET", body=None, timeout: float = CALL_SECONDS):
        """The JSON answer of a call that must succeed (2xx); an AssertionError with the answer otherwise."""
        status, _, content = self.call(who, path, method, body, timeout)
        assert 200 <= status < 300, f"{method} {path} as {who}: HTTP {status}\n{content[:2000].decode(errors='replace')}"
        return json.loads(content) if content else None

    def nbgrader(self, who: str, path: str, body=None, timeout: float = CALL_SECONDS):
        """POST to one of nbgrader's handlers on ``who``'s server; the answer must report success."""
        answer = self.json(who, f"/user/{who}/{path}", "POST", body, timeout)
        assert answer.get("success", True), f"{path} as {who} failed:\n{answer.get('value') or answer.get('error')}"
        return answer

    def start_server(self, who: str) -> None:
        """Ask the hub to start ``who``'s server and wait until the hub says it is ready."""
        self.json("admin", f"/hub/api/users/{who}/server", "POST")
        deadline = time.monotonic() + START_SECONDS
        while not self.json("admin", f"/hub/api/users/{who}").get("servers", {}).get("", {}).get("ready"):
            assert time.monotonic() < deadline, f"{who}'s server was not ready within {START_SECONDS} s"
            time.sleep(0.5)

    def notebook(self, who: str, path: str):
        """The notebook at ``path`` of ``who``'s home, through the contents API."""
        return self.json(who, f"/user/{who}/api/contents/{path}?type=notebook&content=1")["content"]

    def save_notebook(self, who: str, path: str, notebook) -> None:
        """Write ``notebook`` to ``path`` of ``who``'s home, through the contents API."""
        self.json(who, f"/user/{who}/api/contents/{path}", "PUT", {"type": "notebook", "format": "json",
                                                                   "content": notebook})

    def files(self, who: str, folder: str) -> list[str]:
        """Paths of every file below ``folder`` of ``who``'s home (empty if there is no such folder)."""
        status, _, content = self.call(who, f"/user/{who}/api/contents/{urllib.parse.quote(folder)}?content=1")
        if status == 404:
            return []
        assert status == 200, f"listing {folder} of {who}: HTTP {status}"
        found = []
        for item in json.loads(content)["content"]:
            found += self.files(who, item["path"]) if item["type"] == "directory" else [item["path"]]
        return found

    def text(self, who: str, path: str) -> str:
        """The text file at ``path`` of ``who``'s home, through the contents API."""
        return self.json(who, f"/user/{who}/api/contents/{urllib.parse.quote(path)}?type=file&format=text&content=1")["content"]

    def terminal(self, who: str, command: str, timeout: float = GRADE_SECONDS) -> tuple[int, str]:
        """Type ``command`` into a new terminal of ``who``'s server; ``(exit status, what the terminal showed)``."""
        name = self.json(who, f"/user/{who}/api/terminals", "POST", {})["name"]
        try:
            return asyncio.run(self._type(who, name, command, timeout))
        finally:
            self.call(who, f"/user/{who}/api/terminals/{name}", "DELETE")

    async def _type(self, who: str, name: str, command: str, timeout: float) -> tuple[int, str]:
        """Send the line to terminal ``name`` over its websocket and read what it shows until the exit status."""
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect
        url = f"ws{self.url.removeprefix('http')}/user/{who}/terminals/websocket/{name}"
        socket_ = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {self.tokens[who]}"}))
        # The terminal echoes the line as typed, with "$?"; only the shell's own echo shows a number there.
        await socket_.write_message(json.dumps(["stdin", f"{command}; echo __EXIT__$?\r"]))
        shown, deadline = "", time.monotonic() + timeout
        while not (done := re.search(r"__EXIT__(\d+)", shown)):
            assert time.monotonic() < deadline, f"`{command}` did not finish within {timeout:.0f} s:\n{shown[-3000:]}"
            message = await asyncio.wait_for(socket_.read_message(), deadline - time.monotonic())
            assert message is not None, f"the terminal closed while running `{command}`:\n{shown[-3000:]}"
            kind, *content = json.loads(message)
            shown += content[0] if kind == "stdout" else ""
        socket_.close()
        return int(done.group(1)), shown


@contextlib.contextmanager
def running_hub(state: Path):
    """Launch the trial hub (deploy/jupyterhub/launch_trial.py) on free ports; yield a ``Hub`` that acts as admin.

    Its log is ``state/hub.log``; on exit the hub is stopped, and it stops every server and the proxy.
    """
    admin_token, url = secrets.token_hex(24), f"http://127.0.0.1:{free_port()}"
    env = {**os.environ, "SDPA_HUB_ADMIN_TOKEN": admin_token, "SDPA_HUB_PASSWORD": secrets.token_hex(8),
           "PATH": interpreter_path()}
    command = [sys.executable, str(LAUNCHER), "--state", str(state), "--students", ",".join(STUDENTS),
               "--instructor", INSTRUCTOR, "--port", url.rsplit(":", 1)[1], "--hub-port", str(free_port()),
               "--proxy-api-port", str(free_port())]
    log_path = state / "hub.log"
    with open(log_path, "wb") as log:
        hub = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            assert hub.poll() is None, f"the hub exited with code {hub.returncode}; its log:\n{log_path.read_text()[-3000:]}"
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"{url}/hub/api/", timeout=5):
                    break
            assert time.monotonic() < deadline, f"the hub did not answer within {START_SECONDS} s:\n{log_path.read_text()[-3000:]}"
            time.sleep(0.25)
        yield Hub(url, {"admin": admin_token})
    finally:
        stop(hub, timeout=60)  # the hub stops every server and the proxy first


def answers() -> dict[str, dict[str, dict[str, str]]]:
    """``{assignment: {student: {grade_id: source}}}``: alice the solutions, bob part of them, carol nothing."""
    code, written = solution_cells(read(SOLUTIONS / CODE / f"{CODE}.ipynb")), solution_cells(read(SOLUTIONS / WRITTEN / f"{WRITTEN}.ipynb"))
    first = next(iter(code))
    half = dict(list(written.items())[:len(written) // 2])
    return {CODE: {"alice": code, "bob": {first: code[first], "softmax_jacobian": WRONG_JACOBIAN}, "carol": {}},
            WRITTEN: {"alice": {**written, HAND_GRADED: ALICE_ANSWER}, "bob": half, "carol": {}}}


def expected_auto_scores() -> dict[str, dict[str, float]]:
    """``{assignment: {student: points}}`` the autograder must give (bob: the tests of the answers he wrote)."""
    code_points = points_per_test(read(SOLUTIONS / CODE / f"{CODE}.ipynb"))
    written_points = points_per_test(read(SOLUTIONS / WRITTEN / f"{WRITTEN}.ipynb"))
    bob_written = answers()[WRITTEN]["bob"]
    return {CODE: {"alice": sum(code_points.values()), "bob": next(iter(code_points.values())), "carol": 0.0},
            WRITTEN: {"alice": sum(written_points.values()),
                      "bob": sum(written_points[name.replace("answer_", "test_")] for name in bob_written),
                      "carol": 0.0}}


def grade_command(assignment: str) -> str:
    """What the instructor types to grade an assignment: two students at a time."""
    return f"sdpa-course grade {assignment} --jobs 2"


def hand_grade(hub: Hub, student: str) -> None:
    """In formgrader's API: give ``student``'s ch12 answer HAND_GRADED the score HAND_SCORE and the comment."""
    base = f"/user/{INSTRUCTOR}/formgrader/api"
    submissions = hub.json(INSTRUCTOR, f"{base}/submitted_notebooks/{WRITTEN}/{WRITTEN}")
    [submission] = [s for s in submissions if s["student"] == student]
    query = urllib.parse.urlencode({"submission_id": submission["id"]})
    [grade] = [g for g in hub.json(INSTRUCTOR, f"{base}/grades?{query}") if g["name"] == HAND_GRADED]
    hub.json(INSTRUCTOR, f"{base}/grade/{grade['id']}", "PUT", {"manual_score": HAND_SCORE})
    [comment] = [c for c in hub.json(INSTRUCTOR, f"{base}/comments?{query}") if c["name"] == HAND_GRADED]
    hub.json(INSTRUCTOR, f"{base}/comment/{comment['id']}", "PUT", {"manual_comment": HAND_COMMENT})


@pytest.fixture(scope="module")
def classroom(tmp_path_factory) -> dict:
    """Run the whole class on the trial hub; return what the tests read (see the module docstring)."""
    if MISSING:
        pytest.fail(f"the JupyterHub test needs {', '.join(MISSING)} ({REQUIRE_ENV} is set, so this fails instead "
                    f"of skipping)", pytrace=False)
    state = tmp_path_factory.mktemp("hub")
    with running_hub(state) as hub:
        for user in (INSTRUCTOR, *STUDENTS):
            hub.tokens[user] = hub.json("admin", f"/hub/api/users/{user}/tokens", "POST", {"note": "test"})["token"]
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(hub.start_server, (INSTRUCTOR, *STUDENTS)))
        for assignment in (CODE, WRITTEN):
            hub.nbgrader(INSTRUCTOR, f"formgrader/api/assignment/{assignment}/assign")
            hub.nbgrader(INSTRUCTOR, f"formgrader/api/assignment/{assignment}/release")
        for assignment, written in answers().items():
            path, ids = f"{assignment}/{assignment}.ipynb", {"course_id": COURSE_ID, "assignment_id": assignment}
            for student in STUDENTS:
                hub.nbgrader(student, "assignments/fetch", ids)
                hub.save_notebook(student, path, work(hub.notebook(student, path), written[student], student))
                hub.nbgrader(student, "assignments/submit", ids)
            hub.nbgrader(INSTRUCTOR, f"formgrader/api/assignment/{assignment}/collect")
        validations = {student: hub.nbgrader(student, "assignments/validate", {"path": f"{CODE}/{CODE}.ipynb"})["value"]
                       for student in ("alice", "carol")}
        grading = {assignment: hub.terminal(INSTRUCTOR, f"cd ~/sdpa-course && {grade_command(assignment)}")
                   for assignment in (CODE, WRITTEN)}
        hand_grade(hub, "alice")
        hub.nbgrader(INSTRUCTOR, f"formgrader/api/assignment/{WRITTEN}/generate_feedback")
        for assignment in (CODE, WRITTEN):
            hub.nbgrader(INSTRUCTOR, f"formgrader/api/assignment/{assignment}/release_feedback")
            for student in STUDENTS:
                hub.nbgrader(student, "assignments/fetch_feedback", {"course_id": COURSE_ID, "assignment_id": assignment})
        yield {"hub": hub, "grading": grading, "validations": validations,
               "gradebook": {a: {s["student"]: s for s in hub.json(INSTRUCTOR, f"/user/{INSTRUCTOR}/formgrader/api/submissions/{a}")}
                             for a in (CODE, WRITTEN)},
               "feedback": {(student, assignment): hub.files(student, f"{assignment}/feedback")
                            for student in STUDENTS for assignment in (CODE, WRITTEN)}}


def lab_page_config(hub: Hub, who: str) -> dict:
    """The page config JupyterLab hands the browser on ``who``'s server (its disabled and locked plugins)."""
    status, _, content = hub.call(who, f"/user/{who}/lab")
    assert status == 200, f"{who}'s /lab answered HTTP {status}"
    found = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', content.decode(), re.S)
    assert found, f"no page config in {who}'s /lab page"
    return json.loads(found.group(1))


def page_score(page: str) -> float:
    """The notebook's total on a feedback page: the first ``(Score: X / Y)``."""
    found = re.search(r"\(Score: ([\d.]+) / ([\d.]+)\)", visible_text(page))
    assert found, "no score on the feedback page"
    return float(found.group(1))


def test_students_have_the_assignments_and_validate_only(classroom):
    """Does a student's server lack formgrader and its lab plugins (locked), while the instructor's has them?"""
    hub = classroom["hub"]
    for student in STUDENTS:
        config = lab_page_config(hub, student)
        assert set(INSTRUCTOR_PLUGINS) <= set(config["disabledExtensions"]) & set(config["lockedExtensions"]), config
        assert hub.call(student, f"/user/{student}/formgrader")[0] == 404, f"{student}'s server serves formgrader"
        assert hub.call(student, f"/user/{student}/assignments?course_id={COURSE_ID}")[0] == 200
    instructor = lab_page_config(hub, INSTRUCTOR)
    assert not set(INSTRUCTOR_PLUGINS) & set(instructor["disabledExtensions"]), instructor["disabledExtensions"]


def test_validate_passes_the_solution_and_reports_the_blank(classroom):
    """Validate (a student's toolbar button) on the submitted ch05: alice's passes, carol's lists failed tests."""
    assert classroom["validations"]["alice"] == {}, classroom["validations"]["alice"]
    failed = classroom["validations"]["carol"].get("failed", [])
    assert failed and all("NotImplementedError" in cell["raw_error"] for cell in failed), failed


def test_formgrader_may_be_framed_by_the_instructors_own_pages_only(classroom):
    """JupyterHub >= 4.1 sends ``frame-ancestors 'none'``; the instructor's formgrader must allow 'self' to show in lab."""
    hub = classroom["hub"]
    status, headers, _ = hub.call(INSTRUCTOR, f"/user/{INSTRUCTOR}/formgrader/manage_assignments")
    assert status == 200, f"formgrader answered HTTP {status}"
    assert headers["Content-Security-Policy"] == "frame-ancestors 'self'", headers["Content-Security-Policy"]
    _, student_headers, _ = hub.call("alice", "/user/alice/lab")
    assert student_headers["Content-Security-Policy"] == "frame-ancestors 'none'"


def test_nobody_reaches_another_server(classroom):
    """alice's token opens neither bob's files nor the instructor's formgrader; the instructor's opens no student's.

    The second half is what makes ``frame-ancestors 'self'`` on the instructor's server acceptable:
    no student's server ever serves the instructor a page that could frame it.
    """
    hub = classroom["hub"]
    assert hub.call("alice", "/user/bob/api/contents/")[0] == 403
    assert hub.call("alice", f"/user/{INSTRUCTOR}/formgrader/api/submissions/{CODE}")[0] == 403
    assert hub.call(INSTRUCTOR, "/user/alice/lab")[0] == 403


def test_sdpa_course_grade_graded_everyone(classroom):
    """Did ``sdpa-course grade`` in the instructor's terminal exit 0 with each student in its table as graded?"""
    for assignment, (status, shown) in classroom["grading"].items():
        assert status == 0, f"sdpa-course grade {assignment} exited {status}:\n{shown[-3000:]}"
        for student in STUDENTS:
            assert re.search(rf"^{student}\s+[\d.]+ / [\d.]+\s+graded", shown, re.M), f"{student} not graded:\n{shown[-3000:]}"


def test_gradebook_scores(classroom):
    """Solution full, blank 0, partial in between (exactly its tests); alice's ch12 has the hand grade on top."""
    expected = expected_auto_scores()
    expected[WRITTEN]["alice"] += HAND_SCORE
    scores = {a: {s: row["score"] for s, row in rows.items()} for a, rows in classroom["gradebook"].items()}
    assert scores == expected
    for assignment in (CODE, WRITTEN):
        assert 0 < scores[assignment]["bob"] < classroom["gradebook"][assignment]["bob"]["max_score"]


def test_each_student_fetched_only_their_own_feedback(classroom):
    """One page per assignment each, naming its author and nobody else, with the gradebook's score."""
    hub = classroom["hub"]
    for (student, assignment), pages in classroom["feedback"].items():
        assert len(pages) == 1 and pages[0].endswith(f"/{assignment}.html"), f"{student} fetched {pages}"
        page = hub.text(student, pages[0])
        assert f"marker-{student}-end" in page
        assert [other for other in STUDENTS if other != student and f"marker-{other}-end" in page] == []
        assert page_score(page) == classroom["gradebook"][assignment][student]["score"]


def test_the_hand_grade_and_comment_reach_the_student(classroom):
    """alice's ch12 feedback shows the written answer's hand score and the instructor's comment."""
    hub = classroom["hub"]
    [page] = classroom["feedback"][("alice", WRITTEN)]
    text = visible_text(hub.text("alice", page))
    points = cells_by_id(read(SOLUTIONS / WRITTEN / f"{WRITTEN}.ipynb"))[HAND_GRADED].metadata.nbgrader.points
    assert HAND_COMMENT in text
    assert f"Written response (Score: {HAND_SCORE} / {float(points)})" in text, "no hand score for the written response"
