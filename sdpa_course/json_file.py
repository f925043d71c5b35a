"""One JSON document in one file that several processes update: locked, replaced whole, never lost.

The quiz's answer store (:mod:`~sdpa_course.quiz.store`) and the scores ``sdpa-course check``
remembers (:mod:`~sdpa_course.progress_store`) are kept this way.  Under an exclusive lock
(``fcntl`` on POSIX, on a ``<name>.lock`` file beside it) a caller reads the document, changes
it and writes the whole to a temporary file in the same folder, which is fsynced and moved
over the old one with ``os.replace``.  So a crash or Ctrl-C leaves the old file or the new one,
never part of one, and two processes updating at once never drop each other's changes.  A
file that cannot be read as the document expected is renamed ``<name>.corrupt-<timestamp>``
(its bytes kept for the user to look at), reported once, and the caller starts afresh; but
only a file this program wrote (it carries ``signature`` near its start, when one is given):
any other file, a folder, or a file that cannot be read (permissions) raises ``StoreError``
and nothing is moved.  A path that is a symbolic link is read and written through the link.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import BinaryIO, Callable, TypeVar

from .i18n.messages import _

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; concurrent writers are then not protected
    fcntl = None

T = TypeVar("T")


class StoreError(RuntimeError):
    """The file cannot be opened or written (e.g. a read-only directory); the message names the path."""


class RefusedPath(StoreError):
    """The path is not this program's file (a folder, another file, one it may not read); nothing was changed."""


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    with contextlib.suppress(OSError):
        handle = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


def write_atomically(target: Path, write: Callable[[BinaryIO], object], *, mode: int | None = None) -> None:
    """Replace ``target`` whole or not at all.

    ``write(file)`` fills a temporary file in ``target``'s folder, which is fsynced and moved over
    ``target`` with ``os.replace``.  If anything fails (``write`` raises, the disk is full, Ctrl-C)
    the temporary file is removed and ``target`` is left as it was.  ``mode``: the permission bits
    of the new file (default: ``tempfile.mkstemp``'s, 0o600, readable by the owner only).
    Raises what ``write`` or the file system raise (``OSError`` for a folder that cannot be written).
    """
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_directory(target.parent)


class JsonFile:
    """The file at ``path``, named ``what`` in messages ("the quiz store", marked with ``N_``: it is translated where
    it is said); problems go to ``report``.

    ``signature``: text the program's own writer always puts in the file's first 256 characters
    (e.g. ``'"format": "sdpa-quiz-store"'``); a file that cannot be parsed and lacks it is refused,
    never set aside.  ``None`` sets aside every file that cannot be parsed.
    """

    def __init__(self, path: Path, what: str, report: Callable[[str], None], signature: str | None = None):
        self.path, self.what, self.report, self.signature = Path(path), what, report, signature

    @property
    def target(self) -> Path:
        """The file itself: ``path`` with symbolic links followed, so a write replaces what a link points to."""
        return Path(os.path.realpath(self.path))

    @contextlib.contextmanager
    def locked(self):
        """Hold the file's lock for the block (read, change, write inside it)."""
        target = self.target
        if target.is_dir():
            raise RefusedPath(_("{what} {path} is a folder, not a file; give a file path such as {example}").format(
                what=_(self.what), path=self.path, example=self.path / "store.json"))
        lock_path = target.with_name(target.name + ".lock")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            created = not lock_path.exists()
            lock_file = open(lock_path, "a+")
        except OSError as error:
            raise StoreError(_("cannot open {what} {path}: {error}").format(what=_(self.what), path=self.path,
                                                                          error=error)) from None
        with lock_file:
            if fcntl is not None:
                fcntl.flock(lock_file, fcntl.LOCK_EX)
            try:
                yield
            except RefusedPath:  # not our file: leave nothing of ours beside it
                if created:
                    with contextlib.suppress(OSError):
                        lock_path.unlink()
                raise
            finally:
                if fcntl is not None:
                    fcntl.flock(lock_file, fcntl.LOCK_UN)

    def read(self, parse: Callable[[object], T], empty: Callable[[], T]) -> T:
        """``parse`` of the file's JSON; ``empty()`` if there is no file, or if it was unreadable and is now set aside.

        ``parse`` raises ``ValueError``, ``TypeError`` or ``KeyError`` when the document is not the expected one.
        """
        target = self.target
        try:
            data = target.read_bytes()
        except FileNotFoundError:
            return empty()
        except IsADirectoryError:
            raise RefusedPath(_("{what} {path} is a folder, not a file").format(what=_(self.what), path=self.path)) \
                from None
        except PermissionError:
            raise RefusedPath(_("cannot read {path}: permission denied").format(path=self.path)) from None
        except OSError as error:
            raise RefusedPath(_("cannot read {path}: {error}").format(path=self.path, error=error.strerror or error)) \
                from None
        try:
            return parse(json.loads(data.decode("utf-8")))
        except (ValueError, TypeError, KeyError) as error:  # UnicodeDecodeError is a ValueError
            problem = str(error) or type(error).__name__
            if len(problem) > 200:
                problem = problem[:200] + "…"
            if self.signature is not None and self.signature not in data[:256].decode("utf-8", "replace"):
                raise RefusedPath(_("{path} does not look like {what} ({problem}); it was left untouched: choose "
                                    "another path, or move the file away").format(path=self.path, what=_(self.what),
                                                                                  problem=problem)) from None
            self._set_aside(target, problem)
            return empty()

    def write(self, document) -> None:
        """Replace the file with ``document`` (see :func:`write_atomically`); ``StoreError`` if it can't."""
        text = json.dumps(document, ensure_ascii=False, indent=1)
        try:
            write_atomically(self.target, lambda file: file.write(text.encode("utf-8")))
        except OSError as error:
            raise StoreError(_("cannot write {what} {path}: {error}").format(what=_(self.what), path=self.path,
                                                                           error=error)) from None

    def _set_aside(self, target: Path, problem: str) -> None:
        backup = target.with_name(f"{target.name}.corrupt-{datetime.now():%Y%m%d-%H%M%S-%f}")
        try:
            os.replace(target, backup)
        except OSError as error:
            raise StoreError(_("{what} {path} is unreadable ({problem}) and could not be moved aside ({error}); move "
                               "or delete it by hand").format(what=_(self.what), path=self.path, problem=problem,
                                                              error=error)) from None
        said = _("{what} {path} could not be read ({problem}); it was kept as {backup} and a new one is started.").format(
            what=_(self.what), path=self.path, problem=problem, backup=backup.name)
        self.report(said[:1].upper() + said[1:])
