"""Atomic writes: a file or a whole directory appears complete or not at all.

Only regular files and directories are ever written: an existing target that is a symbolic link, a device,
a FIFO or a socket is refused, so `-o /dev/sda` or `-o link-to-somewhere` cannot redirect or replace what
it names. Every temporary name carries the writer's pid and stays locked (flock) while the writer runs, so
a later write to the same target removes the leftovers of a killed one, and never those of a live one.
Writers of one output directory take turns (a lock file beside it while one writes), so concurrent
renders never mix.
A failure to write is a ClusterforgeError naming the path, never a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem, shown

_HINTS = {
    errno.ENOSPC: "free some space on that file system, or write elsewhere",
    errno.EDQUOT: "free some space within the quota, or write elsewhere",
    errno.EACCES: "choose a place you may write to",
    errno.EPERM: "choose a place you may write to",
    errno.EROFS: "the file system is read-only: choose another place",
    errno.ENAMETOOLONG: "use a shorter name",
    errno.ENOTDIR: "a part of the path is a file, not a folder: choose another path",
    errno.EEXIST: "a part of the path is a file, not a folder: choose another path",
}
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def write_error(path: Path, exc: OSError) -> ClusterforgeError:
    """An OSError met while writing `path`, as the package's one exception type."""
    reason = exc.strerror or type(exc).__name__
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(path) else ""
    return ClusterforgeError(Problem(f"cannot write: {reason}{where}", str(path),
                                     hint=_HINTS.get(exc.errno or 0, "choose another path for -o")))


def _refuse_special(path: Path, directory: bool) -> os.stat_result | None:
    """The target's lstat, or None when it does not exist; anything but a regular file (a directory when
    `directory`) is refused."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise write_error(path, exc) from None
    mode = info.st_mode
    wanted = stat.S_ISDIR(mode) if directory else stat.S_ISREG(mode)
    if wanted:
        return info
    if stat.S_ISLNK(mode):
        what = "is a symbolic link"
        hint = "give the real path: outputs are written only as regular files and folders, never through links"
    elif stat.S_ISDIR(mode):
        what, hint = "is a directory", "give a file name"
    elif stat.S_ISREG(mode):
        what, hint = "exists and is not a directory", "choose a directory"
    else:
        kind = ("a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
                else "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a special file")
        what = f"is {kind}, not a regular file"
        hint = "outputs are written only as regular files" + ("" if directory else "; leave out -o for stdout")
    raise ClusterforgeError(Problem(what, str(path), hint=hint))


def refuse_inputs(output: Path, inputs: Iterable[Path | str], directory: bool = False) -> None:
    """Refuse an output that is one of the command's inputs, or (a directory, replaced as a whole) holds one."""
    out = Path(os.path.abspath(output))
    try:
        real_out = out.resolve()
    except (OSError, RuntimeError):
        return  # unresolvable: the write itself reports it
    for given in inputs:
        path = Path(given)
        try:
            if str(given) in ("", "-") or not path.exists():  # stdin, or text that came from no file
                continue
            real = path.resolve()
            same = real == real_out or (out.exists() and os.path.samefile(out, path))
        except (OSError, RuntimeError):
            continue
        if same:
            raise ClusterforgeError(Problem(f"is also an input of this command ({shown(str(given))}): writing it "
                                            "would destroy it", str(output), hint="write the output elsewhere"))
        if directory and real_out in real.parents:
            raise ClusterforgeError(Problem(f"holds an input of this command ({shown(str(given))}), and the whole "
                                            "directory is replaced", str(output),
                                            hint="choose a directory that holds none of the inputs"))


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _mode_for(info: os.stat_result | None, new: int) -> int:
    """Keep an existing folder's mode, or a file's permission bits (never its set-id bits); a new one gets
    `new` minus the umask, as if created plainly (mkstemp and mkdtemp make 0600 and 0700)."""
    if info is None:
        return new & ~_umask()
    return info.st_mode & (0o7777 if stat.S_ISDIR(info.st_mode) else 0o777)


