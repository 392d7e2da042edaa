"""Stack parsers on real captured dumps; grouping, odd ones out and summaries; the renderers."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from babysit.act.stackdump import (
    FLIGHT_RECORDER_BUFFER,
    INJECT_DIR,
    forensics_env,
    pyspy_error,
)
from babysit.detect.stacks import group_stacks
from babysit.documents import stacks_document, stacks_text
from babysit.looks import Frame, ProcessStack, ThreadStack
from babysit.parse.stacks import (
    parse_faulthandler,
    parse_pyspy_json,
    parse_pyspy_text,
    parse_stacks,
    short_path,
)

# Real output: torch 2.13 `torchrun --nproc-per-node 2` (gloo, CPU); rank 0 waits in the second
# all_reduce, rank 1 sleeps in load_batch before it. py-spy 0.4.3 and Python 3.11 faulthandler.
PYSPY_RANK0 = """\
Process 12567: /work/main/.venv/bin/python3 -u tr.py
Python v3.11.7 (/root/.pyenv/versions/3.11.7/bin/python3.11)

Thread 12567 (idle): "MainThread"
    all_reduce (torch/distributed/distributed_c10d.py:3252)
    _exception_logger.<locals>.wrapper (torch/distributed/c10d_logger.py:83)
    main (tr.py:13)
    <module> (tr.py:14)
"""
PYSPY_AGENT = """\
Process 10250: /work/main/.venv/bin/python3 /work/main/.venv/bin/torchrun --nproc-per-node 2 tr.py
Python v3.11.7 (/root/.pyenv/versions/3.11.7/bin/python3.11)

Thread 10250 (idle): "MainThread"
    SimpleElasticAgent._invoke_run (torch/distributed/elastic/agent/server/api.py:923)
    SimpleElasticAgent.run (torch/distributed/elastic/agent/server/api.py:745)
    prof.<locals>.wrap.<locals>.wrapper (torch/distributed/elastic/metrics/api.py:134)
    launch_agent (torch/distributed/launcher/api.py:374)
    elastic_launch.__call__ (torch/distributed/launcher/api.py:194)
    run (torch/distributed/run.py:1019)
    main (torch/distributed/run.py:1028)
    record.<locals>.wrap.<locals>.wrapper (torch/distributed/elastic/multiprocessing/errors/__init__.py:367)
    <module> (torchrun:8)
Thread 10278 (idle): "RendezvousKeepAliveTimer_0"
    Condition.wait (threading.py:331)
    Event.wait (threading.py:629)
    _PeriodicTimer._run (torch/distributed/elastic/rendezvous/utils.py:278)
    Thread.run (threading.py:982)
    Thread._bootstrap_inner (threading.py:1045)
    Thread._bootstrap (threading.py:1002)
"""  # noqa: E501 (real output, one frame is long)
SITE = "/work/main/.venv/lib/python3.11/site-packages"
PYSPY_JSON_RANK0 = json.dumps(
    [
        {
            "pid": 12567,
            "thread_id": 140167128157056,
            "thread_name": "MainThread",
            "os_thread_id": 12567,
            "active": False,
            "owns_gil": False,
            "frames": [
                {
                    "name": "all_reduce",
                    "filename": f"{SITE}/torch/distributed/distributed_c10d.py",
                    "module": None,
                    "short_filename": "torch/distributed/distributed_c10d.py",
                    "line": 3252,
                    "locals": None,
                    "is_entry": True,
                    "is_shim_entry": False,
                },
                {
                    "name": "_exception_logger.<locals>.wrapper",
                    "filename": f"{SITE}/torch/distributed/c10d_logger.py",
                    "module": None,
                    "short_filename": "torch/distributed/c10d_logger.py",
                    "line": 83,
                    "locals": None,
                    "is_entry": False,
                    "is_shim_entry": False,
                },
                {
                    "name": "main",
                    "filename": "/tmp/st/tr.py",
                    "module": None,
                    "short_filename": "tr.py",
                    "line": 13,
                    "locals": None,
                    "is_entry": False,
                    "is_shim_entry": False,
                },
                {
                    "name": "<module>",
                    "filename": "/tmp/st/tr.py",
                    "module": None,
                    "short_filename": "tr.py",
                    "line": 14,
                    "locals": None,
                    "is_entry": True,
                    "is_shim_entry": True,
                },
            ],
            "process_info": None,
        }
    ]
)
PY = "/root/.pyenv/versions/3.11.7/lib/python3.11"
FAULTHANDLER_AGENT = f"""\
Thread 0x00007fe8598136c0 (most recent call first):
  File "{PY}/threading.py", line 331 in wait
  File "{PY}/threading.py", line 629 in wait
  File "{SITE}/torch/distributed/elastic/rendezvous/utils.py", line 278 in _run
  File "{PY}/threading.py", line 982 in run
  File "{PY}/threading.py", line 1045 in _bootstrap_inner
  File "{PY}/threading.py", line 1002 in _bootstrap

