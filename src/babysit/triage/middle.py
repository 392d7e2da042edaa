"""What grep looks for in a big log's middle besides the common needles (triage/needles.py),
and which of it a given log's middle gets: a rare needle that its middle holds on many lines is
chatter there (Megatron's `number of nan iterations: 0` on every step, NCCL's INFO lines), and
every line grep finds is decoded and matched in Python.

    middle_needles("train.log", 1 << 30, 20_000)
    # -> Middle(needles=(b"evict", b"preempt", ...) or (), matches=1200.0)
"""

from __future__ import annotations

from typing import NamedTuple

from babysit.triage.needles import DEVICE_DOWN, NEEDLES, RARE_NEEDLES

_SAMPLE_BYTES = 1 << 20  # the part of the middle read to judge it

# The rare needles searched in the middle of a big log, in grep's pass with NEEDLES: what a run
# can meet and go on after, or be ended by from outside (an eviction, a preemption, the OOM
# killer, a NaN, an Xid, the scheduler's time limit), those the needle path used to miss. A
# few long needles and plain `nan` keep grep near its speed on the common needles (the ~20
# spellings of a NaN in RARE_NEEDLES, short and starting with a space or a colon, double
# its time); the rules sort out what `nan` found. Past MIDDLE_MATCHES matching lines (each
# decoded and matched in Python, ~40 us; Megatron's `number of nan iterations: 0` on every
# step) the middle goes without them (scan.py's MIDDLE_MATCHES, given to middle_needles below).
MIDDLE_NEEDLES: tuple[bytes, ...] = (
    b"evict",
    b"low on resource",
    b"preempt",
    b"imminent",
    b"terminat",
    b"oom",
    b"kill",
    b"memory pressure",
    b"failcnt",
    b"nan",
    b"(inf)",  # a metric logger's running average gone infinite: `total_loss: 6.72 (inf)`
    b"mismatch",
    b"xid",
    b"nvrm",
    b"fallen off",
    b"gpu is lost",
    b"core dumped",  # the shell's words for a child that aborted: `Aborted (core dumped)`
    *DEVICE_DOWN,
    b"ecc",
    b"time limit",
    b"cancel",
    b"shutting down",
    b"lame workers",
    b"marked dead",
    b"node has died",
    # Long and rare, so cheap to grep for: the launchers' and the runtimes' own words for a
    # failure that the common needles miss (mpirun's lost daemons, ssh's refusals, a
    # launcher's return code, TensorFlow's deadline, an arch not compatible, Horovod's stall
    # report, Megatron's word that its training was done), each finding a corpus log that the
    # middle missed (benchmarks/quality_triage.py, big-log needles).
    b"daemon",
    b"refused",
    b"return code",
    b"deadline",
    b"compatible",
    b"ready ranks",
    b"training is done",
    b"cannot be initialized",  # c10d's socket: `The server socket cannot be initialized on ...`
    b"out of memory",  # a GPU's or the host's, its exception class cut off or not printed
    b"memory access fault",  # ROCm's illegal memory access
    b"times out",  # Ascend's HCCL timeouts
    # the shell's words for a killed or crashed process in Chinese locales (Killed, Segmentation
    # fault, Bus error): the English ones are found by `kill` and the common needles
    "已杀死".encode(),
    "段错误".encode(),
    "总线错误".encode(),
    "错误".encode(),  # `error` in Chinese locales (argparse's `错误：需要以下参数`)
    # Kinds of evidence more than words, each a line that says little alone: a traceback's frame
    # (its header cut off, or its exception line without `error`: the frames and the statement
    # they end in still tell), the stacks of a stuck process (py-spy's threads, gdb), a path
    # the shell or a C library could not find, a socket that closed, a file found corrupt or
    # truncated.
    b'file "',
    b"(idle)",
    b"(active)",
    b"gdb) ",
    b"(lwp ",
    b"attaching to process",
    b"no such file",
    b"socket",
    b"corrupt",
    b"truncated",
    # a loss at infinity as trainers print it (`inf` alone would find every `info`), and a
    # cloud's power-button press on a VM it takes back
    b"loss: inf",
    b"loss=inf",
    b"loss = inf",
    b"loss is inf",
    b"power key pressed",
    # rare and specific: an image or video cut short, a package built for another NumPy, two
    # ranks on one GPU
    b"premature end",
    b"moov atom",
    b"numpy 1.x",
    b"duplicate gpu",
    b"segfault",
    # what a run meets in its middle and dies of, each long and rare: a full disk, a kernel's
    # fault or assert, a server that hung up, Ray's header of a task's traceback, ssh refusing
    # a node
    b"no space left",
    b"illegal memory access",
    b"device-side assert",
    b"disconnect",
    b"ray::",
    b"permission denied (publickey",
    # a batch of samples of different shapes (tf.data), a molecule RDKit rejects, a kernel's bad
    # access (compute-sanitizer), a pool's child killed by a signal, CTC's label too long
    b"cannot batch tensors",
    b"explicit valence",
    b"========= invalid",
    b"unexpectedly with status -",
    b"no valid path found",
    # a compressed shard cut short (gzip's EOFError), a host name that does not resolve (as ssh
    # prints it), UCX giving up on a peer, a host allocator (Lua Torch) or a Dask worker out of
    # memory, a label file Darknet rejects
    b"compressed file ended before",
    b"name or service not known",
    b"retry count exceeded",
    b"not enough memory",
    b"memory usage. pausing worker",
    b"wrong annotation: class_id",
    # a TPU runtime or a C++ runtime the build does not match, XLA's autotuner or Triton giving
    # up on a kernel, a TPU chip given up on, a dataset left empty (not a kernel's assert cut
    # short, `: block: [`: its colon and spaces, common in any log, cost grep 0.5 s a GB)
    b"not available in this library",
    b"' not found (required by",
    b"autotuner.cc:",
    b"out of resource: shared memory",
    b"a program or fatal error occurred",
    b"valid samples",
    b"dataset is empty after",
    # ggml's assertions, DeepEP's kernels' timeout, TensorFlow 1.x out of GPU memory
    b"ggml_assert",
    b"deepep timeout check failed",
    b"dst tensor is not initialized",
    # what a run meets mid-way whose line has no common needle: a kernel's assert cut before
    # its `failed` (the backtick that opens the condition keeps it rare), a sample the audio
    # library cannot read, DataLoader workers short of /dev/shm, c10d's timeout cut before its
    # `timeout` or wrapped before its end, torch's OOM message without its first sentence, a
    # collate of samples of different sizes, a connection a peer closed. (Not `aborted`: vLLM
    # logs `Aborted request ...` for every request an RL rollout drops, enough to make a middle
    # dense and turn its rare needles off.)
    # (Each costs grep little, all together about 0.3 s on the 1 GB log: the rarer ones, a Dask
    # worker near its limit, NVSHMEM's transport, TensorFlow's allocator's statistics, a zip or
    # an LMDB record that will not read, stay at the edges.)
    b"assertion `",
    b"unknown format",
    b"out of shared memory",
    b"watchdog caught collective",
    b"before timing out",
    b"tried to allocate",
    b"stack expects each tensor",
    b"closed by peer",
    # mid-run and long: Keras stopping fit when its input ran dry, safetensors refusing to save
    # tied weights at a checkpoint
    b"input ran out of data",
    b"some tensors share memory",
    # the terminal's Ctrl-C, echoed where the run was interrupted (the launcher and the ranks'
    # shutdown may print on after it); TensorFlow's BFC allocator, whose map of the memory it
    # holds (`bfc_allocator.cc:279] ****...`, no letter after the file's name) it prints only
    # when an allocation failed
    b"^c",
    b"bfc_allocator.cc:",
)


