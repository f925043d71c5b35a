"""nbgrader settings every server of the hub shares (the system-wide config, on JUPYTER_CONFIG_PATH).

The hub puts this folder on every single-user server's JUPYTER_CONFIG_PATH (see
jupyterhub_config.py); on a machine without that hub, copy this file to /etc/jupyter/.
"""
import os

c = get_config()  # noqa: F821  (provided by nbgrader when it loads this file)

c.CourseDirectory.course_id = "sdpa"  # the course repository's nbgrader_config.py says the same
# The exchange: a folder every server can read and write (release, submit, collect, feedback).
c.Exchange.root = os.environ.get("SDPA_EXCHANGE", "/srv/nbgrader/exchange")
