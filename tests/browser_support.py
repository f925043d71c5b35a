"""JupyterLab in headless Chromium for tests/test_browser.py: find the browser, run a lab, drive it.

``find_chromium`` and ``browser_required`` give the skip rule; ``running_lab`` starts
``jupyter lab`` on a free port of 127.0.0.1 with a token of its own over a temporary copy of
the course (so a run never touches the repository's notebooks) and always stops it.
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from sdpa_course.grading.autograde import interpreter_path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts" / "browser"  # screenshots; artifacts/ is git-ignored
REQUIRE_ENV = "SDPA_REQUIRE_BROWSER"
MISSING_CHROMIUM = ("browser tests need Chromium (/usr/bin/chromium or chromium on PATH): install it with "
                    "`sudo apt install chromium` (as root: `apt-get install chromium`)")
# Without the background-networking flags Chromium's own connections are refused on a closed network.
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
COURSE_PATHS = ("notebooks", "exercises", "solutions", "nbgrader_config.py")
# Lab settings for the test user (a temporary settings dir): no news or update checks, which
# would reach for the internet and add a notification over the page.
LAB_SETTINGS = {"@jupyterlab/apputils-extension/notification.jupyterlab-settings":
                {"checkForUpdates": False, "fetchNews": "false"}}


def find_chromium() -> str | None:
    """Debian's Chromium at /usr/bin/chromium, else ``chromium`` on PATH, else None."""
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else shutil.which("chromium")


def browser_required() -> bool:
    """True when a missing Chromium must fail the browser tests, not skip them (CI sets it)."""
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def copy_course(destination: Path) -> Path:
    """Copy the notebooks, exercises, solutions and nbgrader config into ``destination``."""
    for name in COURSE_PATHS:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        else:
            shutil.copy2(source, destination / name)
    return destination


def server_url(runtime_dir: Path, pid: int) -> str | None:
    """The URL the server with this pid reports in its runtime file, once it has bound its port."""
    info = runtime_dir / f"jpserver-{pid}.json"
    try:
        return json.loads(info.read_text())["url"].rstrip("/")
    except (OSError, ValueError, KeyError):
        return None


def _api(url: str, token: str, path: str, method: str = "GET"):
    request = urllib.request.Request(f"{url}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        body = response.read()
    return json.loads(body) if body else None


@contextlib.contextmanager
def running_lab(root_dir: Path, scratch: Path, *, timeout: float = 90):
    """Run ``jupyter lab`` over ``root_dir`` (its cwd, so nbgrader reads its config); yield (url, token).

    Widgets render for real (``SDPA_HEADLESS`` is removed); the quiz store, lab settings and
    workspaces go to ``scratch``.  The server's log is ``scratch/lab.log``; on exit every kernel
    is shut down and the server stopped.
    """
    token = secrets.token_hex(24)
    settings_dir = scratch / "lab-settings"
    for name, values in LAB_SETTINGS.items():
        (settings_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (settings_dir / name).write_text(json.dumps(values))
    env = {key: value for key, value in os.environ.items() if key != "SDPA_HEADLESS" and key != "MPLBACKEND"}
    env.update(SDPA_QUIZ_STORE=str(scratch / "quiz.json"), JUPYTER_RUNTIME_DIR=str(scratch / "runtime"),
               PATH=interpreter_path(env.get("PATH", "")))
    # --port=0: the server binds a free port itself and reports it in its runtime file; a port
    # picked here could be taken by a kernel of another test before the server binds it.
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", "--port=0",
               "--port-retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root_dir}",
               f"--LabApp.user_settings_dir={settings_dir}", f"--LabApp.workspaces_dir={scratch / 'workspaces'}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # CI runs as root; jupyter refuses it otherwise
    log_path = scratch / "lab.log"
    url = None
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, cwd=root_dir, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with code {server.returncode}; its log:\n"
                                   f"{log_path.read_text()[-3000:]}")
            try:
                url = url or server_url(scratch / "runtime", server.pid)
                if url:
                    _api(url, token, "/api/status")
                    break
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyter lab (url {url}) did not answer within {timeout:.0f} s; its log:\n"
                                   f"{log_path.read_text()[-3000:]}")
            time.sleep(0.25)
        yield url, token
    finally:
        with contextlib.suppress(Exception):
            for kernel in _api(url, token, "/api/kernels"):
                _api(url, token, f"/api/kernels/{kernel['id']}", method="DELETE")
        stop(server, timeout=15)


def stop(process: subprocess.Popen, timeout: float) -> None:
    """Terminate ``process``, give it ``timeout`` seconds to shut down cleanly, then kill it."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
