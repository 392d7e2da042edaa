"""The engine's findings and the order it weighs them in: the same root cause whatever the order
of the files and of the lines in them."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from babysit.records import Category, Diagnosis
from babysit.triage.engine import Engine
from babysit.triage.knowledge import load_knowledge
from babysit.triage.standins import UNCLASSIFIED, worker_cut
from babysit.triage.tracebacks import EXC_LINE
from babysit.triage.verdict import diagnose

KB = load_knowledge()

# The kernel's word on the fault, in the shapes the collectors give it.
KERNEL_SYSLOG = [
    "Jan 12 03:04:05 gpu-17 kernel: NVRM: GPU at PCI:0000:3b:00: GPU-4f8a5c1e",
    "Jan 12 03:04:05 gpu-17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=12345, GPU has fallen "
    "off the bus.",
]
KERNEL_DMESG = ["[ 1843.439662] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."]
KERNEL_BARE = ["NVRM: Xid (PCI:0000:3b:00): 79, pid=12345, GPU has fallen off the bus."]
# What a rank sees of it: with glog timestamps, and without any.
RANK_GLOG = [
    "[rank3]:[E112 03:04:07.123456 ProcessGroupNCCL.cpp:1316] [PG 0 Rank 3] Process group "
    "watchdog thread terminated with exception: CUDA error: unspecified launch failure",
]
RANK_PLAIN = [
    "[rank3]: Traceback (most recent call last):",
    '[rank3]:   File "/app/train.py", line 88, in train_step',
    "[rank3]:     loss.backward()",
    "[rank3]: RuntimeError: CUDA error: unspecified launch failure",
]


def _triage(*files: list[str]) -> Diagnosis:
    engine = Engine(KB)
    for index, lines in enumerate(files):
        for n, text in enumerate(lines, 1):
            engine.feed(index, n, text)
    engine.finish()
    names = [f"log{i}" for i in range(len(files))]
    return diagnose(engine, names, sum(len(f) for f in files))


def _is_xid79(d: Diagnosis) -> bool:
    return d.category == Category.GPU_HARDWARE and d.rule == "gpu.xid.79"


KERNELS = {"syslog": KERNEL_SYSLOG, "dmesg": KERNEL_DMESG, "bare": KERNEL_BARE}
RANKS = {"glog": RANK_GLOG, "plain": RANK_PLAIN, "both": RANK_GLOG + RANK_PLAIN}


@pytest.mark.parametrize(("kernel", "rank"), list(itertools.product(KERNELS, RANKS)))
def test_xid_is_the_root_cause_whichever_file_comes_first(kernel: str, rank: str) -> None:
    k, r = KERNELS[kernel], RANKS[rank]
    first, second = _triage(k, r), _triage(r, k)
    assert _is_xid79(first), first.summary
    assert _is_xid79(second), second.summary
    assert first.suspect == second.suspect


@pytest.mark.parametrize(("kernel", "rank"), list(itertools.product(KERNELS, RANKS)))
def test_xid_is_the_root_cause_in_one_file_in_either_order(kernel: str, rank: str) -> None:
    k, r = KERNELS[kernel], RANKS[rank]
    assert _is_xid79(_triage(k + r))
    assert _is_xid79(_triage(r + k))


def test_the_cuda_error_follows_the_xid_as_a_consequence() -> None:
    d = _triage(RANK_GLOG, KERNEL_SYSLOG)
    # A kernel that crashed (a launch failure) is not hardware by itself; the Xid says it is.
    assert d.category == Category.GPU_HARDWARE
    assert [c.category for c in d.consequences] == [Category.CUDA_ERROR_OTHER]
    assert "unspecified launch failure" in d.consequences[0].first.text


def test_a_process_quoting_a_cuda_error_alone_is_still_named() -> None:
    # Without the kernel's word, the rank's error is the root cause (nothing to defer to).
    d = _triage(RANK_PLAIN)
    assert d.rule == "cuda.launch_failure"
    assert d.suspect.rank == 3


def test_a_kernel_line_that_is_no_hardware_fault_does_not_jump_the_queue() -> None:
    # An application's illegal access is still the cause of the Xid 13 the driver logs for it:
    # only hardware faults (and the OOM killer) seen by the kernel come first.
    rank = ["[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered"]
    kernel = ["Jan 12 03:04:09 gpu-17 kernel: NVRM: Xid (PCI:0000:3b:00): 13, Graphics Exception"]
    assert _triage(rank, kernel).rule == _triage(kernel, rank).rule == "cuda.illegal_access"


# -- the real error, not its wrapper --------------------------------------------------------------

_TORCH = "/usr/local/lib/python3.10/site-packages/torch"
DATALOADER_OUTER = [
    "Traceback (most recent call last):",
    '  File "/app/train.py", line 98, in main',
    "    for batch in loader:",
    f'  File "{_TORCH}/utils/data/dataloader.py", line 1371, in _process_data',
    "    data.reraise()",
    f'  File "{_TORCH}/_utils.py", line 694, in reraise',
    "    raise exception",
]
WORKER_HEAD = [
    "KeyError: Caught KeyError in DataLoader worker process 3.",
    "Original Traceback (most recent call last):",
    f'  File "{_TORCH}/utils/data/_utils/worker.py", line 308, in _worker_loop',
    "    data = fetcher.fetch(index)",
    f'  File "{_TORCH}/utils/data/_utils/fetch.py", line 51, in fetch',
    "    data = [self.dataset[idx] for idx in possibly_batched_index]",
]
IN_DATASET = [
    '  File "/app/dataset.py", line 40, in __getitem__',
    '    label = row["label"]',
    "KeyError: 'label'",
]


@pytest.mark.parametrize("outer", [True, False], ids=["with-outer-traceback", "worker-only"])
def test_a_dataloader_workers_error_in_the_dataset_is_data(outer: bool) -> None:
    d = _triage((DATALOADER_OUTER if outer else []) + WORKER_HEAD + IN_DATASET)
    assert (d.category, d.transient, d.suspect.kind) == (Category.DATA, False, "data")
    assert d.rule == "data.worker_exception"
    assert "dataset.py:40 in __getitem__" in d.summary
    assert "KeyError: 'label'" in d.summary
    assert not d.consequences  # the wrapper is not a second finding


def test_a_name_or_attribute_the_dataset_code_lacks_is_the_codes_not_a_samples() -> None:
    # An object of the code's own without the attribute it asks for (a config, the dataset
    # itself) is a slip of the code, wherever it was raised; a None's missing attribute is a
    # sample that failed to load (cv2.imread's None), the sample's.
    head = ["AttributeError: Caught AttributeError in DataLoader worker process 0."]
    head += WORKER_HEAD[1:]
    frame = ['  File "/app/refcoco_data.py", line 243, in __getitem__']
    frame += ["    if self.args.vis_pointer:"]
    d = _triage(head + frame + ["AttributeError: 'Config' object has no attribute 'vis_pointer'"])
    assert (d.category, d.rule) == (Category.USER_CODE, "python.bug")
    d = _triage(head + frame + ["NameError: name 'np' is not defined"])
    assert d.category is Category.USER_CODE
    d = _triage(head + frame + ["AttributeError: 'NoneType' object has no attribute 'shape'"])
    assert (d.category, d.rule) == (Category.DATA, "data.worker_exception")
    # pandas' NaN in a text column: a float where the sample holds a string
    d = _triage(head + frame + ["AttributeError: 'float' object has no attribute 'lower'"])
    assert (d.category, d.rule) == (Category.DATA, "data.worker_exception")


def test_a_division_by_a_datasets_length_is_an_empty_dataset() -> None:
    tb = ["Traceback (most recent call last):", '  File "/app/train.py", line 104, in train']
    zero = "ZeroDivisionError: integer division or modulo by zero"
    for code, rule in (
        ("    for x in tqdm(self.dataset, desc=f'Epoch {self.step // len(self.dataset)}'):",
         "data.empty_divisor"),
        ("    n = math.ceil(float(world_size) / float(len(val_files)))", "data.empty_divisor"),
        ("    loss_total / len(self.valid_dataloader), epoch)", "data.empty_divisor"),
        ("    steps = total / (len(train_data) * batch_size)", "data.empty_divisor"),
        # a length of something else: the code's
        ("    return sum(norms) / len(norms)", "python.bug"),
        ("    ratio = hits / len(metadata)", "python.bug"),
    ):  # fmt: skip
        assert _triage([*tb, code, zero]).rule == rule, code
    # the innermost frame's code divides: not a caller's that did so before
    outer = ['    avg = run(loss / len(loader))', '  File "/app/util.py", line 7, in run',
             "    return x / count"]  # fmt: skip
    assert _triage([*tb, *outer, zero]).rule == "python.bug"
    # raised by a DataLoader worker's dataset code, a modulo by its length: the same
    worker = ["ZeroDivisionError: Caught ZeroDivisionError in DataLoader worker process 0."]
    worker += WORKER_HEAD[1:]
    worker += ['  File "/app/dataset.py", line 30, in __getitem__',
               "    f = self.files[idx % len(self.files)]"]
    assert _triage([*worker, zero]).rule == "data.empty_divisor"


def test_a_missing_folder_the_run_was_writing_into_is_its_outputs_not_the_datasets() -> None:
    tb = ["Traceback (most recent call last):", '  File "/app/train.py", line 80, in train']
    missing = "FileNotFoundError: [Errno 2] No such file or directory: 'samples/images/0001.png'"
    saved = ['    save_image(fake, "samples/images/%04d.png" % i)',
             '  File "/venv/PIL/Image.py", line 2428, in save',
             '    fp = builtins.open(filename, "w+b")']  # fmt: skip
    d = _triage([*tb, *saved, missing])
    assert (d.category, d.rule) == (Category.USER_CODE, "code.output_dir_missing")
    opened = ['    with open(f"samples/images/{i:04d}.png", "wb") as f:']
    assert _triage([*tb, *opened, missing]).rule == "code.output_dir_missing"
    # read: the dataset's
    read = ['    img = Image.open(self.paths[i])',
            '  File "/venv/PIL/Image.py", line 3092, in open',
            '    fp = builtins.open(filename, "rb")']  # fmt: skip
    d = _triage([*tb, *read, missing])
    assert (d.category, d.rule) == (Category.DATA, "data.missing_file")


def test_a_workers_quoted_traceback_whose_wrapper_line_was_cut_is_the_workers() -> None:
    # The excerpt starts at torch's `Original Traceback`: the worker's loop among its frames
    # says whose it is, as the lost `Caught ... in DataLoader worker` line would have.
    d = _triage(WORKER_HEAD[1:] + IN_DATASET)
    assert (d.category, d.rule) == (Category.DATA, "data.worker_exception")
    # not DataParallel's replica, which torch quotes the same way
    replica = [
        "Original Traceback (most recent call last):",
        f'  File "{_TORCH}/nn/parallel/parallel_apply.py", line 83, in _worker',
        "    output = module(*input, **kwargs)",
        '  File "/app/model.py", line 40, in forward',
        '    x = self.table["label"]',
        "KeyError: 'label'",
    ]
    assert _triage(replica).category != Category.DATA


def test_torch_before_1_0_reraising_a_workers_traceback_is_the_workers_error() -> None:
    # torch 0.4 raised the worker's error again as `RuntimeError: Traceback (most recent call
    # last):` with the worker's frames after it: that line is the wrapper, not an error raised
    # in the data loader (which would read as a bad sample)
    old = [
        "Traceback (most recent call last):",
        '  File "/app/train.py", line 136, in train',
        "    for i, (input, target) in enumerate(train_loader):",
        f'  File "{_TORCH}/utils/data/dataloader.py", line 286, in __next__',
        "    return self._process_next_batch(batch)",
        f'  File "{_TORCH}/utils/data/dataloader.py", line 307, in _process_next_batch',
        "    raise batch.exc_type(batch.exc_msg)",
        "RuntimeError: Traceback (most recent call last):",
        f'  File "{_TORCH}/utils/data/dataloader.py", line 57, in _worker_loop',
        "    samples = collate_fn([dataset[i] for i in batch_indices])",
        f'  File "{_TORCH}/storage.py", line 122, in _new_shared',
        "    return cls._new_using_fd(size)",
        "RuntimeError: unable to write to file </torch_1509_1969058146>",
    ]
    d = _triage(old)
    assert (d.category, d.rule) == (Category.FILESYSTEM_IO, "fs.shm_full")
    # its worker's own error in the dataset's code is the sample's, as with torch's later words
    d = _triage([*old[:10], *IN_DATASET])
    assert (d.category, d.rule) == (Category.DATA, "data.worker_exception")
    assert "KeyError: 'label'" in d.summary
    # and the worker's traceback cut off: the wrapper stands for it, as torch's later words do
    d = _triage(old[:10])
    assert (d.category, d.rule) == (Category.DATA, "data.reader_exception")


def test_a_file_a_worker_did_not_find_its_own_error_cut_is_the_samples_not_the_configs() -> None:
    # The wrapper names no path (the worker's own error did, cut from the log): a worker reads
    # samples, not the run's config or checkpoint. torch before 1.0, and its later words.
    old = [
        "Traceback (most recent call last):",
        '  File "train.py", line 185, in main',
        "    for i_iter, (images, labels) in enumerate(trainloader):",
        f'  File "{_TORCH}/utils/data/dataloader.py", line 608, in _process_next_batch',
        "    raise batch.exc_type(batch.exc_msg)",
        "FileNotFoundError: Traceback (most recent call last):",
        f'  File "{_TORCH}/utils/data/_utils/worker.py", line 99, in _worker_loop',
        "    samples = collate_fn([dataset[i] for i in batch_indices])",
    ]
    d = _triage(old)
    assert (d.category, d.rule) == (Category.DATA, "data.worker_missing_file")
    new = ["FileNotFoundError: Caught FileNotFoundError in DataLoader worker process 0.",
           *WORKER_HEAD[1:3]]  # fmt: skip
    assert _triage(new).rule == "data.worker_missing_file"
    # a file the run's own code did not find stays the run's; so does a worker's refused
    # permission (a cache or /dev/shm as often as a sample)
    main = [*old[:3], "FileNotFoundError: [Errno 2] No such file or directory: 'configs/a.yaml'"]
    assert _triage(main).rule == "python.config_path"
    denied = ["PermissionError: Caught PermissionError in DataLoader worker process 0.",
              *WORKER_HEAD[1:3]]  # fmt: skip
    assert _triage(denied).rule == "python.config_path"
    # the wrapper quoted by a harness's summary of its ranks' errors, its worker's traceback
    # cut (milabench's `* 1 x [rank0]: ...`): the wrapper's own words name the type
    summary = ["  * 3 exceptions found",
               "    * 1 x [rank0]: FileNotFoundError: Caught FileNotFoundError in DataLoader "
               "worker process 2."]  # fmt: skip
    assert _triage(summary).rule == "data.worker_missing_file"


def test_a_cut_workers_wrapper_stands_for_its_error_by_kind() -> None:
    # worker_cut alone: a generic exception is the sample's, or the request's when the worker's
    # last frames were a network client's; a file not found is a dataset's; a known rule stays
    config_path = next(r for r in load_knowledge().rules if r.id == "python.config_path")
    for rule, exc_type, request, want in (
        (UNCLASSIFIED, "KeyError", False, "data.worker_exception"),
        (UNCLASSIFIED, "KeyError", True, "net.cut_request"),
        (config_path, "FileNotFoundError", False, "data.worker_missing_file"),
        (config_path, "NotADirectoryError", False, "data.worker_missing_file"),
        (config_path, "PermissionError", False, "python.config_path"),
    ):  # fmt: skip
        assert worker_cut(rule, exc_type, request=request).id == want


def test_an_error_raised_while_a_dataset_module_is_imported_is_no_bad_sample() -> None:
    # mmdet's datasets/builder.py raising its open-file limit at import: the set-up's, not a
    # sample's, though the module is a dataset's
    d = _triage([
        "Traceback (most recent call last):",
        '  File "tools/train.py", line 18, in <module>',
        "    from mmdet.apis import init_random_seed, set_random_seed, train_detector",
        '  File "/app/mmdet/datasets/__init__.py", line 2, in <module>',
        "    from .builder import DATASETS, PIPELINES, build_dataloader, build_dataset",
        '  File "/app/mmdet/datasets/builder.py", line 26, in <module>',
        "    resource.setrlimit(resource.RLIMIT_NOFILE, (soft_limit, hard_limit))",
        "ValueError: not allowed to raise maximum limit",
    ])
    assert d.category == Category.USER_CODE, d.rule


# runpy running a script (`python -m app.train`), and VS Code's debugger doing so through its own
# `<module>`: neither's `<module>` frame is an import (no import line above it).
_RUNPY = [
    '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main',
    "    return _run_code(code, main_globals, None,",
    '  File "/usr/lib/python3.10/runpy.py", line 86, in _run_code',
    "    exec(code, run_globals)",
]
_DEBUGPY = [
    '  File "/home/u/.vscode/debugpy/__main__.py", line 39, in <module>',
    "    cli.main()",
    '  File "/home/u/.vscode/debugpy/server/cli.py", line 284, in run_file',
    '    runpy.run_path(target, run_name="__main__")',
    '  File "/usr/lib/python3.10/runpy.py", line 289, in run_path',
    "    return _run_module_code(code, init_globals, run_name,",
    '  File "/usr/lib/python3.10/runpy.py", line 86, in _run_code',
    "    exec(code, run_globals)",
]


@pytest.mark.parametrize("runner", [_RUNPY, _RUNPY + _DEBUGPY], ids=["python-m", "debugger"])
def test_a_script_fetching_a_bad_sample_is_the_samples_whoever_ran_it(runner: list[str]) -> None:
    d = _triage([
        "Traceback (most recent call last):",
        *runner,
        '  File "/app/train.py", line 40, in <module>',
        "    for batch in loader:",
        f'  File "{_TORCH}/utils/data/dataloader.py", line 677, in _next_data',
        "    data = self._dataset_fetcher.fetch(index)",
        f'  File "{_TORCH}/utils/data/_utils/fetch.py", line 51, in fetch',
        "    data = [self.dataset[idx] for idx in possibly_batched_index]",
        '  File "/app/records.py", line 40, in __getitem__',
        '    label = row["label"]',
        "KeyError: 'label'",
    ])  # fmt: skip
    assert d.category == Category.DATA, d.rule


def test_a_function_a_dataset_module_calls_as_it_is_imported_is_the_set_ups() -> None:
    d = _triage([
        'Traceback (most recent call last):',
        '  File "tools/train.py", line 18, in <module>',
        '    from mmdet.apis import train_detector',
        '  File "/app/mmdet/datasets/__init__.py", line 2, in <module>',
        '    from .builder import DATASETS',
        '  File "/app/mmdet/datasets/builder.py", line 26, in <module>',
        '    _set_limits()',
        '  File "/app/mmdet/datasets/builder.py", line 20, in _set_limits',
        '    resource.setrlimit(resource.RLIMIT_NOFILE, (soft_limit, hard_limit))',
        'ValueError: not allowed to raise maximum limit',
    ])
    assert d.category == Category.USER_CODE, d.rule


def test_any_other_exception_carrying_a_traceback_is_not_a_dataloader_workers() -> None:
    # a pool helper's `raise RuntimeError(traceback.format_exc())`: only torch's own re-raise
    # (its `_process_next_batch`) quotes a DataLoader worker
    d = _triage([
        'Traceback (most recent call last):',
        '  File "/app/run.py", line 50, in <module>',
        '    results = pool.map(work, items)',
        '  File "/app/utils.py", line 12, in wrapper',
        '    raise RuntimeError(traceback.format_exc())',
        'RuntimeError: Traceback (most recent call last):',
        '  File "/app/utils.py", line 9, in wrapper',
        '    return f(*args)',
        '  File "/app/model.py", line 30, in build',
        '    x = int(s)',
        "ValueError: invalid literal for int() with base 10: 'abc'",
    ])
    assert d.category != Category.DATA, d.rule


def test_the_same_error_per_rank_is_data_on_every_rank() -> None:
    lines = [f"[rank{r}]:{x}" for r in (0, 1) for x in WORKER_HEAD + IN_DATASET]
    d = _triage(lines)
    assert d.category == Category.DATA
    assert d.rule == "data.worker_exception"


def test_a_workers_specific_error_keeps_its_rule() -> None:
    inner = [
        '  File "/app/dataset.py", line 40, in __getitem__',
        "    img = Image.open(path).convert('RGB')",
        "OSError: image file is truncated (43 bytes not processed)",
    ]
    wrapper = "OSError: Caught OSError in DataLoader worker process 0."
    d = _triage([*DATALOADER_OUTER, wrapper, *WORKER_HEAD[1:], *inner])
    assert d.category == Category.DATA
    assert d.rule != "data.worker_exception"
    assert "image file is truncated" in d.summary


def test_a_worker_error_in_library_code_only_is_not_called_data() -> None:
    # No frame of the dataset's own: torch's default_collate failing is not known to be a sample.
    inner = [
        f'  File "{_TORCH}/utils/data/_utils/collate.py", line 84, in default_collate',
        "    return [default_collate(samples) for samples in transposed]",
        "KeyError: 'label'",
    ]
    d = _triage(WORKER_HEAD + inner)
    assert d.rule == "python.bug"
    assert "KeyError: 'label'" in d.summary
    assert "Caught KeyError" not in d.summary


def test_a_wrapper_whose_worker_traceback_was_cut_is_still_named() -> None:
    # The worker's own traceback cut from the log: the generic exception it caught was raised
    # while a sample was read or prepared (data, with less confidence than a whole one).
    d = _triage(DATALOADER_OUTER + WORKER_HEAD[:1])
    assert d.rule == "data.worker_exception" and d.category.value == "data"
    assert d.confidence <= 0.5
    assert "Caught KeyError in DataLoader worker process 3" in d.summary
    # The wrapper's own line cut too (a capped line, a paste): torch's words still name it.
    cut = [*DATALOADER_OUTER, "AssertionError: Caught AssertionError in DataLoader worker proces"]
    assert _triage(cut).rule == "data.worker_exception"


def test_a_wrapper_whose_worker_was_cut_inside_a_request_is_the_request() -> None:
    # A dataset streamed from a hub or a bucket: the worker's traceback cut in the HTTP client.
    site = "/usr/lib/python3.10/site-packages"
    worker = [
        "ConnectionError: Caught ConnectionError in DataLoader worker process 8.",
        *WORKER_HEAD[1:],
        '  File "/app/dataset.py", line 12, in __iter__',
        "    for row in self.stream:",
        f'  File "{site}/aiohttp/connector.py", line 874, in _resolve_host',
        "    addrs = await self._resolver.resolve(host, port, family=self._family)",
    ]
    d = _triage(DATALOADER_OUTER + worker)
    assert (d.rule, d.category) == ("net.cut_request", Category.NETWORK)
    # the same wrapper over a worker cut in the dataset's own code stays a sample's
    local = [*worker[:-2], '  File "/app/dataset.py", line 30, in decode', "    x = parse(row)"]
    assert _triage(DATALOADER_OUTER + local).rule == "data.worker_exception"


def test_a_data_loaders_timeout_outranks_the_collective_timeouts_it_causes() -> None:
    log = [
        "[rank0]:RuntimeError: DataLoader timed out after 300 seconds",
        "[rank1]:[E ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600123 milliseconds before timing out.",
    ]
    assert _triage(log).rule == "hang.data_loader"


def test_torchrun_root_cause_block_names_the_workers_error() -> None:
    log = [
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        "============================================================",
        "train.py FAILED",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2025-01-12_03:04:07",
        "  host      : node-1",
        "  rank      : 1 (local_rank: 1)",
        "  exitcode  : 1 (pid: 4243)",
        "  traceback : Traceback (most recent call last):",
        f'    File "{_TORCH}/distributed/elastic/multiprocessing/errors/__init__.py", line 355, '
        "in wrapper",
        "      return f(*args, **kwargs)",
        '    File "/app/train.py", line 30, in main',
        '      row = table["label"]',
        "  KeyError: 'label'",
        "============================================================",
    ]
    d = _triage(log)
    assert d.rule == "python.bug"
    assert (d.suspect.rank, d.suspect.host) == (1, "node-1")
    assert "KeyError: 'label'" in d.summary


def test_accelerate_and_deepspeed_launchers_defer_to_the_workers_error() -> None:
    worker = [
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/app/train.py", line 30, in main',
        "[rank0]:     loss = model(**batch)",
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
    ]
    accelerate = [
        "subprocess.CalledProcessError: Command '['/usr/bin/python', 'train.py']' returned "
        "non-zero exit status 1.",
    ]
    deepspeed = [
        "[2025-01-12 03:04:08,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/"
        "python', '-u', 'train.py'] exits with return code = 1"
    ]
    for launcher in (accelerate, deepspeed):
        assert _triage(worker + launcher).category == Category.CUDA_OOM
        assert _triage(launcher, worker).category == Category.CUDA_OOM


# -- the silent rank of a collective timeout -----------------------------------------------------


def _watchdog(rank: int, prefix: bool = True) -> str:
    line = (
        "[E1206 18:44:12.715298 ProcessGroupNCCL.cpp:607] [PG ID 0 PG GUID 0(default_pg) "
        f"Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 "
        "milliseconds before timing out."
    )
    return f"[rank{rank}]:{line}" if prefix else line


INIT_OPTIONS = (
    "[rank0]:[I1206 18:30:00.000000 ProcessGroupNCCL.cpp:900] [PG ID 0 PG GUID 0(default_pg) "
    "Rank 0] ProcessGroupNCCL initialization options: size: 8, global rank: 0, TIMEOUT(ms): "
    "600000, USE_HIGH_PRIORITY_STREAM: 0"
)


def test_the_highest_rank_silent_is_named_from_the_stated_world_size() -> None:
    # Ranks 0-6 time out; rank 7 never printed a line: only the world size says it exists.
    d = _triage([INIT_OPTIONS] + [_watchdog(r) for r in range(7)])
    assert d.category == Category.NCCL_TIMEOUT
    assert d.suspect.rank == 7
    assert "7 of 8 ranks timed out" in d.summary


def test_without_a_stated_world_size_a_silent_top_rank_is_not_guessed() -> None:
    d = _triage([_watchdog(r) for r in range(7)])
    assert d.suspect.rank is None


def test_the_silent_rank_of_interleaved_output_without_launcher_prefixes() -> None:
    # c10d's `[PG ID 0 PG GUID 0(default_pg) Rank N]` is the only rank label on these lines.
    d = _triage([_watchdog(r, prefix=False) for r in range(8) if r != 5])
    assert d.suspect.rank == 5
    assert "rank(s) 5 never reported" in d.summary


def test_the_silent_rank_from_per_rank_files() -> None:
    files = [[INIT_OPTIONS.replace("[rank0]:", f"[rank{r}]:"), _watchdog(r)] for r in range(8)]
    del files[2][1]  # rank 2 set up, then never reported the timeout
    d = _triage(*files)
    assert d.suspect.rank == 2


@pytest.mark.parametrize(
    ("line", "size"),
    [
        (INIT_OPTIONS, 8),
        ("[rank0]: world_size=16, rank=0, local_rank=0", 16),
        ("'world_size': 32, 'rank': 0", 32),
        ("node-1:123:456 [0] NCCL INFO comm 0x55d3c5a0 rank 3 nranks 64 cudaDev 3 busId 1a000", 64),
        ("Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4", 4),
    ],
)
def test_the_world_size_the_log_states(line: str, size: int) -> None:
    engine = Engine(KB)
    engine.feed(0, 1, line)
    assert engine.collectives.world_size == size
    assert max(engine.collectives.ranks_seen) == size - 1


@pytest.mark.parametrize(
    ("innermost", "rule"),
    [
        ("/usr/lib/python3/site-packages/webdataset/tariterators.py", "data.reader_exception"),
        ("/usr/lib/python3/site-packages/datasets/arrow_dataset.py", "data.reader_exception"),
        ("/work/project/my_dataset.py", "data.reader_exception"),
        ("/work/GPT-SoVITS/module/data_utils.py", "data.reader_exception"),
        ("/work/project/utils/metadata_utils.py", "python.bug"),
        ("/venv/site-packages/keras/utils/data_utils.py", "python.bug"),  # Keras' downloads
        ("/opt/conda/site-packages/paddlerec/core/reader.py", "data.reader_exception"),
        ("/work/project/utils/config_reader.py", "python.bug"),
        ("/venv/site-packages/tensorflow/python/training/py_checkpoint_reader.py", "python.bug"),
        ("/venv/site-packages/tensorboard/backend/event_processing/event_file_reader.py",
         "python.bug"),
        ("/usr/lib/python3.11/importlib/readers.py", "python.bug"),
        ("/work/project/data/jsonl_reader.py", "data.reader_exception"),
        ("/work/project/train.py", "python.bug"),
        ("/usr/lib/python3/site-packages/torch/utils/data/dataloader.py", "python.bug"),
    ],
)
def test_a_generic_error_raised_where_samples_are_read_is_about_the_data(
    innermost: str, rule: str
) -> None:
    d = _triage(
        [
            "Traceback (most recent call last):",
            '  File "/work/project/train.py", line 10, in <module>',
            "    for batch in loader:",
            f'  File "{innermost}", line 172, in group_by_keys',
            "    raise ValueError(f'{key}: duplicate file name in tar file')",
            "ValueError: 000020003.jpg: duplicate file name in tar file jpg",
        ]
    )
    assert d.rule == rule
    assert (d.category == Category.DATA) is (rule == "data.reader_exception")


_FETCH = '  File "/venv/site-packages/torch/utils/data/_utils/fetch.py", line 54, in fetch'
_ENVIRON = '  File "/usr/lib/python3.10/os.py", line 680, in __getitem__'


@pytest.mark.parametrize(
    ("chain", "error", "rule"),
    [
        # raised below the DataLoader's fetch, in the run's own collate function
        ([_FETCH, '  File "/work/utils.py", line 9, in __call__'], "KeyError: 'prompt'", "data"),
        # in the run's own dataset's __getitem__, outside any DataLoader
        (['  File "/work/lora.py", line 128, in __getitem__'], "KeyError: 'text'", "data"),
        # an environment variable, read with os.environ[...]: the set-up's, not a sample's
        ([_ENVIRON], "KeyError: 'LOCAL_RANK'", "user_code"),
        (['  File "<frozen os>", line 679, in __getitem__'], "KeyError: 'RANK'", "user_code"),
        # a module of the run's own whose name ends like os.py's is no os.environ
        (['  File "/work/videos.py", line 40, in __getitem__'], "KeyError: 'frames'", "data"),
        # a lookup while a dataset is being built (a replay buffer's key): the set-up's
        (
            ['  File "/work/dataset.py", line 115, in __init__',
             '  File "/work/replay_buffer.py", line 416, in __getitem__'],
            "KeyError: 'marks'",
            "user_code",
        ),
        # the names and types of the code are the code's, even in a fetch
        ([_FETCH, '  File "/work/ds.py", line 3, in __getitem__'], "NameError: x", "user_code"),
        # a DataLoader built in the dataset module refusing its sampler: the set-up's, no sample
        # was read
        (
            ['  File "/work/datasets/load_dataset.py", line 78, in load_dataset',
             '  File "/env/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 219, '
             "in __init__",
             '  File "/env/lib/python3.6/site-packages/torch/utils/data/sampler.py", line 186, in '
             "__init__"],
            "ValueError: sampler should be an instance of torch.utils.data.Sampler, but got "
            "sampler=<utils.sampler.SubsetSequentialSampler object at 0x7f0e192affd0>",
            "user_code",
        ),
        # (DistributedSampler's check of its rank, in distributed.py, the same)
        (
            ['  File "/work/data/build_dataset.py", line 12, in build_loader',
             '  File "/env/lib/python3.10/site-packages/torch/utils/data/distributed.py", line 75, '
             "in __init__"],
            "ValueError: Invalid rank 8, rank should be in the interval [0, 7]",
            "user_code",
        ),
        # (while the same module reading a sample is the data's)
        (
            ['  File "/work/datasets/load_dataset.py", line 40, in load_item'],
            "ValueError: could not convert string to float: 'n/a'",
            "data",
        ),
    ],
)  # fmt: skip
def test_a_value_error_raised_while_a_batch_is_fetched_is_about_the_data(
    chain: list[str], error: str, rule: str
) -> None:
    d = _triage(
        [
            "Traceback (most recent call last):",
            '  File "/work/train.py", line 10, in <module>',
            "    for batch in loader:",
            *(line for frame in chain for line in (frame, "    x = y")),
            error,
        ]
    )
    assert d.category.value == rule


def test_a_debugger_on_a_live_process_is_a_hang_and_on_a_core_file_the_crash() -> None:
    frames = [
        "#0  0x00007f1 in ncclProxyService () from /usr/lib/libnccl.so.2",
        "#1  0x00007f2 in start_thread () from /lib64/libpthread.so.0",
    ]
    live = _triage(["Attaching to process 41822", "(gdb) bt", *frames])
    assert live.category is Category.HANG and live.rule == "hang.debugger"
    core = _triage(
        [
            "Core was generated by `python train.py`.",
            "Program terminated with signal SIGSEGV, Segmentation fault.",
            "(gdb) bt",
            *frames,
        ]
    )
    assert core.category is Category.SEGFAULT


def test_an_interrupted_run_is_a_hang_only_when_it_shows_no_error_of_its_own() -> None:
    quiet = _triage(["step 100 loss 2.3", "^C"])
    assert quiet.category is Category.HANG and quiet.transient is None
    loud = _triage(
        [
            "^CTraceback (most recent call last):",
            '  File "train.py", line 3, in <module>',
            "    loss.backward()",
            "RuntimeError: CUDA error: an illegal memory access was encountered",
        ]
    )
    assert loud.category is Category.CUDA_ERROR_OTHER


def test_a_ray_actor_whose_constructor_raised_is_its_code_unless_the_error_says_more() -> None:
    head = (
        "ray.exceptions.ActorDiedError: The actor died because of an error raised in its "
        "creation task, ray::Worker.__init__() (pid=9, ip=10.0.0.1)"
    )
    alone = _triage([head])
    assert alone.category is Category.USER_CODE and alone.transient is False
    # under Ray's wrapper of the task that called the dead actor, the same; the wrapper alone is
    # an actor that died of nothing of its own that the log shows
    wrapper = "ray.exceptions.RayTaskError(ActorDiedError): ray::TaskRunner.run() (pid=7)"
    assert _triage([wrapper, head]).category is Category.USER_CODE
    assert _triage([wrapper]).category is Category.UNKNOWN
    oom = _triage(
        [
            head,
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has "
            "a total capacity of 79.15 GiB of which 1.02 GiB is free.",
        ]
    )
    assert oom.category is Category.CUDA_OOM


def test_the_rank_after_what_is_read_and_a_desync_there_is_not_transient() -> None:
    # c++'s `terminate called ... what():` lines name their rank only inside the message
    d = _triage(
        [
            "terminate called after throwing an instance of 'std::runtime_error'",
            "  what():  [Rank 2] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=696, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1802763 "
            "milliseconds before timing out.",
            "terminate called after throwing an instance of 'std::runtime_error'",
            "  what():  [Rank 3] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=696, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802485 "
            "milliseconds before timing out.",
        ]
    )
    assert d.category is Category.NCCL_TIMEOUT and d.transient is False


def test_an_exception_line_without_its_traceback_is_the_set_up_s_only_in_a_log_without_steps(
    tmp_path: Path,
) -> None:
    # With steps in the log, the line may be one the program printed and went on after: weak,
    # no promise either way. In a log that shows no step at all it is what the set-up raised.
    from babysit.triage import triage_files

    line = "CustomDatasetError: sample 1234 has no caption"
    handled = tmp_path / "handled.log"
    handled.write_text(f"{line}\nstep 1 loss 2.3000\nstep 2 loss 2.2000\n")
    d = triage_files([handled], KB).diagnosis
    assert d.category is Category.UNKNOWN and d.transient is None
    alone = tmp_path / "alone.log"
    alone.write_text(f"loading the model\n{line}\n")
    d = triage_files([alone], KB).diagnosis
    assert d.category is Category.USER_CODE and d.transient is False
    killed = tmp_path / "killed.log"
    killed.write_text(f"{line}\nstep 1 loss 2.3000\nKilled\n")
    assert triage_files([killed], KB).diagnosis.category is Category.HOST_OOM


def test_a_bare_exception_alone_on_its_line_is_an_exception_line(tmp_path: Path) -> None:
    # Python's plain `raise Exception("...")`, the log's excerpt starting at its line: weak, as
    # any exception line without its traceback; a logger's `Warning:` or `Error:` is not one
    from babysit.triage import triage_files

    alone = tmp_path / "alone.log"
    alone.write_text("loading the model\nException: URL fetch failure on https://x/w.h5: 403\n")
    d = triage_files([alone], KB).diagnosis
    assert (d.category, d.rule) == (Category.USER_CODE, "python.unclassified_line")
    assert "URL fetch failure" in d.summary
    handled = tmp_path / "handled.log"
    handled.write_text("Exception: sample 3 skipped\nstep 1 loss 2.3000\nstep 2 loss 2.2000\n")
    d = triage_files([handled], KB).diagnosis
    assert d.category is Category.UNKNOWN and d.transient is None
    warned = tmp_path / "warned.log"
    warned.write_text("loading the model\nWarning: tokenizer has no pad token\n")
    assert triage_files([warned], KB).diagnosis.rule is None
    # nor Python's other words that start so
    for other in (
        "Exception in thread Thread-1:",
        "Exception ignored in: <function f>",
        "Exceptions: 0",
    ):
        assert EXC_LINE.match(other) is None


def test_a_native_crash_handler_s_backtrace_is_the_story_only_without_its_signal() -> None:
    # UCX's handler prints the signal it caught, then the backtrace; the signal's line, when
    # the log has it, is the story; without it the backtrace still says the process crashed,
    # more than a Python traceback cut before its error
    backtrace = [
        "==== backtrace (tid:   8982) ====",
        " 0 0x0000000000014420 __funlockfile()  ???:0",
        " 2 0x000000000006929c ncclGroupEnd()  ???:0",
        "=================================",
    ]
    cut = [
        "Traceback (most recent call last):",
        '  File "/app/train.py", line 88, in train_step',
        "    trainer.fit(model)",
    ]
    d = _triage([*backtrace, *cut])
    assert (d.category, d.rule) == (Category.SEGFAULT, "segfault.native_backtrace")
    signal = "[node-3:8982:0:8990] Caught signal 7 (Bus error: nonexistent physical address)"
    assert _triage([signal, *backtrace, *cut]).rule == "segfault.bus"


def test_a_lone_exception_line_never_outweighs_a_real_one(tmp_path: Path) -> None:
    # A handled line early in the run, then a crash with its traceback: the crash is the story.
    from babysit.triage import triage_files

    log = tmp_path / "tie.log"
    log.write_text(
        "CaptionParseError: sample 7 has no caption, skipping\n"
        "step 1 loss: 2.31\nstep 2 loss: 2.20\n"
        "Traceback (most recent call last):\n"
        '  File "/home/u/proj/train.py", line 88, in <module>\n'
        "    main()\n"
        "RewardModelCrash: reward head produced shape (3, 7), expected (3,)\n"
    )
    d = triage_files([log], KB).diagnosis
    assert "RewardModelCrash" in d.summary


_DRIVER_CHECK = [
    "Traceback (most recent call last):",
    '  File "/home/u/proj/train.py", line 40, in <module>',
    "    model = model.to(device)",
    f'  File "{_TORCH}/cuda/__init__.py", line 63, in _check_driver',
    '    of the CUDA driver.""".format(str(torch._C._cuda_getDriverVersion())))',
    "AssertionError: ",
]


