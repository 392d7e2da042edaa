"""babysit.sources.checkpoints and babysit.policy.checkpoint.choose_checkpoint."""

from __future__ import annotations

import glob
import json
import os
import signal
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from babysit.policy.checkpoint import choose_checkpoint
from babysit.records import Checkpoint
from babysit.sources import checkpoints, globwalk
from babysit.sources.checkpoints import (
    checkpoint_order,
    inspect_checkpoint,
    scan_checkpoints,
    step_from_name,
    validate_checkpoint,
)
from babysit.sources.globwalk import walk_glob
from tests.conftest import pid_alive, wait_for

T = 1_700_000_000.0  # every file's mtime; `now` is set relative to it: no sleeping
LATER = T + 100.0


def put(path: Path, data: bytes = b"weights", mtime: float = T) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))
    return path


def zip_bytes(tmp_path: Path) -> bytes:
    path = tmp_path / "scratch.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/data.pkl", b"\x80\x02}q\x00." * 50)
        zf.writestr("archive/data/0", os.urandom(4096))
        zf.writestr("archive/version", b"3\n")
    data = path.read_bytes()
    path.unlink()
    return data


def safetensors_bytes(data_len: int = 16, header_extra: dict | None = None) -> bytes:
    header = {
        "__metadata__": {"format": "pt"},
        "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
        "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]},
        **(header_extra or {}),
    }
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + b"\x00" * data_len


def check(path: Path, now: float = LATER, settle_s: float = 2.0) -> Checkpoint:
    return inspect_checkpoint(path, now, settle_s)


# -- step_from_name ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "step"),
    [
        ("ckpt_000150.pt", 150),
        ("ckpt150.pt", 150),
        ("checkpoint-500", 500),
        ("checkpoint_500", 500),
        ("global_step1000", 1000),
        ("epoch=3-step=1200.ckpt", 1200),
        ("epoch=0-step=450.ckpt", 450),  # PyTorch Lightning's default name
        ("epoch=12-step=450-v1.ckpt", 450),  # ... and its second save of the same step
        ("step_42.safetensors", 42),
        ("iter_0001000", 1000),
        ("STEP-7", 7),
        ("model_v2.pt", 2),  # no keyed number: the last number
        ("epoch3_model12.bin", 12),
        ("model.pt", None),
        ("ckpt.pt", None),
        ("", None),
    ],
)
def test_step_from_name(name: str, step: int | None) -> None:
    assert step_from_name(name) == step


# -- files ---------------------------------------------------------------------------------------


def test_plain_file_is_complete(tmp_path: Path) -> None:
    path = put(tmp_path / "ckpt_000150.pt")
    ckpt = check(path)
    assert ckpt == Checkpoint(str(path), 150, T, len(b"weights"), True, None)


@pytest.mark.parametrize(
    "name",
    [
        "ckpt_100.pt.tmp",
        "ckpt_100.pt.temp",
        "ckpt_100.pt.partial",
        "ckpt_100.pt.incomplete",
        "ckpt_100.pt.lock",
        "ckpt_100.pt.swp",
        "ckpt_100.pt~",
        ".ckpt_100.pt",
    ],
)
def test_temporary_names_are_not_complete(tmp_path: Path, name: str) -> None:
    ckpt = check(put(tmp_path / name))
    assert not ckpt.complete
    assert ckpt.problem is not None
    assert "temporary" in ckpt.problem
    assert ckpt.step == 100


def test_settle_time(tmp_path: Path) -> None:
    path = put(tmp_path / "ckpt_1.pt")
    young = check(path, now=T + 1.0, settle_s=2.0)
    assert not young.complete
    assert young.problem is not None
    assert "1.0s ago" in young.problem
    assert check(path, now=T + 2.0, settle_s=2.0).complete
    assert check(path, now=T, settle_s=0.0).complete


def test_mtime_in_the_future_is_not_settled(tmp_path: Path) -> None:
    path = put(tmp_path / "ckpt_1.pt", mtime=T + 50)
    ckpt = check(path, now=T, settle_s=2.0)
    assert not ckpt.complete
    assert ckpt.problem is not None
    assert "0.0s ago" in ckpt.problem  # not a negative age


