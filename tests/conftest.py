import json
import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

# The same examples on every run, so CI is repeatable; HYPOTHESIS_PROFILE=explore draws new ones.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

KERNEL_SOCKETS_ENV = "SDPA_KERNEL_SOCKETS"
# The suite speaks English whatever the machine's locale (a zh_CN locale would otherwise turn the quiz Chinese);
# the tests of the Chinese edition choose Chinese themselves.
os.environ["SDPA_LANG"] = "en"


@pytest.fixture(autouse=True)
def english_unless_chosen(monkeypatch):
    """Each test starts in English, and whatever language it chose is undone after it (loading the Chinese course's
    nbgrader configuration, for one, sets the process's language)."""
    monkeypatch.setenv("SDPA_LANG", "en")


def pytest_configure(config):
    """Kernels started by the tests talk over Unix sockets in a folder of this process, not TCP ports.

    Test workers that start kernels at the same moment otherwise race for the same free
    port and a kernel dies with "Address already in use" (jupyter_client picks ports by
    binding and releasing them).  JUPYTER_CONFIG_PATH reaches every Jupyter app the tests
    start (nbgrader, JupyterLab); tests/nbrun.py hands the same setting to nbclient.
    """
    if os.name != "posix":
        return
    folder = tempfile.mkdtemp(prefix="sdpa-k-")
    settings = {"KernelManager": {"transport": "ipc", "ip": os.path.join(folder, "k")}}
    Path(folder, "jupyter_config.json").write_text(json.dumps(settings))
    os.environ[KERNEL_SOCKETS_ENV] = folder
    os.environ["JUPYTER_CONFIG_PATH"] = os.pathsep.join(filter(None, [folder, os.environ.get("JUPYTER_CONFIG_PATH")]))


REQUIRE_SANDBOX_ENV = "SDPA_REQUIRE_SANDBOX"


@pytest.fixture(scope="session")
def require_sandbox():
    """Skip (fail in CI, where SDPA_REQUIRE_SANDBOX=1) when bubblewrap cannot sandbox a kernel here."""
    from sdpa_course.grading.sandbox import sandbox_status
    status = sandbox_status()
    if not status.usable:
        message = (f"the grading sandbox is not available ({status.problem}): install bubblewrap "
                   f"(as root: apt-get install bubblewrap)")
        if os.environ.get(REQUIRE_SANDBOX_ENV):
            pytest.fail(message)
        pytest.skip(message)
    return status