@pytest.mark.parametrize("rank", ["", "[rank0]: "])
def test_an_exception_whose_message_is_on_the_next_line_is_read_with_it(
    tmp_path: Path, rank: str
) -> None:
    # torch's driver check raises `AssertionError:` with its message on the lines after: the
    # message names the error, which the generic AssertionError (a bug in the code) does not
    from babysit.triage import triage_files

    log = tmp_path / "driver.log"
    message = [
        "The NVIDIA driver on your system is too old (found version 10020).",
        "Please update your GPU driver by downloading and installing a new",
    ]
    log.write_text("".join(f"{rank}{x}\n" for x in [*_DRIVER_CHECK, *message]))
    d = triage_files([log], KB).diagnosis
    assert (d.category, d.rule) == (Category.CUDA_ERROR_OTHER, "cuda.no_kernel_image")
    assert "AssertionError: The NVIDIA driver on your system is too old" in d.summary
    assert "train.py:40" in d.summary and not d.consequences  # one finding, not two


def test_an_empty_exception_whose_next_line_names_nothing_keeps_its_own_reading(
    tmp_path: Path,
) -> None:
    from babysit.triage import triage_files

    odd = tmp_path / "odd.log"
    odd.write_text("\n".join([*_DRIVER_CHECK, "max() arg is an empty sequence", ""]))
    d = triage_files([odd], KB).diagnosis
    assert (d.category, d.rule) == (Category.USER_CODE, "python.bug")
    cut = tmp_path / "cut.log"  # the log ends at the exception line: its message never came
    cut.write_text("\n".join([*_DRIVER_CHECK, ""]))
    d = triage_files([cut], KB).diagnosis
    assert (d.category, d.rule) == (Category.USER_CODE, "python.bug")
    # a message apart from it by a blank line is not read as its own
    apart = tmp_path / "apart.log"
    apart.write_text(
        "\n".join([*_DRIVER_CHECK, "", "The NVIDIA driver on your system is too old", ""])
    )
    assert triage_files([apart], KB).diagnosis.rule == "python.bug"


