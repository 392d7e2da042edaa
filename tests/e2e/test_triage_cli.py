"""`babysit triage` as a real process: corpus logs, per-rank directories, stdin, .gz, bad input,
huge lines, logs without an error, team rules and "seen before"."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, babysit_argv, run_babysit

pytestmark = pytest.mark.e2e

OOM_LOG = next((REPO / "tests/corpus/real/gpu").glob("001-*.log"))
JSON_KEYS = {
    "category",
    "transient",
    "suspect",
    "summary",
    "action",
    "evidence",
    "consequences",
    "fingerprint",
    "confidence",
    "rule",
    "seen_before",
}
CATEGORIES = {
    "nccl_timeout",
    "nccl_error",
    "cuda_oom",
    "gpu_hardware",
    "cuda_error_other",
    "host_oom",
    "segfault",
    "filesystem_io",
    "network",
    "numerical",
    "user_code",
    "preemption",
    "hang",
    "data",
    "loss_spike",
    "throughput_drop",
    "unknown",
}
WATCHDOG = (
    "[rank{r}]:[E1206 18:44:12.715298 4711 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:616]"
    " [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1234, "
    "OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600012 "
    "milliseconds before timing out."
)
RANK1_OOM = (
    "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has "
    "a total capacity of 79.11 GiB of which 1.02 GiB is free."
)
RANK1_LOG = [
    "[rank1]: step 1200 loss 2.3104",
    "[rank1]: Traceback (most recent call last):",
    '[rank1]:   File "/app/train.py", line 88, in <module>',
    "[rank1]:     loss.backward()",
    RANK1_OOM,
]


def _is_opt(value: Any, kind: type) -> bool:
    return value is None or type(value) is kind


def _check_line(line: Any) -> None:
    assert set(line) == {"line", "file", "text"}
    assert type(line["line"]) is int and line["line"] >= 0
    assert isinstance(line["file"], str) and isinstance(line["text"], str)


def check_schema(doc: dict[str, Any]) -> None:
    """Every key of `babysit triage --json` with its type."""
    assert set(doc) == JSON_KEYS
    assert doc["category"] in CATEGORIES
    assert doc["transient"] in (True, False, None)
    suspect = doc["suspect"]
    assert set(suspect) == {"kind", "host", "rank", "gpu"}
    assert isinstance(suspect["kind"], str) and suspect["kind"]
    assert _is_opt(suspect["host"], str) and _is_opt(suspect["gpu"], str)
    assert _is_opt(suspect["rank"], int)
    assert isinstance(doc["summary"], str) and doc["summary"]
    assert isinstance(doc["action"], str) and doc["action"]
    assert isinstance(doc["evidence"], list)
    for e in doc["evidence"]:
        _check_line(e)
    assert isinstance(doc["consequences"], list)
    for c in doc["consequences"]:
        assert set(c) == {"category", "summary", "count", "ranks", "hosts", "first"}
        assert c["category"] in CATEGORIES and isinstance(c["summary"], str)
        assert type(c["count"]) is int and c["count"] >= 1
        assert all(type(r) is int for r in c["ranks"])
        assert all(isinstance(h, str) for h in c["hosts"])
        _check_line(c["first"])
    assert doc["fingerprint"] is None or re.fullmatch(r"[0-9a-f]{16}", doc["fingerprint"])
    assert type(doc["confidence"]) is float and 0.0 <= doc["confidence"] <= 1.0
    assert _is_opt(doc["rule"], str)
    assert isinstance(doc["seen_before"], list)
    for s in doc["seen_before"]:
        assert set(s) == {"run", "attempt", "at", "host", "rank", "category"}


def triage_json(*args: str, cwd: Path) -> dict[str, Any]:
    res = run_babysit("triage", "--json", *args, cwd=cwd)
    assert res.returncode == 0, res.stderr
    doc: dict[str, Any] = json.loads(res.stdout)
    check_schema(doc)
    return doc


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _per_rank_logs(directory: Path) -> Path:
    """Rank 1 runs out of memory; ranks 0, 2 and 3 then time out in the next all-reduce."""
    for r in (0, 2, 3):
        _write_lines(directory / f"rank{r}.log", [f"step 1200 loss 2.31{r}", WATCHDOG.format(r=r)])
    _write_lines(directory / "rank1.log", RANK1_LOG)
    return directory


# -- one corpus log ---------------------------------------------------------------------------


def test_corpus_log_text_report(workdir: Path) -> None:
    res = run_babysit("triage", str(OOM_LOG), cwd=workdir)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("cuda_oom") and "a restart will not help" in lines[0]
    assert "A GPU ran out of memory (rank 3)" in lines[1]
    assert any(ln.startswith("suspect:") and "rank 3" in ln for ln in lines)
    assert any(ln.startswith("what to do:") for ln in lines)
    assert f"{OOM_LOG}:1" in res.stdout  # the evidence names the file and line
    assert re.search(
        r"read 1 file\(s\), \d+ lines; fingerprint [0-9a-f]{16}; rule cuda\.oom", res.stdout
    )
    assert "Traceback" not in res.stderr


def test_corpus_log_json(workdir: Path) -> None:
    doc = triage_json(str(OOM_LOG), cwd=workdir)
    assert doc["category"] == "cuda_oom"
    assert doc["transient"] is False
    assert doc["suspect"]["rank"] == 3
    assert doc["rule"] == "cuda.oom"
    assert doc["confidence"] >= 0.8
    first = doc["evidence"][0]
    assert first["file"] == str(OOM_LOG) and first["line"] == 1
    assert first["text"].startswith("[rank3]: torch.OutOfMemoryError: CUDA out of memory")
    assert doc["fingerprint"] is not None
    assert doc["seen_before"] == []  # no store in the working directory


# -- a directory of per-rank logs --------------------------------------------------------------


def test_per_rank_directory_names_the_oom_rank_and_the_timeouts_as_consequences(
    workdir: Path,
) -> None:
    _per_rank_logs(workdir / "logs")
    doc = triage_json("logs", cwd=workdir)
    assert doc["category"] == "cuda_oom"
    assert doc["transient"] is False
    assert doc["suspect"]["rank"] == 1
    assert "rank 1" in doc["summary"]
    assert any(
        e["file"] == "logs/rank1.log" and "torch.OutOfMemoryError" in e["text"]
        for e in doc["evidence"]
    )
    timeouts = [c for c in doc["consequences"] if c["category"] == "nccl_timeout"]
    assert len(timeouts) == 1
    assert timeouts[0]["count"] == 3 and timeouts[0]["ranks"] == [0, 2, 3]
    assert timeouts[0]["first"]["file"] == "logs/rank0.log"
    assert timeouts[0]["first"]["line"] == 2

    text = run_babysit("triage", "logs", cwd=workdir)
    assert text.returncode == 0, text.stderr
    assert "3x nccl_timeout" in text.stdout and "on rank(s) 0, 2, 3" in text.stdout
    assert "read 4 file(s)" in text.stdout


def test_per_rank_traceback_evidence_quotes_the_exception_line_where_it_is(
    workdir: Path,
) -> None:
    # Regression: torch prints `[rank1]: ` with a space; the space once made the exception
    # line look like one more indented traceback line, quoted as line 0 at end of input.
    _per_rank_logs(workdir / "logs")
    doc = triage_json("logs", cwd=workdir)
    where = {(e["file"], e["line"]): e["text"] for e in doc["evidence"]}
    assert where.get(("logs/rank1.log", 5)) == RANK1_OOM
    assert "Traceback (most recent call last)" in where.get(("logs/rank1.log", 2), "")
    assert all(e["line"] >= 1 for e in doc["evidence"])


# -- other inputs ------------------------------------------------------------------------------


@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzipped"])
def test_stdin(workdir: Path, packed: bool) -> None:
    data = OOM_LOG.read_bytes()
    res = subprocess.run(
        babysit_argv("triage", "--json", "-"),
        cwd=workdir,
        input=gzip.compress(data) if packed else data,  # `cat rank3.log.gz | babysit triage -`
        capture_output=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr.decode(errors="replace")
    doc = json.loads(res.stdout)
    check_schema(doc)
    assert doc["category"] == "cuda_oom" and doc["suspect"]["rank"] == 3
    assert doc["evidence"][0]["file"] == "<stdin>" and doc["evidence"][0]["line"] == 1


def test_gzip_file(workdir: Path) -> None:
    gz = workdir / "train.log.gz"
    gz.write_bytes(gzip.compress(OOM_LOG.read_bytes()))
    doc = triage_json(str(gz), cwd=workdir)
    assert doc["category"] == "cuda_oom" and doc["transient"] is False
    assert doc["suspect"]["rank"] == 3
    assert doc["evidence"][0]["file"] == str(gz) and doc["evidence"][0]["line"] == 1
    plain = triage_json(str(OOM_LOG), cwd=workdir)
    assert doc["fingerprint"] == plain["fingerprint"]


@pytest.mark.parametrize("as_json", [False, True])
def test_missing_file_is_one_line_and_exit_2(workdir: Path, as_json: bool) -> None:
    flags = ["--json"] if as_json else []
    res = run_babysit("triage", *flags, str(OOM_LOG), "no-such-run.log", cwd=workdir)
    assert res.returncode == 2
    assert res.stdout == ""
    err = res.stderr.strip().splitlines()
    assert len(err) == 1, res.stderr
    assert err[0].startswith("babysit: error:") and "no-such-run.log" in err[0]
    assert "Traceback" not in res.stderr


def test_directory_of_binary_files(workdir: Path) -> None:
    blobs = workdir / "blobs"
    blobs.mkdir()
    (blobs / "core.1234").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    (blobs / "ckpt.pt").write_bytes(b"PK\x03\x04\x00\x00" + b"\x00\xff" * 4096)
    doc = triage_json("blobs", cwd=workdir)
    assert doc["category"] == "unknown"
    assert doc["evidence"] == [] and doc["consequences"] == []
    assert "no text log" in doc["summary"]
    assert "core.1234" in doc["summary"] and "ckpt.pt" in doc["summary"]
    text = run_babysit("triage", "blobs", cwd=workdir)
    assert text.returncode == 0, text.stderr
    assert "binary, not a text log" in text.stdout


def test_empty_file(workdir: Path) -> None:
    (workdir / "empty.log").write_bytes(b"")
    doc = triage_json("empty.log", cwd=workdir)
    assert doc["category"] == "unknown"
    assert doc["evidence"] == [] and doc["fingerprint"] is None
    assert "empty.log" in doc["summary"]


def test_invalid_utf8_and_crlf_around_a_real_error(workdir: Path) -> None:
    log = workdir / "win.log"
    log.write_bytes(
        b"step 1 loss 2.0\r\n"
        b"tokenizer warning: \xff\xfe\xc3( undecodable\r\n"
        b"Traceback (most recent call last):\r\n"
        b'  File "train.py", line 3, in <module>\r\n'
        b"    lr = cfg['learning_rate']\r\n"
        b"KeyError: 'learning_rate' \xe9\xff\r\n"
        b"\x80\x81 trailing junk\r\n"
    )
    doc = triage_json("win.log", cwd=workdir)
    assert doc["category"] == "user_code" and doc["transient"] is False
    assert doc["rule"] == "python.bug"
    assert "train.py:3" in doc["summary"]
    error = [e for e in doc["evidence"] if e["text"].startswith("KeyError: 'learning_rate'")]
    assert [e["line"] for e in error] == [6]
    assert all("\r" not in e["text"] for e in doc["evidence"])


def test_twenty_megabyte_line_then_a_cuda_error(workdir: Path) -> None:
    log = workdir / "spew.log"
    with log.open("wb") as fh:
        fh.write(b"step 1 loss 2.0\n")
        fh.write(b"x" * (20 * 1024 * 1024))
        fh.write(b"\nRuntimeError: CUDA error: an illegal memory access was encountered\n")
    doc = triage_json("spew.log", cwd=workdir)  # speed is a benchmark's to measure
    assert doc["category"] == "cuda_error_other"
    assert doc["rule"] == "cuda.illegal_access"
    assert [(e["line"], e["text"]) for e in doc["evidence"]] == [
        (3, "RuntimeError: CUDA error: an illegal memory access was encountered")
    ]
    text = run_babysit("triage", "spew.log", cwd=workdir)
    assert "longer than 64 KiB" in text.stdout


# -- no error in the log -----------------------------------------------------------------------


def test_log_that_stops_mid_run_is_a_weak_hang_and_says_it_may_be_a_kill(
    workdir: Path,
) -> None:
    # A hung job leaves such a log, and so does one killed from outside without a word; with no
    # sign of an ending in its last lines, the hang is the likelier: weak, and the action says both.
    _write_lines(workdir / "train.log", [f"epoch 1 step {s} loss 2.{s:03d}" for s in range(100)])
    doc = triage_json("train.log", cwd=workdir)
    assert doc["category"] == "hang"
    assert doc["transient"] is None
    assert doc["confidence"] == 0.1
    assert "show no sign that the process ended" in doc["summary"]
    assert "killed from outside without a word" in doc["summary"]
    assert "OOM killer" in doc["action"] and "py-spy dump" in doc["action"]
    assert "epoch 1 step 99 loss 2.099" in doc["summary"]  # the last line is quoted
    assert doc["evidence"] == []


def test_log_that_says_training_completed_is_unknown(workdir: Path) -> None:
    _write_lines(
        workdir / "train.log",
        ["epoch 3 step 900 loss 1.02", "saving model to out/", "Training completed."],
    )
    doc = triage_json("train.log", cwd=workdir)
    assert doc["category"] == "unknown"
    assert "finished" in doc["summary"] and "Training completed." in doc["summary"]


# -- team rules --------------------------------------------------------------------------------

TEAM_RULES = """\
[[rule]]
id = "team.eval-leak"
category = "cuda_oom"
role = "cause"
transient = true
suspect = "code"
patterns = ['CUDA out of memory']
explain = "Our eval loop leaks activations on long runs."
action = "Known issue TEAM-123: restart from the last checkpoint."
"""


def test_team_rule_wins_over_the_shipped_one(workdir: Path) -> None:
    rules = workdir / "team-rules.toml"
    rules.write_text(TEAM_RULES)
    doc = triage_json("--rules", str(rules), str(OOM_LOG), cwd=workdir)
    assert doc["rule"] == "team.eval-leak"
    assert doc["category"] == "cuda_oom" and doc["transient"] is True
    assert doc["suspect"] == {"kind": "code", "host": None, "rank": 3, "gpu": None}
    assert doc["summary"].startswith("Our eval loop leaks activations on long runs")
    assert doc["action"].startswith("Known issue TEAM-123")
    shipped = triage_json(str(OOM_LOG), cwd=workdir)
    assert shipped["rule"] == "cuda.oom" and shipped["fingerprint"] != doc["fingerprint"]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('[[rule]]\nid = "team.x"\ncategory = \n', "TOML"),
        (TEAM_RULES.replace('"cuda_oom"', '"cuda_ooom"'), "team.eval-leak"),
    ],
    ids=["bad-toml", "unknown-category"],
)
def test_malformed_rules_file(workdir: Path, content: str, words: str) -> None:
    rules = workdir / "team-rules.toml"
    rules.write_text(content)
    res = run_babysit("triage", "--json", "--rules", str(rules), str(OOM_LOG), cwd=workdir)
    assert res.returncode == 2
    assert res.stdout == ""
    err = res.stderr.strip().splitlines()
    assert len(err) == 1, res.stderr
    assert err[0].startswith("babysit: error:")
    assert str(rules) in err[0] and words in err[0]
    assert "Traceback" not in res.stderr


# -- seen before -------------------------------------------------------------------------------


def test_seen_before_from_the_store(workdir: Path) -> None:
    from babysit.store import Store

    home = workdir / "home"
    first = triage_json("--home", str(home), str(OOM_LOG), cwd=workdir)
    assert first["seen_before"] == []
    assert not home.exists()  # triage reads the store; it never creates one
    doc = {k: v for k, v in first.items() if k != "seen_before"}
    ts = time.time() - 3600
    store = Store.open(home)
    try:
        store.add_diagnosis("pretrain-7b", 2, ts, doc)
    finally:
        store.close()

    again = triage_json("--home", str(home), str(OOM_LOG), cwd=workdir)
    assert again["fingerprint"] == first["fingerprint"]
    assert len(again["seen_before"]) == 1
    seen = again["seen_before"][0]
    assert seen["run"] == "pretrain-7b" and seen["attempt"] == 2
    assert seen["rank"] == 3 and seen["category"] == "cuda_oom" and seen["host"] is None
    assert isinstance(seen["at"], str) and seen["at"].startswith(
        time.strftime("%Y", time.gmtime(ts))
    )

    text = run_babysit("triage", "--home", str(home), str(OOM_LOG), cwd=workdir)
    assert text.returncode == 0, text.stderr
    seen_lines = [ln for ln in text.stdout.splitlines() if ln.startswith("seen before:")]
    assert len(seen_lines) == 1
    assert "pretrain-7b" in seen_lines[0] and "attempt 2" in seen_lines[0]

    other = workdir / "other.log"
    other.write_text("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    unrelated = triage_json("--home", str(home), str(other), cwd=workdir)
    assert unrelated["seen_before"] == []
