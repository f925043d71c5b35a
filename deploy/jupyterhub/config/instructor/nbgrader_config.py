"""The instructor's nbgrader setting: the course directory is their clone of the course repository.

nbgrader then also reads that repository's own nbgrader_config.py (TrustedExecute, the sandbox,
feedback without hidden tests), for formgrader as for `sdpa-course grade` run inside it.
"""
import os

c = get_config()  # noqa: F821  (provided by nbgrader when it loads this file)

c.CourseDirectory.root = os.path.expanduser("~/sdpa-course")