def _asserted(statement: str, ending: str = "AssertionError") -> list[str]:
    return [
        "epoch 0 step 10 loss 0.93",
        "Traceback (most recent call last):",
        '  File "/home/u/stereo/train.py", line 167, in train',
        "    loss = sequence_loss(preds, flow, valid)",
        '  File "/home/u/stereo/train.py", line 50, in sequence_loss',
        f"    {statement}",
        ending,
        "",
    ]


@pytest.mark.parametrize(
    ("statement", "rule_id"),
    [
        ("assert not torch.isnan(preds[i]).any() and not torch.isinf(preds[i]).any()",
         "numerical.nan"),
        ("assert len(self.train_dataloader) >= 1", "data.empty"),
        # words no rule knows: a bug in the code, as before
        ("assert x.size(0) == x_lens.size(0)", "python.bug"),
        # an error's words in the statement's comment or string are not what failed
        ("assert ret != -11  # Segmentation fault", "python.bug"),
        ("assert 'No space left on device' not in msg", "python.bug"),
        ("assert n * g == world_size  # NCCL error otherwise", "python.bug"),
    ],
)  # fmt: skip
def test_a_bare_assertion_error_is_read_with_its_assert_statement(
    tmp_path: Path, statement: str, rule_id: str
) -> None:
    # Python prints a failed `assert` without a message as a bare `AssertionError`; the
    # statement above it in the innermost frame is what failed
    from babysit.triage import triage_files

    for ending in ("AssertionError", "AssertionError: "):
        log = tmp_path / "assert.log"
        log.write_text("\n".join(_asserted(statement, ending)))
        d = triage_files([log], KB).diagnosis
        assert d.rule == rule_id, ending
        assert "train.py:50" in d.summary and not d.consequences
    # a message of its own on the next line still wins over the statement
    message = "The NVIDIA driver on your system is too old (found version 10020)."
    log.write_text("\n".join([*_asserted(statement)[:-1], message, ""]))
    assert triage_files([log], KB).diagnosis.rule == "cuda.no_kernel_image"


