"""The stand-in rules that triage applies where the rules file has none, and the choice of one
by where a traceback says its exception was raised: an exception no rule knows (UNCLASSIFIED), a
generic exception that the place it was raised makes `data` (a DataLoader worker's sample, a
reader's), a Ctrl-C in a wait, and what a traceback cut before its exception line raised.

    rule = placed(UNCLASSIFIED, traceback, "KeyError", "KeyError: 'label'")  # DATA_IN_WORKER...
    rule = cut_rule(traceback.lines)  # CUT_WRITE, CUT_ALLOC, CUT_WAIT, CUT_NET or CUT_TRACEBACK
    cut_raise("assert pg is not None", "__init__")  # -> "AssertionError: assert pg is not None"
"""

from __future__ import annotations

import re
from typing import Protocol

from babysit.records import Category
from babysit.triage.knowledge import PRECEDENCE, Rule

# The statement a traceback cut before its exception line ended in says what it raised: an
# `assert` an AssertionError, `raise X(...)` an X, an import in a module's body an ImportError.
_CUT_RAISES = (
    (re.compile(r"^assert\b"), "AssertionError"),
    (re.compile(r"^raise\s+(?:[A-Za-z_]\w*\.)*(?P<exc>[A-Z]\w*(?:Error|Exception))\b"), ""),
    (re.compile(r"^(?:from\s+[\w.]+\s+import\b|import\s+[\w.]+)"), "ImportError"),
)


def cut_raise(code: str, func: str | None) -> str | None:
    """What the innermost statement of a cut traceback raised, as an exception line for the
    rules (`AssertionError: assert pg is not None`), or None when the statement does not say."""
    for rx, exc in _CUT_RAISES:
        m = rx.match(code)
        if m is None or (exc == "ImportError" and func != "<module>"):
            continue
        return f"{exc or m['exc']}: {code}"
    return None


# A traceback's frame: its file, its function (none for a SyntaxError's), its code line.
Frame = tuple[str, str | None, str]
# A traceback's frame line: `  File "train.py", line 88, in train_step` (no `in` for a
# SyntaxError).
FRAME = re.compile(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>\S+))?')


def frames(lines: list[tuple[int, str]]) -> list[Frame]:
    """A traceback's frames from its (line number, text) lines, innermost last."""
    out: list[Frame] = []
    for _, text in lines:
        m = FRAME.match(text)
        if m:
            out.append((m["file"], m["func"], ""))
        elif out and not out[-1][2]:
            out[-1] = (*out[-1][:2], text.strip())
    return out


def _standin(
    rid: str,
    category: Category,
    explain: str,
    action: str,
    *,
    confidence: float,
    role: str = "cause",
    transient: bool | None = None,
    suspect: str = "unknown",
    precedence: int | None = None,
    phase: tuple[bool | None, bool | None] | None = None,
) -> Rule:
    """A rule of babysit's own that no pattern matches: the engine applies it where a place in
    a traceback, not a message, says what happened."""
    return Rule(
        id=rid,
        category=category,
        role=role,
        transient=transient,
        suspect=suspect,
        patterns=(),
        explain=explain,
        action=action,
        precedence=PRECEDENCE[category] if precedence is None else precedence,
        confidence=confidence,
        origin="babysit",
        phase=phase,
    )


