"""The root cause among the findings, whom to blame, and the words for it (engine + verdict)."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.records import Category
from babysit.triage import load_knowledge, triage_files
from babysit.triage.engine import Engine
from babysit.triage.stall import quiet
from babysit.triage.verdict import diagnose, normalise, trained_before

KB = load_knowledge()

OOM_RANK5 = [
    "[rank5]:Traceback (most recent call last):",
    '[rank5]:  File "/w/train.py", line 88, in train_step',
    "[rank5]:    loss.backward()",
    "[rank5]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a "
    "total capacity of 79.10 GiB of which 1.19 GiB is free.",
]


def watchdog(rank: int, done: int = 1579) -> list[str]:
    return [
        f"[rank{rank}]:[E1130 01:12:03.408271257 ProcessGroupNCCL.cpp:607] [Rank {rank}] Watchdog "
        "caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.",
        f"[rank{rank}]:[E1130 01:12:03.408271257 ProcessGroupNCCL.cpp:1595] [PG 0 Rank {rank}] "
        "Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued "
        f"NCCL work: 1580, last completed NCCL work: {done}.",
    ]


def triage(*files: list[str]):  # type: ignore[no-untyped-def]
    engine = Engine(KB)
    for i, lines in enumerate(files):
        for n, line in enumerate(lines, 1):
            engine.feed(i, n, line)
    engine.finish()
    return diagnose(engine, [f"rank{i}.log" for i in range(len(files))], 100)


def triage_trained(lines: list[str]):  # type: ignore[no-untyped-def]
    """As triage, one file whose first training step is its first line (before `lines`)."""
    engine = Engine(KB)
    for n, line in enumerate(lines, 2):
        engine.feed(0, n, line)
    engine.finish()
    return diagnose(engine, ["rank0.log"], 100, progress={0: 1})


def test_an_oom_on_one_rank_explains_the_timeouts_of_the_others() -> None:
    lines = [x for r in range(8) if r != 5 for x in watchdog(r)] + OOM_RANK5
    d = triage(lines)
    assert d.category == Category.CUDA_OOM and d.transient is False
    assert d.suspect.rank == 5 and d.suspect.kind == "config"
    assert d.rule == "cuda.oom"
    assert "rank 5" in d.summary and "OutOfMemoryError" in d.summary
    cons = {c.category: c for c in d.consequences}
    assert cons[Category.NCCL_TIMEOUT].count == 7
    assert set(cons[Category.NCCL_TIMEOUT].ranks) == {0, 1, 2, 3, 4, 6, 7}
    # The traceback is the evidence, with the exception line last (for its rank).
    texts = [e.text for e in d.evidence]
    assert texts[0].startswith("Traceback") and "train.py" in texts[1]


def test_the_rank_that_never_reported_a_timeout_is_the_suspect() -> None:
    lines = [x for r in range(16) if r != 11 for x in watchdog(r)]
    lines.append("[rank11]:[titan] step: 1579  loss: 2.1")
    d = triage(lines)
    assert d.category == Category.NCCL_TIMEOUT and d.transient is None
    assert d.suspect.rank == 11
    assert "15 of 16 ranks timed out" in d.summary and "11" in d.summary


def _timeout(rank: int, seq: int, op: str, pg: str = "") -> str:
    return (
        f"[rank{rank}]:[E ProcessGroupNCCL.cpp:563] [{pg}Rank {rank}] Watchdog caught collective "
        f"operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=1800000) ran for 1800086 milliseconds before timing out."
    )


def test_ranks_that_time_out_in_different_collectives_are_a_desync_not_a_flaky_node() -> None:
    d = triage(["iter 10: loss 2.0", _timeout(0, 80, "BROADCAST"), _timeout(1, 80, "ALLGATHER")])
    assert d.category == Category.NCCL_TIMEOUT and d.transient is False
    assert d.suspect.kind == "code" and d.suspect.rank is None
    assert "different collectives at sequence number 80" in d.summary
    assert "rank(s) 1 in ALLGATHER" in d.summary and "rank(s) 0 in BROADCAST" in d.summary
    assert "same collectives in the same order" in d.action
    # whatever order the ranks' lines come in, and in files of their own
    other = triage([_timeout(1, 80, "ALLGATHER")], [_timeout(0, 80, "BROADCAST")])
    assert other.transient is False and "different collectives" in other.summary


def test_ranks_waiting_in_one_collective_or_in_different_groups_are_no_desync() -> None:
    same = triage(["iter 10: loss 2.0", _timeout(0, 80, "ALLREDUCE"), _timeout(1, 80, "ALLREDUCE")])
    assert same.transient is None and "different collectives" not in same.summary
    behind = triage([_timeout(0, 81, "BROADCAST"), _timeout(1, 80, "ALLGATHER")])
    assert "different collectives" not in behind.summary  # one rank a collective behind
    groups = triage([_timeout(0, 80, "BROADCAST", "PG ID 1 PG GUID 1 "),
                     _timeout(1, 80, "ALLGATHER", "PG ID 2 PG GUID 2 ")])  # fmt: skip
    assert "different collectives" not in groups.summary  # each group counts its own


def test_a_timeout_in_a_groups_first_collective_is_the_set_up_not_a_flaky_network() -> None:
    # SeqNum=1: no collective had completed, so no training step either (rank 0 still
    # tokenising the dataset while the others wait in the first broadcast): a restart waits
    # the same way.
    first = triage([_timeout(r, 1, "BROADCAST") for r in (1, 2, 3)])
    assert first.category == Category.NCCL_TIMEOUT and first.transient is False
    assert first.suspect.kind == "config"
    assert "first collective" in first.summary and "raise the timeout" in first.action
    # torch's own count says the same: `last completed NCCL work: -1`
    none_done = triage([
        f"[rank{r}]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank {r}] Timeout at NCCL work: 1, last "
        "enqueued NCCL work: 1, last completed NCCL work: -1." for r in range(2)
    ])  # fmt: skip
    assert none_done.transient is False and "first collective" in none_done.summary
    # Any rank past its first collective: training had started, the usual verdict.
    later = triage([_timeout(1, 1, "BROADCAST"), _timeout(2, 1580, "ALLREDUCE")])
    assert later.transient is None and "first collective" not in later.summary
    mixed = triage([x for r in range(2) for x in watchdog(r, done=-1 if r else 1579)])
    assert mixed.transient is None
    # A barrier (c10d's is a one-element allreduce) among the group's first few collectives:
    # rank 0 preparing the data while the others wait there; not a barrier, or a barrier later
    # on: the usual verdict.
    barrier = triage([_timeout(r, 3, "ALLREDUCE") for r in (1, 2)])
    assert barrier.transient is False and "barrier after only 2 collective(s)" in barrier.summary
    weights = triage([_timeout(r, 3, "ALLREDUCE").replace("NumelIn=1,", "NumelIn=6572160,")
                      for r in (1, 2)])  # fmt: skip
    assert weights.transient is None
    assert triage([_timeout(r, 80, "ALLREDUCE") for r in (1, 2)]).transient is None


def test_the_rank_behind_in_completed_collectives_is_the_suspect() -> None:
    lines = [x for r in range(4) for x in watchdog(r, done=1579 if r != 2 else 1570)]
    d = triage(lines)
    assert d.category == Category.NCCL_TIMEOUT
    assert d.suspect.rank == 2
    assert "completed the fewest collectives (1570)" in d.summary


def test_hardware_beats_the_cuda_errors_it_causes() -> None:
    kernel = ["Nov 30 01:02:03 gpu-17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, "
              "GPU has fallen off the bus."]
    train = ["[rank3]:RuntimeError: CUDA error: an illegal memory access was encountered"]
    d = triage(train, kernel)
    assert d.category == Category.GPU_HARDWARE and d.transient is True
    assert d.suspect.host == "gpu-17" and d.suspect.gpu == "0000:3b:00"
    assert d.rule == "gpu.xid.79" and "Xid 79" in d.summary
    assert "gpu-17" in d.action


def test_absl_s_fatal_check_names_no_node_to_ban() -> None:
    # `Non-OK-status:` after the glog header is absl's words, not a pdsh host label: the node
    # is the suspect, and no node of that name is handed to the ban policy.
    d = triage([
        "F0228 15:59:16.766740  124342 gpu_timer.cc:83] Non-OK-status: stream->Memcpy(...) "
        "status: INTERNAL: CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered",
        "*** Check failure stack trace: ***",
    ])
    assert d.category == Category.GPU_HARDWARE and d.suspect.kind == "node"
    assert d.suspect.host is None and "Non-OK-status." not in d.action


def test_a_consequence_xid_points_at_the_xid_that_caused_it() -> None:
    d = triage(["kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, "
                "Ch 00000001 caused by previous Xid 149"])
    assert d.rule == "gpu.xid.149" and d.category == Category.GPU_HARDWARE


def test_only_follow_on_errors_give_a_low_confidence_verdict_that_says_so() -> None:
    d = triage([
        "[rank0]:RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection "
        "closed by peer [10.0.0.2]:4567",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
    ])
    assert d.category == Category.NETWORK and d.confidence <= 0.35
    assert "usually follows another failure" in d.summary


def test_chained_exceptions_name_the_first_cause() -> None:
    d = triage([
        "Traceback (most recent call last):",
        '  File "/w/data.py", line 12, in __getitem__',
        "    return self.tok(text)",
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: invalid start "
        "byte",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "/w/train.py", line 40, in <module>',
        "    main()",
        "RuntimeError: DataLoader worker (pid 4242) exited unexpectedly",
    ])
    assert d.category == Category.DATA and d.transient is False


def test_a_traceback_cut_before_its_exception_is_read_from_its_last_frame() -> None:
    d = triage([
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.11/tarfile.py", line 687, in read',
        '    raise ReadError("unexpected end of data")',
    ])
    assert d.category == Category.DATA


@pytest.mark.parametrize(
    ("code", "func", "category", "rule"),
    [
        ('    assert pg is not None, "Process group is not initialized"', "__init__",
         Category.USER_CODE, "python.bug"),
        ("    raise ValueError(f'bad shape {shape}')", "check", Category.USER_CODE, "python.bug"),
        ("    from nemo.collections.nlp import data, losses", "<module>", Category.USER_CODE,
         "python.import"),
        # an import inside a function is a call like any other: it says nothing of its own,
        # and triage says where it was raised, reading it weakly as the code's
        ("    from .kernels import fused_adam", "step", Category.USER_CODE, "python.cut_traceback"),
        ("    loss = model(batch)", "train", Category.USER_CODE, "python.cut_traceback"),
    ],
)  # fmt: skip
def test_a_traceback_cut_before_its_exception_is_read_from_its_last_statement(
    code: str, func: str, category: Category, rule: str | None
) -> None:
    d = triage([
        "iter 10: loss 2.0",
        "Traceback (most recent call last):",
        f'  File "/w/model_parallel.py", line 211, in {func}',
        code,
    ])
    assert d.category == category and d.rule == rule
    if rule != "python.cut_traceback":
        assert d.transient is False and code.strip() in d.summary


def test_a_cut_traceback_naming_no_error_is_weakly_the_codes_and_says_where_it_was_raised() -> None:
    d = triage([
        "Traceback (most recent call last):",
        '  File "/w/train.py", line 90, in <module>',
        "    main()",
        '  File "/w/train.py", line 60, in main',
        "    loss = model(batch)",
    ])
    # the likeliest of the errors it may hide, and said to be a guess: weak, no restart decided
    assert d.category == Category.USER_CODE and d.rule == "python.cut_traceback"
    assert d.confidence < 0.5 and d.transient is None and "before its error line" in d.summary
    assert "may as well be" in d.summary
    assert "train.py" in d.summary and "line 60" in d.summary  # the innermost frame
    # any error the log names explains it better, however weak (a lone exception line)
    named = triage(["ConnectionResetError: [Errno 104] Connection reset by peer", *[
        "Traceback (most recent call last):", '  File "/w/train.py", line 60, in main',
        "    loss = model(batch)",
    ]])
    assert (named.rule, named.category) == ("net.peer_closed", Category.NETWORK)


def test_a_cut_traceback_before_the_first_step_is_the_set_up_which_a_restart_repeats() -> None:
    cut = ["Traceback (most recent call last):", '  File "/w/train.py", line 60, in main',
           "    loss = model(batch)"]  # fmt: skip
    assert diagnose(_engine(cut), ["rank0.log"], 3, progress={}).transient is False
    # after training steps the error it hides may be a node's or the network's: not known
    d = diagnose(_engine([*STEPS, *cut]), ["rank0.log"], 8, progress={0: 1})
    assert d.rule == "python.cut_traceback" and d.transient is None


def test_dataloader_workers_dead_before_the_first_step_are_the_set_up_not_the_code() -> None:
    # Killed for memory or for /dev/shm as the first batches load (a container's limit): the
    # same on every restart, but a process's death, not an error of the code's
    line = "RuntimeError: DataLoader worker (pid(s) 25) exited unexpectedly"
    d = diagnose(_engine([line]), ["rank0.log"], 1, progress={})
    assert d.rule == "host.dataloader_exited"
    assert d.category == Category.UNKNOWN and d.transient is False
    d = diagnose(_engine([*STEPS, line]), ["rank0.log"], 6, progress={0: 1})
    assert d.category == Category.UNKNOWN and d.transient is None
    # (a worker that exited with its own Python error's code raised it: the code's, at start-up)
    raised = "RuntimeError: DataLoader worker (pid 123) exited unexpectedly with exit code 1."
    d = diagnose(_engine([raised]), ["rank0.log"], 1, progress={})
    assert d.category == Category.USER_CODE and d.transient is False


def test_a_cut_traceback_loses_to_any_line_that_names_an_error_even_a_weak_one() -> None:
    d = triage([
        "[W socket.cpp:426] [c10d] The server socket has failed to bind to 0.0.0.0:29500 "
        "(errno: 98 - Address already in use).",
        "Traceback (most recent call last):",
        '  File "/w/train.py", line 12, in <module>',
        "    dist.init_process_group('nccl')",
    ])
    assert d.category == Category.NETWORK


@pytest.mark.parametrize(
    ("frames", "writes"),
    [
        (['  File "/w/trainer.py", line 916, in _save_checkpoint',
          '    torch.save(self.optimizer.state_dict(), os.path.join(output_dir, "optimizer.pt"))',
          '  File "/venv/site-packages/torch/serialization.py", line 374, in save',
          "    _legacy_save(obj, opened_file, pickle_module, pickle_protocol)"], True),
        (['  File "/venv/mmengine/hooks/checkpoint_hook.py", line 345, in after_epoch',
          "    self._save_checkpoint(runner)"], True),
        (['  File "/w/io.py", line 3, in write_table', "    writer.write(batch)"], True),
        # the file system's own operations: removing, moving, making a directory
        (['  File "/w/train.py", line 478, in clean_up', "    shutil.rmtree(WEIGHTS_PATH)"], True),
        (['  File "/usr/lib/python3.10/os.py", line 225, in makedirs',
          "    mkdir(name, mode)"], True),
        # the same names elsewhere are no file-system operation: a hook's, a dataclass's
        (['  File "/venv/site-packages/torch/utils/hooks.py", line 40, in remove',
          "    del hooks_dict[self.id]"], False),
        (['  File "/usr/lib/python3.10/dataclasses.py", line 1453, in replace',
          "    return obj.__class__(**changes)"], False),
        # a function that also trains is not a write; neither is a forward pass
        (['  File "/w/trainer.py", line 1817, in _train_and_save',
          "    model = self._train_single(X, y)"], False),
        (['  File "/w/train.py", line 60, in main', "    loss = model(batch)"], False),
    ],
)  # fmt: skip
def test_a_traceback_cut_while_writing_a_checkpoint_suspects_the_storage(
    frames: list[str], writes: bool
) -> None:
    d = triage(["iter 10: loss 2.0", "Traceback (most recent call last):", *frames])
    if writes:
        assert d.category == Category.FILESYSTEM_IO and d.rule == "fs.cut_checkpoint_write"
        # as fs.checkpoint_write: a full disk, a quota or a refused path, met again
        assert d.transient is False and d.confidence < 0.5 and "df -h" in d.action
    else:
        assert d.category == Category.USER_CODE and d.rule == "python.cut_traceback"


@pytest.mark.parametrize(
    ("frames", "alloc"),
    [
        # vLLM's sleep mode mapping its memory back, in its allocator's module
        (['  File "/venv/vllm/device_allocator/cumem.py", line 224, in wake_up',
          "    create_and_map(handle)",
          '  File "/venv/vllm/device_allocator/cumem.py", line 77, in create_and_map',
          "    python_create_and_map(*allocation_handle)"], True),
        # ... or the engine waking up, the allocator's frames cut off
        (['  File "/venv/vllm/v1/engine/core.py", line 353, in wake_up',
          "    self.model_executor.wake_up(tags)"], True),
        (['  File "/venv/cupy/cuda/memory.py", line 9, in malloc', "    return self._malloc(n)"],
         True),
        # vLLM's engine allocating its KV cache at start-up, the executor's frames cut off
        (['  File "/venv/vllm/engine/llm_engine.py", line 429, in _initialize_kv_caches',
          "    self.model_executor.initialize_cache(num_gpu_blocks, num_cpu_blocks)"], True),
        # a decoder's cache elsewhere (Flax's translation example) is no allocator
        (['  File "/w/examples/wmt/train.py", line 220, in initialize_cache',
          "    init_variables = model.init(rng, jnp.ones(input_shape), decode=True)"], False),
        # the same words elsewhere: a model's forward, a queue's wait
        (['  File "/w/train.py", line 60, in main', "    loss = model(batch)"], False),
        (['  File "/w/allocation_report.py", line 3, in main', "    print(report)"], False),
        (['  File "/venv/site-packages/xyz/caching_allocator.py", line 40, in grow',
          "    self._reserve(size)"], True),
    ],
)  # fmt: skip
def test_a_traceback_cut_while_allocating_device_memory_suspects_an_oom(
    frames: list[str], alloc: bool
) -> None:
    d = triage(["iter 10: loss 2.0", "Traceback (most recent call last):", *frames])
    if alloc:
        assert d.category == Category.CUDA_OOM and d.rule == "cuda.cut_allocation"
        assert d.transient is False and d.confidence < 0.5
    else:
        assert d.rule == "python.cut_traceback"
    # any error the log names explains the run better
    named = triage(["RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1553, unhandled system "
                    "error", "Traceback (most recent call last):", *frames])  # fmt: skip
    assert named.rule != "cuda.cut_allocation"


@pytest.mark.parametrize(
    ("frames", "net"),
    [
        # the innermost frame in an HTTP client's or a socket's module
        (['  File "/w/log.py", line 9, in push', "    r = session.post(url, json=payload)",
          '  File "/venv/site-packages/requests/sessions.py", line 637, in post',
          '    return self.request("POST", url, data=data, json=json, **kwargs)'], True),
        (['  File "/usr/lib/python3.11/http/client.py", line 1375, in getresponse',
          "    response.begin()"], True),
        # a frame that sends a request, its module the run's own
        (['  File "/w/reward.py", line 40, in score', "    resp = requests.post(URL, json=q)"],
         True),
        (['  File "/venv/mlflow/utils/rest_utils.py", line 136, in call_endpoint',
          "    host_creds=host_creds, endpoint=endpoint, method=method, json=json_body)"], True),
        # a response's check of its status (W&B's file stream): the server answered an error
        (['  File "/venv/site-packages/wandb/util.py", line 731, in request_with_retry',
          "    response.raise_for_status()"], True),
        # torch's rendezvous creating its store on MASTER_ADDR:MASTER_PORT
        (['  File "/venv/torch/distributed/rendezvous.py", line 230, in _tcp_rendezvous_handler',
          "    store = _create_c10d_store("], True),
        # a pipe between processes, a database file: no server
        (['  File "/usr/lib/python3.10/multiprocessing/connection.py", line 411, in _send_bytes',
          "    self._send(header + buf)"], False),
        (['  File "/w/cache.py", line 5, in open_cache', "    db = sqlite3.connect(path)"], False),
        # a server's handler calling the run's code is no request; nor a forward pass
        (['  File "/venv/site-packages/grpc/_server.py", line 435, in _call_behavior',
          "    response_or_iterator = behavior(argument, context)",
          '  File "/app/server.py", line 246, in GetTrainingJob',
          "    details = actor.get_model_version_dict()"], False),
        (['  File "/w/train.py", line 60, in main', "    loss = model(batch)"], False),
    ],
)  # fmt: skip
def test_a_traceback_cut_while_talking_to_a_server_suspects_the_network(
    frames: list[str], net: bool
) -> None:
    d = triage(["iter 10: loss 2.0", "Traceback (most recent call last):", *frames])
    if net:
        assert d.category == Category.NETWORK and d.rule == "net.cut_request"
        assert d.transient is None and d.confidence < 0.5 and d.suspect.kind == "network"
    else:
        assert d.rule != "net.cut_request"
    # any error the log names explains the run better
    named = triage(["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                    "Traceback (most recent call last):", *frames])  # fmt: skip
    assert named.category == Category.CUDA_OOM


def test_a_rate_limit_the_run_went_on_after_is_no_cause(tmp_path: Path) -> None:
    steps = [f"{{'loss': 2.{i}, 'learning_rate': 1e-05, 'epoch': 0.0{i}}}" for i in range(1, 6)]
    limited = [
        "HTTP Error 429 thrown while requesting HEAD https://huggingface.co/api/datasets/o/d",
        "Retrying in 1s [Retry 1/5].",
    ]
    log = tmp_path / "train.log"
    log.write_text("\n".join([*steps[:2], *limited, *steps[2:]]) + "\n")
    assert triage_files([log], KB).diagnosis.category == Category.UNKNOWN
    again = "Rate limited. Waiting 207.0s before retry [Retry 2/5]."
    log.write_text("\n".join(["loading model", *limited, again]) + "\n")
    d = triage_files([log], KB).diagnosis
    assert d.category == Category.NETWORK and d.rule == "net.rate_limited"


def test_an_exception_quoted_as_its_repr_is_read_as_that_exception() -> None:
    hydra = [
        "Error executing job with overrides: ['trainer.devices=8']",
        "Error in call to target 'model.unet.ConditionalUnet1D':",
        "TypeError(\"ConditionalUnet1D.__init__() got an unexpected keyword argument 'dropout'\")",
        "full_key: model.net",
    ]
    d = triage(hydra)
    assert d.category == Category.USER_CODE and d.rule == "python.bug"
    assert d.confidence < 0.5  # weak, as a lone exception line
    d = triage(["OSError('[Errno 28] No space left on device')"])
    assert d.category == Category.FILESYSTEM_IO
    # a repr inside other words is not the line's own exception
    assert triage(["retrying after ValueError('bad batch') in worker 3"]).rule != "python.bug"
    # one no rule knows: the stand-in of a lone exception line, as its plain form gets
    plain = triage(["MyCustomError: worker lost"]).rule
    assert triage(["MyCustomError('worker lost')"]).rule == plain


def test_a_glued_header_with_colour_codes_or_an_original_before_it_is_read_and_a_group_s_is_not(
) -> None:
    frames = ['  File "/w/t.py", line 3, in main', "    x = cfg['lr']", "KeyError: 'lr'"]
    # colour codes inside the header: the body has none, the raw line has them (no crash)
    d = triage(["^C\x1b[1mTraceback (most recent call last)\x1b[0m:", *frames])
    assert d.category == Category.USER_CODE and d.evidence[-1].text == "KeyError: 'lr'"
    # a DataLoader worker's `Original Traceback` glued to a bar keeps its word: the worker's
    worker = [
        "KeyError: Caught KeyError in DataLoader worker process 0.",
        "100%|###| 3/3^COriginal Traceback (most recent call last):",
        '  File "/w/data/my_dataset.py", line 88, in __getitem__',
        '    return self.items[idx]["label"]',
        "KeyError: 'label'",
    ]
    d = triage(["step 1 | loss 2.0", *worker])
    assert d.category == Category.DATA and d.rule == "data.worker_exception"
    # an exception group's nested headers are its own lines, read one by one
    group = [
        "step 10 | loss 2.1",
        "  + Exception Group Traceback (most recent call last):",
        '  |   File "/w/serve.py", line 12, in main',
        "  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)",
        "  +-+---------------- 1 ----------------",
        "    | Traceback (most recent call last):",
        '    |   File "/w/serve.py", line 8, in worker',
        "    | torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "    +------------------------------------",
        "wandb: Synced 5 files",
    ]
    assert triage(group).category == Category.CUDA_OOM


def test_a_traceback_header_glued_to_a_progress_bar_or_a_ctrl_c_still_starts_one() -> None:
    frames = [
        '  File "/w/data/my_dataset.py", line 88, in __getitem__',
        '    return self.items[idx]["label"]',
        "KeyError: 'label'",
    ]
    bar = "Map: 100%|##########| 500/500 [00:01<00:00, 320.1 examples/s]"
    d = triage([bar + "Traceback (most recent call last):", *frames])
    assert d.category == Category.DATA and d.evidence[-1].text == "KeyError: 'label'"
    assert any("my_dataset.py" in e.text for e in d.evidence)
    waits = [
        '  File "/venv/torch/multiprocessing/spawn.py", line 75, in join',
        "    ready = multiprocessing.connection.wait(",
    ]
    d = triage(["Use GPU: 0 for training", "^CTraceback (most recent call last):", *waits])
    assert d.category == Category.HANG  # the ^C before it is a line of its own


def test_ray_s_header_starts_a_traceback_and_a_vllm_logged_one_is_read_through_its_prefix() -> None:
    frames = [
        '  File "/w/reward.py", line 16, in <module>',
        '    response = requests.get(f"{base}/models")',
        '  File "/venv/site-packages/requests/api.py", line 59, in request',
        "    return session.request(method=method, url=url, **kwargs)",
    ]
    head = "ray::TaskRunner.run() (pid=2292396, ip=10.0.0.3, actor_id=20de01, repr=<Runner>)"
    d = triage(["step 3 | loss: 2.0", head, *frames])
    assert d.rule == "net.cut_request" and d.evidence[0].text == head
    unhandled = "Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): " + head
    assert triage(["step 3 | loss: 2.0", unhandled, *frames]).rule == "net.cut_request"
    logged = "2021-07-09 12:11:59,794 ERROR worker.py:78 -- " + unhandled  # Ray's logger first
    assert triage(["step 3 | loss: 2.0", logged, *frames]).rule == "net.cut_request"
    # after an exception's name, the line is that exception's own finding
    wrapped = triage([f"ray.exceptions.RayTaskError(ValueError): {head}", *frames,
                      "ValueError: Could not connect to server after multiple tries."])  # fmt: skip
    assert wrapped.category == Category.NETWORK and wrapped.rule == "net.connect"
    vllm = "(EngineCore pid=7) ERROR 06-10 10:55:03 [core.py:459] "
    d = triage(
        [vllm + "Traceback (most recent call last):"] + [vllm + f for f in frames]
        + [vllm + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]
    )  # fmt: skip
    assert d.category == Category.CUDA_OOM and len(d.evidence) >= 5  # with its frames


def test_a_signal_handler_s_segfault_words_pass_the_prefilter(tmp_path: Path) -> None:
    log = tmp_path / "rank93.log"
    log.write_text(
        " 93: saving checkpoint at iteration 10\n"
        " 93: !!!!!!! Segfault encountered !!!!!!!\n"
        ' 93:   File "<unknown>", line 0, in mz_crc32\n'
    )
    d = triage_files([log], KB).diagnosis
    assert d.category == Category.SEGFAULT and d.suspect.rank == 93


def test_a_cut_write_of_one_rank_outranks_the_others_collective_timeouts() -> None:
    d = triage([
        "[rank1]:[E1218 12:49:09.086536415 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=517, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=1800000) ran for 1800046 milliseconds before timing out.",
        "[rank0]:Traceback (most recent call last):",
        '[rank0]:  File "/w/train.py", line 200, in save_checkpoint',
        "[rank0]:    torch.save(state, path)",
    ])
    assert d.category == Category.FILESYSTEM_IO and d.suspect.rank == 0


def test_an_exception_quoted_in_backticks_or_json_is_still_the_exception() -> None:
    d = triage(["`AssertionError: param 730 already assigned swap buffer id 45`"])
    assert d.category == Category.USER_CODE and d.rule == "python.bug"
    d = triage(['{"level": "error", "msg": "ValueError: Image features and tokens do not match"}'])
    assert d.rule == "python.bug"


def test_rays_list_of_causes_for_a_dead_worker_is_a_guess_that_a_real_error_beats() -> None:
    died = (
        "(raylet) A worker died or was killed while executing a task by an unexpected system "
        "error. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with "
        "a connection error code 2. End of file. There are some potential root causes. (1) The "
        "process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force "
        "is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected "
        "errors."
    )
    d = triage([died])
    # not a host OOM either: Ray's memory monitor says so when it kills for memory
    assert d.category == Category.UNKNOWN and d.rule == "host.ray_worker_died"
    assert d.confidence <= 0.4  # not a segfault: Ray lists SIGSEGV among the guesses
    assert "OOM killer" in d.summary and "cannot tell which" in d.summary
    cuda = triage([
        "(WorkerDict pid=93663) RuntimeError: CUDA error: an illegal memory access was encountered",
        died,
    ])
    assert cuda.category == Category.CUDA_ERROR_OTHER


TIME_LIMIT = (
    "slurmstepd: error: *** STEP 4226796.2 ON eos0117 CANCELLED AT 2025-12-03T14:53:02 DUE TO "
    "TIME LIMIT ***"
)


def test_a_time_limit_after_the_training_said_it_was_done_is_a_hang_at_exit() -> None:
    d = triage([
        " iteration       50/      50 | consumed samples:        25600 | lm loss: 4.7918",
        "[after training is done] datetime: 2025-12-03 14:45:03",
        TIME_LIMIT,
    ])
    assert d.category == Category.HANG and d.transient is False
    assert d.suspect.kind == "code" and "did not exit after the training" in d.summary
    assert "destroy_process_group()" in d.action
    assert [e.text for e in d.evidence][:2] == [
        "[after training is done] datetime: 2025-12-03 14:45:03", TIME_LIMIT]
    # the limit in the middle of the training is the scheduler's, as ever
    mid = triage([" iteration       20/      50 | lm loss: 4.7918", TIME_LIMIT])
    assert mid.category == Category.PREEMPTION and mid.transient is True
    # and a "done" line after the limit (another file's, a later attempt's) changes nothing
    late = triage([TIME_LIMIT, "training finished"])
    assert late.category == Category.PREEMPTION


def test_an_unknown_exception_is_quoted_with_low_confidence() -> None:
    d = triage([
        "Traceback (most recent call last):",
        '  File "/w/train.py", line 3, in <module>',
        "mylib.FrobnicationError: the frobnicator is out of sync",
    ])
    assert d.category == Category.UNKNOWN and d.transient is None
    assert d.rule == "python.unclassified" and d.confidence <= 0.3
    assert "FrobnicationError" in d.summary


def test_precedence_picks_the_fundamental_cause_then_the_earliest() -> None:
    d = triage([
        "[rank1]:[2026-11-30 01:00:00,000] KeyError: 'labels'",
        "[rank2]:[2026-11-30 01:00:05,000] KeyError: 'attention_mask'",
    ])
    assert d.suspect.rank == 1 and "'labels'" in d.summary
    # Timestamps decide over the order of the files when both lines carry one.
    d = triage(
        ["[rank2]:[2026-11-30 01:00:05,000] KeyError: 'attention_mask'"],
        ["[rank1]:[2026-11-30 01:00:00,000] KeyError: 'labels'"],
    )
    assert d.suspect.rank == 1


def test_torchruns_summary_names_the_host_and_rank_when_the_error_does_not() -> None:
    d = triage([
        "KeyError: 'attention_mask'",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2026-11-30_01:12:04",
        "  host      : node-007",
        "  rank      : 61 (local_rank: 5)",
        "  exitcode  : 1 (pid: 4242)",
    ])
    assert d.category == Category.USER_CODE
    assert d.suspect.host == "node-007" and d.suspect.rank == 61


def test_a_sigkilled_worker_points_at_host_memory() -> None:
    d = triage([
        "[E ProcessGroupNCCL.cpp:474] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=9, OpType=ALLREDUCE) ran for 600060 milliseconds before timing out.",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 "
        "(pid: 178) of binary: /usr/bin/python",
    ])
    assert d.category == Category.HOST_OOM and d.transient is None


def test_a_flat_line_with_a_consequence_first_still_names_its_cause() -> None:
    d = triage([
        "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. terminate "
        "called after throwing an instance of 'std::runtime_error' what(): NCCL error: remote "
        "process exited or there was a network error, NCCL version 2.14.3 ncclRemoteError: Last "
        "error: NET/IB : Got completion from peer 11.214.147.122<39138> with error 12"
    ])
    assert d.category == Category.NCCL_ERROR and d.rule == "nccl.ib_completion"


@pytest.mark.parametrize(
    ("last", "category", "transient"),
    [
        ("[titan] step: 812  loss: 2.31", Category.UNKNOWN, None),
        ("Training completed. Do not forget to share your model on huggingface.co/models =)",
         Category.UNKNOWN, None),
    ],
)
def test_no_error_is_unknown_whether_or_not_the_run_says_it_finished(
    last: str, category: Category, transient: bool | None
) -> None:
    engine = Engine(KB)
    d = diagnose(engine, ["train.log"], 812, last)
    assert d.category == category and d.transient is transient and d.rule is None
    assert "no error found in 812 lines of train.log" in d.summary


def test_a_log_that_ends_without_an_error_says_so_and_keeps_the_hint() -> None:
    d = diagnose(Engine(KB), ["train.log"], 812, "[titan] step: 812  loss: 2.31")
    assert d.category == Category.UNKNOWN, d.summary
    assert "the log ends without an error" in d.summary
    assert "last line: [titan] step: 812" in d.summary
    for hint in ("py-spy dump", "OOM killer", "SIGKILL", "preemption"):
        assert hint in d.action, hint
    one = diagnose(Engine(KB), ["train.log"], 1, "[titan] step: 1  loss: 2.31")
    assert "no error found in 1 line of train.log" in one.summary


def test_a_device_named_by_the_failure_decides_over_an_allocator_map_or_a_matlab_intro() -> None:
    # TensorFlow's BFC map is printed by the CPU's allocators too: the OOM's line names the CPU
    d = triage([
        "2021-11-16 11:34:36.221632: W tensorflow/core/common_runtime/bfc_allocator.cc:468] "
        "***************************************************************************x********x",
        "2021-11-16 11:34:36.221746: W tensorflow/core/framework/op_kernel.cc:1680] OP_REQUIRES "
        "failed at conv_ops.cc:500 : Resource exhausted: OOM when allocating tensor with "
        "shape[89956693,512] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by "
        "allocator mklcpu",
    ])
    assert d.category == Category.HOST_OOM and d.rule == "host.tf_cpu_oom", d.summary
    # alone, the map is the GPU's out of memory
    d = triage([
        "2018-05-16 14:46:52.011159: W tensorflow/core/common_runtime/bfc_allocator.cc:279] "
        "*************************************************************************************___",
    ])
    assert d.category == Category.CUDA_OOM and d.rule == "cuda.oom_bfc_map", d.summary
    # MATLAB's intro, then the CUDA error's name on the next line: the name decides
    d = triage([
        "Error using gpuArray/subsref",
        "An unexpected error occurred during CUDA execution. The CUDA error was:",
        "CUDA_ERROR_ILLEGAL_ADDRESS",
    ])
    assert d.rule == "cuda.illegal_access", d.summary


@pytest.mark.parametrize("text", ["\n\n\n", "   \n\t\n"])
def test_a_blank_log_file_is_not_a_hang(tmp_path: Path, text: str) -> None:
    log = tmp_path / "train.log"
    log.write_text(text)
    d = triage_files([log], KB).diagnosis
    assert d.category == Category.UNKNOWN, d.summary


def test_a_log_whose_last_lines_show_no_sign_of_an_ending_is_a_weak_hang(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("iter 1: loss 2.5\niter 2: loss 2.4\n")
    d = triage_files([log], KB).diagnosis
    assert d.category == Category.HANG and d.rule is None and d.confidence < 0.5, d.summary
    assert d.transient is None, d.summary  # it trained: a hang mid-run may not come back
    assert "show no sign that the process ended" in d.summary
    assert "unless it was killed from outside without a word" in d.summary
    assert "last line: iter 2: loss 2.4" in d.summary
    for hint in ("py-spy dump", "OOM killer", "SIGKILL", "preemption"):  # both readings
        assert hint in d.action, hint


@pytest.mark.parametrize(
    "end",
    [
        # the shell's words for a child that a signal ended, and for a finished job
        "Terminated",
        "Hangup",
        "Alarm clock",
        "[1]+  Done                    python train.py",
        "Connection to gpu-17 closed by remote host.",
        "launcher: child process exited, status 1",
        "wandb: Run summary: train/loss 2.4 (stopped)",
        "received SIGTERM, shutting down",
    ],
)
def test_a_word_of_an_ending_in_the_last_lines_keeps_a_silent_log_unknown(
    tmp_path: Path, end: str
) -> None:
    log = tmp_path / "train.log"
    log.write_text("iter 1: loss 2.5\niter 2: loss 2.4\n" + end + "\n\n")
    d = triage_files([log], KB).diagnosis
    # no rule reads the line: only the silent end's reading, which the word keeps unknown
    assert d.category == Category.UNKNOWN and d.rule is None, d.summary
    # One of the logs says its process ended: not a hang, whatever the others show.
    other = tmp_path / "rank1.log"
    other.write_text("iter 1: loss 2.5\niter 2: loss 2.4\n")
    assert triage_files([other], KB).diagnosis.category == Category.HANG
    assert triage_files([log, other], KB).diagnosis.category != Category.HANG


def test_only_the_last_lines_tell_whether_a_silent_log_ended() -> None:
    steps = [f"iter {i}: loss 2.{i % 10}" for i in range(40)]
    # an error with 30 lines after it (blank lines not counted) says nothing of how the log
    # ends; with 29, it is among its last 30
    assert quiet([["RuntimeError: x", *steps[:30]]])
    assert quiet([["RuntimeError: x", *[x for s in steps[:30] for x in (s, "", "  ")]]])
    assert not quiet([["RuntimeError: x", *steps[:29]]])
    assert not quiet([[*steps, "Exiting: out of time"]])
    assert not quiet([[*steps, "Process exited with return code 1", "", "  "]])
    assert not quiet([])  # no log read: nothing is known of how it ends
    # a metric named error, a sigma, a signature: no ending
    assert quiet([[*steps, "val_error: 0.12 error_rate=0.3", "sigma=0.5 signature ok"]])
    # Jupyter's server restarting the kernel that ran the training: that process ended
    assert not quiet(
        [[*steps, "[I 13:31:37.030 NotebookApp] KernelRestarter: restarting kernel (1/5), keep "
          "random ports", "[D 13:31:37.031 NotebookApp] Starting kernel: ['python3', '-m', "
          "'ipykernel_launcher']"]]
    )
    assert not quiet([[*steps, "[W 2023-08-25 17:12:15.769 ServerApp] kernel "
                       "e2dcf2e8-1352-4305-957d-eedf1d33904a restarted"]])
    assert quiet([[*steps, "[I 17:10:01 ServerApp] Kernel started: e2dcf2e8-1352"]])


def test_a_log_read_only_in_part_is_no_hang(tmp_path: Path) -> None:
    # A truncated .gz: what was read ends mid-log, which says nothing of the log's end.
    import gzip

    full = gzip.compress(
        ("\n".join(f"iter {i}: loss 2.{i % 10}" for i in range(20000)) + "\n").encode()
    )
    log = tmp_path / "train.log.gz"
    log.write_bytes(full[: len(full) // 2])
    report = triage_files([log], KB)
    assert report.skipped, report  # the cut is named
    assert report.diagnosis.category == Category.UNKNOWN, report.diagnosis.summary


@pytest.mark.parametrize(
    "last",
    [
        "sfr-pod:435:783 [0] NCCL INFO Ring 00 : 0 -> 8 [receive] via NET/Socket/0",
        "neuromancer:13802:13802 [0] INFO Launch mode Group/CGMD",
        "initializing ddp: GLOBAL_RANK: 3, MEMBER: 4/8",
    ],
)
def test_a_log_that_stops_in_distributed_set_up_says_where(last: str) -> None:
    d = diagnose(Engine(KB), ["train.log"], 11, last)
    assert d.category == Category.UNKNOWN, d.summary
    assert "ends without an error" in d.summary and "NCCL or DDP initialisation" in d.summary


@pytest.mark.parametrize(
    ("text", "transient"),
    [
        # No step before the log ends: the set-up stopped it, and a restart repeats the set-up.
        ("loading checkpoint shards\nNCCL INFO Connected all trees\n", False),
        ("prepare tokenizer\nloading dataset: 1200 images in 12 folders\n", False),
        # Steps, then nothing: hung, or killed from outside, which a restart may not repeat.
        ("iter 1: loss 2.5\niter 2: loss 2.4\n", None),
    ],
)
def test_a_silent_log_without_a_training_step_is_the_set_up(
    tmp_path: Path, text: str, transient: bool | None
) -> None:
    log = tmp_path / "train.log"
    log.write_text(text)
    d = triage_files([log], KB).diagnosis
    # no sign that its process ended: a weak hang (where, the set-up or the training, decides
    # whether a restart repeats it)
    assert d.category == Category.HANG and d.rule is None, d.summary
    assert d.transient is transient, d.summary
    if transient is False:
        assert d.suspect.kind == "config"
        assert "no training step shows before it" in d.summary
        assert d.action.startswith("It never reached its first training step")
        assert "py-spy dump" in d.action  # the hint about hangs and silent kills stays
    # The supervisor saw steps that the log does not show: not the set-up.
    trained = triage_files([log], KB, trained=True).diagnosis
    assert trained.transient is None and trained.suspect.kind == "unknown"


@pytest.mark.parametrize(
    "last",
    [
        "    all_gather_into_tensor (deepspeed/comm/comm.py:305)",  # py-spy dump
        'Thread 42 (idle): "MainThread"',
        "#14 0x000014cdd8a6cf36 in cudaMemcpyAsync () from /usr/lib64/libcudart.so.11.0",  # gdb
        "#0  __GI___poll (fds=0x55d, nfds=1, timeout=-1) at ../sysdeps/poll.c:29",
        # a long gdb frame wrapped: its library, or its source line, on a line of its own
        "   from /usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cuda.so",
        "    at ../sysdeps/nptl/futex-internal.c:57",
        '  File "/w/train.py", line 88 in train_step',  # faulthandler
        "[1,0]<stderr>:Stalled ranks:",  # Horovod's stall inspector
    ],
)
def test_a_log_that_ends_in_the_stacks_of_stuck_processes_is_a_hang(last: str) -> None:
    d = diagnose(Engine(KB), ["train.log"], 40, last)
    assert d.category == Category.HANG, d.summary
    assert "ends in the stacks of stuck processes" in d.summary


@pytest.mark.parametrize(
    "log",
    [
        # every rank waits on the op's build lock without a word (DeepSpeed's cpu_adam)
        "[2024-05-02 10:11:12,001] [INFO] [engine.py:77] data_parallel_size: 8\n"
        "Using /root/.cache/torch_extensions/py310_cu121 as PyTorch extensions root...\n"
        "Using /root/.cache/torch_extensions/py310_cu121 as PyTorch extensions root...\n",
        "[rank3]: Using  .cache/torch_extensions/py310_cu118 as PyTorch extensions root...\n",
    ],
)
def test_a_log_that_stops_loading_a_jit_extension_waits_for_its_lock(
    tmp_path: Path, log: str
) -> None:
    path = tmp_path / "train.log"
    path.write_text(log)
    d = triage_files([path], KB).diagnosis
    assert d.category == Category.HANG and d.rule is None, d.summary
    assert d.transient is False and d.suspect.kind == "config"  # the lock stays: fix, then run
    assert "extension" in d.summary and "torch_extensions" in d.action


ROOT = "Using /root/.cache/torch_extensions/py310_cu121 as PyTorch extensions root...\n"
NINJA = "Emitting ninja build file /root/.cache/torch_extensions/py310_cu121/cpu_adam/build.ninja\n"


@pytest.mark.parametrize(
    "logs",
    [
        # the rank that holds the lock builds and loads it: its lines follow, then the log ends
        [ROOT + NINJA + "Loading extension module cpu_adam...\n"],
        # a build cut by the log's end (a time limit, the OOM killer while nvcc ran), one rank
        # still printing the root's line after the builder's first lines
        [ROOT + NINJA + "Building extension module cpu_adam...\n" + "[rank1]: " + ROOT],
        # the same in per-rank files: rank 0 builds, rank 1's log ends at the root's line
        [ROOT + NINJA + "Building extension module cpu_adam...\n", ROOT],
    ],
)
def test_a_log_whose_extension_build_shows_is_no_lock_wait(
    tmp_path: Path, logs: list[str]
) -> None:
    paths = []
    for i, text in enumerate(logs):
        paths.append(tmp_path / f"rank{i}.log")
        paths[-1].write_text(text)
    d = triage_files(paths, KB).diagnosis
    # only the log's silent end, read as such (a weak hang, no lock wait)
    assert d.category == Category.HANG and d.rule is None and d.confidence <= 0.1, d.summary
    assert "lock" not in d.summary, d.summary


def test_the_stall_inspector_is_found_in_a_big_log_too(tmp_path: Path) -> None:
    # Big logs are searched for a few needles only (scan.NEEDLES): the hang's own evidence
    # must be among them, or a 1 GB log of a hung Horovod job reads as one without an error.
    log = tmp_path / "train.log"
    log.write_text(
        "iter 1: loss 2.5\n"
        "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by "
        "subset of ranks and are waiting for remainder of ranks for more than 60 seconds.\n"
        "iter 2: loss 2.5\n"
    )
    d = triage_files([log], KB, rare=False).diagnosis
    assert d.category == Category.HANG and d.rule == "hang.stacks", d.summary


def test_an_empty_log_is_unknown_and_says_why() -> None:
    d = diagnose(Engine(KB), ["empty.log"], 0, "")
    assert d.category == Category.UNKNOWN and "holds no text" in d.summary


def test_noise_lines_are_dropped() -> None:
    d = triage(["node-1:123:456 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0 error"])
    assert d.rule is None


def test_fingerprints_ignore_ranks_hosts_numbers_and_paths_but_not_the_place() -> None:
    a = triage(["[rank3]:KeyError: 'attention_mask'"])
    b = triage(["[rank61]:KeyError: 'attention_mask'"])
    assert a.fingerprint == b.fingerprint
    oom1 = triage(["gpu-17: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB"])
    oom2 = triage(["gpu-09: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7 GiB"])
    assert oom1.fingerprint == oom2.fingerprint
    here = triage(["Traceback (most recent call last):", '  File "/a/x.py", line 3, in f',
                   "KeyError: 'k'"])
    there = triage(["Traceback (most recent call last):", '  File "/a/x.py", line 9, in g',
                    "KeyError: 'k'"])
    assert here.fingerprint != there.fingerprint


def test_normalise_strips_what_differs_between_occurrences() -> None:
    assert normalise("rank 3 at 0x7f3a /data/shard-00017.bin 2026-11-30") == (
        "rank <n> at <hex> <path> <n>-<n>-<n>"
    )


@pytest.mark.parametrize(
    ("line", "category"),
    [
        ("段错误 (核心已转储)", Category.SEGFAULT),
        ("Ошибка сегментирования (стек памяти сброшен на диск)", Category.SEGFAULT),
        ("Speicherzugriffsfehler (Speicherabzug geschrieben)", Category.SEGFAULT),
        ("Ungültiger Maschinenbefehl (Speicherabzug geschrieben)", Category.SEGFAULT),
        ("非法指令 (核心已转储)", Category.SEGFAULT),
        ("已杀死", Category.HOST_OOM),
        ("OSError: [WinError 1455] 页面文件太小，无法完成操作。", Category.HOST_OOM),
    ],
)
def test_messages_in_other_locales(tmp_path: Path, line: str, category: Category) -> None:
    log = tmp_path / "train.log"
    log.write_text(f"iter 7: loss 2.5\n{line}\n", encoding="utf-8")
    assert triage_files([log], KB).diagnosis.category == category


def test_an_unknown_language_degrades_to_a_quote_not_a_crash(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n"
                   "mylib.エラー: 何かがおかしい\n", encoding="utf-8")
    d = triage_files([log], KB).diagnosis
    # an exception no rule knows, raised before any step: the code (see the test below)
    assert d.category in (Category.UNKNOWN, Category.USER_CODE) and "何かがおかしい" in d.summary


# -- from the review: healthy-run chatter, cascades and bad input ----------------------------


def test_c10d_start_up_warnings_do_not_outrank_the_real_failure() -> None:
    d = triage([
        "[W socket.cpp:464] [c10d] The server socket cannot be initialized on [::]:29500 "
        "(errno: 97 - Address family not supported by protocol).",
        "[W Utils.hpp:164] [c10d] The IPv6 network addresses of (gpu-node-3, 29500) cannot be "
        "retrieved (gai error: -2 - Name or service not known).",
        *watchdog(0),
        *watchdog(1),
    ])
    assert d.category == Category.NCCL_TIMEOUT


def test_healthy_lines_that_look_alarming_are_not_causes() -> None:
    d = triage([
        "WARNING 05-01 10:00:00 scheduler.py:1089] Sequence group 3 is preempted by "
        "PreemptionMode.RECOMPUTE mode because there is not enough KV cache space.",
        "Preflight: no ECC errors detected on 8 GPUs",
        "HF_HUB_OFFLINE=1",
        *OOM_RANK5,
    ])
    assert d.category == Category.CUDA_OOM
    assert {c.category for c in d.consequences} <= {Category.UNKNOWN}


def test_an_exception_named_in_a_log_message_does_not_outrank_the_crash() -> None:
    d = triage([
        "[rank3]:skipping unreadable sample 81723: FileNotFoundError: /data/img/81723.jpg",
        "[rank3]:Fatal Python error: Segmentation fault",
    ])
    assert d.category == Category.SEGFAULT


RETRY = "gpu-node-1:4242:4299 [0] NCCL INFO Call to connect returned Connection refused, retrying"


def test_nccl_connect_retries_are_the_story_only_when_nothing_else_is() -> None:
    # NCCL retries a refused connection and usually gets through (a peer still starting): any
    # error of its own explains the run better
    d = triage([RETRY, RETRY, "RuntimeError: CUDA error: an illegal memory access was encountered"])
    assert d.category == Category.CUDA_ERROR_OTHER
    # a log that ends in the retries never connected
    alone = triage(["NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>", RETRY, RETRY, RETRY])
    assert alone.category == Category.NCCL_ERROR and alone.rule == "nccl.connect_retry"
    assert alone.confidence <= 0.5 and alone.transient is None
    # the other INFO lines stay noise
    assert triage(["NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>"]).rule is None


def test_a_generic_rule_does_not_turn_a_follow_on_error_into_the_cause() -> None:
    d = triage([
        "[rank0]:[E1130 01:12:03.408 ProcessGroupNCCL.cpp:1595] [PG 0 Rank 0] Process group "
        "watchdog thread terminated with exception: NCCL error: remote process exited or there "
        "was a network error, NCCL version 2.21.5",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2026-11-30_01:12:04",
        "  host      : gpu-node-7",
        "  rank      : 3 (local_rank: 3)",
        "  exitcode  : -9 (pid: 4242)",
        "  traceback : Signal 9 (SIGKILL) received by PID 4242",
    ])
    assert d.category == Category.HOST_OOM
    assert (d.suspect.rank, d.suspect.host) == (3, "gpu-node-7")


def test_the_launchers_sigterm_to_the_survivors_is_not_a_preemption() -> None:
    d = triage([
        *watchdog(0),
        *watchdog(1),
        "W1130 01:12:05.118000 139 torch/distributed/elastic/multiprocessing/api.py:897] "
        "Sending process 4243 closing signal SIGTERM",
        "[rank: 2] Received SIGTERM: 15",
    ])
    assert d.category == Category.NCCL_TIMEOUT


def test_a_traceback_pasted_without_its_indentation_keeps_its_frames() -> None:
    d = triage([
        "> Traceback (most recent call last):",  # a quote in an issue: the indentation is lost
        '> File "/work/mymodel/train.py", line 40, in <module>',
        "> main()",
        '> File "/work/mymodel/attention.py", line 123, in forward',
        "> x.view(4, 8)",
        "> ^^^^^^^^^^^",
        "> RuntimeError: shape '[4, 8]' is invalid for input of size 33",
    ])
    assert "mymodel/attention.py:123 in forward" in d.summary
    assert d.evidence[-2].text.strip() == "^^^^^^^^^^^"



def test_a_pasted_frame_without_code_does_not_swallow_the_exception_after_it() -> None:
    d = triage([
        "Traceback (most recent call last):",
        'File "/work/train.py", line 40, in <module>',
        "state = msgpack.unpackb(blob)",
        'File "msgpack/_unpacker.pyx", line 201, in msgpack._cmsgpack.unpackb',
        "msgpack.exceptions.ExtraData: unpack(b) received extra data.",
        "wandb: Waiting for W&B process to finish... (failed 1).",
    ])
    assert "msgpack.exceptions.ExtraData" in d.summary, d.summary
    d = triage([
        "Traceback (most recent call last):", 'File "<string>", line 1, in <module>',
        "StopIteration",
    ])
    assert (d.category, d.rule) == (Category.USER_CODE, "python.bug"), d.summary


JOIN_DNS = [
    "Traceback (most recent call last):",
    '  File "/work/train.py", line 115, in main_worker',
    "    dist.init_process_group(backend='nccl', init_method=url, world_size=8, rank=rank)",
    '  File "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", line 422, '
    "in init_process_group",
    "    store, rank, world_size = next(rendezvous_iterator)",
    "ValueError: host not found: Name or service not known",
]


def test_a_process_failing_to_join_after_the_job_trained_leaves_the_restart_open(
    tmp_path: Path,
) -> None:
    log = tmp_path / "train.log"
    log.write_text("\n".join(JOIN_DNS) + "\n")
    assert triage_files([log], KB).diagnosis.transient is False  # before any step: the set-up
    steps = [f"[rank0]: step: {i}  loss: 2.5  tps: 7,282" for i in range(1, 30)]
    log.write_text("\n".join([*steps, *(f"[rank5]:{line}" for line in JOIN_DNS)]) + "\n")
    d = triage_files([log], KB).diagnosis
    assert d.category == Category.NETWORK and d.transient is None
    assert "failed while joining the job (in init_process_group)" in d.summary
    # c10d's client reaches the store once, as the process joins: its timeout says so alone
    join = "[E socket.cpp:1019] The client socket has timed out after 900000ms while trying to"
    log.write_text("\n".join([*steps, f"[rank5]:{join} connect to (10.0.0.1, 29500)."]) + "\n")
    assert triage_files([log], KB).diagnosis.transient is None
    # no step in the log, but the supervisor saw the attempt train: not the set-up either
    log.write_text("\n".join(JOIN_DNS) + "\n")
    d = triage_files([log], KB, trained=True).diagnosis
    assert d.transient is None and "failed while joining the job" in d.summary


def test_a_deep_traceback_names_its_innermost_frame() -> None:
    frames = []
    for i in range(40):
        frames += [f'  File "/work/lib/mod{i}.py", line {i + 10}, in f{i}', f"    f{i + 1}()"]
    frames += ['  File "/work/mymodel/attention.py", line 123, in forward', "    x.view(4, 8)"]
    d = triage(["Traceback (most recent call last):", *frames,
                "RuntimeError: shape '[4, 8]' is invalid for input of size 33"])
    assert "mymodel/attention.py:123 in forward" in d.summary
    assert d.evidence[-2].text.strip() == "x.view(4, 8)"


def test_a_truncated_gzip_keeps_what_was_read(tmp_path: Path) -> None:
    import gzip

    raw = ("iter 1: loss 2.0\n" * 2000 + OOM_RANK5[-1] + "\n" + "iter 2: loss 2.0\n" * 5000)
    whole = gzip.compress(raw.encode())
    cut = tmp_path / "train.log.gz"
    cut.write_bytes(whole[: len(whole) * 3 // 4])
    other = tmp_path / "other.log"
    other.write_text("nothing here\n")
    r = triage_files([cut, other], KB)
    assert r.diagnosis.category == Category.CUDA_OOM
    assert r.diagnosis.evidence[-1].file == str(cut)
    assert any("the rest is lost" in s for s in r.skipped)


SHM_FULL = "RuntimeError: unable to write to file </torch_8226_0>: No space left on device (28)"


def test_a_full_dev_shm_is_a_full_filesystem_unless_a_worker_died_of_it() -> None:
    assert triage([SHM_FULL]).category == Category.FILESYSTEM_IO
    bus = "RuntimeError: DataLoader worker (pid 812) is killed by signal: Bus error."
    for lines in ([SHM_FULL, bus], [bus, SHM_FULL]):
        assert triage(lines).category == Category.SEGFAULT  # the death says more than the write


def test_samples_a_loader_skips_are_the_story_only_of_a_log_without_an_error() -> None:
    skipped = [f"train: WARNING /d/images/{i}.png: ignoring corrupt image/label: Label class 3 "
               "must be numbers: could not convert string to float: 'text'" for i in range(5)]
    d = triage(skipped)
    assert (d.category, d.transient, d.rule) == (Category.DATA, False, "data.skipped_samples")
    assert triage([*skipped, OOM_RANK5[-1]]).category == Category.CUDA_OOM


def test_a_gzipped_log_is_read_whatever_its_name(tmp_path: Path) -> None:
    import gzip

    rotated = tmp_path / "rank0.log.1"  # logrotate's compressed older log keeps no .gz
    rotated.write_bytes(gzip.compress(("iter 1: loss 2.0\n" + OOM_RANK5[-1] + "\n").encode()))
    r = triage_files([rotated], KB)
    assert r.diagnosis.category == Category.CUDA_OOM and r.files == (str(rotated),)


def test_a_small_gzip_cut_before_its_end_keeps_what_it_holds(tmp_path: Path) -> None:
    import gzip

    cut = tmp_path / "rank5.log.gz"  # the whole log in one 64 KiB read: all lost to the error
    whole = gzip.compress(("iter 1: loss 2.0\n" + OOM_RANK5[-1] + "\n").encode())
    cut.write_bytes(whole[:-8])  # its trailer never written
    r = triage_files([cut], KB)
    assert r.diagnosis.category == Category.CUDA_OOM
    assert any("the rest is lost" in s for s in r.skipped)


def test_a_device_named_on_purpose_is_not_read_for_ever() -> None:
    r = triage_files(["/dev/zero"], KB)  # NULs are dropped: it would be read until the end of time
    assert r.files == () and "a device or socket, not a log file" in r.skipped[0]


def test_a_corrupt_gzip_is_skipped_and_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.log.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 50)
    r = triage_files([bad], KB)
    assert r.files == () and "cannot read" in r.skipped[0]


@pytest.mark.timeout(10)
def test_monster_lines_cost_bounded_time(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    log.write_text("".join(f"{chunk * 32768}\n" for chunk in ("a1", "a.1", "1 ")) +
                   "NCCL WARN " + "x" * 60000 + "\n" + "Sat Feb 30 12:00:00 2024 worker ok\n")
    assert triage_files([log], KB).diagnosis is not None


# -- restart or not: what the log shows before the failure ---------------------------------------

EADDRINUSE = (
    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
    "network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address "
    "already in use)."
)
STEPS = [
    f"[titan] 2026-11-30 01:02:03,338 - root - INFO - step: {s}  loss: {3.1 - s / 1000:7.4f}"
    for s in range(1, 6)
]


def _engine(*files: list[str]) -> Engine:
    engine = Engine(KB)
    for i, lines in enumerate(files):
        for n, line in enumerate(lines, 1):
            engine.feed(i, n, line)
    engine.finish()
    return engine


@pytest.mark.parametrize(
    ("progress", "expected"),
    [
        (None, None),  # the caller does not know
        ({}, False),  # no training step in any file: before training started
        ({0: 3}, True),  # a step at line 3, the error at line 10
        ({0: 12}, False),  # the first step comes after the error
        ({1: 3}, None),  # steps only in another file: its lines cannot be compared
    ],
)
def test_trained_before(progress: dict[int, int] | None, expected: bool | None) -> None:
    engine = _engine(["x"] * 9 + [EADDRINUSE])
    f = next(iter(engine.groups.values())).first
    assert f.line == 10
    assert trained_before(f, progress) is expected


def test_a_port_in_use_before_the_first_step_is_configuration() -> None:
    d = diagnose(_engine([EADDRINUSE]), ["rank0.log"], 1, progress={})
    assert d.rule == "net.address_in_use"
    assert d.transient is False
    assert d.suspect.kind == "config"
    assert "before the first training step" in d.action


def test_the_same_error_after_training_steps_is_transient() -> None:
    d = diagnose(_engine([*STEPS, EADDRINUSE]), ["rank0.log"], 6, progress={0: 1})
    assert d.rule == "net.address_in_use"
    assert d.transient is True
    assert "before the first training step" not in d.action


def test_an_nccl_error_is_decided_by_the_phase_and_unknown_without_it() -> None:
    line = "node1:12:34 [0] NCCL WARN Call to connect returned Connection refused, retrying"
    engine = _engine(["x", line])
    rule = next(iter(engine.groups.values())).first.rule.id
    assert rule == "nccl.error"
    assert diagnose(engine, ["a.log"], 2).transient is None
    assert diagnose(engine, ["a.log"], 2, progress={}).transient is False
    assert diagnose(engine, ["a.log"], 2, progress={0: 1}).transient is True


def test_a_bug_stays_non_transient_whatever_the_phase() -> None:
    d = diagnose(_engine([*STEPS, *OOM_RANK5]), ["rank0.log"], 9, progress={0: 1})
    assert d.category == Category.CUDA_OOM and d.transient is False


def test_triage_files_reads_the_phase_from_the_log(tmp_path: Path) -> None:
    start = tmp_path / "start.log"
    start.write_text("W1130 launching 8 ranks\n" + EADDRINUSE + "\n", encoding="utf-8")
    late = tmp_path / "late.log"
    late.write_text("\n".join([*STEPS, EADDRINUSE]) + "\n", encoding="utf-8")
    assert triage_files([start], KB).diagnosis.transient is False
    assert triage_files([late], KB).diagnosis.transient is True


def test_a_pod_oom_killed_with_exit_137_is_host_memory_not_a_plain_kill() -> None:
    d = triage([
        "    Last State:     Terminated",
        "      Reason:       OOMKilled",
        "      Exit Code:    137",
    ])
    assert d.category == Category.HOST_OOM and d.rule == "host.oom_killer"


def _timeouts_then_root_cause(exitcode: int) -> list[str]:
    return [
        *[
            f"[rank{r}]:[E1130 23:12:03.408271257 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog "
            f"caught collective operation timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE, "
            "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600060 milliseconds before "
            "timing out."
            for r in (0, 1, 3)
        ],
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2026-11-30_23:12:05",
        "  host      : node-002",
        "  rank      : 2 (local_rank: 2)",
        f"  exitcode  : {exitcode} (pid: 4242)",
    ]


def test_timeouts_after_a_rank_exited_with_a_python_error_are_not_promised_to_restart() -> None:
    # Exit code 1 is a Python exception on rank 2 before the others timed out: the timeouts
    # are its consequence, and a restart helps only if that error was transient (after
    # training steps: the log cannot say; before any, it is the set-up's: no).
    d = triage_trained(_timeouts_then_root_cause(1))
    assert d.category == Category.NCCL_TIMEOUT and d.transient is None
    assert d.suspect.rank == 2 and "exited with code 1" in d.summary
    aborted = triage_trained(_timeouts_then_root_cause(-6))  # timed out itself: SIGABRT
    assert aborted.transient is None and "exited with code 1" not in aborted.summary
    assert triage(_timeouts_then_root_cause(1)).transient is False


def test_the_error_of_the_rank_the_others_timed_out_waiting_for_is_the_root_cause() -> None:
    # Rank 2 raised an error no rule knows, then the others timed out waiting for it: alone a
    # bare RuntimeError ranks below a timeout, here it is what the timeouts point at (torchrun's
    # first observed failure, the one rank that never reported a timeout).
    error = ["[rank2]:Traceback (most recent call last):",
             '[rank2]:  File "train.py", line 88, in <module>',
             "[rank2]:RuntimeError: only Tensors of floating point dtype can require gradients"]
    d = triage([*error, *_timeouts_then_root_cause(1)])
    assert (d.category, d.rule) == (Category.UNKNOWN, "python.runtime")
    assert d.suspect.rank == 2 and "3 other rank(s) then timed out" in d.summary
    assert {c.category for c in d.consequences} >= {Category.NCCL_TIMEOUT}
    # The same error on a rank that timed out itself is a victim's: the timeout stays the story,
    # though it came first.
    victim = [x.replace("[rank2]", "[rank1]") for x in error]
    assert triage([*victim, *_timeouts_then_root_cause(1)]).category == Category.NCCL_TIMEOUT
    # and so is one printed after the timeouts (a rank tearing down)
    assert triage([*_timeouts_then_root_cause(1), *error]).category == Category.NCCL_TIMEOUT
    # and a line that only names an error, which the rank went on after (a warning, a logged
    # exception), is no crash: c10d's start-up warning, a tracker's error
    for said in ("[rank2]:[W socket.cpp:697] [c10d] The IPv6 network addresses of (node-1, 29500) "
                 "cannot be retrieved (gai error: -2 - Name or service not known).",
                 "[rank2]:wandb: ERROR Error while calling W&B API: RuntimeError: context "
                 "deadline exceeded"):  # fmt: skip
        assert triage([said, *_timeouts_then_root_cause(1)]).category == Category.NCCL_TIMEOUT


def test_the_rank_torchrun_saw_fail_first_exited_on_its_last_error_traceback_or_not() -> None:
    # Rank 2 printed an error without its traceback (a notebook's, a logger's, a shell's), then
    # the others timed out waiting for it and torchrun named it: that error is why it exited.
    for said, category, rule in (
        ("[rank2]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 9.47 GiB",
         Category.CUDA_OOM, "cuda.oom"),
        ("[rank2]:/bin/sh: 1: torchrun: not found", Category.USER_CODE, "code.shell"),
        ("[rank2]:2024-07-16 21:30:52 olmo.util:163 ERROR the checkpoint holds 3 of 4 shards",
         Category.UNKNOWN, "log.error_record"),  # (the set-up's when the log shows no step)
        # an exception quoted in a logger's line, a notebook's header of an uncaught one
        ("[rank2]:[MusubiTuner WanLoRATrainer] TRAINER: NameError: name 'dbg' is not defined",
         Category.USER_CODE, "python.bug"),
        ("[rank2]:OutOfMemoryError                          Traceback (most recent call last)",
         Category.CUDA_OOM, "cuda.oom"),
        # its NCCL's word on a peer it lost: why the others waited
        ("[rank2]:node-2:4016:4653 [2] NCCL WARN NET/IB : Got completion from peer 10.0.0.3<4> "
         "with error 12, opcode 0, len 0, vendor err 129 (Recv) localGid ::ffff:10.0.0.2",
         Category.NCCL_ERROR, None),
    ):  # fmt: skip
        d = triage([said, *_timeouts_then_root_cause(1)])
        assert (d.category, d.suspect.rank) == (category, 2), said
        assert rule is None or d.rule == rule, said
        if rule is None:
            continue
        # the last of its errors before the timeouts, not an earlier one (of the same rule too),
        # nor another rank's that came first
        for before in ("[rank2]:2024-07-16 21:30:50 trainer ERROR could not read /data/7.bin",
                       "[rank0]:2024-07-16 21:30:50 trainer ERROR could not read /data/7.bin"):
            d = triage([before, said, *_timeouts_then_root_cause(1)])
            assert d.rule == rule and said.strip()[-20:] in d.summary, said
        if rule == "cuda.oom":
            continue  # an out-of-memory outranks a timeout anywhere
        # not when torchrun saw it killed by a signal (exit -15: the agent's SIGTERM), nor on a
        # rank torchrun did not name: the timeout stays the story
        assert triage([said, *_timeouts_then_root_cause(-15)]).category == Category.NCCL_TIMEOUT
        other = said.replace("[rank2]", "[rank1]")
        assert triage([other, *_timeouts_then_root_cause(1)]).category == Category.NCCL_TIMEOUT


def _srun_tasks_then_timeouts(ended: str) -> list[str]:
    """srun --label's tasks 0 to 3, one a rank: task 2 ended (`ended`), the others timed out
    waiting for it and their watchdogs aborted them."""
    return [
        f"srun: error: node-000: task 2: {ended}",
        *[
            f"{r}: [E1130 23:12:03.408271257 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog "
            f"caught collective operation timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE, "
            "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600060 milliseconds before "
            "timing out."
            for r in (0, 1, 3)
        ],
        "srun: error: node-000: tasks 0-1,3: Aborted (core dumped)",
    ]


def test_the_rank_srun_saw_exit_first_exited_on_its_last_error_traceback_or_not() -> None:
    # The same as torchrun's first observed failure, where srun starts one task a rank
    # (Megatron's and NeMo's way on Slurm): its first word on a task that ended names it.
    said = "2: 2024-07-16 21:30:52 olmo.util:163 ERROR the checkpoint holds 3 of 4 shards"
    d = triage([said, *_srun_tasks_then_timeouts("Exited with exit code 1")])
    assert (d.rule, d.suspect.rank) == ("log.error_record", 2)
    assert "3 other rank(s) then timed out" in d.summary
    # no error of its own: the timeouts, and srun's rank 2 exited on a Python error
    d = triage_trained(_srun_tasks_then_timeouts("Exited with exit code 1"))
    assert d.category == Category.NCCL_TIMEOUT and d.transient is None
    assert d.suspect.rank == 2 and "srun's first observed failure, rank 2," in d.summary
    # not when srun saw it killed (the timeout stays the story), nor where a launcher that
    # starts the ranks itself runs under srun (a task is a node there, not a rank)
    killed = triage([said, *_srun_tasks_then_timeouts("Killed")])
    assert killed.category == Category.NCCL_TIMEOUT
    agent = "W1130 23:12:05.118000 139 torch/distributed/elastic/multiprocessing/api.py:897] x"
    node = triage([agent, said, *_srun_tasks_then_timeouts("Exited with exit code 1")])
    assert node.category == Category.NCCL_TIMEOUT and "srun" not in node.summary


def test_the_rank_mpirun_saw_exit_first_is_named_as_srun_s_is() -> None:
    # Open MPI (Horovod's usual launcher) names the first process that exited badly: its vpid
    # is the rank. The timeouts of the others, and that rank's Python error, before them.
    timeouts = [line.split(": ", 1)[1] for line in _srun_tasks_then_timeouts("x")[1:4]]
    first = [
        "mpirun detected that one or more processes exited with non-zero status, thus causing",
        "the job to be terminated. The first process to do so was:",
        "",
        "  Process name: [[50759,1],2]",
        "  Exit code:    1",
    ]
    d = triage_trained([*timeouts, *first])
    assert d.category == Category.NCCL_TIMEOUT and d.transient is None
    assert d.suspect.rank == 2 and "mpirun's first observed failure, rank 2," in d.summary
    # a process it saw killed names the rank and its node
    killed = (
        "mpirun noticed that process rank 5 with PID 0 on node gpu12 exited on signal 9 (Killed)."
    )
    d = triage(["RuntimeError: CUDA error: an illegal memory access was encountered", killed])
    assert (d.suspect.rank, d.suspect.host) == (5, "gpu12")


def test_tensorflows_session_waiting_for_a_worker_is_a_hang_only_where_no_step_follows(
    tmp_path: Path,
) -> None:
    wait = (
        "2021-01-28 14:33:24.599056: I tensorflow/core/distributed_runtime/master.cc:267] "
        "CreateSession still waiting for response from worker: /job:ps/replica:0/task:0"
    )
    waited = tmp_path / "waited.log"
    waited.write_text(f"{wait}\n{wait}\n")
    d = triage_files([waited], KB).diagnosis
    assert d.rule == "hang.tf_create_session" and d.transient is False
    # a cluster that starts up waits too, then trains: no failure of the set-up
    steps = [f"INFO:tensorflow:loss = 2.3{i}, step = {i}" for i in range(40)]
    trained = tmp_path / "trained.log"
    trained.write_text("\n".join([wait, wait, *steps, "INFO:tensorflow:Loss for final step."]))
    assert triage_files([trained], KB).diagnosis.rule != "hang.tf_create_session"


def test_what_the_rank_torchrun_named_went_on_after_or_lost_is_not_why_it_exited() -> None:
    # a warning, a sample it skipped, a retry, a peer that reset a socket (other ranks went on
    # waiting: no cause), a line after the timeouts: the timeout stays the story
    for said in (
        "[rank2]:W1130 20:01:02.123456 4242 torch/_dynamo/convert_frame.py:844] recompile limit; "
        "RuntimeError: recompile limit reached",
        "[rank2]:[dataset] caught RuntimeError: sample 18231 has no frames; continuing with the "
        "next one",
        "[rank2]:2024-07-16 21:30:50 trainer ERROR sample 18231 has an empty caption, skipping it",
        "[rank2]:wandb: ERROR Run initialization has timed out after 90.0 sec. Please retry.",
        "[rank2]:ConnectionResetError: [Errno 104] Connection reset by peer",
    ):
        assert triage([said, *_timeouts_then_root_cause(1)]).category == Category.NCCL_TIMEOUT, said
    late = "[rank2]:2024-07-16 21:30:52 olmo.util:163 ERROR the checkpoint holds 3 of 4 shards"
    timeouts = _timeouts_then_root_cause(1)
    d = triage([*timeouts[:3], late, *timeouts[3:]])
    assert d.category == Category.NCCL_TIMEOUT


def test_the_silent_rank_s_error_in_its_own_file_is_found_whatever_the_order(
    tmp_path: Path,
) -> None:
    # per-rank files without timestamps: the rank that crashed is the one the others waited for,
    # whichever file is given first
    crashed = tmp_path / "rank2.log"
    crashed.write_text("\n".join([
        "[rank2]:Traceback (most recent call last):",
        '[rank2]:  File "train.py", line 88, in <module>',
        "[rank2]:RuntimeError: only Tensors of floating point dtype can require gradients",
    ]) + "\n")  # fmt: skip
    others = []
    for r in (0, 1, 3):
        log = tmp_path / f"rank{r}.log"
        log.write_text(_timeout(r, 77, "ALLREDUCE") + "\n")
        others.append(log)
    first = triage_files([*others, crashed], KB).diagnosis
    last = triage_files([crashed, *others], KB).diagnosis
    assert first.rule == last.rule == "python.runtime"


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("Segmentation fault (core dumped)", "segfault.segv"),
        ("RuntimeError: CUDA error: an illegal memory access was encountered", None),
        # a runtime error no rule knows
        ("RuntimeError: unsupported operation: the fused kernel returned status 3.",
         "python.runtime"),
    ],
)
def test_a_crash_before_the_first_step_is_the_set_up_unless_the_caller_saw_training(
    tmp_path: Path, line: str, rule: str | None
) -> None:
    log = tmp_path / "train.log"
    log.write_text(f"loading the model\n{line}\n")
    at_start = triage_files([log], KB).diagnosis
    assert at_start.transient is False and "before the first training step" in at_start.action
    assert rule is None or at_start.rule == rule
    # The supervisor saw steps (in a format triage does not read), or the attempt ran for an
    # hour: the same crash is not the set-up's, and a restart may help.
    trained = triage_files([log], KB, trained=True).diagnosis
    assert trained.transient is None and "before the first training step" not in trained.action
    stepped = tmp_path / "stepped.log"
    stepped.write_text(f"step 10 | loss: 2.31\n{line}\n")
    assert triage_files([stepped], KB).diagnosis.transient is None


def test_the_set_up_advice_names_the_network_only_for_a_network_failure(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("loading the dataset\nMemoryError: Unable to allocate 6.20 GiB for an array\n")
    memory = triage_files([log], KB).diagnosis
    assert memory.transient is False and memory.action.startswith("It happened before the first")
    assert "what the job loads" in memory.action and "ports" not in memory.action
    log.write_text("starting\nRuntimeError: The server socket has failed to listen on any local "
                   "network address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE\n")
    network = triage_files([log], KB).diagnosis
    assert network.transient is False and "ports" in network.action


def test_an_error_no_rule_knows_in_the_set_up_is_the_code_unless_it_names_the_machine(
    tmp_path: Path,
) -> None:
    # Before any step a bare RuntimeError is the code or its configuration (it comes back on
    # every restart); after training, or naming the network or a signal, nothing is claimed.
    log = tmp_path / "train.log"
    log.write_text("loading the model\nRuntimeError: shape '[2, 3]' is invalid for size 7\n")
    d = triage_files([log], KB).diagnosis
    assert d.category == Category.USER_CODE and d.transient is False
    assert triage_files([log], KB, trained=True).diagnosis.category == Category.UNKNOWN
    for words in ("Connection closed by peer", "DataLoader worker (pid 8) is killed by signal: "
                  "Terminated.", "Timed out waiting for the NCCL communicator",
                  "the GPU reported an unexpected state",
                  'NVML_SUCCESS == r INTERNAL ASSERT FAILED at '
                  '"../c10/cuda/CUDACachingAllocator.cpp":1154'):  # fmt: skip
        log.write_text(f"loading the model\nRuntimeError: {words}\n")
        got = triage_files([log], KB).diagnosis
        assert got.category != Category.USER_CODE, (words, got.rule)


@pytest.mark.parametrize(
    "text",
    [
        # NVIDIA DALI's words for a device allocation that failed
        "RuntimeError: Critical error in pipeline:\nError when executing Mixed operator "
        "ImageDecoder encountered:\nCUDA allocation failed",
        # a CUDA extension reporting the runtime's error 2 (cudaErrorMemoryAllocation)
        "RuntimeError: ops/src/indice_cuda.cu 124\ncuda execution failed with error 2",
    ],
)
def test_cuda_allocation_failures_in_other_words_are_cuda_oom(tmp_path: Path, text: str) -> None:
    log = tmp_path / "train.log"
    log.write_text(text + "\n")
    d = triage_files([log], KB).diagnosis
    assert d.category == Category.CUDA_OOM and d.transient is False, d.rule
    # errno 2 of a path that has "cuda" in it is a missing file, not memory
    log.write_text("dlopen /usr/local/cuda/lib64/libnvrtc.so failed with error 2 (No such file "
                   "or directory)\n")  # fmt: skip
    assert triage_files([log], KB).diagnosis.category != Category.CUDA_OOM


def test_an_error_a_program_logged_before_any_step_is_the_set_up_and_after_steps_nothing(
    tmp_path: Path,
) -> None:
    log = tmp_path / "train.log"
    counted = (
        "[ERROR] (cache) Could not find image path for cache file /data/cache/0a1b.pt",
        "2026-03-02 10:01:02,003 - trainer - ERROR - the config names 3 classes, the head has 5",
        "E0409 15:55:07.713434 140232760776512 error_handling.py:70] Error recorded from "
        "training_loop: assertion failed: [318]",
        "F0317 02:46:21.118406 358837 registration.cc:10] Check failed: Register(kHw) is OK",
        "Error running job: .to() does not accept copy argument",
        "\x1b[31mERROR\x1b[0m Fused kernels configured but not installed",
        "FATAL: dataset directory /data/x is empty",
        "2026-03-02 10:01:02,003 - prep - CRITICAL - the tokenizer has no pad token",
    )
    for line in counted:
        log.write_text(f"loading the config\n{line}\nbye\n")
        d = triage_files([log], KB).diagnosis
        assert d.rule == "log.error_record", line
        assert d.category == Category.USER_CODE and d.transient is False, line
        assert d.suspect.kind == "config" and d.confidence <= 0.3, line
        # After training steps the program may have logged it and gone on: it says nothing.
        log.write_text(f"step 10 | loss: 2.31\n{line}\nstep 11 | loss: 2.30\n")
        assert triage_files([log], KB).diagnosis.rule != "log.error_record", line
    for line in (
        "========= ERROR SUMMARY: 0 errors",
        "ERROR: pip's dependency resolver does not currently take into account all the packages",
        "2025-11-11 21:05:55,828 - distributed.worker - ERROR - Compute Failed",
        "ERROR launch.py:584] Out of all 4 trainers, rank=[2] was aborted. Please check its log.",
        "[ERROR] [actor_train-1 1 / 8][PID 18175] ",
        "[W socket.cpp:464] [c10d] ERROR while probing the address",
        "the run had no error and trained well",
        # what a program goes on after: a preload, a dashboard, an optional piece, a retry, a
        # tracker's own uploads; absl's dateless E lines (TensorFlow's chatter)
        "ERROR: ld.so: object '/usr/lib/libtcmalloc.so' from LD_PRELOAD cannot be preloaded: "
        "ignored.",
        "2024-05-01 12:00:00,123\tERROR services.py:1353 -- Failed to start the dashboard",
        "[ERROR] Failed to import optional dependency bitsandbytes; 8-bit optimizers disabled",
        "[ERROR] Something bad happened; we will retry",
        "wandb: ERROR Dropped streaming file chunk (see wandb/debug-internal.log)",
        "E0000 00:00:1721223344.123456   12345 meta_optimizer.cc:966] layout failed: bad size",
        # a level named as a setting, a warning that mentions one, a metric, a table
        "Namespace(batch_size=8, log_level='ERROR', lr=0.0001)",
        "  --log_level ERROR --seed 42",
        "set_verbosity(ERROR) for datasets",
        "WARNING: ERROR handling is deprecated and will be removed",
        "x.py:12: UserWarning: this will raise an ERROR in a future release",
        "Validation error: nan",
        "Relative error: 1.2e-03 (tolerance 1e-2)",
        "Tokenizer error handling: strict",
        "ERROR       | 0.0123 | 0.0456 | best",
        "Health Check failed: retrying in 5s",
        # a process that failed, a report that points elsewhere
        "[ERROR] TBE Subprocess[task_distribute] raise error[], main process disappeared!",
        "ERROR 05-01 12:00:00 [core.py:123] EngineCore hit an issue. See stack trace for it.",
    ):
        log.write_text(f"loading the config\n{line}\n")
        assert triage_files([log], KB).diagnosis.rule != "log.error_record", line
    # A failure with something particular in it counts, however short.
    log.write_text("ERROR: Loading checkpoint /ckpt/model.pt failed\n")
    assert triage_files([log], KB).diagnosis.rule == "log.error_record"
    # Steps in another file, or an attempt the caller saw train: the line says nothing.
    steps = tmp_path / "rank0.log"
    steps.write_text("step 10 | loss: 2.31\nstep 11 | loss: 2.30\n")
    log.write_text("[ERROR] (cache) Could not find image path for cache file /data/0a1b.pt\n")
    assert triage_files([steps, log], KB).diagnosis.rule != "log.error_record"
    assert triage_files([log], KB, trained=True).diagnosis.rule != "log.error_record"
    # An ending that tells more than the line: the run said it finished, it ends in the stacks
    # of stuck processes, or waiting for a server again and again.
    line = "[ERROR] (cache) Could not find image path for cache file /data/0a1b.pt"
    for end, category in (
        (["Training completed. Do not forget to share your model!"], Category.UNKNOWN),
        (['Thread 0x00007f (most recent call first):', '  File "train.py", line 88 in step'],
         Category.HANG),
        (["Waiting for the parameter server at 10.0.0.1:5000 ..."] * 5, Category.NETWORK),
    ):
        log.write_text("\n".join(["loading the config", line, *end]) + "\n")
        d = triage_files([log], KB).diagnosis
        assert d.category == category and d.rule != "log.error_record", end
        assert any(c.category == Category.UNKNOWN for c in d.consequences), end
    # Words of the network or the hardware keep it unknown; any other finding outranks it.
    log.write_text("ERROR: could not connect to the licence server at 10.0.0.1\n")
    d = triage_files([log], KB).diagnosis
    assert d.rule == "log.error_record" and d.category == Category.UNKNOWN
    # (a line no rule knows: `the dataset is empty` is data.empty's now)
    log.write_text("ERROR: the shard index lists 3 files, the manifest 4\nValueError: bad shard\n")
    assert triage_files([log], KB).diagnosis.rule == "python.bug"


def test_a_native_assertion_is_the_code_and_a_kernels_is_still_a_device_assert(
    tmp_path: Path,
) -> None:
    # glibc's assert: "FILE:LINE: FUNCTION: Assertion `EXPR' failed." (then SIGABRT)
    log = tmp_path / "train.log"
    log.write_text(
        "loading the index\npython3: ./google/protobuf/stubs/stringpiece.h:229: google::protobuf"
        "::StringPiece::StringPiece(const char*, long int): Assertion `len >= 0' failed.\n"
        "Aborted (core dumped)\n"
    )
    d = triage_files([log], KB).diagnosis
    assert d.rule == "code.native_assert" and d.category == Category.USER_CODE
    assert d.transient is False
    log.write_text(
        "../aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [316,0,0],"
        " thread: [62,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n"
    )
    assert triage_files([log], KB).diagnosis.rule == "code.device_assert"
    # A network transport's own assert (EFA, UCX, NCCL) is not the code's; an expression with
    # a quote in it is still read whole.
    for line in (
        "python: prov/efa/src/rdm/efa_rdm_pke.c:412: efa_rdm_pke_release: Assertion "
        "`pkt_entry->alloc_type == EFA_RDM_PKE_FROM_EFA_TX_POOL' failed.",
        "python: ../src/uct/ib/rc/base/rc_iface.c:301: uct_rc_iface_t: Assertion `ep != NULL' "
        "failed.",
        "python: nccl/src/transport/net_ib.cc:812: ncclIbIsend: Assertion `req' failed.",
    ):
        log.write_text(f"step 100 | loss 2.0\n{line}\n")
        assert triage_files([log], KB).diagnosis.rule != "code.native_assert", line
    log.write_text("lexer.c:88: next: Assertion `c != '\\n'' failed.\n")
    assert triage_files([log], KB).diagnosis.rule == "code.native_assert"
    # In training, a native assert is not promised to come back: nothing claimed.
    log.write_text("step 100 | loss 2.0\nlexer.c:88: next: Assertion `n > 0' failed.\n")
    d = triage_files([log], KB).diagnosis
    assert (d.rule, d.category, d.transient) == ("code.native_assert", Category.UNKNOWN, None)


def test_the_rank_that_failed_to_pass_a_monitored_barrier_is_the_suspect() -> None:
    d = triage([
        "iter 10: loss 2.0",
        "RuntimeError: Rank 0 successfully reached monitoredBarrier, but received errors while "
        "waiting for send/recv from ranks: Rank 3 failed to pass monitoredBarrier in 1800000 ms",
    ])
    assert d.category == Category.NCCL_TIMEOUT and d.transient is None
    assert d.suspect.rank == 3 and d.rule == "dist.monitored_barrier"
    prefixed = triage(["[rank0]:RuntimeError: Rank 0 successfully reached monitoredBarrier, but "
                       "received errors while waiting for send/recv from ranks: Rank 5 failed to "
                       "pass monitoredBarrier in 1800000 ms"])  # fmt: skip
    assert prefixed.suspect.rank == 5  # not rank 0, which printed it


# -- a review's counter-examples: each was read wrongly before its fix ------------------------


def test_a_stage_that_finished_is_not_the_training_done_before_a_time_limit() -> None:
    d = triage([
        "step 10 loss 2.30",
        "Stage 1 (warmup) training finished, starting stage 2",
        "epoch 3 training done",
        "step 30 loss 2.00",
        TIME_LIMIT,
    ])
    assert d.category == Category.PREEMPTION and d.transient is True
    hf = triage([
        "Training completed. Do not forget to share your model on huggingface.co/models =)",
        TIME_LIMIT,
    ])
    assert hf.category == Category.HANG


def test_advice_that_mentions_out_of_memory_is_no_cuda_oom() -> None:
    d = triage([
        "WARNING: using torch.cuda.empty_cache() each step to avoid out of memory errors",
        "Traceback (most recent call last):",
        '  File "train.py", line 10, in <module>',
        "RuntimeError: something odd happened in my op",
    ])
    assert d.category != Category.CUDA_OOM
    pinned = triage(["RuntimeError: cudaHostAlloc failed: out of memory"])
    assert pinned.category != Category.CUDA_OOM  # pinned host memory, not the GPU's


def test_a_send_and_its_receive_timing_out_together_are_no_desync() -> None:
    d = triage([_timeout(0, 42, "SEND"), _timeout(1, 42, "RECV")])
    assert d.transient is None and "different collectives" not in d.summary


def test_an_http_retry_that_went_on_does_not_explain_a_later_timeout() -> None:
    d = triage([
        "step 10 loss 2.30",
        "WARNING:urllib3.connectionpool:Retrying (Retry(total=2, connect=None, read=None, "
        "redirect=None, status=None)) after connection broken by 'ReadTimeoutError(\"HTTPSConn"
        "ectionPool(host='api.wandb.ai', port=443): Read timed out. (read timeout=20)\")'",
        "step 20 loss 2.10",
        _timeout(0, 42, "ALLREDUCE"),
    ])
    assert d.category == Category.NCCL_TIMEOUT


def test_nccls_trace_of_an_error_counts_from_its_second_line() -> None:
    probe = "sfr-pod:435:783 [0] NCCL INFO include/net.h:19 -> 2"  # a probe NCCL got over
    ring = "sfr-pod:435:783 [0] NCCL INFO Ring 00 : 0 -> 8 [receive] via NET/Socket/0"
    assert triage([probe, ring]).category == Category.UNKNOWN
    trace = ["dgxa100:1050:1316 [0] NCCL INFO include/net.h:25 -> 2",
             "dgxa100:1050:1316 [0] NCCL INFO transport/net.cc:515 -> 2"]
    d = triage(trace)
    assert (d.category, d.rule) == (Category.NCCL_ERROR, "nccl.error_trace")
    assert triage([*trace, OOM_RANK5[-1]]).category == Category.CUDA_OOM
    # the same probe on every rank, or in every rank's file, is still one line
    probes = [f"sfr-pod-{r}:435:783 [{r}] NCCL INFO include/net.h:19 -> 2" for r in range(8)]
    assert triage([*probes, ring]).category == Category.UNKNOWN
    assert triage([probes[0], ring], [probes[1], ring]).category == Category.UNKNOWN
    # NCCL's thread-tagged trace lines are the trace too
    tagged = ["node1:77:91 [0] NCCL INFO group.cc:73 -> 2 [Async thread]",
              "node1:77:92 [0] NCCL INFO proxy.cc:858 -> 6 [Proxy Thread]"]
    assert triage(tagged).rule == "nccl.error_trace"


def test_tensorflows_resource_exhausted_alone_is_memory_unless_its_message_names_another() -> None:
    notebook = ["ResourceExhaustedError                    Traceback (most recent call last)",
                "<ipython-input-15-331b28c97632> in <module>()",
                "---> 10 history = model.fit(X_train, y_train, epochs=3)"]
    d = triage(notebook)
    assert (d.category, d.rule) == (Category.CUDA_OOM, "python.resource_exhausted")
    assert d.transient is False
    quota = ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: disk quota exceeded "
             "[Op:SaveV2]")
    assert triage([quota]).category == Category.FILESYSTEM_IO


def test_physx_asking_for_a_bigger_buffer_ranks_below_a_crash() -> None:
    capacity = ("PhysX error: The application needs to increase PxgDynamicsMemoryConfig::"
                "totalAggregatePairsCapacity to 4120 , otherwise, the simulation will miss "
                "interactions")
    assert triage([capacity]).category == Category.USER_CODE
    crash = "Segmentation fault (core dumped)"
    assert triage([capacity, crash]).category == Category.SEGFAULT


def test_rdkits_log_of_invalid_molecules_is_the_story_only_of_a_log_without_an_error() -> None:
    # a model that generates molecules logs every invalid one it samples, and goes on
    sampled = ["[12:01:33] SMILES Parse Error: syntax error while parsing: C1CC(",
               "[12:01:33] Can't kekulize mol.  Unkekulized atoms: 0 1 2 3 4"]
    assert triage(sampled).category == Category.DATA
    assert triage([*sampled, "Segmentation fault (core dumped)"]).category == Category.SEGFAULT


def test_a_tracker_that_cannot_reach_its_server_is_the_story_of_a_log_without_errors(
    tmp_path: Path,
) -> None:
    start = ["wandb: Network error (ReadTimeout), entering retry loop.",
             "wandb: ERROR Run initialization has timed out after 90.0 sec."]
    log = tmp_path / "train.log"
    log.write_text("\n".join(start) + "\n")
    d = triage_files([log], KB).diagnosis
    assert (d.category, d.rule) == (Category.NETWORK, "net.retrying")
    assert d.transient is False  # before the first step: the nodes have no route out
    assert triage([*start, OOM_RANK5[-1]]).category == Category.CUDA_OOM


def test_a_socket_not_connected_does_not_hide_a_cuda_oom() -> None:
    d = triage([
        "[rank1]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
        "[rank0]:OSError: [Errno 107] Transport endpoint is not connected",
    ])
    assert d.category == Category.CUDA_OOM
    fuse = triage(["OSError: [Errno 107] Transport endpoint is not connected: '/mnt/gcs/ckpt'"])
    assert fuse.category == Category.FILESYSTEM_IO


def test_a_fallback_warning_about_the_gpu_is_no_failure() -> None:
    d = triage([
        "UserWarning: bf16 requires a GPU with compute capability >= 8.0; falling back to fp16",
        "Traceback (most recent call last):",
        '  File "train.py", line 10, in <module>',
        "MyWeirdError: frobnication failed",
    ])
    assert d.category == Category.UNKNOWN and d.rule == "python.unclassified"


def test_an_exception_raised_without_arguments_ends_its_frames_as_any_other() -> None:
    # Python prints such an exception as its class alone (nflows' spline given an input outside
    # its domain): the error, raised where the innermost statement says, not a cut traceback
    frames = [
        "Traceback (most recent call last):",
        '  File "/venv/lib/python3.6/site-packages/nflows/transforms/splines/cubic.py", line 85, '
        "in cubic_spline",
        "    raise InputOutsideDomain()",
    ]
    d = triage([*frames, "nflows.transforms.base.InputOutsideDomain"])
    assert d.rule == "python.unclassified" and "InputOutsideDomain" in d.summary
    # a word that is not the class the statement raises is no exception of its
    assert triage([*frames, "nflows.transforms.base.Other"]).rule is None
    # Python 3.11+ prints carets under the statement, which may raise after a condition
    carets = [*frames[:2], "    if bad: raise InputOutsideDomain()  # out of the spline's domain",
              "            ^^^^^^^^^^^^^^^^^^^^^^^^^^"]  # fmt: skip
    d = triage([*carets, "nflows.transforms.base.InputOutsideDomain"])
    assert d.rule == "python.unclassified" and "InputOutsideDomain" in d.summary
    # the standard library's bare raise is its caller's to handle or wrap: the DataLoader's
    # worker that died, not the queue that stayed empty
    d = triage([
        "Traceback (most recent call last):",
        '  File "D:\\Python38\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line 724, '
        "in _try_get_data",
        "    data = self._data_queue.get(timeout=timeout)",
        '  File "D:\\Python38\\lib\\multiprocessing\\queues.py", line 105, in get',
        "    raise Empty",
        "_queue.Empty",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "D:\\Python38\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line 737, '
        "in _try_get_data",
        "    raise RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly'.format(pids))",
        "RuntimeError: DataLoader worker (pid(s) 18360) exited unexpectedly",
    ])
    assert d.rule == "host.dataloader_exited"


def test_a_cut_traceback_ending_in_an_import_is_only_a_guess() -> None:
    d = triage(["Traceback (most recent call last):", '  File "train.py", line 3, in <module>',
                "    import mylib.model"])  # fmt: skip
    assert d.rule == "python.import" and d.confidence < 0.5  # explains, never stops restarts


def test_slurms_own_refusals_and_launch_failures() -> None:
    refused = triage(["sbatch: error: Batch job submission failed: Invalid account or "
                      "account/partition combination specified"])  # fmt: skip
    assert refused.category == Category.USER_CODE and refused.transient is False
    launch = triage(["srun: error: Task launch for StepId=1234.0 failed on node node12: Socket "
                     "timed out on send/recv operation"])  # fmt: skip
    assert launch.category == Category.NETWORK and launch.transient is True
    assert launch.suspect.host == "node12"


_HF_STEPS = [
    f"{{'loss': {2.0 - i / 100:.3f}, 'grad_norm': 1.1, 'epoch': {i / 100}}}" for i in range(1, 40)
]


def test_a_shell_error_the_training_went_on_after_is_not_the_cause(tmp_path: Path) -> None:
    # A cluster's profile without `module`, then training: the line said nothing about the end.
    log = tmp_path / "train.log"
    log.write_text("\n".join(["/etc/profile.d/lmod.sh: line 3: module: command not found",
                              *_HF_STEPS]) + "\n")  # fmt: skip
    d = triage_files([log], KB).diagnosis
    assert d.category == Category.HANG and d.rule is None, d.summary  # the silent end's reading
    assert "module: command not found" not in d.summary, d.summary
    log.write_text("\n".join(["run.sh: line 2: module: command not found", *_HF_STEPS,
                              "slurmstepd: error: *** STEP 123.0 ON node1 CANCELLED AT "
                              "2024-01-01T00:00:00 ***"]) + "\n")  # fmt: skip
    assert triage_files([log], KB).diagnosis.rule == "sched.step_cancelled"
    # Before any step it is the likeliest cause: the job's script never got to the training.
    log.write_text("[INFO] USER COMMAND START\nrun.sh: line 169: cd: tools: No such file or "
                   "directory\njob has finished with exit code 1\n")  # fmt: skip
    d = triage_files([log], KB).diagnosis
    assert d.category == Category.USER_CODE and d.transient is False


def test_a_first_collective_after_training_steps_is_not_the_set_up(tmp_path: Path) -> None:
    # A group created or first used mid-training (an eval group): its first collective timing
    # out says nothing of the set-up.
    log = tmp_path / "train.log"
    for seq in (1, 3):
        lines = [f"[rank0]:{line}" for line in _HF_STEPS]
        lines += [_timeout(r, seq, "ALLREDUCE", "PG ID 3 PG GUID 3(eval) ") for r in (0, 1, 2)]
        log.write_text("\n".join(lines) + "\n")
        d = triage_files([log], KB).diagnosis
        assert d.transient is None and "set-up" not in d.summary
        # the same timeouts with no step before them: the set-up's
        log.write_text("\n".join(lines[len(_HF_STEPS) :]) + "\n")
        assert triage_files([log], KB).diagnosis.transient is False


def test_a_rank_that_exited_with_code_1_outweighs_the_first_collective() -> None:
    root = [
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        "Root Cause (first observed failure):",
        "[0]:",
        "  host      : node-a",
        "  rank      : 0 (local_rank: 0)",
        "  exitcode  : 1 (pid: 100)",
    ]
    d = triage([_timeout(r, 1, "BROADCAST") for r in (1, 2, 3)] + root)
    assert d.suspect.rank == 0
    assert "exited with code 1" in d.summary and "first collective" not in d.summary
    # before any training step, that error is the set-up's: a restart meets it again; after
    # one, the log cannot say
    assert d.transient is False and "no training step shows before it" in d.summary
    trained = triage_trained([*[_timeout(r, 1, "BROADCAST") for r in (1, 2, 3)], *root])
    assert trained.transient is None


def test_no_gpu_for_nccl_yields_to_the_drivers_own_words() -> None:
    warn = (
        "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an "
        "incorrectly set up environment. Setting the available devices to be zero."
    )
    no_gpu = "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!"
    d = triage([warn, no_gpu])
    assert d.category == Category.CUDA_ERROR_OTHER and d.suspect.kind == "node"
    alone = triage(["starting", no_gpu])
    assert alone.category == Category.USER_CODE and alone.transient is False


def test_an_npu_collective_timeout_is_a_timeout_not_an_accelerator_error() -> None:
    npu = [
        "RuntimeError: NPU function error: c10_npu::acl::AclrtSynchronizeStreamWithTimeout("
        "copy_stream), error code is 507048",
        "EI0002: The wait execution of the Notify register times out. Reason: The Notify "
        "register has not received the Notify record from remote rank [5].",
    ]
    d = triage([*_HF_STEPS, *npu])
    assert d.category == Category.NCCL_TIMEOUT


def test_a_hang_in_the_set_up_is_not_told_to_check_ports(tmp_path: Path) -> None:
    log = tmp_path / "dump.log"
    log.write_text('Process 4182: python train.py\nPython v3.10.12 (/usr/bin/python3.10)\n\n'
                   'Thread 4182 (idle): "MainThread"\n'
                   "    _tokenize (datasets/arrow_dataset.py:3012)\n"
                   "    load_data (train.py:50)\n    <module> (train.py:120)\n")  # fmt: skip
    d = triage_files([log], KB).diagnosis
    assert d.category == Category.HANG and d.transient is False
    assert "ports" not in d.action and "what the job loads" in d.action


def test_a_spawned_child_dying_on_its_parents_pipe_is_not_a_corrupt_checkpoint() -> None:
    spawn = [
        "Traceback (most recent call last):",
        '  File "<string>", line 1, in <module>',
        '  File "/usr/lib/python3.6/multiprocessing/spawn.py", line 105, in spawn_main',
        "    exitcode = _main(fd)",
        '  File "/usr/lib/python3.6/multiprocessing/spawn.py", line 115, in _main',
        "    self = reduction.pickle.load(from_parent)",
        "EOFError: Ran out of input",
    ]
    cpp = ["terminate called after throwing an instance of 'std::system_error'",
           "  what():  Transport endpoint is not connected"]  # fmt: skip
    d = triage([*cpp, *spawn])
    assert d.category == Category.NETWORK and d.rule == "net.peer_closed"
    assert triage(spawn).rule == "launcher.spawn_orphan"
    load = [
        "Traceback (most recent call last):",
        '  File "/w/train.py", line 40, in <module>',
        '    state = torch.load("ckpt/last.pt")',
        '  File "/usr/lib/python3.10/site-packages/torch/serialization.py", line 1040, in load',
        "    return _legacy_load(opened_file, map_location, pickle_module, **pickle_load_args)",
        "EOFError: Ran out of input",
    ]
    assert triage(load).rule == "fs.checkpoint_corrupt"
    # a plain restart reads the same broken checkpoint again
    assert triage(load).transient is False


def test_a_spawned_childs_traceback_interleaved_with_its_parents_is_still_an_orphan() -> None:
    # Windows: the parent cannot pickle a lambda for its DataLoader worker, and the child it
    # started dies reading the data; one console interleaves their tracebacks line by line.
    d = triage([
        "Traceback (most recent call last):",
        '  File "run.py", line 202, in <module>',
        "    exp.train(setting)",
        "Traceback (most recent call last):",
        '  File "<string>", line 1, in <module>',
        '  File "E:\\envs\\lib\\multiprocessing\\spawn.py", line 126, in _main',
        '  File "E:\\envs\\lib\\multiprocessing\\context.py", line 224, in _Popen',
        "    self = reduction.pickle.load(from_parent)",
        "EOFError: Ran out of input",
        "    return _default_context.get_context().Process._Popen(process_obj)",
        "AttributeError: Can't pickle local object 'data_provider.<locals>.<lambda>'",
    ])  # fmt: skip
    assert d.category == Category.USER_CODE and d.rule == "code.pickle"  # the parent's error
    # Python 3.11 puts carets under the statement
    d = triage([
        "Traceback (most recent call last):",
        '  File "<string>", line 1, in <module>',
        '  File "E:\\envs\\lib\\multiprocessing\\context.py", line 224, in _Popen',
        "    self = reduction.pickle.load(from_parent)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "EOFError: Ran out of input",
    ])  # fmt: skip
    assert d.rule == "launcher.spawn_orphan"


def test_a_stream_of_llava_tokenization_mismatches_is_the_template_not_one_sample() -> None:
    steps = ["{'loss': 0.0, 'grad_norm': 0.0, 'learning_rate': 2e-05, 'epoch': 0.01}"]
    stream = [f"WARNING: tokenization mismatch: {n} vs. {n + 4}. (ignored)" for n in (96, 113, 127)]
    d = triage([*stream, *steps])
    assert d.category == Category.DATA and d.rule == "data.template_mismatch"
    assert d.transient is False
    # one sample now and then is that sample's; the crash the log names is the story
    assert triage([stream[0], *steps]).rule != "data.template_mismatch"
    crash = ["Traceback (most recent call last):", '  File "/w/train.py", line 9, in <module>',
             "    loss.backward()", "TypeError: backward() got an unexpected keyword argument 'x'"]
    assert triage([*stream, *crash]).category == Category.USER_CODE
    segv = ["Segmentation fault (core dumped)"]
    assert triage([*stream, *segv]).category == Category.SEGFAULT
    unknown = ["Traceback (most recent call last):", '  File "/w/train.py", line 9, in <module>',
               "    step()", "zmq.error.ZMQError: Operation cannot be accomplished now"]
    assert triage([*stream, *unknown]).rule != "data.template_mismatch"


def test_a_process_finding_its_pipe_to_another_closed_is_the_others_death() -> None:
    # Stable-Baselines3's SubprocVecEnv: the parent waits on each environment's worker, and one
    # died; the EOFError is no bug of the training code's
    closed = [
        "Traceback (most recent call last):",
        '  File "/w/train.py", line 65, in train_agent',
        "    model.learn(total_timesteps=100000)",
        '  File "/env/site-packages/stable_baselines3/common/vec_env/subproc_vec_env.py", line '
        "145, in reset",
        "    results = [remote.recv() for remote in self.remotes]",
        '  File "/usr/lib/python3.12/multiprocessing/connection.py", line 250, in recv',
        "    buf = self._recv_bytes()",
        '  File "/usr/lib/python3.12/multiprocessing/connection.py", line 430, in _recv_bytes',
        "    buf = self._recv(4)",
        '  File "/usr/lib/python3.12/multiprocessing/connection.py", line 399, in _recv',
        "    raise EOFError",
        "EOFError",
    ]  # fmt: skip
    d = triage(closed)
    assert d.category == Category.UNKNOWN and d.rule == "launcher.pipe_closed"
    assert d.transient is not True  # the other's death, not this one, says whether to restart
    # the worker's own error, above, is the story
    crashed = [
        "Process ForkServerProcess-2:",
        "Traceback (most recent call last):",
        '  File "/w/envs/building.py", line 88, in step',
        "    obs = self.sim.read(self.sensors)",
        "KeyError: 'zone_temp'",
    ]  # fmt: skip
    assert triage([*crashed, *closed]).category == Category.USER_CODE
    # an EOFError that a file's end raised elsewhere is not a closed pipe
    eof = [
        "Traceback (most recent call last):",
        '  File "/w/train.py", line 12, in <module>',
        "    data = pickle.load(f)",
        "EOFError: Ran out of input",
    ]  # fmt: skip
    assert triage(eof).rule != "launcher.pipe_closed"


def test_nccls_teardown_alone_is_a_generic_nccl_failure() -> None:
    d = triage(["step 10 loss 2.3", "[rank0]: RuntimeError: NCCL communicator was aborted."])
    assert d.category == Category.NCCL_ERROR and d.rule == "nccl.watchdog_teardown"
    with_timeout = triage([*watchdog(0), "RuntimeError: NCCL communicator was aborted."])
    assert with_timeout.category == Category.NCCL_TIMEOUT


def test_a_cpu_run_told_there_is_no_gpu_is_not_a_lost_gpu(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(
        "2024-03-01 10:00:01.123456: E tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc"
        ":268] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n"
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file\n"
    )
    assert triage_files([log], KB).diagnosis.rule == "net.hub"
    log.write_text(
        "/usr/lib/python3/torch/cuda/__init__.py:138: UserWarning: CUDA initialization: "
        "Unexpected error from cudaGetDeviceCount(). Error 100: no CUDA-capable device is "
        "detected (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n"
        "epoch 1 step 10 loss 2.31\n"
        "Traceback (most recent call last):\n"
        '  File "/app/train.py", line 88, in <module>\n'
        "    batch['labels']\n"
        "KeyError: 'labels'\n"
    )
    assert triage_files([log], KB).diagnosis.category == Category.USER_CODE


def test_a_spawned_child_that_cannot_load_a_class_is_the_code_not_an_orphan() -> None:
    d = triage([
        "Traceback (most recent call last):",
        '  File "<string>", line 1, in <module>',
        '  File "C:\\anaconda3\\lib\\multiprocessing\\spawn.py", line 116, in spawn_main',
        "    exitcode = _main(fd, parent_sentinel)",
        '  File "C:\\anaconda3\\lib\\multiprocessing\\spawn.py", line 126, in _main',
        "    self = reduction.pickle.load(from_parent)",
        "AttributeError: Can't get attribute 'MyDataset' on <module '__main__' (built-in)>",
    ])  # fmt: skip
    assert d.category == Category.USER_CODE and d.rule != "launcher.spawn_orphan"


def test_a_first_collective_is_not_the_set_up_when_another_ranks_file_trained(
    tmp_path: Path,
) -> None:
    rank0, rank1 = tmp_path / "rank0.log", tmp_path / "rank1.log"
    rank0.write_text("\n".join(_HF_STEPS) + "\n")
    rank1.write_text(_timeout(1, 1, "ALLREDUCE", "PG ID 3 PG GUID 3 ") + "\n")
    d = triage_files([rank0, rank1], KB).diagnosis
    assert d.transient is None and "first collective" not in d.summary
    # no step anywhere: the set-up's
    rank0.write_text("loading the model\n")
    assert triage_files([rank0, rank1], KB).diagnosis.transient is False


def test_a_peer_closing_its_connection_alone_promises_no_restart() -> None:
    # LightGBM's Dask workers: one stops early and closes its sockets, another dies on the
    # reset; a restart meets the same. Without the peer's own error the log cannot tell.
    d = triage([
        "[ worker 192.168.222.237 ] : [61]       test's l2: 19312.2",
        "[ worker 192.168.222.237 ] : [LightGBM] [Fatal] Socket recv error, Connection reset by "
        "peer (code: 104)",
    ])  # fmt: skip
    assert d.category == Category.NETWORK and d.transient is None


def test_macos_libcxx_abort_names_its_exception() -> None:
    # libc++'s words for an uncaught C++ exception (MLX on Apple GPUs), the line's own error wins
    d = triage([
        "Iter 50: Train loss 1.487, Learning Rate 1.000e-05, Peak mem 34.108 GB",
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] "
        "Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallba"
        "ckErrorOutOfMemory)",
        "zsh: abort      mlx_lm.lora --model ./Qwen3-8B",
    ])  # fmt: skip
    assert d.category == Category.CUDA_OOM and d.transient is False


@pytest.mark.parametrize(
    ("line", "rule", "category"),
    [
        # TensorFlow's spelling of EDQUOT, in lower case
        ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: disk quota exceeded "
         "[Op:SaveV2]", "fs.quota", Category.FILESYSTEM_IO),
        # a FUSE mount gone away, the path given to Python as bytes
        ("OSError: [Errno 107] Transport endpoint is not connected: b'/output/log/3/events.out'",
         "fs.network_mount", Category.FILESYSTEM_IO),
        # glibc's assert with the newer straight quotes; a CUDA kernel's in them, by block/thread
        ("python3: /opt/DeepEP/csrc/permute.cu:412: void permute_launcher(PermuteArgs): "
         "Assertion 'args.output_tokens_ptr != nullptr' failed.", "code.native_assert",
         Category.UNKNOWN),  # user_code at start-up: see test_a_native_assertion_is_the_code...
        ("/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: "
         "[0,0,0], thread: [5,0,0] Assertion 'srcIndex < srcSelectDimSize' failed.",
         "code.device_assert", Category.CUDA_ERROR_OTHER),
        # the loss kernel's own assert on its target: a label out of range, as on the CPU
        ("/pytorch/aten/src/ATen/native/cuda/Loss.cu:240: nll_loss_forward: block: [0,0,0], "
         "thread: [5,0,0] Assertion 't >= 0 && t < n_classes' failed.", "data.label_range",
         Category.DATA),
        # out of file descriptors: a limit to raise, the config's
        ("OSError: [Errno 24] Too many open files", "fs.too_many_files", Category.USER_CODE),
        ("IndexError: Target 5 is out of bounds.", "data.label_range", Category.DATA),
        ('AssertionError: Box regression deltas become infinite or NaN!', "numerical.nan",
         Category.NUMERICAL),
        # a loss at infinity under any key, torch's non-finite gradient norm
        ("2017-08-20 16:11:46 INFO  DistriOptimizer$:295 - [Iteration 45459] Loss is Infinity. "
         "Current learning rate is 0.046", "numerical.nan", Category.NUMERICAL),
        ("Training  [     40/5000000]  lr: 0.0000 (0.0000)  total_loss: inf ", "numerical.nan",
         Category.NUMERICAL),
        ("optimizer.py:31: FutureWarning: Non-finite norm encountered in "
         "torch.nn.utils.clip_grad_norm_; continuing anyway.", "numerical.nan", Category.NUMERICAL),
        # a video that cannot be decoded; HDF5's truncated file
        ("decord._ffi.base.DECORDError: [16:23:42] /io/decord/src/video/video_reader.cc:151: "
         "ERROR opening: data/v_1.mp4, Invalid data found when processing input",
         "data.audio", Category.DATA),
        ("OSError: Unable to open file (truncated file: eof = 10485760, sblock->base_addr = 0, "
         "stored_eof = 372841106)", "data.truncated", Category.DATA),
        # TensorFlow's JPEG decoder on a truncated image
        ("2020-10-28 05:57:57.511499: E tensorflow/core/lib/jpeg/jpeg_mem.cc:323] Premature end "
         "of JPEG data. Stopped at line 1214/2593", "data.image", Category.DATA),
        # a loss at NaN a space from its key, and two metrics of one line at NaN
        ("[10] epoch 0, 10/186, g_loss nan d_fake_loss nan d_real_loss nan flat nan",
         "numerical.nan", Category.NUMERICAL),
        ("  3000/1000000 [15:56:20<5190:25:27, 18.74s/it]G: nan | MSG: nan | VG: 0.00 | D: nan",
         "numerical.nan", Category.NUMERICAL),
        # PaddlePaddle's NCCL error
        ("OSError: (External) Nccl error, invalid data type, detail: Resource temporarily "
         "unavailable", "nccl.error", Category.NCCL_ERROR),
        # GCE's power-button press on a Spot VM it takes back, as systemd-logind logs it
        ("Jan 30 10:33:08 gpu-vm-1 systemd-logind[812]: Power key pressed.", "sched.preempted",
         Category.PREEMPTION),
        ("E0827 23:43:41.200122 39475 synchronous_driver.cc:820] [/dev/accel0 tpu1013:pe1:0] "
         "!!!! FATAL ERROR !!!! for [/dev/accel0 tpu1013:pe1:0] , fatal_error: true",
         "accel.runtime_error", Category.CUDA_ERROR_OTHER),
    ],
)  # fmt: skip
def test_spellings_of_known_failures_that_other_versions_print(
    line: str, rule: str, category: Category
) -> None:
    d = triage([line])
    assert (d.rule, d.category) == (rule, category)


def test_a_notebooks_traceback_names_its_exception_in_its_header() -> None:
    head = "IndexError                                Traceback (most recent call last)"
    d = triage(["-" * 75, head, "Cell In[1], line 26", "---> 26 history = model.fit(X, Y)"])
    assert d.category == Category.USER_CODE and d.rule == "python.bug"
    assert d.confidence < 0.5  # the type alone
    # its message, at its end, is the finding when the log holds it
    ran = triage([
        "RuntimeError                              Traceback (most recent call last)",
        "Cell In[3], line 2",
        "RuntimeError: One of the subprocesses has abruptly died during map operation.To debug "
        "the error, disable multiprocessing.",
    ])
    assert ran.category == Category.HOST_OOM


def test_a_best_or_minimum_loss_at_inf_is_no_nan_loss() -> None:
    for line in ("epoch 0: best_val_loss=inf", "min_loss: inf, patience 3", "loss_scale: inf",
                 "lr: 0.1 | nan_count: 0 | loss: 2.3", "val/best_loss: inf",
                 "train/loss_scale: inf"):  # fmt: skip
        assert triage([line]).category != Category.NUMERICAL, line


@pytest.mark.parametrize(
    ("frames"),
    [
        ['  File "/venv/torch/utils/data/dataloader.py", line 1310, in _try_get_data',
         "    data = self._data_queue.get(timeout=timeout)"],
        ['  File "/usr/lib/python3.6/multiprocessing/connection.py", line 407, in _recv_bytes',
         "    buf = self._recv(4)"],
        ['  File "/opt/conda/lib/python3.8/multiprocessing/popen_fork.py", line 44, in wait',
         "    if not wait([self.sentinel], timeout):"],
    ],
)  # fmt: skip
def test_a_traceback_cut_inside_a_wait_is_a_hang_someone_interrupted(frames: list[str]) -> None:
    head = ['  File "/w/train.py", line 9, in <module>', "    for batch in loader:"]
    d = triage(["Epoch 1: loss 2.0", "Traceback (most recent call last):", *head, *frames])
    assert d.category == Category.HANG and d.rule == "hang.cut_in_wait"
    assert d.transient is None and d.confidence < 0.5
    # any error the log names explains the run better
    named = triage(["ERROR: Unexpected bus error encountered in worker. This might be caused by "
                    "insufficient shared memory (shm).", "Traceback (most recent call last):",
                    *frames])  # fmt: skip
    assert named.category == Category.SEGFAULT


_WAITING = (
    "[2023-07-16 13:17:36,147][torch.distributed.distributed_c10d][INFO] - Waiting in store based "
    "barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 "
    "(world_size=2, worker_count=1, timeout=0:30:00)"
)


def test_a_store_barrier_that_completed_or_that_training_followed_is_no_hang(
    tmp_path: Path,
) -> None:
    assert triage([_WAITING, _WAITING]).category == Category.HANG
    done = "Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 2 nodes."
    assert triage([_WAITING, done]).category == Category.UNKNOWN
    log = tmp_path / "rank0.log"
    log.write_text("\n".join([_WAITING, *[f"step {i} | loss: 2.{i}" for i in range(50)]]) + "\n")
    d = triage_files([log], KB).diagnosis
    assert d.category == Category.HANG and d.rule is None, d.summary  # the silent end's reading
    assert "store based" not in d.summary and d.transient is None, d.summary


def test_frames_without_a_traceback_header_are_no_cut_traceback() -> None:
    d = triage([
        "[rank1]:[E1218 12:49:09.086536415 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=517, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=1800000) ran for 1800046 milliseconds before timing out.",
        "[rank0]:Stack (most recent call last):",
        '[rank0]:  File "/w/train.py", line 200, in save_checkpoint',
        "[rank0]:    torch.save(state, path)",
    ])
    assert d.category == Category.NCCL_TIMEOUT


def test_a_dicts_get_is_no_wait() -> None:
    d = triage(["Traceback (most recent call last):", '  File "/w/train.py", line 9, in setup',
                '    lr = cfg.optim.get("lr")'])  # fmt: skip
    assert d.rule == "python.cut_traceback"


def test_the_set_up_chatter_of_a_log_that_trained_does_not_hide_its_stall(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("\n".join([
        "/etc/profile.d/lmod.sh: line 2: module: command not found",
        "2024-05-12 07:00:00,000 INFO step 100 | loss: 2.31",
        "2024-05-12 07:01:00,000 INFO step 110 | loss: 2.30",
        "[2024-05-12 09:00:00] PULSE: job 1528763 is running",
    ]) + "\n")  # fmt: skip
    assert triage_files([log], KB).diagnosis.category == Category.HANG


@pytest.mark.parametrize(
    "warning",
    [
        "wandb: Network error (ReadTimeout), entering retry loop.",
        "WARNING:urllib3.connectionpool:Retrying (Retry(total=4, connect=5, read=4, redirect=5, "
        "status=5)) after connection broken by 'ReadTimeoutError(...Read timed out.)': /api",
        "2024-05-12 07:02:00.041879: W tensorflow/core/util/ctc/ctc_loss_calculator.cc:144] No "
        "valid path found.",
        "[07:02:01] SMILES Parse Error: syntax error while parsing: C1CC(",
    ],
)
def test_a_warning_the_run_went_on_after_does_not_hide_its_stall(
    tmp_path: Path, warning: str
) -> None:
    steps = [f"2024-05-12 07:{m:02d}:00,000 INFO step {100 + m} | loss: 2.31" for m in range(10)]
    log = tmp_path / "train.log"
    log.write_text("\n".join([
        *steps[:3], warning, *steps[3:],
        "[2024-05-12 09:00:00] PULSE: job 1528763 is running",
        "[2024-05-12 11:00:00] PULSE: job 1528763 is running",
    ]) + "\n")  # fmt: skip
    d = triage_files([log], KB).diagnosis
    assert d.category == Category.HANG, d.summary
    assert d.consequences  # the warning is still shown, as what came before the stall


def test_a_log_that_begins_inside_a_traceback_is_a_cut_one() -> None:
    frames = ['  File "/w/trainer.py", line 916, in _save_checkpoint',
              '    torch.save(self.optimizer.state_dict(), "optimizer.pt")']  # fmt: skip
    assert triage(frames).rule == "fs.cut_checkpoint_write"
    assert triage(["", *frames]).rule == "fs.cut_checkpoint_write"  # after a blank line
    # not frames that a message before them introduces (traceback.print_stack, stack_info)
    assert triage(["saving from here:", *frames]).rule is None


def test_torchs_cpp_exception_is_read_as_the_runtime_error_it_is_in_python() -> None:
    d = triage([
        "terminate called after throwing an instance of 'c10::Error'",
        "  what():  Error: cannot set number of interop threads after parallel work has started",
        "Exception raised from set_num_interop_threads at ../aten/src/ATen/Parallel.cpp:54",
    ])
    assert d.rule == "python.runtime" and "cannot set number of interop" in d.summary
    # its words, when a rule knows them, are that rule's
    oom = triage(["terminate called after throwing an instance of 'c10::Error'",
                  "  what():  CUDA out of memory. Tried to allocate 2.00 GiB"])  # fmt: skip
    assert oom.category == Category.CUDA_OOM
    # another C++ exception's message is not torch's
    other = triage(["terminate called after throwing an instance of 'std::system_error'",
                    "  what():  Operation not permitted", "Aborted (core dumped)"])  # fmt: skip
    assert not (other.rule or "").startswith("python.")


def test_a_scalers_repeated_nan_alone_is_numerical_but_weak() -> None:
    d = triage([f"Found NaN, decreased lg_loss_scale to -{16199 + i}.354" for i in range(5)])
    assert d.category == Category.NUMERICAL and d.confidence < 0.5


def test_a_ctrl_c_in_a_wait_is_a_run_someone_found_stuck() -> None:
    d = triage(["Epoch 1: loss 2.0", "Traceback (most recent call last):",
                '  File "/w/train.py", line 9, in <module>', "    for batch in val_loader:",
                '  File "/usr/lib/python3.6/multiprocessing/connection.py", line 379, in _recv',
                "    chunk = read(handle, remaining)", "KeyboardInterrupt"])  # fmt: skip
    assert d.category == Category.HANG and d.rule == "hang.interrupted_in_wait"
    # a Ctrl-C in the middle of work is no sign of a stuck run
    busy = triage(["Traceback (most recent call last):", '  File "/w/train.py", line 9, in step',
                   "    loss = model(batch)", "KeyboardInterrupt"])  # fmt: skip
    assert busy.rule != "hang.interrupted_in_wait"


def test_an_io_error_from_a_print_is_a_terminal_gone_not_a_disk() -> None:
    # the ssh session the job was started from closed: its next print raises EIO
    head = ["epoch 3 step 1200 loss 2.31", "Traceback (most recent call last):",
            '  File "/home/u/proj/train.py", line 212, in <module>', "    main()",
            '  File "/home/u/proj/train.py", line 188, in main']  # fmt: skip
    eio = "OSError: [Errno 5] Input/output error"
    for code in ('    print(f"epoch {epoch} loss {loss:.2f}")', "    sys.stdout.flush()"):
        d = triage([*head, code, eio])
        assert d.category == Category.USER_CODE and d.rule == "launcher.terminal_gone", code
        assert d.transient is False and "terminal" in d.summary
    tqdm = triage([*head, "    for batch in tqdm(loader):",
                   '  File "/venv/tqdm/std.py", line 1195, in __iter__',
                   "    self.update(n - last)",
                   '  File "/venv/tqdm/utils.py", line 196, in write',
                   "    self.fp.write(s)", eio])  # fmt: skip
    assert tqdm.rule == "launcher.terminal_gone"
    # a print to a file of its own, a checkpoint's write: storage's error
    for code in ("    print(line, file=log_file)", "    torch.save(state, path)"):
        d = triage([*head, code, eio])
        assert d.category == Category.FILESYSTEM_IO and d.rule == "fs.eio", code
    assert triage([*head, "    print(line, file=sys.stderr)", eio]).rule == "launcher.terminal_gone"
    # the wrappers around a print: DeiT's master-only print, a tee logger's terminal
    for code in ("    builtin_print(*args, **kwargs)", "    self.terminal.write(message)"):
        assert triage([*head, code, eio]).rule == "launcher.terminal_gone", code
    # an error that names a path was the read the print's arguments made, on a mount
    read = triage([*head, '    print("files:", os.listdir(args.data_dir))',
                   "OSError: [Errno 5] Input/output error: '/mnt/gcs/dataset'"])  # fmt: skip
    assert read.rule == "fs.eio"


def test_a_traceback_cut_in_torch_compiles_compiler_is_a_compile_that_failed() -> None:
    head = ["Traceback (most recent call last):", '  File "/w/train.py", line 80, in <module>',
            "    loss = compiled(batch)"]  # fmt: skip
    d = triage([*head,
                '  File "/venv/torch/_inductor/runtime/triton_heuristics.py", line 463, in '
                "_precompile_worker", "    compile_results.append(self._precompile_config(c))"])
    assert d.category == Category.USER_CODE and d.rule == "code.cut_compile"
    assert d.transient is False and d.confidence < 0.5
    # a compiled model's own forward, cut, is no compile's
    fwd = triage([*head, '  File "/venv/torch/_dynamo/eval_frame.py", line 655, in _fn',
                  "    return fn(*args, **kwargs)", '  File "/w/model.py", line 30, in forward',
                  "    x = self.attn(x)"])  # fmt: skip
    assert fwd.rule == "python.cut_traceback"
    # nor is a compiled model's run: Inductor launching its kernel, Triton's driver
    for frame, code in (
        ('  File "/venv/torch/_inductor/runtime/triton_heuristics.py", line 1034, in run',
         "    return launcher("),
        ('  File "/venv/triton/backends/nvidia/driver.py", line 444, in __call__',
         "    self.launch(*args, **kwargs)"),
    ):  # fmt: skip
        assert triage([*head, frame, code]).rule == "python.cut_traceback", frame


@pytest.mark.parametrize(
    "early",
    [
        # nvidia-smi's table a job prints at its start, a sensor it could not read
        "| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |      0%      Default |",
        # PSM2's word while MPI probes its fabrics
        "node017.48213PSM2 can't open hfi unit: -1 (err=23)",
        # a missing file the script printed and went on after
        "[Errno 2] No such file or directory: '/data/coco/train2017/000000123456.jpg'",
        # an earlier allocation's prolog failure, then one that trained
        "salloc: Prolog failure on node k003-006",
    ],
)
def test_an_early_line_the_run_went_on_after_is_no_cause_of_a_later_error(early: str) -> None:
    def trained(lines: list[str]):  # type: ignore[no-untyped-def]
        engine = Engine(KB)
        for n, line in enumerate(lines, 1):
            engine.feed(0, n, line)
        engine.finish()
        return diagnose(engine, ["rank0.log"], 100, progress={0: 2})  # steps from line 2

    steps = [f"step {i} | loss 2.{i} | lr 3.0e-04" for i in range(1, 30)]
    d = trained([early, *steps, "Traceback (most recent call last):",
                 '  File "/w/train.py", line 9, in <module>', "    x = batch['pixel_values']",
                 "KeyError: 'pixel_values'"])  # fmt: skip
    assert d.category == Category.USER_CODE, d.rule
    cancel = "slurmstepd: error: *** JOB 4242 ON node12 CANCELLED AT 2024-03-02T10:11:12 ***"
    assert trained([early, *steps, cancel]).rule == "sched.cancelled"


def test_a_mounts_errno_raised_by_a_write_is_the_storages() -> None:
    head = ["Traceback (most recent call last):",
            '  File "/venv/lightning/utilities/cloud_io.py", line 68, in atomic_save',
            "    f.write(bytesbuffer.getvalue())",
            '  File "/venv/fsspec/implementations/local.py", line 382, in write',
            "    return self.f.write(*args, **kwargs)"]  # fmt: skip
    d = triage([*head, "OSError: [Errno 107] Transport endpoint is not connected"])
    assert d.category == Category.FILESYSTEM_IO and d.rule == "fs.write_failed"
    sshfs = triage([*head, "OSError: [Errno 103] Software caused connection abort"])
    assert sshfs.rule == "fs.write_failed"
    # a call the mount lacks (a lock, a hard link) meets every restart the same way
    lacks = triage([*head, "OSError: [Errno 38] Function not implemented"])
    assert lacks.rule == "fs.write_unsupported" and lacks.transient is False
    # an invalid name is the code's, whatever wrote it
    bad = triage([*head, "OSError: [Errno 22] Invalid argument: 'ckpt/step:100.pt'"])
    assert bad.rule != "fs.write_failed"
    # the same errno on a socket is no storage's
    sock = triage(["Traceback (most recent call last):",
                   '  File "/w/rollout.py", line 40, in send', "    self.sock.sendall(data)",
                   "OSError: [Errno 107] Transport endpoint is not connected"])  # fmt: skip
    assert sock.rule != "fs.write_failed"


_PARENT_JOIN = [
    "Traceback (most recent call last):",
    '  File "/w/train.py", line 90, in <module>',
    "    mp.spawn(main, nprocs=8)",
    '  File "/venv/torch/multiprocessing/spawn.py", line 140, in join',
    "    ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)",
    '  File "/usr/lib/python3.10/multiprocessing/connection.py", line 931, in wait',
    "    ready = selector.select(timeout)",
    '  File "/usr/lib/python3.10/selectors.py", line 416, in select',
    "    fd_event_list = self._selector.poll(timeout)",
    "KeyboardInterrupt",
]


def test_a_ctrl_c_of_a_launcher_or_of_a_busy_gpu_is_no_stuck_run() -> None:
    # mp.spawn's parent joins its children whether they work or hang
    assert triage(_PARENT_JOIN).rule != "hang.interrupted_in_wait"
    gpu = ["Traceback (most recent call last):", '  File "/w/train.py", line 9, in step',
           "    torch.cuda.synchronize()",
           '  File "/venv/torch/cuda/__init__.py", line 800, in synchronize',
           "    return torch._C._cuda_synchronize()", "KeyboardInterrupt"]  # fmt: skip
    assert triage(gpu).rule != "hang.interrupted_in_wait"
    # a spawned child's own wait on its DataLoader is one (spawn's frame is its outermost)
    child = ["Traceback (most recent call last):",
             '  File "/venv/torch/multiprocessing/spawn.py", line 69, in _wrap',
             "    fn(i, *args)", '  File "/w/train.py", line 40, in main', "    for b in loader:",
             '  File "/venv/torch/utils/data/dataloader.py", line 1133, in _try_get_data',
             "    data = self._data_queue.get(timeout=timeout)",
             '  File "/usr/lib/python3.10/multiprocessing/queues.py", line 113, in get',
             "    if not self._poll(timeout):", "KeyboardInterrupt"]  # fmt: skip
    assert triage(child).rule == "hang.interrupted_in_wait"


def test_a_ctrl_c_anywhere_else_is_a_run_stopped_by_hand_not_a_workers_failure() -> None:
    # A KeyboardInterrupt that ends a traceback outside a wait (the launcher's own join, a
    # busy loop) was a person's Ctrl-C, as a bare `^C` is: no launcher reported a failure.
    d = triage(_PARENT_JOIN)
    assert d.rule == "hang.interrupted_traceback" and d.category == Category.HANG
    assert "launcher" not in d.summary.lower() and d.confidence < 0.4
    # the same Ctrl-C after a rank's real error is that error's consequence
    after = triage(["[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered",
                    *_PARENT_JOIN])  # fmt: skip
    assert after.category == Category.CUDA_ERROR_OTHER


def test_decords_own_cuda_errors_are_not_a_bad_video(tmp_path: Path) -> None:
    for line in ("decord._ffi.base.DECORDError: CUDA not enabled. Requested context GPU(0).",
                 "decord._ffi.base.DECORDError: [10:01:02] cuda_device_api.cc:33: Check failed: "
                 "e == cudaSuccess: CUDA: initialization error"):  # fmt: skip
        assert triage([line]).category != Category.DATA, line
    # ffmpeg's word for an mp4 cut short reaches the rules among a log's step lines
    log = tmp_path / "train.log"
    log.write_text("".join(f"step {i} | loss: 2.{i}\n" for i in range(50))
                   + "[mov,mp4,m4a,3gp,3g2,mj2 @ 0x55d1] moov atom not found\n")  # fmt: skip
    assert triage_files([log], KB).diagnosis.rule == "data.audio"


def test_argparse_usage_says_the_arguments_were_refused_and_its_error_line_says_more() -> None:
    usage = "usage: train.py [-h] [--work-dir WORK_DIR] [--local_rank LOCAL_RANK]"
    error = "train.py: error: unrecognized arguments: --local-rank=0"
    alone = triage([usage])
    assert alone.category == Category.USER_CODE and alone.rule == "code.cli_usage"
    assert alone.transient is False and alone.confidence < 0.5
    assert triage([usage, error]).rule == "code.cli_config"
    # any other error line explains the run better than a usage block
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert triage([usage, oom]).category == Category.CUDA_OOM


def test_a_warning_that_memory_is_high_never_outranks_the_run_s_own_error() -> None:
    # Dask's worker warns and goes on: the KeyError after it is what ended the run
    d = triage([
        "[0] train-rmse:0.52",
        "distributed.worker - WARNING - Memory use is high but worker has no data to store to "
        "disk.  Perhaps some other process is leaking memory?  Process memory: 19.20 GB -- Worker "
        "memory limit: 27.05 GB",
        "KeyError: 'label'",
    ])
    assert d.category == Category.USER_CODE
    alone = triage(["[0] train-rmse:0.52", "distributed.worker - WARNING - Memory use is "
                          "high but worker has no data to store to disk."])  # fmt: skip
    assert alone.category == Category.HOST_OOM and alone.confidence < 0.5


def test_a_cuda_error_that_rmm_reports_as_bad_alloc_is_that_error() -> None:
    d = triage(["std::bad_alloc: CUDA error at: /opt/conda/include/rmm/mr/device/"
                      "cuda_memory_resource.hpp:70: cudaErrorIllegalAddress an illegal memory "
                      "access was encountered"])  # fmt: skip
    assert d.category == Category.CUDA_ERROR_OTHER


def test_the_mpi_transport_failing_is_the_cause_of_the_segfault_mpi_dies_with(
    tmp_path: Path,
) -> None:
    ucx = ["[1746051351.812265] [node-3:1950659:0]  sock.c:334  UCX  ERROR   connect(fd=168, "
           "dest_addr=169.254.4.6:52595) failed: Connection refused",
           "[node-3:1950659] pml_ucx.c:477  Error: Failed to resolve UCX endpoint for rank 0",
           "[node-3:1950659:0:1950659] Caught signal 11 (Segmentation fault: address not mapped "
           "to object at address 0x30)"]  # fmt: skip
    log = tmp_path / "train.log"
    log.write_text("\n".join(ucx) + "\n")
    d = triage_files([log], KB).diagnosis
    assert (d.category, d.rule) == (Category.NCCL_ERROR, "mpi.ucx")
    assert d.transient is False  # no training step before it: the fabric's set-up
    log.write_text("\n".join(["iteration 100/ 5000 | lm loss: 2.31", *ucx]) + "\n")
    assert triage_files([log], KB).diagnosis.transient is True  # mid-run: a node or a link


def test_gloo_failing_its_own_check_on_a_message_is_the_communication_library_s_error() -> None:
    line = ("libc++abi: terminating due to uncaught exception of type gloo::EnforceNotMet: "
            "[enforce fail at /Users/runner/work/pytorch/pytorch/pytorch/third_party/gloo/gloo/"
            "transport/uv/pair.cc:248] op.nread == op.preamble.nbytes. ")  # fmt: skip
    assert triage([line]).rule == "gloo.transport_enforce"
    refused = ("terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
               "  what():  [enforce fail at third_party/gloo/gloo/transport/tcp/pair.cc:446] "
               "false. Connection refused")  # fmt: skip
    assert triage(refused.split("\n")).category == Category.NETWORK


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        # a wrapped message's second line, or a message without its exception class: the
        # scanner hands them to the rules (a needle of their own), not only the engine
        ("Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.24 GiB already "
         "allocated; 2.88 MiB free; 1.25 GiB reserved in total by PyTorch)", "cuda.oom"),
        ("stack expects each tensor to be equal size, but got [1, 225, 255] at entry 0 and "
         "[3, 225, 255] at entry 3", "data.collate"),
        ("        status = StatusCode.UNAVAILABLE", "net.grpc_unavailable"),
        ("zipfile.BadZipFile: File is not a zip file", "data.truncated"),
    ],
)  # fmt: skip
def test_a_rule_s_words_without_another_needle_reach_the_rules(
    tmp_path: Path, line: str, rule: str
) -> None:
    log = tmp_path / "train.log"
    log.write_text(f"step 1 loss 2.0\n{line}\n")
    assert triage_files([log], KB).diagnosis.rule == rule


def test_a_library_s_build_probe_before_the_training_is_no_cause(tmp_path: Path) -> None:
    # DeepSpeed probes whether async_io could be built and trains on: the linker's words before
    # the first step are set-up chatter; the run's own end is the story
    probe = [
        "/usr/bin/ld: cannot find -laio: No such file or directory",
        "collect2: error: ld returned 1 exit status",
    ]
    steps = [f"step {i} | loss: 2.{i:02d}" for i in range(1, 30)]
    log = tmp_path / "train.log"
    log.write_text("\n".join([*probe, *steps, "Killed"]) + "\n")
    assert triage_files([log], KB).diagnosis.rule == "host.sigkill"
    # the same words with nothing after them: the build failed, and a restart fails the same way
    log.write_text("\n".join(["step 0 | starting", *probe]) + "\n")
    d = triage_files([log], KB).diagnosis
    assert (d.rule, d.transient) == ("code.link_failed", False)


def test_a_team_rule_marked_set_up_only_is_no_cause_in_a_log_that_trained(tmp_path: Path) -> None:
    # a team's own probe line (`set_up_only = true`): chatter where training steps follow it,
    # the cause where nothing does
    rules = tmp_path / "team.toml"
    rules.write_text(
        '[[rule]]\nid = "team.mount_probe"\ncategory = "filesystem_io"\nset_up_only = true\n'
        "patterns = ['mount probe failed: /scratch not ready']\n"
        'explain = "The scratch mount was not ready."\naction = "Ask the storage team."\n'
    )
    kb = load_knowledge([rules])
    log = tmp_path / "train.log"
    log.write_text("\n".join(["mount probe failed: /scratch not ready", *_STEPS, "Killed"]) + "\n")
    assert triage_files([log], kb).diagnosis.rule == "host.sigkill"
    log.write_text("starting\nmount probe failed: /scratch not ready\n")
    assert triage_files([log], kb).diagnosis.rule == "team.mount_probe"


def test_a_team_rule_marked_raised_only_is_no_cause_on_a_line_that_goes_on(tmp_path: Path) -> None:
    # a team's check that a monitor quotes and goes on past (`raised_only = true`): no cause on a
    # line that warns, skips or is falling back or defaulting, nor where the error is quoted after
    # a parenthesis or a bracket; the cause where a script raised it, even with advice on falling
    # back in its message, or with the monitor's words quoted in parentheses after its own
    rules = tmp_path / "team.toml"
    rules.write_text(
        '[[rule]]\nid = "team.fabric"\ncategory = "network"\nraised_only = true\n'
        "patterns = ['FabricError: fabric manager not running']\n"
        'explain = "The fabric manager is down."\naction = "Restart it on the node."\n'
    )
    kb = load_knowledge([rules])
    log = tmp_path / "train.log"
    for line in (
        "monitor: WARNING FabricError: fabric manager not running; will retry",
        "/opt/x/probe.py:12: UserWarning: FabricError: fabric manager not running",
        "probe skipped (FabricError: fabric manager not running)",
        "nvlink check: FabricError: fabric manager not running, falling back to PCIe",
        "nvlink check: FabricError: fabric manager not running; defaulting to PCIe",
        "probe result (FabricError: fabric manager not running)",
        "probe result [lib.errors.FabricError: fabric manager not running]",
    ):
        log.write_text("\n".join([line, *_STEPS]) + "\n")
        assert triage_files([log], kb).diagnosis.rule != "team.fabric", line
        found = kb.match(line)
        assert found is None or found[0].id != "team.fabric", line
    for line in (
        "lib.errors.FabricError: fabric manager not running",
        "lib.errors.FabricError: fabric manager not running. Set NVLINK=0 to fall back to PCIe.",
        "RuntimeError: NVLink setup failed (FabricError: fabric manager not running)",
        "probe (FabricError: fabric manager not running) then FabricError: fabric manager not "
        "running",
    ):
        log.write_text("\n".join([*_STEPS, "Traceback (most recent call last):", line]) + "\n")
        assert triage_files([log], kb).diagnosis.rule == "team.fabric", line
        found = kb.match(line)
        assert found is not None and found[0].id == "team.fabric", line


_STEPS = [f"step {i * 10} | loss {2.3 - i / 1000:.3f} | lr 3.0e-04" for i in range(1, 40)]
_TIMEOUT = _timeout(1, 1234, "ALLREDUCE")
_LOGGING_ERROR = [
    "--- Logging error ---",
    "Traceback (most recent call last):",
    '  File "C:\\Python311\\Lib\\logging\\__init__.py", line 1113, in emit',
    "    stream.write(msg + self.terminator)",
    '  File "C:\\Python311\\Lib\\encodings\\cp1252.py", line 19, in encode',
    "    return codecs.charmap_encode(input,self.errors,encoding_table)[0]",
    "UnicodeEncodeError: 'charmap' codec can't encode characters in position 51-54: character "
    "maps to <undefined>",
    "Call stack:",
    '  File "D:\\proj\\train.py", line 180, in main',
    "Message: 'epoch 1 saved'",
    "Arguments: ()",
]


@pytest.mark.parametrize(
    "before",
    [
        # the warnings of an optional DLL that the job trains on after (torchvision, xformers)
        [
            "C:\\venv\\lib\\site-packages\\torchvision\\io\\image.py:13: UserWarning: Failed to "
            "load image Python extension: '[WinError 127] The specified procedure could not be "
            "found'If you don't plan on using image functionality from `torchvision.io`, you can "
            "ignore this warning."
        ],
        [
            "A matching Triton is not available, some optimizations will not be enabled.",
            "Error caught was: DLL load failed while importing libtriton: The specified module "
            "could not be found.",
        ],
        # Python's logging reporting a character the console cannot print, and going on
        _LOGGING_ERROR,
        # a job script's optional steps that failed before the training
        ["python: can't open file '/workspace/tools/report_env.py': [Errno 2] No such file or "
         "directory"],
        ["make: *** No rule to make target 'helpers.cpp', needed by 'helpers.so'.  Stop."],
        ["/etc/profile.d/z00_lmod.sh: line 14: /opt/apps/lmod/lmod/init/bash: Permission denied"],
    ],
)  # fmt: skip
def test_a_line_the_run_went_on_after_does_not_outrank_its_end(
    tmp_path: Path, before: list[str]
) -> None:
    # the run trained on after each of these, then its collective timed out: the timeout is the
    # story, and whether a restart helps is the timeout's to say (null), not the set-up's (false)
    log = tmp_path / "train.log"
    log.write_text("\n".join([*before[:1], *_STEPS[:9], *before[1:], *_STEPS[9:], _TIMEOUT]) + "\n")
    d = triage_files([log], KB).diagnosis
    assert (d.rule, d.transient) == ("nccl.watchdog_timeout", None)


def test_keras_running_out_of_input_is_only_the_story_of_a_log_without_an_error(
    tmp_path: Path,
) -> None:
    # Keras warns the same when the validation data runs dry, and trains on: a consequence, which
    # any error outranks and which never stops a restart alone
    warning = (
        "213/213 [==============================] - ETA: 0s - loss: 2.6573WARNING:tensorflow:Your "
        "input ran out of data; interrupting training. Make sure that your dataset or generator "
        "can generate at least `steps_per_epoch * epochs` batches (in this case, 25 batches)."
    )
    log = tmp_path / "train.log"
    log.write_text("\n".join([warning, *_STEPS, _TIMEOUT]) + "\n")
    assert triage_files([log], KB).diagnosis.rule == "nccl.watchdog_timeout"
    log.write_text("\n".join([*_STEPS, warning]) + "\n")
    d = triage_files([log], KB).diagnosis
    assert d.rule == "code.input_exhausted" and d.confidence < 0.5


def test_a_one_shard_checkpoint_not_found_is_not_a_directory_the_tasks_do_not_share(
    tmp_path: Path,
) -> None:
    # one task's save (`-of-00001`) on a FUSE mount: the storage's, not a distributed job's
    line = (
        "W tensorflow/core/framework/op_kernel.cc:1401] OP_REQUIRES failed at "
        "save_restore_v2_ops.cc:165 : Not found: /content/drive/My Drive/models/run3/"
        "model.ckpt-300_temp_8a1f0c/part-00000-of-00001.index; No such file or directory"
    )
    log = tmp_path / "train.log"
    log.write_text("\n".join([*_STEPS, line]) + "\n")
    assert triage_files([log], KB).diagnosis.rule != "code.ckpt_dir_not_shared"
    log.write_text("\n".join([*_STEPS, line.replace("-of-00001", "-of-00002")]) + "\n")
    assert triage_files([log], KB).diagnosis.rule == "code.ckpt_dir_not_shared"


def test_a_huge_host_allocation_explains_a_bare_interruption_but_no_error() -> None:
    alloc = "tcmalloc: large alloc 44581601280 bytes == 0x7f6ef822c000 @  0x7f7a28081001 0x50a4a5"
    d = triage(["Mix layers sets:  [7, 9, 12]", alloc, "^C"])  # a notebook VM's OOM kill
    assert d.category == Category.HOST_OOM and d.transient is False and d.confidence < 0.5
    bug = triage([alloc, "Traceback (most recent call last):", '  File "t.py", line 3, in <module>',
                  "KeyError: 'input_ids'"])  # fmt: skip
    assert bug.category == Category.USER_CODE


def test_a_retried_request_to_the_object_store_does_not_outweigh_the_run_s_bug() -> None:
    curl = "2018-12-14 01:13:58.715801: E tensorflow/core/platform/s3/aws_logging.cc:60] Curl "
    curl += "returned error code 28"
    retry = "2018-12-14 01:13:58.716001: W tensorflow/core/platform/s3/aws_logging.cc:57] Request "
    retry += "failed, now waiting 0 ms before attempting again."
    bug = ["Traceback (most recent call last):", '  File "train.py", line 40, in <module>',
           "KeyError: 'label'"]  # fmt: skip
    assert triage([curl, retry, *bug]).category == Category.USER_CODE
    alone = triage([curl, retry, curl])  # nothing else failed: the object store
    assert alone.category == Category.FILESYSTEM_IO and alone.rule == "fs.object_store_client"


def test_an_agent_stopped_by_srun_after_a_task_failed_is_no_preemption() -> None:
    # One torchrun agent a node under srun: task 1 exited on its error, srun stopped the step,
    # and the other node's agent logged the SIGTERM: srun's doing, not the scheduler's.
    error = ["[E socket.cpp:462] [c10d] The server socket has failed to listen on any local "
             "network address.",
             "Traceback (most recent call last):",
             '  File "/env/lib/python3.10/site-packages/torch/distributed/run.py", line 8, in run',
             "torch.distributed.elastic.rendezvous.api.RendezvousClosedError"]  # fmt: skip
    stop = [
        "srun: error: cdr2596: task 1: Exited with exit code 1",
        "srun: Terminating StepId=21941655.1",
        "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting "
        "down workers",
    ]
    assert triage([*error, *stop]).category != Category.PREEMPTION
    # the same signal with nothing of srun's before it: someone stopped the job from outside
    told = triage([*error[1:], stop[2]])
    assert told.category == Category.PREEMPTION and told.rule == "sched.death_signal"
    assert triage([*error[1:], stop[2], *stop[:2]]).category == Category.PREEMPTION


def test_a_traceback_under_docker_compose_s_labels_is_read_as_one(tmp_path: Path) -> None:
    # Geti's tuning container, its lines labelled by Docker Compose: read as one traceback, its
    # frame in the training's own code named and the label left out of the quote
    log = tmp_path / "compose.log"
    log.write_text(
        "geti-tune-1  | Traceback (most recent call last):\n"
        'geti-tune-1  |   File "/app/train.py", line 40, in <module>\n'
        "geti-tune-1  |     main()\n"
        'geti-tune-1  |   File "/venv/lib/python3.13/site-packages/torch/storage.py", line 524, '
        "in _share_fd_cpu_\n"
        "geti-tune-1  |     return super()._share_fd_cpu_(*args, **kwargs)\n"
        "geti-tune-1  | RuntimeError: unable to allocate shared memory(shm) for file "
        "</torch_287_129298167_2>: Success (0)\n"
    )
    d = triage_files([log]).diagnosis
    assert d.category == Category.FILESYSTEM_IO and d.rule == "fs.shm_full"
    assert "train.py:40 in <module>: RuntimeError: unable to allocate" in d.summary
    assert "geti-tune-1" not in d.summary