def test_a_bare_assertion_error_raised_in_a_module_s_import_stays_an_assertion(
    tmp_path: Path,
) -> None:
    # the innermost frame is a module's body at an import line (the module's own code ran and
    # asserted): not an ImportError, which a cut traceback there would read
    from babysit.triage import triage_files

    log = tmp_path / "import.log"
    lines = _asserted("import flash_attn_2_cuda as flash_attn_cuda")
    lines[4] = '  File "/home/u/stereo/flash_attn.py", line 1, in <module>'
    log.write_text("\n".join(lines))
    assert triage_files([log], KB).diagnosis.rule == "python.bug"


def test_deformable_convolution_s_offset_warnings_count_when_they_repeat(tmp_path: Path) -> None:
    # one early warning, then a run that finished: nothing to do; the warnings repeating: the
    # training is going unstable
    from babysit.triage import triage_files

    warning = "19-07-14 21:35:{:02d}.048 - WARNING: Offset mean is {}.66, larger than 100."
    once = tmp_path / "once.log"
    once.write_text(f"{warning.format(1, 101)}\nstep 2 loss: 2.31\nTraining completed.\n")
    assert triage_files([once], KB).diagnosis.rule != "numerical.dcn_offset"
    many = tmp_path / "many.log"
    many.write_text("".join(warning.format(i, 5000 + i) + "\n" for i in range(5)))
    d = triage_files([many], KB).diagnosis
    assert (d.category, d.rule) == (Category.NUMERICAL, "numerical.dcn_offset")


