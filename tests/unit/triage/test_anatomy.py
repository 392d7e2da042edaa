"""babysit.triage.anatomy: stacked launcher/logger prefixes read and removed from a log line.

Line shapes are taken from tests/corpus/real/*/*.log where the corpus has them.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from babysit.triage.anatomy import Anatomy, anatomy


def utc(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> float:
    return datetime(y, mo, d, h, mi, s, tzinfo=timezone.utc).timestamp()


# -- one prefix form at a time -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "body", "rank", "host", "gpu"),
    [
        # torchrun: global rank, and the role/local-rank label of `--tee` / `--redirects`
        ("[rank3]:[E ProcessGroupNCCL.cpp:523] x", "x", 3, None, None),
        (
            "[default0]:frame #0: c10::Error::Error()",
            "frame #0: c10::Error::Error()",
            0,
            None,
            None,
        ),
        ("[trainer12]:RuntimeError: boom", "RuntimeError: boom", 12, None, None),
        # srun --label
        ("3: RuntimeError: boom", "RuntimeError: boom", 3, None, None),
        ("  12: RuntimeError: boom", "RuntimeError: boom", 12, None, None),
        # mpirun --tag-output
        ("[1,3]<stderr>:RuntimeError: boom", "RuntimeError: boom", 3, None, None),
        ("[1,50]<stdout>:step 4", "step 4", 50, None, None),
        # pdsh / DeepSpeed host label (must hold a digit or a hyphen)
        (
            "compute-dy-p4d24xlarge-77: ncclInternalError: Internal check failed.",
            "ncclInternalError: Internal check failed.",
            None,
            "compute-dy-p4d24xlarge-77",
            None,
        ),
        (
            "gpu-q-13: torch.cuda.OutOfMemoryError: CUDA out of memory.",
            "torch.cuda.OutOfMemoryError: CUDA out of memory.",
            None,
            "gpu-q-13",
            None,
        ),
        ("gpu17: RuntimeError: boom", "RuntimeError: boom", None, "gpu17", None),
        # NCCL's own prefix: host:pid:tid [gpu], with or without file:line
        (
            "hai-a100-3:3778851:3779883 [4] ibvwrap.c:130 NCCL WARN Call to ibv_create_qp failed",
            "NCCL WARN Call to ibv_create_qp failed",
            None,
            "hai-a100-3",
            "4",
        ),
        (
            "hai-a100-3:3778851:3779455 [6] NCCL INFO Using network IBext",
            "NCCL INFO Using network IBext",
            None,
            "hai-a100-3",
            "6",
        ),
        # older PyTorch glog without a date, and a bare pid
        (
            "[W socket.cpp:401] [c10d] The server socket has failed to bind to 0.0.0.0:47531",
            "[c10d] The server socket has failed to bind to 0.0.0.0:47531",
            None,
            None,
            None,
        ),
        ("[80746] RuntimeError: boom", "RuntimeError: boom", None, None, None),
        # dmesg, with and without -T
        (
            "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).",
            "NVRM: The NVIDIA probe routine failed for 1 device(s).",
            None,
            None,
            None,
        ),
        (
            "[Wed Jan 27 23:04:35 2021] NVRM: Xid (PCI:0000:3d:00): 43, pid=35521, Ch 00000008",
            "NVRM: Xid (PCI:0000:3d:00): 43, pid=35521, Ch 00000008",
            None,
            None,
            None,
        ),
        # Ray actors: the ip is the host
        (
            "(RayTrainWorker pid=19799, ip=10.72.0.6) RuntimeError: boom",
            "RuntimeError: boom",
            None,
            "10.72.0.6",
            None,
        ),
        ("(RayTrainWorker pid=19799) RuntimeError: boom", "RuntimeError: boom", None, None, None),
        # a task's label with no name, a name with colons, parentheses or a comma, Ray's daemons
        ("(pid=909597) RuntimeError: boom", "RuntimeError: boom", None, None, None),
        ("(ServeReplica:app:M pid=7) RuntimeError: boom", "RuntimeError: boom", None, None, None),
        (
            "(MapBatches(fn) pid=7, ip=10.0.0.7) RuntimeError: boom",
            "RuntimeError: boom",
            None,
            "10.0.0.7",
            None,
        ),
        ("(llama-qlora, pid=17187) RuntimeError: boom", "RuntimeError: boom", None, None, None),
        ("(raylet, ip=10.0.0.7) [E] boom", "[E] boom", None, "10.0.0.7", None),
        # Docker Compose's label of the container (v2's `name-1`, v1's `name_1`, padded), and a
        # pdsh host label after it (a DeepSpeed worker in compose); an empty line it labels
        ('geti-tune-1  |   File "/app/train.py", line 8, in main',
         '  File "/app/train.py", line 8, in main', None, None, None),
        ("rasa_1      | MemoryError", "MemoryError", None, None, None),
        ("deepspeed-worker-2-1  | worker-0: [E socket.cpp:462] [c10d] The server socket has failed",
         "[c10d] The server socket has failed", None, "worker-0", None),
        ("algo-1-rqpqu_1  | ", "", None, None, None),
        # not a compose label: a step line's columns
        ("Epoch 1 | loss 2.31", "Epoch 1 | loss 2.31", None, None, None),
        # `[Rank 3]` in the body (c10d)
        (
            "[Rank 3] Watchdog caught collective operation timeout",
            "Watchdog caught collective operation timeout",
            3,
            None,
            None,
        ),
    ],
)
def test_single_prefix(
    line: str, body: str, rank: int | None, host: str | None, gpu: str | None
) -> None:
    a = anatomy(line)
    assert (a.body, a.rank, a.host, a.gpu) == (body, rank, host, gpu)


@pytest.mark.parametrize(
    ("line", "body", "ts", "kind"),
    [
        ("[2024-01-02 03:04:05,123] RuntimeError: x", "RuntimeError: x", 1704164645.123, "iso"),
        ("2024-01-02T03:04:05.123Z error here", "error here", 1704164645.123, "iso"),
        # Slurm's own log lines
        (
            "[2024-01-02T03:04:05.123] error: step failed",
            "error: step failed",
            1704164645.123,
            "iso",
        ),
        # Python logging formats
        ("2023-08-08 19:37:41,112 - INFO - x", "INFO - x", 1691523461.112, "iso"),
        ("2023-08-08 19:37:41 | INFO | x", "INFO | x", 1691523461.0, "iso"),
        (
            "[2023-08-08 19:37:41,112] [INFO] [logging.py:96:log_dist] step=35",
            "[INFO] [logging.py:96:log_dist] step=35",
            1691523461.112,
            "iso",
        ),
        # an ISO time in double quotes, as a cluster's log export prints it (icefall's run)
        (
            '"2023-08-09T09:46:00+08:00" malloc(): invalid size (unsorted)',
            "malloc(): invalid size (unsorted)",
            utc(2023, 8, 9, 1, 46, 0),
            "iso",
        ),
        # the kubelet's container log files (CRI): the stream and the whole-or-part tag after it
        (
            "2024-05-01T12:00:00.5Z stderr F RuntimeError: CUDA error: an illegal memory access",
            "RuntimeError: CUDA error: an illegal memory access",
            utc(2024, 5, 1, 12, 0, 0) + 0.5,
            "iso",
        ),
        # ctime (mpirun --timestamp-output) is absolute too
        ("Fri Aug 11 12:31:45 2023 error here", "error here", utc(2023, 8, 11, 12, 31, 45), "iso"),
    ],
)
def test_absolute_timestamps(line: str, body: str, ts: float, kind: str) -> None:
    a = anatomy(line)
    assert a.body == body
    assert a.ts_kind == kind
    assert a.ts == pytest.approx(ts, abs=1e-6)


def test_iso_timestamp_is_utc_epoch_seconds() -> None:
    a = anatomy("2024-01-02T03:04:05.5Z x")
    assert a.ts == pytest.approx(utc(2024, 1, 2, 3, 4, 5) + 0.5)


def test_impossible_iso_date_gives_no_timestamp() -> None:
    a = anatomy("2024-13-40 03:04:05 x")
    assert a.ts is None
    assert a.body == "x"  # the prefix is still removed


def test_glog_prefix() -> None:
    a = anatomy("E1206 18:44:12.715298 123 ProcessGroupNCCL.cpp:607] Something failed")
    assert a.body == "Something failed"
    assert a.ts_kind == "glog"
    assert a.ts is not None


def test_vllm_s_logger_prefix_is_removed_from_every_line_it_logs() -> None:
    a = anatomy(
        "(LLMRayActor pid=226425) ERROR 06-10 10:55:03 [core.py:459]   File \"/v/cumem.py\", "
        "line 77, in create_and_map"
    )
    assert a.body == '  File "/v/cumem.py", line 77, in create_and_map'  # a frame, indented
    assert a.ts_kind == "glog" and a.ts is not None and not a.warning
    old = anatomy("WARNING 02-18 17:39:47 llm_engine.py:72] Possibly too large swap space.")
    assert old.body == "Possibly too large swap space." and old.warning
    assert anatomy("INFO 13-01 10:00:00 [x.py:1] y").body == "INFO 13-01 10:00:00 [x.py:1] y"
    assert anatomy("ERROR 06-10 in the evaluation").body == "ERROR 06-10 in the evaluation"


def test_glog_since_0_6_puts_the_year_first() -> None:
    a = anatomy("F20220801 07:29:34.701110  2256 fs_coordinator.cc:42] Invalid tracker path: x/")
    b = anatomy("F0801 07:29:35.701110  2256 fs_coordinator.cc:42] Invalid tracker path: x/")
    assert a.body == b.body == "Invalid tracker path: x/"
    assert a.ts_kind == "glog" and a.ts is not None and b.ts is not None
    assert b.ts - a.ts == pytest.approx(1.0)
    line = "F202208011 07:29:34.701110 1 a.cc:1] x"  # nine digits: neither form
    assert anatomy(line).body == line


def test_glog_with_impossible_month_is_no_prefix() -> None:
    line = "E1306 18:44:12.715298 123 file.cpp:45] x"
    a = anatomy(line)
    assert a.ts is None
    assert a.body == line


def test_syslog_prefix_names_the_host() -> None:
    a = anatomy(
        "Jan  2 03:04:05 gpu-17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."
    )
    assert a.body == "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."
    assert a.host == "gpu-17"
    assert a.ts_kind == "syslog"
    b = anatomy("Jan 12 03:04:07 node-3 python[1234]: Killed")
    assert (b.body, b.host, b.ts_kind) == ("Killed", "node-3", "syslog")


# -- timestamps comparable within a kind ---------------------------------------------------------


def test_glog_timestamps_are_comparable() -> None:
    a = anatomy("[rank0]:[E1206 18:44:12.500000 1 ProcessGroupNCCL.cpp:607] x")
    b = anatomy("[rank1]:[E1206 18:44:14.250000 1 ProcessGroupNCCL.cpp:607] x")
    c = anatomy("[rank1]:[E1207 00:00:00.000000 1 ProcessGroupNCCL.cpp:607] x")
    d = anatomy("I0101 00:00:00.000000 1 a.cc:1] x")
    assert a.ts is not None and b.ts is not None and c.ts is not None and d.ts is not None
    assert b.ts - a.ts == pytest.approx(1.75)
    assert c.ts - b.ts == pytest.approx(5 * 3600 + 15 * 60 + 45.75)
    assert d.ts < a.ts


def test_syslog_timestamps_are_comparable() -> None:
    a = anatomy("Jan  2 03:04:05 gpu-17 kernel: x")
    b = anatomy("Jan  2 03:04:07 gpu-17 kernel: x")
    c = anatomy("Feb  1 00:00:00 gpu-17 kernel: x")
    assert a.ts is not None and b.ts is not None and c.ts is not None
    assert b.ts - a.ts == pytest.approx(2.0)
    assert a.ts < b.ts < c.ts


def test_iso_and_ctime_timestamps_are_comparable() -> None:
    iso = anatomy("[2023-08-11 12:31:44,500] x")
    ctime = anatomy("Fri Aug 11 12:31:45 2023 x")
    assert iso.ts_kind == ctime.ts_kind == "iso"
    assert iso.ts is not None and ctime.ts is not None
    assert ctime.ts - iso.ts == pytest.approx(0.5)


def test_iso_timestamp_offset_is_applied() -> None:
    assert anatomy("2024-01-02T05:04:05+02:00 x").ts == anatomy("2024-01-02T03:04:05Z x").ts


@pytest.mark.parametrize(
    "line",
    [
        # tests/corpus/real/comms/002-basicsr-watchdog-allreduce.log
        "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
        "collective operation timeout",
        # tests/corpus/real/comms/028-ms-swift-socket-waitforinput-timeout.log
        "[W228 18:45:15.741177013 socket.cpp:487] [c10d] waitForInput: socket timed out",
    ],
)
def test_c10_unpadded_month(line: str) -> None:
    a = anatomy(line)
    assert a.ts_kind == "glog"
    assert not a.body.startswith(("[E", "[W"))


def test_c10_december_line_is_read() -> None:
    # What works today: a December line keeps its 4 digits and is read.
    a = anatomy("[rank4]:[E1206 18:44:12.755468433 ProcessGroupNCCL.cpp:616] [Rank 4] Watchdog")
    assert (a.body, a.rank, a.ts_kind) == ("Watchdog", 4, "glog")


# -- stacked prefixes ----------------------------------------------------------------------------


def test_stacked_torchrun_glog_rank() -> None:
    a = anatomy(
        "[rank3]:[E1206 18:44:12.715298 123 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught "
        "collective operation timeout"
    )
    assert a == Anatomy(
        "Watchdog caught collective operation timeout",
        rank=3,
        ts=a.ts,
        ts_kind="glog",
    )
    assert a.ts is not None


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # srun --label over torchrun over c10 glog (sched_misc/012 shape)
        (
            "  0: [rank0]:[E1206 18:44:12.755468433 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog",
            ("Watchdog", 0, None, None, "glog"),
        ),
        # ctime over mpirun over NCCL (comms/016 shape)
        (
            "Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 "
            "NCCL WARN Cuda failure 'invalid argument'",
            ("NCCL WARN Cuda failure 'invalid argument'", 0, "tomte401", "0", "iso"),
        ),
        # ISO over NCCL (comms/016)
        (
            "[2025-04-08 08:39:46] devgpu263:589012:591652 [0] transport/nvls.cc:254 NCCL WARN "
            "Cuda failure 1 'invalid argument'",
            ("NCCL WARN Cuda failure 1 'invalid argument'", None, "devgpu263", "0", "iso"),
        ),
        # Ray over short glog over `[Rank N]` (comms2 shape)
        (
            "(RayTrainWorker pid=22754, ip=10.72.12.6) [E ProcessGroupNCCL.cpp:821] [Rank 21] "
            "Watchdog caught collective operation timeout",
            ("Watchdog caught collective operation timeout", 21, "10.72.12.6", None, None),
        ),
        # Ray over NCCL: the NCCL host wins over the ip
        (
            "(RayTrainWorker pid=19799, ip=10.72.0.6) worker-l4-8-xc6s4:19799:38219 [3] NCCL "
            "INFO AllReduce: opCount 13a0",
            ("NCCL INFO AllReduce: opCount 13a0", None, "worker-l4-8-xc6s4", "3", None),
        ),
        # mpirun over torchrun
        ("[1,3]<stderr>:[rank3]:[E ProcessGroupNCCL.cpp:1] x", ("x", 3, None, None, None)),
        # pdsh host over ISO logging
        (
            "worker-1: [2024-01-02 03:04:05,123] RuntimeError: x",
            ("RuntimeError: x", None, "worker-1", None, "iso"),
        ),
    ],
)
def test_stacked_prefixes(
    line: str, expected: tuple[str, int | None, str | None, str | None, str | None]
) -> None:
    a = anatomy(line)
    assert (a.body, a.rank, a.host, a.gpu, a.ts_kind) == expected


def test_global_rank_wins_over_local_rank() -> None:
    assert anatomy("[default3]:[rank7]:RuntimeError: boom").rank == 7
    assert anatomy("[rank7]:[default3]:RuntimeError: boom").rank == 7
    # tests/corpus/real/sched_misc: torchrun --tee over c10's own rank label
    a = anatomy("[default0]:[rank12]:[E1206 17:40:34.227531 ProcessGroupNCCL.cpp:1] [Rank 12] x")
    assert (a.body, a.rank) == ("x", 12)


def test_srun_label_is_a_rank_only_when_no_rank_is_known() -> None:
    assert anatomy("100: loss 3.2").rank == 100
    assert anatomy("100: loss 3.2").body == "loss 3.2"
    # A label after a torchrun prefix is stripped (launchers stack), the rank stays torchrun's.
    a = anatomy("[rank1]: 2: [rank2]: AssertionError: x")
    assert (a.rank, a.body) == (2, "AssertionError: x")
    a = anatomy("[rank1]:100: loss 3.2")
    assert (a.rank, a.body) == (1, "loss 3.2")


def test_srun_label_over_torchrun_rank() -> None:
    a = anatomy("15: [rank15]: AssertionError: num_layers should be divisible")
    assert a.rank == 15
    assert a.body.strip() == "AssertionError: num_layers should be divisible"


@pytest.mark.parametrize(
    ("line", "body"),
    [
        (
            "[rank3]: torch.OutOfMemoryError: CUDA out of memory.",
            "torch.OutOfMemoryError: CUDA out of memory.",
        ),
        (
            ' 2: [rank2]:   File "/usr/local/lib/python3.10/x.py", line 1',
            '  File "/usr/local/lib/python3.10/x.py", line 1',
        ),
    ],
)
def test_torchrun_python_prefix_space(line: str, body: str) -> None:
    assert anatomy(line).body == body


def test_a_pastes_indentation_before_a_launchers_label_is_no_part_of_the_line() -> None:
    # a log quoted in an issue as an indented block: the label is still torchrun's or mpirun's
    a = anatomy('\t[rank1]:   File "/opt/ds/partition.py", line 284, in free_param')
    assert (a.body, a.rank) == ('  File "/opt/ds/partition.py", line 284, in free_param', 1)
    assert anatomy("  [1,3]<stderr>:RuntimeError: y").rank == 3
    # not a bracket in a frame's code, nor a label after other words
    assert anatomy("        x = a[rank1]").body == "        x = a[rank1]"
    assert anatomy("    foo [rank1]: x").rank is None


# -- lines that are no prefix --------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: boom",
        "ValueError: invalid literal for int() with base 10: 'x'",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "NCCL WARN Net : Call failed",
        "slurmstepd: error: *** STEP 55595933.0 ON maestro-3017 CANCELLED AT 2025-01-10T15:27:25",
        "srun: error: nid001: task 3: Exited with exit code 137",
        "Traceback (most recent call last):",
        '  File "train.py", line 3, in <module>',
        "  exitcode  : -9 (pid: 178)",
        "[Epoch: 1/200, Batch: 20/327] loss: nan, dsc: 0.2118112862110138",
        "Epoch 10: 100%|##########| 50/50 [00:01<00:00]",
        "",
    ],
)
def test_not_a_prefix(line: str) -> None:
    a = anatomy(line)
    assert a == Anatomy(line)


@pytest.mark.parametrize(
    "line",
    [
        "boto3.exceptions.S3UploadFailedError: Failed to upload /ckpt/a.pt to b/a.pt",
        "mpi4py.MPI.Exception: MPI_ERR_TRUNCATE: message truncated",
        "EZ9999: Inner Error!",  # Ascend CANN's error codes
        "EI0002: The wait execution of the Notify register times out.",
        "E19999: Inner Error!",
        # a program naming itself before its message
        "python3: can't open file '/work/train.py': [Errno 2] No such file or directory",
        "python3.10: No module named torch.distributed.run",
        "nvidia-smi: command not found",
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8",
        "ssh-keygen: generating new host keys: RSA",
        "collect2: error: ld returned 1 exit status",
    ],
)
def test_a_label_shaped_like_a_host_that_is_none(line: str) -> None:
    # an exception class or error code with a digit in it, a program's own name
    a = anatomy(line)
    assert (a.host, a.body) == (None, line)


@pytest.mark.parametrize(
    "host", ["nvidia-dgx-01", "ssh-gw-01", "docker-host-3", "python-node-1", "dgx-a100-cli"]
)
def test_a_host_named_like_a_program_family_is_still_a_host(host: str) -> None:
    assert anatomy(f"{host}: RuntimeError: CUDA error").host == host


def test_an_uppercase_host_label_shaped_like_a_code_is_still_a_host() -> None:
    # Only Ascend's error codes (EZ9999, EI0002, E19999) are kept out of the host labels.
    a = anatomy("EN0001: [rank3]: torch.OutOfMemoryError: CUDA out of memory.")
    assert (a.host, a.rank) == ("EN0001", 3)


def test_a_host_named_by_its_address() -> None:
    # DeepSpeed's pdsh labels each line with the host file's name for the node: an address
    # where the file lists addresses; NCCL's prefix names it the same way.
    a = anatomy("29.162.224.92: [rank30]: torch.utils.checkpoint.CheckpointError: x")
    assert (a.host, a.rank) == ("29.162.224.92", 30)
    assert a.body == "torch.utils.checkpoint.CheckpointError: x"
    a = anatomy("10.0.0.12:2917:3012 [5] NCCL INFO Bootstrap : Using eth0:10.0.0.12<0>")
    assert (a.host, a.gpu, a.body[:10]) == ("10.0.0.12", "5", "NCCL INFO ")
    for line in ("1.2.3: not an address", "3.14: RuntimeError: x", "2024.1.2.3.4: x"):
        assert anatomy(line).host is None


def test_second_host_label_stays_in_body() -> None:
    # A second host-looking label after the first is part of the message.
    a = anatomy("worker-1: node-2: x")
    assert (a.host, a.body) == ("worker-1", "node-2: x")


def test_at_most_six_prefixes_are_read() -> None:
    line = "[rank1]:" * 7 + "x"
    a = anatomy(line)
    assert a.rank == 1
    assert a.body == "[rank1]:x"


# -- ANSI colour codes ---------------------------------------------------------------------------


def test_ansi_codes_are_removed() -> None:
    a = anatomy("\x1b[1m[rank3]:\x1b[0m\x1b[31mRuntimeError\x1b[0m: boom")
    assert (a.body, a.rank) == ("RuntimeError: boom", 3)


def test_ansi_codes_removed_before_timestamps() -> None:
    a = anatomy("\x1b[32m2024-01-02 03:04:05,123\x1b[0m - \x1b[1;31mERROR\x1b[0m - x")
    assert a.ts == pytest.approx(1704164645.123)
    assert a.body == "ERROR - x"


def test_anatomy_is_frozen() -> None:
    a = anatomy("x")
    with pytest.raises(AttributeError):
        a.body = "y"  # type: ignore[misc]


# -- who printed it: the kernel or a process -----------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "Jan  2 03:04:05 gpu-17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off.",
        "[ 1843.439662] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.",
        "[Wed Jan 27 23:04:35 2021] NVRM: Xid (PCI:0000:3d:00): 43, pid=35521, Ch 00000008",
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=12345, GPU has fallen off the bus.",
        "Jan  2 03:04:05 node-3 kernel: Out of memory: Killed process 4242 (python)",
        "2024-01-02T03:04:05.123456+00:00 gpu-17 kernel: NVRM: Xid (PCI:0000:3b:00): 79",
    ],
)
def test_kernel_lines_are_known_as_such(line: str) -> None:
    assert anatomy(line).kernel


@pytest.mark.parametrize(
    "line",
    [
        "[rank3]: RuntimeError: CUDA error: unspecified launch failure",
        "Jan  2 03:04:05 node-3 slurmstepd[811]: error: *** JOB 42 CANCELLED ***",
        "[E112 03:04:07.123456 ProcessGroupNCCL.cpp:1316] [PG 0 Rank 3] CUDA error",
        "RuntimeError: the kernel: failed",
    ],
)
def test_process_lines_are_not_kernel_lines(line: str) -> None:
    assert not anatomy(line).kernel


@pytest.mark.parametrize(
    ("line", "rank"),
    [
        ("[PG 0 Rank 3] Watchdog caught collective operation timeout", 3),
        (
            "[PG ID 0 PG GUID 0(default_pg) Rank 12] Watchdog caught collective operation timeout",
            12,
        ),
        ("[E1206 18:44:12.715298 ProcessGroupNCCL.cpp:607] [PG ID 1 PG GUID 1 Rank 5] Watchdog", 5),
    ],
)
def test_c10d_process_group_rank_labels(line: str, rank: int) -> None:
    a = anatomy(line)
    assert (a.rank, a.body.startswith("Watchdog")) == (rank, True)


def test_ray_s_cpp_log_prefix_is_read_and_its_warnings_marked() -> None:
    a = anatomy(
        "[2025-07-23 10:05:49,679 W 51000 51000] gcs_rpc_client.h:151: Failed to connect to GCS"
    )
    assert a.body.startswith("gcs_rpc_client.h:151") and a.warning
    e = anatomy("[2025-07-23 10:05:49,679 E 51000 51000] gcs_client.cc:183: Failed")
    assert e.body.startswith("gcs_client.cc") and not e.warning
    assert anatomy("2024-01-01 10:00:00 E 5 stays").body == "E 5 stays"


def test_determined_s_trial_log_prefix_is_read_and_the_line_keeps_its_indentation() -> None:
    # the container's short id, the rank where the trial runs several, `|| `, then the line
    a = anatomy('[2024-02-27T21:35:28.893536Z] fa88a9df [rank=4] ||   File "train.py", line 3')
    assert (a.body, a.rank) == ('  File "train.py", line 3', 4) and a.ts is not None
    b = anatomy('[2021-04-27T01:17:09Z] 18c36ccc ||     raise ValueError("no rendezvous")')
    assert (b.body, b.rank) == ('    raise ValueError("no rendezvous")', None)
    assert anatomy("[2021-04-27T01:17:09Z] 18c36ccc || [rank3]: RuntimeError: x").rank == 3
    # not without the timestamp before it, nor a word of eight letters
    assert anatomy("deadbeef || x").body == "deadbeef || x"
    assert anatomy("[2021-04-27T01:17:09Z] deadbeef is a word").body == "deadbeef is a word"


def test_a_consoles_table_of_log_events_is_read_for_its_time() -> None:
    # CloudWatch's console copied as a table (SageMaker's logs): its time column is the line's
    a = anatomy("  | 2024-11-28T07:42:14.532Z | algo-1:17773:17846 [0] NCCL INFO Connected all")
    assert a.body == "NCCL INFO Connected all" and a.host == "algo-1" and a.ts is not None
    b = anatomy("| 2024-08-23T22:22:50.870Z | [rank6]:[E ProcessGroupNCCL.cpp:563] [Rank 6] x")
    assert (b.body, b.rank) == ("x", 6) and b.ts is not None and b.ts > a.ts - 10**8
    # a markdown table's row is no such thing; the console's closing column is not the line's
    assert anatomy("| step | loss |").body == "| step | loss |"
    assert anatomy("| 2024-11-28T07:42:14.532Z | Killed |").body == "Killed"


@pytest.mark.parametrize(
    ("line", "body", "rank"),
    [
        # a log pasted into an issue keeps markdown's marks: a quote's `> `, code's backticks
        ("`Killed`", "Killed", None),
        ("> Killed", "Killed", None),
        ("```[rank3]: RuntimeError: CUDA error: out of memory", "RuntimeError: CUDA error: out of "
         "memory", 3),
        ("> [rank0]:[E1206 18:44:12.715298 ProcessGroupNCCL.cpp:607] Watchdog caught collective "
         "operation timeout", "Watchdog caught collective operation timeout", 0),
        # a fence closed on the pasted log's last line
        ("AssertionError```", "AssertionError", None),
        ("[rank1]: KeyError: 'labels' ```", "KeyError: 'labels'", 1),
        # backticks inside a line are its own
        ("KeyError: `label`", "KeyError: `label`", None),
        ("a `b` c", "a `b` c", None),
        # markdown's bold around a whole line, not glog's stars nor bold inside a line
        ("**Killed**", "Killed", None),
        ("   **Killed**", "Killed", None),
        ("> **IndexError: list index out of range**", "IndexError: list index out of range", None),
        ("*** Check failure stack trace: ***", "*** Check failure stack trace: ***", None),
        ("**a** b", "**a** b", None),
        ("** not bold **", "** not bold **", None),
    ],
)  # fmt: skip
def test_markdown_marks_around_a_pasted_line_are_no_part_of_it(
    line: str, body: str, rank: int | None
) -> None:
    a = anatomy(line)
    assert a.body == body and a.rank == rank


@pytest.mark.parametrize(
    "line",
    [
        # absl's fatal check after its glog header (XLA, TensorFlow, JAX)
        "F0228 15:59:16.766740  124342 stream_executor_util.cc:515] Non-OK-status: "
        "kernel->Launch(...) status: INTERNAL: Failed to launch CUDA kernel",
        "[E ProcessGroupNCCL.cpp:523] Watchdog-thread: timed out",
        "ERROR 06-10 10:55:03 [core.py:459] Fatal-error: EngineCore died",
        "[2025-07-23 10:05:49,679 E 5100 5100] core-worker: lost its raylet",
    ],
)
def test_no_host_label_after_a_logger_s_own_header(line: str) -> None:
    # A logger's header starts its message; a hyphenated word there is no pdsh host label.
    a = anatomy(line)
    assert a.host is None
    assert a.body.split(":")[0] in line


def test_a_host_label_before_a_glog_header_is_still_read() -> None:
    a = anatomy("worker-1: E0423 10:11:12.123456 1 x.cc:1] Non-OK-status: y")
    assert (a.host, a.body) == ("worker-1", "Non-OK-status: y")
