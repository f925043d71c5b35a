"""JupyterHub for one class of this course: one instructor, students, nbgrader's exchange, one machine.

Start it with ``jupyterhub -f deploy/jupyterhub/jupyterhub_config.py`` in the state folder, or let
``deploy/jupyterhub/launch.py`` prepare that folder and start it (see README.md beside this file).

Who is who.  ``SDPA_HUB_INSTRUCTOR`` (default ``instructor``) is the one account that grades;
``SDPA_HUB_STUDENTS`` (comma-separated) are the students.  They become the JupyterHub groups
``formgrade-sdpa`` and ``nbgrader-sdpa``, the names nbgrader's ``JupyterHubAuthPlugin`` reads, and
``pre_spawn_hook`` gives each server the Jupyter config folder of its group (``config/instructor``
or ``config/student``) before the shared one (``config/common``):

- the instructor's server runs formgrader, with a ``frame-ancestors 'self'`` Content-Security-Policy
  so that JupyterLab's Formgrader tab may show formgrader's pages in its iframe (JupyterHub 4.1 and
  later send ``frame-ancestors 'none'`` from every single-user server; README.md says why that is
  acceptable here and what to do instead);
- a student's server has no formgrader, no course list and no Create Assignment tool; the
  Assignments tab (fetch, submit, fetch feedback) and Validate remain.

Two ways to run it (``SDPA_HUB_TRIAL``):

- trial (``SDPA_HUB_TRIAL=1``, what tests/test_jupyterhub.py runs): every account logs in with the
  shared password ``SDPA_HUB_PASSWORD``; every server runs as the Unix user of the hub, with its home
  at ``<state>/home/<name>``.  Nothing separates one user's files from another's: a trial, never a
  class.
- system (default, not tested here): Unix accounts log in with their own password (PAM) and each
  server runs as that account in its home (``LocalProcessSpawner``); the hub runs as root.

Environment: ``SDPA_HUB_STATE`` (the hub's database, cookie secret, and in a trial the homes),
``SDPA_EXCHANGE`` (nbgrader's exchange folder, default ``/srv/nbgrader/exchange``),
``SDPA_HUB_ADMIN_TOKEN`` (when set, a service ``sdpa-admin`` with this token may manage users,
servers and tokens: for scripts and the test).
"""
import os
from pathlib import Path

c = get_config()  # noqa: F821  (provided by JupyterHub when it loads this file)

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "config"
COURSE_ID = "sdpa"  # the same as CourseDirectory.course_id in config/common/nbgrader_config.py
STATE = Path(os.environ.get("SDPA_HUB_STATE", "/srv/sdpa-hub"))
TRIAL = os.environ.get("SDPA_HUB_TRIAL", "") not in ("", "0")
INSTRUCTOR = os.environ.get("SDPA_HUB_INSTRUCTOR", "instructor")
STUDENTS = [name.strip() for name in os.environ.get("SDPA_HUB_STUDENTS", "").split(",") if name.strip()]
INSTRUCTORS_GROUP, STUDENTS_GROUP = f"formgrade-{COURSE_ID}", f"nbgrader-{COURSE_ID}"

c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")

c.Authenticator.allowed_users = {INSTRUCTOR, *STUDENTS}
c.Authenticator.admin_users = set()  # the instructor is not a hub admin: see the Content-Security-Policy note
c.JupyterHub.load_groups = {INSTRUCTORS_GROUP: {"users": [INSTRUCTOR]}, STUDENTS_GROUP: {"users": STUDENTS}}

if TRIAL:
    c.JupyterHub.authenticator_class = "shared-password"
    c.SharedPasswordAuthenticator.user_password = os.environ["SDPA_HUB_PASSWORD"]
    c.JupyterHub.spawner_class = "simple"
    c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "home" / "{username}")
    if os.geteuid() == 0:
        c.Spawner.args = ["--allow-root"]  # every server runs as the hub's user; jupyter refuses root otherwise
else:
    c.JupyterHub.authenticator_class = "pam"
    c.JupyterHub.spawner_class = "localprocess"

c.Spawner.default_url = "/lab"
c.Spawner.environment = {"SDPA_EXCHANGE": os.environ.get("SDPA_EXCHANGE", "/srv/nbgrader/exchange")}
# A single-user server with JupyterLab and nbgrader takes a while to start on a loaded 2-core machine.
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120


def pre_spawn_hook(spawner):
    """Give the server its group's Jupyter config folder, then the shared one (JUPYTER_CONFIG_PATH).

    Members of ``formgrade-sdpa`` get ``config/instructor``; everyone else ``config/student``.
    """
    role = "instructor" if INSTRUCTORS_GROUP in {group.name for group in spawner.user.groups} else "student"
    spawner.environment["JUPYTER_CONFIG_PATH"] = os.pathsep.join([str(CONFIG / role), str(CONFIG / "common")])


c.Spawner.pre_spawn_hook = pre_spawn_hook

if os.environ.get("SDPA_HUB_ADMIN_TOKEN"):
    c.JupyterHub.services = [{"name": "sdpa-admin", "api_token": os.environ["SDPA_HUB_ADMIN_TOKEN"]}]
    c.JupyterHub.load_roles = [{"name": "sdpa-admin", "services": ["sdpa-admin"],
                                "scopes": ["admin:users", "admin:servers", "tokens", "list:groups"]}]