_EMPTY_LOADER = (
    "/venv/lib/python3.10/site-packages/pytorch_lightning/utilities/data.py:104: Total length of "
    "`DataLoader` across ranks is zero. Please make sure this was your intention."
)


def test_an_empty_loader_s_warning_is_the_story_only_of_a_run_that_never_trained(
    tmp_path: Path,
) -> None:
    from babysit.triage import triage_files

    # Lightning's warning at a log's end, training never started: the empty dataset
    alone = _triage(["GPU available: True (cuda), used: True", _EMPTY_LOADER])
    assert (alone.category, alone.rule) == (Category.DATA, "data.empty_loader")
    assert alone.transient is False
    # a validation loader left empty on purpose, then an error of the code: the error
    under = _triage(
        [
            _EMPTY_LOADER,
            "Traceback (most recent call last):",
            '  File "/home/u/proj/train.py", line 90, in <module>',
            "    batch = next(it)",
            "ValueError: too many values to unpack (expected 2)",
        ]
    )
    assert under.rule == "python.bug"
    # the same warning (a validation loader), then training steps: the run got past it
    trained = tmp_path / "trained.log"
    steps = (f"step {i} | loss 2.{i:02d} | lr 1e-4" for i in range(1, 40))
    trained.write_text("\n".join([_EMPTY_LOADER, *steps, ""]))
    assert triage_files([trained], KB).diagnosis.rule != "data.empty_loader"
    # and at the end of a log that shows none, the same from the file
    never = tmp_path / "never.log"
    never.write_text("\n".join(["GPU available: True (cuda), used: True", _EMPTY_LOADER, ""]))
    assert triage_files([never], KB).diagnosis.rule == "data.empty_loader"