# A traceback the log cuts before its exception line, whose last lines name no error (the
# paste ended there, or the log's size limit did): what is known is where it was raised.
CUT_TRACEBACK = _standin(
    "python.cut_traceback",
    Category.UNKNOWN,
    "The log ends inside a Python traceback, before its error line (the log or the "
    "paste was cut there): the error itself is not in these lines; the quoted line is the "
    "innermost frame, where it was raised.",
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
CUT_WRITE = _standin(
    "fs.cut_checkpoint_write",
    Category.FILESYSTEM_IO,
    "The log ends inside a traceback raised while writing a checkpoint or file, before "
    "its error line: most often the storage failed the write (a full disk, a quota, a stale "
    "NFS handle, a file system that went away); the error itself is not in these lines.",
    "Find the end of the traceback in the full log to confirm; check free space and "
    "quota where the checkpoints go (df -h DIR; quota -s) and that the mount is alive; then "
    "resume from the last complete checkpoint (a half-written one may be corrupt).",
    confidence=0.35,
    suspect="filesystem",
    # above a collective timeout (the other ranks waiting for the one that was writing), below
    # every error that names itself
    precedence=PRECEDENCE[Category.NCCL_TIMEOUT] + 2,
)
# The same while the innermost frames talk to a server (cut_net): the error it hides is most
# often the network's.
CUT_NET = _standin(
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
    # as CUT_WRITE: above a collective timeout, below every error that names itself
    precedence=PRECEDENCE[Category.NCCL_TIMEOUT] + 2,
)
# The same while the innermost frames allocate device memory (cut_alloc): an allocator's module,
# or vLLM's sleep mode waking up (mapping back the memory it let go while the trainer used it).
# The error it hides is most often an out-of-memory.
CUT_ALLOC = _standin(
    "cuda.cut_allocation",
    Category.CUDA_OOM,
    "The log ends inside a traceback raised while the run allocated accelerator memory (an "
    "allocator, or a vLLM engine waking up from sleep mode to map its memory back), before its "
    "error line: most often the device was out of memory; the error itself is not in these "
    "lines.",
    "Find the end of the traceback in the full log to confirm; then leave more memory free "
    "there (a smaller batch or sequence, a lower gpu_memory_utilization for a colocated "
    "vLLM, the trainer's memory released before the engine wakes up).",
    confidence=0.3,
    transient=False,
    suspect="config",
    # as CUT_WRITE: above a collective timeout, below every error that names itself
    precedence=PRECEDENCE[Category.NCCL_TIMEOUT] + 2,
)
# The same while the innermost frame waits (on a queue, a pipe, a lock, a child process): an
# exception raised inside a wait is most often the interrupt of a stuck run (Ctrl-C, its
# KeyboardInterrupt line cut off); an error of its own would have been raised elsewhere.
CUT_WAIT = _standin(
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
# A person's Ctrl-C (KeyboardInterrupt) that ends a traceback whose innermost frame waited: the run
# was stuck there, and these are where it waited.
INTERRUPTED_WAIT = _standin(
    "hang.interrupted_in_wait",
    Category.HANG,
    "Someone interrupted the run (KeyboardInterrupt) while it waited (on a queue, a pipe, a "
    "lock, a child process): most often because it had stopped making progress there; the "
    "quoted line is where it waited.",
    "The wait is where it was stuck: a DataLoader queue (a worker stuck or dead: try "
    "num_workers=0 to see its error), a lock, another process; next time dump every rank's "
    "stacks first (py-spy dump --pid PID); then restart from the last checkpoint.",
    confidence=0.45,
    precedence=PRECEDENCE[Category.HANG] + 1,  # above a bare ^C (hang.interrupted)
)
# A person's Ctrl-C that ends a traceback anywhere else (a Python loop, the launcher's own wait
# for its children): the run was stopped by hand, as with a bare `^C` (the knowledge's
# hang.interrupted), most often because it had stopped moving. A launcher's clean-up that
# interrupts its children after another failure leaves that failure in the log, which
# outranks this (role consequence).
INTERRUPTED = _standin(
    "hang.interrupted_traceback",
    Category.HANG,
    "Someone interrupted the run by hand (KeyboardInterrupt, Ctrl-C): most often because it "
    "had stopped making progress; the log shows no error of its own. The quoted line is where "
    "the process was when it was interrupted.",
    "If it was stuck, dump every rank's stacks before interrupting next time (py-spy dump "
    "--pid PID) to see where it waited; then restart from the last checkpoint.",
    confidence=0.35,
    role="consequence",
    precedence=PRECEDENCE[Category.HANG] - 1,
)
# A function that blocks (a `get` only in a queue's module: `requests.get`, a dict's `.get` are
# no waits), or a code line that calls one on a queue, a pipe, a process, a thread, a future.
# Not a GPU's synchronize: a busy training loop sits there too.
_WAIT_FUNC = re.compile(r"^_*(?:wait\w*|acquire|recv\w*|poll|select|join|sleep|barrier|result)$")
_QUEUE_FILE = re.compile(r"[/\\]queues?\.py$")
_WAIT_CODE = re.compile(
    r"(?:queue|\bq)\.get\(|"
    r"\.(?:join|wait|acquire|_?recv(?:_bytes)?|_?poll|select|result)\(|"
    r"\btime\.sleep\(|^(?:if not |return |res = |ready = )?(?:wait|select)\("
)
# A launcher's parent waits for its children whether they work or hang (torch.multiprocessing's
# spawn joining them, torchrun's agent, accelerate's and DeepSpeed's launchers): its wait, a few
# frames below the launcher's own, says nothing of the run.
_LAUNCHER_FILE = re.compile(
    r"[/\\]torch[/\\]multiprocessing[/\\]spawn\.py$|[/\\]torch[/\\]distributed[/\\]"
    r"(?:elastic[/\\]|run\.py$|launch\.py$)|[/\\]accelerate[/\\]commands[/\\]|"
    r"[/\\]deepspeed[/\\]launcher[/\\]"
)


def cut_wait(frames: list[Frame]) -> bool:
    """Whether a traceback's innermost frame waited (one cut before its error line, or ended
    by a Ctrl-C), and not in a launcher's join."""
    if not frames or any(_LAUNCHER_FILE.search(f) and fn != "_wrap" for f, fn, _ in frames[-4:]):
        return False  # (spawn's `_wrap` is a spawned child's own entry, not its parent's join)
    file, func, _ = frames[-1]
    if func == "get" and _QUEUE_FILE.search(file):
        return True
    return _does(frames[-1], _WAIT_FUNC, _WAIT_CODE)


# A function named for the write it does (`save`, `_legacy_save`, `save_checkpoint`,
# `write_table`), not one that also does something else first (`_train_and_save`); or the file
# system's own operations on a path, in the modules that do them (shutil's `rmtree`,
# `copyfile`, `move`; os's `makedirs`, `remove`, `rename`, `replace`; pathlib's), which fail on a
# read-only, full or vanished mount (not a hook's `remove`, a dataclass's `replace`).
_WRITE_FUNC = re.compile(
    r"(?i)^_*(?:legacy_)?(?:save|write|dump|upload|serialize|persist|flush)(?:_|$)"
)
_FS_FUNC = re.compile(
    r"^(?:rmtree|copyfile|copytree|copy2?|move|makedirs|mkdir|unlink|remove|rename|replace|"
    r"rmdir|touch|write_bytes|write_text)$"
)
_FS_FILE = re.compile(r"[/\\](?:os|shutil|pathlib|genericpath|posixpath|ntpath)\.py$")
_WRITE_CODE = re.compile(
    r"(?i)\b(?:torch|np|numpy|jnp|tf\.io|joblib|pickle)\.(?:save|dump)\w*\(|"
    r"\b_?(?:legacy_)?save(?:_checkpoint|_model|_state|_pretrained|_weights|_network|_file)?\(|"
    r"\.(?:write|flush|save_pretrained|save_state|save_checkpoint|upload\w*)\(|"
    r"\bshutil\.(?:rmtree|copy\w*|move)\(|"
    r"\bos\.(?:makedirs|mkdir|remove|unlink|rename|replace|rmdir)\("
)


def cut_write(frames: list[Frame]) -> bool:
    """Whether a cut traceback's two innermost frames were writing a checkpoint or file, or
    changing the file system (removing, moving, making a directory)."""
    return any(
        _does(f, _WRITE_FUNC, _WRITE_CODE)
        or bool(f[1] and _FS_FUNC.match(f[1]) and _FS_FILE.search(f[0]))
        for f in frames[-2:]
    )


# A module that allocates device memory (vLLM's `device_allocator/cumem.py`, a framework's
# `caching_allocator.py`), or a function that maps memory back or wakes an engine that does.
_ALLOC_FILE = re.compile(
    r"(?i)[/\\](?:device_allocator[/\\]\w+|(?:\w*_)?alloc(?:ator)?(?:_\w*)?)\.py$"
)
_ALLOC_FUNC = re.compile(r"^_*(?:wake_up|create_and_map|\w*malloc\w*)$")


def cut_alloc(frames: list[Frame]) -> bool:
    """Whether a cut traceback's innermost frame allocates device memory (an allocator's
    module, or a function that maps memory back)."""
    if not frames:
        return False
    file, func, _ = frames[-1]
    return bool(_ALLOC_FILE.search(file) or (func and _ALLOC_FUNC.match(func)))


# A traceback the log cuts before its error line, raised while the run talked to a server: an
# HTTP client's or a socket's module (requests, urllib3, http.client, aiohttp, httpx, grpc, the
# clouds' SDKs, torch's rendezvous creating its store), or a code line that sends a request.
# The error it hides is most often the network's (a timeout, a refused or dropped connection, a
# server's 5xx).
_NET_FILE = re.compile(
    r"[/\\](?:requests|urllib3|httpx|httpcore|aiohttp|grpc|botocore|boto3|websocket|"
    r"websockets)[/\\]|[/\\](?:http[/\\]client|socket|ssl|urllib[/\\]request)\.py$|"
    r"[/\\](?:rest_utils|rest_store|_http|http_client)\.py$|"
    # torch's rendezvous, creating the store (binding or reaching MASTER_ADDR:MASTER_PORT)
    r"[/\\]torch[/\\]distributed[/\\]rendezvous\.py$"
)
# (not a bare `connect`: sqlite3's, a pipe's; not multiprocessing's connection.py)
_NET_FUNC = re.compile(
    r"^_*(?:urlopen|http_request|call_endpoint|make_request|send_request|getresponse|"
    r"create_connection)$"
)
_NET_CODE = re.compile(
    r"\brequests\.(?:get|post|put|head|request)\(|\burlopen\(|\.getresponse\(|"
    r"\b(?:http_)?request\(|\bcall_endpoint\(|\bsock(?:et)?\.connect\(|"
    # (a response's check of its status: the server answered with an error, W&B's file stream)
    r"\bcreate_connection\(|\.raise_for_status\("
)


def cut_net(frames: list[Frame]) -> bool:
    """Whether a cut traceback's innermost frame is in a network client's module, or one of its
    two innermost frames sends a request (not a server's handler calling the code: a frame of
    grpc's server above the innermost)."""
    if frames and _NET_FILE.search(frames[-1][0]):
        return True
    return any(_does(f, _NET_FUNC, _NET_CODE) for f in frames[-2:])


def _does(frame: Frame, func_rx: re.Pattern[str], code_rx: re.Pattern[str]) -> bool:
    """Whether a frame's function is named for what `func_rx` says, or its code line calls it."""
    _, func, code = frame
    return bool((func and func_rx.search(func)) or code_rx.search(code))


# Generic exceptions that, raised in a DataLoader worker from the dataset's own code, say more
# about a sample than about the training code: a missing key or field, an index out of range.
LONE_ID = "python.unclassified_line"  # the stand-in for an exception line without its traceback
GENERIC_IDS = frozenset({"python.bug", "python.runtime", "python.unclassified", LONE_ID})
_LIBRARY_PATHS = ("site-packages", "dist-packages", "/lib/python", "\\lib\\")

# A stand-in rule for an exception that ends a traceback and that no rule knows.
UNCLASSIFIED = _standin(
    "python.unclassified",
    Category.UNKNOWN,
    "The training raised an error that babysit has no rule for.",
    "Read the error and its traceback; add a rule to your team's rules file once you "
    "know what it means.",
    confidence=0.3,
    precedence=11,
    phase=(False, None),  # before the first training step: the set-up raised it, every time
)

# A line a program logged at its error level (a logger's `ERROR`, `FATAL` or `CRITICAL`, glog's
# `E0409 15:55:07.713 ...]` and `F...`, a `Check failed`, a line that starts `Error: ` or
# `Error running job: `; triage/logged.py reads them) that no rule knows and that is no Python
# exception: weaker than any other finding (the story only when there is none), and counted
# only when no log shows a training step (with steps, the program may have logged it and gone
# on: verdict.py drops it). Before the first step it is the set-up's, as any error there.
ERROR_RECORD = _standin(
    "log.error_record",
    Category.UNKNOWN,
    "The program logged an error that babysit has no rule for.",
    "Read the quoted error line and the lines around it; add a rule to your team's rules "
    "file once you know what it means.",
    confidence=0.2,
    role="consequence",  # the story only when nothing else is (a retry, a stall)
    precedence=9,  # below an exception line no rule knows (python.unclassified: 11)
    phase=(False, None),  # before the first training step: the set-up, every time
)


# The error a DataLoader worker raised in the dataset's own code (`__getitem__`, a transform,
# collate_fn): a generic exception (KeyError, IndexError, ValueError) there is about a sample.


def _data_rule(rid: str, explain: str, action: str, confidence: float) -> Rule:
    """A stand-in rule for a generic exception that the place it was raised makes `data`."""
    return _standin(
        rid, Category.DATA, explain, action, confidence=confidence, transient=False, suspect="data"
    )


DATA_IN_WORKER = _data_rule(
    "data.worker_exception",
    "A DataLoader worker failed on a sample: the dataset code raised an error while "
    "reading or preparing it (a missing key or field, an index out of range, a bad value).",
    "Find the sample from the quoted dataset frame and error; fix the data or make the "
    "dataset skip or report bad samples, then start again: a restart meets the same sample.",
    0.7,
)
DATA_IN_WORKER_CUT = _data_rule(
    "data.worker_exception",
    "A DataLoader worker failed on a sample (its own traceback is not in the log, only torch's "
    "'Caught ... in DataLoader worker process N'): the dataset code raised a generic error "
    "while reading or preparing a sample.",
    "Find the worker's own traceback (run with num_workers=0 to see it in the main process), "
    "fix the data or the dataset code, then start again: a restart meets the same sample.",
    0.5,
)


# The error a data pipeline raised on a sample, outside a DataLoader worker: the innermost frame
# is in a library that reads or decodes samples (webdataset, HF datasets, pyarrow, PIL, ...) or
# in the dataset code itself (a dataset or data-loader module); a generic exception there (a
# missing key, a bad value, an index out of range) is about the data, as in a worker.
_DATA_FILE = re.compile(
    r"[/\\](?:webdataset|datasets|pyarrow|PIL|decord|soundfile|librosa|torchaudio|imageio)"
    r"[/\\]|[/\\]torchvision[/\\](?:datasets|io)[/\\]"
    r"|[/\\]\w*(?:dataset|data_?loader|collate)\w*\.py$",
    re.IGNORECASE,
)


def data_frame(path: str) -> bool:
    """Whether a frame's file reads or decodes samples (not torch's own DataLoader machinery,
    whose errors are a worker's death: their rules say so)."""
    return bool(_DATA_FILE.search(path)) and not re.search(r"[/\\]torch[/\\]utils[/\\]", path)


# Errors about a value (not about the code's own names and types) raised while a batch was
# being fetched: a frame of the chain reads or prepares samples (a dataset's `__getitem__`, a
# DataLoader's fetch, and so a collate function it calls), and every frame below it is part of
# that fetch.
_SAMPLE_ERRORS = frozenset(
    {
        *("KeyError", "IndexError", "ValueError", "ZeroDivisionError", "EOFError"),
        *("AssertionError", "RuntimeError", "FileNotFoundError", "StopIteration"),
    }
)
_FETCH_FUNC = re.compile(r"^(?:__getitems?__|_next_data)$")
_FETCH_FILE = re.compile(r"[/\\]torch[/\\]utils[/\\]data[/\\]_utils[/\\]fetch\.py$")


def fetching(frame: Frame) -> bool:
    """Whether a frame reads or prepares samples: the DataLoader's fetch of a batch, or the
    run's own dataset code (a dataset's `__getitem__`, a dataset module); not a library's
    mapping (`os.environ[...]`, a config registry), nor a collate function of the run's own
    called outside a DataLoader (its KeyError is as often the code's as the data's)."""
    path, func, _ = frame
    if _FETCH_FILE.search(path) or (func == "_process_next_batch" and not own_file(path)):
        return True  # (the second: torch < 1.0 re-raising a worker's error in the main process)
    if not own_file(path) or path.startswith("<frozen "):  # the standard library's, frozen
        return False
    return bool(func and _FETCH_FUNC.match(func)) or bool(_DATA_FILE.search(path))


def fetched(chain: list[Frame]) -> bool:
    """Whether a traceback's chain (outermost first) passes through a frame that reads or
    prepares samples, outside any object's construction: a lookup while a dataset or a sampler
    is being built (`__init__` above it) is the set-up's, as a key the code expects and the
    data does not hold."""
    for frame in chain:
        if frame[1] == "__init__":
            return False
        if fetching(frame):
            return True
    return False


DATA_IN_READER = _data_rule(
    "data.reader_exception",
    "The data pipeline failed on a sample: the code that reads or decodes the data raised "
    "an error (a missing field, a duplicate or malformed entry, a bad value).",
    "Find the sample from the quoted frame and error; fix or drop it (or make the dataset "
    "skip bad samples), then start again: a restart meets the same sample.",
    0.6,
)


def own_file(path: str) -> bool:
    return not any(lib in path for lib in _LIBRARY_PATHS)


# A process that multiprocessing's spawn (or forkserver) was starting dies reading its start-up
# data from its parent (`multiprocessing/spawn.py`, `_main`: `reduction.pickle.load(from_parent)`
# raising `EOFError: Ran out of input` or `pickle data was truncated`): the parent died or closed
# the pipe first. Its error says nothing of its own; the parent's does.
SPAWN_ORPHAN = _standin(
    "launcher.spawn_orphan",
    Category.UNKNOWN,
    "A process that multiprocessing was starting could not read its start-up data: its "
    "parent had died or closed the pipe first.",
    "Find the parent's own error (the main process or a rank, above or in its own log); "
    "this one follows from it.",
    confidence=0.3,
    role="consequence",
)
_SPAWN_FILE = re.compile(r"[/\\]multiprocessing[/\\]spawn\.py$")


def spawn_start(
    path: str, func: str | None, exc_type: str | None, body: str, lines: list[tuple[int, str]]
) -> bool:
    """Whether a traceback (its innermost frame's `path` and `func`, its `lines`) is a spawned
    process finding its parent's pipe closed: its innermost frame reads the start-up data and
    the data ended (not an error of the data itself, such as a class the child cannot import:
    that one is the code's). The frame is spawn's `_main`, or the statement it raised in is
    spawn's read of the data: the parent's and the child's tracebacks interleaved line by line
    on one console (Windows) leave the frame above it another's."""
    if exc_type != "EOFError" and "pickle data was truncated" not in body:
        return False
    if func == "_main" and _SPAWN_FILE.search(path):
        return True
    where = frames(lines)
    return bool(where) and where[-1][2].endswith("reduction.pickle.load(from_parent)")


class Raised(Protocol):
    """Where a traceback says its exception was raised (the engine's traceback state)."""

    @property
    def lines(self) -> list[tuple[int, str]]: ...  # (line number, text), header first
    @property
    def file(self) -> str: ...  # the innermost frame's file
    @property
    def func(self) -> str | None: ...  # the innermost frame's function
    @property
    def worker(self) -> bool: ...  # a DataLoader worker's own traceback, quoted by its wrapper
    @property
    def own(self) -> bool: ...  # holds a frame outside the standard library and site-packages


def placed(rule: Rule, tb: Raised | None, exc_type: str | None, body: str) -> Rule:
    """The rule of an exception that ends traceback `tb`, knowing where it was raised: a
    generic one (a KeyError, a bare RuntimeError, one no rule knows) is about a sample in a
    DataLoader worker's own dataset code, in a reader's, or, when it is about a value, anywhere
    below the fetch of a batch (DATA_IN_WORKER, DATA_IN_READER); any
    one in a process that spawn was starting is its parent's closed pipe (SPAWN_ORPHAN, not a
    checkpoint's `Ran out of input`); a Ctrl-C in a wait, a run stuck there (INTERRUPTED_WAIT), and
    anywhere else a run stopped by hand (INTERRUPTED)."""
    if tb is None:
        return rule
    if spawn_start(tb.file, tb.func, exc_type, body, tb.lines):
        return SPAWN_ORPHAN
    if exc_type == "KeyboardInterrupt":
        return INTERRUPTED_WAIT if cut_wait(frames(tb.lines)) else INTERRUPTED
    if rule.id not in GENERIC_IDS:
        return rule
    if tb.worker and tb.own:
        return DATA_IN_WORKER
    if data_frame(tb.file):
        return DATA_IN_READER
    if not tb.worker and exc_type in _SAMPLE_ERRORS and fetched(frames(tb.lines)):
        return DATA_IN_READER
    return rule


def cut_rule(lines: list[tuple[int, str]]) -> Rule:
    """The stand-in for a traceback cut before its exception line whose last lines name no
    error: a write's (CUT_WRITE), an allocation's (CUT_ALLOC), a wait's (CUT_WAIT), a request's
    (CUT_NET), or only where it was (CUT_TRACEBACK)."""
    where = frames(lines)
    if cut_write(where):
        return CUT_WRITE
    if cut_alloc(where):
        return CUT_ALLOC
    if cut_wait(where):
        return CUT_WAIT
    return CUT_NET if cut_net(where) else CUT_TRACEBACK
