"""One JSON document in one file that several processes update: locked, replaced whole, never lost.

The quiz's answer store (:mod:`~sdpa_course.quiz.store`) and the scores ``sdpa-course check``
remembers (:mod:`~sdpa_course.progress_store`) are kept this way.  Under an exclusive lock
(``fcntl`` on POSIX, on a ``<name>.lock`` file beside it) a caller reads the document, changes
it and writes the whole to a temporary file in the same folder, which is fsynced and moved
over the old one with ``os.replace``.  So a crash or Ctrl-C leaves the old file or the new one,
never part of one, and two processes updating at once never drop each other's changes.  A
file that cannot be read as the document expected is renamed ``<name>.corrupt-<timestamp>``
(its bytes kept for the user to look at), reported once, and the caller starts afresh.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Callable, TypeVar

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; concurrent writers are then not protected
    fcntl = None

T = TypeVar("T")


class StoreError(RuntimeError):
    """The file cannot be opened or written (e.g. a read-only directory); the message names the path."""


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    with contextlib.suppress(OSError):
        handle = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


class JsonFile:
    """The file at ``path``, named ``what`` in messages ("the quiz store"); problems go to ``report``."""

    def __init__(self, path: Path, what: str, report: Callable[[str], None]):
        self.path, self.what, self.report = Path(path), what, report

    @contextlib.contextmanager
    def locked(self):
        """Hold the file's lock for the block (read, change, write inside it)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lock_file = open(self.path.with_name(self.path.name + ".lock"), "a+")
        except OSError as error:
            raise StoreError(f"cannot open {self.what} {self.path}: {error}") from None
        with lock_file:
            if fcntl is not None:
                fcntl.flock(lock_file, fcntl.LOCK_EX)
            try:
                yield
            finally:
                if fcntl is not None:
                    fcntl.flock(lock_file, fcntl.LOCK_UN)

    def read(self, parse: Callable[[object], T], empty: Callable[[], T]) -> T:
        """``parse`` of the file's JSON; ``empty()`` if there is no file, or if it was unreadable and is now set aside.

        ``parse`` raises ``ValueError``, ``TypeError`` or ``KeyError`` when the document is not the expected one.
        """
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return empty()
        except (OSError, UnicodeDecodeError) as error:
            self._set_aside(str(error))
            return empty()
        try:
            return parse(json.loads(text))
        except (ValueError, TypeError, KeyError) as error:
            self._set_aside(str(error) or type(error).__name__)
            return empty()

    def write(self, document) -> None:
        """Replace the file with ``document`` (temporary file, fsync, ``os.replace``); ``StoreError`` if it can't."""
        text = json.dumps(document, ensure_ascii=False, indent=1)
        try:
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        except OSError as error:
            raise StoreError(f"cannot write {self.what} {self.path}: {error}") from None
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
            _fsync_directory(self.path.parent)
        except BaseException as error:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            if isinstance(error, OSError):
                raise StoreError(f"cannot write {self.what} {self.path}: {error}") from None
            raise

    def _set_aside(self, problem: str) -> None:
        backup = self.path.with_name(f"{self.path.name}.corrupt-{datetime.now():%Y%m%d-%H%M%S-%f}")
        try:
            os.replace(self.path, backup)
        except OSError as error:
            raise StoreError(f"{self.what} {self.path} is unreadable ({problem}) and could not be "
                             f"moved aside ({error}); move or delete it by hand") from None
        self.report(f"{self.what[:1].upper()}{self.what[1:]} {self.path} could not be read ({problem}); it was kept "
                    f"as {backup.name} and a new one is started.")