def test_a_loader_s_zero_count_is_the_story_only_of_a_run_that_never_trained(
    tmp_path: Path,
) -> None:
    # Keras' count at zero, the log's last word before no step: the empty dataset; the same
    # count for a second generator, then steps and a kill: not the data's
    from babysit.triage import triage_files

    zero = "Found 0 images belonging to 0 classes."
    never = tmp_path / "never.log"
    never.write_text("\n".join(["Found 1200 images belonging to 10 classes.", zero, ""]))
    assert triage_files([never], KB).diagnosis.rule == "data.zero_count"
    trained = tmp_path / "trained.log"
    steps = (f"step {i} | loss 2.{i:02d} | lr 1e-4" for i in range(1, 40))
    trained.write_text("\n".join([zero, *steps, "Killed", ""]))
    assert triage_files([trained], KB).diagnosis.rule != "data.zero_count"
    # an error of the code raised after the count, still at set-up: the error
    raised = tmp_path / "raised.log"
    raised.write_text(
        "\n".join(
            [
                zero,
                "Traceback (most recent call last):",
                '  File "/home/u/proj/train.py", line 40, in <module>',
                "    model.fit(train, nb_epoch=10)",
                "TypeError: fit() got an unexpected keyword argument 'nb_epoch'",
                "",
            ]
        )
    )
    assert triage_files([raised], KB).diagnosis.rule == "python.bug"


