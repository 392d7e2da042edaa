"""triage/logged.py: a line logged at an error level, read by itself."""

from __future__ import annotations

import pytest

from babysit.triage.logged import error_record, went_on


@pytest.mark.parametrize(
    "line",
    [
        "ERROR: Fused kernels configured but not installed",
        "2026-03-02 10:01:02,003 - trainer - ERROR - the config names 3 classes, the head has 5",
        "[HCTR][07:19:46.966][ERROR][RK0][tid #1]: Runtime error: failed to read a file",
        "E0409 15:55:07.713434 1402 error_handling.py:70] Error recorded from training_loop: x",
        "F0317 02:46:21.118406 358837 registration.cc:10] Check failed: Register(kHw) is OK",
        # glog since 0.6, the year first
        "F20220801 07:29:34.701110  2256 fs_coordinator.cc:42] Invalid tracker path: root://gl/",
        # c10's (torch's and Caffe2's C++): the level and the source in brackets
        "[E net_dag.cc:188] Exception from operator chain starting at '' (type 'Conv')",
        "[F init.cpp:82] Could not open the plan file /plans/a.bin",
        # k2's (icefall's C++): the level alone in brackets, then the source and the function
        "[F] /k2/k2/csrc/host_shim.cu:31:k2host::Fsa k2::FsaVecToHostFsa(k2::FsaVec&, int32_t) "
        "Check failed: fsa_vec.Context()->GetDeviceType() == kCpu (kCuda vs. kCpu) ",
        # TensorFlow's C++ (XLA's, TPU runtime's): the date first, then the level
        "2023-09-19 02:13:08.192277: F tensorflow/tsl/platform/statusor.cc:33] Attempting to "
        "fetch value instead of handling error UNKNOWN: TPU initialization failed",
        # R's, naming the call that failed (keras for R through reticulate)
        "Error in py_call_impl(callable, dots$args, dots$keywords) : ValueError: bad shape",
        # and its message on the next line when the call is long (MXNet's R package)
        "Error in mx.nd.internal.empty.array(shape, ctx) : ",
        "Error in mxnet::mx.mlp(data = x, label = y, out_node = length(unique(y)),  : ",
        "Error running job: .to() does not accept copy argument",
        "\x1b(B\x1b[m\x1b[31mERROR\x1b[0m could not open /data/shard-0001.bin",
        "ERROR: Loading checkpoint /ckpt/model.pt failed",  # short, but it names what
        # the same as a launcher labels a rank's line: torchrun, Open MPI, srun
        "[rank49]:ERROR:tensorflow:Error recorded from infeed: From /job:worker/replica:0/task:0:",
        "[1,3]<stderr>:ERROR: could not open /data/shard-0001.bin",
        "  3: ERROR: could not open /data/shard-0001.bin",
        # and as Ray labels what an actor printed
        "(RolloutWorker pid=8848) Error: File 'nets/4x4.net.xml' is not accessible (No such file "
        "or directory).",
        "(TaskRunner pid=7, ip=10.0.0.7) ERROR: could not open /data/shard-0001.bin",
        "(pid=8848) Error: File 'nets/4x4.net.xml' is not accessible",
        "(ServeReplica:app:Model pid=7) ERROR: could not open /data/shard-0001.bin",
        "(MapBatches(fn) pid=7, ip=10.0.0.7) Error: File 'x.parquet' is not accessible",
    ],
)
def test_an_error_a_logger_wrote_is_one(line: str) -> None:
    assert error_record(line)


@pytest.mark.parametrize(
    "line",
    [
        "Namespace(batch_size=8, log_level='ERROR')",  # a setting
        "WARNING: ERROR handling is deprecated",  # a warning that mentions one
        "Validation error: 0.12",  # a metric
        "ERROR       | 0.0123 | 0.0456 | best",  # a table
        "E0000 00:00:1721223344.123456 12345 meta_optimizer.cc:966] layout failed",  # absl
        "[ERROR] Something bad happened; we will retry",  # it goes on
        "2025-11-11 21:05:55,828 - distributed.worker - ERROR - Compute Failed",  # a report
        "[ERROR] TBE Subprocess[task_distribute] raise error[], main process disappeared!",
        "ERROR launch.py:584] rank=[2] was aborted. Please check its log.",  # points elsewhere
        "[ERROR] [actor_train-1 1 / 8][PID 18175] ",  # a header: its message follows
        "the run had no error",
        "Error in the third epoch's metrics, see the dashboard",  # prose, no call
        "Error in : ",  # no call named
        "Error in epoch 3 : ",  # words, not a call: R puts a long call's message on the next line
        "[W socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500",  # warning
        "[I debug.cpp:49] [c10d] The debug level is set to DETAIL.",  # information
        # TensorFlow's E lines at start-up: chatter, not the run's failure
        "2024-03-01 10:00:00.123456: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:"
        "9261] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN",
        "[rank2]:wandb: ERROR Error while calling W&B API: context deadline exceeded",  # labelled
    ],
)
def test_what_is_no_error_of_the_run_is_not(line: str) -> None:
    assert not error_record(line)


def test_a_line_says_whether_the_program_went_on_after_it() -> None:
    assert went_on("[rank2]:wandb: ERROR Error while calling W&B API: context deadline exceeded")
    assert went_on("ValueError: bad sample 7, will retry")
    assert went_on("WARNING: skipping shard 3 after IOError: [Errno 5] Input/output error")
    assert not went_on("[rank2]:TRAINER: NameError: name 'dbg' is not defined")
