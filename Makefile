# Shortcuts; each works on a fresh clone (course.py creates .venv on first use).
PY := .venv/bin/python

.PHONY: lab test fast exercises strip bench
lab:        ## open the course in JupyterLab (127.0.0.1, token auth)
	python3 course.py lab
test:       ## every test
	python3 course.py test
fast:       ## the quick tests only (no notebooks, nbgrader or browser)
	python3 course.py test -m "not slow and not browser"
exercises:  ## regenerate exercises/ from solutions/ with nbgrader (and the Chinese zh/exercises/ from zh/solutions/)
	$(PY) scripts/generate_exercises.py
	$(PY) scripts/translate.py build
	$(PY) scripts/generate_exercises.py --lang zh
strip:      ## remove outputs from every committed notebook
	$(PY) scripts/strip_outputs.py
bench:      ## benchmarks that print ratios
	$(PY) benchmarks/run_all.py
