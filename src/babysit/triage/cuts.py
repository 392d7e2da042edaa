"""The stand-ins for a Python traceback that the log cuts before its exception line (the paste
ended there, or the log's size limit did): what is known is where it was raised, and what the
innermost frames were doing says what the error it hides most often is.

    rule = cut_rule(traceback.lines)  # CUT_WRITE, CUT_ALLOC, CUT_WAIT, CUT_COMPILE, CUT_NET...

What the frames say (a write, an allocation, a wait, a compile, a request) is read in frames.py;
the stand-ins for a traceback that ends in its exception are standins.py's.
"""

from __future__ import annotations

from babysit.records import Category
from babysit.triage.frames import cut_alloc, cut_compile, cut_net, cut_wait, cut_write, frames
from babysit.triage.knowledge import PRECEDENCE, Rule, standin

# Where the innermost frames say what the hidden error most often was (a write, a request, an
# allocation, a compile): above a collective timeout (the other ranks waiting for the one that
# raised it), below every error that names itself.
_ABOVE_A_TIMEOUT = PRECEDENCE[Category.NCCL_TIMEOUT] + 2

# A traceback the log cuts before its exception line, whose last lines name no error (the
# paste ended there, or the log's size limit did): what is known is where it was raised. Read,
# weakly, as the code's: the likeliest of the errors it may hide (in the corpus, a third of such
# logs, twice as many as those whose cause nobody found; the rest spread over the device's
# memory, the data, CUDA and the network, none half as often).
CUT_TRACEBACK = standin(
    "python.cut_traceback",
    Category.USER_CODE,
    "The log ends inside a Python traceback, before its error line (the log or the "
    "paste was cut there): the error itself is not in these lines. Read as the training "
    "code's, the likeliest (a third of such logs), but it may as well be a memory, data, CUDA "
    "or network error; the quoted line is the innermost frame, where it was raised.",
    "Find the end of this traceback (the full log of this rank, or the job's stderr): "
    "its last line is the error; triage that log.",
    confidence=0.15,
    # Before the first training step the set-up raised it, and raises it again on a restart
    # (a network error there is the set-up's addresses and ports, as for any other rule);
    # after it, the error it hides may be a node's or the network's: not known.
    phase=(False, None),
    role="consequence",  # what it says of the cause is where, not what: any other error wins
    precedence=PRECEDENCE[Category.UNKNOWN] - 2,  # below any line that names an error, weak or not
)
# The same while the innermost frames write a checkpoint or other file (`torch.save(`,
# `self._save_checkpoint(runner)`, serialization's `_legacy_save`, safetensors' `save_file`):
# a write that fails is most often the storage's (a full disk, a quota, a stale NFS handle).
CUT_WRITE = standin(
    "fs.cut_checkpoint_write",
    Category.FILESYSTEM_IO,
    "The log ends inside a traceback raised while writing a checkpoint or file, before "
    "its error line: most often the storage refused the write (a full disk, a quota, a "
    "missing or read-only directory), less often a stale NFS handle or a file system that "
    "went away; the error itself is not in these lines.",
    "Find the end of the traceback in the full log to confirm; check free space and "
    "quota where the checkpoints go (df -h DIR; quota -s) and that the mount is alive; then "
    "resume from the last complete checkpoint (a half-written one may be corrupt).",
    confidence=0.35,
    # as fs.checkpoint_write: a full disk, a quota or a refused path, which the next save meets
    # again (the corpus's threads: 4 of 4 where they tell)
    transient=False,
    suspect="filesystem",
    precedence=_ABOVE_A_TIMEOUT,
)
# The same while the innermost frames talk to a server (cut_net): the error it hides is most
# often the network's.
CUT_NET = standin(
    "net.cut_request",
    Category.NETWORK,
    "The log ends inside a traceback raised while the run talked to a server (an HTTP "
    "request, a socket, a tracker's or a hub's client), before its error line: most often the "
    "connection failed (a timeout, a refused or dropped connection, a server error); the error "
    "itself is not in these lines.",
    "Find the end of the traceback in the full log to confirm; check that the server the "
    "quoted frames call is up and reachable from the node (proxy, DNS, firewall, the service's "
    "status page), then restart.",
    confidence=0.3,
    suspect="network",
    precedence=_ABOVE_A_TIMEOUT,
)
# The same while the innermost frames allocate device memory (cut_alloc): an allocator's module,
# or vLLM's sleep mode waking up (mapping back the memory it let go while the trainer used it).
# The error it hides is most often an out-of-memory.
CUT_ALLOC = standin(
    "cuda.cut_allocation",
    Category.CUDA_OOM,
    "The log ends inside a traceback raised while the run allocated accelerator memory (an "
    "allocator, a vLLM engine allocating its KV cache or waking up from sleep mode to map its "
    "memory back), before its error line: most often the device was out of memory; the error "
    "itself is not in these lines.",
    "Find the end of the traceback in the full log to confirm; then leave more memory free "
    "there (a smaller batch or sequence, a lower gpu_memory_utilization for a colocated "
    "vLLM, the trainer's memory released before the engine wakes up).",
    confidence=0.3,
    transient=False,
    suspect="config",
    precedence=_ABOVE_A_TIMEOUT,
)
# The same while torch.compile's compiler worked (cut_compile): a compile that failed.
CUT_COMPILE = standin(
    "code.cut_compile",
    Category.USER_CODE,
    "The log ends inside a traceback raised while torch.compile's compiler worked "
    "(TorchInductor, Dynamo, a Triton kernel's compile), before its error line: most often the "
    "compile failed on this model, this GPU or these versions; the error itself is not in these "
    "lines.",
    "Find the end of the traceback in the full log to confirm; run once without torch.compile "
    "(TORCH_COMPILE_DISABLE=1) to see whether the run works without it, then fix the code or "
    "the versions (torch, triton) it names, or train uncompiled.",
    confidence=0.3,
    transient=False,
    suspect="code",
    precedence=_ABOVE_A_TIMEOUT,
)
# The same while the innermost frame waits (on a queue, a pipe, a lock, a child process): an
# exception raised inside a wait is most often the interrupt of a stuck run (Ctrl-C, its
# KeyboardInterrupt line cut off); an error of its own would have been raised elsewhere.
CUT_WAIT = standin(
    "hang.cut_in_wait",
    Category.HANG,
    "The log ends inside a traceback raised while the process waited (on a queue, a "
    "pipe, a lock, a child process), before its error line: most often the run was stuck "
    "there and someone interrupted it; the quoted line is where it waited.",
    "If the run had stopped making progress, that wait is where: a DataLoader queue (a "
    "worker stuck or dead), a lock, another process; next time dump every rank's stacks before "
    "interrupting (py-spy dump --pid PID), then restart from the last checkpoint.",
    confidence=0.3,
    role="consequence",  # as CUT_TRACEBACK: any named error explains the run better
    precedence=PRECEDENCE[Category.HANG] - 1,
)


def cut_rule(lines: list[tuple[int, str]]) -> Rule:
    """The stand-in for a traceback cut before its exception line whose last lines name no
    error: a write's (CUT_WRITE), an allocation's (CUT_ALLOC), a wait's (CUT_WAIT), a compile's
    (CUT_COMPILE), a request's (CUT_NET), or only where it was (CUT_TRACEBACK)."""
    where = frames(lines)
    if cut_write(where):
        return CUT_WRITE
    if cut_alloc(where):
        return CUT_ALLOC
    if cut_wait(where):
        return CUT_WAIT
    if cut_compile(where):
        return CUT_COMPILE
    return CUT_NET if cut_net(where) else CUT_TRACEBACK