def _lock(fd: int) -> bool:
    """Take the writer's lock on an open file or folder; False when another live writer holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _leftovers(target: Path, suffixes: str) -> re.Pattern[str]:
    """The temporary names this module gives for `target`: `.NAME.PID-RANDOM.SUFFIX`."""
    return re.compile(rf"\.{re.escape(target.name)}\.\d+-[a-z0-9_]+\.(?:{suffixes})")


def _alive(pid: int) -> bool:
    """Whether the writer that named a temporary `pid` still runs: between creating its name and locking it,
    a live writer's name is unlocked for a moment, and must not be taken for a killed one's."""
    if pid == os.getpid() or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True


def sweep(target: Path, suffixes: str = "tmp") -> None:
    """Remove what killed writers of `target` left beside it: only names of our own pattern, owned by us,
    of the kind we make, and whose lock is free (a live writer holds its lock until it ends)."""
    pattern = _leftovers(target, suffixes)
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return
    for entry in entries:
        if not pattern.fullmatch(entry.name) or _alive(int(entry.name[len(target.name) + 2:].split("-", 1)[0])):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            is_dir = stat.S_ISDIR(info.st_mode)
            if info.st_uid != os.geteuid() or not (is_dir or stat.S_ISREG(info.st_mode)):
                continue
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | (os.O_DIRECTORY if is_dir else 0))
        except OSError:
            continue
        try:
            if _lock(fd):
                if is_dir:
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
        finally:
            os.close(fd)


def write_bytes(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write to a locked temporary file beside `path`, fsync, then rename over it. `mode` (0o600 for a secret) is
    set before the first byte is written; without it, an existing file keeps its mode and a new one follows the
    umask."""
    path = Path(path)
    info = _refuse_special(path, directory=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        sweep(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}-", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise write_error(path, exc) from None
    try:
        _lock(fd)
        os.fchmod(fd, _mode_for(info, 0o666) if mode is None else mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise write_error(path, exc) from None
        raise


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8", "backslashreplace"))


def stage_text(path: Path, text: str) -> None:
    """Write a file inside a staging directory of replace_directory (no checks: the folder is ours)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "xb") as handle:
        handle.write(text.encode("utf-8", "backslashreplace"))
        handle.flush()
        os.fsync(handle.fileno())


@contextlib.contextmanager
def _signals_unwind() -> Iterator[None]:
    """SIGTERM and SIGHUP unwind like Ctrl-C while a directory is staged, so its cleanup runs (where their
    handlers are still the default ones, in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def unwind(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    saved = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            saved[sig] = signal.signal(sig, unwind)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold interrupting signals for the few renames that swap a directory; they arrive right after."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def replace_directory(target: Path) -> Iterator[Path]:
    """Yield a fresh staging directory; on success it replaces `target`, on any error it is removed.

    The old directory is moved aside and deleted only after the new one is in place, so an interruption
    leaves either the old tree or the new one. The new one keeps the old one's mode (a new one: 0777 minus
    the umask); leftovers of killed renders of the same target are removed first.
    """
    given, target = target, Path(os.path.abspath(target))
    _refuse_special(given, directory=True)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(given, exc) from None
    with _one_writer(target, given):
        yield from _replace_directory(target, given)


def _replace_directory(target: Path, given: Path) -> Iterator[Path]:
    """replace_directory's work, while this process is the only writer of `target`."""
    info = _refuse_special(given, directory=True)  # again: the previous writer may have just replaced it
    try:
        sweep(target, "new|old")
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".new", dir=target.parent))
    except OSError as exc:
        raise write_error(given, exc) from None
    lock = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
    old = staging.with_name(staging.name[: -len(".new")] + ".old")
    try:
        _lock(lock)
        with _signals_unwind():
            try:
                yield staging
                os.chmod(staging, _mode_for(info, 0o777))  # last: a read-only mode must not stop the writing
                with _signals_held():
                    _swap(staging, target, old)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
            finally:
                shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        if exc.filename and str(exc.filename).startswith(str(staging)):  # name the place the user gave
            exc.filename = str(given) + str(exc.filename)[len(str(staging)):]
        raise write_error(given, exc) from None
    finally:
        os.close(lock)


WRITER_WAIT_S = 60.0  # how long a second writer of one output waits for the first before giving up


@contextlib.contextmanager
def _one_writer(target: Path, given: Path) -> Iterator[None]:
    """Hold the lock of `target` (flock on `.NAME.lock` beside it) while it is staged and swapped, so two
    writers of one output never interleave their renames: the second waits, then replaces the first's
    output whole; after WRITER_WAIT_S it gives up (exit 2). The holder removes the lock file when done, so
    a lock counts only while the file it locked is still the one at that name (else lock the new one)."""
    path = target.with_name(f".{target.name}.lock")
    flags = os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    deadline = time.monotonic() + WRITER_WAIT_S
    while True:
        try:
            fd = os.open(path, flags, 0o600)
        except OSError as exc:
            raise write_error(given, exc) from None
        try:
            held = os.fstat(fd)
            if not stat.S_ISREG(held.st_mode):
                raise ClusterforgeError(Problem(f"its lock file {shown(path.name)} is not a regular file",
                                                str(given), hint="remove it, or write elsewhere"))
            while not _lock(fd):
                if time.monotonic() > deadline:
                    raise ClusterforgeError(Problem(f"another clusterforge is writing {shown(str(given))}",
                                                    str(given), hint="wait for it to finish, or write elsewhere"))
                time.sleep(0.05)
            with contextlib.suppress(OSError):
                now = os.stat(path, follow_symlinks=False)
                if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                    break  # the lock file is still in place: this writer holds the output
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the previous holder removed it after we opened it: lock the file now at that name
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)


def _swap(staging: Path, target: Path, old: Path) -> None:
    """Put `staging` in `target`'s place, the previous `target` (locked like staging) aside as `old`."""
    previous = None
    try:
        if _refuse_special(target, directory=True) is not None:
            previous = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            _lock(previous)
            os.rename(target, old)
        os.rename(staging, target)
    except BaseException:
        if old.exists() and not target.exists():
            os.rename(old, target)
        raise
    finally:
        if previous is not None:
            os.close(previous)