def test_a_held_exception_keeps_its_place_among_the_ranks_errors() -> None:
    # One log a rank: rank 0's ends at its `AssertionError:`, whose message never comes (its
    # finding is held for it), rank 1's raises later; without timestamps the first in the logs
    # is the first that failed, the held one included. The same in one file, rank by rank.
    rank0 = [*_DRIVER_CHECK]
    rank1 = [
        "Traceback (most recent call last):",
        '  File "/home/u/proj/train.py", line 90, in <module>',
        "    batch = next(it)",
        "ValueError: too many values to unpack (expected 2)",
    ]
    d = _triage(rank0, rank1)
    assert d.rule == "python.bug" and "AssertionError" in d.summary
    d = _triage([f"[rank0]: {x}" for x in rank0] + [f"[rank1]: {x}" for x in rank1])
    assert "AssertionError" in d.summary and d.suspect.rank == 0


@pytest.mark.parametrize("other", ["[rank1]: step 12 loss 2.31", "[rank1]: "])
def test_an_exception_s_message_is_read_across_another_rank_s_lines(other: str) -> None:
    # 64 ranks print into one file: another rank's line may come between a rank's exception
    # line and its message
    lines = [f"[rank0]: {x}" for x in _DRIVER_CHECK]
    message = "[rank0]: The NVIDIA driver on your system is too old (found version 10020)."
    d = _triage([*lines, other, message])
    assert (d.category, d.rule) == (Category.CUDA_ERROR_OTHER, "cuda.no_kernel_image")
    # a blank line of the rank's own in between: no message
    d = _triage([*lines, "[rank0]: ", message])
    assert d.rule == "python.bug"


def test_another_error_after_an_empty_exception_is_no_message_of_it() -> None:
    # Another process's own error (an exception line, a logged line) right after: not the message
    oom = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
    d = _triage([*_DRIVER_CHECK, oom])
    assert "AssertionError: RuntimeError" not in d.summary
    logged = "2024-05-01 12:00:00,001 ERROR The NVIDIA driver on your system is too old"
    d = _triage([*_DRIVER_CHECK, logged])
    assert "AssertionError: 2024" not in d.summary


def test_a_printed_bare_exception_line_never_outweighs_the_crash(tmp_path: Path) -> None:
    # a script that prints `Exception: ...` and goes on, then crashes: the crash is the story
    from babysit.triage import triage_files

    printed = "Exception: 'NoneType' object has no attribute 'shape'"
    steps = ["step 1 loss: 2.31", "step 2 loss: 2.20"]
    crash = [
        "Traceback (most recent call last):",
        '  File "/home/u/proj/train.py", line 88, in <module>',
        "    main()",
        "RuntimeError: expected scalar type Half but found Float",
    ]
    log = tmp_path / "printed.log"
    log.write_text("\n".join([*steps, printed, *steps, *crash, ""]))
    d = triage_files([log], KB).diagnosis
    assert "expected scalar type" in d.summary


def test_a_lone_dataloader_wrapper_line_still_waits_for_the_worker_s_own_error(
    tmp_path: Path,
) -> None:
    from babysit.triage import triage_files

    log = tmp_path / "wrap.log"
    log.write_text(
        "step 1 loss: 2.31\n"
        "SampleDecodeError: Caught SampleDecodeError in DataLoader worker process 0.\n"
        "Original Traceback (most recent call last):\n"
        '  File "/home/u/proj/mydata.py", line 40, in __getitem__\n'
        "    raise SampleDecodeError(f'bad sample {i}')\n"
        "SampleDecodeError: bad sample 17\n"
    )
    d = triage_files([log], KB).diagnosis
    assert d.category is Category.DATA and d.rule == "data.worker_exception"


def test_ray_s_retry_warnings_do_not_outweigh_the_run_s_own_crash(tmp_path: Path) -> None:
    # Ray's C++ log level is read: a W-level `Failed to connect to GCS` is one retry of many.
    from babysit.triage import triage_files

    crash = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/proj/train.py", line 88, in <module>\n'
        "    main()\n"
        "RewardModelCrash: reward head produced shape (3, 7), expected (3,)\n"
    )
    log = tmp_path / "ray.log"
    log.write_text(
        "[2025-02-16 16:05:55,537 W 350061 350061] gcs_rpc_client.h:179: Failed to connect to "
        "GCS at address 172.23.15.13:20000 within 5 seconds.\n"
        "2025-02-16 16:06:01,000 INFO worker.py:1654 -- Connected to Ray cluster.\n"
        "step 1 loss: 2.31\n" + crash
    )
    assert "RewardModelCrash" in triage_files([log], KB).diagnosis.summary
    alone = tmp_path / "gcs.log"
    alone.write_text(
        "[2025-02-16 16:05:55,537 E 350061 350061] gcs_rpc_client.h:179: Failed to connect to "
        "GCS at address 172.23.15.13:20000 within 5 seconds.\n"
    )
    d = triage_files([alone], KB).diagnosis
    assert d.category is Category.NETWORK and d.rule == "net.ray_gcs"


def test_dataloader_workers_that_exited_defer_to_any_error_of_their_own(tmp_path: Path) -> None:
    from babysit.triage import triage_files

    log = tmp_path / "dl.log"
    log.write_text(
        "step 1 loss: 2.31\n"
        "Traceback (most recent call last):\n"
        '  File "/home/u/proj/shards.py", line 12, in load\n'
        "    raise ShardIndexMissing(path)\n"
        "ShardIndexMissing: /data/shard-00017.idx\n"
        "RuntimeError: DataLoader worker (pid(s) 2535, 2850) exited unexpectedly\n"
    )
    assert "ShardIndexMissing" in triage_files([log], KB).diagnosis.summary
    coded = tmp_path / "coded.log"
    coded.write_text(
        "step 1 loss: 2.31\n"
        "RuntimeError: DataLoader worker (pid(s) 2535) exited unexpectedly with exit code 1\n"
    )
    assert triage_files([coded], KB).diagnosis.rule != "host.dataloader_exited"