# What grep looks for in a big log's middle besides NEEDLES: MIDDLE_NEEDLES and the other rare
# needles, each from its first letter on (`: permission denied` as `permission denied`; the
# rules still match the whole line), less those shorter than six bytes from there (`: nan`).
# grep's cost is in the needles that start with a blank, a colon or a digit, bytes every log is
# full of (~0.05 s a GB each on the 1 GB log of benchmarks/triage_throughput.py); the ~190 that
# start with a letter cost it nothing measurable there. A middle whose sample holds one on many
# lines (`warn`, `nccl info`) is searched without it (middle_needles).
def _from_first_letter(nd: bytes) -> bytes:
    """The needle from its first ASCII letter on; whole when it starts with a byte of another
    script (`错误`, `ошибка`: cheap for grep as a letter is), empty when it has neither."""
    if nd[:1] >= b"\x80":
        return nd
    at = next((i for i, b in enumerate(nd) if 97 <= b <= 122), len(nd))
    return nd[at:]


GREP_MIDDLE_NEEDLES: tuple[bytes, ...] = MIDDLE_NEEDLES + tuple(
    dict.fromkeys(
        lettered
        for nd in RARE_NEEDLES
        if nd not in MIDDLE_NEEDLES
        and (lettered := _from_first_letter(nd)) not in MIDDLE_NEEDLES
        and (lettered == nd or len(lettered) >= 6)
    )
)


class Middle(NamedTuple):
    """What grep looks for in a big log's middle besides NEEDLES, and how many matches of those
    and of NEEDLES the whole log holds at the rate of the sample of its middle (inf: unknown)."""

    needles: tuple[bytes, ...]
    matches: float


def middle_needles(path: str, size: int, most: int) -> Middle:
    """The rare needles grep looks for in the middle of a log of `size` bytes, whose lines
    grep finds are kept while they number at most `most` (scan.py's MIDDLE_MATCHES): those of
    GREP_MIDDLE_NEEDLES that a sample of its middle does not hold on many lines (a needle on more
    than a quarter of `most` lines of the whole log, at the sample's rate, is chatter: Megatron's
    `number of nan iterations` on every step, NCCL's INFO lines, a warning each step); none when
    the ones left would still pass `most`. Judged from its middle, not its head, whose start-up
    output says little of the training's lines. With them, the matches grep's pass can expect
    (theirs and NEEDLES'), which tell it how to search (grepfind's `sparse`)."""
    try:
        with open(path, "rb") as f:
            f.seek(size // 2)
            sample = f.read(_SAMPLE_BYTES)
    except OSError:
        return Middle(GREP_MIDDLE_NEEDLES, float("inf"))
    low = sample[sample.find(b"\n") + 1 :].lower()
    scale = size / max(len(low), 1)
    kept: list[bytes] = []
    total = 0.0
    for nd in GREP_MIDDLE_NEEDLES:
        expected = low.count(nd) * scale
        if expected <= most // 4:
            kept.append(nd)
            total += expected
    common = sum(low.count(nd) for nd in NEEDLES) * scale
    if total > most:
        return Middle((), common)
    return Middle(tuple(kept), common + total)
