#!/usr/bin/env python3
"""Start a trial JupyterHub for one class on this machine: the setup tests/test_jupyterhub.py runs.

    python deploy/jupyterhub/launch_trial.py --state /tmp/sdpa-hub --students alice,bob,carol

Run it with the course's interpreter (``.venv/bin/python``).  It prepares the state folder
(``exchange/``, ``home/<user>/``, the instructor's copy of the course at
``home/<instructor>/sdpa-course`` unless one is there already), then replaces itself with
``jupyterhub -f deploy/jupyterhub/jupyterhub_config.py`` in trial mode (``SDPA_HUB_TRIAL=1``):
everyone logs in with one shared password, and every server runs as your Unix user.  The
password is ``$SDPA_HUB_PASSWORD`` or, when that is unset, a new one printed here.
"""
from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parents[1]
COURSE_FILES = ("solutions", "nbgrader_config.py")  # `generate_assignment` makes exercises/ from solutions/


def parse(argv: list[str]) -> argparse.Namespace:
    """The launcher's options: the state folder, the accounts and the ports."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--state", type=Path, required=True, help="folder for the hub's database, homes and exchange")
    parser.add_argument("--students", required=True, help="comma-separated student names")
    parser.add_argument("--instructor", default="instructor")
    parser.add_argument("--ip", default="127.0.0.1", help="the address the proxy listens on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="the public port (the proxy's)")
    parser.add_argument("--hub-port", type=int, default=8081, help="the hub's own port, on 127.0.0.1")
    parser.add_argument("--proxy-api-port", type=int, default=8001, help="the proxy's REST API port, on 127.0.0.1")
    return parser.parse_args(argv)


def course_only(folder: str, names: list[str]) -> list[str]:
    """``shutil.copytree``'s ignore: at the repository's top only COURSE_FILES are copied; nowhere checkpoints."""
    if Path(folder) == REPOSITORY:
        return [name for name in names if name not in COURSE_FILES]
    return [name for name in names if name == ".ipynb_checkpoints"]


def main(argv: list[str]) -> None:
    """Prepare the state folder, then become ``jupyterhub`` with the trial settings in its environment."""
    args = parse(argv)
    state = args.state.resolve()
    exchange = Path(os.environ.get("SDPA_EXCHANGE", state / "exchange"))
    exchange.mkdir(parents=True, exist_ok=True)
    exchange.chmod(0o777)  # nbgrader's exchange: every user releases, submits or collects here
    course = state / "home" / args.instructor / "sdpa-course"
    if not course.exists():  # the instructor's copy of the course, kept across restarts
        shutil.copytree(REPOSITORY, course, ignore=course_only)
    password = os.environ.get("SDPA_HUB_PASSWORD") or secrets.token_urlsafe(12)
    if not os.environ.get("SDPA_HUB_PASSWORD"):
        print(f"trial hub: every account logs in with the password {password}", flush=True)
    bin_folder = str(Path(sys.executable).parent)  # jupyterhub-singleuser, nbgrader, alembic, sdpa-course
    env = {**os.environ, "SDPA_HUB_TRIAL": "1", "SDPA_HUB_STATE": str(state), "SDPA_EXCHANGE": str(exchange),
           "SDPA_HUB_PASSWORD": password, "SDPA_HUB_INSTRUCTOR": args.instructor,
           "SDPA_HUB_STUDENTS": args.students, "PATH": os.pathsep.join([bin_folder, os.environ.get("PATH", "")])}
    command = [sys.executable, "-m", "jupyterhub", "-f", str(HERE / "jupyterhub_config.py"),
               f"--JupyterHub.bind_url=http://{args.ip}:{args.port}", f"--JupyterHub.hub_port={args.hub_port}",
               f"--ConfigurableHTTPProxy.api_url=http://127.0.0.1:{args.proxy_api_port}"]
    os.chdir(state)
    os.execve(sys.executable, command, env)


if __name__ == "__main__":
    main(sys.argv[1:])