def test_timeouts_on_a_rank_that_raised_its_own_python_error_promise_no_restart() -> None:
    # torchrun's first failure exited with code 1 (a Python error), and that rank printed one
    # (`RuntimeError: Invalid mt19937 state`) besides its timeouts: the timeouts may well be its
    # consequence, so a restart is not promised.
    timeout = (
        "[rank{r}]:[E1130 23:12:03.408 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=1020, OpType=ALLREDUCE, NumelIn=4, "
        "NumelOut=4, Timeout(ms)=600000) ran for 600012 milliseconds before timing out."
    )
    summary = [
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        "Root Cause (first observed failure):",
        "[0]:",
        "  host      : node-000",
        "  rank      : 2 (local_rank: 2)",
        "  exitcode  : 1 (pid: 4242)",
    ]
    lines = [timeout.format(r=r) for r in (0, 1, 3)]
    own = _triage(["[rank2]:RuntimeError: Invalid mt19937 state", *lines, timeout.format(r=2)])
    assert own.category is Category.NCCL_TIMEOUT and own.transient is None
    assert "first observed failure" not in own.summary
    d = _triage(
        ["[rank2]:RuntimeError: Invalid mt19937 state", *lines, timeout.format(r=2), *summary]
    )
    # (no training step shows before it: that Python error is the set-up's, which a restart
    # meets again; after training steps the log could not say: test_verdict.py)
    assert d.category is Category.NCCL_TIMEOUT and d.transient is False
    assert "first observed failure, rank 2," in d.summary


def test_an_error_record_is_found_once_and_its_repeats_left_to_the_scanner() -> None:
    # A logger's complaint repeated on every step: the first is a finding, its repeats mean
    # nothing more (True: the scanner skips them), in any colour (`tput sgr0`'s charset code).
    engine = Engine(KB)
    line = "\x1b(B\x1b[m[ERROR] could not open /data/shard-0001.bin"
    assert engine.feed(0, 1, line) is False
    assert engine.feed(0, 2, line) is True
    engine.finish()
    (group,) = engine.groups.values()
    assert group.first.rule.id == "log.error_record" and "\x1b" not in group.first.body



# torch's warning at import that the driver is too old for its CUDA build, as it prints it
DRIVER_TOO_OLD = (
    "/usr/lib/python3.10/site-packages/torch/cuda/__init__.py:138: UserWarning: CUDA "
    "initialization: The NVIDIA driver on your system is too old (found version 10020). Please "
    "update your GPU driver by downloading and installing a new version from the URL: "
    "http://www.nvidia.com/Download/index.aspx"
)


def test_a_driver_too_old_warning_alone_is_the_story_and_under_an_error_its_advice_stays() -> None:
    alone = _triage([DRIVER_TOO_OLD, "  return torch._C._cuda_getDeviceCount() > 0"])
    assert alone.category == Category.CUDA_ERROR_OTHER and alone.rule == "cuda.init_warning"
    # The run went on without the GPU and asked NCCL for one: the error is the story, and its
    # advice names the driver the warning above it blamed
    under = _triage(
        [
            DRIVER_TOO_OLD,
            "Traceback (most recent call last):",
            '  File "train.py", line 12, in <module>',
            "    dist.init_process_group('nccl')",
            "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
        ]
    )
    assert under.rule == "code.no_gpu"
    # the warning's fix comes first, then the error's own advice
    warned = "Warned in the log: The NVIDIA driver on this machine is too old"
    assert under.action.startswith(warned)
    assert "Install a torch build for this driver's CUDA version" in under.action
    assert "Otherwise: Request GPUs for the job" in under.action
    # torch's own "no GPU" error under the same warning gets the same advice, once
    seen = _triage([DRIVER_TOO_OLD, DRIVER_TOO_OLD, "RuntimeError: No CUDA GPUs are available"])
    assert seen.rule == "code.no_gpus_visible"
    assert seen.action.count("The NVIDIA driver on this machine is too old") == 1
    # without the warning, the advice does not speak of the driver's age
    bare = _triage(["RuntimeError: No CUDA GPUs are available"])
    assert "too old" not in bare.action
    # under a failure the driver's age does not explain (the GPU was in use), no such advice
    oom = _triage(
        [DRIVER_TOO_OLD, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB"]
    )
    assert oom.rule == "cuda.oom" and "too old" not in oom.action


def test_a_warning_s_advice_comes_after_what_the_phase_says_of_either_fix(tmp_path: Path) -> None:
    # A team's warning that advises its own set-up error (one id, as a string): the set-up's
    # sentence holds whichever fix applies, so it comes first, then the warning's fix, then
    # the error's own advice
    from babysit.triage import triage_files

    rules = tmp_path / "team.toml"
    rules.write_text(
        '[[rule]]\nid = "team.old_image"\ncategory = "user_code"\nrole = "consequence"\n'
        "patterns = ['image v41 is deprecated']\nadvises = \"team.mount_failed\"\n"
        'explain = "The job runs the deprecated image v41."\naction = "Use image v42."\n'
        '[[rule]]\nid = "team.mount_failed"\ncategory = "filesystem_io"\n'
        "transient_at_start = false\ntransient_in_training = true\n"
        "patterns = ['mount of /datasets failed']\n"
        'explain = "The datasets mount failed."\naction = "Check the mount."\n'
    )
    kb = load_knowledge([rules])
    log = tmp_path / "train.log"
    log.write_text("WARNING: image v41 is deprecated\nERROR: mount of /datasets failed\n")
    d = triage_files([log], kb).diagnosis
    assert d.rule == "team.mount_failed"
    assert d.action.startswith("It happened before the first training step")
    assert d.action.endswith(
        "Warned in the log: The job runs the deprecated image v41. Use image v42. "
        "Otherwise: Check the mount."
    )


def test_an_exception_glued_to_its_frames_code_line_still_ends_the_traceback() -> None:
    # a newline lost between a frame's code and the exception (streams interleaved, a paste)
    head = [
        "Traceback (most recent call last):",
        f'  File "{_TORCH}/distributions/poisson.py", line 63, in log_prob',
    ]
    oom = "RuntimeError: CUDA out of memory. Tried to allocate 9.28 GiB (GPU 0; 31.75 GiB total)"
    chained = [
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "run.py", line 7, in <module>',
        "    assert exit_code == 0",
        "AssertionError",
    ]
    d = _triage([*head, f"    return value.xlogy(rate) - (value + 1).lgamma(){oom}", *chained])
    assert (d.category, d.rule) == (Category.CUDA_OOM, "cuda.oom")
    # code that names an exception, no bracket glued to it, is the frame's code: the
    # exception line after it ends the frames
    for code in ('    raise RuntimeError("no")', "    except KeyError: pass", "    f(x)[0]"):
        d = _triage([*head, code, "ValueError: bad value"])
        assert "ValueError: bad value" in d.summary, code


def test_tensorflow_1s_words_for_a_sessions_error_are_an_exception_line() -> None:
    # `X (see above for traceback): message`, the op's own traceback printed before it
    d = _triage([
        "InvalidArgumentError (see above for traceback): assertion failed: [] [Condition x == y "
        "did not hold element-wise:] [x (model/inference/strided_slice_5:0) = ] [12032]",
        "\t [[Node: model/inference/assert_equal/Assert/Assert = Assert[T=[DT_STRING]]]]",
    ])
    assert d.rule == "python.unclassified_line" and "assertion failed" in d.summary
