"""A student's nbgrader setting: submissions carry the hub's user name.

nbgrader names a submission after the Unix user.  In the trial setup every server runs as
the same Unix user, so the hub's name (JUPYTERHUB_USER) is used instead; where each student
is a Unix account of the same name, this changes nothing.
"""
import os

c = get_config()  # noqa: F821  (provided by nbgrader when it loads this file)

if "JUPYTERHUB_USER" in os.environ:  # set by JupyterHub in every single-user server
    c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
