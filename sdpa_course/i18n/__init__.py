"""The course in other languages: English notebooks are the source, gettext catalogs hold the translations.

:mod:`~sdpa_course.i18n.notebooks` finds the text a learner reads in a notebook and rebuilds
the notebook in another language; :mod:`~sdpa_course.i18n.catalogs` keeps one ``.po`` catalog per
notebook in step with its English (stale translations marked fuzzy); :mod:`~sdpa_course.i18n.book`
says which notebooks are translated and where their translations go.  ``scripts/translate.py``
runs it all.
"""
