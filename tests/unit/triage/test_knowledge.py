"""babysit.triage.knowledge: the shipped rules and Xid catalogue, team rules files, matching."""

from __future__ import annotations

import random
import re
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from babysit.errors import RulesError
from babysit.records import SUSPECT_KINDS, Category
from babysit.triage.anatomy import anatomy
from babysit.triage.knowledge import (
    PRECEDENCE,
    ROLES,
    Knowledge,
    Rule,
    load_knowledge,
    parse_rules,
)
from babysit.triage.patterns import required_literals
from babysit.triage.scan import NEEDLES, RARE_NEEDLES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "real"
SHIPPED_RULES = "babysit/triage/kb/rules.toml"


@pytest.fixture(scope="module")
def kb() -> Knowledge:
    return load_knowledge()


def shipped_doc(name: str) -> dict[str, Any]:
    text = (resources.files("babysit.triage") / "kb" / name).read_text("utf-8")
    doc: dict[str, Any] = tomllib.loads(text)
    return doc


def rule_toml(rid: str = "team.x", **keys: str) -> str:
    """One [[rule]] table; `keys` override or (with value "") drop the defaults."""
    entry = {
        "id": f'"{rid}"',
        "category": '"network"',
        "patterns": "['ib0: link down on leaf-7']",
        "explain": '"The switch flaps."',
        "action": '"Call the network team."',
    }
    entry.update(keys)
    body = "".join(f"{k} = {v}\n" for k, v in entry.items() if v != "")
    return "[[rule]]\n" + body


# -- the shipped knowledge -----------------------------------------------------------------------


def test_shipped_knowledge_loads(kb: Knowledge) -> None:
    assert len(kb.rules) >= 50
    assert len(kb.xid) >= 100
    assert {r.origin for r in kb.rules} == {SHIPPED_RULES}


def test_every_shipped_xid_is_valid(kb: Knowledge) -> None:
    for code, x in kb.xid.items():
        assert x.code == code
        assert isinstance(code, int) and not isinstance(code, bool) and code >= 0
        assert isinstance(x.category, Category)
        assert x.role in ROLES
        assert x.transient in (True, False, None)
        assert x.suspect in SUSPECT_KINDS
        for text in (x.name, x.explain, x.action):
            assert text.strip() == text and text, code


def test_shipped_xid_codes_are_unique() -> None:
    codes = [e["code"] for e in shipped_doc("xid.toml")["xid"]]
    assert len(codes) >= 100
    assert len(codes) == len(set(codes)), sorted(c for c in codes if codes.count(c) > 1)


def test_well_known_xids_are_catalogued(kb: Knowledge) -> None:
    for code in (13, 31, 43, 45, 48, 63, 64, 74, 79, 92, 94, 95, 119):
        assert code in kb.xid, code
    assert kb.xid[79].category is Category.GPU_HARDWARE
    assert kb.xid[48].category is Category.GPU_HARDWARE


def test_shipped_rule_ids_are_unique() -> None:
    ids = [e["id"] for e in shipped_doc("rules.toml")["rule"]]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_shipped_roles(kb: Knowledge) -> None:
    roles = {r.role for r in kb.rules}
    assert roles == set(ROLES) == {"cause", "consequence", "noise"}
    for r in kb.rules:
        if r.role == "noise":
            assert r.category is Category.UNKNOWN, r.id


@pytest.mark.parametrize("category", [Category.USER_CODE, Category.DATA, Category.CUDA_OOM])
def test_no_restart_cures_code_data_or_cuda_oom(kb: Knowledge, category: Category) -> None:
    rules = [r for r in kb.rules if r.category is category]
    assert rules
    for r in rules:
        assert r.transient is False, r.id


def test_shipped_rules_are_complete(kb: Knowledge) -> None:
    for r in kb.rules:
        assert r.patterns and r.explain and r.action, r.id
        assert 0 <= r.confidence <= 1, r.id
        assert r.suspect in SUSPECT_KINDS, r.id


# -- representative real messages: the rule they hit, and the prefilter hands them over ---------

# (rule id, the line as logged, the corpus file it is quoted from; None: quoted from the
# upstream source or a public issue thread because the corpus has no such line yet)
MESSAGES: list[tuple[str, str, str | None]] = [
    (
        "cuda.oom_bfc_map",
        "2018-05-16 14:46:52.011159: W tensorflow/core/common_runtime/bfc_allocator.cc:279] "
        "*************************************************************************************"
        "************___",
        "zz_nvex/018-mlperf-translation-transformer-gpu-oom.log",
    ),
    (
        "cuda.matlab_gpuarray",
        "An unexpected error occurred trying to launch a kernel. The CUDA error was:",
        "zzzzzg_brainrepos/008-kilosort2-gpuarray-subsref-invalid-argument.log",
    ),
    (
        "host.pinned_alloc",
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=296 "
        "error=2 : out of memory",
        "zzzw_semirepos/007-pmm-wsss-coco-host-alloc-oom-segfault.log",
    ),
    (
        "host.matlab_oom",
        "Out of memory. Type HELP MEMORY for your options.",
        "zzzzzg_brainrepos/003-kilosort2-host-out-of-memory-trackandsort.log",
    ),
    (
        "host.luajit_heap",
        "/home/jaydn/torch/install/bin/luajit: /home/jaydn/torch/install/share/lua/5.1/threads/"
        "threads.lua:183: [thread 4 callback] not enough memory",
        "zzzzy_torch7repos/001-waifu2x-train-luajit-not-enough-memory.log",
    ),
    (
        "host.matlab_array",
        "Requested 844x3812727 (24.0GB) array exceeds maximum array size preference. Creation of "
        "arrays greater than this limit may",
        "zzzzw_matlabrepos/006-deepsqueak-rpn-train-array-exceeds-memory.log",
    ),
    (
        "code.cpp_logic_error",
        "terminate called after throwing an instance of 'std::invalid_argument'",
        "zzzzx_tinyfwrepos/002-flashlight-mnist-no-tensor-extensions.log",
    ),
    (
        "data.ctc_labels",
        "E Not enough time for target transition sequence (required: 77, available: 76)0You can "
        "turn this error into a warning by using the flag ignore_longer_outputs_than_inputs"
        + " " * 34,  # (its padding)
        "zzzzw_tf1erarepos/003-deepspeech-ctc-not-enough-time.log",
    ),
    (
        "fs.links_unsupported",
        "OSError: [Errno 95] Operation not supported: 'epoch_1.pth' -> '/content/gdrive/My Drive/"
        "Developer/Project_1/checkpoints/resnet_retina/epoch_1.pth'",
        "zzzzx_databricksrepos/002-mmdetection-colab-gdrive-symlink.log",
    ),
    (
        "code.mpi_args",
        "Fatal error in PMPI_Irecv: Invalid count, error stack:",
        "zzzzzh_distgnnrepos/007-parmetis-pm-dglpart-mpi-negative-count.log",
    ),
    (
        "cuda.dynet_pool",
        "dynet is out of memory, try increasing with --dynet-mem (current capacity: 1746927616)",
        "zzzzzh_cntkrepos/004-dynet-nmt-gpu-out-of-memory.log",
    ),
    (
        "code.darknet_file",
        "Couldn't open file: backup#directorytostoreweights/yolov4-obj_final.weights",
        "zr_nonpy/027-darknet-obj-data-inline-comment-backup-path.log",
    ),
    (
        "code.marian_abort",
        "[2019-10-22 17:37:57] Error: Aborted from marian::Expr marian::Logits::applyLossFunction("
        "const Words&, const std::function<std::shared_ptr<marian::Chainable<std::shared_ptr<"
        "marian::TensorBase> > >(std::shared_ptr<marian::Chainable<std::shared_ptr<marian::"
        "TensorBase> > >, std::shared_ptr<marian::Chainable<std::shared_ptr<marian::TensorBase> > "
        ">)>&) const in /users/tiedeman/projappl/marian-dev/src/layers/generic.cpp:26",
        "zx_mt/009-marian-dev-workspace-over-26000-labels-logits-shape-abort.log",
    ),
    (
        "code.matlab_error",
        "Error using cnn_train (line 157)",
        "zzzzw_matlabrepos/007-matconvnet-multigpu-worker-index-exceeds.log",
    ),
    (
        "code.pickle",
        "AttributeError: Can't pickle local object 'Worker.do.<locals>.job'",
        "zzzzzi_mprocrepos/001-channel-pruning-windows-spawn-pickle-local-object.log",
    ),
    (
        "code.spawn_main_guard",
        "        current process has finished its bootstrapping phase.",
        "zzzzzi_mprocrepos/005-pytorch-image-classification-spawn-bootstrapping-phase.log",
    ),
    (
        "code.lua_error",
        "/home/beichao/torch/install/bin/luajit: ./onmt/modules/LSTM.lua:41: attempt to perform "
        "arithmetic on local 'layers' (a nil value)",
        "zzzzy_torch7repos/007-opennmt-lua-lm-training-nil-layers.log",
    ),
    (
        "net.p2p",
        "hivemind.p2p.p2p_daemon.P2PDaemonError: Daemon failed to start in 15.0 seconds",
        "zzzzq_altdistrepos/002-hivemind-p2p-daemon-failed-to-start.log",
    ),
    (
        "code.recursion",
        "Fatal Python error: Cannot recover from stack overflow.",
        "zzzzq_rlfwrepos/008-tf-agents-parallel-env-stack-overflow.log",
    ),
    (
        "data.image_rank",
        "INFO:tensorflow:Error reported to Coordinator: <class 'tensorflow.python.framework."
        "errors_impl.InvalidArgumentError'>, image_size must contain 3 elements[4]",
        "zzzzt_tfodapirepos/008-tfmodels-slim-train-image-classifier-image-size-4-elements.log",
    ),
    (
        "cuda.not_supported",
        "RuntimeError: /jizhicfs/macroliu/ptm_code/tpoverlap_pai/TransformerEngine_official/"
        "transformer_engine/pytorch/csrc/userbuffers/userbuffers-host.cpp:208 in function "
        "create_communicator_grouped2: CUDA Error: operation not supported",
        "zzzzu_megatron26repos/003-transformerengine-initialize-ub-multicast-unsupported.log",
    ),
    (
        "net.hub_server",
        "'(ReadTimeoutError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out."
        " (read timeout=10)\"), '(Request ID: 7d76f590-4653-46a3-8cec-2473bc91d595)')' thrown "
        "while requesting HEAD https://huggingface.co/unsloth/Qwen2.5-7B-Instruct-bnb-4bit/resolve/"
        "main/model.safetensors.index.json",
        "d_hf/013-unsloth-hf-hub-read-timeout.log",
    ),
    (
        "code.cross_device_rename",
        "OSError: [Errno 18] Invalid cross-device link: '/tmp/tmp657zwu1c' -> "
        "'/path/to/checkpoint.ckpt'",
        "zy_fsmount/001-lightning-atomic-save-cross-device-mount.log",
    ),
    (
        "segfault.windows_fatal",
        "Windows fatal exception: access violation",
        "zzzzn_fmrepos/002-torchcfm-cifar10-access-violation.log",
    ),
    (
        "net.socket_check",
        "  what():  [04:04:56] /dgl_workspace/dgl/src/graph/network/socket_communicator.cc:282: "
        "Check failed: tmp != -1 (-1 vs. -1) : ",
        "zo_gnn/008-dgl-ke-dist-train-socket-recv-resource-temporarily-unavailable.log",
    ),
    (
        "net.mpi_unreachable",
        "> At least one pair of MPI processes are unable to reach each other for",
        "zzd_cloud/020-sagemaker-multinode-mpi-processes-unreachable.log",
    ),
    (
        "code.save_dir_missing",
        "RuntimeError: Parent directory /home/rm does not exist.",
        "zu_ckpt/026-colossalai-coati-rm-save-parent-dir-missing.log",
    ),
    (
        "data.zero_count",
        "0 training images in /data/ocr/icdar2015/",
        "zzzl_docrepos/009-east-zero-training-images-stall.log",
    ),
    (
        "data.empty_loader",
        "venv\\lib\\site-packages\\pytorch_lightning\\utilities\\data.py:104: Total length of "
        "`DataLoader` across ranks is zero. Please make sure this was your intention.",
        "zzzo_musicrepos/009-stable-audio-tools-dataloader-length-zero.log",
    ),
    (
        "numerical.linalg",
        "[08:32:34.6859554] Projection failed: linalg.svd: The algorithm failed to converge "
        "because the input matrix is ill-conditioned or has too many repeated singular values "
        "(error code: 2623).`",
        "zzzm_optrepos/001-galore-svd-failed-to-converge.log",
    ),
    (
        "gpu.xid",
        "[Wed Jan 27 23:04:35 2021] NVRM: Xid (PCI:0000:3d:00): 43, pid=35521, Ch 00000008",
        "gpu/012-gpu-hw-xid43-xid31-mmu-fault-faulty-device.log",
    ),
    (
        "gpu.ecc",
        "RuntimeError: CUDA error: uncorrectable ECC error encountered",
        "gpu/007-gpu-hw-ecc-nccl-watchdog-rank1.log",
    ),
    (
        "gpu.lost",
        "Unable to determine the device handle for GPU0000:03:00.0: Unknown Error",
        "gpu/011-gpu-hw-pcie-aer-nvidia-smi-unknown-error.log",
    ),
    (
        "code.image_arch",
        "standard_init_linux.go:219: exec user process caused: exec format error",
        "zd_cloud/007-sagemaker-training-image-exec-format-error.log",
    ),
    (
        "code.grpc_message_size",
        "grpc._channel._MultiThreadedRendezvous: <_MultiThreadedRendezvous of RPC that te"
        "rminated with:         status = StatusCode.RESOURCE_EXHAUSTED         details = "
        '"Sent message larger than max (544715979 vs. 536870912)"         debug_error_str'
        'ing = "UNKNOWN:Error received from peer  {created_time:"2024-02-25T00:42:50.1621'
        '60289+08:00", grpc_status:8, grpc_message:"Sent message larger than max (5447159'
        '79 vs. 536870912)"}"',
        "zq_fed/007-flower-gpt2-grpc-sent-message-larger-than-max.log",
    ),
    (
        "code.mpi_exec",
        "``mpirun was unable to launch the specified application as it could not access",
        "zy_horovod/013-dd3d-mpirun-cannot-execute-train-script.log",
    ),
    (
        "code.mpi_root",
        "mpirun has detected an attempt to run as root.",
        "zi_hpc/006-horovod-docker-mpirun-refuses-to-run-as-root.log",
    ),
    (
        "code.no_gpus_visible",
        "RuntimeError: No HIP GPUs are available",
        "ze_hpc/022-parsl-frontier-rocr-cuda-visible-devices-no-hip-gpus.log",
    ),
    (
        "code.weight_sync_shape",
        "(SGLangEngine pid=1493437) [2026-05-21 16:07:41 DP6 TP6] Failed to update parame"
        "ter online: start out of range (expected to be in ra",
        "za_rl26/003-sglang-slime-npu-moe-update-weights-online-out-of-range.log",
    ),
    (
        "gpu.dcgm_diag",
        "|                           | Fail - GPU: 0                                  |",
        "za_hw/012-dcgmi-diag-r2-gpu-memory-fail-thermal-violations.log",
    ),
    (
        "hang.tpu_hosts",
        "UserWarning: TPU backend initialization is taking more than 60.0 seconds. Did you run "
        "your code on all TPU hosts? See https://jax.readthedocs.io/en/latest/multi_process.html "
        "for more information.",
        "c_infra/042-t5x-v3-128-tpu-backend-init-stuck-one-host.log",
    ),
    (
        "host.ray_object_store_full",
        "ray.exceptions.ObjectStoreFullError: Failed to put object "
        "ffffffffffffffffffffffffffffffffffffffff0100000002000000 in object",
        "zzt_rayforum/006-analytics-zoo-autots-object-store-full.log",
    ),
    (
        "cuda.driver_init",
        "CUDA driver initialization failed, you might not have a CUDA gpu.",
        "zy_gpuops/003-simpletuner-runpod-resume-cuda-driver-initialization-failed.log",
    ),
    (
        "gpu.nvlink",
        "[ERROR] [tid 2468] detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id "
        "00000000:8a:00.0 physical id 3 port 61",
        None,
    ),
    ("gpu.unknown_cuda_error", "RuntimeError: CUDA error: unknown error", None),
    ("cuda.launch_failure", "RuntimeError: CUDA error: unspecified launch failure", None),
    (
        "data.jpeg",
        "RuntimeError: Critical error in pipeline: Error in thread 0: "
        '[/opt/dali/dali/pipeline/operators/decoder/nvjpeg_decoder.h:331] NVJPEG error "3"',
        None,
    ),
    (
        "cuda.oom",
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.63 GiB. GPU "
        "3 has a total capacity of 79.11 GiB of which 2.61 GiB is free. Including non-PyTorch "
        "memory, this process has 0 bytes memory in use. Of the allocated memory 48.16 GiB is "
        "allocated by PyTorch, with 50.00 MiB allocated in private pools (e.g., CUDA Graphs), "
        "and 3.48 GiB is reserved by PyTorch but unallocated. If reserved but unallocated "
        "memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
        "fragmentation.  See documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        "gpu/001-cuda-oom-swift-gemma3-rank3.log",
    ),
    (
        "host.oom_killer",
        "Memory cgroup out of memory: Killed process 629 (onmt_train) total-vm:14119556kB, "
        "anon-rss:6538204kB, file-rss:80652kB, shmem-rss:16kB, UID:0 pgtables:13432kB "
        "oom_score_adj:0",
        "gpu/028-host-oom-dataloader-killed-cgroup-oom.log",
    ),
    (
        "host.dataloader_killed",
        "RuntimeError: DataLoader worker (pid 629) is killed by signal: Killed.",
        "gpu/028-host-oom-dataloader-killed-cgroup-oom.log",
    ),
    (
        "fs.object_store_client",
        "2018-11-02 19:06:20.388378: E tensorflow/core/platform/s3/aws_logging.cc:60] Curl "
        "returned error code 55",
        "g_ops/003-sagemaker-tf-s3-checkpoint-curl55.log",
    ),
    (
        "host.large_alloc",
        "tcmalloc: large alloc 11498029056 bytes == 0x7f52590bc000 @  "
        "0x7f568599a1e7 0x7f56152510ce 0x7f56152a7cf5 0x7f561535086d 0x7f561535117f "
        "0x7f56153512d0 0x4ba22b 0x7f5615292944 0x58ebef 0x51ae13 0x5b41c5 0x58f49e "
        "0x51837f 0x5b4a3e 0x4ba80a 0x7f5615292944 0x58ebef 0x51ae13 0x5b41c5 0x58f49e "
        "0x51837f 0x5b4a3e 0x4ba80a 0x537e46 0x58ff66 0x51bbc5 0x5b41c5 0x604133 "
        "0x606e06 0x606ecc 0x609aa6",
        "zy_colab/007-torchngp-colab-tcmalloc-large-alloc-ctrl-c.log",
    ),
    (
        "host.memory_error",
        "OSError: [WinError 1455] 页面文件太小，无法完成操作。 Error loading "
        '"D:\\Anaconda3\\envs\\wssam\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" '
        "or one of its dependencies.",
        "sched_misc/007-windows-paging-file-too-small-zh.log",
    ),
    (
        "segfault.shm",
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
        "shared memory (shm).",
        "gpu/027-segfault-unexpected-bus-error-shm-pipedream.log",
    ),
    (
        "sched.step_launch",
        "srun: error: task 0 launch failed: Unspecified error",
        "zl_slurm/001-nemo-srun-mpi-pmix-step-launch-failed.log",
    ),
    (
        "sched.cpu_limit",
        "=>> PBS: job killed: ncpus 11.03 exceeded limit 10 (sum)",
        "zl_slurm/009-smp-pbs-job-killed-ncpus-exceeded-limit.log",
    ),
    (
        "fs.shm_full",
        "RuntimeError: unable to write to file </torch_15769_1517813162>",
        "zc_os/010-nnunet-torch-shm-unable-to-write.log",
    ),
    (
        "segfault.segv",
        "  traceback : Signal 11 (SIGSEGV) received by PID 3182701",
        "gpu/023-segfault-torchrun-sigsegv-train-stage1.log",
    ),
    (
        "segfault.bus",
        "[experiment-3fce9b69-1446-worker-0:2121 :0:7025] Caught signal 7 (Bus error: "
        "nonexistent physical address)",
        "sched_misc/010-deepspeed-8gpu-nccl-bus-error-after-11h.log",
    ),
    ("segfault.sigill", "  traceback : Signal 4 (SIGILL) received by PID 2412", None),
    (
        "segfault.heap",
        "*** Error in `python': malloc(): memory corruption: 0x00007f540c0a6190 ***",
        "z_old/028-gluoncv-ssd-malloc-memory-corruption.log",
    ),
    (
        "segfault.sigfpe",
        "(WorkerDict pid=358504) Fatal Python error: Floating point exception",
        "t_post/004-search-r1-h20-vllm-floating-point-exception-cublas.log",
    ),
    (
        "fs.stale",
        "[rank1]: OSError: [Errno 116] Stale file handle: xxx",
        "code_data/009-estale-datasets-cache-rank1.log",
    ),
    (
        "fs.eio",
        "OSError: [Errno 5] Input/output error: '/media/project/nnUNet/nnUNet_preprocessed/"
        "Dataset002_CCTA_3D/nnUNetPlans_3d_fullres/L0550_RCA_sagital.pkl'",
        "code_data/006-eio-nnunet-preprocessed-reads.log",
    ),
    (
        "fs.nospace",
        "OSError: [Errno 28] No space left on device",
        "sched_misc/018-mockingbird-8-days-enospc-checkpoint-uyghur.log",
    ),
    (
        "fs.quota",
        "OSError: [Errno 122] Disk quota exceeded",
        "code_data/005-disk-quota-exceeded-save-image.log",
    ),
    (
        "data.label_range",
        "InvalidArgumentError (see above for traceback): Received a label value of 48 which "
        "is outside the valid range of [0, 40).  Label values: 1 23 24 47 11 39 5 1 1 39 19 "
        "31 47 11 39 42 45 4 14.... (a large list of numbers)",
        "n_stack/027-nabu-asr-label-value-outside-valid-range.log",
    ),
    (
        "hang.store_barrier",
        "[2023-07-16 13:17:36,147][torch.distributed.distributed_c10d][INFO] - Waiting in "
        "store based barrier to initialize process group for rank: 0, key: "
        "store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)",
        "n_stack/022-rvt-lightning-ddp-store-based-barrier-waiting.log",
    ),
    (
        "code.numpy_abi",
        "A module that was compiled using NumPy 1.x cannot be run in",
        "s_2024/014-musicgen-dreambooth-lora-numpy2-abi.log",
    ),
    ("fs.readonly", "OSError: [Errno 30] Read-only file system: '/checkpoints/step_1000'", None),
    ("fs.network_mount", "[ 1843.308145] nfs: server fs01 not responding, still trying", None),
    (
        "cuda.oom_remat",
        "2025-02-08 13:49:59.295718: W external/xla/xla/hlo/transforms/simplifiers/"
        "hlo_rematerialization.cc:3021] Can't reduce memory use below -21.13",
        "zzo_robot/003-openpi-pi0fast-oom.log",
    ),
    (
        "mpi.slots",
        "All nodes which are allocated for this job are already filled.",
        "zzp_launch/004-dstack-mpirun-hostfile-slots-zero.log",
    ),
    (
        "host.pool_broken",
        "A process in the process pool was terminated abruptly while the future was running or "
        "pending.```",
        "zzq_memdata/011-fastai-lm-tokenize-pool-killed.log",
    ),
    (
        "fs.shared_wait",
        "TimeoutError: Waiting for checkpoint model directory timed out",
        "zzn_infra/004-olmo-shared-drive-ckpt-dir-timeout.log",
    ),
    (
        "fs.hung_task",
        "[ 4920.147532] INFO: task python:28734 blocked for more than 120 seconds.",
        None,
    ),
    ("fs.too_many_files", "OSError: [Errno 24] Too many open files", None),
    (
        "fs.checkpoint_write",
        "RuntimeError: [enforce fail at inline_container.cc:471] . PytorchStreamWriter failed "
        "writing file data/228: file write failed",
        "holdout/026-h2o-llmstudio-pytorchstreamwriter-write-failed-full-disk.log",
    ),
    (
        "fs.checkpoint_corrupt",
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central "
        "directory",
        None,
    ),
    (
        "data.decode",
        "Sanity Checking DataLoader 0:   0%|          | 0/2 [00:00<?, ?it/s][NeMo E 2024-10-06 "
        "02:26:42 text_memmap_dataset:207] Error while fetching sample from memmap: 'utf-8' codec "
        "can't decode byte 0x93 in position 0: invalid start byte",
        "code_data/026-nemo-memmap-utf8-decode-rank0.log",
    ),
    (
        "data.image",
        "PIL.UnidentifiedImageError: cannot identify image file <_io.BytesIO object at "
        "0x7fe11bd4ddb0>",
        "code_data/001-pil-unidentified-image-worker.log",
    ),
    (
        "data.arrow",
        "pyarrow.lib.ArrowInvalid: JSON parse error: Column() changed from object to array in "
        "row 0",
        "code_data/027-arrowinvalid-json-column-type.log",
    ),
    (
        "data.truncated",
        "tensorflow.python.framework.errors_impl.DataLossError: corrupted record at 2585605691",
        "holdout/045-tf-2dpm-tfrecord-dataloss-corrupted-record.log",
    ),
    (
        "data.tokenizer",
        "TypeError: TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, "
        "InputSequence]]",
        None,
    ),
    (
        "data.json",
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
        None,
    ),
    (
        "data.schema",  # datasets' set_format, as a public issue quotes it
        "ValueError: Columns ['attention_mask'] not in the dataset. Current columns in the "
        "dataset: ['text', 'meta', 'input_ids']",
        None,
    ),
    (
        "numerical.loss_scale",
        "Exception: Current loss scale already at minimum - cannot decrease scale anymore. "
        "Exiting run.",
        "code_data/011-deepspeed-loss-scale-minimum.log",
    ),
    (
        "numerical.nan",
        "RuntimeError: Function 'LogSoftmaxBackward' returned nan values in its 0th output. ",
        "code_data/014-logsoftmax-backward-nan.log",
    ),
    (
        "code.native_assert",
        "python3: ./google/protobuf/stubs/stringpiece.h:229: google::protobuf::StringPiece::"
        "StringPiece(const char*, google::protobuf::stringpiece_ssize_type): Assertion `len >= 0'"
        " failed.",
        "c_platform/028-dali-tfrecord-index-path-misaligned-protobuf-assert.log",
    ),
    (
        "code.device_assert",
        "../aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [615,0,0], "
        "thread: [31,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
        "gpu/016-cuda-err-device-assert-index-select-megatron-ds.log",
    ),
    (
        "cuda.illegal_access",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        None,
    ),
    (
        "cuda.no_kernel_image",
        "CUDA error (/__w/xformers/xformers/third_party/flash-attention/hopper/"
        "flash_fwd_launch_template.h:175): no kernel image is available for execution on the "
        "device",
        "gpu/022-cuda-err-no-kernel-image-xformers-flash-attn.log",
    ),
    (
        "cuda.library",
        "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR",
        "gpu/019-cuda-err-cudnn-internal-error-backward.log",
    ),
    (
        "cuda.driver_error",
        "2025-06-27 14:26:46.635982: E external/xla/xla/stream_executor/cuda/[cuda_command_"
        "buffer.cc:772](http://cuda_command_buffer.cc:772/)] CUDA error: Failed to destroy CUDA "
        "graph: "
        "CUDA_ERROR_INVALID_VALUE: invalid argument",
        "za_hw/010-mujoco-warp-training-stream-capture-invalidated.log",
    ),
    (
        "code.shapes",
        "[rank2]: RuntimeError: Expected all tensors to be on the same device, but found at least "
        "two devices, cpu and cuda:2! (when checking argument for argument tensors in method "
        "wrapper_CUDA_cat)",
        "code_data/018-accelerate-grpo-same-device-rank2.log",
    ),
    (
        "code.cli_config",
        "omegaconf.errors.ConfigAttributeError: Key 'min_lr' is not in struct",
        "holdout/041-fairseq-hydra-key-min-lr-not-in-struct.log",
    ),
    ("code.compile", "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:", None),
    (
        "nccl.watchdog_timeout",
        "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, "
        "NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.",
        "comms/002-basicsr-watchdog-allreduce.log",
    ),
    (
        "nccl.heartbeat",
        "[rank0]:[E1206 18:44:12.715298 ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] Heartbeat "
        "monitor timed out! Process will be terminated after dumping debug info. "
        "workMetaList_.size()=1",
        None,
    ),
    (
        "hang.stacks",
        'Thread 42 (idle): "MainThread"',
        "comms/032-accelerate-deepspeed-pyspy-allgather-stuck.log",
    ),
    (
        "nccl.shm",
        "  Error while creating shared memory segment /dev/shm/nccl-1YsMbG (size 7340384)",
        "holdout/049-torchtitan-ci-container-small-shm-ncclsystemerror.log",
    ),
    (
        "nccl.system_error",
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or "
        "device error. ",
        "comms2/013-ncclsystemerror-no-route-to-host-socket-ifname.log",
    ),
    (
        "nccl.ib_completion",
        "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from "
        "peer 10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid "
        "fd00:1148:9000:5000:4:200:3:ff22 remoteGidsfd00:1148:9000:5000:4:200:3:ff1f",
        "comms/015-nccl-ib-completion-status12.log",
    ),
    (
        "nccl.cuda_error",
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/"
        "distributed/c10d/NCCLUtils.cpp:77, unhandled cuda error (run with NCCL_DEBUG=INFO for "
        "details), NCCL version 2.26.2",
        "comms/016-nccl-nvls-invalid-argument-driver.log",
    ),
    (
        "nccl.duplicate_gpu",
        "[1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : "
        "rank 2 and rank 0 both on CUDA device 1000",
        "comms/013-horovod-duplicate-gpu-mpirun.log",
    ),
    (
        "host.ray_worker_died",
        "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a "
        "connection error code 2. End of file. There are some potential root causes. (1) The "
        "process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop "
        "--force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other "
        "unexpected errors.",
        None,  # the tail of raylet's 767-character line in c_rl/004 (Ray's core worker)
    ),
    (
        "code.gpu_arch",
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, "
        "Hardware limit: 65536. Reducing block sizes or `num_stages` may help.",
        None,  # Triton's compiler, as quoted in public threads
    ),
    (
        "data.collate",
        "RuntimeError: stack expects each tensor to be equal size, but got [3, 224, 224] at "
        "entry 0 and [1, 224, 224] at entry 1",
        None,  # torch's default_collate
    ),
    (
        "dist.monitored_barrier",
        "RuntimeError: Rank 0 successfully reached monitoredBarrier, but received errors while "
        "waiting for send/recv from ranks: Rank 3 failed to pass monitoredBarrier in 1800000 ms",
        None,  # torch.distributed.monitored_barrier's own words
    ),
    (
        "sched.request_invalid",
        "srun: error: Unable to allocate resources: Requested node configuration is not available",
        None,  # Slurm's own error string (slurm_strerror)
    ),
    (
        "sched.exec_failed",
        "slurmstepd: error: execve(): python: No such file or directory",
        None,  # slurmstepd's words for a program it cannot find on the node
    ),
    (
        "sched.spool_script",
        "slurmstepd: error: execve(): /tmp/slurmd/job00089/slurm_script: No such file or directory",
        "zzb_hpcdocs/009-slurm-gpu-node-slurm-script-execve-missing.log",
    ),
    (
        "sched.task_launch",
        "srun: error: Task launch for StepId=1234.0 failed on node node12: Socket timed out on "
        "send/recv operation",
        None,  # srun's words for a slurmd that did not answer
    ),
    (
        "net.tls",
        "requests.exceptions.SSLError: HTTPSConnectionPool(host='huggingface.co', port=443): Max "
        "retries exceeded with url: /x (Caused by SSLError(SSLCertVerificationError(1, '[SSL: "
        "CERTIFICATE_VERIFY_FAILED] certificate verify failed: self signed certificate in "
        "certificate chain (_ssl.c:1129)')))",
        None,  # requests and Python's ssl module
    ),
    (
        "code.ssh_auth",
        "node2: Permission denied (publickey,gssapi-keyex,gssapi-with-mic).",
        None,  # OpenSSH's refusal, as pdsh and mpirun pass it on
    ),
    (
        "net.ssh_exit",
        "pdsh@node1: node2: ssh exited with exit code 255",
        None,  # pdsh under DeepSpeed's multi-node launcher
    ),
    (
        "net.connect",
        "ValueError: Could not connect to server after multiple tries.",
        "v_ops/014-comet-streaming-error-k8s-pod-experiment-ended.log",
    ),
    (
        "net.http",
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='s3.amazonaws.com', "
        "port=443): Max retries exceeded with url: /bucket/shard-00017.tar",
        None,  # requests/urllib3's words for a connection that kept failing
    ),
    (
        "net.connection_error",
        "ConnectionError: Failed to connect to Ray at address: "
        "http://rayjob-sample-raycluster-vkbxr-head-svc.default.svc.cluster.local:8265.",
        "zzz_platforms/009-kuberay-rayjob-submitter-connect-before-head-ready.log",
    ),
    (
        "code.gym_env",
        "gym.error.NameNotFound: Environment Pong doesn't exist in namespace ALE.`",
        "zr_gamerl/021-xuance-atari-demo-pong-not-in-namespace-ale-roms.log",
    ),
    (
        "net.rate_limited",
        "Rate limited. Waiting 207.0s before retry [Retry 1/5].",
        "v_ops/030-hf-kernels-multirank-429-rate-limit-stalls-first-step.log",
    ),
    (
        "data.loader_thread",
        "[2024-04-18 19:10:41] CRITICAL [olmo.util:158, rank=0] Uncaught OLMoThreadError: "
        "generator thread data thread 3 failed",
        "c_llm/006-olmo-data-thread-failed.log",
    ),
    (
        "gpu.busy",
        "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1518244421288/work/torch/lib/THC/"
        "THCStream.cpp line=40 error=46 : all CUDA-capable devices are busy or unavailable",
        "c_platform/016-jade-thcudacheck-devices-busy-dataparallel.log",
    ),
    (
        "sched.evicted_memory",
        "The node was low on resource: memory.",
        "c_infra/023-kubeflow-notebook-keras-node-low-memory-evicted.log",
    ),
    (
        "sched.evicted_over_limit",
        "  Warning  Evicted              109s  kubelet                                Pod "
        "ephemeral local storage usage exceeds the total limit of containers 5Gi.",
        "holdout/035-k8s-training-pod-evicted-ephemeral-storage.log",
    ),
    (
        "dist.collective_mismatch",
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 3 is running "
        "collective: CollectiveFingerPrint(OpType=BARRIER), but Rank 0 is running collective: "
        "CollectiveFingerPrint(OpType=ALLGATHER_COALESCED).",
        None,  # c10d's ProcessGroupWrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL), quoted in a thread
    ),
    (
        "nccl.internal_error",
        "compute-dy-p4d24xlarge-77: ncclInternalError: Internal check failed. This is either a "
        "bug in NCCL or due to memory corruption",
        "comms/017-deepspeed-nccl-internal-error-p4d.log",
    ),
    (
        "nccl.error",
        "a100-st-p4d24xlarge-22:183006:183220 [1] proxy.cc:1119 NCCL WARN [Proxy Service 9] "
        "Failed to execute operation Connect from rank 9, retcode 6",
        "comms/014-nccl-remote-broken-pipe-p4d.log",
    ),
    (
        "net.rendezvous",
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to "
        "the C10d store has failed. See inner exception for details.",
        "comms/025-torchrun-c10d-rdzv-connect-timeout.log",
    ),
    (
        "net.address_in_use",
        "[W socket.cpp:401] [c10d] The server socket has failed to bind to 0.0.0.0:47531 "
        "(errno: 98 - Address already in use).",
        "comms/021-torchrun-eaddrinuse-local-rank.log",
    ),
    (
        "net.dns",
        "ValueError: host not found: Temporary failure in name resolution",
        "comms/023-mmcv-slurm-dns-temporary-failure.log",
    ),
    (
        "net.hub",
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't "
        "find it in the cached files and it looks like gpt2 is not the path to a directory "
        "containing a file named config.json.",
        None,
    ),
    (
        "net.refused",
        "[W socket.cpp:697] [c10d] The client socket has failed to connect to "
        "[::ffff:0.104.99.143]:47389 (errno: 110 - Connection timed out).",
        "comms/024-opensora-client-socket-connect-timeout.log",
    ),
    (
        "net.store",
        "[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to "
        "connect to 192.0.0.1:1234",
        "comms/025-torchrun-c10d-rdzv-connect-timeout.log",
    ),
    ("net.infiniband_link", "[ 8812.416223] mlx5_core 0000:3b:00.0 ibp59s0: Link down", None),
    (
        "sched.time_limit",
        "slurmstepd: error: *** STEP 55595933.0 ON maestro-3017 CANCELLED AT 2025-01-10T15:27:25 "
        "DUE TO TIME LIMIT ***",
        "sched_misc/001-lightning-slurm-time-limit-sigterm.log",
    ),
    (
        "sched.preempted",
        "submitit WARNING (2022-08-12 02:06:11,453) - Caught signal SIGUSR2 on SERVER_NAME: this "
        "job is preempted.",
        "sched_misc/002-submitit-preempted-job-requeue.log",
    ),
    (
        "sched.node_failure",
        "slurmstepd: error: *** JOB 1234567 ON gpu-017 CANCELLED AT 2024-03-02T10:11:12 DUE TO "
        "NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
        None,
    ),
    (
        "sched.death_signal",
        "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting "
        "down workers",
        None,
    ),
    (
        "gpu.reset",
        "HW Exception by GPU node-4 (Agent handle: 0x1ebc04e0) reason :GPU Hang",
        "za_hw/013-gfx942-pytorch-hw-exception-gpu-hang-after-hours.log",
    ),
    (
        "gpu.accelerator_down",
        "[   72.993269] habanalabs 0000:1a:00.0: Failed to initialize hl2. Device is NOT usable !",
        "za_hw/007-gaudi-habanalabs-cpu-cp-timeout-device-not-usable.log",
    ),
    (
        "node.pcie_fatal",
        "[  +0.000004] pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), "
        "type=Transaction Layer, (Requester ID)",
        "za_hw/017-returnn-hang-pcie-aer-uncorrected-fatal-cmpltto.log",
    ),
    (
        "code.cli_usage",
        "usage: aquila_pretrain.py [-h] [--env_type ENV_TYPE]",
        "k_llmops/013-flagai-aquila-pretrain-unrecognized-local-rank.log",
    ),
    (
        "host.dask_memory",
        "2024-09-06 14:32:04,799 - distributed.scheduler - ERROR - Task "
        "'lambda-6a341594-3645-4a9a-9521-1739c67e8778' has 30.61 GiB worth of input "
        "dependencies, but worker tcp://127.0.0.1:57276 has memory_limit set to 14.90 GiB.",
        "zb_ray/003-xgboost-dask-task-input-exceeds-worker-memory-limit.log",
    ),
    (
        "launcher.hangup",
        "W1221 17:13:59.241000 46660 torch/distributed/elastic/multiprocessing/api.py:897] "
        "Sending process 46807 closing signal SIGHUP",
        "za_rl26/007-axolotl-accelerate-121-death-signal-sighup.log",
    ),
    (
        "host.sigkill",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 "
        "(pid: 178) of binary: /root/miniconda3/envs/MGSV_env/bin/python",
        "gpu/030-host-oom-torch-launch-exitcode-9-oomkilled.log",
    ),
    (
        "python.config_path",
        "FileNotFoundError: [Errno 2] No such file or directory: '/home/user/run/args.json'",
        None,
    ),
    (
        "python.import",
        "ModuleNotFoundError: No module named 'damo'",
        "holdout/042-damo-yolo-launch-modulenotfound-damo.log",
    ),
    (
        "python.bug",
        "KeyError: 'attention_mask'",
        "code_data/020-colossalai-keyerror-attention-mask.log",
    ),
    (
        "cuda.fork",
        "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
        "multiprocessing, you must use the 'spawn' start method",
        None,
    ),
    ("cuda.code_error", "RuntimeError: CUDA error: too many resources requested for launch", None),
    (
        "cuda.launch_timeout",
        "RuntimeError: CUDA error: the launch timed out and was terminated",
        None,
    ),
    ("sched.memory_limit", "slurmstepd: error: Exceeded job memory limit at some point.", None),
    (
        "sched.unkillable",
        "slurmstepd: error: *** JOB 4242 STEPD TERMINATED ON node-7 AT 2024-01-02T03:04:05 DUE "
        "TO JOB NOT ENDING WITH SIGNALS ***",
        None,
    ),
    (
        "sched.k8s_deadline",
        "  Warning  DeadlineExceeded  2m  job-controller  Job was active longer than specified "
        "deadline",
        None,
    ),
    ("sched.image", "  Warning  Failed  12s  kubelet  Error: ErrImagePull", None),
    (
        "python.runtime",
        "RuntimeError: Failed to load config",
        "c_llm/022-cpm-bee-pretrain-failed-to-load-config.log",
    ),
    (
        "host.map_worker_died",
        "RuntimeError: One of the subprocesses has abruptly died during map operation.To debug "
        "the error, disable multiprocessing.",
        "c_hf/051-unsloth-standardize-data-formats-map-worker-died-ram.log",
    ),
    (
        "fs.object_store",
        "All 10 retry attempts failed. The last failure: Unavailable: Error executing an HTTP "
        "request: HTTP response code 503",
        None,
    ),
    (
        "nccl.library_missing",
        "external/xla/xla/service/gpu/nccl_utils.cc:133: NCCL operation ncclGetUniqueId(&id) "
        "failed: Unable to load NCCL library. Multi-GPU collectives will not work.;",
        None,
    ),
    (
        "net.mpi_daemon",
        "ORTE has lost communication with a remote daemon.",
        "c_infra/026-mpijob-orte-lost-remote-daemon-worker-crash.log",
    ),
    (
        "net.grpc_unavailable",
        "I  worker-replica-1 Error reported to Coordinator: <class "
        "'tensorflow.python.framework.errors_impl.UnavailableError'>, Stream removed  "
        "worker-replica-1",
        "c_infra/015-tf-objdet-cloudml-ps-grpc-stream-removed.log",
    ),
    ("hang.debugger", "(gdb) bt", "c_pytorch/023-dataparallel-hang-epoch95-gdb-memcpy.log"),
    (
        "hang.interrupted",
        "`^CTraceback (most recent call last):",
        "c_vision/041-yolov5-macos-stuck-dataloader-ctrl-c.log",
    ),
    (
        "gpu.driver_mismatch",
        "[task 2025-07-01T05:06:30.005+00:00] [train] [nvidia-smi(stdout)] Failed to initialize "
        "NVML: Driver/library version mismatch",
        "d_infra/007-mozilla-translations-nvml-mismatch.log",
    ),
    (
        "ray.system_error",
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
        "d_rl/015-easyr1-owner-node-crashed.log",
    ),
    (
        "host.ray_memory_monitor",
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
        "e_rl/013-openrlhf-70b-ppo-ray-host-oom.log",
    ),
    (
        "data.audio",
        "soundfile.LibsndfileError: Error opening 'x.flac': Format not recognised.",
        None,
    ),
    (
        "sched.platform_capacity",
        "sagemaker.exceptions.UnexpectedStatusException: Error for Training job hf-train-2024: "
        "Failed. Reason: CapacityError: Unable to provision requested ML compute capacity. "
        "Please retry using a different ML instance type.",
        None,
    ),
    (
        "sched.platform_internal",
        "sagemaker.exceptions.UnexpectedStatusException: Error for Training job job-1: Failed. "
        "Reason: InternalServerError: We encountered an internal error. Please try again.",
        None,
    ),
    (
        "code.hydra_target",
        "Error locating target 'diffusion_policy.dataset.pusht_image_dataset.PushTImageDataset', "
        "set env var HYDRA_FULL_ERROR=1 to see chained exception.",
        "zzj_midproj/004-diffusion-policy-error-locating-target-dataset.log",
    ),
    (
        "xla.cublas_init",
        "stream->parent()->GetBlasGemmAlgorithms(stream, &algorithms)",
        "zzj_midproj/012-dreamerv3-docker-xla-ret-check-gemm-algorithm-picker.log",
    ),
    (
        "fs.volume_mount",
        '  Warning  FailedMount  1m  kubelet  MountVolume.SetUp failed for volume "data" : mount '
        "failed: exit status 32",
        None,
    ),
    (
        "segfault.abort",
        "(WorkerDict pid=1009104) Fatal Python error: Aborted [repeated 15x across cluster]",
        "e_rl/012-easyr1-workerdict-sigabrt.log",
    ),
    (
        "host.soft_lockup",
        "watchdog: BUG: soft lockup - CPU#98 stuck for 22s! "
        "，在此期间，该服务器上其他用户的tmux窗口也会弹出这些信息，执行其他命令会受影响，请问有人遇到过吗",
        "zzg_dmesg/001-llamafactory-zero3-save-soft-lockup.log",
    ),
    (
        "segfault.python_fatal",
        "]Fatal Python error: none_dealloc: deallocating None" + " " * 93,  # (its padding)
        "zzg_swift/007-ms-swift-sft-fatal-python-error-none-dealloc-step-166.log",
    ),
    (
        "code.resume_state",
        "[2023-09-25 15:53:27,994] [INFO] [RANK 0] Unable to load optimizer from checkpoint "
        "<ckpt_path>, exiting. Specify --no-load-rng or --finetune to prevent attempting to load "
        "the random state.",
        "zzq_ckpt/005-sat-rng-tracker-states-not-saved.log",
    ),
    (
        "code.native_panic",
        "thread '<unnamed>' panicked at 'no entry found for key', C:\\Users\\builder\\AppData"
        "\\Local\\Temp\\pip-req-build-hhcj09m8\\tokenizers-lib\\src\\models\\mod.rs:36:66",
        "zn_embed/021-text2vec-cosent-save-model-tokenizers-panic-no-entry-found.log",
    ),
    (
        "code.op_build",
        "ninja: build stopped: subcommand failed.",
        "zf_deepspeed/016-x-r1-grpo-zero-offload-cpu-adam-cannot-find-lcurand.log",
    ),
    (
        "code.link_failed",
        "/usr/bin/ld: cannot find -lcuda: No such file or directory",
        "zu_compile/018-nanogpt-kaggle-t4-triton-cannot-find-lcuda.log",
    ),
    (
        "segfault.aborted",
        "Aborted (core dumped)",
        "zc_os/018-flan-alpaca-k8s-omp-affinity-abort.log",
    ),
    (
        "hccl.timeout",
        "[rank1]: EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. "
        "Reason: Remote Rank did not send the data in time. Please check the reason for the rank "
        "being stuck",
        "f_infra/011-vllm-ascend-grpo-hccl-socket-timeout.log",
    ),
    (
        "code.weights_only",
        "[rank1]: Check the documentation of torch.load to learn more about types accepted by "
        "default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.",
        "zzi_ckpt/010-open-instruct-sft-resume-accelerate-load-state-weights-only.log",
    ),
    (
        "hang.data_loader",
        "Worker timed out after 120 seconds. This might be caused by ",
        "zzi_dataload/005-d2l-mxnet-gluon-dataloader-worker-timed-out-120s.log",
    ),
    (
        "cuda.oom_mapping",
        "[W831 10:32:25.255074645 CUDACachingAllocator.cpp:508] expandable_segments: memory "
        "mapping failed with OOM on device 0 while trying to map 20971520 bytes (free: 15663104, "
        "total: 33671348224).",
        "zzh_kernels/016-simpletuner-compiled-aoti-empty-strided-failed-mid-training-oom.log",
    ),
    (
        "code.checkpoint_rename",
        "[rank2]: OSError: [Errno 39] Directory not empty: '/root/results/tmp-checkpoint-s0yubqtr' "
        "-> '/root/results/checkpoint-50'",
        "zy_evalloop/023-mm-eureka-grpo-checkpoint-rename-directory-not-empty.log",
    ),
    (
        "net.efa",
        "Libfabric error: (-12) Cannot allocate memory",
        "d_infra/010-awsome-efa-libfabric-memlock.log",
    ),
    (
        "nccl.net_plugin",
        "10.0.87.143: 10.0.87.143: ip-10-0-87-143:149:298 [5] register_mr_buffers:465 NCCL WARN "
        "NET/OFI Unable to register memory (type = 1) for device 0. RC: 12, Error: Cannot "
        "allocate memory",
        "zzh_hwforum/004-nccl-ofi-moe-alltoall-unable-to-register-memory.log",
    ),
    (
        "gpu.not_ready",
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
        "functions before calling NumCudaDevices() that might have already set an error? Error "
        "802: system not yet initialized",
        "f_infra/002-hfjobs-h200-error-802.log",
    ),
    (
        "fs.checkpoint_short",
        "RuntimeError: [enforce fail at ..\\caffe2\\serialize\\inline_container.cc:300] . "
        "unexpected pos 6057217600 vs 6057217496",
        "f_torch/010-dreambooth-sd-checkpoint-save-memoryerror.log",
    ),
    (
        "nccl.invalid_usage",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/Proces"
        "sGroupNCCL.cpp:1691, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version "
        "2.19.3",
        "g_comms/007-dfine-duplicate-gpu.log",
    ),
    (
        "net.clock_skew",
        "botocore.exceptions.ClientError: An error occurred (RequestTimeTooSkewed) when calling "
        "the PutObject operation: The difference between the request time and the server's time "
        "is too large.",
        "g_ops/011-deepracer-s3-request-time-too-skewed.log",
    ),
    (
        "net.ray_gcs",
        "[2025-02-16 16:05:55,537 E 350061 350061] gcs_rpc_client.h:179: Failed to connect to GCS"
        " at address 172.23.15.13:20000 within 5 seconds.",
        "h_launch/002-tinyzero-ray-gcs-timeout.log",
    ),
    (
        "host.dataloader_exited",
        "RuntimeError: DataLoader worker (pid(s) 2535, 2850, 3039, 3228, 3354, 3480, 4498, 4561, "
        "4687, 5128, 6267, 6708, 6771, 6897, 6960, 7212, 7275, 7338, 7464, 7590, 7905, 8913, 9039"
        ", 9165, 9354, 10425) exited unexpectedly",
        "h_python/010-flowformer-dataloader-worker-exited.log",
    ),
    (
        "data.empty",
        "ValueError: num_samples should be a positive integer value, but got num_samples=0",
        "d_hf/006-fast-sd-dreambooth-num-samples-0.log",
    ),
    (
        "data.missing_file",
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/wav8k/min/train-360'",
        "zzzx_seprepos/001-asteroid-convtasnet-librimix-train-dir-missing.log",
    ),
    (
        "numerical.fid",
        "ValueError: Imaginary component 0.029058187570152688",
        "zzzy_motionrepos/003-momask-fid-imaginary-component.log",
    ),
    (
        "data.sample_larger",
        '    raise ValueError("Sample larger than population or is negative")',
        "zzzzc_fewshotrepos/010-meta-sr-prototypical-sample-larger-than-population.log",
    ),
    (
        "data.empty_stack",
        "RuntimeError: stack expects a non-empty TensorList",
        "zzzq_metarepos/006-patnet-empty-val-stack.log",
    ),
    (
        "code.device_string",
        "RuntimeError: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, "
        "ve, ort, mps, xla, lazy, vulkan, meta, hpu, privateuseone device type at start of device "
        "string: GPU",
        "zzzze_serrepos/002-cogmen-train-device-string-gpu.log",
    ),
    (
        "data.all_masked",
        "ZeroDivisionError: Unsloth: All labels in your dataset are -100. Training losses will be "
        "all 0.",
        "zzg_swift/011-unsloth-gemma3-train-on-responses-only-all-labels-masked.log",
    ),
    (
        "data.silent_audio",
        "NoUtterancesError: b'No utterances detected'`",
        "zzzx_seprepos/006-dnn-se-tutorial-validation-pesq-no-utterances.log",
    ),
    (
        "code.image_tokens",
        "[rank1]: ValueError: Image features and image tokens do not match: tokens: 2005, features"
        " 2695",
        "c_llm/041-llamafactory-qwen25vl-image-token-mismatch.log",
    ),
    (
        "code.shell",
        "**/pai/bootstrap/docker_bootstrap.sh: line 169: cd: tools: No such file or directory**",
        "e_cluster/010-openpai-job-cd-no-such-dir.log",
    ),
    (
        "accel.runtime_error",
        "RuntimeError: InnerRun:/home/test2/pytorch/torch_npu/csrc/framework/OpParamMaker.cpp:203 "
        "NPU error, error code is 500002",
        "j_forum/006-torch-npu-bert-embeddingdensegrad-no-kernel.log",
    ),
    (
        "code.no_gpu",
        "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
        None,
    ),
    (
        "ray.actor_init_error",
        "ray.exceptions.ActorDiedError: The actor died because of an error raised in its "
        "creation task, ray::RolloutManager.__init__() (pid=918378, ip=10.209.8.134)",
        None,
    ),
    (
        "fs.tensorstore",
        'ValueError: FAILED_PRECONDITION: Error writing local file "/home/oeberhard/laurel/dat/ru'
        "ns/test/working_directories/1/actor_params.orbax-checkpoint-tmp-1695894959581296/_shardi"
        'ng": Failed to acquire lock on file: /home/oeberhard/laurel/dat/runs/test/working_direct'
        "ories/1/actor_params.orbax-checkpoint-tmp-1695894959581296/_sharding.__lock [OS error: F"
        "unction not implemented] [source locations='tensorstore/kvstore/file/file_key_value_stor"
        "e.cc:676\\ntensorstore/kvstore/kvstore.cc:268']",
        "zf_tpu/012-tensorstore-orbax-save-nfs-lock-not-implemented.log",
    ),
    (
        "data.speech_features",
        "ValueError lilcom: Length of string was too short",
        "zg_speech/026-icefall-kespeech-lilcom-string-too-short.log",
    ),
    (
        "code.cloud_permission",
        '    "message": "service-495559152420@cloud-tpu.iam.gserviceaccount.com does not have s'
        'torage.objects.list access to xusongpei1995."',
        "zh_accel/022-dl4marco-bert-colab-tpu-gcs-403-tpu-service-account.log",
    ),
    (
        "sched.container_start",
        "[ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1",
        "zc_os/016-enroot-selinux-nvidia-hook-capability.log",
    ),
    (
        "code.xformers_dispatch",
        "xFormers wasn't build with CUDA support",
        "zz_diffusion/004-everydream2-xformers-no-cuda-at-sampling.log",
    ),
    (
        "code.gpu_library",
        "  (0) UNIMPLEMENTED:  DNN library is not found.",
        "zb_jax/028-car-keras-dnn-library-not-found.log",
    ),
    (
        "sim.physx_launch",
        "2025-07-03 08:02:38 [25,844ms] [Error] [omni.physx.plugin] PhysX error: GPU "
        "convexCoreConvexNphase_Kernel fail to launch!!",
        "zn_robotics/002-leggedlab-physx-kernels-fail-to-launch-gpu-memory-busy.log",
    ),
    (
        "sim.physx_capacity",
        "2022-06-08 12:23:10 [191,143ms] [Error] [omni.physx.plugin] PhysX error: The application "
        "needs to increase PxgDynamicsMemoryConfig::totalAggregatePairsCapacity to 4120 , "
        "otherwise, the simulation will miss interactions",
        "zn_robotics/001-omniisaacgymenvs-ant-physx-total-aggregate-pairs-capacity.log",
    ),
    (
        "code.no_op_kernel",
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: No OpKernel was registered "
        "to support Op 'NcclAllReduce' used by {{node Adam/NcclAllReduce}}with these attrs: "
        '[reduction="sum", shared_name="c1", T=DT_FLOAT, num_devices=4]',
        "zn_tfkeras/021-tf-windows-mirroredstrategy-no-opkernel-ncclallreduce.log",
    ),
    (
        "code.fs_scheme",
        "It says: Error recorded from training_loop: File system scheme '[local]' not implemented "
        "(file: '/tmp/tmpUUrctt/model.ckpt-0_temp_3546763fe0ab4b32a5353eb8f190192c')",
        "zn_tfkeras/028-tf-models-od-tpu-local-model-dir-filesystem-scheme-local.log",
    ),
    (
        "data.molecule",
        "rdkit.Chem.rdchem.AtomValenceException: Explicit valence for atom # 3 C, 5, is greater "
        "than permitted`",
        "zo_bio/008-molshap-train-onehot-atom-valence-exception.log",
    ),
    (
        "cuda.sanitizer",
        "Training~Epoch 01: 375it [04:27,  1.36it/s]========= Invalid __shared__ read of size 4 "
        "bytes",
        "zo_gnn/021-graphbolt-hetero-rgcn-cusparse-csr2csc-invalid-shared-read.log",
    ),
    (
        "code.dtype_unsupported",
        "RuntimeError: cuFFT only supports dimensions whose sizes are powers of two when computing "
        "in half precision, but got a signal size of[192]",
        "zp_timeseries/010-time-series-library-amp-rfft-half-precision-non-power-of-two.log",
    ),
    (
        "python.resource_exhausted",
        "ResourceExhaustedError: ",
        "d_hf/018-paddlenlp-llama-4090-oom.log",
    ),
    (
        "mpi.ucx",
        "pynemo/0 [gcp5-sdc-3:1950659] pml_ucx.c:477  Error: Failed to resolve UCX endpoint for "
        "rank 0",
        "zl_rl/019-nemo-aligner-ppo-multinode-ucx-connect-refused-segfault.log",
    ),
    (
        "code.objective_value",
        "`[W 2021-02-05 19:14:13,487] Trial 0 failed, because the value None could not be cast to "
        "float.`",
        "zr_hpo/004-optuna-keras-trial0-objective-returned-none.log",
    ),
    (
        "code.libtpu_mismatch",
        "F ./tensorflow/compiler/xla/stream_executor/tpu/tpu_library_init_fns.inc:73] "
        "TpuNodeContext_StopChipHeartbeats not available in this library.",
        "zm_jax/011-whisper-jax-kaggle-tpu-libtpu-stopchipheartbeats.log",
    ),
    (
        "code.glibc",
        "/home/user/SMAC/StarCraftII/Versions/Base75689/SC2_x64: /lib64/libc.so.6: version "
        "`GLIBC_2.18' not found (required by /home/user/SMAC/StarCraftII/Libs/libstdc++.so.6)",
        None,  # (zr_gamerl/006's line, its paths shortened)
    ),
    (
        "fs.sqlite",
        "sqlite3.OperationalError: database is locked",
        "zr_hpo/007-rltrader-optuna-32-jobs-sqlite-database-is-locked.log",
    ),
    (
        "xla.gpu_autotuner",
        "2025-04-23 20:35:34.618070: F external/xla/xla/service/gpu/autotuning/"
        "gemm_fusion_autotuner.cc:1099] Non-OK-status: executable.status()",
        "zm_jax/018-mujoco-playground-ppo-xla-autotuner-fatal.log",
    ),
    (
        "tpu.fatal_program",
        "6x2x0_SC1: *** A program or fatal error occurred, all pending programs will fail, and "
        "results may be corrupted. This is likely an XLA compiler bug or your job hit a bad TPU "
        "hardware.",
        None,  # (za_hw/020's line, cut after its first sentences)
    ),
    (
        "nccl.nvshmem",
        "/dvs/p4/build/sw/rel/gpgpu/toolkit/r13.0/main_nvshmem/src/modules/transport/ibgda/"
        "ibgda.cpp:2234: NULL value Unable to create ah.",
        "zt_nccl26/002-megatron-bridge-kimi-k2-b300-nvshmem-ibgda-init-fail.log",
    ),
    (
        "code.ggml_assert",
        'GGML_ASSERT: llama.cpp/examples/finetune/finetune.cpp:646: false && "TODO: '
        'ggml_flash_attn_ext() not yet supported"',
        "zt_mlx/016-llama-cpp-finetune-flash-attn-ext-not-supported.log",
    ),
    (
        "code.blas_threads",
        "BLAS : Program is Terminated. Because you tried to allocate too many memory regions.",
        "zr_hpo/020-autogluon-tabular-knn-bag-l2-blas-too-many-memory-regions.log",
    ),
    (
        "hang.tf_create_session",
        "2021-01-28 14:33:25,918 [INFO] root: [/stdout-job-tf-distr-ps-aks-1611843855-90f5db13-"
        "worker-0.log] 2021-01-28 14:33:24.599056: I tensorflow/core/distributed_runtime/"
        "master.cc:267] CreateSession still waiting for response from worker: /job:ps/replica:0/"
        "task:0",
        "zl_orchestration/008-azureml-aks-tf-parameter-server-createsession-waiting.log",
    ),
    (
        "code.openmp_duplicate",
        # (after the progress bar it broke off)
        "  0%|" + " " * 92 + "| 0/3 [00:00<?, ?it/s]OMP: Error #15: Initializing "
        "libiomp5md.dll, but found libiomp5md.dll already initialized.",
        "zzd_vision/013-yolov7-tiny-windows-omp-error15-libiomp5md.log",
    ),
    (
        "code.locale_encoding",
        "UnicodeDecodeError: 'gbk' codec can't decode byte 0xa2 in position 2127: illegal "
        "multibyte sequence",
        "zy_wsl/007-bilstm-cnn-crf-windows-gbk-decode-embeddings.log",
    ),
    (
        "code.dll_load",
        "Error running job: [WinError 126] The specified module could not be found. Error "
        'loading "D:\\ai-toolkit\\venv\\lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its '
        "dependencies.",
        "zy_wsl/015-ai-toolkit-windows-fbgemm-dll-winerror-126.log",
    ),
    (
        "net.gloo_device",
        "RuntimeError: GlooDeviceFactory::makeUVDevice(): interface or hostname can't be empty",
        "zy_wsl/017-applio-windows-gloo-uvdevice-empty-hostname.log",
    ),
    (
        "code.backend_unsupported",
        "RuntimeError: Function argument device_ids not supported for the selected backend gloo",
        "zy_wsl/019-gold-yolo-windows-gloo-device-ids-not-supported.log",
    ),
    (
        "host.tf_cpu_oom",
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating "
        "tensor with shape[1,500,500,512] and type float on /job:localhost/replica:0/task:0/"
        "device:CPU:0 by allocator cpu",
        "zj_mixed/014-tf-mobilenet-unet-cpu-allocator-oom-4gb-ram.log",
    ),
    (
        "code.device_ordinal",
        "RuntimeError: CUDA error: invalid device ordinal",
        "zy_container/015-lasr-docker-optimize-invalid-device-ordinal.log",
    ),
    (
        "sched.prolog_failed",
        "salloc: Prolog failure on node k003-006",
        "zzk_gpuhw/005-hpcfund-prolog-failure-drain.log",
    ),
    (
        "cuda.oom_hint",
        "Hint: If you want to see a list of allocated tensors when OOM happens, add "
        "report_tensor_allocations_upon_oom to RunOptions for current allocation info.",
        "zzl_forums/001-mlwic2-tf-cpu-allocator-oom.log",
    ),
    (
        "net.gloo_address",
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] rp "
        "!= nullptr. Unable to find address for: dgx-1.ai",
        "zzk_cloudnet/001-pipedream-gloo-hostname-unresolvable.log",
    ),
    (
        "python.path_message",
        "[Errno 2] No such file or directory: 'llama_13b_pp/global_step001/zero_pp_rank_0_mp_rank_"
        "03_optim_states.pt'",
        "zzk_ckpt/003-transpeeder-missing-zero-optim-states.log",
    ),
    (
        "mpi.fabric",
        "[1] [1] MPI startup(): ofi fabric is not available and fallback fabric is not enabled",
        "zzb_hpcdocs/006-intel-mpi-ofi-psm2-hfi-open-fail-caffe-slurm.log",
    ),
    (
        "mpi.truncated",
        "MPI_Waitany, MPI error 782: Message truncated, error stack:",
        "zy_horovod/015-cntk-dataparallelsgd-lmsequencereader-mpi-waitany-truncated.log",
    ),
    (
        "mpi.init_failed",
        "It looks like orte_init failed for some reason; your parallel process is",
        "zy_horovod/010-spinningup-ppo-mpi4py-orte-init-failed-executable-not-found.log",
    ),
    (
        "mpi.error",
        "[g2-nasp:24252] *** An error occurred in MPI_Reduce",
        "zy_horovod/018-pytorch-mpi-backend-two-node-mpi-reduce-invalid-root.log",
    ),
    (
        "code.script_missing",
        "## python: can't open file '../exc/train_mpi.py': [Errno 2] No such file or directory",
        "zy_horovod/014-theano-mpi-run-script-train-file-not-found.log",
    ),
    (
        "code.arrow_batch",
        "pyarrow.lib.ArrowInvalid: offset overflow while concatenating arrays",
        "zy_preproc/013-xtuner-process-untokenized-datasets-arrow-offset-overflow.log",
    ),
    (
        "code.shared_tensors",
        "            Some tensors share memory, this will lead to duplicate memory on disk and "
        "potential differences when loading them again: [{'language_model.lm_head.weight', "
        "'language_model.model.embed_tokens.weight'}].",
        "zu_ckpt/011-gemma3-objdet-save-shared-tensors-error.log",
    ),
    (
        "code.ckpt_dir_not_shared",
        "1. Error on ps-1: **Not found: /train_dir/model.ckpt-0_temp_"
        "5fcd97c881a7428db8eded829b964618/part-00000-of-00002.index**",
        "zy_fsmount/013-tf-k8s-ps-checkpoint-train-dir-not-shared.log",
    ),
    (
        "fs.compile_cache_race",
        "[rank19]: torch._inductor.exc.InductorError: OSError: [Errno 16] Device or resource bu"
        "sy: '/root/.triton/cache/XU5DT2AO5BD5AEHEYGLPP5LRDFHHCUEJT4LGDVLB4STXUGVGHFPA/tmp.pid_"
        "2017351_5ceba13f-250d-4cf2-8c97-dce42fc6cd3a/cuda_utils.cpython-310-x86_64-linux-gnu.s"
        "o' -> '/root/.triton/cache/XU5DT2AO5BD5AEHEYGLPP5LRDFHHCUEJT4LGDVLB4STXUGVGHFPA/cuda_u"
        "tils.cpython-310-x86_64-linux-gnu.so'",
        "zc_os/015-pytorch-triton-cache-shared-fs-device-busy.log",
    ),
    (
        "fs.locks_unsupported",
        "OSError: [Errno 37] No locks available",
        "zc_os/009-datasets-nfs-no-locks-available.log",
    ),
    (
        "hang.xla_mesh_master",
        "`2020-05-28 11:50:27 10.164.15.200 [1] 2020-05-28 11:50:27.058553: I    7449 "
        "tensorflow/compiler/xla/xla_client/mesh_service.cc:208] Waiting to connect to client "
        "mesh master (300 seconds) 10.164.15.199:8477`",
        "zzg_maxtext/003-torch-xla-tpu-pod-mp-imagenet-waiting-mesh-master.log",
    ),
    (
        "hang.nccl_ras_mismatch",
        "#0-0 (fa93daea854b060b) MISMATCH",
        "zzz_distscale/005-nccl-ras-allgather-opcount-mismatch-hang.log",
    ),
    (
        "gloo.transport_enforce",
        # (the message of zq_fed/013's C++ exception, as the engine reads it out of libc++abi's
        # `terminating due to uncaught exception of type ...`; test_verdict has the whole line)
        "gloo::EnforceNotMet: [enforce fail at /Users/runner/work/pytorch/pytorch/pytorch/"
        "third_party/gloo/gloo/transport/uv/pair.cc:248] op.nread == op.preamble.nbytes. ",
        None,
    ),
    (
        "cuda.nvml_function",
        'File "/home/mkhan/generic_loss/fastdvdnet/dataloaders.py", line 118, in init '
        'self.pipeline.build() File "/opt/conda/lib/python3.6/site-packages/nvidia/dali/'
        'pipeline.py", line 660, in build self._pipe.Build(self._names_and_devices) RuntimeError: '
        "nvml error: 13 Local version of NVML doesn't implement this function",
        "zzzzi_vsrrepos/003-fastdvdnet-dali-nvml-error-13.log",
    ),
    (
        "data.id_range",
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: indices[32,70] = 91604 is "
        "not in [0, 91604)",
        "zzzzj_qarepos/007-rnet-embedding-lookup-index-out-of-range.log",
    ),
    (
        "data.template_mismatch",
        "WARNING: tokenization mismatch: 385 vs. 399. (ignored)",
        "zzzzzn_llavaforksrepos/002-llava-v16-34b-tokenization-mismatch.log",
    ),
    (
        "data.series_short",
        "AssertionError: no valid patch size candidates for time series shape: (6, 48), freq: H, "
        "patch_sizes: [8, 16, 32, 64, 128], constraints: range(32, 33), min_time_patches: 2, "
        "patch_size_ceil: 24",
        "zzzzzn_tsfm26repos/002-uni2ts-no-valid-patch-size-short-series.log",
    ),
    (
        "data.random_range",
        "ValueError: empty range for randrange() (0,-60, -60)",
        "zzzzj_enhancerepos/002-enlightengan-randrange-crop-larger-than-image.log",
    ),
    (
        "code.generator_stop",
        "RuntimeError: generator raised StopIteration`",
        "zzzzj_enhancerepos/006-colorizing-with-gans-generator-raised-stopiteration.log",
    ),
    (
        "data.placeholder_file",
        "_pickle.UnpicklingError: invalid load key, '<'.",
        "zzzzzj_notwhatrepos/002-fast-neural-style-vgg-weights-html.log",
    ),
    (
        "cuda.cudnn_version",
        "Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled "
        "with 5105 (compatibility version 5100).  If using a binary install, upgrade your CuDNN "
        "library to match.  If building from sources, make sure the library loaded at runtime "
        "matches a compatible version specified during compile configuration.",
        "zzzzzj_envvarrepos/001-tensorflow-old-cudnn-dll-on-path.log",
    ),
    (
        "code.external_tool",
        "subprocess.CalledProcessError: Command '['git', 'rev-parse', '--short', 'HEAD']' returned "
        "non-zero exit status 128.",
        "zzzzzj_exttoolrepos/006-maskpls-git-rev-parse-not-a-git-repo.log",
    ),
    (
        "sched.time_limit_final",
        "submitit.core.utils.UncompletedJobError: Job not requeued because: timed-out and not "
        "checkpointable.",
        "zzzzzj_timelimitrepos/001-cc-net-submitit-timed-out-not-checkpointable.log",
    ),
    (
        "code.headless_render",
        "OpenGL.raw.EGL._errors.EGLError: EGLError(",
        "zzzzzk_renderrepos/001-robomimic-egl-not-initialized-train-exit.log",
    ),
    (
        "net.hub_gated",
        "OSError: You are trying to access a gated repo.",
        "zzzzzj_hubdownrepos/002-tinyllava-openelm-gated-llama2-401.log",
    ),
    (
        "net.download_checksum",
        "AssertionError: Checksum from dl.fbaipublicfiles.com/mmf/data/datasets/textvqa/defaults/"
        "features.tar.gz does not match the expected checksum. Please try again.",
        "zzzzzj_hubdownrepos/001-mmf-textvqa-features-checksum-mismatch.log",
    ),
]


def test_messages_cover_every_cause_rule(kb: Knowledge) -> None:
    ids = [rid for rid, _, _ in MESSAGES]
    assert len(ids) == len(set(ids))
    assert set(ids) == {r.id for r in kb.rules if r.role == "cause"}


@pytest.mark.parametrize(
    ("source", "line"), [(src, line) for _, line, src in MESSAGES if src is not None]
)
def test_messages_are_quoted_from_the_corpus(source: str, line: str) -> None:
    assert line in (CORPUS / source).read_text("utf-8").splitlines()


@pytest.mark.parametrize(("rule_id", "line"), [(rid, line) for rid, line, _ in MESSAGES])
def test_real_message_matches_its_rule(kb: Knowledge, rule_id: str, line: str) -> None:
    hit = kb.match(anatomy(line).body)
    assert hit is not None
    assert hit[0].id == rule_id


@pytest.mark.parametrize(("rule_id", "line"), [(rid, line) for rid, line, _ in MESSAGES])
def test_real_message_passes_the_prefilter(rule_id: str, line: str) -> None:
    low = line.lower().encode()
    assert any(nd in low for nd in NEEDLES + RARE_NEEDLES), rule_id


@pytest.mark.parametrize(
    ("rule_id", "line"),
    [
        ("segfault.sigill", "Illegal instruction (core dumped)"),
        (
            "gpu.lost",
            "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot "
            "the system to recover this GPU",
        ),
    ],
)
def test_common_shell_and_smi_messages_pass_the_prefilter(
    kb: Knowledge, rule_id: str, line: str
) -> None:
    hit = kb.match(anatomy(line).body)
    assert hit is not None and hit[0].id == rule_id
    low = line.lower().encode()
    assert any(nd in low for nd in NEEDLES + RARE_NEEDLES)


def test_mlx5_port_module_error_matches(kb: Knowledge) -> None:
    line = (
        "[ 8812.416223] mlx5_core 0000:3b:00.0: Port module event[error]: module 0, Cable error, "
        "Bus stuck (I2C or data shorted)"
    )
    hit = kb.match(anatomy(line).body)
    assert hit is not None and hit[0].id == "net.infiniband_link"


def test_xid_match_names_the_code_and_the_gpu(kb: Knowledge) -> None:
    hit = kb.match("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.")
    assert hit is not None
    rule, m = hit
    assert rule.id == "gpu.xid"
    assert (m["xid"], m["gpu"]) == ("79", "0000:3b:00")
    assert kb.xid[int(m["xid"])].category is Category.GPU_HARDWARE


def test_scheduler_rule_names_the_host(kb: Knowledge) -> None:
    hit = kb.match(
        "slurmstepd: error: *** JOB 1234567 ON gpu-017 CANCELLED AT 2024-03-02T10:11:12 DUE TO "
        "NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***"
    )
    assert hit is not None
    assert hit[1]["host"] == "gpu-017"


def test_no_rule_matches_a_step_line(kb: Knowledge) -> None:
    assert kb.match("step 120 | loss 2.314 | lr 3.0e-04 | 91234 tok/s") is None


@pytest.mark.parametrize(
    "line",
    [
        # from reviews of the rules: words of newer rules in lines that do not mean the failure
        # (an INFO line of a backend JAX does without, a VM's empty floppy, CD or loop device at
        # boot, a pty's EIO, inotify's and file watchers' limits, retries that go on, Slurm's
        # controller busy or a step already ending, optional extensions' warnings, the
        # interpreter's start-up and locale, XLA's and torch.load's warnings, a
        # fallback that goes on, the word `pipeline`)
        "I0820 21:51:52.172535 140 xla_bridge.py:345] Unable to initialize backend 'rocm': "
        'NOT_FOUND: Could not find registered platform with name: "rocm"',
        "[    5.123456] blk_update_request: I/O error, dev fd0, sector 0",
        "[    5.123460] Buffer I/O error on dev fd0, logical block 0, async page read",
        "[    7.2] I/O error, dev loop3, sector 0 op 0x0:(READ) flags 0x80700",
        "OSError: [Errno 28] inotify watch limit reached",
        "Error: ENOSPC: System limit for number of file watchers reached, watch '/data'",
        "Fatal Python error: config_get_locale_encoding: failed to get the locale encoding: "
        "nl_langinfo(CODESET) failed",
        "srun: error: Unable to allocate resources: Job/step already completing or completed",
        "E0101 exec.go:80] Error from exec: read /dev/ptmx: input/output error",
        "error reading from pty: read /dev/pts/12: input/output error",
        "W0101 12:00:00.000000 1 gemm_algorithm_picker.cc:254] Failed to find best cuBLAS "
        "algorithm, GEMM performance might be suboptimal: INTERNAL: All algorithms tried for "
        "%cublas-gemm.1 failed.",
        "FutureWarning: You are using `torch.load` with `weights_only=False` (the current default "
        "value), which uses the default pickle module implicitly.",
        'level=error msg="failed to create fsnotify watcher: inotify_add_watch /etc/config: no '
        'space left on device"',
        "WARNING:google.api_core.retry:Retrying due to 429 The object exceeded the rate limit for "
        "object mutation operations (create, update, and delete).",
        "DEBUG:botocore.retryhandler:Retry needed, retrying request after delay of: 0.5 "
        "(SlowDown) when calling the PutObject operation",
        "srun: error: Unable to allocate resources: Socket timed out on send/recv operation",
        "salloc: error: Unable to allocate resources: Unable to contact slurm controller "
        "(connect failure)",
        "/usr/local/lib/python3.10/dist-packages/torchvision/io/image.py:13: UserWarning: Failed "
        "to load image Python extension: '/usr/local/lib/python3.10/dist-packages/torchvision/"
        "image.so: undefined symbol: _ZN3c1017RegisterOperatorsD1Ev'If you don't plan on using "
        "image functionality from `torchvision.io`, you can ignore this warning.",
        "Fatal Python error: init_import_site: Failed to import the site module",
        "Fatal Python error: could not acquire lock for <_io.BufferedWriter name='<stderr>'> at "
        "interpreter shutdown, possibly due to daemon threads",
        "WARNING:root:Trainer.__init__() got an unexpected keyword argument 'tokenizer'; "
        "retrying with processing_class",
        "broken pipeline stage 2 skipped",
        'ts=2024-01-01T10:00:00Z caller=scrape.go:1400 level=warn component="scrape manager" '
        'msg="Scrape failed" err="Get \\"http://10.0.0.5:9400/metrics\\": dial tcp '
        '10.0.0.5:9400: i/o timeout"',
        # the interpreter's lock on stderr at shutdown, daemon threads still writing as the
        # process exits after something else
        "Fatal Python error: _enter_buffered_busy: could not acquire lock for "
        "<_io.BufferedWriter name='<stderr>'> at interpreter shutdown, possibly due to daemon "
        "threads",
        # a tracker retrying, as it does in healthy runs
        "wandb: Network error (ReadTimeout), entering retry loop.",
        "wandb: Network error (ConnectTimeout), entering retry loop.",
        # a config dump's timeouts
        "  ReadTimeout: 300",
        "http_client: {ConnectTimeout=10, ReadTimeout=60}",
        # ibstat's and rdma's listing of a healthy node's unused port
        "Physical state: Polling",
        "link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0 state DOWN "
        "physical_state POLLING",
        # vLLM without pynccl, as it is on a CPU: it goes on
        "(VllmWorker rank=3 pid=44710) ERROR 08-20 09:48:31 [pynccl_wrapper.py:229] Failed to load "
        "NCCL library from /root/nccl/build/lib/libnccl.so.2.21.5. It is expected if you are not "
        "running on NVIDIA/AMD GPUs.",
        # a word that only looks like a shell's report
        "Killed: 0 stale workers, 12 alive",
        "Aborted: 0",
        # a metric logger's healthy running average, and a best value's starting infinity
        "Epoch: [3]  [ 100/1251]  eta: 0:09:22  lr: 0.000567  loss: 0.4651 (0.4644)  grad_norm: "
        "0.0263 (1.5361)",
        "Validation  best_loss: 0.5121 (inf)",
        # a CPU-only run's CUDA probe, which goes on without a GPU
        "2023-11-02 10:01:12.123456: E tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc"
        ":268] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
        # an AWS call other than the job's own
        "botocore.exceptions.ClientError: An error occurred (ValidationException) when calling the "
        "InvokeModel operation: Input is too long for requested model.",
        # NNCF's warning that it falls back and goes on; a traceback's statement pasted flat
        "Could not compile CPU quantization extensions. Falling back on torch native operations - "
        "CPU quantization fine-tuning may be slower",
        "raise ResourceExhaustedError",
        # a TensorFlow-derived allocator's warning that its retry may still succeed
        "W itex/core/devices/bfc_allocator.cc:101] Allocator ran out of memory trying to allocate "
        "1.20GiB with freed_by_count=0. The caller indicates that this is not a failure, but may "
        "mean that there could be performance gains if more memory were available.",
        # Gloo's transport refused a connection: the network's, not Gloo's own check
        "terminate called after throwing an instance of 'gloo::EnforceNotMet' what(): [enforce "
        "fail at third_party/gloo/gloo/transport/tcp/pair.cc:446] false. Connection refused",
        # UCX's start-up ERROR lines that a job survives; a trainer skipping an empty batch;
        # Kaldi nnet3's warning that it recovered; rlpyt's empty statistics before learning starts
        "[node-1:31:0] sys.c:619 UCX  ERROR shmget(size=4263936 flags=0x7b0) for mm_recv_desc "
        "failed: Operation not permitted",
        "WARNING - No valid samples in this batch => skipping update.",
        "Task 'x' has no valid samples in this batch. Skipping",
        "WARNING (nnet3-train:ReorthogonalizeRt1():natural-gradient-online.cc:250) Cholesky out "
        "of expected range, reorthogonalizing with Gram-Schmidt",
        "2020-12-08 21:40:40.870736  | value_loss/Average              nan",
        "| eprewmean          | nan          |",  # baselines, before the first episode ends
        "| 3    | nan      |",
        # a per-class IoU printed for a class the validation set lacks; a metric's column before
        # its first evaluation; YOLACT skipping a step on purpose; a GRPO trainer's KL at NaN
        # (beta=0); DeepSpeed probing whether async_io could be built
        "2 nan",
        "2     nan",
        " 3  0.8123  nan",
        "1  0.412345  0.401  nan  00:12",
        "Warning: Moving average ignored a value of inf",
        "{'loss': 1.23, 'reward': 0.4, 'kl': nan, 'epoch': 0.1}",
        '{"loss": 0.0374, "grad_norm": 0.0061, "reward": 1.55, "kl": NaN, "epoch": 0.46}',
        "/usr/bin/ld: cannot find -laio: No such file or directory",
        "/usr/bin/ld: cannot find -lcufile: No such file or directory",
        # ggml's assert on a CUDA call (the CUDA error's rules say more)
        'GGML_ASSERT: ggml-cuda.cu:1234: !"CUDA error"',
        # XLA's autotuner at work (a warning)
        "2025-02-28 15:59:06.281591: W external/xla/xla/service/gpu/autotuning/"
        "gemm_fusion_autotuner.cc:1035] Compiling 113 configs for 27 fusions on a single thread.",
        # an AutoML tool's own time budget for one model, not the scheduler's
        "        Time limit exceeded... Skipping ExtraTreesEntr_BAG_L2.",
        # USD missing a local asset (the config's, no network's)
        "[Warning] [omni.usd] Warning: in _ReportErrors at line 2890 of stage.cpp -- In </World/"
        "Robot>: Could not open asset @/home/user/assets/go2.usd@ for reference introduced by "
        "@anon:0x6a8a0e0:World0.usd@</World/Robot>.",
        # npm's error word (a web dashboard's build), nvidia-smi's healthy row, a login shell's
        # dotfiles it reads and goes on after
        "npm ERR! code ELIFECYCLE",
        "/home/alice/.bashrc: line 118: syntax error near unexpected token `('",
        "/opt/conda/etc/profile.d/conda.sh: line 55: PS1: unbound variable",
        "| 30%   51C    P2            61W /  250W |    2289MiB /  22528MiB |      0%      "
        "Default |",
    ],
)  # fmt: skip
def test_healthy_or_other_lines_near_the_new_words_match_no_rule(kb: Knowledge, line: str) -> None:
    hit = kb.match(anatomy(line).body)
    assert hit is None or hit[0].role != "cause", hit and hit[0].id


# -- parse_rules ---------------------------------------------------------------------------------


def test_parse_rules_defaults() -> None:
    rules, xids = parse_rules(rule_toml(patterns="'link down'"), "team.toml")
    assert xids == {}
    (r,) = rules
    assert isinstance(r, Rule)
    assert (r.id, r.category, r.role, r.transient, r.suspect) == (
        "team.x",
        Category.NETWORK,
        "cause",
        None,
        "unknown",
    )
    assert [p.pattern for p in r.patterns] == ["link down"]  # a single string is a list of one
    assert r.precedence == PRECEDENCE[Category.NETWORK]
    assert r.confidence == 0.9
    assert not r.set_up_only and not r.advises and not r.raised_only
    assert r.origin == "team.toml"


def test_parse_rules_reads_every_key() -> None:
    text = rule_toml(
        role='"consequence"',
        transient='"unknown"',
        suspect='"node"',
        precedence="77",
        confidence="0.25",
        explain='"  padded  "',
        min_count="3",
        set_up_only="true",
        advises='["cuda.oom", "team.y"]',
        raised_only="true",
    )
    (r,) = parse_rules(text, "team.toml")[0]
    assert (r.role, r.transient, r.suspect, r.precedence, r.confidence, r.min_count) == (
        "consequence",
        None,
        "node",
        77,
        0.25,
        3,
    )
    assert r.set_up_only and r.advises == ("cuda.oom", "team.y") and r.raised_only
    assert r.explain == "padded"
    (t,) = parse_rules(rule_toml(transient="true"), "t")[0]
    (f,) = parse_rules(rule_toml(transient="false"), "t")[0]
    assert (t.transient, f.transient) == (True, False)


def test_empty_rules_file() -> None:
    assert parse_rules("# nothing yet\n", "team.toml") == ([], {})


# -- bad rules files -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rule", "message"),
    [
        ("[[rule]\nid = 'x'\n", None, "not valid TOML"),
        ("[[rules]]\nid = 'x'\n", None, "unknown table(s) rules"),
        ("[settings]\nx = 1\n", None, "unknown table(s) settings"),
        (rule_toml(severity="3"), "team.x", "unknown key(s) severity"),
        (rule_toml(category='"gpu"'), "team.x", "category must be one of"),
        (rule_toml(category=""), "team.x", "category must be one of"),
        (rule_toml(role='"root"'), "team.x", "role must be one of cause, consequence, noise"),
        (rule_toml(transient='"maybe"'), "team.x", 'transient must be true, false or "unknown"'),
        (rule_toml(transient="1"), "team.x", "transient must be"),
        (rule_toml(suspect='"gremlins"'), "team.x", "suspect must be one of"),
        (rule_toml(patterns="['(unclosed']"), "team.x", "is not a valid regex"),
        (rule_toml(patterns="[]"), "team.x", "patterns must be a non-empty list"),
        (rule_toml(patterns=""), "team.x", "patterns must be a non-empty list"),
        (rule_toml(patterns="['']"), "team.x", "every pattern must be a non-empty string"),
        (rule_toml(patterns="[3]"), "team.x", "every pattern must be a non-empty string"),
        (rule_toml(explain=""), "team.x", "explain must be a non-empty string"),
        (rule_toml(explain='"   "'), "team.x", "explain must be a non-empty string"),
        (rule_toml(action=""), "team.x", "action must be a non-empty string"),
        (rule_toml(precedence='"high"'), "team.x", "precedence must be an integer"),
        (rule_toml(precedence="true"), "team.x", "precedence must be an integer"),
        (rule_toml(precedence="7.5"), "team.x", "precedence must be an integer"),
        (rule_toml(confidence="1.5"), "team.x", "confidence must be a number from 0 to 1"),
        (rule_toml(confidence="-0.1"), "team.x", "confidence must be a number from 0 to 1"),
        (rule_toml(confidence='"high"'), "team.x", "confidence must be a number from 0 to 1"),
        (rule_toml(min_count="0"), "team.x", "min_count must be a whole number from 1 to 8"),
        (rule_toml(min_count="9"), "team.x", "min_count must be a whole number from 1 to 8"),
        (rule_toml(min_count='"2"'), "team.x", "min_count must be a whole number from 1 to 8"),
        (rule_toml(min_count="true"), "team.x", "min_count must be a whole number from 1 to 8"),
        (rule_toml(set_up_only='"yes"'), "team.x", "set_up_only must be true or false"),
        (rule_toml(raised_only="1"), "team.x", "raised_only must be true or false"),
        (rule_toml(advises="true"), "team.x", "advises must be a list of rule ids"),
        (rule_toml(advises="[1]"), "team.x", "advises must be a list of rule ids"),
        (rule_toml(advises='[""]'), "team.x", "advises must be a list of rule ids"),
        (rule_toml() + rule_toml(id=""), "rule #2", "id must be a non-empty string"),
        ("rule = [1]\n", "rule #1", "each [[rule]] must be a table"),
        (rule_toml() + rule_toml(), "team.x", "rule id 'team.x' is used twice"),
        # an advice for a rule no file defines (a typo) would never be given
        (rule_toml(advises='["cuda.oom", "team.nope"]'), "team.x",
         "advises 'team.nope', which no rule file defines"),
        ("[[xid]]\ncode = 79\nname = 'x'\n", "xid 79", "missing key(s)"),
    ],
)
def test_bad_rules_file(tmp_path: Path, text: str, rule: str | None, message: str) -> None:
    path = tmp_path / "team-rules.toml"
    path.write_text(text, "utf-8")
    with pytest.raises(RulesError) as info:
        load_knowledge([path])
    said = str(info.value)
    assert said.startswith(f"{path}: "), said
    assert message in said
    if rule is not None:
        assert rule in said.split(": ")[1], said


def test_bad_xid_code(tmp_path: Path) -> None:
    entry = (
        "[[xid]]\ncode = -1\nname = 'n'\ncategory = 'gpu_hardware'\nrole = 'cause'\n"
        "transient = true\nsuspect = 'node'\nexplain = 'e'\naction = 'a'\n"
    )
    with pytest.raises(RulesError, match=r"xid -1: code must be a non-negative integer"):
        parse_rules(entry, "team.toml")


def test_missing_rules_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    with pytest.raises(RulesError, match="cannot read the rules file") as info:
        load_knowledge([path])
    assert str(path) in str(info.value)


def test_rules_file_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(rule_toml(explain='"caf\xe9"').encode("latin-1"))
    with pytest.raises(RulesError, match="cannot read the rules file") as info:
        load_knowledge([path])
    assert str(path) in str(info.value)


def test_rules_directory_is_no_file(tmp_path: Path) -> None:
    with pytest.raises(RulesError, match="cannot read the rules file"):
        load_knowledge([tmp_path])


def test_boolean_confidence_is_rejected() -> None:
    with pytest.raises(RulesError, match="confidence"):
        parse_rules(rule_toml(confidence="true"), "team.toml")


def test_duplicate_id_in_a_second_file_is_reported(tmp_path: Path) -> None:
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    first.write_text(rule_toml(), "utf-8")
    second.write_text(rule_toml() + rule_toml(), "utf-8")
    with pytest.raises(RulesError, match="used twice"):
        load_knowledge([first, second])


# -- team rules first ----------------------------------------------------------------------------

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.11 GiB of which 1.2 GiB is free."
)


def test_team_rules_are_tried_before_shipped_ones(tmp_path: Path, kb: Knowledge) -> None:
    path = tmp_path / "team.toml"
    path.write_text(
        rule_toml(
            "team.oom-on-a100-40g",
            category='"cuda_oom"',
            transient="false",
            suspect='"config"',
            patterns="['CUDA out of memory']",
            explain='"Our 40 GB A100s cannot hold this model at this batch size."',
        ),
        "utf-8",
    )
    shipped = kb.match(OOM)
    assert shipped is not None and shipped[0].id == "cuda.oom"
    team = load_knowledge([path])
    hit = team.match(OOM)
    assert hit is not None
    assert (hit[0].id, hit[0].origin) == ("team.oom-on-a100-40g", str(path))
    assert team.rules[0].id == "team.oom-on-a100-40g"
    assert [r.id for r in team.rules[1:]] == [r.id for r in kb.rules]


def test_team_rule_may_reuse_a_shipped_id(tmp_path: Path) -> None:
    path = tmp_path / "team.toml"
    path.write_text(
        rule_toml("cuda.oom", category='"cuda_oom"', patterns="['CUDA out of memory']"), "utf-8"
    )
    team = load_knowledge([path])
    hit = team.match(OOM)
    assert hit is not None
    assert (hit[0].id, hit[0].origin, hit[0].explain) == (
        "cuda.oom",
        str(path),
        "The switch flaps.",
    )


def test_team_files_are_tried_in_order(tmp_path: Path) -> None:
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    first.write_text(rule_toml("a.oom", patterns="['out of memory']"), "utf-8")
    second.write_text(rule_toml("b.oom", patterns="['CUDA out of memory']"), "utf-8")
    hit = load_knowledge([first, second]).match(OOM)
    assert hit is not None and hit[0].id == "a.oom"
    hit = load_knowledge([second, first]).match(OOM)
    assert hit is not None and hit[0].id == "b.oom"


def test_team_xid_overrides_the_shipped_entry(tmp_path: Path, kb: Knowledge) -> None:
    shipped = kb.xid[79]
    path = tmp_path / "team.toml"
    path.write_text(
        "[[xid]]\ncode = 79\nname = 'Fallen off the bus (our riser cards)'\n"
        "category = 'gpu_hardware'\nrole = 'cause'\ntransient = false\nsuspect = 'node'\n"
        "explain = 'On our racks this is always the riser card.'\n"
        "action = 'Open a hardware ticket for the riser; do not restart on this node.'\n",
        "utf-8",
    )
    team = load_knowledge([path])
    assert team.xid[79].name == "Fallen off the bus (our riser cards)"
    assert team.xid[79].transient is False
    assert team.xid[79] != shipped
    assert {c: x for c, x in team.xid.items() if c != 79} == {
        c: x for c, x in kb.xid.items() if c != 79
    }
    assert len(team.rules) == len(kb.rules)


def test_first_team_file_wins_for_an_xid(tmp_path: Path) -> None:
    def xid_file(name: str) -> Path:
        path = tmp_path / f"{name}.toml"
        path.write_text(
            f"[[xid]]\ncode = 999\nname = '{name}'\ncategory = 'gpu_hardware'\nrole = 'cause'\n"
            "transient = true\nsuspect = 'node'\nexplain = 'e'\naction = 'a'\n",
            "utf-8",
        )
        return path

    assert load_knowledge([xid_file("first"), xid_file("second")]).xid[999].name == "first"


# -- Knowledge.match -----------------------------------------------------------------------------


def test_match_returns_the_first_rule_in_order() -> None:
    text = (
        rule_toml("one", patterns="['boom']")
        + rule_toml("two", patterns="['boom', 'bang']")
        + rule_toml("three", patterns="['(?P<host>node-\\d+): bang']")
    )
    rules, _ = parse_rules(text, "t.toml")
    k = Knowledge(tuple(rules), {})
    hit = k.match("RuntimeError: boom bang")
    assert hit is not None and hit[0].id == "one"
    hit = k.match("node-7: bang")
    assert hit is not None and hit[0].id == "two"
    hit = Knowledge(tuple(reversed(rules)), {}).match("node-7: bang")
    assert hit is not None and hit[0].id == "three" and hit[1]["host"] == "node-7"
    assert k.match("all quiet") is None


def test_a_rule_searches_its_own_patterns() -> None:
    rules, _ = parse_rules(
        rule_toml("one", patterns="['boom']") + rule_toml("two", patterns="['x', 'bang']"), "t"
    )
    assert rules[0].search("bang", "bang") is None
    m = rules[1].search("bang", "bang")
    assert m is not None and m.group(0) == "bang"


@pytest.mark.parametrize(
    ("pattern", "hint"),
    [
        ("Watchdog caught collective", (("Watchdog caught collective",), False)),
        ("(?i)loss scale[^\\n]{0,40}below", (("loss scale",), True)),
        ("NCCL WARN (?P<x>Cuda) failure", (("NCCL WARN ",), False)),
        ("a|b", None),
        ("\\d+:a", None),
        ("\\d+: abc", ((": abc",), False)),
        # no run of three: the alternatives of a group every match goes through
        ("(?i)(?:exit|return) ?co", (("exit", "return"), True)),
        ("(?i)(?:exit|return) ?code", (("code",), True)),
        ("(?:^|\\s)(?:KeyError|TypeError)\\b", (("KeyError", "TypeError"), False)),
        ("Killed|Abort(?:ed)?", (("Killed", "Abort"), False)),
        ("(?:abc|de)f", None),  # `def` holds none of three characters
        ("(?:abc)?xy", None),  # an optional group is no evidence
        ("(?:abc|(?:def|ghi)+)", (("abc", "def", "ghi"), False)),
        ("(?:abc|(?:def|ghi)*)", None),
        # a run of three wins over any set
        ("(?:Killed|Terminated)abc", (("abc",), False)),
    ],
)
def test_required_literals(pattern: str, hint: tuple[tuple[str, ...], bool] | None) -> None:
    assert required_literals(pattern) == hint


@pytest.mark.parametrize(
    "pattern",
    [
        "(?i)(?:exit|return) ?co",
        "(?:^|\\s)(?:KeyError|TypeError)\\b",
        "Killed|Abort(?:ed)?",
        "(?:abc|(?:def|ghi)+)",
        "(?:Kill|Abort)(?:ed)?",
        "(?i)(?:kill|abort)ed|sigterm",
    ],
)
def test_every_match_holds_one_of_the_literals(pattern: str) -> None:
    rng = random.Random(pattern)
    alphabet = "abcdeghiKTkilxyz zRnurtEoAEr0123 \t"
    found = required_literals(pattern)
    texts = ["exit co", "RETURN CO", "x KeyError", "Killed", "ABORTED", "SigTerm", "defdef"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(3000)]
    rx = re.compile(pattern)
    for text in texts:
        if rx.search(text) is None:
            continue
        assert found is not None, pattern
        literals, lower = found
        assert any(t in (text.lower() if lower else text) for t in literals), (pattern, text)


def test_a_shipped_rules_prefilter_lets_each_of_its_patterns_through(kb: Knowledge) -> None:
    # `requires` skips a line without one of its words: a pattern whose every match holds none
    # of them (python.import's `undefined symbol: ` under requires = ["Error"]) never fires.
    for rule in kb.rules:
        for i, hint in enumerate(rule.hints):
            if not rule.requires or hint is None:
                continue
            texts, folded = hint
            words = [w.lower() if folded else w for w in rule.requires]
            source = rule.patterns[i].pattern  # (a word past the longest literal: NotFoundError)
            assert all(any(w in t for w in words) for t in texts) or any(
                w in source for w in words
            ), (rule.id, i, texts)


# -- transient by phase: before the first training step, or during training ---------------------


def test_a_rule_without_phase_keys_is_transient_the_same_either_way() -> None:
    rule = parse_rules(rule_toml(transient="true"), "team.toml")[0][0]
    assert rule.phase is None
    assert [rule.transient_given(p) for p in (None, False, True)] == [True, True, True]


def test_phase_keys_decide_transient_when_the_log_tells_the_phase() -> None:
    text = rule_toml(
        transient='"unknown"', transient_at_start="false", transient_in_training="true"
    )
    rule = parse_rules(text, "team.toml")[0][0]
    assert rule.phase == (False, True)
    assert rule.transient_given(None) is None  # the log does not say: the rule's own answer
    assert rule.transient_given(False) is False
    assert rule.transient_given(True) is True


def test_one_phase_key_leaves_the_other_phase_at_transient() -> None:
    rule = parse_rules(rule_toml(transient="true", transient_at_start="false"), "team.toml")[0][0]
    assert rule.phase == (False, True)


def test_a_bad_phase_value_is_rejected() -> None:
    with pytest.raises(RulesError, match="transient_at_start"):
        parse_rules(rule_toml(transient_at_start='"maybe"'), "team.toml")


@pytest.mark.parametrize(
    "rule_id",
    [
        "net.rendezvous",
        "net.address_in_use",
        "net.dns",
        "net.refused",
        "net.store",
        "nccl.system_error",
        "nccl.error",
        "net.efa",
        # a node that never reaches the Hub (a firewall, a region, a VPC)
        "net.hub",
        # a hang before the first step is the set-up's: it hangs there every time
        "hang.stacks",
        "hang.debugger",
        "nccl.heartbeat",
    ],
)
def test_start_up_network_errors_and_hangs_are_configuration_before_the_first_step(
    kb: Knowledge, rule_id: str
) -> None:
    rule = next(r for r in kb.rules if r.id == rule_id)
    assert rule.transient_given(False) is False
    assert rule.transient_given(True) is True
    assert rule.transient_given(None) is rule.transient  # the log does not say


@pytest.mark.parametrize("rule_id", ["host.oom_killer", "host.sigkill", "host.memory_error"])
def test_running_out_of_host_memory_before_the_first_step_is_the_set_up(
    kb: Knowledge, rule_id: str
) -> None:
    # The set-up's memory need (loading a model or a dataset) is the same on every restart;
    # in training a leak, a neighbour or one batch: the log cannot tell.
    rule = next(r for r in kb.rules if r.id == rule_id)
    assert rule.transient_given(False) is False
    assert rule.transient_given(True) is None


def test_an_ib_transfer_error_is_transient_in_any_phase(kb: Knowledge) -> None:
    rule = next(r for r in kb.rules if r.id == "nccl.ib_completion")
    assert rule.transient_given(False) is True and rule.transient_given(True) is True


@pytest.mark.parametrize(
    ("line", "rule_id", "at_start", "in_training"),
    [
        # a checkpoint write the storage refused: a full disk, a quota, a permission or a missing
        # directory, which the next save meets again
        ("RuntimeError: [enforce fail at inline_container.cc:300] . PytorchStreamWriter failed "
         "writing file data/3: file write failed", "fs.checkpoint_write", False, False),
        # an integer division by zero in native code: the same input meets it again
        ("Floating point exception (core dumped)", "segfault.sigfpe", False, False),
        # the Hub reached but slow (a read timed out): a restart's, even at start-up
        ("'(ReadTimeoutError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read timed "
         "out. (read timeout=10)\"), '(Request ID: 5dbccdb5)')' thrown while requesting GET "
         "https://huggingface.co/datasets/x/resolve/main/a.parquet", "net.hub_server",
         True, True),
        ("requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='cdn-lfs.huggingface.co', "
         "port=443): Read timed out. (read timeout=10)", "net.hub_server", True, True),
        # (and its retries used up on the server's own errors)
        ("requests.exceptions.RetryError: HTTPSConnectionPool(host='huggingface.co', port=443): "
         "Max retries exceeded with url: /api/models/gpt2 (Caused by ResponseError('too many 502 "
         "error responses'))", "net.hub_server", True, True),
        # a node that never reached the Hub before the first step: its firewall, region or VPC
        ("OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't "
         "find it in the cached files", "net.hub", False, True),
    ],
)  # fmt: skip
def test_what_a_restart_does_for_these_failures_in_each_phase(
    kb: Knowledge, line: str, rule_id: str, at_start: bool, in_training: bool
) -> None:
    hit = kb.match(anatomy(line).body)
    assert hit is not None and hit[0].id == rule_id
    assert hit[0].transient_given(False) is at_start
    assert hit[0].transient_given(True) is in_training


# -- the scheduler's and the cloud's own words ---------------------------------------------------


@pytest.mark.parametrize(
    ("rule_id", "transient", "line"),
    [
        (
            "sched.time_limit",
            True,
            "slurmstepd: error: *** JOB 1234 ON node12 CANCELLED AT 2024-03-01T10:00:00 DUE TO "
            "TIME LIMIT ***",
        ),
        (
            "sched.preempted",
            True,
            "slurmstepd: error: *** STEP 1234.0 ON node12 CANCELLED AT 2024-03-01T10:00:00 DUE "
            "TO PREEMPTION ***",
        ),
        (
            "sched.node_failure",
            True,
            "slurmstepd: error: *** JOB 1234 ON node12 CANCELLED AT 2024-03-01T10:00:00 DUE TO "
            "NODE FAILURE ***",
        ),
        ("sched.node_failure", True, "1234          train    gpu   NODE_FAIL      0:0"),
        (
            "host.oom_killer",
            None,
            "slurmstepd: error: Detected 1 oom_kill event in StepId=1234.0. Some of the step "
            "tasks have been OOM Killed.",
        ),
        ("host.oom_killer", None, "      Reason:       OOMKilled"),
        ("host.sigkill", None, "      Exit Code:    137"),
        ("sched.preempted", True, "Reason:         Evicted"),
        ("sched.preempted", True, "message: 1/8 workers are evicted"),
        (  # the node's memory, not the cloud taking it back: host memory ran out
            "sched.evicted_memory",
            None,
            "Message:        The node was low on resource: memory. Container pytorch was using "
            "61410444Ki, which exceeds its request of 0.",
        ),
        (  # the pod's own disk use over its limit: the same job is evicted again
            "sched.evicted_over_limit",
            False,
            "  Warning  Evicted   109s  kubelet   Pod ephemeral local storage usage exceeds the "
            "total limit of containers 5Gi.",
        ),
        (
            "sched.evicted_over_limit",
            False,
            'Message: Usage of EmptyDir volume "cache" exceeds the limit "10Gi".',
        ),
        ("sched.preempted", True, "Spot Instance interruption notice received"),
        ("sched.preempted", True, "Instance was preempted."),
        (
            "sched.preempted",
            True,
            '{"DocumentIncarnation":2,"Events":[{"EventId":"C7061BAC","EventStatus":"Scheduled",'
            '"EventType":"Preempt","ResourceType":"VirtualMachine","Resources":["myspotvm"],'
            '"NotBefore":"Mon, 19 Sep 2022 18:29:47 GMT","EventSource":"Platform"}]}',
        ),
        ("sched.preempted", True, "maintenance-event: TERMINATE_ON_HOST_MAINTENANCE"),
        ("sched.node_failure", True, "compute.instances.hostError"),
    ],
)
def test_scheduler_and_cloud_words_are_evidence(
    kb: Knowledge, rule_id: str, transient: bool | None, line: str
) -> None:
    hit = kb.match(anatomy(line).body)
    assert hit is not None and hit[0].id == rule_id
    assert hit[0].transient is transient
    low = line.lower().encode()
    assert any(nd in low for nd in NEEDLES + RARE_NEEDLES)


@pytest.mark.parametrize(
    "line",
    [
        # datasets' formatting check (a KeyError in newer versions)
        "KeyError: 'Column content not in the dataset. Current columns in the dataset: []'",
        # pandas: a list of columns none of which the frame has
        "KeyError: \"None of [Index(['question'], dtype='object')] are in the [columns]\"",
        # YOLOv5 train.py's label check
        "AssertionError: Label class 19 exceeds nc=5 in data/custom.yaml. Possible class labels "
        "are 0-4",
    ],
)
def test_a_dataset_without_what_the_code_asks_is_data(kb: Knowledge, line: str) -> None:
    hit = kb.match(anatomy(line).body)
    assert hit is not None and hit[0].id == "data.schema"


@pytest.mark.parametrize(
    ("line", "rule_id"),
    [
        # TensorFlow's collectives (MultiWorkerMirroredStrategy) aborted by a peer's silence
        (
            "2023-05-25 11:10:57.934361: E tensorflow/core/common_runtime/"
            "base_collective_executor.cc:249] BaseCollectiveExecutor::StartAbort "
            "DEADLINE_EXCEEDED: Deadline Exceeded",
            "nccl.watchdog_timeout",
        ),
        # NCCL's InfiniBand verbs wrapper, in its old log form
        ("dgj101:14560:14560 [0] misc/ibvwrap.cu:269 WARN Call to ibv_create_qp failed",
         "nccl.system_error"),
        # torch's elastic agent told to stop (some versions name the signal)
        ("W0828 22:53:47.001000 139822188226368 torch/distributed/elastic/agent/server/api.py:688]"
         " Received Signals.SIGTERM death signal, shutting down workers", "sched.death_signal"),
        # ... or hung up on (1 is SIGHUP): most often its terminal closed
        ("W0828 22:53:47.001000 139822188226368 torch/distributed/elastic/agent/server/api.py:688]"
         " Received Signals.SIGHUP death signal, shutting down workers", "launcher.hangup"),
        ("W1221 17:13:59.240000 46660 torch/distributed/elastic/agent/server/api.py:704] Received "
         "1 death signal, shutting down workers", "launcher.hangup"),
        ("torch.distributed.elastic.multiprocessing.api.SignalException: Process 6 got signal: 1",
         "launcher.hangup"),
        ("torch.distributed.elastic.multiprocessing.api.SignalException: Process 6 got signal: 15",
         "sched.death_signal"),
        # ... or interrupted (2 is SIGINT): Ctrl-C in its terminal, most often at a stuck run
        ("^CW0616 16:14:04.056000 3791882 site-packages/torch/distributed/elastic/agent/server/"
         "api.py:739] Received 2 death signal, shutting down workers", "hang.interrupted"),
        ("^C[2024-04-23 22:04:33,011] torch.distributed.elastic.agent.server.api: [WARNING] "
         "Received Signals.SIGINT death signal, shutting down workers", "hang.interrupted"),
        ("torch.distributed.elastic.multiprocessing.api.SignalException: Process 6 got signal: 2",
         "hang.interrupted"),
        # DeepSpeed's fp16 scaler reaching its floor (a run of OVERFLOW lines ends there)
        ("[2023-11-13 16:59:54,783] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] "
         "OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2, reducing to 1",
         "numerical.loss_scale"),
        # torchrun's root-cause record without its Failures: header
        ("[0]: time : 2024-05-01_10:00:00 host : gpu-3 rank : 0 (local_rank: 0) exitcode : 1 "
         "(pid: 4242) error_file: <N/A>", "launcher.child_failed"),
        # TensorFlow's JPEG decoder on a corrupt image
        ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Invalid JPEG data or "
         "crop window, data size 148054", "data.jpeg"),
    ],
)  # fmt: skip
def test_documented_messages_of_tf_and_nccl(kb: Knowledge, line: str, rule_id: str) -> None:
    hit = kb.match(anatomy(line).body)
    assert hit is not None and hit[0].id == rule_id


@pytest.mark.parametrize(
    ("line", "rule_id"),
    [
        # a launcher's return code -N: its child was killed by signal N
        ("[ERROR] [launch.py:324:sigkill_handler] ['python', 'train.py'] exits with return code "
         "= -7", "segfault.bus"),
        ("ERROR:composer.cli.launcher:Rank 2 crashed with exit code -7.", "segfault.bus"),
        ("ERROR:composer.cli.launcher:Rank 1 crashed with exit code -11.", "segfault.segv"),
        ("Worker exited with exit code -9", "host.sigkill"),
        # a shell's or a container's 128 + N
        ("command terminated with exit code 135", "segfault.bus"),
        ("Error: exit status 139", "segfault.segv"),
        # not a signal: a plain failure, or a code that only starts like one
        ("ERROR:composer.cli.launcher:Rank 0 crashed with exit code 1.", None),
        ("exit code -70 from the tokenizer", None),
    ],
)  # fmt: skip
def test_a_death_by_signal_is_read_from_the_launchers_return_code(
    kb: Knowledge, line: str, rule_id: str | None
) -> None:
    hit = kb.match(anatomy(line).body)
    got = hit[0].id if hit is not None and hit[0].role == "cause" else None
    assert got == rule_id
    if rule_id is not None:
        low = line.lower().encode()
        assert any(nd in low for nd in NEEDLES + RARE_NEEDLES)


@pytest.mark.parametrize(
    ("line", "rule_id"),
    [
        # CUDA's own words for an allocation that failed, whoever prints them
        # (the device's storage; the host allocator's pinned memory is host.pinned_alloc's)
        ("RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/generic/"
         "THCStorage.cu:58", "cuda.oom"),
        ("RuntimeError: CUDA driver error: out of memory", "cuda.oom"),
        ("RuntimeError: Triton Error [CUDA]: out of memory", "cuda.oom"),
        ("RuntimeError: MPS backend out of memory (MPS allocated: 17.00 GB)", "cuda.oom"),
        ("ValueError: No available memory for the cache blocks. Try increasing "
         "`gpu_memory_utilization` when initializing the engine.", "cuda.oom"),
        # the HTTP clients' words for a connection that failed
        ("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='s3.amazonaws.com', "
         "port=443): Max retries exceeded with url: /bucket/shard-00017.tar", "net.http"),
        ("http.client.RemoteDisconnected: Remote end closed connection without response",
         "net.http"),
        ("aiohttp.client_exceptions.ServerDisconnectedError: Server disconnected", "net.http"),
        ("httpcore.RemoteProtocolError: Server disconnected without sending a response.",
         "net.http"),
        ("requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='rm.internal', port=8000): "
         "Read timed out. (read timeout=60)", "net.http"),
        ("RuntimeError: FlashAttention only supports Ampere GPUs or newer.", "code.gpu_arch"),
        ("RuntimeError: This kernel requires a GPU with compute capability >= 8.0",
         "code.gpu_arch"),
        ("torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal "
         "SIGKILL", "host.sigkill"),
        ("OSError: [Errno 107] Transport endpoint is not connected: '/mnt/gcs/ckpt'",
         "fs.network_mount"),
        ("RuntimeError: Expected to mark a variable ready only once. This error is caused by ...",
         "code.shapes"),
        ("lightning_fabric.utilities.exceptions.MisconfigurationException: No supported gpu "
         "backend found!", "code.cli_config"),
        ("yaml.scanner.ScannerError: mapping values are not allowed here", "code.cli_config"),
        ("OSError: meta-llama/Llama-2-7b is not a local folder and is not a valid model "
         "identifier listed on 'https://huggingface.co/models'", "code.cli_config"),
        ("huggingface_hub.errors.GatedRepoError: 401 Client Error.", "code.cli_config"),
        ("jax.errors.ConcretizationTypeError: Abstract tracer value encountered where concrete "
         "value is expected", "code.compile"),
        ("RuntimeError: CUDA error: ECC error", "gpu.ecc"),
        ("OSError: [Errno 99] Cannot assign requested address", "net.refused"),
        ("OSError: ./out/checkpoint-500 does not appear to have a file named config.json.",
         "code.cli_config"),
        ("OSError: Error no file named pytorch_model.bin, model.safetensors found in directory "
         "./ckpt.", "code.cli_config"),
        ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
         "cuda.oom"),
        ("RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not "
         "enough memory: you tried to allocate 1073741824 bytes.", "host.memory_error"),
        # the Hub unreachable stays the network's, whatever file it was looking for
        ("OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't "
         "find it in the cached files and it looks like gpt2 is not the path to a directory "
         "containing a file named config.json.", "net.hub"),
        ("(gdb) thread apply all bt", "hang.debugger"),
        ("(cuda-gdb) bt", "hang.debugger"),  # NVIDIA's gdb, and AMD's rocgdb, prompt alike
        # an AMD GPU hung and reset, in the amdgpu driver's words; its page faults are a bad
        # address, as CUDA's illegal access is
        ("[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx timeout, signaled seq=5423, "
         "emitted seq=5425", "gpu.reset"),
        ("amdgpu 0000:c1:00.0: amdgpu: GPU reset begin!", "gpu.reset"),
        ("[drm:amdgpu_device_gpu_recover [amdgpu]] *ERROR* VRAM is lost due to GPU reset!",
         "gpu.reset"),
        ("amdgpu 0000:0b:00.0: amdgpu: [gfxhub0] retry page fault (src_id:0 ring:0 vmid:3 "
         "pasid:32771, for process python3 pid 1796 thread python3 pid 1796)",
         "cuda.illegal_access"),
        ("habanalabs hl6: Failed to communicate with Device CPU (CPU-CP timeout)",
         "gpu.accelerator_down"),
        ("pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0",
         "node.pcie_fatal"),
        # the watchdog's own check, its message line lost
        ("Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/"
         "ProcessGroupNCCL.cpp:565 (most recent call first):", "nccl.watchdog_timeout"),
        ("what(): Collective call returned error", "nccl.error"),  # Habana's HCCL
        # the scheduler's and the clouds' own words: a container's memory limit as it starts,
        # /dev/shm too small, a spot instance gone, a request refused
        ('Error: container create failed: time="2022-09-14T11:35:13Z" level=error msg="runc '
         'create failed: unable to start container process: container init was OOM-killed '
         '(memory limit too low?)"', "host.oom_killer"),
        ("It is possible that dataloader's workers are out of shared memory. Please try to raise "
         "your shared memory limit.", "segfault.shm"),
        ("Run failed with error code INTERRUPTED_BY_NO_CAPACITY.", "sched.preempted"),
        ("zsh: segmentation fault (core dumped)  python train.py", "segfault.segv"),
        # the HTTP and storage clients' exception types for a timed-out connection or read
        ("fsspec.exceptions.FSTimeoutError: Caught FSTimeoutError in DataLoader worker process 1.",
         "net.http"),
        ("requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='minio.internal', port=443): "
         "Read timed out. (read timeout=10)", "net.http"),
        ("urllib3.exceptions.ConnectTimeoutError: (<urllib3.connection.HTTPSConnection object at "
         "0x7f>, 'Connection to api.wandb.ai timed out. (connect timeout=10)')", "net.connect"),
        ("socket.timeout: timed out", "net.http"),
        # a JVM's heap is the host's memory; RAPIDS' memory manager failing on the device is not
        ("23/07/10 04:54:29 WARN TaskSetManager: Lost task 1.0 in stage 8.0 (TID 105) (10.191.8.91"
         " executor 6): java.lang.OutOfMemoryError: Java heap space", "host.memory_error"),
        ("distributed.utils - ERROR - std::bad_alloc: CUDA error at: /opt/conda/include/rmm/mr/"
         "device/cuda_memory_resource.hpp", "cuda.oom"),
        ("Status: INTERNAL: Failed to launch ROCm kernel: RepeatBufferKernel with block "
         "dimensions: 256x1x1: hipError_t(303)", "cuda.launch_failure"),
        ("CustomCall failed: jaxlib/cusolver_kernels.cc:44: operation cusolverDnCreate(&handle) "
         "failed: cuSolver internal error", "cuda.library"),
        ("Exception: Skipped 50 iterations in a row due to Overflow - Exiting training.",
         "numerical.nan"),
        ("[rank428]: RuntimeError: DeepEP error: timeout (dispatch CPU)", "nccl.watchdog_timeout"),
        # a process limit on threads, as on files
        ("OpenBLAS blas_thread_init: pthread_create failed for thread 50 of 64: Resource "
         "temporarily unavailable", "fs.too_many_files"),
        ("RuntimeError: can't start new thread", "fs.too_many_files"),
        # verbs refused memory to register: a locked-memory limit, NCCL's, not the host's RAM
        ("msm-h200-2:4016:4653 [7] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_create_cq failed "
         "with error Cannot allocate memory", "nccl.system_error"),
        # Ascend's HCCL, its error codes other than its timeouts
        ("[rank1]: EI0009: [PID: 2225827] 2025-09-24-20:59:48.119.066 Transport init error. "
         "Reason: [Create][DestLink]Create Dest error!", "nccl.error"),
        # (an HCCP code is no host label either)
        ("[rank1]: EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process.",
         "nccl.error"),
        # OpenNMT pads its columns: two metrics at NaN
        ("[2018-11-26 15:06:01,481 INFO] Step 5650/50000; acc:   0.19; ppl:   nan; xent:  nan; "
         "lr: 0.00070; 1928/2310 tok/s;  21110 sec", "numerical.nan"),
        # an exception quoted as a YAML field's value
        ("      message: 'AssertionError: tensor and expert parallel group is not initialized'",
         "python.bug"),
        ("distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting",
         "host.dask_memory"),
        ("distributed.nanny.memory - WARNING - Worker tcp://10.0.0.5:45678 (pid=1234) exceeded "
         "95% memory budget. Restarting...", "host.dask_memory"),
        ("distributed.worker - WARNING - Memory use is high but worker has no data to store to "
         "disk.  Perhaps some other process is leaking memory?  Process memory: 19.20 GB -- "
         "Worker memory limit: 27.05 GB", "host.dask_memory_high"),
        ("SignalException: Process 1234 got signal: Signals.SIGQUIT", "sched.death_signal"),
        ("org.apache.spark.memory.SparkOutOfMemoryError: Unable to acquire 65536 bytes of memory",
         "host.memory_error"),
        ("2024-09-06 14:32:04,799 - distributed.scheduler - ERROR - Task 'lambda-6a34' has "
         "30.61 GiB worth of input dependencies, but worker tcp://127.0.0.1:57276 has "
         "memory_limit set to 14.90 GiB.", "host.dask_memory"),
        # the environment's: a variable a library refuses, an NCCL library that will not load
        ("MPIDI_CRAY_ofi_get_nic_index(1801)....: OFI invalid value for environment variable",
         "code.cli_config"),
        # metrics at NaN as a Python dict prints them (TRL's DPO: the loss itself reads 0.0)
        ("{'loss': 0.0, 'learning_rate': 6.6e-05, 'rewards/chosen': nan, 'rewards/rejected': "
         "nan, 'rewards/accuracies': 0.0}", "numerical.nan"),
        ("sbatch: error: Batch job submission failed: Unspecified error", "sched.request_invalid"),
        ("botocore.exceptions.ClientError: An error occurred (ValidationException) when calling "
         "the CreateTrainingJob operation: Invalid MaxWaitTimeInSeconds.", "sched.request_invalid"),
        ("RuntimeError: unexpected EOF, expected 4859355 more bytes. The file might be corrupted.",
         "fs.checkpoint_corrupt"),
        ("RuntimeError: storage has wrong size: expected 0 got 512", "fs.checkpoint_corrupt"),
        ("(rocgdb) thread apply all bt", "hang.debugger"),
        ("Worker exit type: SYSTEM_ERROR Worker exit detail: Worker exits unexpectedly.",
         "ray.system_error"),
        ("Error: CUDA error 999 'unknown error' - src/tensors/gpu/algorithm.cu:54: "
         "cudaStreamSynchronize(0)", "gpu.unknown_cuda_error"),
        ("Out of memory error on GPU 0. Cannot allocate 172.000000MB memory on GPU 0, "
         "23.486572GB memory has been allocated and available memory is only 167.062500MB.",
         "cuda.oom"),
        ("RuntimeError: File my_out/checkpoints/checkpoint_0.pt cannot be opened.",
         "fs.checkpoint_write"),
        ("Error: No such command 'run'.", "code.cli_config"),
        ("[3] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
         "nccl.shm"),
        ("memory allocation of 2097152 bytes failed", "host.memory_error"),
        ("THCudaCheck FAIL file=/pytorch/torch/lib/THC/THCGeneral.c line=70 error=30 : unknown "
         "error", "gpu.unknown_cuda_error"),
        ("pynvml.NVMLError_Unknown: Unknown Error", "gpu.unknown_cuda_error"),
        ("RuntimeError: HIP error: invalid device function", "cuda.no_kernel_image"),
        ("    @     0x7f0aa11c2715  ray::gcs::ServiceBasedGcsClient::GcsServiceFailureDetected()",
         "net.ray_gcs"),
        ("2023-01-25 00:21:34.569 | INFO     | trainers.base_trainer:train_epochs:256 - [R0] | E6 "
         "iter[ 14/ 15] | [Loss] nan | [step]   104", "numerical.nan"),
        ("Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 2000",
         "nccl.duplicate_gpu"),
        ("lua: File.lua:210: write error: wrote 24686288 blocks instead of 32768000 at "
         "THDiskFile.c:353", "fs.checkpoint_write"),
        ("E tensorflow/core/platform/s3/aws_logging.cc:60] Curl returned error code 55",
         "fs.object_store_client"),
        ("<Code>RequestTimeTooSkewed</Code><Message>The difference between the request time and "
         "the current time is too large.</Message>", "net.clock_skew"),
        ("165376/296960 [=====>........] - ETA: 365s - loss: 2.1371Killed", "host.sigkill"),
        ("{'loss': inf, 'grad_norm': inf, 'learning_rate': 1e-05, 'epoch': 0.5}", "numerical.nan"),
        ("step 2 loss 2.9 grad_norm: inf", "numerical.nan"),
        ("minibatch_loss: nan", "numerical.nan"),
        ("max_loss=nan", "numerical.nan"),
        ("^C^C", "hang.interrupted"),
        # a child that aborted (SIGABRT), in a shell's, a launcher's or a subprocess's words
        ("Aborted (core dumped)", "segfault.aborted"),
        ("subprocess.CalledProcessError: Command 'python train_mnist.py' returned non-zero exit "
         "status 134.", "segfault.aborted"),
        ("    exitcode  : -6 (pid: 3345)", "segfault.aborted"),
        ("[rank1]: RuntimeError: DataLoader worker (pid 1008552) is killed by signal: Aborted. ",
         "segfault.abort"),
        # Windows' exit status of an access violation (0xC0000005)
        ("subprocess.CalledProcessError: Command '['python.exe', 'train.py']' returned non-zero "
         "exit status 3221225477.", "segfault.segv"),
        ("Process finished with exit code -1073741819 (0xC0000005)", "segfault.segv"),
        ("distributed.nanny - INFO - Worker process 9018 was killed by signal 9",
         "host.sigkill"),
        ("ERROR: error code -9", "host.sigkill"),
        ("Container killed by YARN for exceeding memory limits.  160.2 GB of 160 GB physical "
         "memory used.", "host.memory_error"),
        ("Container [pid=4242,containerID=container_1_0001_01_000002] is running beyond physical "
         "memory limits. Current usage: 2.1 GB of 2 GB physical memory used", "host.memory_error"),
        ("could not synchronize on CUDA context: CUDA_ERROR_MISALIGNED_ADDRESS :: No stack trace "
         "available", "cuda.illegal_access"),
        ("Error in thread 0: CUDA runtime API error cudaErrorNotPermitted (800):",
         "cuda.driver_error"),
        # a metric logger's running average gone non-finite (torchvision's reference format)
        ("I20250104 12:12:42 90 dinov2 helpers.py:102] Training  [   1250/2500000]  lr: 0.0006 "
         "(0.0003)  total_loss: 6.7223 (inf)  dino_local_crops_loss: 4.9698 (5.1138)",
         "numerical.nan"),
        ("INFO Train: [6/100][900/1251]	eta 0:05:41 lr 0.000539	time 3.8164 (0.9736)	loss "
         "0.4383 (0.4707)	grad_norm 0.0261 (nan)	mem 18243MB", "numerical.nan"),
        # a cloud's quota for the instances asked for
        ("ResourceLimitExceeded: An error occurred (ResourceLimitExceeded) when calling the "
         "CreateTrainingJob operation: The account-level service limit 'ml.p3.2xlarge for "
         "training job usage' is 0 Instances", "sched.request_invalid"),
        ("googleapiclient.errors.HttpError: <HttpError 403 \"Quota 'NVIDIA_T4_GPUS' exceeded. "
         "Limit: 0.0 in region us-central1.\">", "sched.request_invalid"),
        ('        "@type": "type.googleapis.com/google.rpc.QuotaFailure",',
         "sched.request_invalid"),
        ("> The replica master 0 ran out-of-memory and exited with a non-zero status of 247.",
         "host.memory_error"),
        ("sbatch: error: fetch_config: DNS SRV lookup failed", "net.dns"),
        # the shells' reports of a child killed by a signal, bash's job status and zsh's
        ("71885 Killed                  PYTHONPATH=$PYTHONPATH:. python -m kauldron.main",
         "host.sigkill"),
        ("[1]+  Killed                  python train.py --config cfg.yaml", "host.sigkill"),
        ("zsh: killed     python train.py", "host.sigkill"),
        ("zsh: bus error  python train.py", "segfault.bus"),
        ("zsh: segmentation fault  python train.py", "segfault.segv"),
        ("zsh: abort      python train.py", "segfault.aborted"),
        ("Aborted", "segfault.aborted"),
        # a C++/CUDA extension that would not build at start
        ("RuntimeError: Error building extension 'cpu_adam'", "code.op_build"),
        ("Exception: >- DeepSpeed Op Builder: Installed CUDA version 12.0 does not match the "
         "version torch was compiled with 11.8, unable to compile cuda/cpp extensions without a "
         "matching cuda version.", "code.op_build"),
        # the linker, nvcc and torch's headers refusing a build (Triton's launcher stub, an
        # extension's JIT build)
        ("/usr/bin/ld: cannot find -lcuda: No such file or directory", "code.link_failed"),
        ("collect2: error: ld returned 1 exit status", "code.link_failed"),
        # torch's OOM message cut before its first sentence; c10d's port taken, its fields one
        # a line
        ("Error:GPU 0 has a total capacity of 23.64 GiB of which 1.61 GiB is free. Process "
         "1624541 has 22.02 GiB memory in use.", "cuda.oom"),
        ("name: EADDRINUSE", "net.address_in_use"),
        # a supervisor's record of the signal its child died of
        ("`WORKER_CRASHED: Bare worker exited mid-request (code=null, signal=SIGABRT)`",
         "segfault.aborted"),
        ("subprocess died with <Signals.SIGABRT: 6>", "segfault.aborted"),
        ("message: address already in use", "net.address_in_use"),
        ("subprocess.CalledProcessError: Command '['C:\\\\MinGW\\\\bin\\\\gcc.EXE', "
         "'C:\\\\Temp\\\\main.c', '-O3', '-shared']' returned non-zero exit status 1.",
         "code.link_failed"),
        ("subprocess.CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmprh0gq_rd/main.c', "
         "'-O3', '-lcuda']' returned non-zero exit status 1.", "code.link_failed"),
        ("nvcc fatal   : Unsupported gpu architecture 'compute_89'", "code.op_build"),
        ('error: #error "You\'re trying to build PyTorch with a too old version of GCC. We need '
         'GCC 9 or later."', "code.op_build"),
        # torch.compile without Triton; Triton's and ptxas' checks of the GPU's architecture
        ("torch._inductor.exc.TritonMissing: Cannot find a working triton installation.",
         "code.compile"),
        ("GPUTooOldForTriton: Found Tesla P100-PCIE-16GB which is too old to be supported by the "
         "triton GPU compiler, which is used as the backend.", "code.gpu_arch"),
        ("ptxas /tmp/compile-ptx-src-38292b, line 338; error   : Feature 'cvt.bf16.f32' requires "
         ".target sm_80 or higher", "code.gpu_arch"),
        # a launcher's child killed by SIGFPE or SIGILL: its exit code is the signal, negated
        ("E1112 08:46:19.073000 139759130470208 torch/distributed/elastic/multiprocessing/api.py:"
         "833] failed (exitcode: -8) local_rank: 6 (pid: 3694) of binary: /usr/bin/python",
         "segfault.sigfpe"),
        ("[2024-01-01 10:00:00,000] [ERROR] [launch.py:321:sigkill_handler] ['python', 'train.py'"
         "] exits with return code = -4", "segfault.sigill"),
        # TensorFlow launching a kernel on a GPU with no memory left
        ("Non-OK-status: GpuLaunchKernel (FillPhiloxRandomKernelLaunch <Distribution>, num_blocks,"
         " block_size, 0, d.stream (), gen, data, size, dist) status: Internal: out of memory",
         "cuda.oom"),
        ("^C Aborted!", "hang.interrupted"),
        # Kubernetes' API refusing a job's objects: no operator for its kind, a manifest that
        # fails validation, a namespace's quota, an admission webhook
        ('ERRO[0000] The output is error: unable to recognize "/tmp/job.yaml": no matches for '
         'kind "PyTorchJob" in version "kubeflow.org/v1"', "sched.request_invalid"),
        ('create Pod w-0 in StatefulSet w failed error: Pod "w-0" is invalid: '
         "spec.containers[0].volumeMounts[0].mountPath: Required value", "sched.request_invalid"),
        ('Error from server (Forbidden): pods "w-0" is forbidden: exceeded quota: gpu-quota, '
         "requested: nvidia.com/gpu=8, used: nvidia.com/gpu=8, limited: nvidia.com/gpu=8",
         "sched.request_invalid"),
        ('Error from server: admission webhook "validate.kyverno.svc" denied the request: '
         "resource Pod/default/w-0 was blocked", "sched.request_invalid"),
        # other accelerators' device memory, runtimes and hangs (Intel XPU, Gaudi, Trainium,
        # ROCm's HSA runtime, Apple's Metal, Intel's xe driver, a newer amdgpu's ring timeout)
        ("RuntimeError: Allocation is out of device memory on current platform.", "cuda.oom"),
        ("Training failed: Native API failed. Native API returns: 39 "
         "(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)", "cuda.oom"),
        ("RuntimeError: [Rank:5] FATAL ERROR :: MODULE:PT_SYNHELPER workspace Allocation of size "
         "::9618705792 failed!", "cuda.oom"),
        ("RuntimeError: Failed compilation with ['neuronx-cc', '--verbose=35']: "
         "2024-05-10T23:47:40Z [XCG815]  Estimated peak HBM usage (22.839451) exceeds 16GB. Neff "
         "won't be able to load on chip", "cuda.oom"),
        ("RuntimeError: level_zero backend failed with error: 20 (UR_RESULT_ERROR_DEVICE_LOST)",
         "cuda.driver_error"),
        (":0:rocdevice.cpp            :3586: 93411681581 us:  Callback: Queue 0x77cd61e00000 "
         "aborting with error : HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a "
         "hardware exception. code: 0x1016", "cuda.driver_error"),
        ("\tCaused GPU Timeout Error (00000002:kIOAccelCommandBufferCallbackErrorTimeout)",
         "accel.runtime_error"),
        ("/AppleInternal/Library/BuildRoots/91a3/Library/Caches/com.apple.xbs/Sources/MPS/"
         "MPSNDArrayGatherND.mm:256: failed assertion `Rank of updates array (1)`",
         "accel.runtime_error"),
        ("[27109.509433] amdgpu 0000:03:00.0: amdgpu: ring comp_1.1.1 timeout, signaled "
         "seq=7091, emitted seq=7093", "gpu.reset"),
        ("xe 0000:2c:00.0: [drm] GT0: Engine reset: engine_class=ccs, logical_mask: 0x1, "
         "guc_id=3", "gpu.reset"),
        # NCCL's argument checks, and a socket interface without an address (NCCL_SOCKET_IFNAME)
        ("Trident-MS:1203254:1203254 [0] misc/argcheck.cc:30 NCCL WARN Send : comm argument is "
         "NULL", "nccl.invalid_usage"),
        ("[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither "
         "AF_INET(2) nor AF_INET6(10)", "nccl.invalid_usage"),
        # a script's own columns of losses at NaN; a sample with an empty label for a CTC loss
        ("180: nan    nan", "numerical.nan"),
        # a loss function's name at NaN; a table's row of numbers, its columns apart by bars
        ("[Epoch 0][Batch 299], Speed: 31.279352 samples/sec, CrossEntropy=12.199556, "
         "SmoothL1=nan", "numerical.nan"),
        (" Epoch[ 3 of 4]-Minibatch[38381-38390, 76.78%]: ce = nan * 14000; errs = 74.200% * "
         "14000; time = 1.5991s", "numerical.nan"),
        ("     4  |         nan  |         nan  |          nan  |     47.06%  |  0.6s",
         "numerical.nan"),
        ("[1200/10500]\t[L1: nan] \t20.2+46.7s", "numerical.nan"),
        ("Total loss is :[nan]", "numerical.nan"),
        ("RuntimeError: [enforce fail at event_gpu.cc:17] error == cudaSuccess. 2 vs 0. Error at: "
         "/home/sd/pytorch/caffe2/core/event_gpu.cc:17: out of memory", "cuda.oom"),
        ("InvalidArgumentError: Incompatible shapes: [16,1] vs. [16,32,32,1]", "code.shapes"),
        # torch before 1.0: the THC cuBLAS wrapper's error, a CPU tensor given to a CUDA op
        ("RuntimeError: cublas runtime error : an access to GPU memory space failed at "
         "C:/a/w/1/s/windows/pytorch/aten/src/THC/THCBlas.cu:21", "cuda.library"),
        ("RuntimeError: expected type torch.cuda.FloatTensor but got torch.FloatTensor",
         "code.shapes"),
        # older frameworks' words for a GPU out of memory (Theano, CuPy, a CUDA call in Paddle)
        ("MemoryError: Error allocating 147865600 bytes of device memory (out of memory). Driver "
         "report 141447168 bytes free and 2147024896 bytes total", "cuda.oom"),
        ("GPUassert: out of memory pcdet/ops/iou3d_nms/src/iou3d_nms.cpp 103", "cuda.oom"),
        ("LargestFreeBlock:                  0", "cuda.oom"),
        ("[2021-01-28 17:03:35] Error: Requested shape shape=1x32000 size=32000 for existing "
         "parameter 'decoder_ff_logit_out_b' does not match original shape shape=1x58100 "
         "size=58100", "code.shapes"),
        ("opustrainer.trainer.CurriculumLoaderError: could not initialize modifier 'Tags': "
         "PlaceholderTagModifier.__init__() got an unexpected keyword argument 'tag'",
         "python.bug"),
        ("2023-07-24 09:14:09 [250,761ms] [Error] [omni.physx.plugin] PhysX error: "
         "SynchronizeStreams cuStreamWaitEvent failed with error 700", "cuda.illegal_access"),
        ("Exception in main training loop: out of memory to allocate 205520896 bytes (total "
         "16068929536 bytes)", "cuda.oom"),
        ("F0912 17:23:26.346724 783 all_reduce_op_handle.cc:75] cudaGetLastError out of memory "
         "errno:2", "cuda.oom"),
        # Caffe: an image in its LMDB it cannot decode, a snapshot prefix it cannot write to, a
        # snapshot write that failed; CNTK on Windows' access violation
        ("Could not decode datum", "data.image"),
        ("F0212 18:15:07.998891    66 db_lmdb.hpp:15] Check failed: mdb_status == 0 (2 vs. 0) "
         "No such file or directory", "code.cli_config"),
        ("(train, pid=4439) bash: python: command not found", "code.shell"),
        ("zsh: command not found: torchrun", "code.shell"),
        # TensorFlow's checkpoint restore finding its file cut short
        ("2023-08-02 16:43:09.854875: W tensorflow/core/framework/op_kernel.cc:1745] OP_REQUIRES "
         "failed at save_restore_v2_ops.cc:207 : DATA_LOSS: truncated block read",
         "fs.checkpoint_corrupt"),
        ("F0804 17:09:36.119524  6990 solver.cpp:438] Cannot write to snapshot prefix "
         "'models/train'.  Make sure that the directory exists and is writeable.",
         "code.cli_config"),
        ("F0426 20:35:38.413489 10668 io.cpp:69] Check failed: proto.SerializeToOstream(&output)",
         "fs.checkpoint_write"),
        ("CNTK: Caught Win32 exception 0xc0000005: Access violation.", "segfault.segv"),
        ("InvalidArgumentError (see above for traceback): Labels length is zero in batch 27",
         "data.empty"),
        # clouds' quotas and disks; TensorFlow's cuDNN that does not fit; HTCondor's memory limit;
        # detectron2's image whose size is not its annotation's
        ('RuntimeError: Training failed with: code: 8 message: "The following quota metrics '
         'exceed quota limits: aiplatform.googleapis.com/custom_model_training_nvidia_k80_gpus"',
         "sched.request_invalid"),
        ("UnexpectedStatusException: Error for Training job hf-2021-05-31: Failed. Reason: "
         "ClientError: Artifact upload failed:Insufficient disk space", "fs.nospace"),
        ("2021-12-14 13:30:57.846447: E tensorflow/stream_executor/cuda/cuda_dnn.cc:359] Loaded "
         "runtime CuDNN library: 8.0.5 but source was compiled with: 8.1.0.",
         "cuda.cudnn_version"),
        ("    CUDA Setup failed despite GPU being available. Inspect the CUDA SETUP outputs "
         "aboveto fix your environment!", "code.gpu_library"),
        ("Hold reason: Error from slot1_7@gpulab2002.chtc.wisc.edu: Docker job has gone over "
         "memory limit of 1024 Mb", "sched.memory_limit"),
        ("detectron2.data.detection_utils.SizeMismatchError: Mismatched (W,H) for image "
         "/data/train/0476.jpg, got (720, 960), expect (960, 720)", "data.image"),
        # RL's simulators and tools: MuJoCo's unstable simulation, PhysX's GPU allocator; HDF5 on a
        # file that is not one; the kernel's process table before an OOM kill
        ("mujoco_py.builder.MujocoException: Got MuJoCo Warning: Nan, Inf or huge value in QACC "
         "at DOF 0. The simulation is unstable. Time = 0.4000.", "numerical.nan"),
        ("2025-03-15T15:07:10Z [job] PxgCudaDeviceMemoryAllocator fail to allocate memory "
         "100663296 bytes!! Result = 2", "cuda.oom"),
        ("OSError: Unable to open file (file signature not found)", "data.truncated"),
        ("[ 3634.303204] [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents "
         "oom_score_adj name", "host.oom_killer"),
        # cuDNN's frontend; SYCL's runtime error by number (Intel GPUs)
        ("[rank1]: RuntimeError: cuDNN Frontend error: [cudnn_frontend] Error: No execution plans "
         "support the graph.", "cuda.library"),
        ('"RuntimeError: Native API failed. Native API returns: -996 (Function exists but address '
         'is not available)', "cuda.driver_error"),
        # a Slurm job's container that would not start (pyxis, enroot, the NVIDIA hook); Slurm's
        # commands refusing an option; Open MPI started by srun without Slurm's PMI
        ("slurmstepd: error: pyxis: couldn't start container", "sched.container_start"),
        ("slurmstepd: error: spank: required plugin spank_pyxis.so: task_init_privileged() failed "
         "with rc=-1", "sched.container_start"),
        ("[ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1",
         "sched.container_start"),
        ("srun: unrecognized option '--container-image'", "code.cli_config"),
        ("but OMPI was not built with SLURM's PMI support and therefore cannot", "code.cli_config"),
        # a cloud's storage refusing the job's identity; OpenCV given an image that did not load
        ('    "message": "service-495559152420@cloud-tpu.iam.gserviceaccount.com does not have '
         'storage.objects.list access to my-bucket."', "code.cloud_permission"),
        ("botocore.exceptions.ClientError: An error occurred (AccessDenied) when calling the "
         "GetObject operation: Access Denied", "code.cloud_permission"),
        ("cv2.error: OpenCV(3.4.8) /io/opencv/modules/imgproc/src/color.cpp:182: error: "
         "(-215:Assertion failed) !_src.empty() in function 'cvtColor'", "data.image"),
        # c10d's watchdog timeout in a line cut short (a capped or pasted line)
        ("[rank5]:[E602 11:17:52.185053341 ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught "
         "collective operati", "nccl.watchdog_timeout"),
        # Lhotse and lilcom failing to load a cut's features; Python Fire refusing an argument
        ("ValueError lilcom: Length of string was too short", "data.speech_features"),
        ("[extra info] When calling: MonoCut.load_features(args=(MonoCut(id='KeSpeech_0001', "
         "start=0.0, duration=6.05, channel=0,", "data.speech_features"),
        ("ERROR: Could not consume arg: --model_config_file", "code.cli_config"),
        # a platform's and the kernel's words for an OOM kill; xargs's for a child killed
        ('The job has been killed by "OOM Killer", please check your job\'s memory usage.',
         "host.oom_killer"),
        ("total-vm:30193768kB, anon-rss:19770320kB, file-rss:0kB, shmem-rss:0kB",
         "host.oom_killer"),
        ("xargs: /worker/venv/bin/python: terminated by signal 9", "host.sigkill"),
        # a C++ library's fatal log line, in lower case
        ("F1017 00:36:39.809828 30555 LightNetwork.cpp:399] connection refused by pserver, maybe "
         "pserver failed!", "net.refused"),
        ("tensor(273794.6562, device='cuda:0') tensor(nan, device='cuda:0', "
         "grad_fn=<MseLossBackward0>)", "numerical.nan"),
        # TensorStore (under Orbax) refused a file by the file system; not a key it will not take
        ('ValueError: FAILED_PRECONDITION: Error writing local file "/runs/1/params.orbax-'
         'checkpoint-tmp-1695894959581296/_sharding": Failed to acquire lock on file: /runs/1/',
         "fs.tensorstore"),
        ('ValueError: NOT_FOUND: Error writing "params.decoder.scale/c/0" in OCDBT database at '
         'local file "/ckpt/0.orbax-checkpoint-tmp/ocdbt.process_0/": Failed to rename fd: 14',
         "fs.tensorstore"),
        ('ValueError: Error opening "zarr" driver: Error reading local file "./ckpt/.zarray": '
         'Invalid key: "./ckpt/.zarray"', "python.bug"),
        # batchgenerators' (nnU-Net's) data-loading workers dead without an error of their own
        ("RuntimeError: One or more background workers are no longer alive. Exiting. Please "
         "check the print statements above for the actual error message",
         "host.dataloader_exited"),
        ("RuntimeError: arguments are located on different GPUs at /pytorch/torch/lib/THC/"
         "generic/THCTensorMathPointwise.cu:214", "code.shapes"),
        ("CUDA out of memory. Tried to allocate 20.39 GiB. GPU  has a total capacity of 22.19 GiB",
         "cuda.oom"),
        ("E tensorflow/core/platform/default/posix_file_system.cc:56] close() failed: Transport "
         "endpoint is not connected", "fs.network_mount"),
        ("paddle.fluid.core.EnforceNotMet: Enforce failed. Expected posix_memalign(&p, alignment, "
         "size) == 0, but received posix_memalign(&p, alignment, size):12 != 0:0.",
         "host.memory_error"),
        ("INFO:root:Epoch[0] Batch [41940-41960]  Speed: 205.71 samples/sec  acc=0.942578  "
         "lossvalue=nan", "numerical.nan"),
        ("steps:  10%|#         | 100/1000 [01:00<09:00, avr_loss=nan]", "numerical.nan"),
        ("Memory access fault by GPU node-1 on address 0x1e4000. Reason: Page not present or "
         "supervisor privilege.", "cuda.illegal_access"),
        ("dgl._ffi.base.DGLError: [11:33:22] socket_communicator.cc:197: Cannot bind to "
         "10.1.2.3:3026", "net.refused"),
        ("train: WARNING  images/a.png: ignoring corrupt image/label: Label class 3 exceeds "
         "dataset class count 1. Possible class labels are 0-0", "data.schema"),
        ("AssertionError: train: No labels in /data/coco/labels/train2017.cache. Can not train "
         "without labels. See https://docs.ultralytics.com/yolov5/tutorials/train_custom_data",
         "data.empty"),
        ("AssertionError: train: No labels found in data/labels/train.cache, can not start "
         "training.", "data.empty"),
        ("RuntimeError: Empty dataset!", "data.empty"),  # LLaMA-Factory's own check
        ("(SGLangHttpServer pid=250977) [torch_memory_saver.cpp] CUresult error: 2 (out of memory)"
         "  file=csrc/utils.h func=cu_mem_create line=194", "cuda.oom"),
        ("Memory on the node (IP: 10.1.180.84, ID: ba65c80c8aec6b1c) where the task (task ID: "
         "d221d26232c9, name=head, rank=0,, pid=4503, memory used", "host.ray_memory_monitor"),
        ("Exception: The dataset is empty. This could indicate that all samples were dropped",
         "data.empty"),
        ("ValueError: Label values must be <= vocab_size: 29", "data.schema"),
        ("ValueError: Video features and video tokens do not match: tokens: 0, features 1560",
         "code.image_tokens"),
        ('      "grad_norm": NaN,', "numerical.nan"),  # trainer_state.json's log_history
        ('{"loss": NaN, "learning_rate": 1e-05, "step": 5}', "numerical.nan"),
        ("RuntimeError: shape '[1]' is invalid for input of size 2", "code.shapes"),
        ('ERROR (nnet3-train[5.4]:CopyToVec():cu-vector.cc:899) cudaError_t 4 : "unspecified launc'
         'h failure" returned from \'cudaMemcpy(dst->Data(), this->data_, sizeof(Real) * dim_, cud'
         "aMemcpyDeviceToHost)'", "cuda.launch_failure"),
        ("RuntimeError: Distributed package doesn't have NCCL built in", "code.cli_config"),
        ("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.", "sched.memory_limit"),
        ("std::runtime_error: [METAL] Command buffer execution failed: Insufficient Memory (00000"
         "008:kIOGPUCommandBufferCallbackErrorOutOfMemory)", "cuda.oom"),
        ("RuntimeError: MPS backend out of memory (MPS allocated: 17.72 GB, other allocations: "
         "400.00 KB, max allowed: 18.13 GB).", "cuda.oom"),
        ("std::runtime_error: [METAL] Command buffer execution failed: Internal Error (0000000e:"
         "Internal Error)", "accel.runtime_error"),
        ('{"simapp_exception": {"function": "save_to_store", "message": "Exception [Connection was '
         'closed before we received a valid response from endpoint URL: \\"http://minio:9000/b'
         'ucket/model.ckpt\\".]"}}', "fs.object_store"),
        ("F0610 17:15:24.994758  3575 syncedmem.hpp:30] Check failed: error == cudaSuccess (11 vs."
         " 0)  invalid argument", "cuda.library"),
        ("F0402 17:15:39.522164 20718 math_functions.cu:422] Check failed: status == CURAND_STATUS"
         "_SUCCESS (201 vs. 0)  CURAND_STATUS_LAUNCH_FAILURE", "cuda.library"),
        ("F0610 17:15:24.994758  3575 syncedmem.hpp:56] Check failed: error == cudaSuccess (2 vs. "
         "0)  out of memory", "cuda.oom"),
        ("mxnet.base.MXNetError: [13:30:33] src/van.cc:63: Check failed: !ip.empty() failed to get"
         " ip", "net.refused"),
        ("[rank2]: RuntimeError: synNodeCreateWithId failed for node: batch_gemm with synStatus 26 "
         "[Generic failure]. .", "accel.runtime_error"),
        ("(autoscaler +44m27s) Instance k-1a5e56fa0001 (node IP: 10.1.140.199) will be terminated "
         "soon (reason: kubernetes-pod-termination).", "sched.preempted"),
        ("TERM_RUNLIMIT: job killed after reaching LSF run time limit.", "sched.time_limit"),
        ("TERM_PREEMPT: job killed after preemption.", "sched.preempted"),
        ("/usr/local/bin/train.sh: line 18:    36 Killed                  python3 train.py",
         "host.sigkill"),
        ("Training process finished. Exit code: 137", "host.sigkill"),
        ("Failed: learner_exit_code: 137", "host.sigkill"),
        ("[rank2]: RuntimeError: Graph compile failed. synStatus=synStatus 26 [Generic failure].",
         "accel.runtime_error"),
        ("EZ3003: No supported Ops kernel and engine are found for [EmbeddingDenseGrad], optype "
         "[EmbeddingDenseGrad].", "accel.runtime_error"),
        ("[E compiler_depend.ts:270] call aclnnFlashAttentionScore failed, detail:EZ9999: Inner "
         "Error!", "accel.runtime_error"),
        ("/pretrain_gpt_1.3B_seq_parallel.sh: line 151: ds_ssh: command not found", "code.shell"),
        ("train.py：错误：需要以下参数：-c/--config       ", "code.cli_config"),
        ('{"loss": Infinity, "grad_norm": Infinity, "step": 7}', "numerical.nan"),
        ('{"loss": "nan", "step": 7}', "numerical.nan"),
        ("2024-11-21 00:10:00,178 [Rank 1] MISMATCH layer 0 fw 31,297,822 / 33,554,432 "
         "[31,297,822 nans detected locally]", "numerical.nan"),
        ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 6.20 MiB for an array "
         "with shape (1472, 1472, 3) and data type uint8", "host.memory_error"),
        ("RuntimeError: [Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::"
         "268435456 (256)MB", "cuda.oom"),
        ("E tensorflow/stream_executor/rocm/rocm_driver.cc:601] failed to allocate 7.35G "
         "(7889485824 bytes) from device: hipError_t(1002)", "cuda.oom"),
        ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request "
         "for 12.50MiB (13107200", "cuda.oom"),
        ("OSError: Not enough disk space. Needed: Unknown size (download: Unknown size, "
         "generated: Unknown size, post-processed: Unknown size)", "fs.nospace"),
        ("UnavailableError: {{function_node __inference_train_function_34573}} failed to connect "
         "to all addresses", "net.grpc_unavailable"),
        ("  (1) Unavailable: {{function_node __inference__train_function_133151}} failed to "
         "connect to all addresses", "net.grpc_unavailable"),  # TensorFlow's grouped errors
        ("> nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please "
         "update your driver to a newer version, or use an earlier cuda container: unknown",
         "cuda.no_kernel_image"),
        ("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you "
         "run some cuda functions before calling NumCudaDevices() that might have already set an "
         "error? Error 804: forward compatibility was attempted on non supported HW",
         "cuda.no_kernel_image"),
        ("RuntimeError: unable to write to file </torch_8226_3581395585_0>: No space left on "
         "device (28)", "fs.shm_full"),
        ("ray.exceptions.OutOfDiskError: Local disk is full", "fs.nospace"),
        ("RuntimeError: normal expects all elements of std >= 0.0", "numerical.nan"),
        ("     3/1000      16.7G        nan        nan        nan        564        640:  25%|",
         "numerical.nan"),  # Ultralytics' progress row: box, class and DFL losses
        ("/bin/sh: 1: torchrun: not found", "code.shell"),
        ("=>> PBS: job killed: walltime 3626 exceeded limit 3600", "sched.time_limit"),
        ("ioctl() fail, (705) Device memory not enough", "cuda.oom"),  # Kunlun's XPU
        ("CUDA SETUP: Required library version not found: libbitsandbytes_cuda121_nocublaslt.so. "
         "Maybe you need to compile it from source?", "code.gpu_library"),
        ("FloatingPointError: invalid value (nan) encountered in jit(train_step)",
         "numerical.nan"),  # JAX's debug_nans
        ("=>> PBS: job killed: mem 17gb exceeded limit 16gb", "sched.memory_limit"),
        ("2024-03-28 21:44:52,843 [ERROR] (__main__) No images were discovered by the bucket "
         "manager in the dataset: pelolisu., traceback: Traceback (most recent call last):",
         "data.empty"),  # SimpleTuner
        (" {'GPU': 1.0, 'CPU': 1.0} * 8 (STRICT_PACK): 1+ pending placement groups",
         "ray.resources_unavailable"),  # `ray status`
        ("(autoscaler +2m) Warning: The following resource request cannot be scheduled right "
         "now: {'GPU': 1.0, 'CPU': 1.0}. This is likely due to all cluster resources being "
         "claimed by actors.", "ray.resources_unavailable"),
        ('srun: error: Munge encode failed: Failed to access "/var/run/munge/munge.socket.2": No '
         "such file or directory", "sched.request_invalid"),
        ("srun: error: Unable to establish control machine address", "sched.request_invalid"),
        ("Error: Blocking queue is killed because the data reader raises an exception",
         "data.loader_thread"),  # PaddlePaddle
        ("WARNING: Could not find any NVIDIA libraries on this host!", "code.no_gpu"),
        ("No data found. Please verify arguments (train_data_dir must be the parent of folders "
         "with images)", "code.cli_config"),  # kohya's sd-scripts
        ("ppo_trainer.py:1100: UserWarning: KL divergence is starting to become negative: -1.66 "
         "- this might be a precursor for failed training.", "numerical.kl_negative"),
        ("Caught sync error: Sync process failed: When initiating multiple part upload for key "
         "'ckpt/x' in bucket 'b': AWS Error INVALID_ACCESS_KEY_ID during CreateMultipartUpload "
         "operation: The Access Key Id you provided does not exist in our records.",
         "code.cloud_permission"),
        ("botocore.exceptions.ClientError: An error occurred (SignatureDoesNotMatch) when calling "
         "the PutObject operation: The request signature we calculated does not match the "
         "signature you provided.", "code.cloud_permission"),
        ("train: WARNING /data/train/images/95.jpg: ignoring corrupt image/label: could not "
         "convert string to float: 'text'", "data.skipped_samples"),
        ("ValueError: Expected parameter logits (Tensor of shape (280, 13)) of distribution "
         "Categorical(logits: torch.Size([280, 13])) to satisfy the constraint "
         "IndependentConstraint(Real(), 1), but found invalid values:", "numerical.nan"),
        ("EE1002: 2024-09-03-16:50:00.041.231 Stream synchronize timeout. rtDeviceSynchronize "
         "execute failed, reason=[stream sync timeout]", "hccl.timeout"),
        ("W tensorflow/core/common_runtime/bfc_allocator.cc:431] Allocator (GPU_0_bfc) ran out "
         "of memory trying to allocate 1.76GiB (rounded to 1889567744)", "cuda.oom"),
        ("RuntimeError: grad_scale is too small, exiting: 2.3283064365386963e-10",
         "numerical.loss_scale"),
        ("  what():  [enforce fail at context_gpu.h:230] error == cudaSuccess. 4 vs 0. Error at: "
         "context_gpu.h:230: unspecified launch failure", "cuda.launch_failure"),
        ("RuntimeError: Error opening 'a.wav': File contains data in an unknown format.",
         "data.audio"),
        ("[2025-05-19 04:35:55,963 E 1009104 1009840] logging.cc:496: *** SIGABRT received at "
         "time=1747643755 on cpu 39 ***", "segfault.abort"),
        ("RuntimeError: The total norm of order 2.0 for gradients from `parameters` is "
         "non-finite, so it cannot be clipped.", "numerical.nan"),
        ("FloatingPointError: invalid value (nan) encountered in mul", "numerical.nan"),
        ("InvalidArgumentError: Nan in summary histogram for: dense/kernel_0", "numerical.nan"),
        ("tensorflow.python.framework.errors_impl.InvalidArgumentError: logits : Tensor had NaN "
         "values", "numerical.nan"),
        ("RuntimeError: Resource exhausted: Failed to allocate request for 32.00MiB (33554432B) "
         "on device ordinal 0", "cuda.oom"),
        ("Error: Invalid value for '--config': Path 'x.yaml' does not exist.", "code.cli_config"),
        ("                 Value function loss: inf", "numerical.nan"),
        ("Failed to initialize NVML: Driver/library version mismatch", "gpu.driver_mismatch"),
        ("Failed to initialize NVML: Unknown Error", "gpu.lost"),
        ("Attaching to process 41822", "hang.debugger"),
        ("Thread 3 (Thread 0x7f2b3dfff700 (LWP 41822)):", "hang.debugger"),
        ("^C", "hang.interrupted"),
        ("[W socket.cpp:401] [c10d] The server socket cannot be initialized on [::]:29501 "
         "(errno: 97 - Address family not supported by protocol).", "net.refused"),
        # a server that failed or throttled the request (urllib's, requests'), or a client that
        # could not reach its server
        ("urllib.error.HTTPError: HTTP Error 503: Service Unavailable", "net.http"),
        ("requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: "
         "https://huggingface.co/api/models/org/model/tree/main", "net.http"),
        ("requests.exceptions.HTTPError: 502 Server Error: Bad Gateway for url: "
         "https://api.wandb.ai/graphql", "net.http"),
        ("ValueError: Could not connect to server after multiple tries.", "net.connect"),
        ("ConnectionError: Unable to connect to the remote endpoint https://tracking:5000",
         "net.connect"),
        # a loss at NaN or inf under a namespace, as wandb-style loggers print it
        ("train/generator_loss = nan.", "numerical.nan"),
        ("{'train/policy_loss': nan, 'train/lr': 1e-05}", "numerical.nan"),
        ("losses.total_loss: inf", "numerical.nan"),
        # pinned (page-locked) host memory, not the GPU's
        ("[ERROR] arena.cc:250] Init] cudaHostAlloc failed, ret[2], out of memory",
         "host.memory_error"),
        ("RuntimeError: cudaMallocHost failed: out of memory", "host.memory_error"),
        ("Could not establish connection to the server at 10.0.0.5:8000", "net.connect"),
        # a proxy that refused the tunnel, aiohttp's refused connect
        ("requests.exceptions.ProxyError: HTTPSConnectionPool(host='huggingface.co', port=443): "
         "Max retries exceeded with url: /api (Caused by ProxyError('Unable to connect to proxy', "
         "OSError('Tunnel connection failed: 407 Proxy Authentication Required')))",
         "net.hub"),
        ("aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host 10.0.0.5:8000 "
         "ssl:default [Connect call failed ('10.0.0.5', 8000)]", "net.connect"),
        ("HTTP Error 429 thrown while requesting HEAD https://huggingface.co/api/datasets/o/d",
         "net.rate_limited"),
        # the CUDA runtime's words for a kernel's fault, printed by an extension without `error`
        ("Line 298: an illegal memory access was encountered", "cuda.illegal_access"),
        ("soundfile.LibsndfileError: <exception str() failed>", "data.audio"),
        # Ascend's CANN runtime, its error codes and MindSpore's words around them
        ("E39999: Inner Error!", "accel.runtime_error"),
        # a device task (most often a collective's) on Ascend that never finished
        ("[Error]: The execution of the internal task times out.", "hccl.timeout"),
        ("rtDeviceSynchronize execute failed, reason=[task timeout][FUNC:FuncErrorReason]",
         "hccl.timeout"),
        # AWS Neuron's graph compiler rejecting the model, and its collectives' bootstrap
        ("Failed compilation with ['neuronx-cc', 'compile', '--target=trn1', '--framework=XLA']",
         "code.compile"),
        ("ERROR ||NEURON_CC_WRAPPER||: Got a cached failed neff at /var/tmp/cache/model.neff.",
         "code.compile"),
        ("bootstrap.cc:89 CCOM WARN Timeout waiting for incoming connection (waited 120 sec)",
         "net.refused"),
        # XGBoost's rabit: a socket that could not connect, a host name that did not resolve
        ("Socket Connect Error:Invalid argument", "net.refused"),
        ("WARNING gethostbyname(socket.getfqdn()) failed... trying on hostname()", "net.dns"),
        # a custom op's OOM inside TensorFlow's
        ("(0) Resource exhausted: Operation received an exception: DeePMD-kit OOM: CUDA Assert, "
         "in file /tmp/source/op/custom_op.cc:12", "cuda.oom"),
        # glibc aborting on a corrupt heap, older and newer words
        ("*** Error in `python': corrupted size vs. prev_size: 0x0000560a10045d70 ***",
         "segfault.heap"),
        ("double free or corruption (out)", "segfault.heap"),
        ("free(): invalid pointer", "segfault.heap"),
        # MXNet's mshadow on a GPU out of memory; decord on a truncated video
        ("  what():  [17:54:40] stream_gpu-inl.h:198: Check failed: e == cudaSuccess CUDA: out "
         "of memory", "cuda.oom"),
        ("[BytesIO]Unable to handle EOF because it takes too long to retrieve last few frames",
         "data.audio"),
        # parameters gone non-finite, in a trainer's words or as torch prints them
        ("speechbrain.core - WARNING - Parameter is not finite: Parameter containing:",
         "numerical.nan"),
        ("tensor([[nan, nan, nan,  ..., nan, nan, nan],", "numerical.nan"),
        # MindSpore's device allocator
        ("[ERROR] DEVICE(70996,7f8c,python):2024-04-26-00:50:19.865.578 [run_op_helper.cc:383] "
         "MallocForKernelOutput] Allocate output memory failed, node:Default/Cast-op446",
         "cuda.oom"),
        ("[ERROR] DEVICE(44814,7f33,python):2023-06-01-22:47:58.744.961 [ascend_utils.cc:35] "
         "ReportErrorMessage] Ascend error occurred, error message:", "accel.runtime_error"),
        # a client retrying its server: urllib3's pool, wandb's loop and its start given up
        ("WARNING:urllib3.connectionpool:Retrying (Retry(total=4, connect=5, read=4, redirect=5, "
         "status=5)) after connection broken by 'ReadTimeoutError(\"HTTPSConnectionPool(host="
         "'eastus2.api.azureml.ms', port=443): Read timed out. (read timeout=120)\")': /mlflow/",
         "net.retrying"),
        ("wandb: Network error (ReadTimeout), entering retry loop.", "net.retrying"),
        ("wandb: ERROR Run initialization has timed out after 90.0 sec.", "net.retrying"),
        # NCCL's trace of a failed call, a line for each function the error passes up
        ("c39f5cf046aa:4533:4667 [0] NCCL INFO misc/socket.cc:568 -> 2", "nccl.error_trace"),
        ("dgxa100:1050:1316 [0] NCCL INFO transport/net.cc:515 -> 2", "nccl.error_trace"),
        # NVRTC older than the GPU; tf.data batching samples of different shapes; TensorFlow 2's
        # words for a kernel missing on a device; fsspec's and Arrow's for a scheme they lack
        ("RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)",
         "cuda.no_kernel_image"),
        ("  (0) INVALID_ARGUMENT:  Cannot batch tensors with different shapes in component 0. "
         "First element had shape [512,512,3] and element 3 had shape [512,512,1].",
         "data.collate"),
        ("tensorflow.python.framework.errors_impl.NotFoundError: No registered 'MatMul' OpKernel "
         "for 'GPU' devices compatible with node {{node MatMul}}", "code.no_op_kernel"),
        ("ValueError: Protocol not known: hdfs2", "code.fs_scheme"),
        # RDKit's log of a molecule it rejects (the story only of a log without an error)
        ("> [15:08:51] **Explicit valence for atom # 1 Cl, 7, is greater than permitted**",
         "data.molecule_logged"),
        ("[12:01:33] Can't kekulize mol.  Unkekulized atoms: 0 1 2 3 4", "data.molecule_logged"),
        ("[12:01:33] SMILES Parse Error: syntax error while parsing: C1CC(",
         "data.molecule_logged"),
        # bitsandbytes' checks of its CUDA calls; other allocators' words for device memory
        # (Intel's TensorFlow extension, DirectML, Direct3D 12, MLX on Metal); a pool's child and
        # zsh's job report killed by a signal; compute-sanitizer's misaligned access
        ("cuBLAS API failed with status 15", "cuda.library"),
        ("Error operation not supported at line 380 in file /mmfs1/gscratch/zlab/timdettmers/git/"
         "bitsandbytes/csrc/pythonInterface.c", "cuda.library"),
        ("E itex/core/devices/bfc_allocator.cc:101] Allocator ran out of memory trying to "
         "allocate 10529419660 Bytes (rounded to 10529419776 Bytes)", "cuda.oom"),
        ("2023-08-15 17:45:31.783265: W tensorflow/core/common_runtime/dml/dml_heap_allocator.cc"
         ":109] DML allocator out of memory!", "cuda.oom"),
        ("CHECK failed: ((((HRESULT)((d3d_device->CreateCommittedResource( &properties, "
         "D3D12_HEAP_FLAG_NONE, &resource_buffer, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, nullptr"
         ", __uuidof(*out), reinterpret_cast<void**>(out))))) >= 0)) == (true)", "cuda.oom"),
        ("RuntimeError: [metal::malloc] Attempting to allocate 17179869184 bytes which is greater "
         "than the maximum allowed buffer size of 14302248960 bytes.", "cuda.oom"),
        ("RuntimeError: A subprocess exited unexpectedly with status -9", "host.sigkill"),
        ("A subprocess exited unexpectedly with status -11", "segfault.segv"),
        ("[1]    15017 bus error  python3 train_gpt2.py", "segfault.bus"),
        ("[1]  + 15017 segmentation fault  python3 train.py", "segfault.segv"),
        ("========= Misaligned Shared or Local Address", "cuda.sanitizer"),
        ('RuntimeError: "addmm_impl_cpu_" not implemented for \'Half\'', "code.dtype_unsupported"),
        ("2019-02-13 03:30:22.041879: W tensorflow/core/util/ctc/ctc_loss_calculator.cc:144] No "
         "valid path found.", "data.ctc_no_path"),
        ("In 'text2semantic_finetune': Could not find 'model/dual_ar_2_codebook_small'",
         "code.cli_config"),  # Hydra's short error
        ("error: 'mps.multiply' op operands don't have broadcast-compatible shapes",
         "accel.runtime_error"),  # Apple's MPSGraph
        ("RuntimeError: CUDA is available for PyTorch, but NNCF could not compile GPU "
         "quantization extensions.", "code.op_build"),
        ("RuntimeError: CUDA error: HIPBLAS_STATUS_NOT_SUPPORTED when calling "
         "`HIPBLAS_STATUS_NOT_SUPPORTED`", "cuda.library"),
        ("pyarrow.lib.ArrowInvalid: Unrecognized filesystem type in URI: abfss://c@a/x",
         "code.fs_scheme"),
        # UCX under MPI: its own ERROR lines, its InfiniBand transport giving up on a peer;
        # Dask's worker pausing at its memory threshold; gzip's EOFError message wrapped onto a
        # line of its own; getaddrinfo's words as ssh prints them
        ("[1695144496.484294] [hpci5201:103648:0]       ib_device.c:1250 UCX  ERROR   "
         "ibv_create_ah(dlid=49152 sl=0 port=1 src_path_bits=0) for UD verbs connect on bnxt_re0 "
         "failed: Connection timed out", "mpi.ucx"),
        ("[master:19546:0:19546] ib_mlx5_log.c:139  Transport retry count exceeded on mlx5_0:1/IB "
         "(synd 0x15 vend 0x81 hw_synd 0/0)", "nccl.ib_completion"),
        ("2023-06-09 17:52:34,882 - distributed.worker_memory - WARNING - Worker is at 90% memory "
         "usage. Pausing worker.  Process memory: 23.58 GiB -- Worker memory limit: 26.08 GiB",
         "host.dask_memory_high"),
        ("Compressed file ended before the end-of-stream marker was reached", "data.truncated"),
        ("ssh: Could not resolve hostname node-5.job: Name or service not known", "net.dns"),
        # SIGHUP as some torch releases raise it and some paste it; a trainer's own connections
        # retried (LightGBM's peers, TensorFlow's TPU master); USD's remote asset not fetched
        ("torch.distributed.elastic.multiprocessing.api.SignalException: Process 81061 got "
         "sigval:1 ", "launcher.hangup"),
        ("SignalException: Process 81061 got signal : 15", "sched.death_signal"),
        ("[LightGBM] [Warning] Connecting to rank 1 failed, waiting for 260 milliseconds",
         "net.retrying"),
        ("WARNING:tensorflow:Failed to connect to the Tensorflow master. The TPU worker may not "
         "be ready (still scheduling) or the Tensorflow master address is incorrect:",
         "net.retrying"),
        ("2025-05-15 03:17:11 [389,670ms] [Warning] [omni.usd] Warning: in _ReportErrors at line "
         "2890 of USD/pxr/usd/usd/stage.cpp -- In </World/envs/env_0/Robot>: Could not open asset "
         "@http://omniverse-content-production.s3-us-west-2.amazonaws.com/Assets/Isaac/4.2/Isaac/"
         "Robots/Unitree/Go2/go2.usd@ for reference introduced by @anon:0x6a8a0e0:World0.usd@"
         "</World/envs/env_0/Robot>.", "net.remote_asset"),
        # Open3D on a point cloud it cannot open; an optimiser's objective gone NaN; PyTorch3D's
        # rasterizer out of room in its bins
        ("[Open3D WARNING] Read PCD failed: unable to open file: v2xset/train/3242/000340.pcd",
         "data.image"),
        ("  Objective function value: nan", "numerical.nan"),
        # Windows refusing a path's syntax (in its English words); a file the Hub repository does
        # not hold
        ("OSError: [WinError 123] The filename, directory name, or volume label syntax is "
         "incorrect: 'runs\\vgg16\\2019-03-16T19:09:02.288156'", "python.config_path"),
        ("EntryNotFoundError('404 Client Error. (Request ID: Root=1-67ecdc3c)", "code.cli_config"),
        # out of memory in other runtimes' words: Lua Torch's CUDA check and its host allocator,
        # dlib's, ArrayFire's (Flashlight, wav2letter), Arrow's
        ("THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCStorage.cu line=58 error=2 : "
         "out of memory", "cuda.oom"),
        ("Error while calling cudaMalloc(&data, new_size*sizeof(float)) in file /home/ubuntu/"
         "dlib/dlib/cuda/gpu_data.cpp:191. code: 2, reason: out of memory", "cuda.oom"),
        ("Failed to allocate memory of size 152.00 MiB (Device: 0, Capacity: 14.75 GiB, "
         "Allocated: 13.93 GiB, Cached: 721.55 MiB) with error 'ArrayFire Exception (Device out "
         "of memory:101)'", "cuda.oom"),
        ("luajit: $ Torch: not enough memory: you tried to allocate 2GB. Buy new RAM! at "
         "/tmp/luarocks_torch-scm-1-1092/torch7/lib/TH/THGeneral.c:270", "host.memory_error"),
        ("pyarrow.lib.ArrowMemoryError: realloc of size 2172846080 failed", "host.memory_error"),
        # a tuner's trial: its objective gone NaN or given no number; an exception reported by its
        # repr; torch.distributions' check in releases before 1.10
        ("Trial 8 failed, because the objective function returned nan.", "numerical.nan"),
        ("[W 2022-11-01 12:00:00,000] Trial 0 failed because of the following error: TypeError("
         "\"__init__() got an unexpected keyword argument 'nminibatches'\")", "python.bug"),
        ("Run 8x1k2abc errored: IndexError('list index out of range')", "python.bug"),
        ("[W 2021-08-31 18:03:34,301] Trial 2 failed because of the following error: ValueError("
         "'The parameter loc has invalid values')", "numerical.nan"),
        # Caffe's and Darknet's checks of labels against predictions and classes
        ("F0101 12:00:00.000 softmax_loss_layer.cpp:47] Check failed: outer_num_ * inner_num_ == "
         "bottom[1]->count() (4900 vs. 100) Number of labels must match number of predictions; "
         "e.g., if softmax axis == 1 and prediction shape is (N, C, H, W), label count (number of "
         "labels) must be N*H*W, with integer values in {0, 1, ..., C-1}.", "code.shapes"),
        (" Wrong annotation: class_id = 2. But class_id should be [from 0 to 1], file: data/"
         "img/1.txt", "data.schema"),
        # Ray before 2.0 out of host memory (not a GPU's: the class name ends in OutOfMemoryError);
        # Windows' exit status of a stack overflow; Unity ML-Agents' port taken; a policy's
        # actions gone NaN in NumPy's words
        ("ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node tr001 is "
         "used (59.62 / 62.75 GB).", "host.ray_memory_monitor"),
        ("Process finished with exit code -1073741571 (0xC00000FD)", "segfault.segv"),
        ("mlagents_envs.exception.UnityWorkerInUseException: Couldn't start socket communication "
         "because worker number 1 is still in use.", "net.address_in_use"),
        ("AssertionError: {'action': array([nan, nan, nan, nan, nan, nan, nan, nan, nan, nan,",
         "numerical.nan"),
        # FlashAttention 2's words for a GPU too small; Gloo's check as Python raises it
        ("RuntimeError: FlashAttention backward for head dim > 192 requires A100/A800 or "
         "H100/H800", "code.gpu_arch"),
        ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:510] "
         "op.preamble.length <= op.nbytes. 8773 vs 4", "gloo.transport_enforce"),
        # ptxas crashing under XLA's autotuner; a preprocessing step that kept no sample
        ("2025-06-03 15:57:13.000000: F external/xla/xla/service/gpu/triton_autotuner.cc:624] "
         "Check failed: ... INTERNAL: ptxas exited with non-zero error code 139, output: ",
         "xla.gpu_autotuner"),
        ("RuntimeError: Cannot find valid samples, check `data/README.md` for the data format.",
         "data.empty"),
        ("[DEBUG] !!! CRITICAL: Dataset is empty after map operation! All samples were "
         "filtered. !!!", "data.empty"),
        # a CUDA kernel's assert whose line was cut before `Assertion`; dlib's check of a CUDA call
        ("C:\\actions-runner\\_work\\pytorch\\pytorch\\builder\\windows\\pytorch\\aten\\src\\ATen\\"
         "native\\cuda\\ScatterGatherKernel.cu:276: block: [0,0,0], thr", "code.device_assert"),
        (" what():  Error while calling cudaMemcpy(dest.device_write_only(),src.device()+"
         "src_offset,num*sizeof(float),cudaMemcpyDeviceToDevice) in file dlib/dnn/gpu_data.cpp: "
         "62. code 11,reason :invalid argument", "cuda.code_error"),
        # kernel libraries' own checks of the GPU; a build without Python's headers
        ("RuntimeError: FlashAttention backward for head dim > 64 requires A100 or H100 GPUs as "
         "the implementation needs a large amount of shared memory.", "code.gpu_arch"),
        ("RuntimeError: Found NVIDIA GeForce GTX 1080 which is too old to be supported by the "
         "triton GPU compiler, which is used as the backend.", "code.gpu_arch"),
        ("triton.runtime.autotuner.OutOfResources: out of resource: shared memory, Required: "
         "663808, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.",
         "code.gpu_arch"),
        ("/tmp/tmpx2k/main.c:5:10: fatal error: Python.h: No such file or directory",
         "code.op_build"),
        # icefall's check before it trains; Lhotse's checks of a recording against its manifest;
        # Kaldi's preconditioner gone numerically bad
        ("2024-12-19 16:58:57,481 ERROR [train.py:1345] Your GPU ran out of memory with the "
         "current max_duration setting. We recommend decreasing max_duration and trying again.",
         "cuda.oom"),
        ("The number of declared samples in the recording diverged from the one obtained when "
         "loading audio (offset=0.0, duration=None). This could be internal Lhotse's error or a "
         "faulty transform implementation.", "data.audio"),
        ("AssertionError: Supervision 40743833-00005000-00007337-4: exceeded the bounds of its "
         "corresponding recording (supervision spans [63.66, 73.37]; recording spans [0, 73.365])",
         "data.audio"),
        ("ERROR (nnet-train-simple[5.5.243~1-8cafd]:ReorthogonalizeXt1():nnet-precondition-online"
         ".cc:222) Cholesky out of expected range, reorthogonalizing with Gram-Schmidt",
         "numerical.nan"),
        # TensorFlow 1.x out of GPU memory; its cuDNN handle not made; Colab's host RAM; DirectML's
        # device gone and MLX's Metal kernel not loaded; DeepEP's kernels' timeout
        ("tensorflow.python.framework.errors_impl.InternalError: Dst tensor is not initialized.",
         "cuda.oom"),
        ("  (0) Unknown: Failed to get convolution algorithm. This is probably because cuDNN "
         "failed to initialize, so try looking to see if a warning log message was printed "
         "above.", "cuda.library"),
        ("Your session crashed after using all available RAM. If you are interested in access to "
         "high-RAM runtimes, you may want to check out Colab Pro", "host.memory_error"),
        ("2023-05-28 18:58:27.210590: E tensorflow/c/logging.cc:40] The DirectML device has "
         "encountered an unrecoverable error (DXGI_ERROR_DEVICE_REMOVED).",
         "accel.runtime_error"),
        ("2024-04-08 03:15:23.769735: F tensorflow/c/logging.cc:43] HRESULT failed with "
         "0x887a0005: chunk->resource->Map(0, nullptr, &upload_heap_data)",
         "accel.runtime_error"),
        ("std::runtime_error: [metal::Device] Unable to load kernel input_coherent",
         "accel.runtime_error"),
        ("DeepEP timeout check failed: rank = 0, thread = 0, value = 0)", "nccl.watchdog_timeout"),
        # MIOpen's kernel database written by concurrent jobs
        ("/data/driver/MLOpen/src/include/miopen/kern_db.hpp:147: Internal error while accessing "
         "SQLite database: database disk image is malformed", "fs.sqlite"),
        # the shell's report of a process over its CPU time limit (SIGXCPU)
        ("CPU time limit exceeded (core dumped)", "sched.time_limit"),
        # (the cache missing a file while the Hub could not be reached: the network's)
        ("huggingface_hub.utils._errors.LocalEntryNotFoundError: Connection error, and we cannot "
         "find the requested files in the disk cache.", "net.hub"),
        ("Bin size was too small in the coarse rasterization phase. This caused an overflow, "
         "meaning output may be", "code.rasterizer_bins"),
        # text read or written with the platform's codec, not UTF-8 (Windows' code pages, a C
        # locale's ASCII); a file that is not UTF-8 at all is the data's
        ("UnicodeDecodeError: 'charmap' codec can't decode byte 0x9d in position 2201: character "
         "maps to <undefined>", "code.locale_encoding"),
        # (ASCII's is pickle's default for a Python 2 pickle: the data's reader, not the locale)
        ("UnicodeDecodeError: 'ascii' codec can't decode byte 0x8b in position 6: ordinal not in "
         "range(128)", "data.decode"),
        ("UnicodeDecodeError: 'cp932' codec can't decode byte 0x85 in position 26: illegal "
         "multibyte sequence", "code.locale_encoding"),
        ("UnicodeDecodeError: 'utf-8' codec can't decode byte 0x92 in position 7047: invalid "
         "start byte", "data.decode"),
        # Windows' loader: a DLL's procedure missing, a DLL of another architecture
        ("OSError: [WinError 127] The specified procedure could not be found. Error loading "
         '"C:\\venv\\lib\\site-packages\\torch\\lib\\c10_cuda.dll" or one of its dependencies.',
         "code.dll_load"),
        ("ImportError: DLL load failed while importing _C: The specified module could not be "
         "found.", "code.dll_load"),
        # gloo's device from the host's name; a call the backend does not serve
        ("RuntimeError: makeDeviceForHostname(): unsupported gloo device", "net.gloo_device"),
        ("RuntimeError: GlooDeviceFactory::makeTCPDevice(): interface or hostname can't be empty",
         "net.gloo_device"),
        ("[rank2]: RuntimeError: No backend type associated with device type cpu",
         "code.backend_unsupported"),
        ("RuntimeError: Backend gloo does not support reduce_scatter_tensor_coalesced",
         "code.backend_unsupported"),
        # TensorFlow out of memory on a GPU, not the host's
        ("ResourceExhaustedError: OOM when allocating tensor with shape[8,13,13,1024] and type "
         "float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
         "cuda.oom"),
        ("THCudaCheck FAIL file=torch/csrc/cuda/Module.cpp line=34 error=10 : invalid device "
         "ordinal", "code.device_ordinal"),
        # MPI's start-up failing (Open MPI's error handler on MPI_Init, MPICH's), and a call's
        ("*** An error occurred in MPI_Init_thread", "mpi.init_failed"),
        ("Fatal error in PMPI_Init_thread: Other MPI error, error stack:", "mpi.init_failed"),
        ("Fatal error in PMPI_Allreduce: Other MPI error, error stack:", "mpi.error"),
        ("[1,3]<stderr>:*** An error occurred in MPI_Recv: MPI_ERR_TRUNCATE: message truncated",
         "mpi.truncated"),
        # CPython given a script that is not there
        ("python: can't open file '/home/u/train.py': [Errno 2] No such file or directory",
         "code.script_missing"),
        # Keras stopping fit when its input ran dry (a consequence: the validation data's
        # running dry reads the same, and Keras trains on)
        ("WARNING:tensorflow:Your input ran out of data; interrupting training. Make sure that "
         "your dataset or generator can generate at least `steps_per_epoch * epochs` batches (in "
         "this case, 26622 batches).", "code.input_exhausted"),
        # autocast asked for bfloat16 on a GPU before Ampere
        ("RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to "
         "float16.", "code.gpu_arch"),
        # a job's script running one that is not executable, and the status it ends with
        ("/usr/local/bin/train.sh: line 38: ./start.sh: Permission denied", "code.shell"),
        ("Training exited with error code 126", "code.shell"),
        ("[0] MPI startup(): tmi fabric is not available and fallback fabric is not enabled",
         "mpi.fabric"),
        ("EL0004: 2024-08-28-16:15:00.358.141 Failed to allocate memory.", "cuda.oom"),
        ("E0000 00:00:1721980017.350017     952 tpu_compilation_cache_external.cc:112] "
         "Compilation failure: Aborting compilation early because it's unlikely to have enough "
         "memory. Requires 1.31T, has 14.71G available.", "cuda.oom"),
        ("  (1) Invalid argument: Unknown image file format. One of JPEG, PNG, GIF, BMP required.",
         "data.image"),
        ('Error from server (BadRequest): error when creating "/tmp/tmp56go31ft": JobSet in '
         'version "v1alpha2" cannot be handled as a JobSet: strict decoding error: unknown field '
         '"spec.ttlSecondsAfterFinished"', "sched.request_invalid"),
        ("rtFftsPlusTaskLaunch execute failed, reason=[driver error:out of memory][FUNC:FuncError"
         "Reason][FILE:error_message_manage.cc][LINE:53]", "cuda.oom"),
        # bash's and dash's other words for the same script errors
        ('s6.sh: line 2: 1e: value too great for base (error token is "1e")', "code.shell"),
        ('bash: 1/0: division by 0 (error token is "0")', "code.shell"),
        ("s5.sh: line 1: GPUS: parameter null or not set", "code.shell"),
        ("train.sh: 5: NNODES: parameter not set", "code.shell"),
        ('sh: 1: Syntax error: "then" unexpected', "code.shell"),
        ('s1.sh: 2: arithmetic expression: division by zero: " 4 / a "', "code.shell"),
        # the TPU runtime's out-of-memory with its cause between, kubectl's own validation, a
        # newer TensorFlow's list of image formats, PSM's other words while it probes
        ("XlaRuntimeError: RESOURCE_EXHAUSTED: Error loading program: Attempting to reserve "
         "10.81G at the bottom of memory. That was not possible.", "cuda.oom"),
        ('error: error validating "job.yaml": error validating data: ValidationError(Job.spec): '
         'unknown field "ttlSecondsAfterFinish" in io.k8s.api.batch.v1.JobSpec',
         "sched.request_invalid"),
        ("Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required.",
         "data.image"),
        ("e001.53882PSM2 no hfi units are active (err=23)", "mpi.psm_probe"),
        ("[1] node1.329747PSM2 can't open hfi unit: -1 (err=23)", "mpi.psm_probe"),
        # nvidia-smi's table, a sensor it could not read (weak: a consequence's role)
        ("|ERR!   51C    P2            ERR! /  250W |    2289MiB /  22528MiB |      0%      "
         "Default |", "gpu.smi_err"),
        ("| N/A   ERR!   P0    N/A /  N/A |  31009MiB / 32510MiB |    ERR!      Default |",
         "gpu.smi_err"),
        ("workstation:rank2: PSM3 can't open nic unit: 3 (err=23)", "mpi.psm_probe"),
        ("torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving "
         "ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got "
         "error: failed to format addr, unknown family=0", "net.store"),
        # bash's own errors in a job's script (its arithmetic, its syntax, `set -u`)
        ('train/sft_slurm.sh: line 35: batch_size/(gpu_count * nnodes): division by 0 (error '
         'token is "(gpu_count * nnodes)")', "code.shell"),
        ("run_pretrain.sh: line 12: syntax error near unexpected token `fi'", "code.shell"),
        ("/var/spool/slurmd/job123/slurm_script: line 9: NNODES: unbound variable",
         "code.shell"),
        # a platform's report of a pod killed by SIGKILL (Flyte)
        ("[f8107735c673549d7acd-n0-0] terminated with exit code (137). Reason [Error]. Message: ",
         "host.sigkill"),
        # a map function's columns of different lengths; make giving up on a run-time build
        ("pyarrow.lib.ArrowInvalid: Column 1 named input_ids expected length 1000 but got length "
         "709", "code.arrow_batch"),
        ("make: *** No targets specified and no makefile found.  Stop.", "code.link_failed"),
        ("make[1]: *** [Makefile:9: helpers] Error 1", "code.link_failed"),
        # TensorBoard's histogram of NaN weights; torch's OOM message without its first sentence
        ("ValueError: The histogram is empty, please file a bug report.", "numerical.nan"),
        (" free. Of the allocated memory 53.61 GiB is allocated by PyTorch, and 382.24 MiB is "
         "reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
         "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "cuda.oom"),
        # an exception after a full-width colon (a Chinese sentence around a pasted line)
        ("会报错：ValueError: Audio feature extractor was not found, please check and update your "
         "model file.", "python.bug"),
        ("报错：ModuleNotFoundError: No module named 'cosyvoice'", "python.import"),
        # Horovod's gloo rendezvous waiting on its HTTP store
        ("  what():  [/tmp/horovod/common/gloo/http_store.cc:57] Wait timeout after 30 seconds "
         "for key(s): rank_3", "net.store"),
        # Windows' Event Viewer on a crashed process
        ("Exception code: 0xc0000005", "segfault.segv"),
        # xFormers' dispatcher, the exception's class printed or not; torch < 1.0's list of
        # tensors of mixed types; the shell's word written over a progress bar's redraw
        ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with "
         "inputs:", "code.xformers_dispatch"),
        ("No operator found for `memory_efficient_attention_backward` with inputs: ",
         "code.xformers_dispatch"),
        ("RuntimeError: Expected a Tensor of type torch.cuda.HalfTensor but found a type "
         "torch.cuda.FloatTensor for sequence element 926 in sequence argument at position #1 "
         "'tensors'", "code.shapes"),
        ("Killedg in train batch: 127687 / 263115", "host.sigkill"),
        ("flash_attn._flash_attn_varlen_forward.default: got mixed torch.Tensor and DTensor, "
         "need to convert all torch.Tensor to DTensor before calling distributed operators",
         "code.shapes"),
        # AMD's MIOpen (cuDNN's counterpart), torch_npu's failed HCCL call, TensorFlow's hint
        # after an out-of-memory whose own line was cut off
        ("MIOpen Error: /MIOpen/src/ocl/convolutionocl.cpp:831: Forward Convolution cannot be "
         "executed due to incorrect params", "cuda.library"),
        ("MIOpen(HIP): Error [BuildOcl] comgr status = INVALID_ARGUMENT (2)", "cuda.library"),
        ("RuntimeError: miopenStatusUnknownError", "cuda.library"),
        ("Cannot find primary config 'train'. Check that it's in your config search path.",
         "code.cli_config"),  # Hydra's
        # MPICH's and Intel MPI's process manager (also named Hydra) refusing an option, and a
        # program it could not start on a node; the shell by its path
        ("[mpiexec@head] match_arg (../../../../../src/pm/i_hydra/libhydra/arg/hydra_arg.c:91): "
         "unrecognized argument x", "code.cli_config"),
        ("<[mpiexec@cappuccino-Super-Server] match_arg (utils/args/args.c:163): unrecognized "
         "argument allow-run-as-root", "code.cli_config"),
        ("[8] [proxy:1:1@node2] HYD_spawn (../../../../../src/pm/i_hydra/libhydra/spawn/intel/"
         "hydra_spawn.c:117): execvp error on file FOUNDED_MLSL_ROOT/intel64/bin/ep_server (No "
         "such file or directory)", "code.cli_config"),
        ("/bin/sh: numactl: command not found", "code.shell"),
        ("CUDA Error: unknown error", "gpu.unknown_cuda_error"),  # Darknet's check_error
        (" **Error: File 'data/corpus.bpe.en' is empty", "data.empty"),  # Marian's corpus reader
        ("  what():  Memory Object Allocation Failure", "cuda.oom"),  # OpenCL (LightGBM's GPU)
        ("Out of memory while trying to allocate 2359296 bytes.", "cuda.oom"),  # XLA's, cut
        ("BufferAssignment OOM Debugging.", "cuda.oom"),
        ("02/15/2020 15:10:09 MainProcess     _training_0     multithreading  run              "
         "         DEBUG    Error in thread (_training_0): You do not have enough GPU memory "
         "available to train the selected model at the selected settings.", "cuda.oom"),
        ("`Process finished with exit code -1073740791 (0xC0000409)`", "segfault.aborted"),
        ("STATUS_STACK_BUFFER_OVERRUN", "segfault.aborted"),
        ("ImportError: DLL load failed while importing _pywrap_tensorflow_internal: Die "
         "Auslagerungsdatei ist zu klein, um diesen Vorgang durchzuführen.", "host.memory_error"),
        ("ray.exceptions.RayTaskError(NotImplementedError): ray::TrainTrainable.train() "
         "(pid=1481, ip=10.107.76.5, actor_id=16e01024e8f96f26f980a63b03000000, "
         "repr=TorchTrainer)", "python.bug"),  # Ray's wrapper, its task's own line cut
        ('exec: "train": executable file not found in $PATH', "sched.exec_failed"),  # SageMaker
        ('Error: failed to create containerd task: failed to create shim task: OCI runtime '
         'create failed: runc create failed: unable to start container process: exec: "python": '
         "executable file not found in $PATH: unknown", "sched.exec_failed"),
        # torch.multinomial on NaN probabilities, as the CUDA kernel asserts it and on the CPU
        ("/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu:112: _assert_async_cuda_kernel: "
         "block: [0,0,0], thread: [0,0,0] Assertion `probability tensor contains either `inf`, "
         "`nan` or element < 0` failed.", "numerical.nan"),
        ("RuntimeError: probability tensor contains either `inf`, `nan` or element < 0",
         "numerical.nan"),
        ('time="2023-06-13T03:24:07Z" level=warning msg="Sync PodGroup kubeflow/pytorch-dist-'
         "mnist-gloo: unable to create PodGroup: unable to create PodGroup: the server could not "
         'find the requested resource (post podgroups.scheduling.volcano.sh)"',
         "sched.request_invalid"),  # a CRD not installed, through the training operator
        # glibc's heap checks since 2.29, and its allocator's assertion
        ("free(): double free detected in tcache 2", "segfault.heap"),
        ("malloc(): unaligned tcache chunk detected", "segfault.heap"),
        ("malloc(): corrupted top size", "segfault.heap"),
        ("malloc(): unaligned fastbin chunk detected", "segfault.heap"),
        ("python: malloc.c:3722: _int_malloc: Assertion `(unsigned long) (size) >= (unsigned "
         "long) (nb)' failed.", "segfault.heap"),
        ("/usr/bin/bash: deepspeed: command not found", "code.shell"),
        ("torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of "
         "memory)", "cuda.oom"),
        ("2025-07-08 10:39:40 ERROR    !!! Exception during processing !!! Allocation on device  ",
         "cuda.oom"),  # ComfyUI's cut of it
        ("[CUDNN ERROR] at file cudnn_att.cpp:141:", "cuda.library"),  # llm.c's check
        ("[cudnn_frontend] Error: No execution plans built successfully.", "cuda.library"),
        ("(TaskRunner pid=30188) RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/"
         "compiler_depend.ts:102 HCCL function error: hcclCommInitRootInfoConfig(numRanks, "
         "&rootInfo, rank, config, &(comm->hcclComm_)), error code is 4", "nccl.error"),
        ("2020-11-06 09:05:12.060282: E    1335 tensorflow/compiler/xla/xla_client/xla_util.cc:76]"
         " Hint: If you want to see a list of allocated tensors when OOM happens, add "
         "report_tensor_allocations_upon_oom to RunOptions for current allocation info.",
         "cuda.oom_hint"),
        # the loader's and TypeError's own words, with no exception class on the line
        ('    "message": "Module raised an exception for failing to TPU node IP: /root/.local/lib/'
         'python3.7/site-packages/tensorflow/core/kernels/libtfkernel_sobol_op.so: undefined '
         'symbol: _ZN10tensorflow14kernel_factory17OpKernelRegistrar12InitInternalEPKNS_9",',
         "python.import"),
        ("Failed to create empty model structure: FlashTransformerLayer.__init__() got an "
         "unexpected keyword argument 'ffn_dim'", "python.bug"),
        ("Train Tools: train.train error replace_unet_cross_attn_to_xformers.<locals>."
         "forward_xformers() got an unexpected keyword argument 'encoder_hidden_states'",
         "python.bug"),
        # other runtimes' words for a network that failed: Java's, Go's net package, Node's,
        # curl's and git's, gRPC core's, ssh's
        ("java.net.UnknownHostException: node-2.cluster.local", "net.dns"),
        ("dial tcp: lookup minio on 10.96.0.10:53: no such host", "net.dns"),
        ("Error: getaddrinfo ENOTFOUND api.wandb.ai", "net.dns"),
        ("fatal: unable to access 'https://github.com/x/y.git/': Could not resolve host: "
         "github.com", "net.dns"),
        ("curl: (6) Could not resolve host: example.com", "net.dns"),
        ('Get "https://huggingface.co/api/models": dial tcp 10.0.0.1:443: i/o timeout',
         "net.refused"),
        ("⠸ Starting training run...(node:16964) UnhandledPromiseRejectionWarning: RequestError: "
         "Error: connect ETIMEDOUT 169.61.47.130:80", "net.refused"),
        ("ssh: connect to host node2 port 22: No route to host", "net.refused"),
        ("read tcp 10.1.2.3:50312->10.1.2.4:2379: read: connection reset by peer",
         "net.peer_closed"),
        ("write: broken pipe", "net.peer_closed"),
        ("google.api_core.exceptions.ServiceUnavailable: 503 failed to connect to all addresses",
         "net.grpc_unavailable"),
        # storage in other runtimes' and the kernel's words, and the object stores' throttling
        ("write /var/lib/docker/overlay2/x/diff/tmp: no space left on device", "fs.nospace"),
        ("gcsfuse: ReadFile: input/output error", "fs.eio"),
        ("[ 8812.341] blk_update_request: I/O error, dev sdb, sector 123456 op 0x1:(WRITE)",
         "fs.eio"),
        ("[ 8812.342] Buffer I/O error on dev sdb1, logical block 15, lost async page write",
         "fs.eio"),
        ("EXT4-fs error (device nvme0n1p1): ext4_find_entry:1455: inode #2: comm python: "
         "reading directory lblock 0", "fs.eio"),
        ('XFS (md0): metadata I/O error in "xfs_trans_read_buf_map" at daddr 0x2 len 1 error 5',
         "fs.eio"),
        ("Lustre: lustre-OST0001-osc-ffff8: Connection to lustre-OST0001 (at 10.0.0.2@o2ib) was "
         "lost; in progress operations using this service will wait for recovery to complete",
         "fs.network_mount"),
        ("google.api_core.exceptions.TooManyRequests: 429 PUT https://storage.googleapis.com/"
         "upload/storage/v1/b/ckpt/o: The object exceeded the rate limit for object mutation "
         "operations (create, update, and delete).", "fs.object_store"),
        ("botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the "
         "PutObject operation (reached max retries: 4): Please reduce your request rate.",
         "fs.object_store"),
        # schedulers' and platforms' words for a job they killed or refused
        ("    srun: error: nid006024: task 0: Out Of Memory", "host.oom_killer"),
        ("AlgorithmError: ExecuteUserScriptError: ExitCode 137", "host.sigkill"),
        ("Job failed with status FAILED: The replica workerpool0-0 exited with a non-zero status "
         "of 137.", "host.sigkill"),
        ("srun: error: Unable to allocate resources: Job violates accounting/QOS policy (job "
         "submit limit, user's size and/or time limits)", "sched.request_invalid"),
        ("job 1234 exceeded hard wallclock time - initiate terminate method", "sched.time_limit"),
        ("ray.exceptions.NodeDiedError: Task failed due to the node dying.", "sched.node_failure"),
        ("Your runtime has been disconnected due to inactivity or reaching its maximum duration.",
         "sched.time_limit"),  # Colab's
        ("sagemaker.exceptions.UnexpectedStatusException: Error for Training job cluster-eames-: "
         "Failed. Reason: AlgorithmError: ExecuteUserScriptError:", "launcher.child_failed"),
        ("The replica workerpool0-0 exited with a non-zero status of 1. Termination reason: "
         "Error.", "launcher.child_failed"),
        ("CUDA error 999: unknown error", "gpu.unknown_cuda_error"),
        # Kubernetes' events and a pod's status, Docker's daemon
        ('  Warning  Failed  1m  kubelet  Failed to pull image "nvcr.io/nvidia/pytorch:24.01-py3": '
         "rpc error: code = Unknown desc = failed to pull and unpack image", "sched.image"),
        ("The node had condition: [DiskPressure].", "sched.preempted"),
        ("The node had condition: [MemoryPressure].", "sched.evicted_memory"),
        ('docker: Error response from daemon: could not select device driver "" with '
         "capabilities: [[gpu]].", "cuda.no_kernel_image"),
        ("RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU "
         "devices.", "cuda.no_kernel_image"),  # JAX's
        ("tensorflow.python.framework.errors_impl.InvalidArgumentError: logits and labels must be "
         "broadcastable: logits_size=[32,10] labels_size=[32,5]", "code.shapes"),
        ("tensorflow.python.framework.errors_impl.NotFoundError: /tmp/data/train.tfrecord; No "
         "such file or directory", "python.config_path"),
        ("RuntimeError: Tensor on device meta is not on the expected device cuda:0!",
         "code.shapes"),
        ("torch._dynamo.exc.Unsupported: call_function BuiltinVariable(setattr) "
         "[UserDefinedObjectVariable] {}", "code.compile"),
        ("[ 1234.5678] rcu: INFO: rcu_sched self-detected stall on CPU", "host.soft_lockup"),
        ("[ 1234.5] rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { 5-... } "
         "21003 jiffies s: 1234 root: 0x1/.", "host.soft_lockup"),
        ("[ 1234.5] Watchdog detected hard LOCKUP on cpu 12", "host.soft_lockup"),
        ("The replica workerpool0-0 exited with a non-zero status of 137. To find out more about "
         "why your job exited please check the logs:", "host.sigkill"),
        ("OSError: [Errno 13] Permission denied: '/root/.cache/huggingface'",
         "python.config_path"),
        ("[rank0]: RuntimeError: Rank 0 has 2 params, while rank 1 has inconsistent 3 params.",
         "code.shapes"),
        # data files that cannot be read as their format says, or batch together
        ("_csv.Error: line contains NUL", "data.json"),
        ("pandas.errors.ParserError: Error tokenizing data. C error: Expected 3 fields in line 5, "
         "saw 4", "data.json"),
        ("RuntimeError: Trying to resize storage that is not resizable", "data.collate"),
        ("datasets.table.CastError: Couldn't cast", "data.arrow"),
        ("datasets.data_files.EmptyDatasetError: The directory at /data/train doesn't contain "
         "any data files", "data.empty"),
        ("RuntimeError: Error opening '/data/a.flac': System error.", "data.audio"),
        ("gzip.BadGzipFile: Not a gzipped file (b'<!')", "data.truncated"),
        ("[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] Received a dump signal due to a "
         "collective timeout from  rank 5 and we will try our best to dump the debug info. Last "
         "enqueued NCCL work: 100, last completed NCCL work: 99.", "nccl.watchdog_timeout"),
        ("Timeout (0:10:00)!", "hang.stacks"),  # faulthandler.dump_traceback_later's timer
        # other accelerators' runtimes: ROCm's, torch_npu's
        ("RuntimeError: Failed in file /data/jenkins-workspace/compute-rocm-rel-3.3/external/hip/"
         'hip/src/hip_memory.cpp, in function "d2h_copy", on line 259, with error: '
         "HSA_STATUS_ERROR: A generic error has occurred.", "cuda.driver_error"),
        ("  what():  invalid device pointer: 0x6712000", "cuda.driver_error"),
        ("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
         "cuda.no_kernel_image"),
        ("GCVM_L2_PROTECTION_FAULT_STATUS:0x00801031", "cuda.illegal_access"),
        ("[rank0]: RuntimeError: The Inner error is reported as above. The process exits for "
         "this inner error, and the current working operator name is HcclBroadcast.",
         "nccl.error"),
        ("[2025-05-09 17:37:48] (WorkerDict pid=60511) [torch_memory_saver.cpp] CUresult error  "
         "result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create line=103", "cuda.oom"),
        # the interpreter's fatal errors that native code causes
        ("Fatal Python error: PyEval_RestoreThread: the function must be called with the GIL "
         "held, but the GIL is released (the current Python thread state is NULL)",
         "segfault.python_fatal"),
        # torch's words for operands on two devices
        ("RuntimeError: expected self and mask to be on the same device, but got mask on cuda:7 "
         "and self on cuda:0`", "code.shapes"),
        ("RuntimeError: Expected object of device type cuda but got device type cpu for argument "
         "#1 'self' in call to _th_index_select", "code.shapes"),
        ("RuntimeError: Input and parameter tensors are not at the same device, found input "
         "tensor at cuda:0 and parameter tensor at cpu", "code.shapes"),
        ("RuntimeError: Tensor for argument #2 'mat1' is on CPU, but expected it to be on GPU "
         "(while checking arguments for addmm)", "code.shapes"),
        ("RuntimeError: Expected tensor for argument #1 'input' to have the same device as "
         "tensor for argument #2 'weight'; but device 0 does not equal 1 (while checking "
         "arguments for cudnn_convolution)", "code.shapes"),
        ("RuntimeError: indices should be either on cpu or on the same device as the indexed "
         "tensor (cpu)", "code.shapes"),
        ("RuntimeError: module must have its parameters and buffers on device cuda:0 "
         "(device_ids[0]) but found one of them on device: cpu", "code.shapes"),
        ('RuntimeError: Attempted to set the storage of a tensor on device "cpu" to a storage on '
         'different device "cuda:0". This is no longer allowed; the devices must match.',
         "code.shapes"),
        # Ray's memory monitor's table of top memory users, the rest of its report cut
        ("PID\tMEM(GB)\tCOMMAND", "host.ray_memory_monitor"),
        # HF Trainer's temporary checkpoint directory, renamed or removed by another rank
        ("[rank1]: FileExistsError: [Errno 17] File exists: 'saves/sft/tmp-checkpoint-v2a6x7pi' "
         "-> 'saves/sft/checkpoint-414'", "code.checkpoint_rename"),
        ("RuntimeError: Parent directory output/text-2e-4/tmp-checkpoint-50 does not exist.",
         "code.checkpoint_rename"),
        # TransformerEngine's GEMM, its cuBLAS status in words
        ("megatron.core.utils: /TransformerEngine/transformer_engine/common/gemm/cublaslt.cu:412 "
         "in function cublas_gemm: cuBLAS Error: an unsupported value or parameter was passed to "
         "the function", "cuda.library"),
        # torch.load's weights_only default (PyTorch 2.6 on), its first lines
        ("_pickle.UnpicklingError: Weights only load failed. This file can still be loaded, to do "
         "so you have two options, do those steps only if you trust the source of the checkpoint.",
         "code.weights_only"),
        ("\tWeightsUnpickler error: Unsupported global: GLOBAL numpy.core.multiarray._reconstruct "
         "was not an allowed global by default.", "code.weights_only"),
        # Hydra's instantiate with its class's name; XLA's cuBLAS unable to start
        ("hydra.errors.InstantiationException: Error locating target 'src.models.resnet.ResNet', "
         "set env var HYDRA_FULL_ERROR=1 to see chained exception.", "code.hydra_target"),
        ("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: RET_CHECK failure (external/xla/xla/"
         "service/gpu/gemm_algorithm_picker.cc:380) stream->parent()->GetBlasGemmAlgorithms("
         "stream, &algorithms)", "xla.cublas_init"),
        ("E0101 12:00:00.000000 140 cuda_blas.cc:188] failed to create cublas handle: the resource "
         "allocation failed", "xla.cublas_init"),
        # a step or a requeue in other Slurm words; SageMaker's other jobs
        ("slurmstepd: error: *** JOB 123 CANCELLED AT 2019-05-02T10:00:00 DUE TO NODE sh-06-34 "
         "FAILURE ***", "sched.node_failure"),
        ("slurmstepd: error: *** JOB 123 ON node1 CANCELLED AT 2024-03-01T10:00:00 DUE TO JOB "
         "REQUEUE ***", "sched.preempted"),
        ("sagemaker.exceptions.UnexpectedStatusException: Error for Processing job p-1: Failed. "
         "Reason: AlgorithmError: See job logs for more information", "launcher.child_failed"),
        # a torch.load of a file that is no pickle (a Git LFS pointer), or one zeroed or cut
        ("WeightsUnpickler error: Unsupported operand 118", "data.placeholder_file"),
        ("_pickle.UnpicklingError: invalid load key, '\\x00'.", "fs.checkpoint_corrupt"),
        ("FileNotFoundError: [Errno 2] No such file or directory: "
         "'saves/sft/tmp-checkpoint-1000/trainer_state.json'", "code.checkpoint_rename"),
        # torch's DataLoader(timeout=...) for a batch its workers never delivered
        ("RuntimeError: DataLoader timed out after 300 seconds", "hang.data_loader"),
        # NCCL's libfabric plugin: a request failed because a peer died
        ("host:1:2 [0] NCCL WARN NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. "
         "Error: 2 (UNDELIVERABLE). Completed length: 0", "nccl.remote_error"),
        # Tenstorrent's allocator; verl's check of the gradients' norm (zzn_ batches)
        ("2025-11-26 19:48:22.915 | critical |          Always | TT_FATAL: Out of Memory: Not "
         "enough space to allocate 131072000 B DRAM buffer across 12 banks", "cuda.oom"),
        ("WARN: rank 0 grad_norm is not finite: inf", "numerical.nan"),
        ("There are not enough slots available in the system to satisfy the 8 slots", "mpi.slots"),
        ("  (1) Not found: Key box_net/box-0-bn-3/beta/Momentum not found in checkpoint",
         "code.shapes"),
        ("/home/mwr/torch/install/bin/luajit: cannot open <cv/lm_lstm_epoch2.36_1.7848.t7> in mode "
         " w at /home/mwr/torch/pkg/torch/lib/TH/THDiskFile.c:484", "fs.checkpoint_write"),
        ("2024-02-19 15:14:56.882326: W external/xla/xla/service/hlo_rematerialization.cc:2941] "
         "Can't reduce memory use below -30.29GiB (-32529110990 bytes) by rematerialization; "
         "only reduced to 49.62GiB (53280000080 bytes)", "cuda.oom_remat"),
        ("2020-12-10 17:03:04,056 (asr:236) WARNING: grad norm is nan. Do not update model.",
         "numerical.nan"),
        # apex installed without its CUDA extensions; Ray's memory monitor's pointer alone; the
        # shell's Chinese `Killed` glued to a progress bar (zzr_ batches)
        ("RuntimeError: apex.optimizers.FusedAdam requires cuda extensions", "code.op_build"),
        ("(ActorModelRayActor pid=8249) Refer to the documentation on how to address the out of "
         "memory issue: https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. "
         "Consider provisioning more memory on this node or reducing task parallelism",
         "host.ray_memory_monitor"),
        ("  0%|          | 0/1 [00:00<?, ?it/s]已杀死", "host.sigkill"),
        ("thread '<unnamed>' panicked at 'index out of bounds: the len is 6200 but the index is "
         "6200', /__w/tokenizers/tokenizers/tokenizers/src/tokenizer/normalizer.rs:382:21",
         "code.native_panic"),
        ("pyo3_runtime.PanicException: called `Result::unwrap()` on an `Err` value",
         "code.native_panic"),
        # nn.DataParallel's wrapper naming only the class; cuda-gdb stopped on the fault (zzs_)
        ("Caught AcceleratorError in replica 1 on device 1.", "cuda.driver_error"),
        ("Caught KeyError in replica 0 on device 0.", "python.bug"),
        # TypeError's and AttributeError's words without their class (a wrapper's, a logger's)
        ("dropout(): argument 'input' (position 1) must be Tensor, not str", "python.bug"),
        ("'DummyOptim' object has no attribute 'param_groups'", "python.bug"),
        ("zeros(): argument 'size' must be tuple of ints, but found element of type float at pos 2",
         "python.bug"),
        ("module 'numpy' has no attribute 'float'.", "python.bug"),
        # (a review's variants: Rust 1.91's thread id, the shell's localized job report, the
        # device-wide fault of cuda-gdb, apex's message with its period)
        ("thread 'main' (6543) panicked at src/backend/wgpu_core.rs:1051:30:", "code.native_panic"),
        ("train.sh: 行 3: 12345 已杀死      python train.py", "host.sigkill"),
        ("[1]+  已杀死               python train.py", "host.sigkill"),
        ("CUDA Exception: Device Illegal Address", "cuda.illegal_access"),
        # ssh refusing a key others can read; Megatron's own words for the same resume
        ("Permissions 0640 for '/root/.ssh/id_rsa' are too open.", "code.ssh_auth"),
        ("Unable to load rng state from checkpoint /ckpt/iter_0001000. Specify --no-load-rng or "
         "--finetune to prevent attempting to load the rng state, exiting ...",
         "code.resume_state"),
        ("RuntimeError: apex.optimizers.FusedLAMB requires cuda extensions.", "code.op_build"),
        ('Thread 71 "pt_autograd_0" received signal CUDA_EXCEPTION_14, Warp Illegal Address.',
         "cuda.illegal_access"),
        # XLA's PJRT out of HBM on a TPU; a row of metrics gone NaN; torch.distributions' check
        # cut before its constraint; Ray's object store full
        ("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: "
         "Attempting to allocate 100.00M. That was not possible. There are 30.95M free.; "
         "(0x0x0_HBM0)", "cuda.oom"),
        ("ValueError: Expected parameter loc (Tensor of shape (40, 921600)) of distribution "
         "Normal(loc: torch.Size([40, 921600]), scale: torch.Size([40,", "numerical.nan"),
        ("ray.exceptions.ObjectStoreFullError: Failed to put object 00ffffff in object store "
         "because it is full. Object size is 2147483648 bytes.", "host.ray_object_store_full"),
        ("RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.",
         "cuda.driver_init"),
        ("    Test set (1.36 s):  ELBO: nan, ENRE: -inf, KL: 20.367.", "numerical.nan"),
        ("ValueError:Network outputs is NAN! Stop Training", "numerical.nan"),
        # the review's variants: LAPACK's padded number, Open MPI 5's prterun and the older `could
        # not find`, pynvml's own words, dash's capitalised report, Go's gRPC
        (" ** On entry to DLASCL parameter number  4 had an illegal value", "cuda.library"),
        ("prterun has detected an attempt to run as root.", "code.mpi_root"),
        ("mpirun was unable to launch the specified application as it could not find an "
         "executable:", "code.mpi_exec"),
        ("pynvml.nvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.",
         "gpu.driver_mismatch"),
        ("./train.sh: 60: 11880 Killed              python3 train.py", "host.sigkill"),
        ("rpc error: code = ResourceExhausted desc = grpc: received message larger than max "
         "(8388608 vs. 4194304)", "code.grpc_message_size"),
        ("AssertionError: ./datasets/maps\\trainA is not a valid directory", "python.config_path"),
        # the shells' job reports, padded (bash's abort, dash's kill); Lightning's report of a
        # child; the kernel's segfault line with its addresses left out
        ("./train_yelp_xxl.sh: line 34: 12024 Aborted                 (core dumped) python3 -m "
         "t5x.train --gin_file=prompt.gin", "segfault.aborted"),
        ("./train.sh:  60: 11880 killed              PYTHONPATH=`pwd`/models/research python3 "
         "./model_main.py", "host.sigkill"),
        ("[rank: 3] Child process with PID 160342 terminated with code -11", "segfault.segv"),
        ("[rank: 1] Child process with PID 1 terminated with code -9", "host.sigkill"),
        ("pt_main_thread[2851523]: segfault at 7f24c3c72938 ... error 4 in "
         "core.cpython-311-x86_64-linux-gnu.so", "segfault.segv"),
        # JAX's coordination service: a task that never registered; LightGBM's socket; Keras'
        # download with no answer
        ("RPC: /tensorflow.CoordinationService/RegisterTask", "net.rendezvous"),
        ("[LightGBM] [Fatal] Socket recv error, code: 104", "net.peer_closed"),
        ("Exception: URL fetch failure on https://storage.googleapis.com/keras-applications/x.h5: "
         "503 -- Service Unavailable", "net.http"),
        # NVML's enum for the driver mismatch; HAMi's vGPU slice; cuBLAS's argument check
        ("tensorpack.utils.nvml.NvmlException: NVML_ERROR_LIB_RM_VERSION_MISMATCH",
         "gpu.driver_mismatch"),
        ("[HAMI-core ERROR (pid:30 thread=140382094939712 allocator.c:53)]: Device 0 OOM "
         "3171158016 / 3145728000", "cuda.oom"),
        ("** On entry to GEMM_EX  parameter number 12 had an illegal value", "cuda.library"),
        ("/usr/local/lib/python3.9/dist-packages/webdataset/handlers.py:34: UserWarning: "
         "ValueError(\"didn't find ['txt'] in ['__key__', '__url__', 'png']\")",
         "data.webdataset_keys"),
        ("InternalError (see above for traceback): Error writing (tmp) checkpoint file: "
         "/ckpt/model.ckpt-6.tempstate9784191321997661396: Resource exhausted: /ckpt",
         "fs.checkpoint_write"),
        # AWS Batch's status reason for a host taken back; torch's CUDA error with a message
        # no other rule reads (cut off)
        ("Status reason: Host EC2 (instance i-0d1c9a4b2e5f67890) terminated.", "sched.preempted"),
        # DeepXDE's table of losses gone NaN (a list per loss); Hydra's override refused, its
        # lines printed without the exception's class
        ("3000      [nan, nan]    [nan, nan]    [nan]", "numerical.nan"),
        ("Could not override 'trainer.devices'.", "code.cli_config"),
        # TensorFlow's BFC allocator's failing request, the line's start wrapped onto the one above
        ("te 18.44GiB (rounded to 19805393664)requested by op", "cuda.oom"),
        ("Key 'devices' is not in struct", "code.cli_config"),
        ("RuntimeError: CUDA error: the provided PTX was compiled with an unsupported too",
         "cuda.driver_error"),
        ("torch.AcceleratorError: CUDA error: operation not permitted on an event last recorded "
         "in a capturing stream", "cuda.driver_error"),
        # Ray's words for a task whose node went (preempted, failed, its raylet crashed); a
        # launcher's CalledProcessError naming the SIGKILL its child died of; a loss's NaN in a
        # table of bars (Trax); the OOM killer's line without its space
        ("will be retried. Error: Task failed because the node it was running on is dead or "
         "unavailable. Node IP: 10.83.9.118, node ID: 262a3ba8.", "sched.node_failure"),
        ("subprocess.CalledProcessError: Command '['python', 'train.py']' died with "
         "<Signals.SIGKILL: 9>.", "host.sigkill"),
        ("Step  11000: train CrossEntropyLossWithLogSoftmax |  nan", "numerical.nan"),
        ("Out of memory:Killed process 217423 (python) total-vm:112518872kB", "host.oom_killer"),
        # TensorFlow's parser on TFRecords without a feature; amdgpu's page fault without the
        # driver's prefix; pyopencl's device allocation; SQLite's reads failed by the filesystem
        ("Key: segment_ids.  Can't parse serialized Example.", "data.arrow"),
        ("[gfxhub] page fault", "cuda.illegal_access"),
        ("Faulty UTCL2 client ID: TCP (0x8)", "cuda.illegal_access"),
        ("pyopencl._cl.MemoryError: clEnqueueMapBuffer failed: MEM_OBJECT_ALLOCATION_FAILURE",
         "cuda.oom"),
        ("MIOpen(HIP): Warning [FindFftSolutions] /root/driver/MLOpen/src/sqlite_db.cpp:212: "
         "Internal error while accessing SQLite database: disk I/O error", "fs.sqlite"),
        ("sqlite3.OperationalError: disk I/O error", "fs.sqlite"),
        # XLA's OOM on a TPU or a GPU, wrapped: on lines of their own, or after the `Out`;
        # tiny-cuda-nn's allocator, its end cut off
        ("RESOURCE_EXHAUSTED: Error allocating device buffer: ", "cuda.oom"),
        ("of memory while trying to allocate 5520758552 bytes.", "cuda.oom"),
        ("13:54:28 ERROR    Uncaught exception: Could not allocate memory: C:\\Tools\\instant-ngp"
         "\\dependencies\\tiny-cuda-nn\\include\\tiny-cuda-nn/gpu_memory.h:112 cudaMalloc(&rawptr,",
         "cuda.oom"),
        # DeepSpeed's runner on a host it cannot ssh to; Open MPI's TCP transport between nodes;
        # bash's report of a killed child, a full stop after it
        ("RuntimeError: Using hostfile at /home/u/hostfile but host=gadi-gpu-v100-0011 was not "
         "reachable via ssh. If you are running with a single node please remove /home/u/hostfile",
         "net.ssh_exit"),
        ("A process or daemon was unable to complete a TCP connection", "net.mpi_daemon"),
        ("[second-node][[22157,1],4][btl_tcp_endpoint.c:626:mca_btl_tcp_endpoint_recv_connect_ack]"
         " received unexpected process identifier [[22157,1],7]", "net.mpi_daemon"),
        ("finetune/finetune_qlora_single_gpu.sh: line 39: 2810536 Killed.", "host.sigkill"),
        # PhysX on a kernel the driver would not launch; torch's driver API lookup failing;
        # NumPy's np.load on a file cut short
        ("2025-06-09 17:58:44 [10,520ms] [Error] [omni.physx.plugin] PhysX error: GPU kernel "
         "'bpSignalComplete' failed to launch with error 400!!", "cuda.driver_error"),
        ('RuntimeError: handle_0 INTERNAL ASSERT FAILED at "/opt/pytorch/pytorch/c10/cuda/'
         'driver_api.cpp":15, please report a bug to PyTorch', "cuda.driver_error"),
        ("_pickle.UnpicklingError: Failed to interpret file '/dataset/train/index-cache/"
         "ebe6e4d8_shuffle_idx.npy' as a pickle", "data.truncated"),
        # TypeError's words for a subclass missing a newer base's abstract methods; Gymnasium's
        # registry without the namespace; the BSD libc's assert
        ("Can't instantiate abstract class RemoteFileSystemReader with abstract methods reset, "
         "validate_checkpoint_id", "python.bug"),
        ("gymnasium.error.NamespaceNotFound: Namespace ALE not found. Have you installed the "
         "proper package for ALE?", "code.gym_env"),
        ("Assertion failed: (input_size == 3), function _ccv_nnc_swish_mul_back, file "
         "ccv_nnc_swish_mul_mps.m, line 130.", "code.native_assert"),
        # glibc's wrapped after its `file:line:` (the function and the assertion alone)
        ("int main(int, char**): Assertion `argc > 1' failed.", "code.native_assert"),
        ("RuntimeError: Exception occured! file=/rapids/cuml/cpp/include/cuml/common/"
         "cuml_allocator.hpp line=109: FAIL: call='cudaMalloc(&ptr, n)'. Reason:out of memory",
         "cuda.oom"),
        ("ml.dmlc.xgboost4j.java.XGBoostError: [22:22:41] /workspace/src/common/"
         "device_helpers.cuh:428: Memory allocation error on worker 3: Caching allocator",
         "cuda.oom"),
        ("2025-02-09 08:50:13 [22,947ms] [Error] [omni.physx.plugin] PhysX error: Fetching GPU "
         "Narrowphase failed! 700", "cuda.illegal_access"),
        ("ValueError: NaN or Inf encountered. Training failed!", "numerical.nan"),
        ("0 nan nan 0.997788 00:34", "numerical.nan"),
        ("Killed: 9", "host.sigkill"),
        ("[1]+  Killed: 9    python train.py", "host.sigkill"),
        ("train.sh: line 18:    36 Killed: 9    python3 train.py", "host.sigkill"),
        ("ERROR 1: HTTP response code: 503", "net.http"),
        ("ERROR 1: CURL error: Operation timed out after 30000 milliseconds with 0 bytes received",
         "net.http"),
        ("ERROR 1: ./tiles/m_4207538_nw_18_1_naip.tif, band 1: IReadBlock failed at X offset 0, "
         "Y offset 5460: TIFFReadEncodedStrip() failed.", "data.image"),
        # a TPU's allocator without its status's usual spelling, XLA's report of the program's
        # memory, MLX's and Jittor's allocators
        ("(1) Resource exhausted: Attempting to allocate 180.59M. That was not possible. There are "
         "142.58M free.; (0x3x0_HBM1)", "cuda.oom"),
        ("Total hbm usage >= 9.50G:", "cuda.oom"),
        ("what():  [malloc_or_wait] Unable to allocate 12 bytes.", "cuda.oom"),
        ("GPU memory is overflow, please reduce your batch_size or data size!", "cuda.oom"),
        ("srun: error: Out Of Memory", "host.oom_killer"),
        ("luajit: cuda runtime error (30) : unknown error at /tmp/luarocks_cutorch-scm-1-9927/"
         "cutorch/lib/THC/THCStorage.c:113", "gpu.unknown_cuda_error"),
        # torch.distributed.rpc, torch_xla's mesh client, deeplearning4j's Aeron, TensorFlowOnSpark,
        # urllib by the OS's error number (its text in the OS's language)
        ("ERROR:root:coroutine task failed: RPCErr:1:RPC ran for more than set timeout (180000 ms) "
         "and will now be marked with an error", "net.connect"),
        ("Failed to connect to client mesh master: d7c1c93dfe8c:56419", "net.rendezvous"),
        ("org.nd4j.linalg.exception.ND4JIllegalStateException: Can't establish connection afet 10 "
         "seconds. Terminating...", "net.connect"),
        ("Exception: timed out waiting for reservations to complete", "net.rendezvous"),
        ("urllib.error.URLError: <urlopen error [WinError 10060] 由于连接方在一段时间后没有"
         "正确答复>", "net.connect"),
        ("subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 "
         "hostname' returned non-zero exit status 255.", "net.ssh_exit"),
        ("jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded",
         "net.rendezvous"),
        ("F1210 04:41:17.187237  2534 grpc_client.cc:288] Send name:[cuidFactors@GRAD.block4], "
         "ep:[10.90.219.20:30038], status:[-1] meets grpc error:OS Error", "net.grpc_unavailable"),
        # DeepSpeed's cuBLAS GEMM, nvidia-docker 1.x, PJRT's and the Neuron compiler's faults,
        # Ascend's vector core, MLIR under MPSGraph, CUDA's init error as the process ends
        ("!!!! kernel execution error. (m: 1024, n: 512, k: 4096, error: 13)", "cuda.library"),
        ("nvidia-docker | 2017/12/20 13:08:46 Error: unsupported CUDA version: driver 8.0 < image "
         "9.0.176", "cuda.no_kernel_image"),
        ("pjrt_computation_client.cc:487] Non-OK-status: status status: INTERNAL: Core halted "
         "unexpectedly: INTERNAL: Accelerator device halted prematurely, perhaps due to an "
         "on-device check-failure", "accel.runtime_error"),
        ("ERROR 5521 [neuronxcc.driver.CommandDriver]: Type: <class "
         "'neuronxcc.driver.Exceptions.CompilerInternalError'>", "accel.runtime_error"),
        ("RuntimeError: ACL stream synchronize failed, error code:507034", "accel.runtime_error"),
        # (a forked worker freeing a CUDA tensor it inherited, as it ends)
        ("  what():  CUDA error: initialization error", "cuda.fork"),
        ("RuntimeError: named symbol not found", "cuda.driver_error"),
        ("libfabric:718892:1658904526::efa:mr:efa_mr_regattr():632<warn> Unable to register MR: "
         "Cannot allocate memory", "nccl.net_plugin"),
        # Volcano's eviction, submitit's time limit it would not requeue after, YARN's and Cloud
        # ML Engine's refusals
        ("I0502 job_controller.go:305] Try to handle request <Queue: , Job: default/hvd-job, "
         "Task:horovod-worker, Event:PodEvicted, ExitCode:0>", "sched.preempted"),
        ("submitit.core.utils.UncompletedJobError: Job not requeued because: timed-out too many "
         "times.", "sched.time_limit_final"),
        ("Error org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException: Invalid "
         "resource request, requested memory < 0, or requested memory > max configured, "
         "requestedMemory=15360, maxMemory=12288", "sched.request_invalid"),
        ("- Error creating the job. Quota failure for project fmltc-400415. The request for 1 K80 "
         "accelerators exceeds the allowed maximum of 0 A100, 0 K80", "sched.request_invalid"),
        # NaN in deeplearning4j's and Marian's words; native aborts by Paddle's and Google's
        # handlers; the DataLoader's shm hint wrapped
        ("o.d.o.l.ScoreIterationListener - Score at iteration 60 is NaN", "numerical.nan"),
        ("[2021-03-04 10:00:00] Ep. 1 : Up. 300 : Sen. 137,255 : Cost nan : Time 17.18s : nan "
         "words/s", "numerical.nan"),
        ("FatalError: `Process abort signal` is detected by the operating system.",
         "segfault.abort"),
        ("E0226 17:22:24.805867    5182 coredump_hook.cc:603] RAW: Dumping core locally.",
         "segfault.abort"),
        ("RuntimeError: DataLoader worker (pid 4031) is killed by signal: Bus error. It is "
         "possible that dataloader's workers are out of shared", "segfault.shm"),
        # MXNet without the distributed store, c10d's NCCL given a CPU tensor, yaml-cpp, jaxlib
        # without a GPU backend, PJRT's C API, datasets against a newer fsspec
        ("[08:41:20] src/kvstore/kvstore.cc:37: compile with USE_DIST_KVSTORE=1 to use dist_sync",
         "code.backend_unsupported"),
        ("RuntimeError: Tensors must be CUDA and dense", "code.backend_unsupported"),
        ("Error: Unhandled exception of type 'N4YAML18TypedBadConversionIfEE': yaml-cpp: error at "
         "line 1, column 1: bad conversion", "code.cli_config"),
        ("jaxlib.xla_extension.XlaRuntimeError: INVALID_ARGUMENT: DLPack tensor is on GPU, but no "
         "GPU backend was provided.", "code.no_gpu"),
        ("F0000 00:00:1712345678.123456 1234 pjrt_api.cc:80] Non-OK-status: INVALID_ARGUMENT: "
         "Unexpected PJRT_Api size: expected 600, got 560. Check installed software versions.",
         "code.libtpu_mismatch"),
        ("NotImplementedError: Loading a dataset cached in a LocalFileSystem is not supported.",
         "python.import"),
        # filesystems: locks not supported, a compile cache raced, dmlc's short write
        ("OSError: [Errno 37] No locks available", "fs.locks_unsupported"),
        ("MIOpen Error: /MIOpen/src/sqlite_db.cpp:220: Internal error while accessing SQLite "
         "database: locking protocol", "fs.locks_unsupported"),
        ("torch._inductor.exc.InductorError: OSError: [Errno 16] Device or resource busy: "
         "'/root/.triton/cache/abc/tmp.pid_123_456'", "fs.compile_cache_race"),
        ("FileNotFoundError: [Errno 2] No such file or directory: '/tmp/torchinductor_ubuntu/"
         "triton/4/abc/triton_.cubin.tmp.pid_93828_100098'", "fs.compile_cache_race"),
        ("OSError: Unable to open file (unable to lock file, errno = 37, error message = 'No "
         "locks available')", "fs.locks_unsupported"),
        ("src/io/local_filesys.cc:39: Check failed: std::fwrite(ptr, 1, size, fp_) == size "
         "FileStream.Write incomplete", "fs.checkpoint_write"),
        # data: fairseq's index, Keras' empty fit, tesseract's list, ML-Agents' demonstration,
        # diffusers' column, the TF Object Detection API's boxes
        ("AssertionError: Index file doesn't match expected format. Make sure that --dataset-impl "
         "is configured properly.", "data.schema"),
        ("UnboundLocalError: local variable 'epoch_logs' referenced before assignment",
         "data.empty"),
        ("Failed to load list of training filenames from data/list.train", "data.empty"),
        ("RuntimeError: The action dimensions [1] in demonstration do not match the policy's [6].",
         "data.schema"),
        ("ValueError: --caption_column' value 'text' needs to be one of: image", "data.schema"),
        ("(1) Invalid argument: assertion failed: [max value is lower than 1.01: ] [0]",
         "data.schema"),
        # Open MPI's daemon not on a node's PATH
        ("bash: orted: command not found", "code.mpi_exec"),
        # hangs: torch_xla waiting for its mesh master, NCCL's RAS report of ranks apart
        ("2020-08-31 02:53:17.186412: I tensorflow/compiler/xla/xla_client/mesh_service.cc:208] "
         "Waiting to connect to client mesh master (300 seconds) 10.164.15.199:8477",
         "hang.xla_mesh_master"),
        ("#0-0 (fa93daea854b060b) MISMATCH", "hang.nccl_ras_mismatch"),
        # a script's own divergence check (a MATLAB trainer's warning), a loss named in two
        # words at NaN
        ("Warning: Your loss diverged.", "numerical.nan"),
        ("Epoch 4 | loss recon: nan | loss kl: 0.0312", "numerical.nan"),
        # wget in a Chinese locale (glibc's translation of ECONNREFUSED)
        ("正在连接 127.0.0.1:5500... 失败：拒绝连接。", "net.connect"),
        # TensorFlow's CPU kernels given a channels-first model; Julia's CUDA.jl out of memory
        ("Default MaxPoolingOp only supports NHWC on device type CPU", "code.no_op_kernel"),
        ("The Conv2D op currently only supports the NHWC tensor format on the CPU. The op was "
         "given the format: NCHW", "code.no_op_kernel"),
        ("ERROR: Out of GPU memory trying to allocate 1.500 GiB", "cuda.oom"),
        # BasicSR's warning of deformable convolution's offsets blown up (its value a float, or
        # the tensor an f-string prints)
        ("2023-05-01 10:00:00,000 WARNING: Offset abs mean is 65534.0, larger than 50.",
         "numerical.dcn_offset"),
        ("WARNING: Offset abs mean is tensor(65.5100, device='cuda:0'), larger than 50.",
         "numerical.dcn_offset"),
        # Torch7's THC check of a CUDA call given a wrong argument
        ("/root/torch/install/bin/luajit: /root/torch/install/share/lua/5.1/nn/THNN.lua:110: cuda "
         "runtime error (11) : invalid argument at /tmp/cutorch/lib/THC/THCGeneral.c:844",
         "cuda.code_error"),
        # UCX's crash handler, as Open MPI's jobs print it (its signal's line cut)
        ("==== backtrace (tid:  52950) ====", "segfault.native_backtrace"),
        # a solver's own words for NaN (Julia's OrdinaryDiffEq, as its docs quote it)
        ("Warning: First function call produced NaNs. Exiting. Double check that none of the "
         "initial conditions, parameters, or timespan values are NaN.", "numerical.nan"),
        # a decomposition that failed on its matrix: torch's, NumPy's and GPyTorch's words
        ("torch._C._LinAlgError: linalg.cholesky: The factorization could not be completed "
         "because the input is not positive-definite (the leading minor of order 3 is not "
         "positive-definite).", "numerical.linalg"),
        ("numpy.linalg.LinAlgError: SVD did not converge", "numerical.linalg"),
        ("gpytorch.utils.errors.NotPSDError: Matrix not positive definite after repeatedly "
         "adding jitter up to 1.0e-06.", "numerical.linalg"),
        # quadprog's QP solver, as GEM and A-GEM project gradients with it
        ("ValueError: matrix G is not positive definite", "numerical.linalg"),
        ("ValueError: constraints are inconsistent, no solution", "numerical.linalg"),
        # TensorFlow's Cholesky (GPflow), GPyTorch's exception heading a notebook's traceback,
        # the FID's matrix square root come out complex
        ("InvalidArgumentError: Cholesky decomposition was not successful. The input might not "
         "be valid.", "numerical.linalg"),
        ("NotPSDError                               Traceback (most recent call last)",
         "numerical.linalg"),
        ("ValueError: Imaginary component 0.029058187570152688", "numerical.fid"),
        ("ValueError: Imaginary component nan", "numerical.fid"),
        # old torch handed a log density gone to -inf
        ("RuntimeError: value cannot be converted to type double without overflow: -inf",
         "numerical.nan"),
        # torch.compile's closing words on an error its log cut
        ("You can suppress this exception and fall back to eager by setting:",
         "code.compile_trailer"),
        # torchvision's transforms handed the None of an image that did not load
        ("TypeError: pic should be PIL Image or ndarray. Got <class 'NoneType'>", "data.image"),
        ("TypeError: pic should be Tensor or ndarray. Got <class 'NoneType'>.", "data.image"),
        ("TypeError: img should be Tensor Image. Got <class 'NoneType'>", "data.image"),
        # a sample, an annotation file or a split list missing from the dataset's folder
        ("FileNotFoundError: [Errno 2] No such file or directory: "
         "'/datasets/coco/annotations/instances_train2017.json'", "data.missing_file"),
        ("FileNotFoundError: [Errno 2] No such file or directory: "
         "'VOC2012/JPEGImages/2008_000008.jpg'", "data.missing_file"),
        ("FileNotFoundError: [Errno 2] No such file or directory: "
         "'./vimeo_septuplet/sequences/sep_trainlist.txt'", "data.missing_file"),
        ("AssertionError: Annotation file 'data/ag/annotations/detections_train.json' not found",
         "data.missing_file"),
        # TensorFlow's saver finding no directory for the checkpoint's file
        ("tensorflow.python.framework.errors_impl.NotFoundError: Failed to create a "
         "NewWriteableFile: /tmp/model/model.ckpt-100_temp/part-00000-of-00001.data-00000-of-"
         "00001.tempstate123 : No such file or directory", "code.save_dir_missing"),
        # old torch's check of an operator's devices, with two operands on the CPU
        ("RuntimeError: Tensor for 'out' is on CPU, Tensor for argument #1 'self' is on CPU, but "
         "expected them to be on GPU (while checking arguments for addmm)", "code.shapes"),
        # a loss printed with its step in brackets, at NaN
        ("train_batch_loss[ 6590 ]:  nan", "numerical.nan"),
        ("loss[120] = nan", "numerical.nan"),
        # a loader's own count at zero (Keras' ImageDataGenerator, as its docs print it; a
        # trainer's count of what it read)
        ("Found 0 images belonging to 0 classes.", "data.zero_count"),
        ("Found 0 files belonging to 0 classes.", "data.zero_count"),
        ("Found 0 validated image filenames belonging to 0 classes.", "data.zero_count"),
        ("Loaded 0 samples from ./output/datasets/train", "data.zero_count"),
        ("0 training images in /data/icdar2015/", "data.zero_count"),
        ("2024-01-01 10:00:00 INFO: 0 training images in /data", "data.zero_count"),
        # Lightning's warning, the loader's class named as it is (a list of loaders; 1.5's error)
        ("UserWarning: Total length of `list` across ranks is zero. Please make sure this was "
         "your intention.", "data.empty_loader"),
        ("MisconfigurationException: Total length of `Dataloader` across ranks is zero. Please "
         "make sure this was your intention.", "data.empty_loader"),
        # a singular matrix, SciPy's Cholesky, old torch's kernels
        ("numpy.linalg.LinAlgError: Singular matrix", "numerical.linalg"),
        ("numpy.linalg.LinAlgError: 2-th leading minor of the array is not positive definite",
         "numerical.linalg"),
        ("torch._C._LinAlgError: linalg.inv: The diagonal element 2 is zero, the inversion could "
         "not be completed because the input matrix is singular.", "numerical.linalg"),
        ("torch._C._LinAlgError: torch.linalg.lstsq: The solution could not be computed because "
         "the input matrix does not have full rank (error code: 3).", "numerical.linalg"),
        ("RuntimeError: symeig_cuda: the algorithm failed to converge; 2 off-diagonal elements of "
         "an intermediate tridiagonal form did not converge to zero.", "numerical.linalg"),
        ("RuntimeError: cholesky_cuda: U(2,2) is zero, singular U.", "numerical.linalg"),
        ("RuntimeError: solve_cuda: For batch 0: U(3,3) is zero, singular U.", "numerical.linalg"),
        # torch naming the failing matrix of a batch; torch.linalg.solve's own words
        ("torch._C._LinAlgError: linalg.svd: (Batch element 0): The algorithm failed to converge "
         "because the input matrix is ill-conditioned or has too many repeated singular values "
         "(error code: 3).", "numerical.linalg"),
        ("torch._C._LinAlgError: torch.linalg.solve: (Batch element 0): The solver failed because "
         "the input matrix is singular.", "numerical.linalg"),
        # TF 2.x's saver, the op named between the class and the message
        ("tensorflow.python.framework.errors_impl.NotFoundError: {{function_node "
         "__wrapped__SaveV2_dtypes_12_device_/job:localhost/replica:0/task:0/device:CPU:0}} "
         "Failed to create a NewWriteableFile: /out/ckpt-1_temp/part-00000-of-00001.data-00000-"
         "of-00001.tempstate1 : The system cannot find the path specified.",
         "code.save_dir_missing"),
        # a Trainer's tmp-checkpoint on a path with a space, renamed away by another rank
        ("RuntimeError: Parent directory /content/drive/My Drive/out/tmp-checkpoint-500 does not "
         "exist.", "code.checkpoint_rename"),
        # ROCm's fault with the node's name in a paste's bold; Torch7's missing launch
        # configuration; zsh's job report of a killed child, with and without its mark
        ("Memory access fault by GPU **node-2** on address 0x422ea6b000. Reason: Page not present "
         "or supervisor privilege.", "cuda.illegal_access"),
        ("/home/u/torch/install/bin/luajit: ./models/cycle_gan_model.lua:186: cuda runtime error "
         "(52) : __global__ function call is not configured at /home/u/torch/extra/cutorch/lib/"
         "THC/generic/THCTensorMathPairwise.cu:59", "cuda.code_error"),
        ("[1]    1819 killed     python3 train.py --config configs/base.yaml", "host.sigkill"),
        ("[2]  + 4242 killed     python train.py", "host.sigkill"),
        ("[1]    1819 killed     ./train.sh", "host.sigkill"),
        # TensorFlow's example parser and index table on data that does not fit
        ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Name: <unknown>, "
         "Feature: label (data type: int64) is required but could not be found.", "data.arrow"),
        ("2018-06-23 02:01:11.183505: W tensorflow/core/framework/op_kernel.cc:1278] "
         "OP_REQUIRES failed at lookup_table_init_op.cc:145 : Invalid argument: Invalid content "
         "in /tmp/nmt_model/vocab.src: empty line found at position 77.", "data.arrow"),
        # an optimizer's state resumed onto another device than its parameters
        ("RuntimeError: expected device cuda:0 and dtype Float but got device cpu and dtype "
         "Float", "code.shapes"),
        ("[1,0]<stderr>:RuntimeError: Internal error. Requested ReadyEvent with GPU device but "
         "not compiled with CUDA.", "code.backend_unsupported"),
        ("INFO:tensorflow:Evaluation result for step 435000: loss = 148890.718750 ; perplexity = "
         "inf", "numerical.nan"),
        ("| epoch 003 | valid on 'valid' subset | loss 15.2 | nll_loss 14.1 | ppl: inf",
         "numerical.nan"),
        ("AssertionError: underflow in dt nan", "numerical.nan"),
        ("AssertionError: underflow in dt 1.2e-17", "numerical.nan"),
        # Open MPI's closing words of the same help text
        ("an error; Open MPI requires that all MPI processes be able to reach",
         "net.mpi_unreachable"),
        ("RuntimeError: Failed to save checkpoint: [Errno 18] Invalid cross-device link",
         "code.cross_device_rename"),
        # an extension's ops built without CUDA (PyTorch3D, detectron2)
        ("RuntimeError: Not compiled with GPU support (ROIAlign_forward at /tmp/detectron2/"
         "layers/csrc/ROIAlign/ROIAlign.h:73)", "cuda.no_kernel_image"),
        # Kubernetes' validation with its reason wrapped onto the next line; dargs' schema
        ('The JobSet "trainer" is invalid: spec.replicatedJobs[0].template.spec.template.spec.'
         'restartPolicy:', "sched.request_invalid"),
        ("dargs.dargs.ArgumentKeyError: [at location `model`] undefined key `type_map2` is not "
         "allowed in strict mode", "code.cli_config"),
        ("dargs.dargs.ArgumentKeyError: [at root location] key `training` is required in "
         "arguments but not found", "code.cli_config"),
        ("dargs.dargs.ArgumentTypeError: [at location `learning_rate`] key `start_lr` gets wrong "
         "value type, requires <float> but gets <str>", "code.cli_config"),
        # a bare AssertionError read with its assert statement (triage/engine.py): a script's
        # own finiteness check, and its check that the loader or dataset holds a sample
        ("AssertionError: assert not torch.isnan(loss).any()", "numerical.nan"),
        ("AssertionError: assert not (np.isnan(loss) or np.isinf(loss))", "numerical.nan"),
        ("AssertionError: assert torch.isfinite(grad_norm)", "numerical.nan"),
        ("AssertionError: assert not torch.any(torch.isnan(x))", "numerical.nan"),
        ("AssertionError: assert np.all(np.isfinite(loss))", "numerical.nan"),
        ("AssertionError: assert len(train_loader) > 0", "data.empty"),
        ("AssertionError: assert len(self.dataset) != 0  # no sample", "data.empty"),
        # NCCL quoting the runtime on a driver older than the build; a JVM's fatal report of its
        # host's memory; a CUDA extension's check after its kernel, by the error's number
        ("Cuda failure 'API call is not supported in the installed CUDA driver'",
         "cuda.no_kernel_image"),
        ("# Native memory allocation (mmap) failed to map 16384 bytes for committing reserved "
         "memory.", "host.memory_error"),
        ("RuntimeError: CUDA kernel failed : 700", "cuda.illegal_access"),
        # autograd refusing what the code did to a tensor
        ("RuntimeError: Inference tensors cannot be saved for backward. To work around you can "
         "make a clone to get a normal tensor and use it in autograd", "code.shapes"),
        ("RuntimeError: unsupported operation: some elements of the input tensor and the "
         "written-to tensor refer to a single memory location. Please clone() the tensor before "
         "performing the operation.", "code.shapes"),
        ("RuntimeError: a leaf Variable that requires grad is being used in an in-place "
         "operation.", "code.shapes"),
        ("RuntimeError: a leaf Variable that requires grad has been used in an in-place "
         "operation.", "code.shapes"),
        ("RuntimeError: Inplace update to inference tensor outside InferenceMode is not "
         "allowed.You can make a clone to get a normal tensor before doing inplace update.See "
         "https://github.com/pytorch/rfcs/pull/17 for more details.", "code.shapes"),
        ("RuntimeError: unsupported operation: more than one element of the written-to tensor "
         "refers to a single memory location. Please clone() the tensor before performing the "
         "operation.", "code.shapes"),
        ("RuntimeError: grad can be implicitly created only for scalar outputs", "code.shapes"),
        ("RuntimeError: grad can be implicitly created only for real scalar outputs but got "
         "torch.complex64", "code.shapes"),
        ("RuntimeError: 'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 "
         "Long tensor", "code.shapes"),
        ("RuntimeError: cudnn RNN backward can only be called in training mode", "code.shapes"),
        ("RuntimeError: cannot perform reduction function max on tensor with no elements because "
         "the operation does not have an identity", "code.shapes"),
        ("ValueError: Negative dimension size caused by subtracting 3 from 1 for "
         "'conv3d_6/convolution' (op: 'Conv3D') with input shapes: [?,1,1,20,16], "
         "[3,3,3,16,32].", "code.shapes"),
        # random.sample asked for more than the dataset holds (an N-way K-shot episode)
        ("ValueError: Sample larger than population or is negative", "data.sample_larger"),
        ("ValueError: sample larger than population", "data.sample_larger"),  # Python 2
        # torch refusing a device's name: a config's `cuda0`, a backend whose plugin is not
        # imported, the same as a C++ exception's message
        ("RuntimeError: Invalid device string: 'cuda0'", "code.device_string"),
        ("RuntimeError: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, "
         "ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at "
         "start of device string: npu", "code.device_string"),
        ("  what():  Invalid device string: 'cuda:0 '", "code.device_string"),
        # a file of the dataset where the code expects a folder (ENOTDIR), Python 2's and 3's
        ("OSError: [Errno 20] Not a directory: '/home/u/LipNet/training/unseen_speakers/datasets/"
         "train/s1/bbbmzn.mpg'", "data.missing_file"),
        ("NotADirectoryError: [Errno 20] Not a directory: 'data/coco/train2017.zip/000001.jpg'",
         "data.missing_file"),
        # py-lmdb on a dataset's LMDB that was never built (a preprocessing step's cache), its
        # cffi build's words, and a file named where the LMDB's directory goes
        ("lmdb.Error: datasets/beat_cache/beat_english_15_141/train/smplxflame_30_cache: No such "
         "file or directory", "data.missing_file"),
        ("lmdb.cffi.Error: b'data/lmdb/train': b'No such file or directory'",
         "data.missing_file"),
        ("lmdb.Error: data/lmdb/train/data.mdb: Not a directory", "data.missing_file"),
        # Triton's shared memory as torch.compile raises it (torch 2.8's launcher, and Triton's
        # own exception before it): no device memory
        ("torch._inductor.exc.InductorError: RuntimeError: No valid triton configs. "
         "OutOfMemoryError: out of resource: triton_tem_fused_0 Required: 107008 Hardware "
         "limit:101376 Reducing block sizes or `num_stages` may help.", "code.gpu_arch"),
        ("RuntimeError: No valid triton configs. OutOfResources: out of resource: shared memory, "
         "Required: 131072, Hardware limit: 101376. Reducing block sizes or `num_stages` may "
         "help.", "code.gpu_arch"),
        # TensorFlow's decoder on an empty file, or one of another format under an image's name
        # (before 2.3), and TensorFlow 2's word for the empty file
        ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Expected image (JPEG, "
         "PNG, or GIF), got empty file", "data.image"),
        ("InvalidArgumentError: Expected image (BMP, JPEG, PNG, or GIF), got unknown format "
         "starting with 'BM\\\"\\360\\003\\000'", "data.image"),
        ("tensorflow.python.framework.errors_impl.InvalidArgumentError: {{function_node "
         "__wrapped__DecodeJpeg_device_/job:localhost/replica:0/task:0/device:CPU:0}} Input is "
         "empty. [Op:DecodeJpeg]", "data.image"),
        # torch and Keras words for the same shape errors in their current releases
        ("RuntimeError: max(): Expected reduction dim to be specified for input.numel() == 0. "
         "Specify the reduction dim with the 'dim' argument.", "code.shapes"),
        ("RuntimeError: amax(): Expected reduction dim 0 to have non-zero size.", "code.shapes"),
        ("ValueError: Computed output size would be negative. Received `inputs shape=(None, 1, 1, "
         "20, 16)`, `kernel shape=(3, 3, 3, 16, 32)`, `dilation_rate=(1, 1, 1)`.", "code.shapes"),
        ("ValueError: One of the dimensions in the output is <= 0 due to downsampling in conv3d. "
         "Consider increasing the input size.", "code.shapes"),
        # an empty device name (an environment variable not set), an index that is no number
        ("RuntimeError: Device string must not be empty", "code.device_string"),
        ("RuntimeError: Could not parse device index 'x' in device string 'cuda:x'",
         "code.device_string"),
        # a kernel's check of the GPU's architecture, as a failed TORCH_CHECK
        ("RuntimeError: Expected is_sm90 || is_sm8x || is_sm75 to be true, but got false.  "
         "(Could this error message be improved?  If so, please report an enhancement request "
         "to PyTorch.)", "code.gpu_arch"),
        # split() given sizes that do not add up, as a debugger's paste shows it (RuntimeError on
        # the line above); item() on a tensor of two values; a matmul's shapes, pasted so
        ("split_with_sizes expects split_sizes to sum exactly to 12 (input tensor's size at "
         "dimension 0), but got split_sizes=[4, 4]", "code.shapes"),
        ("RuntimeError: a Tensor with 2 elements cannot be converted to Scalar", "code.shapes"),
        ("mat1 and mat2 shapes cannot be multiplied (6x44 and 71x128)", "code.shapes"),
        # TensorFlow's words for a conv larger than its input and for a batch of two shapes, each
        # pasted without the error's class
        ("Negative dimension size caused by subtracting 3 from 1 for 'conv2d_3/Conv2D' (op: "
         "'Conv2D') with input shapes: [?,1,1,64], [3,3,64,128].", "code.shapes"),
        ("Cannot batch tensors with different shapes in component 0. First element had shape "
         "[100,40] and element 1 had shape [98,40].", "data.collate"),
        # a library calling an NVML function the node's driver is too old to have: DALI's words,
        # pynvml's
        ("RuntimeError: nvml error: 13 Local version of NVML doesn't implement this function",
         "cuda.nvml_function"),
        ("pynvml.nvml.NVMLError_FunctionNotFound: Function Not Found", "cuda.nvml_function"),
        # zsh's job report with the command left off the paste, its pid after one space or many
        ("[2]  + 4242 killed", "host.sigkill"),
        ("[1] 2843557 killed", "host.sigkill"),
        # one_hot given a label of -1 or one at or above its num_classes; TensorFlow's gather
        # given one index; an async generator
        ("RuntimeError: Class values must be non-negative.", "data.label_range"),
        ("RuntimeError: Class values must be smaller than num_classes.", "data.label_range"),
        ("InvalidArgumentError: indices = 5 is not in [0, 3)", "data.id_range"),
        ("RuntimeError: async generator raised StopIteration", "code.generator_stop"),
        # Windows' integer division by zero in native code (0xC0000094), as torch's spawn and a
        # launcher's subprocess report it
        ("torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with exit code "
         "3221225620", "segfault.sigfpe"),
        ("subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit "
         "status 3221225620.", "segfault.sigfpe"),
        ("Worker exited: returncode=3221225620", "segfault.sigfpe"),
        ("python.exe ended with STATUS_INTEGER_DIVIDE_BY_ZERO", "segfault.sigfpe"),
        ("python.exe ended with STATUS_ACCESS_VIOLATION", "segfault.segv"),
        # Python 3.12's words for an empty random range; TensorFlow 2's gather out of its table,
        # eager; its select given two shapes
        ("ValueError: empty range in randrange(0, -32)", "data.random_range"),
        ("tensorflow.python.framework.errors_impl.InvalidArgumentError: {{function_node "
         "__wrapped__ResourceGather_device_/job:localhost/replica:0/task:0/device:GPU:0}} "
         "indices[0,3] = 5000 is not in [0, 5000) [Op:ResourceGather]", "data.id_range"),
        ("InvalidArgumentError: Inputs to operation while/Select of type Select must have the same "
         "size and shape.  Input 0: [32,128] != input 1: [32,64]", "code.shapes"),
        # torch's ConcatDataset over no dataset; torch before 1.0's batched solver, no device named
        ("AssertionError: datasets should not be an empty iterable", "data.empty"),
        ("RuntimeError: gesv: For batch 7: U(1,1) is zero, singular U.", "numerical.linalg"),
        ("RuntimeError: inverse: For batch 0: U(2,2) is zero, singular U.", "numerical.linalg"),
        # Python's faulthandler on Windows (an illegal instruction only by its code,
        # STATUS_ILLEGAL_INSTRUCTION); a worker's death as a thread pasted it; torch's conv given
        # another channel count, without its class
        ("Windows fatal exception: stack overflow", "segfault.windows_fatal"),
        ("Windows fatal exception: int divide by zero", "segfault.windows_fatal"),
        ("Windows fatal exception: code 0xc000001d", "segfault.windows_fatal"),
        ("RuntimeError: DataLoader worker (PID 522908) is killed by signal: killed.",
         "host.dataloader_killed"),
        ("Given groups=1, weight of size [64, 3, 7, 7], expected input[1, 1, 262, 262] to have 3 "
         "channels, but got 1 channels instead", "code.shapes"),
        # DGL's check in its socket code, as a thread quoted it without the path; XGBoost's rabit
        # resolving its tracker
        ("   socket_communicator.cc:155: Check failed: tmp != -1 (-1 vs. -1)", "net.socket_check"),
        ("cannot obtain address of xgboostjob-iris-ci-test-master-0", "net.dns"),
        # Ascend's device reporting an AI CPU operator's fault
        ("The error from device(chipId:0, dieId:0), serial number is 13, an exception occurred "
         "during AICPU execution, stream_id:2, task_id:19016, errcode:21008, msg:inner error.",
         "accel.runtime_error"),
        # Intel's oneCCL, its exception and its own error line; a hivemind swarm's peers; autograd
        # refusing what a backward returned; MSVC's std::bad_alloc; CUDA seeing no device, in
        # torch before 1.0's words and XGBoost's; Python 3.9's stack overflow, with its function
        ("RuntimeError: oneCCL: atl_ofi_comm.cpp:79 atl_ofi_comm: EXCEPTION: init transport "
         "failed", "nccl.error"),
        ("2023:11:28-16:35:45:(35980) |CCL_ERROR| base_thread.cpp:36 start: error while creating "
         "worker thread #0 pthread_create returns 22", "nccl.error"),
        ("RuntimeError: DHTNode bootstrap failed: none of the initial_peers responded to a ping. "
         "(set ensure_bootstrap_success=False to ignore)", "net.p2p"),
        ("hivemind.averaging.partition.AllreduceException: Averaging step failed: could not find a "
         "group", "net.p2p_no_group"),
        ("RuntimeError: Function AddBackward0 returned an invalid gradient at index 1 - expected "
         "type torch.FloatTensor but got torch.cuda.FloatTensor", "code.shapes"),
        ("\t\tbad allocation", "host.memory_error"),
        ("RuntimeError: cuda runtime error (100) : no CUDA-capable device is detected at "
         "/pytorch/aten/src/THC/THCGeneral.cpp:47", "cuda.driver_init"),
        ("xgboost.core.XGBoostError: [09:58:39] /workspace/src/common/common.cu:16: "
         "/workspace/src/common/cuda_dr_utils.cc: 25: cudaErrorNoDevice: no CUDA-capable device "
         "is detected", "cuda.driver_init"),
        ("Fatal Python error: _Py_CheckRecursiveCall: Cannot recover from stack overflow.",
         "code.recursion"),
        # huggingface_hub's download through hf_transfer; XLA given a replica's variable on another
        # device
        ("Error running job: An error occurred while downloading using `hf_transfer`. Consider "
         "disabling HF_HUB_ENABLE_HF_TRANSFER for better error handling.", "net.hub"),
        ("2024-01-01 00:13:48.240597: W tensorflow/core/framework/op_kernel.cc:1839] OP_REQUIRES "
         "failed at xla_ops.cc:514 : INVALID_ARGUMENT: Trying to access resource "
         "dense/kernel/replica_1/3 (defined @ /home/runner/work/keras/keras/keras/backend/"
         "tensorflow/core.py:31) located in device /job:localhost/replica:0/task:0/device:CPU:1 "
         "from device /job:localhost/replica:0/task:0/device:CPU:0", "code.shapes"),
        # FID's complex square root as a trainer logs it, without the class; TensorFlow's random
        # crop given an image of another rank (a GIF), as slim's Coordinator reported it
        ("[2023-10-13 15:43:11,238][__main__][CRITICAL] - Training failed due to Imaginary "
         "component 1.0299959193217622e+115", "numerical.fid"),

        # the loss kernels' asserts on their targets (nll_loss, nll_loss2d): a label out of range
        ("/pytorch/aten/src/THCUNN/ClassNLLCriterion.cu:108: cunn_ClassNLLCriterion_updateOutput_"
         "kernel: block: [0,0,0], thread: [0,0,0] Assertion `t >= 0 && t < n_classes` failed.",
         "data.label_range"),
        ("/pytorch/aten/src/THCUNN/ClassNLLCriterion.cu:57: void ClassNLLCriterion_updateOutput_"
         "no_reduce_kernel(int, THCDeviceTensor<Dtype, 2, int, DefaultPtrTraits>, "
         "THCDeviceTensor<long, 1, int, DefaultPtrTraits>, THCDeviceTensor<Dtype, 1, int, "
         "DefaultPtrTraits>, Dtype *, int, int) [with Dtype = float]: block: [7,0,0], thread: "
         "[129,0,0] Assertion `cur_target >= 0 && cur_target < n_classes` failed.",
         "data.label_range"),
        # the same check on the CPU in torch before 1.0 (THNN's, glibc's old quotes), as a thread
        # quoted it inside Markdown's backticks (zzd_speech/019)
        ("`RuntimeError: Assertion `cur_target >= 0 && cur_target < n_classes' failed.`",
         "data.label_range"),
        # CUDA's operation not supported in Transformer Engine's words and under NCCL; vLLM's
        # engine core found dead by its client, and the requests after it
        ("RuntimeError: /TransformerEngine/transformer_engine/pytorch/csrc/userbuffers/userbuffers-"
         "host.cpp:208 in function create_communicator_grouped2: CUDA Error: operation not "
         "supported", "cuda.not_supported"),
        ("ip-10-0-9-191:95209:95228 [0] init.cc:416 NCCL WARN Cuda failure 'operation not "
         "supported'", "cuda.not_supported"),
        ("RuntimeError: CUDA error: operation not supported", "cuda.not_supported"),
        ("ERROR 01-29 08:37:48 [core_client.py:564] Engine core proc EngineCore_DP1 died "
         "unexpectedly, shutting down client.", "launcher.engine_core_died"),
        ("ray.exceptions.RayTaskError(EngineDeadError): ray::AgentLoopWorker.generate_sequences() "
         "(pid=957185, ip=10.65.31.151, actor_id=67d7ba05eb11c8796a0b3b6b01000000, repr=<verl."
         "experimental.agent_loop.agent_loop.AgentLoopWorker object at 0x15230ce83290>)",
         "launcher.engine_core_died"),
        # a C++ library's uncaught standard exception for a bad argument, in libc++'s words (macOS)
        ("libc++abi: terminating due to uncaught exception of type std::out_of_range: vector",
         "code.cpp_logic_error"),
        ("libc++abi.dylib: terminating with uncaught exception of type std::invalid_argument: "
         "stoi: no conversion", "code.cpp_logic_error"),
        # MATLAB's GPU memory (MatConvNet, trainNetwork)
        ("Out of memory on device. To view more detail about available memory on the GPU, use "
         "'gpuDevice()'. If the problem persists, reset the GPU by calling", "cuda.oom"),
        # TensorFlow's CTC loss given a label past its classes
        ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Saw a non-null label "
         "(index >= num_classes - 1) following a null label, batch: 0 num_classes: 29 labels: "
         "5,12,30 labels seen so far: 5,12", "data.ctc_labels"),
        # the JVM's report of a native crash on Windows (Deeplearning4j), Jittor's handler's
        ("#  EXCEPTION_ACCESS_VIOLATION (0xc0000005) at pc=0x00007ffe6a1619af, pid=5528, "
         "tid=11280", "segfault.segv"),
        ("Caught segfault at address 0x65, flush log...", "segfault.segv"),
        # the CUDA samples' checkCudaErrors on an illegal address (libnd4j's copy of it)
        ('CUDA error at /mnt/jenkins/workspace/deeplearning4j-deeplearning4j-1.0.0-beta4-linux-'
         'x86_64-cuda-10.1/libnd4j/blas/cuda/NativeOps.cu:1903 code=700(<unknown>) "dZ" ',
         "cuda.illegal_access"),
        # cuDNN in TensorFlow's words, alone on its line in MatConvNet's; nvJPEG under DALI
        ("[InternalError (see above for traceback): cuDNN launch failure : input "
         "shape([1,3,949,1682]) filter shape([7,7,3,64])", "cuda.library"),
        ("(CUDNN_STATUS_BAD_PARAM)]", "cuda.library"),
        # a status of success named by a failed check, TensorFlow's, and torch 0.4's odd words
        ("2019-02-04 14:54:36.259713: F tensorflow/stream_executor/cuda/cuda_dnn.cc:231] Check "
         "failed: status == CUDNN_STATUS_SUCCESS (7 vs. 0)Failed to set cuDNN stream.",
         "cuda.library"),
        ("RuntimeError: CuDNN error: CUDNN_STATUS_SUCCESS", "cuda.library"),
        ('[/opt/dali/dali/operators/decoder/nvjpeg/nvjpeg_decoder_decoupled_api.h:925] NVJPEG '
         'error "6" : NVJPEG_STATUS_EXECUTION_FAILED n01990800/n01992773_7551.JPEG',
         "cuda.library"),
        # torch 1.0's multinomial given NaN probabilities; darknet's loss line at NaN
        ("RuntimeError: invalid argument 2: invalid multinomial distribution (encountering "
         "probability entry = infinity or NaN) at /pytorch/aten/src/TH/generic/"
         "THTensorRandom.cpp:302", "numerical.nan"),
        (" 2267: nan, nan avg, 0.001000 rate, 3.430528 seconds, 145088 images", "numerical.nan"),
        # Keras' check of fit()'s arrays against the model, in Python and in TensorFlow.js
        ("ValueError: Error when checking target: expected dense_2 to have shape (10,) but got "
         "array with shape (1,)", "code.shapes"),
        ("tf.js:5899 Uncaught (in promise) Error: Error when checking target: expected "
         "dense_Dense1 to have shape [,57,10], but got array with shape [1,1960,1].",
         "code.shapes"),
        # Theano's GPU memory: its CNMeM pool's, libgpuarray's
        ("MemoryError: Error allocating 283115520 bytes of device memory "
         "(CNMEM_STATUS_OUT_OF_MEMORY).", "cuda.oom"),
        ("pygpu.gpuarray.GpuArrayException: b'out of memory'", "cuda.oom"),
        # Theano's GEMM convolution's workspace; RAPIDS' memory pool full or asked for too much
        ("RuntimeError: GpuCorrMM failed to allocate working memory of 1600 x 246016",
         "cuda.oom"),
        ("MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/opt/conda/include/rmm/mr/"
         "device/pool_memory_resource.hpp:193: Maximum pool size exceeded", "cuda.oom"),
        ("ai.rapids.cudf.CudfException: RMM failure at: /usr/local/rapids/include/rmm/mr/device/"
         "pool_memory_resource.hpp:100: Initial pool size exceeds the maximum pool size!",
         "cuda.oom"),
        ("  what():  std::bad_alloc: out_of_memory: RMM failure at:/opt/rmm/include/rmm/mr/device/"
         "limiting_resource_adaptor.hpp:143: Exceeded memory limit", "cuda.oom"),
        # DyNet's host memory pools
        ("CPU memory allocation failed n=2097152000 align=32", "host.memory_error"),
        ("**RuntimeError: CPU memory allocation failed**", "host.memory_error"),
        # NumPy's sampler given NaN probabilities; CNTK's criterion gone NaN
        ("ValueError: probabilities contain NaN", "numerical.nan"),
        ("EXCEPTION occurred: The training criterion is not a number (NAN).", "numerical.nan"),
        # CNTK's check of a CUDA call (its out of memory is the OOM's)
        ("RuntimeError: CUDA failure 30: unknown error ; GPU=0 ; hostname=HPZ440 ; "
         "expr=cudaMalloc((void**) &deviceBufferPtr, sizeof(AllocatedElemType) * "
         "AsMultipleOf(numElements, 2))", "cuda.library"),
        ("CURAND failure 201: CURAND_STATUS_NOT_INITIALIZED ; GPU=0 ; hostname=node3 ; "
         "expr=curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_XORWOW)", "cuda.library"),
        ("CUDA failure 2: out of memory ; GPU=0 ; hostname=L-156141402 ; expr=cudaMalloc((void**) "
         "&deviceBufferPtr, sizeof(AllocatedElemType) * AsMultipleOf(numElements, 2))", "cuda.oom"),
        # Mask R-CNN's data generator quoting a sample it skipped (a consequence: the story when
        # no error of the run's is found)
        (
            "ERROR:root:Error processing image {'id': 'IMG_20190313_185930.jpg', 'source': "
            "'human', 'path': "
            "'/content/Mask_RCNN/samples/bottle/dataset/val/IMG_20190313_185930.jpg', 'width': "
            "2000, 'height': 4000, 'polygons': [{'name': 'polygon', 'all_points_x': [3987, 3745, "
            "3517, 3167, 3094, 2430, 2331, 2036, 1792, 1534, 1488, 1428, 1322, 1183, 1071, 902, "
            "681, 489, 397, 476, 664, 774, 1025, 1134, 1260, 1339, 1491, 1531, 1567, 1620, 1752, "
            "1904, 2149, 2172, 2238, 2314, 2354, 2380, 2552, 2628, 2704, 2926, 3098, 3329, 3593, "
            "3874, 3980, 3990], 'all_points_y': [1666, 1517, 1597, 1600, 1537, 1560, 1517, 1683, "
            "1593, 1286, 1121, 1038, 1038, 1180, 1144, 1164, 1174, 1041, 840, 645, 493, 486, "
            "466, 519, 450, 403, 410, 446, 380, 374, 228, 175, 66, 106, 112, 86, 169, 188, 175, "
            "215, 354, 433, 410, 473, 552, 793, 909, 929]}]}",
            "data.sample_load",
        ),
        # keras-retinanet's CSV annotations
        ("ValueError: invalid CSV annotations file: annotations.csv: line 6: x2 (138) must be "
         "higher than x1 (317)", "data.schema"),
        # TensorFlow 1's restore of a variable saved in another shape, on its own line too
        ("InvalidArgumentError (see above for traceback): Assign requires shapes of both tensors "
         "to match. lhs shape= [138,128] rhs shape= [23,128]", "code.shapes"),
        ("Assign requires shapes of both tensors to match. lhs shape= [1,1,256,2] rhs shape= "
         "[1,1,256,21]", "code.shapes"),
        # SciPy's Hungarian matching on a cost matrix gone NaN; YOLACT's moving average of them
        ("ValueError: matrix contains invalid numeric entries", "numerical.nan"),
        ("Warning: Moving average ignored a value of nan", "numerical.moving_average"),
        ("Warning: Moving average ignored a value of inf", "numerical.moving_average"),
        # SlowFast's NaN check; gin-config's bindings; PyTorch-DirectML's device checks
        ("RuntimeError: ERROR: Got NaN losses 2021-10-28 23:20:46.797813", "numerical.nan"),
        ("No configurable matching 'get_sentencepiece_model_path'.", "code.cli_config"),
        ("ValueError: No configurable matching reference '@train_fn'.", "code.cli_config"),
        ("ValueError: Configurable 'run' doesn't have a parameter named 'tpu_topology'.",
         "code.cli_config"),
        ("[libprotobuf FATAL D:\\a\\_work\\1\\s\\caffe2\\dml\\dml_command_recorder.cc:361] "
         "CHECK failed: ((((HRESULT)((current_command_list_->Close()))) >= 0)) == (true):",
         "accel.runtime_error"),
        # torch's host allocator out of pinned memory, as torch 1.x's RuntimeError says it
        ("RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/"
         "THCCachingHostAllocator.cpp:296", "host.pinned_alloc"),
        # MATLAB's newer words for the host out of memory
        ('Out of memory. Type "help memory" for your options.', "host.matlab_oom"),
        # the multinomial CUDA kernel's check of each probability, its line wrapped before it
        (",0] Assertion `val >= zero` failed.", "numerical.nan"),
        ("/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu:243: void at::native::"
         "<unnamed>::sampleMultinomialOnce(long *, long, int, scalar_t *, scalar_t *, int, int) "
         "[with scalar_t = float, accscalar_t = float]: block: [0,0,0], thread: [0,0,0] "
         "Assertion `val >= zero` failed.", "numerical.nan"),
        # torch 1.x's words for two operands on different devices
        ("RuntimeError: expected device cuda:0 but got device cpu", "code.shapes"),
        ("RuntimeError: expected device cpu but got device cuda:0", "code.shapes"),
        # nvdiffrast's check of a CUDA call; MATLAB's gpuArray on a CUDA error
        ("RuntimeError: Cuda error: 801[cudaGraphicsGLRegisterImage(&s.cudaColorBuffer[i], "
         "s.glColorBuffer[i], GL_TEXTURE_3D, cudaGraphicsRegisterFlagsReadOnly);]",
         "cuda.driver_error"),
        ("Error using gpuArray/subsref An unexpected error occurred trying to launch a kernel. "
         "The CUDA error was:", "cuda.matlab_gpuarray"),
        ("Error using gpuArray/mtimes An unexpected error occurred during CUDA execution. The "
         "CUDA error was: CUDA_ERROR_LAUNCH_FAILED", "cuda.launch_failure"),
        # tiny-cuda-nn's CUTLASS check; Dr.Jit's OptiX back end
        ("Got cutlass error: Error Internal at: 394", "cuda.library"),
        ("Critical Dr.Jit compiler failure: jit_optix_compile(): optixModuleGetCompilationState() "
         "indicates that the compilation did not complete succesfully. The module's compilation "
         "state is: 0x2363", "cuda.library"),
        # .NET's access violation (TorchSharp); DGL's CPU build asked for a GPU
        ("Fatal error. System.AccessViolationException: Attempted to read or write protected "
         "memory. This is often an indication that other memory is corrupt.", "segfault.segv"),
        ("DGLError: [15:53:54] /opt/dgl/src/runtime/c_runtime_api.cc:82: Check failed: "
         "allow_missing: Device API cuda is not enabled. Please install the cuda version of dgl.",
         "code.gpu_library"),
        # diffvg's check of its CUDA calls
        ("CUDA Runtime Error: operation not supported at /data/home/username/diffvg/scene.cpp:35",
         "cuda.not_supported"),
        ("CUDA Runtime Error: invalid device symbol at /diffvg/diffvg.cpp:1540",
         "cuda.driver_error"),
        # Windows' words for a full disk
        ("lmdb.Error: C:\\Users\\hex\\RAVE\\datasets\\music\\processed: There is not enough "
         "space on the disk.", "fs.nospace"),
        # TensorFlow's BFC allocator's map of its memory when an allocation failed, and its
        # op kernel's words for the failure
        ("2021-03-02 09:12:40.118203: W tensorflow/core/common_runtime/bfc_allocator.cc:467] "
         "**********************************************************************x*****xxxxxx",
         "cuda.oom_bfc_map"),
        ("2021-11-16 11:34:36.221746: W tensorflow/core/framework/op_kernel.cc:1680] Resource "
         "exhausted: failed to allocate memory", "cuda.oom_bfc_map"),
        # MATLAB out of host memory, after its own `Error:`
        ("Error: Out of memory. Type HELP MEMORY for your options.", "host.matlab_oom"),
        # torch elastic's etcd rendezvous that lost its state; Qlib's epoch line gone NaN (zzzzzh_)
        ("etcd.EtcdKeyNotFound: Key not found : /torchelastic/p2p/run_c63361db-da0b-40ca-90a6-"
         "a59be99e2a0b/rdzv/next_strategy", "net.rendezvous"),
        ("[37672:MainThread](2024-01-16 23:59:58,968) INFO - qlib.LSTM - [pytorch_lstm_ts.py:254] "
         "- train nan, valid nan", "numerical.nan"),
        # a socket's and an RPC client's timeout; TensorFlow's inverse of a singular matrix
        # (Glow) (zzzzzh_)
        ("TimeoutError: timed out", "net.http"),
        ("msgpackrpc.error.TimeoutError: Request timed out", "net.http"),
        ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Input is not invertible.",
         "numerical.linalg"),
        ("  (0) Invalid argument: Input is not invertible.", "numerical.linalg"),
        # Open MPI's words for the same refusal; torch's check of a CUDA driver call (zzzzzh_)
        ("*** MPI_ERR_COUNT: invalid count argument", "code.mpi_args"),
        ("RuntimeError: CUDA driver error: invalid argument", "cuda.driver_error"),
        # (and the errors other rules name, in the driver's spelling)
        ("RuntimeError: CUDA driver error: no CUDA-capable device is detected", "gpu.lost"),
        ("RuntimeError: CUDA driver error: initialization error", "cuda.fork"),
        ("Error in cnn_train_dag>(spmd) (line 492)", "code.matlab_error"),
        # MATLAB's call stack under the error, and its error in a parallel pool's worker
        ("Error in vl_simplenn (line 306)", "code.matlab_error"),
        ("    Error using cnn_train>accumulateGradients (line 469)", "code.matlab_error"),
        # HugeCTR's check, alone on its line before its file, expression and hint
        ("Check Failed!", "code.native_assert"),
        # Windows' words for a reset connection; zsh's job table for a background job's abort
        ("ConnectionResetError: [WinError 10054] An existing connection was forcibly closed by "
         "the remote host", "net.peer_closed"),
        ("[1]    56605 abort (core dumped)  CUDA_VISIBLE_DEVICES=0 python train_alae.py -c "
         "configs/flood-param.yaml", "segfault.aborted"),
        # RAFT's check of an NCCL call (cuML's comms), its reason cut by the paste
        ('Exception: RuntimeError("Exception occured! '
         'file=/home/qanthony/cuml-work/cuml/cpp/comms/std/src/cuML_std_comms_impl.cpp '
         "line=451: ERROR: NCCL call='ncclBroadcast(buff, buff, count, "
         "getNCCLDatatype(datatype), root, _nccl_comm, stream)'. Reason:invalid argument",
         "nccl.error"),
        # aws-ofi-nccl's old WARN lines (no libfabric provider; its failure code); S3's refusal
        # of a payload whose checksum did not match
        ("10.3.35.83: WARN: Function: find_ofi_provider Line: 543: NET/OFI Couldn't find any "
         "optimal provider", "nccl.error"),
        ("10.3.35.83: WARN: Function: main Line: 66: NET/OFI OFI NCCL failure: 2", "nccl.error"),
        ("`XAmzContentSHA256Mismatch: Unable to parse ExceptionName: XAmzContentSHA256Mismatch "
         "Message: The provided 'x-amz-content-sha256' header does not match what was computed.",
         "fs.object_store"),
        # gRPC's unavailable of an OS error; MinIO's full disk
        ("tensorflow.python.framework.errors_impl.UnavailableError: OS Error",
         "net.grpc_unavailable"),
        ("minio.error.ResponseError: ResponseError: code: XMinioStorageFull, message: Storage "
         "backend has reached its minimum free disk threshold. Please delete a few objects to "
         "proceed.", "fs.nospace"),
        # pickle's other words for an object it cannot serialize (old and new Pythons)
        ("TypeError: can't pickle _thread.RLock objects", "code.pickle"),
        ("TypeError: cannot pickle '_thread.RLock' object", "code.pickle"),
        ("_pickle.PicklingError: Can't pickle <function <lambda> at 0x7f2b3c1d0e50>: attribute "
         "lookup <lambda> on __main__ failed", "code.pickle"),
        # multiprocessing's message on one line, as some tracebacks print it
        ("RuntimeError: An attempt has been made to start a new process before the current "
         "process has finished its bootstrapping phase.", "code.spawn_main_guard"),
        # the Hub's refusal of a gated model in requests' words; another download's checksum
        ("requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: "
         "https://huggingface.co/meta-llama/Llama-2-7b-hf/resolve/main/config.json",
         "net.hub_gated"),
        ("Exception: Checksum of downloaded file 0c2808134496aacb6ec775d74cf86090 does not match "
         "expected checksum 244a559a6062bbec5c9cb49af036ff7d.", "net.download_checksum"),
        # TensorFlow's cuBLAS launch and torch's cuDNN without an algorithm
        ("tensorflow.python.framework.errors_impl.InternalError: Blas GEMM launch failed : "
         "a.shape=(4, 1024), b.shape=(4, 3072), m=1024, n=3072, k=4", "cuda.library"),
        ("RuntimeError: Unable to find a valid cuDNN algorithm to run convolution",
         "cuda.library"),
        # librosa's reader with no decoder for a file; NumPy on an .npy that is none; Intel
        # OpenMP's own assertion
        ("audioread.NoBackendError_", "data.audio"),
        (" Cannot load file containing pickled data when allow_pickle=False", "data.truncated"),
        ("OMP: Error #13: Assertion failure at z_Linux_util.cpp(2361).", "segfault.abort"),
        # Kaldi's words for every GPU taken by another process
        ("ERROR (nnet3-chain-train[5.4]:SelectGpuId():cu-device.cc:160) Failed to create CUDA "
         "context, no more unused GPUs?", "gpu.busy"),
        # decord on a video it cannot open or find a stream in
        ("[10:21:05] /github/workspace/src/video/video_reader.cc:83: ERROR opening: /data/video-"
         "llama2/VideoLLaMA2-main/datasets/videollava_sft/videochatgpt_tune/v_B7Ddfw2PXOI.mp4, "
         "Invalid data found when processing input", "data.audio"),
        ("Last error: [22:51:43] /github/workspace/src/video/video_reader.cc:151: Check failed: "
         "st_nb >= 0 (-1128613112 vs. 0) ERROR cannot find video stream with wanted index: -1",
         "data.audio"),
        # tcmalloc's heap check; Windows' stack overflow; lldb's bad access; Tcl's panic
        ("src/tcmalloc.cc:283] Attempt to free invalid pointer 0xc22f88e4c3381656 ",
         "segfault.heap"),
        ("CNTK: Caught Win32 exception 0xc00000fd: Stack overflow.", "segfault.segv"),
        ("* thread #28, queue = 'metal gpu stream', stop reason = EXC_BAD_ACCESS (code=1, "
         "address=0xbeaddc3f8010)", "segfault.segv"),
        ("Tcl_AsyncDelete: async handler deleted by the wrong thread", "segfault.abort"),
        # Triton's kernel for another GPU; MLX's Metal library without a kernel; MindSpore's graph
        # failing on an Ascend device
        ("RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
         "cuda.no_kernel_image"),
        ("RuntimeError: [metal::Device] Unable to load function "
         "steel_attention_float32_bq32_bk16_bd128_wm4_wn1_maskbfloat16", "accel.runtime_error"),
        ("RuntimeError: Run task for graph:kernel_graph_37 error! The details refer to 'Ascend "
         "Error Message'.", "accel.runtime_error"),
        # HF datasets' reader wrapping a cast error; MosaicML streaming's short shard
        ("Failed to read file '/home/haoyu_wang/trainLLM/data/pt/artificial_intelligence_machine_"
         "learning/chinese/high/rank_00012.parquet' with error <class 'datasets.table.CastError'>: "
         "Couldn't cast", "data.arrow"),
        ("IndexError: Relative sample index 85 is not present in the 17/shard.00085.mds file.",
         "data.truncated"),
        # wandb's API and GraphQL client on a server's 5xx; its init giving up on its process
        ("wandb: ERROR Error while calling W&B API: OOM command not allowed when used memory > "
         "'maxmemory'. (<Response [500]>)", "net.http"),
        ("500 response executing GraphQL.", "net.http"),
        ("wandb.errors.CommError: Error communicating with wandb process, exiting...",
         "net.retrying"),
        # headless rendering: PyOpenGL's EGL error, EGL or GLFW that would not start
        ("OpenGL.raw.EGL._errors.EGLError: EGLError(", "code.headless_render"),
        ("Could not initialize EGL", "code.headless_render"),
        ("[w] b'The GLFW library is not initialized'", "code.headless_render"),
        # OpenCV's resize given the None of an image it did not read; libpng's decoder;
        # SimpleITK on a file no reader knows
        ("cv2.error: /io/opencv/modules/imgproc/src/resize.cpp:4044: error: (-215) ssize.width > "
         "0 && ssize.height > 0 in function resize", "data.image"),
        ("cv2.error: OpenCV(4.5.5) /io/opencv/modules/imgproc/src/resize.cpp:4052: error: "
         "(-215:Assertion failed) !ssize.empty() in function 'resize'", "data.image"),
        ("libpng error: IDAT: CRC error", "data.image"),
        ("sitk::ERROR: Unable to determine ImageIO reader for \"/home/mchangaf/nnUNetFrame/"
         "DATASET/nnUNet_raw/nnUNet_raw_data/", "data.image"),
        # ND4J's device memory; .NET's host memory; pygame's crash handler; Go's runtime panic
        ("Exception in thread \"ADSI prefetch thread\" java.lang.RuntimeException: java.lang."
         "RuntimeException: Failed to allocate 140713104 bytes from DEVICE [0] memory",
         "cuda.oom"),
        ("Exception during AutoML iteration: System.OutOfMemoryException: Exception of type "
         "'System.OutOfMemoryException' was thrown.", "host.memory_error"),
        ("Fatal Python error: (pygame parachute) Segmentation Fault", "segfault.segv"),
        ("Epoch 0 1 / 600    0.17% 1d7h32m03spanic: runtime error: index out of range [2] with "
         "length 2", "code.native_panic"),
        # NaN in a trainer's or a library's own words: wav2letter's fatal check, icefall's
        # optimizer, GluonTS, fairchem
        ("F0723 11:44:54.493821  2870 Train.cpp:616] Loss has NaN values. Samples - "
         "train-clean-100-4014-186175-0018", "numerical.nan"),
        ("RuntimeError: Too many grads were not finite", "numerical.nan"),
        ("gluonts.core.exception.GluonTSUserError: Got NaN in first epoch. Try reducing initial "
         "learning rate.", "numerical.nan"),
        ("WARNING:root:Found nans while computing loss", "numerical.nan"),
        # c10d's store polled in vain; the OpenAI client on a server's 5xx
        ("waitForInput: poll for socket SocketImpl(fd=66, addr=[::ffff:10.164.0.78]:50434, "
         "remote=[::ffff:10.164.0.78]:29500) returned 0, likely a timeout", "net.store"),
        ("Failure: Error code: 503", "net.http"),
        # XGBoost's softmax objective; instant-ngp's empty dataset; pydantic 2's pointer under an
        # error it lists; XLA's cuBLAS call that failed; Ray's wrapper of an actor that died
        ("Error in xgb.iter.update(bst$handle, dtrain, iteration - 1, obj) : [12:23:02] "
         "amalgamation/../src/objective/multiclass_obj.cu:110: SoftmaxMultiClassObj: label must "
         "be in [0, num_class).", "data.label_range"),
        ("20:03:30 ERROR    Uncaught exception: No training images were found for NeRF "
         "training!", "data.empty"),
        ("    For further information visit https://errors.pydantic.dev/2.12/v/missing",
         "code.cli_config"),
        ("023-10-16 13:55:17.319037: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2716] "
         "Execution of replica 0 failed: INTERNAL: cublasLtMatmul( blas_lt_ref_.blas_lt_.get(), "
         "op_desc_.get(), alpha, a.opaque(), a_desc_.get(), b.opaque(), b_desc_.get(), beta, "
         "c.opaque(), c_desc_.get(), d.opaque(), d_de", "cuda.library"),
        ("ray.exceptions.RayTaskError(ActorDiedError): ray::TaskRunner.run() (pid=16209, "
         "ip=10.96.200.252, actor_id=af67a3a6fa70baaa8f2d6ff301000000, repr=<main_ppo.TaskRunner "
         "object at 0x7ecf611e7670>)", "ray.system_error"),
        # autograd's words alone on their line, under a debugger's `Exception has occurred:`
        ("element 0 of tensors does not require grad and does not have a grad_fn", "code.shapes"),
        # a platform's report of a pod's OOM kill; ROCm's torch seeing no GPU; zsh's words for a
        # child killed by SIGFPE
        ("> **Restart Reason**: OOMKill (memory exceeded limit, SIGKILL)", "host.oom_killer"),
        ("what():  HIP error: hipErrorNoDevice", "cuda.driver_init"),
        ("zsh: floating point exception  ./darknet detector train ../od-yolo/training/"
         "top_20_1000.data   -gpus 6,7 -ma", "segfault.sigfpe"),
        # RMM's CNMeM pool out of GPU memory (HugeCTR); bitsandbytes' check of its operands'
        # devices; numpy's np.save that wrote nothing (a full disk); scikit-learn's metric given
        # NaN scores; CUDA's device linker older than the cubin XLA gave it
        ("  what():  std::bad_alloc: CNMEM error at: /opt/conda/envs/rapids/include/rmm/mr/"
         "device/cnmem_memory_resource.hpp168: CNMEM_STATUS_OUT_OF_MEMORY", "cuda.oom"),
        ("RuntimeError: Input tensors need to be on the same GPU, but found the following "
         "tensor and device combinations:", "code.shapes"),
        ("> OSError: 49252324 requested and 0 written", "fs.nospace"),
        ("ValueError: Input contains NaN.", "numerical.nan"),
        ("ValueError: Input contains NaN, infinity or a value too large for dtype('float64').",
         "numerical.nan"),
        ("UnfilteredStackTrace: jaxlib.xla_extension.XlaRuntimeError: INTERNAL: nvlink exited "
         "with non-zero error code 256,output: nvlink fatal  : Input file '/tmp/tempfile-llpc-"
         "cab04a7-18966-5fd3b5872b691.cubin' newer than toolkit (118 vs114)",
         "cuda.no_kernel_image"),
        # Determined's harness, its trial's containers never all connected
        ('    raise ValueError("Ran out of events without finding rendezvous message")',
         "net.rendezvous"),
        # TensorFlow 1's input queue that its readers closed empty
        ("OutOfRangeError (see above for traceback): FIFOQueue '_1_create_inputs/batch/"
         "fifo_queue' is closed and has insufficient elements (requested 10, current size 0)",
         "data.empty"),
        # verl's actor on a policy loss gone NaN; a trainer's own NaN check naming the step
        ("(WorkerDict pid=8874) WARN: rank 1 non-finite policy loss. pg_loss_finite=False "
         "ppo_kl_finite=False.", "numerical.nan"),
        ("NaN at step 1558", "numerical.nan"),
        # Time-MoE's launcher script re-raising torchrun's failure
        ("RuntimeError: Error occurred when execute: torchrun --master_addr=localhost "
         "--master_port=9899 --node_rank=0 --nproc_per_node=2 --nnodes=1 main.py -d SWH2.jsonl",
         "launcher.child_failed"),
        # Moirai's patching of a series too short for any patch size
        ("AssertionError: no valid patch size candidates for time series shape: (6, 48), freq: "
         "H, patch_sizes: [8, 16, 32, 64, 128], constraints: range(32, 33), min_time_patches: 2, "
         "patch_size_ceil: 24", "data.series_short"),
        # the shell's SIGILL in other locales: alone (Polish, as pix2pix's user pasted it), and in
        # a bash job's report (German)
        ("Błędna instrukcja (zrzut pamięci)", "segfault.sigill"),
        ("/usr/share/playonlinux/bash/find_python: Zeile 58:  9558 Ungültiger Maschinenbefehl   "
         "\"$POL_PYTHON\" \"$POLDIR/python/check_python.py\"", "segfault.sigill"),
        ("Naruszenie ochrony pamięci", "segfault.segv"),
        # joblib's loky executor naming its killed workers' signal
        ("The exit codes of the workers are {SIGKILL(-9)}", "host.sigkill"),
        # MegEngine's device allocator
        ("RuntimeError: out of memory while requesting 68719476736 bytes; you can try setting "
         "MGB_CUDA_RESERVE_MEMORY to reserve all memory. If there are dynamic variables, you can "
         "also try enabling graph option `enable_grad_var_static_reshape` so some gradient "
         "variables can be statically allocated", "cuda.oom"),
        # torch.compile's Triton kernel too big for the GPU, its cause wrapped below the line
        ("torch._inductor.exc.InductorError: RuntimeError: No valid triton configs. ",
         "code.gpu_arch"),
        # Windows' illegal instruction (PyCharm's report of the process's exit); Visual Studio's
        # debugger on an access violation
        ("Process finished with exit code -1073741795 (0xC000001D)", "segfault.sigill"),
        ("Unhandled exception at 0x000007FEF9EECAA7 (vcruntime140.dll) in darknet.exe: "
         "0xC0000005: Access violation reading location 0x0000000000000000.", "segfault.segv"),
        # gdb's backtrace through a crash handler (Jittor's)
        ("#3  <signal handler called>", "segfault.native_backtrace"),
        # old torch's CPU allocator failing with ENOMEM (12), as libtorch's Rust binding prints it
        (" value: TorchError { c_error: \"[enforce fail at CPUAllocator.cpp:56] "
         "posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0\\nframe #0: ...",
         "host.memory_error"),
        # MindSpore's device waiting on its data queue
        ("RuntimeError: For 'GetNext', get data timeout. Queue name: "
         "e008c6e6-0088-11ee-974c-3cecefb225f0", "hang.data_loader"),
        # torch 2.x's words for a full /dev/shm
        ("RuntimeError: unable to allocate shared memory(shm) for file </torch_287_129298167_2>: "
         "Success (0)", "fs.shm_full"),
        # GraphVite's glog check of a CUDA call
        ("Check failed: error == cudaSuccess CUDA error unknown error at /network/home/zhuzhaoc/"
         ".local/envs/build/conda-bld/graphvite_1584598935508/work/include/core/solver.h:203",
         "gpu.unknown_cuda_error"),
    ],
)  # fmt: skip
def test_documented_words_of_other_libraries_for_the_same_failure(
    kb: Knowledge, line: str, rule_id: str
) -> None:
    hit = kb.match(anatomy(line).body)
    assert hit is not None and hit[0].id == rule_id
    low = line.lower().encode()
    assert any(nd in low for nd in NEEDLES + RARE_NEEDLES)


def test_the_same_words_in_another_context_stay_with_their_own_rule(kb: Knowledge) -> None:
    # A fork's CUDA init error as Python reports it; NCCL's own report of a missing symbol;
    # urllib's certificate error; a BIR error the Neuron compiler wraps in NLA001 (the model's
    # code); a busy device or a path that only names a Triton server; NCCL RAS's table row;
    # an allocator's size logged at INFO without the refusal
    for line, rule_id in (
        ("RuntimeError: CUDA error: initialization error", "cuda.fork"),
        # a native check in socket code that names its error: that error's rule, not the check's
        ("  what():  [04:04:56] /opt/dgl/src/rpc/network/tcp_socket.cc:100: Check failed: "
         "connect: Connection refused", "net.refused"),
        ("NCCL WARN Cuda failure 'named symbol not found'", "nccl.error"),
        ("urllib.error.URLError: <urlopen error [SSL: CERTIFICATE_VERIFY_FAILED] certificate "
         "verify failed>", "net.tls"),
        # a finite mask value too big for half precision: the code's, not a value gone non-finite
        ("RuntimeError: value cannot be converted to type at::Half without overflow: -1e+09",
         "python.runtime"),
        # a path of the run's own, not the dataset's: a checkpoint, a config
        ("FileNotFoundError: [Errno 2] No such file or directory: "
         "'data/checkpoints/model_best.pth'", "python.config_path"),
        ("FileNotFoundError: [Errno 2] No such file or directory: 'configs/train_val.yaml'",
         "python.config_path"),
        *(
            (f"FileNotFoundError: [Errno 2] No such file or directory: '{path}'",
             "python.config_path")
            for path in (
                # a top-level /data/ mount: many clusters' home or scratch disk
                "/data/user/exp1/run1/args.json", "/data/bob/hf_home/hub/tmp",
                "/data/anaconda3/envs/py38/bin/ninja", "/data/apps/cuda-11.8/bin/nvcc",
                # outputs, results, logs and runs, however they are named
                "results/exp1/metrics.csv", "runs/train/exp/results.csv", "exp_logs/train.csv",
                "exp1/train.log", "predictions/val_0001.npy", "generated_images/0001.png",
                "samples/epoch_1.png", "wandb/run-1/files/wandb-summary.json",
                # scripts, pretrained weights, saved states
                "train.py", "scripts/train.sh", "./vgg16.npy", "imagenet-vgg-verydeep-19.mat",
                "pretrained/imagenet21k_ViT-B_16.npz", "/data/exp/run1/last.pkl", "train_args.json",
            )
        ),
        ("[NLA001]  Unhandled exception with message: === BIR error ===", "code.compile"),
        ("OSError: [Errno 16] Device or resource busy: '/dev/vfio/0'", None),
        ("OSError: [Errno 16] Device or resource busy: '/data/nvidia-triton-server/model.plan'",
         None),
        ("    0         1         4         8        32        32   RUNNING  MISMATCH", None),
        ("INFO allocator: Attempting to allocate 512MB.", None),
    ):  # fmt: skip
        hit = kb.match(anatomy(line).body)
        assert (hit[0].id if hit is not None else None) == rule_id, line


def test_a_tile_streamed_by_gdal_is_not_blamed_on_the_data_nor_a_count_table_on_nan(
    kb: Knowledge,
) -> None:
    # GDAL's words for an undecodable tile follow a failed fetch when the tile is streamed
    # (/vsicurl/): the fetch's own line (net.http) tells; a row of counts is not a loss table
    for line in ("ERROR 1: /vsicurl/https://naipeuwest.blob.core.windows.net/naip/v002/m.tif, "
                 "band 1: IReadBlock failed at X offset 0, Y offset 5460: "
                 "TIFFReadEncodedTile() failed.", "3 nan nan 12", "2 nan nan 0"):  # fmt: skip
        hit = kb.match(anatomy(line).body)
        assert hit is None or hit[0].id not in ("data.image", "numerical.nan"), line


def test_a_pinned_host_allocation_that_failed_for_another_reason_is_no_host_oom(
    kb: Knowledge,
) -> None:
    for line in ("RuntimeError: cudaMallocHost failed: operation not permitted when stream is "
                 "capturing", "cudaHostAlloc failed, ret[3], initialization error"):  # fmt: skip
        hit = kb.match(anatomy(line).body)
        assert hit is None or hit[0].id != "host.memory_error", line


def test_a_peers_reset_raised_as_a_connection_error_stays_a_consequence(kb: Knowledge) -> None:
    # `ConnectionError: Connection reset by peer`: the peer went first, a consequence of another
    # failure (net.peer_closed), not a ConnectionError of the run's own (net.connection_error)
    hit = kb.match(anatomy("ConnectionError: Connection reset by peer (attempt 1)").body)
    assert hit is not None and hit[0].id == "net.peer_closed"
    hit = kb.match(anatomy("ConnectionError: Failed to connect to Ray at address: x:8265.").body)
    assert hit is not None and hit[0].id == "net.connection_error"


def test_a_download_the_server_refused_promises_no_restart(kb: Knowledge) -> None:
    # Keras' get_file given a 403 or a 404: the request's (a moved file, no access), not a
    # server's failure that a restart outlives
    line = ("Exception: URL fetch failure on https://storage.googleapis.com/keras-applications/"
            "resnet50v2_weights.h5: 403 -- Forbidden")  # fmt: skip
    hit = kb.match(anatomy(line).body)
    assert hit is None or hit[0].id != "net.http"


def test_a_table_of_losses_with_one_nan_among_numbers_is_not_a_loss_gone_nan(
    kb: Knowledge,
) -> None:
    # DeepXDE's row with one loss term NaN among numbers, or a metric list that holds one: the
    # run may go on; only a row whose losses are NaN throughout is read as gone NaN
    for line in ("1000      [1.2e-01, nan]    [3.4e-02]    [1.0e+00]",
                 "1000      [1.2e-01]    [nan]    [1.0e+00]"):  # fmt: skip
        hit = kb.match(anatomy(line).body)
        assert hit is None or hit[0].id != "numerical.nan", line


def test_a_table_of_missing_values_is_not_a_loss_gone_nan(kb: Knowledge) -> None:
    # pandas' missing values; an evaluation's table of a class the split lacks (mmseg's per-class
    # IoU, detectron2's copypaste line): no loss gone NaN; nor a debug print of a check
    for line in ("3    NaN    NaN    NaN", "mean  0.52  NaN  NaN  NaN",
                 "|     train     |  nan  |  nan  |  nan  |",
                 "[d2.evaluation.testing]: copypaste: nan,nan,nan,nan,nan,nan",
                 "output is nan: tensor(False, device='cuda:0')"):  # fmt: skip
        hit = kb.match(anatomy(line).body)
        assert hit is None or hit[0].id != "numerical.nan", line


def test_words_that_only_look_like_the_new_rules_are_not_them(kb: Knowledge) -> None:
    # torch's warning on a CPU-only machine, which goes on on the CPU; SGLang's sync wrapping an
    # NCCL error (the NCCL error's rule, not a shape's); a notice that a VM may be pre-empted;
    # a proxy refusing Keras' download (the set-up's, no server's failure)
    for line, rid in (
        ("UserWarning: CUDA initialization: CUDA driver initialization failed, you might not have "
         "a CUDA gpu. (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)",
         "cuda.driver_init"),
        ("[2025-05-21 16:07:41 TP0] Failed to update parameter online: NCCL error in: "
         "/pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, remote process exited",
         "code.weight_sync_shape"),
        ("INFO: this node is a spot VM and may be pre-empted at any time", "sched.preempted"),
        ("Exception: URL fetch failure on https://storage.googleapis.com/x.h5: None -- Tunnel "
         "connection failed: 407 Proxy Authentication Required", "net.http"),
    ):  # fmt: skip
        hit = kb.match(anatomy(line).body)
        assert hit is None or hit[0].id != rid, line


def test_out_of_memory_on_the_host_is_not_a_cuda_oom(kb: Knowledge) -> None:
    hit = kb.match(anatomy("RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. "
                           "DefaultCPUAllocator: not enough memory: you tried to allocate "
                           "1073741824 bytes.").body)  # fmt: skip
    assert hit is None or hit[0].id != "cuda.oom"


def test_a_cancellation_without_the_schedulers_reason_promises_no_restart(kb: Knowledge) -> None:
    # someone's scancel (or srun ending a step after a task failed): a person decides
    line = "slurmstepd: error: *** JOB 4242 ON gpu-017 CANCELLED AT 2024-03-02T10:11:12 ***"
    hit = kb.match(anatomy(line).body)
    assert hit is not None and hit[0].id == "sched.cancelled" and hit[0].transient is None
    timed = line.replace(" ***", " DUE TO TIME LIMIT ***")
    hit = kb.match(anatomy(timed).body)
    assert hit is not None and hit[0].id == "sched.time_limit" and hit[0].transient is True
    # a step's: srun ends it after a task failed, the task's error says why
    step = "slurmstepd: error: *** STEP 4242.0 ON gpu-017 CANCELLED AT 2024-03-02T10:11:12 ***"
    hit = kb.match(anatomy(step).body)
    assert hit is not None and hit[0].id == "sched.step_cancelled"
    assert hit[0].category.value == "unknown" and hit[0].role == "consequence"


def test_a_loss_scale_reduced_to_zero_is_past_the_floor(kb: Knowledge) -> None:
    line = "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 0"
    hit = kb.match(anatomy(line).body)
    assert hit is not None and hit[0].id == "numerical.loss_scale" and hit[0].transient is False
    half = "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 0.5"
    hit = kb.match(anatomy(half).body)
    assert hit is not None and hit[0].id != "numerical.loss_scale"  # a scaler still scaling


def test_tensorflow_s_allocator_warning_that_is_not_a_failure_is_no_oom(kb: Knowledge) -> None:
    line = (
        "W tensorflow/core/common_runtime/bfc_allocator.cc:245] Allocator (GPU_0_bfc) ran out of "
        "memory trying to allocate 2.26GiB with freed_by_count=0. The caller indicates that this "
        "is not a failure, but may mean that there could be performance gains if more memory "
        "were available."
    )
    hit = kb.match(anatomy(line).body)
    assert hit is None or hit[0].category is not Category.CUDA_OOM


def test_the_loss_scale_at_inf_is_not_a_nan_loss(kb: Knowledge) -> None:
    hit = kb.match(anatomy("[2023-01-01] loss_scale: inf, grad_norm: 1.2").body)
    assert hit is None or hit[0].id != "numerical.nan"


@pytest.mark.parametrize(
    "line",
    [
        "best_loss: inf",
        "Epoch 0 | best_val_loss=inf",
        "config: lr: 0.1 loss_threshold: inf",
        "Press ^C to quit",
        "Best loss: inf",
        "best val loss = inf",
        "Lowest loss: inf",
        "min loss: inf",
        '{"loss": 2.31, "grad_norm": 1.2, "step": 5}',
        '"best_loss": Infinity',
        "[INFO] grad check: No NaNs detected",
        "step 100: 0 NaNs detected in the activations",
        "(autoscaler +12m3s) Instance k-0001 (node IP: 10.1.2.3) will be terminated soon (reason: "
        "idle).",
        "Warning: File /etc/openmpi/mca-params.conf cannot be opened. Using defaults.",
        "model.free(): invalid call ignored",  # not glibc's words at the start of a line
        "Waiting for the connection pool to free(): 3 slots",
        "Exception code: 0xc0000094 handled by the runtime",  # not an access violation
        "Using backend gloo for CPU tensors; collectives not supported by it fall back to nccl",
        "make: Entering directory '/opt/megatron/core/datasets'",
        "make: Nothing to be done for 'all'.",
        "Killed 3 stale workers; 12 alive",
        "Killedworkers: 0",  # (a counter's name, not a lowercase tail after the shell's word)
        "xFormers 0.0.23 built with CUDA 12.1, memory_efficient_attention.cutlassF: available",
        # Ray's object store full (what it cannot evict is no eviction of the job)
        "The local object store is full of objects that are still in scope and cannot be evicted."
        " Tip: Use the `ray memory` command to list active objects in the cluster.",
        "LRU cache: 12 entries evicted, 3 pinned",
        "  activeDeadlineSeconds: 86400",  # a printed manifest's field
        # lines that quote a failure the program retries or goes on after, or only look like
        # one (a path, a metric's name, a setting), from a review of the rules that promise a
        # restart: TensorFlow's retried GCS call, pip's retry, datasets' offline cache
        "I external/org_tensorflow/tensorflow/core/platform/cloud/retrying_utils.cc:73] The "
        "operation failed and will be automatically retried in 1.54867 seconds (attempt 1 out of "
        "10), caused by: Unavailable: Error executing an HTTP request: HTTP response code 503 "
        "with body ''",
        "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
        "after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection."
        "HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno 111] "
        "Connection refused')': /simple/torch/",
        "Using the latest cached version of the dataset since allenai/c4 couldn't be found on the "
        "Hugging Face Hub (offline mode is enabled).",
        "  data_path ....... ['/lustre/fsw/llm/datasets/grammar_error_correction/train_text']",
        "Saving checkpoint to /lustre/fsw/team/error_analysis_v2/checkpoint-500",
        'DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{gpu="0",UUID="GPU-1"} 0',
        "NVLink status: 18 links up, errors: none",
        "Evicted 1 cookie(s) over the 1-cookie total limit",
        "KV cache: 12 entries were evicted",
        "resume-if-preempted: True",
        '{"preempted": false, "restarts": 0}',
        "INFO Initializing TCPStore master_address=10.0.0.1 tcpstore_port=29500 "
        "timeout_barrier_init_secs=30 timeout_secs=600",
    ],
)
def test_ordinary_output_that_looks_like_a_failure_is_not_one(kb: Knowledge, line: str) -> None:
    hit = kb.match(anatomy(line).body)
    assert hit is None or hit[0].role != "cause", hit and hit[0].id


def test_an_info_line_is_not_handed_to_the_rules() -> None:
    # `: INFO` is on every line of some loggers: no needle may hold `: inf`
    for line in ("[rank0]: INFO: step 1 loss 2.31", "0: INFO step 1", "2024 : INFO : saved"):
        assert not any(nd in line.lower().encode() for nd in NEEDLES + RARE_NEEDLES), line


@pytest.mark.parametrize(
    ("line", "not_rule"),
    [
        # a trainer that falls back or offloads went on
        ("WARNING: not enough GPU memory for batch size 64, falling back to 32", "cuda.oom"),
        ("Loading checkpoint shards: not enough GPU memory for the whole model, offloading 4 "
         "layers to CPU", "cuda.oom"),
        # another Go program that cannot find a helper is no container's command
        ('WARNING: error getting credentials - err: exec: "docker-credential-desktop": '
         "executable file not found in $PATH, out: ``", "sched.exec_failed"),
        ('E0101 metrics.go:42] failed to fetch GPU metrics: exec: "nvidia-smi": executable file '
         "not found in $PATH", "sched.exec_failed"),
        # reading an API that is not served (metrics-server missing) creates nothing
        ("W0101 sidecar: kubectl top pod: error: the server could not find the requested "
         "resource (get pods.metrics.k8s.io)", "sched.request_invalid"),
        # a healthy run's metrics: the spread of one sample, the loss scale's own key
        ("step 3 | loss std: nan | loss mean: 2.31", "numerical.nan"),
        ("step 3 | loss var: nan | loss mean: 2.31", "numerical.nan"),
        ("iteration 10 | loss scale: nan", "numerical.nan"),
        # a check that found none, a script that recovers by itself
        ("sanity check: no layer produced NaNs", "numerical.nan"),
        ("Loss exploded to 1.2e5 at step 4; reloading checkpoint and halving lr", "numerical.nan"),
        # the network stack's own assertions, wrapped after their file:line: not the code's
        ("void mlx5_post_send(struct ibv_qp*): Assertion `wqe' failed.", "code.native_assert"),
        ("ucs_status_t ucp_worker_progress(ucp_worker_h): Assertion `0' failed.",
         "code.native_assert"),
        ("void efa_rdm_ep_progress(struct efa_rdm_ep*): Assertion `ep' failed.",
         "code.native_assert"),
        # torch's warning that it falls back to a slower SVD: the run goes on
        ("[W BatchLinearAlgebraLib.cpp:703] Warning: torch.linalg.svd: During SVD computation "
         "with the selected cusolver driver, batches 0 failed to converge. A more accurate method "
         "will be used to compute the SVD as a fallback.", "numerical.linalg"),
        # a loader's count of the bad samples it found or dropped, at zero; a run that found some
        ("Found 0 images with broken labels", "data.zero_count"),
        ("Found 0 corrupt images, 1200 ok", "data.zero_count"),
        ("Loaded 0 samples from cache, tokenizing 5000", "data.zero_count"),
        ("Found 0 samples in cache", "data.zero_count"),
        ("Found 10 training images in /data/train", "data.zero_count"),
        ("Epoch 3: 10 training samples skipped", "data.zero_count"),
        # a validation split left empty on purpose
        ("Found 0 validation samples.", "data.zero_count"),
        ("Found 0 samples for validation, skipping evaluation", "data.zero_count"),
        ("Found 0 validation samples.", "data.empty"),
        ("Found 0 samples for validation, skipping evaluation", "data.empty"),
        # a script that makes its own output directory
        ("WARNING: Parent directory ./logs does not exist, creating it.", "code.save_dir_missing"),
        # NumPy's words for an array of the wrong shape: the code's, not the matrix's numbers
        ("numpy.linalg.LinAlgError: Last 2 dimensions of the array must be square",
         "numerical.linalg"),
        # Lightning's warning of one rank's empty loader while others have batches
        ("UserWarning: Total length of `DataLoader` across ranks is zero, but local rank has zero "
         "length.", "data.empty_loader"),
        ("step 10 | loss[3]: nan_count=0", "numerical.nan"),
        # Keras' count for a subset left unused (validation_split=0) and counts of bad samples
        ("Found 0 images belonging to 10 classes.", "data.zero_count"),
        ("Skipped 0 training samples.", "data.zero_count"),
        ("Dropped 0 training examples.", "data.zero_count"),
        ("Removed 0 training samples from the dataset", "data.zero_count"),
        # a best perplexity's start value, and zsh's report of a child that ended by itself
        ("best perplexity = inf, saving model", "numerical.nan"),
        ("best_ppl: inf", "numerical.nan"),
        ("   12 killed     3 survived", "host.sigkill"),  # a game's tally, not zsh's report
        # a best, lowest or previous perplexity's start value, anywhere before it on the line
        ("Epoch 1 | best valid ppl = inf", "numerical.nan"),
        ("lowest validation perplexity: inf", "numerical.nan"),
        ("previous perplexity = inf", "numerical.nan"),
        # a program's own file or config it finds invalid, not a Kubernetes manifest's field
        ("WARNING: cache file is invalid: features.pkl:", "sched.request_invalid"),
        ("Config is invalid: model.backbone:", "sched.request_invalid"),
        # asserts that a NaN is there, or that counts agree: not a NaN found, not an empty set
        ("AssertionError: assert torch.isnan(mask).any()", "numerical.nan"),
        ("AssertionError: assert not torch.isfinite(pad).all()", "numerical.nan"),
        ("AssertionError: assert len(dataset) == len(labels)", "data.empty"),
        ("AssertionError: assert len(train_loader) > 0 or args.eval_only", "data.empty"),
        # a name that only starts with the data's words: a process group, checkpoints found
        ("AssertionError: assert len(data_parallel_group) > 0", "data.empty"),
        ("AssertionError: assert len(ckpt_files) > 0", "data.empty"),
        # a JVM's fatal report's header alone: a thread or process limit prints it too
        ("# There is insufficient memory for the Java Runtime Environment to continue.",
         "host.memory_error"),
        ("RuntimeError: CUDA kernel failed : 7001", "cuda.illegal_access"),  # not error 700
        # the names of errors a script caught, printed as it went on
        ("<class 'gpytorch.utils.errors.NotPSDError'> raised, re-initialising the model",
         "numerical.linalg"),
        ("skipping clip 0042.wav: NoUtterancesError", "data.silent_audio"),
        ("WARNING: annotation file 'data/ann/val_0042.json' not found, skipping",
         "data.missing_file"),
        # a sampler or a kernel that says so and goes on another way
        ("WARNING: class 12 has 3 images: sample larger than population, sampling with "
         "replacement", "data.sample_larger"),
        ("WARNING: flash attention unavailable (Expected is_sm80 || is_sm90 to be true, but got "
         "false.), falling back to math kernel", "code.gpu_arch"),
        # a script that says so and goes on on the CPU, the error quoted in its words
        ("Failed to initialize CNN model: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, "
         "opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, "
         "privateuseone device type at start of device string: auto", "code.device_string"),
        ("WARNING - could not use device 'gpu' (RuntimeError: Expected one of cpu, cuda, ipu, xpu, "
         "mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, "
         "mtia, privateuseone device type at start of device string: gpu); falling back to cpu",
         "code.device_string"),
        ("RuntimeError: Invalid device string: 'cuda:0,1', falling back to cpu",
         "code.device_string"),
        # torch.compile's max-autotune logging a config it tried and skipped (the next line says
        # `Ignoring this choice.`): no failure, neither the GPU's nor its memory
        ("No valid triton configs. OutOfMemoryError: out of resource: triton_tem_fused_mm_0 "
         "Required: 131072 Hardware limit:101376 Reducing block sizes or `num_stages` may help..",
         "code.gpu_arch"),
        ("No valid triton configs. OutOfMemoryError: out of resource: triton_tem_fused_mm_0 "
         "Required: 131072 Hardware limit:101376 Reducing block sizes or `num_stages` may help..",
         "cuda.oom"),
        ("No valid triton configs. OutOfResources: out of resource: shared memory, Required: "
         "131072, Hardware limit: 101376. Reducing block sizes or `num_stages` may help..",
         "code.gpu_arch"),
        # TensorFlow handed a file's name where the image's bytes go: the code's, not the data's
        ("InvalidArgumentError: Expected image (JPEG, PNG, or GIF), got unknown format starting "
         "with '/content/drive/M'", "data.image"),
        # ENOTDIR on a path of the run's own (its output folder), not the dataset's
        ("NotADirectoryError: [Errno 20] Not a directory: 'outputs/run1/ckpt.pt/epoch_3'",
         "data.missing_file"),
        # a GPU monitor skipping a query the driver's NVML lacks, the training going on
        ("wandb: WARNING Failed to sample GPU power: NVMLError_FunctionNotFound: Function Not "
         "Found", "cuda.nvml_function"),
        ("nvml error: 13 Local version of NVML doesn't implement this function; skipping "
         "nvmlDeviceGetPowerUsage", "cuda.nvml_function"),
        ("wandb: WARNING Failed to sample GPU power: RuntimeError: nvml error: 13 Local version of "
         "NVML doesn't implement this function", "cuda.nvml_function"),
        ("W1201 12:00:00 gpu_stats.py:88] GPU stats query failed (RuntimeError: nvml error: 13 "
         "Local version of NVML doesn't implement this function); skipping", "cuda.nvml_function"),
        # a count that ends in the word, not zsh's report of a pid
        ("   12 killed", "host.sigkill"),
        # faulthandler's bare code, which it prints for exceptions native code handles (COM's)
        ("Windows fatal exception: code 0x8001010d", "segfault.windows_fatal"),
        # a solver's own words on convergence, not torch's kernels (no device, no singular U)
        ("newton solve: step 12 failed to converge, reducing dt", "numerical.linalg"),
        ("ERROR cg solve: 500 iterations did not converge, continuing with last iterate",
         "numerical.linalg"),
        # a socket's retry, not a check that stopped the process
        (".../socket_communicator.cc:120: Socket send failed: retrying in 1s", "net.socket_check"),
        # DGL's socket code at start-up, binding and listening (no check failed)
        ("[04:48:20] /home/ubuntu/dgl_da/src/graph/network/socket_communicator.cc:68: Bind to "
         "127.0.0.1:2049", "net.socket_check"),
        ("[04:48:20] .../socket_communicator.cc:74: Listen on 127.0.0.1:2049, wait sender "
         "connect ...", "net.socket_check"),
        # TensorFlow's cuInit on a machine without a GPU: a warning, the run goes on on the CPU
        ("E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: "
         "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected", "cuda.driver_init"),
        # a filesystem's errno, not CUDA's
        ("OSError: [Errno 95] Operation not supported: 'epoch_12.pth' -> '/content/drive/My "
         "Drive/mmdetection/latest.pth'", "cuda.not_supported"),
        # hivemind going on: an averaging round it retries, the optimizer's local step, the DHT's
        # warning where bootstrap success is not required
        ("[WARN] [hivemind.averaging.averager._step:480] DecentralizedAverager caught "
         "AllreduceException('Averaging step failed: could not find a group.'), retrying",
         "net.p2p_no_group"),
        ("[INFO] [hivemind.optim.optimizer._update_global_epoch:420] Averaging gradients failed "
         "with AllreduceException('Averaging step failed: could not find a group.')",
         "net.p2p_no_group"),
        ("[WARN] [hivemind.dht.node.create:271] DHTNode bootstrap failed: none of the "
         "initial_peers responded to a ping.", "net.p2p"),
        # an FID copy that warns of the complex part and goes on with the real one
        ("UserWarning: Imaginary component 0.0127 in FID calculation", "numerical.fid"),
        ("Imaginary component 0.0127", "numerical.fid"),
        # a library that probes for a GPU, warns, and goes on on the CPU
        ("WARNING: could not initialize the CUDA backend (cudaErrorNoDevice: no CUDA-capable "
         "device is detected); falling back to the CPU", "cuda.driver_init"),
        # darknet's loss line on a healthy step; a C++ exception of another type
        (" 2267: 0.563421, 0.612345 avg loss, 0.001000 rate, 3.430528 seconds, 145088 images",
         "numerical.nan"),
        ("terminate called after throwing an instance of 'std::runtime_error'",
         "code.cpp_logic_error"),
        # the same errno for one path (a socket on a Windows drive under WSL), not a link
        ("OSError: [Errno 95] Operation not supported", "fs.links_unsupported"),
        # cuDNN's API log (CUDNN_LOGINFO_DBG=1) of a call that succeeded
        ("i!     status: type=cudnnStatus_t; val=CUDNN_STATUS_SUCCESS (0);", "cuda.library"),
        # libc++'s older words for an uncaught exception of another type
        ("libc++abi.dylib: terminating with uncaught exception of type std::runtime_error: boom",
         "code.cpp_logic_error"),
        # Lua's words in a message that quotes them, not a Lua error
        ("INFO: will attempt to call the hook again in 5 s", "code.lua_error"),
        # a processing error of another tool that quotes no sample's record; DyNet's pools
        # allocated at start-up
        ("2024-10-08 04:10:13,267 [ERROR] Error processing image: Aspect buckets must be a list",
         "data.sample_load"),
        ("[dynet] allocating memory: 512MB", "host.memory_error"),
        ("[dynet] memory allocation done.", "host.memory_error"),
        # a NaN check that found none
        ("INFO: got no NaN losses in the last 1000 steps", "numerical.nan"),
        # the host allocator's other failures are not an out of memory; the GPU's own is cuda.oom's
        ("THCudaCheck FAIL file=../aten/src/THC/THCCachingHostAllocator.cpp line=280 error=710 : "
         "device-side assert triggered", "host.pinned_alloc"),
        ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB", "host.pinned_alloc"),
        # MATLAB's advice quoted in a line of a script's own; another kernel's assertion
        ("% if it fails with Out of memory, type help memory for your options", "host.matlab_oom"),
        ("Loss.cu:106: block: [0,0,0], thread: [0,0,0] Assertion `input_val >= zero && "
         "input_val <= one` failed.", "numerical.nan"),
        # a CUDA error word in a version banner; a .NET exception of another kind
        ("tiny-cuda-nn: using cutlass 2.11 kernels", "cuda.library"),
        ("System.InvalidOperationException: Sequence contains no elements", "segfault.segv"),
        # the BFC allocator's statistics at start-up and in its dump: no failure by themselves
        ("2018-05-16 14:46:52.011044: I tensorflow/core/common_runtime/bfc_allocator.cc:678] Sum "
         "Total of in-use chunks: 10.08GiB", "cuda.oom_bfc_map"),
        ("2021-03-01 10:00:00.000000: I tensorflow/core/common_runtime/bfc_allocator.cc:1036] "
         "InUse at 7f0a2e000000 of size 1280 next 1", "cuda.oom_bfc_map"),
        # a script's own message built from the words, not diffvg's check of a call
        ("print('CUDA Runtime Error: ' + msg)", "cuda.driver_error"),
        # an epoch's scores that are finite, or NaN in only one of them; etcd's key found
        ("[pytorch_lstm_ts.py:254] - train 0.412301, valid 0.433107", "numerical.nan"),
        ("train: nanoGPT-124M, val: nanoGPT-124M", "numerical.nan"),
        ("INFO etcd.EtcdResult key=/torchelastic/p2p/run_1/rdzv/active_version", "net.rendezvous"),
        # MPI's error of the transport, and of a root that is right on one node (zy_horovod)
        ("Fatal error in PMPI_Allreduce: Other MPI error, error stack:", "code.mpi_args"),
        ("[g2-nasp:24252] *** MPI_ERR_ROOT: invalid root", "code.mpi_args"),
        # a script's own words about a file it will create; Marian's reason, before its abort
        ("Couldn't open file, creating a new one", "code.darknet_file"),
        ("[2019-10-22 17:37:57] Error: Labels not matching logits shape??", "code.marian_abort"),
        ("[check] 12 passed, 0 Check Failed!", "code.native_assert"),
        # a script's words about an error, not MATLAB's report of one
        ("Error in the config: using defaults", "code.matlab_error"),
        ("Error using flash attention, falling back to SDPA", "code.matlab_error"),
        # any wait's timeout in its own words; UCX's status for a transfer, not a disk's (nor a
        # reachability's: the crash or the kill after it says more, as in zzzzzh_ucxrepos/001)
        ("TimeoutError: Timed out waiting for the barrier", "net.http"),
        ("0: [1576565271.426547] [cgpu06:45376:0]       ucp_rkey.c:250  UCX  ERROR Failed to "
         "unpack remote key from remote md[4]: Input/output error", "fs.eio"),
        ("0: [1576565271.426547] [cgpu06:45376:0]       ucp_rkey.c:250  UCX  ERROR Failed to "
         "unpack remote key from remote md[4]: Input/output error", "mpi.ucx"),
        # the unpickler's errors (a file cut short or not a pickle: the checkpoint's); a count
        # that only ends in `abort`
        ("_pickle.UnpicklingError: invalid load key, 'v'.", "code.pickle"),
        ("Parameter 'function'=<function <lambda> at 0x7f> of the transform "
         "datasets.arrow_dataset.Dataset._map_single couldn't be hashed properly, a random hash "
         "was used instead. Make sure your transforms and parameters are serializable with "
         "pickle or dill", "code.pickle"),
        ("step 120 | abort_ratio 0.01 | loss 2.31", "segfault.aborted"),
        ("UserWarning: cannot pickle the tokenizer's cache; it will be rebuilt in each worker",
         "code.pickle"),
        # an interrupt is not the scheduler's stop (nor a quit or a term an interrupt)
        ("WARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting "
         "down workers", "sched.death_signal"),
        ("WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting "
         "down workers", "hang.interrupted"),
        # a launcher's child, or a download tool's, through subprocess
        ("subprocess.CalledProcessError: Command '['/usr/bin/python', 'train.py']' returned "
         "non-zero exit status 1.", "code.external_tool"),
        ("subprocess.CalledProcessError: Command '['wget', '-q', 'https://example.com/a.zip']' "
         "returned non-zero exit status 4.", "code.external_tool"),
        # a download verified, a token accepted
        ("Using downloaded and verified file: ./data/cifar-10-python.tar.gz",
         "net.download_checksum"),
        ("Token is valid (permission: read).", "net.hub_gated"),
        # a request that succeeded; EGL's loader and Mesa's warning on a node that renders fine
        ("wandb: ERROR Error while calling W&B API: anaconda 400 error: {\"code\":400,"
         "\"message\":\"TypeError: bad operand type for unary -: 'NoneType'\"} (<Response [500]>)",
         "net.http"),
        ("wandb: Waiting for W&B process to finish... (success).", "net.retrying"),
        ("20221220_030409|DBG|OpenGL.platform.ctypesloader@65: Loaded libEGL.so => libEGL.so.1",
         "code.headless_render"),
        ("libEGL warning: DRI2: failed to create dri screen", "code.headless_render"),
        # libpng's warning on a PNG it reads anyway; .NET's array too big for its limits
        ("libpng warning: iCCP: known incorrect sRGB profile", "data.image"),
        ("System.OutOfMemoryException: Array dimensions exceeded supported range.",
         "host.memory_error"),
        # the OpenAI client on a request the server refused (the request's fault, a 4xx); a
        # status line that goes on to other words; pydantic's migration guide in a deprecation
        # warning
        ("openai.BadRequestError: Error code: 400 - {'error': {'message': 'max_tokens is too "
         "large'}}", "net.http"),
        ("Error code: 500 documented in the table below", "net.http"),
        ("PydanticDeprecatedSince20: Support for class-based `config` is deprecated, use "
         "ConfigDict instead. See Pydantic V2 Migration Guide at https://errors.pydantic.dev/2.5/"
         "migration/", "code.cli_config"),
        # Docker's setting, not a kill
        ("    \"OOMKillDisable\": false,", "host.oom_killer"),
        # CUDA's device linker (the tool nvlink) failing a build, not the NVLink interconnect
        ("nvlink error   : Undefined reference to '_Z6kernelPf' in 'build/main.o'",
         "gpu.nvlink"),
        ("RuntimeError: nvlink exited with non-zero error code 255", "gpu.nvlink"),
        # a check that reports none, a NaN column's header, a NaN batch skipped and gone past, a
        # check switched off; a callback's error, no launcher's
        ("No NaN at step 1558", "numerical.nan"),
        ("nan at step column", "numerical.nan"),
        ("NaN at step 12, skipping this batch", "numerical.nan"),
        ("WARN: skipping non-finite checks at step 3", "numerical.nan"),
        ("Error occurred when executing the callback on_step_end", "launcher.child_failed"),
        # a program's own message in Polish that means "wrong instruction", not the shell's; a
        # worker's other signal
        ('                System.out.println("Błędna instrukcja");', "segfault.sigill"),
        ("Błędna instrukcja: x = ", "segfault.sigill"),
        ("The exit codes of the workers are {SIGSEGV(-11)}", "host.sigkill"),
        # Triton's out-of-resource is no CUDA OOM, on one line or its kernel's name alone; a
        # max-autotune log of a config it skipped; a clean exit; gdb's frames of a waiting process
        ("OutOfMemoryError: out of resource: triton_per_fused_add_div_expand_mul_pow_slice_7",
         "cuda.oom"),
        ("No valid triton configs. OutOfMemoryError: out of resource: triton_tem_fused_0",
         "code.gpu_arch"),
        ("Process finished with exit code 0", "segfault.sigill"),
        ("#0  0x00007f35e93926c2 in __GI___waitpid (pid=78009, stat_loc=0x0, options=0) at "
         "../sysdeps/unix/sysv/linux/waitpid.c:30", "segfault.native_backtrace"),
    ],
)  # fmt: skip
def test_words_a_healthy_run_prints_are_not_these_failures(
    kb: Knowledge, line: str, not_rule: str
) -> None:
    hit = kb.match(anatomy(line).body)
    assert hit is None or hit[0].id != not_rule


_RAY_GUESSES = (
    "Some common causes include: (1) the process was killed by the OOM killer due to high "
    "memory usage, (2) ray stop --force was called, or (3) the worker crashed unexpectedly due "
    "to SIGSEGV or another unexpected error."
)


@pytest.mark.parametrize(
    ("line", "rule_id"),
    [
        # Ray's list of guesses for a dead worker: not an OOM kill, nor a segfault (the third
        # guess names SIGSEGV)
        ("The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR "
         "Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of "
         f"file. {_RAY_GUESSES}", "host.ray_worker_died"),
        ("ray.exceptions.WorkerCrashedError: The worker died unexpectedly while executing this "
         "task. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits "
         f"with a connection error code 2. End of file. {_RAY_GUESSES}", "host.ray_worker_died"),
        # the words that state it are still theirs
        ('The job has been killed by "OOM Killer", please check your job\'s memory usage.',
         "host.oom_killer"),
        ("Fatal Python error: Segmentation fault; SIGSEGV received", "segfault.segv"),
    ],
)  # fmt: skip
def test_rays_guesses_for_a_dead_worker_are_its_own_rule(
    kb: Knowledge, line: str, rule_id: str
) -> None:
    hit = kb.match(anatomy(line).body)
    assert hit is not None and hit[0].id == rule_id


def test_a_missing_attribute_that_a_library_warns_of_and_goes_on_is_no_bug(kb: Knowledge) -> None:
    # python.bug reads AttributeError's words without their class; not where the line itself
    # says the run goes on without the attribute
    for line in (
        "WARNING: 'Config' object has no attribute 'use_cache'; using the default",
        "Skipping callback: 'NoneType' object has no attribute 'log_dir'",
        "Could not save model card: 'NoneType' object has no attribute 'to_dict'",
        "2024-05-01 10:00:00 INFO  'Config' object has no attribute 'rope_scaling'",
    ):
        hit = kb.match(anatomy(line).body)
        assert hit is None or hit[0].id != "python.bug", line


def test_a_warning_or_retry_about_extensions_or_the_device_is_no_failure(kb: Knowledge) -> None:
    # code.op_build and cuda.driver_error read a class or a package's words alone: not where the
    # line says the run falls back or tries again
    for line, rule_id in (
        ("UserWarning: fused_adam requires C++/CUDA extensions, falling back to torch's",
         "code.op_build"),
        ("[W] caught AcceleratorError on device 0, retrying the step", "cuda.driver_error"),
    ):  # fmt: skip
        hit = kb.match(anatomy(line).body)
        assert hit is None or hit[0].id != rule_id, line


def test_an_xid_is_read_as_the_earlier_one_it_follows_or_as_hardware_when_unknown(
    kb: Knowledge,
) -> None:
    # a consequence that names the Xid it followed stands for that one; a cause keeps its own
    # code whatever the line says after it; a code the catalogue lacks is a hardware fault
    line = "NVRM: Xid (PCI:0000:3b:00): 45, pid=4182, Ch 00000001 caused by previous Xid 149"
    assert kb.xid_for(45, line).code == 149
    assert kb.xid_for(45, "NVRM: Xid (PCI:0000:3b:00): 45, pid=4182, Ch 00000001").code == 45
    assert kb.xid_for(79, "Xid 79, GPU has fallen off the bus; previous Xid 45").code == 79
    unknown = kb.xid_for(998, "NVRM: Xid (PCI:0000:3b:00): 998, new in this driver")
    assert unknown.code == 998 and unknown.category == Category.GPU_HARDWARE
    assert "not in babysit's catalogue" in unknown.explain
