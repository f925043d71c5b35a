"""The repository promises of issue 2: one environment in two files, ignores, the two README commands."""
import re
import subprocess
from pathlib import Path

import pytest
import yaml

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11 (CI); 3.10 users still get the other tests

ROOT = Path(__file__).resolve().parents[1]
TEST_COMMAND = "python3 course.py test"
LAB_COMMAND = "python3 course.py lab"


def parse_requirement(text: str) -> tuple[str, str]:
    """'nbgrader>=0.9.3,<0.10' -> ('nbgrader', '<0.10,>=0.9.3'): normalised name, sorted specifiers."""
    match = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*", text)
    assert match, f"cannot parse requirement {text!r}"
    name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
    specifiers = ",".join(sorted(s.replace(" ", "") for s in match.group(3).split(",") if s.strip()))
    return name, specifiers


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = dict(parse_requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["test"])
    requirements["python"] = parse_requirement("python" + project["requires-python"])[1]
    return requirements


def environment_requirements() -> dict[str, str]:
    """conda and pip entries of environment.yml; ``pip`` itself (the installer) is not a dependency."""
    entries = []
    for item in yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]:
        entries.extend(item["pip"] if isinstance(item, dict) else [item])
    return dict(parse_requirement(e) for e in entries if parse_requirement(e)[0] != "pip")


def test_parse_requirement():
    """The parser normalises names and orders specifiers (so the comparison below means something)."""
    assert parse_requirement("Py_YAML >= 6.0") == ("py-yaml", ">=6.0")
    assert parse_requirement("jupyterlab>=4.1,<5") == ("jupyterlab", "<5,>=4.1")


def test_environment_yml_and_pyproject_name_the_same_dependencies():
    """Same packages, same lower (and upper) bounds, Python version included, in both files."""
    from_pyproject, from_environment = pyproject_requirements(), environment_requirements()
    assert sorted(from_pyproject) == sorted(from_environment), (
        f"only in pyproject.toml: {sorted(set(from_pyproject) - set(from_environment))}; "
        f"only in environment.yml: {sorted(set(from_environment) - set(from_pyproject))}")
    differing = {n: (from_pyproject[n], from_environment[n]) for n in from_pyproject if from_pyproject[n] != from_environment[n]}
    assert not differing, f"bounds differ (pyproject.toml, environment.yml): {differing}"
    assert all(">=" in spec for spec in from_pyproject.values()), "every dependency needs a lower bound"


@pytest.mark.parametrize("path", ["gradebook.db", "exercises/gradebook.db", "zh/gradebook.db", "zh/submitted/s/a/a.ipynb", ".venv/bin/python",
                                  "sdpa_lib/__pycache__/softmax.cpython-311.pyc", ".pytest_cache/v/cache",
                                  ".hypothesis/examples/x", "notebooks/.ipynb_checkpoints/x-checkpoint.ipynb",
                                  "sdpa_course.egg-info/PKG-INFO"])
def test_generated_files_are_ignored(path):
    """Is every generated file (gradebook, virtualenv, caches) ignored by git?"""
    result = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=ROOT)
    assert result.returncode == 0, f"{path} is not covered by .gitignore"


def test_source_files_are_not_ignored():
    """The check above can fail: source files are not ignored."""
    result = subprocess.run(["git", "check-ignore", "--no-index", "-q", "sdpa_lib/softmax.py"], cwd=ROOT)
    assert result.returncode == 1


def commands_of(block: str) -> list[str]:
    """Command lines of a shell block, without comments."""
    lines = (line.split("#", 1)[0].strip() for line in block.splitlines())
    return [line for line in lines if line]


def test_readme_opens_with_the_two_commands():
    """The first code block of README.md is exactly the lab command and the test command."""
    readme = (ROOT / "README.md").read_text()
    first_block = re.search(r"```[a-z]*\n(.*?)```", readme, flags=re.S)
    assert first_block, "README.md has no code block"
    assert commands_of(first_block.group(1)) == [LAB_COMMAND, TEST_COMMAND]
    before = readme[:first_block.start()]
    assert before.count("\n## ") <= 1, "the two commands should come first, right after the introduction"


def test_ci_runs_exactly_the_readme_test_command():
    """.ci/run is executable and its last command is the README's test command, nothing added."""
    ci = ROOT / ".ci" / "run"
    assert ci.stat().st_mode & 0o111, ".ci/run is not executable"
    commands = commands_of(ci.read_text())
    assert commands[-1] in (TEST_COMMAND, f"exec {TEST_COMMAND}"), f".ci/run ends with {commands[-1]!r}"
    assert sum(TEST_COMMAND in c for c in commands) == 1


def test_makefile_test_target_is_the_same_command():
    """`make test` runs the same command as the README."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^test:.*\n\t(.*)$", makefile, flags=re.M)
    assert recipe and recipe.group(1).strip() == TEST_COMMAND


@pytest.mark.parametrize("path", ["notebooks", "exercises", "solutions", "sdpa_lib", "tests", "benchmarks",
                                  "environment.yml", "README.md", "pyproject.toml", "Makefile",
                                  "nbgrader_config.py", ".ci/run", "course.py", ".gitignore"])
def test_top_level_paths_exist(path):
    """Every top-level path that issue 2 lists is in the repository."""
    assert (ROOT / path).exists(), f"{path} is missing"


def test_course_lab_takes_a_language_and_each_start_page_exists():
    import importlib.util
    spec = importlib.util.spec_from_file_location("course_script", ROOT / "course.py")
    course = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(course)
    assert course.language_option(["--lang", "zh", "--port", "9999"]) == ("zh", ["--port", "9999"])
    assert course.language_option(["--lang=en"]) == ("en", [])
    assert course.language_option([]) == ("en", [])
    with pytest.raises(SystemExit, match="--lang must be one of"):
        course.language_option(["--lang", "fr"])
    assert all((ROOT / page).exists() for page in course.START_PAGES.values())