def test_empty_file(tmp_path: Path) -> None:
    ckpt = check(put(tmp_path / "ckpt_5.pt", b""))
    assert not ckpt.complete
    assert ckpt.problem == "empty file"


def test_missing_path(tmp_path: Path) -> None:
    ckpt = check(tmp_path / "ckpt_9.pt")
    assert not ckpt.complete
    assert ckpt.step == 9
    assert ckpt.problem is not None
    assert ckpt.problem.startswith("cannot stat")


def test_zip_archive_complete_and_truncated(tmp_path: Path) -> None:
    data = zip_bytes(tmp_path)
    good = check(put(tmp_path / "ckpt_100.pt", data))
    assert good.complete, good.problem
    bad = check(put(tmp_path / "ckpt_200.pt", data[: len(data) // 2]))
    assert not bad.complete
    assert bad.problem is not None
    assert "zip" in bad.problem


def test_zip_missing_only_the_end_of_central_directory(tmp_path: Path) -> None:
    data = zip_bytes(tmp_path)
    bad = check(put(tmp_path / "ckpt_100.pt", data[:-10]))
    assert not bad.complete


def test_zip_magic_is_checked_whatever_the_suffix(tmp_path: Path) -> None:
    data = zip_bytes(tmp_path)
    assert not check(put(tmp_path / "model_3.bin", data[:100])).complete


def test_non_zip_non_safetensors_bytes_are_trusted(tmp_path: Path) -> None:
    # legacy pickles and other formats: nothing to verify beyond name, age and size
    assert check(put(tmp_path / "ckpt_1.bin", b"\x80\x02legacy pickle")).complete


def test_safetensors_valid(tmp_path: Path) -> None:
    ckpt = check(put(tmp_path / "model-step100.safetensors", safetensors_bytes()))
    assert ckpt.complete, ckpt.problem
    assert ckpt.step == 100


def test_safetensors_data_cut_short(tmp_path: Path) -> None:
    ckpt = check(put(tmp_path / "model.safetensors", safetensors_bytes(data_len=15)))
    assert not ckpt.complete
    assert ckpt.problem is not None
    assert "truncated safetensors" in ckpt.problem


def test_safetensors_header_cut_short(tmp_path: Path) -> None:
    data = safetensors_bytes()
    ckpt = check(put(tmp_path / "model.safetensors", data[:20]))
    assert not ckpt.complete
    assert ckpt.problem is not None
    assert "header says" in ckpt.problem


def test_safetensors_shorter_than_length_prefix(tmp_path: Path) -> None:
    ckpt = check(put(tmp_path / "model.safetensors", b"\x10\x00\x00"))
    assert not ckpt.complete
    assert ckpt.problem is not None
    assert "no header" in ckpt.problem


def test_safetensors_corrupt_header(tmp_path: Path) -> None:
    raw = b"{not json!"
    ckpt = check(put(tmp_path / "model.safetensors", struct.pack("<Q", len(raw)) + raw))
    assert not ckpt.complete
    assert ckpt.problem == "corrupt safetensors header"


def test_safetensors_metadata_only(tmp_path: Path) -> None:
    raw = json.dumps({"__metadata__": {}}).encode()
    assert check(put(tmp_path / "m.safetensors", struct.pack("<Q", len(raw)) + raw)).complete


@pytest.mark.parametrize("header", [b"[]", b"123", b'{"a": 1}', b'{"a": {"dtype": "F32"}}'])
def test_safetensors_odd_header_is_a_problem_not_a_crash(tmp_path: Path, header: bytes) -> None:
    put(tmp_path / "model.safetensors", struct.pack("<Q", len(header)) + header)
    found = scan_checkpoints(str(tmp_path / "*.safetensors"), LATER, 2.0)
    assert [c.complete for c in found] == [False]


# -- directories ---------------------------------------------------------------------------------


def hf_dir(root: Path, step: int, mtime: float = T) -> Path:
    d = root / f"checkpoint-{step}"
    put(d / "config.json", b"{}", mtime)
    put(d / "model.safetensors", safetensors_bytes(), mtime)
    put(d / "optimizer.pt", b"opt", mtime)
    put(d / "trainer_state.json", b"{}", mtime)  # HF Trainer writes it last
    os.utime(d, (mtime, mtime))
    return d


def test_hf_directory_without_trainer_state_is_unfinished(tmp_path: Path) -> None:
    d = hf_dir(tmp_path, 500)
    (d / "trainer_state.json").unlink()
    ckpt = check(d)
    assert not ckpt.complete and "trainer_state.json" in (ckpt.problem or "")


def test_dcp_directory_without_metadata_is_unfinished(tmp_path: Path) -> None:
    d = tmp_path / "step-200"
    put(d / "__0_0.distcp", b"shard", T)
    ckpt = check(d)
    assert not ckpt.complete and ".metadata" in (ckpt.problem or "")


def test_directory_complete(tmp_path: Path) -> None:
    d = hf_dir(tmp_path, 500)
    ckpt = check(d)
    assert ckpt.complete, ckpt.problem
    assert ckpt.step == 500
    assert ckpt.mtime == T
    assert ckpt.size == sum(p.stat().st_size for p in d.iterdir())


def test_directory_with_tmp_file(tmp_path: Path) -> None:
    d = hf_dir(tmp_path, 500)
    put(d / "optimizer.pt.tmp", b"half")
    ckpt = check(d)
    assert not ckpt.complete
    assert ckpt.problem is not None
    assert ckpt.problem.startswith("optimizer.pt.tmp: ")


def test_directory_with_a_truncated_member(tmp_path: Path) -> None:
    d = hf_dir(tmp_path, 500)
    put(d / "model.safetensors", safetensors_bytes()[:-1])
    ckpt = check(d)
    assert not ckpt.complete
    assert ckpt.problem is not None
    assert ckpt.problem.startswith("model.safetensors: truncated")


def test_directory_with_a_fresh_nested_file(tmp_path: Path) -> None:
    d = hf_dir(tmp_path, 500)
    put(d / "sub" / "shard.bin", b"x", mtime=LATER - 0.5)
    for folder in (d / "sub", d):
        os.utime(folder, (T, T))
    ckpt = check(d)
    assert not ckpt.complete
    assert ckpt.mtime == LATER - 0.5  # the newest member's mtime


def test_empty_directory(tmp_path: Path) -> None:
    d = tmp_path / "checkpoint-7"
    d.mkdir()
    ckpt = check(d)
    assert not ckpt.complete
    assert ckpt.problem == "empty directory"


def test_dcp_directory_with_metadata_is_complete(tmp_path: Path) -> None:
    d = tmp_path / "step-1000"
    put(d / "__0_0.distcp", b"shard")
    put(d / ".metadata", b"meta")
    assert check(d).complete


# -- scan ----------------------------------------------------------------------------------------


def test_scan_orders_newest_first(tmp_path: Path) -> None:
    put(tmp_path / "ckpt_000100.pt", mtime=T + 3)
    put(tmp_path / "ckpt_000300.pt", mtime=T + 1)
    put(tmp_path / "ckpt_000200.pt", mtime=T + 2)
    found = scan_checkpoints(str(tmp_path / "ckpt_*.pt"), LATER, 2.0)
    assert [c.step for c in found] == [300, 200, 100]
    assert all(c.complete for c in found)


def test_scan_same_step_then_mtime_and_no_step_last(tmp_path: Path) -> None:
    put(tmp_path / "a" / "ckpt_5.pt", mtime=T)
    put(tmp_path / "b" / "ckpt_5.pt", mtime=T + 5)
    put(tmp_path / "c" / "ckpt_final.pt", mtime=T + 10)
    found = scan_checkpoints(str(tmp_path / "*" / "ckpt_*.pt"), LATER, 2.0)
    assert [Path(c.path).parent.name for c in found] == ["b", "a", "c"]
    assert checkpoint_order(found[-1]) == (-1, T + 10)


def test_scan_mixes_files_and_dirs_and_flags_incomplete(tmp_path: Path) -> None:
    hf_dir(tmp_path, 500)
    put(tmp_path / "checkpoint-600.tmp")
    found = scan_checkpoints(str(tmp_path / "checkpoint-*"), LATER, 2.0)
    assert [(c.step, c.complete) for c in found] == [(600, False), (500, True)]


def test_scan_nothing(tmp_path: Path) -> None:
    assert scan_checkpoints(str(tmp_path / "*.pt"), LATER, 2.0) == []


def test_scan_recursive_glob(tmp_path: Path) -> None:
    put(tmp_path / "x" / "y" / "ckpt_3.pt")
    found = scan_checkpoints(str(tmp_path / "**" / "ckpt_*.pt"), LATER, 2.0)
    assert [c.step for c in found] == [3]


def test_scan_expands_user(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    put(tmp_path / "ckpt_4.pt")
    assert [c.step for c in scan_checkpoints("~/ckpt_*.pt", LATER, 2.0)] == [4]


# -- choose_checkpoint ---------------------------------------------------------------------------


def ck(step: int, complete: bool, problem: str | None = None) -> Checkpoint:
    return Checkpoint(f"ckpt_{step}.pt", step, T, 1, complete, problem)


def test_choose_newest_complete() -> None:
    c300, c200, c100 = ck(300, False, "empty file"), ck(200, True), ck(100, True)
    chosen, passed = choose_checkpoint([c300, c200, c100])
    assert chosen is c200
    assert passed == [c300]


def test_choose_first_when_complete() -> None:
    chosen, passed = choose_checkpoint([ck(2, True), ck(1, False)])
    assert chosen is not None
    assert chosen.step == 2
    assert passed == []


def test_choose_none_complete() -> None:
    cands = [ck(2, False, "a"), ck(1, False, "b")]
    chosen, passed = choose_checkpoint(cands)
    assert chosen is None
    assert passed == cands


def test_choose_empty() -> None:
    assert choose_checkpoint([]) == (None, [])


def test_choose_from_a_real_scan(tmp_path: Path) -> None:
    data = zip_bytes(tmp_path)
    put(tmp_path / "ckpt_100.pt", data)
    put(tmp_path / "ckpt_200.pt", data[:-200])
    put(tmp_path / "ckpt_300.pt", data, mtime=LATER)  # still settling
    chosen, passed = choose_checkpoint(scan_checkpoints(str(tmp_path / "ckpt_*.pt"), LATER, 2.0))
    assert chosen is not None
    assert chosen.step == 100
    assert [c.step for c in passed] == [300, 200]
    assert all(c.problem for c in passed)


# -- the step from trainer_state.json ------------------------------------------------------------


def hf_named(tmp_path: Path, name: str, state: bytes) -> Path:
    d = tmp_path / name
    put(d / "model.safetensors", safetensors_bytes())
    put(d / "trainer_state.json", state)
    os.utime(d, (T, T))
    return d


def test_a_directory_without_a_step_in_its_name_takes_global_step(tmp_path: Path) -> None:
    state = json.dumps({"best_metric": None, "epoch": 1.5, "global_step": 500}, indent=2)
    ckpt = check(hf_named(tmp_path, "checkpoint-best", state.encode()))
    assert ckpt.step == 500 and ckpt.complete, ckpt.problem


def test_the_name_wins_over_trainer_state(tmp_path: Path) -> None:
    ckpt = check(hf_named(tmp_path, "checkpoint-700", b'{"global_step": 500}'))
    assert ckpt.step == 700


@pytest.mark.parametrize(
    "state",
    [
        b'{"best_metric": null, "global_step": 5',  # half written
        b"not json at all",
        b'{"global_step": "500"}',
        b'{"global_step": true}',
        b'{"global_step": -3}',
        b'{"global_step": 5.5}',
        b"[1, 2, 3]",
        b"[" * 100_000,  # nested past the recursion limit
        b"\xff\xfe garbage",
        b"",
    ],
)
def test_a_bad_trainer_state_gives_no_step_and_no_crash(tmp_path: Path, state: bytes) -> None:
    assert check(hf_named(tmp_path, "checkpoint-last", state)).step is None


def big_state(step: int, entries: int) -> bytes:
    """As the Trainer writes it (sort_keys, indent=2): a long log_history after global_step."""
    log = [{"epoch": 0.1, "learning_rate": 1e-4, "loss": 2.5, "step": i} for i in range(entries)]
    doc = {"epoch": 3.0, "global_step": step, "log_history": log, "max_steps": 9000}
    return json.dumps(doc, indent=2, sort_keys=True).encode()


def test_a_big_trainer_state_is_read_by_its_head(tmp_path: Path) -> None:
    data = big_state(8000, 20_000)
    assert len(data) > (1 << 20)
    assert check(hf_named(tmp_path, "checkpoint-final", data)).step == 8000


def test_a_big_half_written_trainer_state_gives_no_step(tmp_path: Path) -> None:
    data = big_state(8000, 20_000)
    cut = data[: len(data) * 2 // 3]
    assert check(hf_named(tmp_path, "checkpoint-final", cut)).step is None


def test_scan_reads_global_step_for_a_rollback(tmp_path: Path) -> None:
    hf_named(tmp_path, "checkpoint-best", b'{"global_step": 1500}')
    hf_named(tmp_path, "checkpoint-1000", b'{"global_step": 1000}')
    found = scan_checkpoints(str(tmp_path / "checkpoint-*"), LATER, 2.0)
    assert [(Path(c.path).name, c.step) for c in found] == [
        ("checkpoint-best", 1500),
        ("checkpoint-1000", 1000),
    ]


# -- ** over links and big trees -----------------------------------------------------------------

SCAN_LOOP = """
import sys
from babysit.sources.checkpoints import scan_checkpoints
found = scan_checkpoints(sys.argv[1], 2e9, 0.0)
print(sorted(c.path for c in found))
"""


def test_a_symlink_loop_under_double_star_is_not_followed(tmp_path: Path) -> None:
    """`bin/X11 -> .` made glob.glob(recursive=True) walk for ever (at 100% CPU, babysit deaf to
    signals). In a child process with a deadline: the old walk would never end."""
    put(tmp_path / "ckpt_1.pt")
    put(tmp_path / "sub" / "ckpt_2.pt")
    (tmp_path / "sub" / "X11").symlink_to(".")
    (tmp_path / "sub" / "up").symlink_to("..")
    pattern = str(tmp_path / "**" / "ckpt_*.pt")
    try:
        res = subprocess.run(
            [sys.executable, "-c", SCAN_LOOP, pattern], capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail("scanning a glob over a symlink loop did not end")
    assert res.returncode == 0, res.stderr
    want = sorted([str(tmp_path / "ckpt_1.pt"), str(tmp_path / "sub" / "ckpt_2.pt")])
    assert res.stdout.strip() == str(want)


def test_double_star_matches_what_glob_matches_without_links(tmp_path: Path) -> None:
    for rel in ["a/ckpt_1.pt", "a/b/ckpt_2.pt", "a/b/c/ckpt_3.pt", ".hidden/ckpt_4.pt",
                "a/.h/ckpt_5.pt", "ckpt_6.pt", "a/b/model.bin", "x/checkpoint-7/w.pt"]:  # fmt: skip
        put(tmp_path / rel)
    for pattern in ["**/ckpt_*.pt", "a/**/*.pt", "**", "a/**", "a/**/", "**/.h/*", "*/**/w.pt",
                    "**/checkpoint-*", "a/**/b/**/*.pt", "nope/**/x"]:  # fmt: skip
        full = str(tmp_path / pattern)
        assert sorted(walk_glob(full).paths) == sorted(glob.glob(full, recursive=True)), pattern


def test_a_link_outside_double_star_is_followed_as_glob_does(tmp_path: Path) -> None:
    put(tmp_path / "run3" / "ckpt_9.pt")
    (tmp_path / "latest").symlink_to("run3")
    assert walk_glob(str(tmp_path / "latest" / "*.pt")).paths == [
        str(tmp_path / "latest" / "ckpt_9.pt")
    ]
    found = walk_glob(str(tmp_path / "*" / "**" / "*.pt")).paths
    assert found.count(str(tmp_path / "latest" / "ckpt_9.pt")) == 1


def test_a_walk_over_too_many_entries_stops_and_says_so(tmp_path: Path) -> None:
    for i in range(50):
        put(tmp_path / f"d{i}" / f"ckpt_{i}.pt")
    found = walk_glob(str(tmp_path / "**" / "ckpt_*.pt"), max_entries=30)
    assert found.problem is not None and "more than 30 entries" in found.problem
    assert "narrow it" in found.problem
    deep = tmp_path / "deep"
    put(deep.joinpath(*["d"] * 12) / "ckpt_1.pt")
    found = walk_glob(str(deep / "**" / "ckpt_*.pt"), max_depth=5)
    assert found.problem is not None and "deeper than 5" in found.problem


def test_scan_tells_a_cut_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(globwalk, "MAX_ENTRIES", 10)
    monkeypatch.setattr(globwalk.walk_glob, "__defaults__", (10, globwalk.MAX_DEPTH))
    for i in range(20):
        put(tmp_path / f"d{i}" / f"ckpt_{i}.pt")
    told: list[str] = []
    found = scan_checkpoints(str(tmp_path / "**" / "ckpt_*.pt"), LATER, 2.0, told.append)
    assert len(told) == 1 and "more than 10 entries" in told[0]
    assert len(found) < 20


def test_a_directory_with_too_many_files_is_not_inspected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoints, "MAX_MEMBERS", 5)
    d = tmp_path / "checkpoint-10"
    for i in range(8):
        put(d / f"shard{i}.bin")
    ckpt = check(d)
    assert not ckpt.complete and "more than 5 files" in (ckpt.problem or "")


def test_a_linked_directory_inside_a_checkpoint_is_not_walked(tmp_path: Path) -> None:
    d = tmp_path / "step-10"
    put(d / "model.bin")
    (d / "loop").symlink_to(".")
    ckpt = check(d)
    assert ckpt.complete and ckpt.size == len(b"weights")


# -- --validate-checkpoint -----------------------------------------------------------------------


def test_a_checkpoint_name_is_not_run_by_a_shell_validator(tmp_path: Path) -> None:
    """`ckpt_10;touch PWNED;.txt` in `sh -c 'test -f {checkpoint}'` ran `touch PWNED`."""
    ckpt = put(tmp_path / "ckpt_10;touch PWNED;.txt")
    problem = validate_checkpoint("sh -c 'test -f {checkpoint}'", str(ckpt), tmp_path, 30)
    assert not (tmp_path / "PWNED").exists()
    assert problem is None  # and the check saw the file, whole


def test_the_validator_gets_the_path_in_its_environment(tmp_path: Path) -> None:
    ckpt = put(tmp_path / "ckpt 5.pt")
    check_cmd = 'sh -c \'test "$BABYSIT_CHECKPOINT" = "$0"\' {checkpoint}'
    assert validate_checkpoint(check_cmd, str(ckpt), tmp_path, 30) is None


def test_a_validator_that_times_out_leaves_no_setsid_child(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    cmd = f"sh -c 'setsid sh -c \"echo \\$\\$ > {pidfile}; exec sleep 1000\" & sleep 1000'"
    problem = validate_checkpoint(cmd, "c.pt", tmp_path, 3)
    assert problem == "--validate-checkpoint did not finish within 3s"
    pid = int(wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), 20, "pid"))
    try:
        wait_for(lambda: not pid_alive(pid), 10, f"the validator's setsid child {pid} to die")
    finally:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_validator_is_stopped_with_babysit(tmp_path: Path) -> None:
    started = tmp_path / "started"
    cmd = f"sh -c 'touch {started}; sleep 1000'"
    t0 = time.monotonic()
    problem = validate_checkpoint(cmd, "c.pt", tmp_path, 600, stopping=started.exists)
    assert problem is not None and "stopped" in problem
    assert time.monotonic() - t0 < 30