Current thread 0x00007fe87c22fb80 (most recent call first):
  File "{SITE}/torch/distributed/elastic/agent/server/api.py", line 923 in _invoke_run
  File "{SITE}/torch/distributed/elastic/agent/server/api.py", line 745 in run
  File "/work/main/.venv/bin/torchrun", line 8 in <module>
"""
FAULTHANDLER_RANK1 = """\
Current thread 0x00007fa096016b80 (most recent call first):
  File "/tmp/st/tr.py", line 4 in load_batch
  File "/tmp/st/tr.py", line 12 in main
  File "/tmp/st/tr.py", line 14 in <module>
"""
# The signal arrived while a helper thread ran: the main thread is listed last, not "Current".
FAULTHANDLER_MAIN_NOT_CURRENT = f"""\
Current thread 0x00007f96e95a56c0 (most recent call first):
  File "{PY}/threading.py", line 327 in wait
  File "/tmp/st/fh.py", line 6 in bg
  File "{PY}/threading.py", line 1002 in _bootstrap

Thread 0x00007f96ea00bb80 (most recent call first):
  File "/tmp/st/fh.py", line 4 in load_batch
  File "/tmp/st/fh.py", line 8 in <module>
"""


# ---------------------------------------------------------------- parsers


def test_short_path_drops_install_prefixes() -> None:
    assert short_path(f"{SITE}/torch/x.py") == "torch/x.py"
    assert short_path("/usr/lib/python3/dist-packages/a/b.py") == "a/b.py"
    assert short_path(f"{PY}/threading.py") == "threading.py"
    assert short_path("/home/me/train.py") == "/home/me/train.py"


def test_pyspy_text_of_a_rank_in_gloo_all_reduce() -> None:
    [t] = parse_pyspy_text(PYSPY_RANK0)
    assert t.name == "MainThread" and not t.active
    assert t.frames[0] == Frame("all_reduce", "torch/distributed/distributed_c10d.py", 3252)
    assert t.frames[-1] == Frame("<module>", "tr.py", 14)


def test_pyspy_text_puts_the_main_thread_first() -> None:
    threads = parse_pyspy_text(PYSPY_AGENT)
    assert [t.name for t in threads] == ["MainThread", "RendezvousKeepAliveTimer_0"]
    assert threads[0].frames[-1] == Frame("<module>", "torchrun", 8)
    assert len(threads[1].frames) == 6


def test_pyspy_json_matches_the_text() -> None:
    [t] = parse_pyspy_json(PYSPY_JSON_RANK0)
    [text] = parse_pyspy_text(PYSPY_RANK0)
    assert t.name == "MainThread"
    assert [(f.function, f.line) for f in t.frames] == [(f.function, f.line) for f in text.frames]
    assert t.frames[0].file == "torch/distributed/distributed_c10d.py"
    assert t.frames[2].file == "/tmp/st/tr.py"


def test_pyspy_json_names_the_main_thread_by_its_tid() -> None:
    data = json.loads(PYSPY_JSON_RANK0)
    data[0]["thread_name"] = None
    other = {**data[0], "os_thread_id": 99, "thread_name": "pin_memory", "active": True}
    [main, t2] = parse_pyspy_json(json.dumps([other, data[0]]), pid=12567)
    assert main.name == "MainThread" and t2.name == "pin_memory" and t2.active


def test_faulthandler_dump() -> None:
    threads = parse_faulthandler(FAULTHANDLER_AGENT)
    assert threads[0].name == "MainThread"
    assert threads[0].frames[0] == Frame(
        "_invoke_run", "torch/distributed/elastic/agent/server/api.py", 923
    )
    assert threads[1].name == "0x00007fe8598136c0"
    assert threads[1].frames[0] == Frame("wait", "threading.py", 331)


def test_faulthandler_main_thread_need_not_be_the_current_one() -> None:
    threads = parse_faulthandler(FAULTHANDLER_MAIN_NOT_CURRENT)
    assert threads[0].name == "MainThread"
    assert threads[0].frames[0].function == "load_batch"


def test_faulthandler_two_dumps_appended_the_last_counts() -> None:
    later = FAULTHANDLER_RANK1.replace("line 4 in", "line 5 in")
    [t] = parse_faulthandler(FAULTHANDLER_RANK1 + later)
    assert t.frames[0].line == 5


def test_faulthandler_odd_lines_and_thread_names() -> None:
    text = (
        "Thread 0x0000abcd [worker] (most recent call first):\n"
        '  File "/x/a.py", line ??? in f\n'
        "  <no Python frame>\n"
        "  ...\n"
    )
    [t] = parse_faulthandler(text)
    assert t.frames == (Frame("f", "/x/a.py", None),)
    assert parse_faulthandler("") == ()
    assert parse_faulthandler("garbage\n") == ()


def test_parse_stacks_reads_raw_dumps_by_tool() -> None:
    raw = [
        ProcessStack(1, 0, "n", "py-spy", raw=PYSPY_JSON_RANK0),
        ProcessStack(2, 1, "n", "py-spy", raw=PYSPY_RANK0),
        ProcessStack(3, 2, "n", "faulthandler", raw=FAULTHANDLER_RANK1),
        ProcessStack(4, 3, "n", "faulthandler", raw="nothing useful\n"),
        ProcessStack(5, 4, "n", "none", error="gone"),
    ]
    out = parse_stacks(raw)
    assert all(p.raw == "" for p in out)
    assert [p.threads[0].frames[0].function for p in out[:3]] == [
        "all_reduce",
        "all_reduce",
        "load_batch",
    ]
    assert (out[3].tool, out[3].error) == ("none", "faulthandler's dump held no Python stack")
    assert out[4].error == "gone"


# ---------------------------------------------------------------- grouping


def _p(
    pid: int, rank: int | None, frames: list[tuple[str, str, int]], **kw: object
) -> ProcessStack:
    stack = ThreadStack("MainThread", tuple(Frame(*f) for f in frames), active=False)
    return ProcessStack(pid=pid, rank=rank, host="node7", tool="py-spy", threads=(stack,), **kw)  # type: ignore[arg-type]


ALL_REDUCE = [
    ("all_reduce", "torch/distributed/distributed_c10d.py", 3252),
    ("main", "/tmp/st/tr.py", 13),
]
LOAD = [("load_batch", "/tmp/st/tr.py", 4), ("main", "/tmp/st/tr.py", 12)]


def test_two_ranks_from_the_real_torchrun_dumps() -> None:
    agent = ProcessStack(10250, None, "node7", "py-spy", parse_pyspy_text(PYSPY_AGENT))
    rank0 = ProcessStack(
        12567, 0, "node7", "py-spy", parse_pyspy_json(PYSPY_JSON_RANK0), parent=10250
    )
    rank1 = ProcessStack(
        12568, 1, "node7", "faulthandler", parse_faulthandler(FAULTHANDLER_RANK1), parent=10250
    )
    r = group_stacks([agent, rank0, rank1], ts=5.0)
    assert r.ts == 5.0
    assert [g.pids for g in r.groups] == [(12567,), (12568,)]  # waiting first on a tie
    assert [g.pids for g in r.odd] == [(12568,)]
    assert r.summary == (
        "rank 1 (pid 12568) is in load_batch (tr.py:4) while rank 0 (pid 12567) waits in "
        "all_reduce (torch/distributed/distributed_c10d.py:3252)"
    )
    assert (r.suspect.kind, r.suspect.host, r.suspect.rank) == ("data", "node7", 1)
    assert len(r.processes) == 3  # the agent is kept, just not grouped


def test_one_odd_rank_among_many_lines_may_differ() -> None:
    procs = [_p(100 + r, r, [(f, p, ln + r) for f, p, ln in ALL_REDUCE]) for r in range(63)]
    procs.append(_p(200, 63, [("step", "/w/train.py", 40), ("main", "/w/train.py", 90)]))
    r = group_stacks(procs, ts=0.0)
    assert len(r.groups) == 2 and len(r.groups[0].pids) == 63
    assert r.summary.startswith(
        "rank 63 (pid 200) is in step (train.py:40) while 63 ranks wait in all_reduce"
    )
    assert (r.suspect.kind, r.suspect.rank) == ("code", 63)


def test_all_ranks_in_the_same_collective() -> None:
    r = group_stacks([_p(i, i, ALL_REDUCE) for i in range(4)], ts=0.0)
    assert r.odd == ()
    assert r.summary == (
        "all 4 ranks wait in all_reduce (torch/distributed/distributed_c10d.py:3252): a "
        "collective no rank finished (suspect the network or a rank outside this node)"
    )
    assert r.suspect.kind == "network" and r.suspect.rank is None


def test_all_ranks_in_user_code() -> None:
    r = group_stacks([_p(i, i, LOAD) for i in range(2)], ts=0.0)
    assert r.summary == "all 2 ranks are in load_batch (tr.py:4)"
    assert r.suspect.kind == "data"


def test_an_even_split_names_no_one() -> None:
    other = [("step", "/w/t.py", 1)]
    r = group_stacks([_p(0, 0, LOAD), _p(1, 1, LOAD), _p(2, 2, other), _p(3, 3, other)], 0.0)
    assert r.odd == () and r.summary.startswith("the ranks are split:")
    assert r.suspect.kind == "unknown"


def test_empty() -> None:
    r = group_stacks([], ts=0.0)
    assert r.groups == () and r.odd == () and r.summary == ""


def test_errors_are_named_and_not_grouped() -> None:
    gone = ProcessStack(9, 3, "node7", "none", error="the process exited before its stack")
    r = group_stacks([_p(i, i, ALL_REDUCE) for i in range(3)] + [gone], ts=0.0)
    assert len(r.groups) == 1
    assert r.summary.endswith("; no stack for rank 3 (pid 9): the process exited before its stack")
    only = group_stacks([gone], ts=0.0)
    assert only.summary == "no stack for rank 3 (pid 9): the process exited before its stack"
    assert only.suspect.kind == "unknown"


def test_a_ranks_own_workers_are_not_grouped() -> None:
    procs = [_p(10, 0, ALL_REDUCE), _p(11, 1, LOAD)]
    procs += [
        _p(20 + i, 1, [("_worker_loop", "torch/utils/data/_utils/worker.py", 3)], parent=11)
        for i in range(4)
    ]
    r = group_stacks(procs, ts=0.0)
    assert [g.pids for g in r.groups] == [(10,), (11,)]
    assert r.suspect.rank == 1


def test_without_ranks_the_roots_count() -> None:
    r = group_stacks([_p(1, None, LOAD), _p(2, None, ALL_REDUCE, parent=1)], ts=0.0)
    assert [g.pids for g in r.groups] == [(1,)]
    assert r.summary == "process 1 is in load_batch (tr.py:4)"


def test_qualified_and_bare_names_group_together() -> None:
    a = _p(1, 0, [("Agent._run", "/x/t.py", 3)])
    b = _p(2, 1, [("_run", "/x/t.py", 4)])
    assert len(group_stacks([a, b], 0.0).groups) == 1


# ---------------------------------------------------------------- views and environment


def test_document_and_text() -> None:
    r = group_stacks([_p(1, 0, ALL_REDUCE), _p(2, 1, ALL_REDUCE), _p(3, 2, LOAD)], ts=7.0)
    doc = stacks_document(r)
    json.dumps(doc)
    assert doc["suspect"] == {"kind": "data", "host": "node7", "rank": 2, "gpu": None}
    assert [(g["count"], g["odd"]) for g in doc["groups"]] == [(2, False), (1, True)]
    text = stacks_text(doc)
    assert text.splitlines()[0] == "stacks of 3 processes (py-spy)"
    assert "ODD ONE OUT: 1 process in load_batch (tr.py:4) (rank 2; pid 3):" in text
    inner_last = text.splitlines()[-1]
    assert inner_last == '    File "/tmp/st/tr.py", line 4, in load_batch'


def test_across_nodes_the_host_is_named_where_pids_repeat() -> None:
    # Regression: stacks.txt and the summary named pids only; across nodes the same pid
    # appears on every node, and the reader could not tell which node the odd rank was on.
    def on(host: str, pid: int, rank: int, frames: list[tuple[str, str, int]]) -> ProcessStack:
        return dataclasses.replace(_p(pid, rank, frames), host=host)

    r = group_stacks(
        [on("node1", 500, 0, ALL_REDUCE), on("node1", 501, 1, ALL_REDUCE),
         on("node2", 500, 2, ALL_REDUCE), on("node2", 501, 3, LOAD)],
        ts=1.0,
    )  # fmt: skip
    assert r.summary.startswith("rank 3 (pid 501 on node2) is in load_batch")
    doc = stacks_document(r)
    assert [g["hosts"] for g in doc["groups"]] == [["node1", "node2"], ["node2"]]
    text = stacks_text(doc)
    assert "3 processes in all_reduce" in text and "(ranks 0, 1, 2; on node1, node2; pid" in text
    assert "ODD ONE OUT: 1 process in load_batch (tr.py:4) (rank 3; on node2; pid 501):" in text
    # One node: as before, no host in the way.
    one = stacks_text(stacks_document(group_stacks([_p(1, 0, ALL_REDUCE), _p(2, 1, LOAD)], 1.0)))
    assert "on node7" not in one


def test_forensics_env_defaults_and_the_users_values_win(tmp_path: Path) -> None:
    env = forensics_env({"PATH": "/bin"}, tmp_path / "s")
    assert env["PYTHONPATH"] == str(INJECT_DIR)
    assert (INJECT_DIR / "sitecustomize.py").is_file()
    assert env["BABYSIT_STACKS_DIR"] == str(tmp_path / "s") and (tmp_path / "s").is_dir()
    assert env["PYTHONFAULTHANDLER"] == "1"
    assert env["TORCH_FR_BUFFER_SIZE"] == env["TORCH_NCCL_TRACE_BUFFER_SIZE"] == "2000"
    assert env["TORCH_NCCL_DUMP_ON_TIMEOUT"] == "1"
    assert env["TORCH_FR_DUMP_TEMP_FILE"] == str(tmp_path / "s" / "nccl_trace_rank_")
    mine = forensics_env(
        {"PYTHONPATH": "/mine", "TORCH_NCCL_TRACE_BUFFER_SIZE": "0"}, tmp_path / "s"
    )
    assert mine["PYTHONPATH"] == f"{INJECT_DIR}:/mine"
    assert all(mine.get(n) in (None, "0") for n in FLIGHT_RECORDER_BUFFER)  # opt-out kept
    off = forensics_env({}, tmp_path / "s", flight_recorder=False, faulthandler=False)
    assert off == {}


def test_pyspy_errors_say_what_to_do() -> None:
    msg = pyspy_error("Error: Operation not permitted (os error 1)", 42)
    assert "SYS_PTRACE" in msg and "ptrace_scope" in msg
    assert (
        pyspy_error("Error: something odd\n", 42) == "py-spy failed on pid 42: Error: something odd"
    )


SYNC = [("synchronize", "torch/cuda/__init__.py", 1040), ("main", "/tmp/st/tr.py", 20)]


def test_a_rank_stuck_on_its_gpu_is_the_odd_one_and_its_node_the_suspect() -> None:
    ranks = [_p(i, i, ALL_REDUCE) for i in range(3)] + [_p(3, 3, SYNC)]
    r = group_stacks(ranks, ts=1.0)
    assert [g.pids for g in r.odd] == [(3,)]
    assert (r.suspect.kind, r.suspect.rank, r.suspect.host) == ("node", 3, "node7")


def test_every_rank_on_its_gpu_is_not_called_a_network_problem() -> None:
    r = group_stacks([_p(i, i, SYNC) for i in range(4)], ts=1.0)
    assert "waiting on the GPU itself" in r.summary and "network" not in r.summary
    assert r.suspect.kind == "node"


def test_only_a_process_seen_in_the_kernel_blames_the_node() -> None:
    from babysit.act.stackdump import IN_KERNEL, NO_DUMP

    stuck = ProcessStack(9, 3, "node7", "none", error=IN_KERNEL.format(pid=9))
    slow = ProcessStack(9, 3, "node7", "none", error=NO_DUMP)
    assert group_stacks([stuck], ts=1.0).suspect.kind == "node"
    assert group_stacks([slow], ts=1.0).suspect.kind == "unknown"
    assert "/proc/9/stack" in group_stacks([stuck], ts=1.0).summary
