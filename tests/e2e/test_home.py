"""The home, for real: private by default (shared with a group on request), its database deleted,
emptied or damaged mid-run or between runs, read by someone who cannot write it, and a start that
fails. Real babysit processes, real files."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import (
    babysit_argv,
    file_text,
    fixture,
    run_babysit,
    start_babysit,
    status_json,
    wait_for,
)

pytestmark = pytest.mark.e2e
PY = sys.executable
# What babysit itself writes in the home (the trainer's own stack dumps keep its umask, inside
# the private attempt directory).
BABYSIT_FILES = {
    "babysit.db",
    "babysit.db-wal",
    "babysit.db-shm",
    "events.jsonl",
    "supervisor.lock",
    "stdout.log",
    "stderr.log",
    "launcher.json",
    "exit.json",
}


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def modes(home: Path) -> dict[str, int]:
    out = {str(home): mode_of(home)}
    for p in home.rglob("*"):
        out[str(p.relative_to(home))] = mode_of(p)
    return out


@pytest.fixture(autouse=True)
def _login_umask() -> Iterator[None]:
    """The common login umask (022): what made every home world-readable."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def writes_a_checkpoint(workdir: Path) -> list[str]:
    code = "import pathlib; pathlib.Path('ckpt.pt').write_text('w'); print('iter 1: loss 2.0')"
    return [PY, "-c", code]


# -- who may read it -----------------------------------------------------------------------------


def test_the_home_is_private_and_the_training_keeps_its_umask(workdir: Path) -> None:
    home = workdir / "h"
    res = run_babysit(
        "run",
        "--home",
        str(home),
        "--name",
        "p",
        "-q",
        "--",
        *writes_a_checkpoint(workdir),
        cwd=workdir,
    )
    assert res.returncode == 0, res.stderr
    found = modes(home)
    dirs = {k: v for k, v in found.items() if (home / k).is_dir()}
    assert set(dirs.values()) == {0o700}, dirs
    mine = {k: v for k, v in found.items() if Path(k).name in BABYSIT_FILES}
    assert {Path(k).name for k in mine} >= BABYSIT_FILES - {"babysit.db-wal", "babysit.db-shm"}
    assert set(mine.values()) == {0o600}, mine
    assert mode_of(workdir / "ckpt.pt") == 0o644  # the training's files: its own umask


def test_a_group_home(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BABYSIT_HOME_MODE", "group")
    home = workdir / "h"
    res = run_babysit(
        "run",
        "--home",
        str(home),
        "--name",
        "g",
        "-q",
        "--",
        *writes_a_checkpoint(workdir),
        cwd=workdir,
    )
    assert res.returncode == 0, res.stderr
    found = modes(home)
    assert mode_of(home) == 0o2750 and mode_of(home / "runs/g/attempt-0001") == 0o2750
    mine = {k: v for k, v in found.items() if Path(k).name in BABYSIT_FILES}
    assert set(mine.values()) == {0o640}, mine
    assert mode_of(workdir / "ckpt.pt") == 0o644


def test_an_old_world_readable_home_is_tightened_with_a_notice(workdir: Path) -> None:
    home = workdir / "h"
    home.mkdir(mode=0o755)
    res = run_babysit(
        "run", "--home", str(home), "--name", "o", "-q", "--", PY, "-c", "1", cwd=workdir
    )
    assert res.returncode == 0, res.stderr
    assert mode_of(home) == 0o700
    assert res.stderr.count("was 0755 (others could read the run's logs)") == 1


# -- the database deleted under a live run -------------------------------------------------------


def _delete_mid_run(workdir: Path, delete: str) -> tuple[Path, str, int]:
    home, stop = workdir / "h", workdir / "stop"
    err = workdir / "b.err"
    proc = start_babysit(
        "run",
        "--home",
        str(home),
        "--name",
        "s",
        "-q",
        "--",
        PY,
        fixture("steady.py"),
        str(stop),
        cwd=workdir,
        stderr_path=err,
    )
    log = home / "runs/s/attempt-0001/stdout.log"
    wait_for(lambda: "step 5" in file_text(log), what="progress")
    seen = int(file_text(log).split("step ")[-1].split()[0])
    if delete == "db":
        for name in ("babysit.db", "babysit.db-wal", "babysit.db-shm"):
            (home / name).unlink(missing_ok=True)
    else:
        shutil.rmtree(home)
    wait_for(lambda: "the store is back" in file_text(err), what="babysit to notice", timeout=60)
    stop.write_text("")  # the run goes on meanwhile, and ends when told to
    assert proc.wait(timeout=60) == 0, file_text(err)
    return home, file_text(err), seen


def test_a_database_deleted_mid_run_is_noticed_and_written_again(workdir: Path) -> None:
    home, err, seen = _delete_mid_run(workdir, "db")
    assert f"{home / 'babysit.db'} was deleted while babysit was supervising" in err
    assert "written from events.jsonl" in err
    doc = status_json(home, "s", workdir)
    assert doc["state"] == "succeeded"
    (attempt,) = doc["attempts"]
    assert attempt["outcome"] == "succeeded" and attempt["last_step"] > seen
    kinds = [e["kind"] for e in doc["events"]]
    assert kinds[:2] == ["run_started", "attempt_started"] and kinds[-1] == "succeeded"
    res = run_babysit("logbook", "s", "--home", str(home), cwd=workdir)
    assert res.returncode == 0 and "attempt 1 finished" in res.stdout


def test_a_home_deleted_mid_run_is_written_again_and_the_logs_followed(workdir: Path) -> None:
    home, err, seen = _delete_mid_run(workdir, "home")
    assert f"the babysit home {home} was deleted" in err
    assert "what this babysit kept in memory" in err
    doc = status_json(home, "s", workdir)
    (attempt,) = doc["attempts"]
    assert attempt["outcome"] == "succeeded"
    # Followed through the open log file after its name was gone: the later steps were read.
    assert attempt["last_step"] > seen, (attempt, seen)
    kinds = [e["kind"] for e in doc["events"]]
    assert kinds[0] == "run_started" and kinds[-1] == "succeeded"
    assert mode_of(home) == 0o700


# -- emptied or damaged between runs --------------------------------------------------------------


def _finished_home(workdir: Path) -> Path:
    home = workdir / "h"
    res = run_babysit(
        "run",
        "--home",
        str(home),
        "--name",
        "d",
        "-q",
        "--",
        PY,
        "-c",
        "print('iter 1: loss 2.0')",
        cwd=workdir,
    )
    assert res.returncode == 0, res.stderr
    return home


@pytest.mark.parametrize("damage", ["emptied", "garbage"])
def test_a_bad_database_says_what_happened_and_rebuild_brings_it_back(
    workdir: Path, damage: str
) -> None:
    home = _finished_home(workdir)
    for name in ("babysit.db-wal", "babysit.db-shm"):
        (home / name).unlink(missing_ok=True)
    (home / "babysit.db").write_bytes(b"" if damage == "emptied" else b"\x07garbage" * 2000)
    h = ("--home", str(home))
    for argv in (["status", *h], ["logbook", "d", *h], ["run", *h, "--", PY, "-c", "1"]):
        res = run_babysit(*argv, cwd=workdir)
        assert res.returncode == 2, (argv, res.stderr)
        assert f"babysit rebuild --home {home}" in res.stderr, res.stderr
        assert "a babysit bug?" not in res.stderr
        assert ("is empty (0 bytes)" if damage == "emptied" else "is damaged") in res.stderr
    res = run_babysit("rebuild", "--home", str(home), cwd=workdir)
    assert res.returncode == 0, res.stderr
    assert "1 run(s), 1 attempt(s)" in res.stdout and "kept as" in res.stdout
    assert len(list(home.glob("babysit.db.bad-*"))) == 1  # moved aside, never deleted
    doc = status_json(home, "d", workdir)
    assert doc["state"] == "succeeded" and doc["attempts"][0]["outcome"] == "succeeded"


# -- read by someone who cannot write it ----------------------------------------------------------


def _as_nobody() -> list[str] | None:
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        return None
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


def test_status_and_logbook_on_a_read_only_home(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = _as_nobody()
    if prefix is None:
        pytest.skip(
            "needs root and setpriv to read the home as another user (root ignores "
            "file modes); tests/unit/store/test_sqlite.py covers the read-only open"
        )
    monkeypatch.setenv("BABYSIT_HOME_MODE", "keep")  # readable by others, on purpose
    shared = Path(tempfile.mkdtemp(prefix="babysit-ro-"))  # pytest's tmp is root's only
    request.addfinalizer(lambda: shutil.rmtree(shared, ignore_errors=True))
    shared.chmod(0o755)
    home = _finished_home(shared)
    for p in [home, *home.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    for removed in (False, True):  # with SQLite's -shm left by the writer, and without
        if removed:
            home.chmod(0o755)
            for name in ("babysit.db-wal", "babysit.db-shm"):
                (home / name).unlink(missing_ok=True)
            home.chmod(0o555)
        for argv in (["status", "--json"], ["logbook", "d"]):
            res = subprocess.run(
                [*prefix, *babysit_argv(*argv, "--home", str(home))],
                cwd="/",
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert res.returncode == 0, (argv, removed, res.stderr)
            assert "succeeded" in res.stdout


# -- a start that fails --------------------------------------------------------------------------


def test_a_failed_start_leaves_no_ghost_run(workdir: Path) -> None:
    home = workdir / "h"
    res = run_babysit("run", "--home", str(home), "--", "pythn", "train.py", cwd=workdir)
    assert res.returncode == 2 and "command not found: 'pythn'" in res.stderr
    doc = status_json(home, "train", workdir)
    assert doc["state"] == "failed" and doc["reason"].startswith("failed to start: command")
    res = run_babysit("status", "--home", str(home), cwd=workdir)
    assert "re-attach" not in res.stdout
