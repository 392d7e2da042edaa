"""The stand-in rules that triage applies where the rules file has none, and the choice of one
by where a traceback says its exception was raised: an exception no rule knows (UNCLASSIFIED), a
generic exception that the place it was raised makes `data` (a DataLoader worker's sample, a
reader's), a Ctrl-C in a wait, an I/O error raised by a print (the terminal gone) or a mount's
errno raised by a write (the storage), and a DataLoader worker's error whose own traceback the
log cut.

    rule = placed(UNCLASSIFIED, traceback, "KeyError", "KeyError: 'label'")  # DATA_IN_WORKER...
    rule = worker_cut(wrapper_rule, "FileNotFoundError", request=False)  # MISSING_IN_WORKER_CUT

What the frames say (a wait, a write, a sample's fetch) is read in frames.py; what a traceback
cut before its exception line raised is cuts.py's; the rules are knowledge.py's standin().
"""

from __future__ import annotations

import re
from typing import Protocol

from babysit.records import Category
from babysit.triage.cuts import CUT_NET
from babysit.triage.frames import (
    SAMPLE_ERRORS,
    cut_wait,
    cut_write,
    data_frame,
    fetched,
    frames,
    importing,
    pipe_closed,
    printed,
    spawn_start,
    writing,
)
from babysit.triage.knowledge import PRECEDENCE, Rule, standin

# An OSError that no rule knows, a mount's errno (`[Errno 107] Transport endpoint is not
# connected`, `[Errno 121] Remote I/O error`), raised while writing a checkpoint or file: the
# storage failed the write.
WRITE_FAILED = standin(
    "fs.write_failed",
    Category.FILESYSTEM_IO,
    "The storage failed a write: the run raised an operating-system error while writing a "
    "checkpoint or file (a network or FUSE mount that went away, a failing disk, a quota)",
    "Check the filesystem the run writes to (that the mount is alive: ls it, df -h DIR, dmesg "
    "on the node); then resume from the last complete checkpoint (a half-written one may be "
    "corrupt).",
    confidence=0.5,
    suspect="filesystem",
)
# The same where the filesystem lacks the call the write made (ENOSYS, EOPNOTSUPP: a lock on
# Lustre without flock, a hard link on an object-store or FUSE mount): every restart meets it.
WRITE_UNSUPPORTED = standin(
    "fs.write_unsupported",
    Category.FILESYSTEM_IO,
    "The filesystem the run writes to does not support a call the write made (a file lock, a "
    "hard link, a rename over a file: a network, object-store or FUSE mount that lacks it)",
    "Write the checkpoints or files to a filesystem that supports the call (a local disk, then "
    "copy), or turn the call off (HDF5_USE_FILE_LOCKING=FALSE for HDF5's locks), then start "
    "again: a restart on the same mount meets it again.",
    confidence=0.5,
    transient=False,
    suspect="filesystem",
)
_OS_ERRORS = frozenset({"OSError", "IOError"})
# The errnos a mount gives when it, not the path or the call, failed: ENOTCONN (a FUSE daemon
# gone), ECONNABORTED (sshfs's connection dropped), EHOSTDOWN, EREMOTEIO. Not an invalid name's or
# a cross-device link's (the code's).
_MOUNT_ERRNO = re.compile(r"\[Errno (?:103|107|112|121)\]")
_UNSUPPORTED_ERRNO = re.compile(r"\[Errno (?:38|95)\]")
# A person's Ctrl-C (KeyboardInterrupt) that ends a traceback whose innermost frame waited: the run
# was stuck there, and these are where it waited.
INTERRUPTED_WAIT = standin(
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
INTERRUPTED = standin(
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
# Generic exceptions that, raised in a DataLoader worker from the dataset's own code, say more
# about a sample than about the training code: a missing key or field, an index out of range.
LONE_ID = "python.unclassified_line"  # the stand-in for an exception line without its traceback
GENERIC_IDS = frozenset({"python.bug", "python.runtime", "python.unclassified", LONE_ID})

# A stand-in rule for an exception that ends a traceback and that no rule knows.
UNCLASSIFIED = standin(
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
ERROR_RECORD = standin(
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
    return standin(
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
# A file a DataLoader worker did not find, its own traceback (which names the path) cut from the
# log: torch's wrapper (`FileNotFoundError: Caught FileNotFoundError in DataLoader worker process
# 0.`; before 1.0, `FileNotFoundError: Traceback (most recent call last):` and the worker's
# frames) names none, and a worker opens the dataset's files, not the run's config or checkpoint.
# Not a worker's PermissionError: a cache or /dev/shm as often as a sample.
_WORKER_MISSING = frozenset({"FileNotFoundError", "NotADirectoryError"})
MISSING_IN_WORKER_CUT = _data_rule(
    "data.worker_missing_file",
    "A DataLoader worker could not find a file it opened (its own traceback, which names the "
    "path, is not in the log, only torch's 'Caught FileNotFoundError in DataLoader worker "
    "process N'): a sample, an annotation or a shard of the dataset is missing.",
    "Find the path in the worker's own error (run with num_workers=0 to see it in the main "
    "process); check that the dataset is downloaded and laid out where the config points, on "
    "every node, then restart.",
    0.5,
)


DATA_IN_READER = _data_rule(
    "data.reader_exception",
    "The data pipeline failed on a sample: the code that reads or decodes the data raised "
    "an error (a missing field, a duplicate or malformed entry, a bad value).",
    "Find the sample from the quoted frame and error; fix or drop it (or make the dataset "
    "skip bad samples), then start again: a restart meets the same sample.",
    0.6,
)


# A division by the length of a dataset or its loader that was zero (`ZeroDivisionError` raised
# by `self.step // len(self.dataset)`, `loss / len(self.valid_dataloader)`): no sample to train or
# validate on. The name must end in what it holds (`len(train_loader)`, `len(val_files)`,
# `len(train_data)`), not `len(norms)` nor `len(metadata)`; cast or not (`float(len(val_files))`),
# or in a product (`/ (len(loader) * batch_size)`). (A `%` that formats a string on the same line
# reads the same: rare beside a division by zero.)
_EMPTY_DIVISOR = re.compile(
    r"[/%]\s*\(?\s*(?:(?:float|int)\(\s*)?len\(\s*(?:[\w.]+\.)?"
    r"(?i:\w*(?:loader|dataset|samples|examples|images|files)|(?:\w*_)?data)s?\s*\)"
)
EMPTY_DIVISOR = _data_rule(
    "data.empty_divisor",
    "The dataset is empty: the code divided by its length (or its loader's), which was zero.",
    "Check what the data config points at (the path or glob, the split's name, a filter that "
    "drops every sample, a batch size larger than the set with drop_last) and that the files "
    "are there on every node, then restart.",
    0.6,
)

# A file the run writes into a folder that is not there (`FileNotFoundError: [Errno 2] No such
# file or directory: 'samples/epoch_1.png'`, raised by PIL's save or an `open(..., "w")`): the
# configuration's output path, though its name may look like a dataset's (data.missing_file).
OUTPUT_DIR_MISSING = standin(
    "code.output_dir_missing",
    Category.USER_CODE,
    "The run could not create a file it writes (a sample, a prediction, a log or a "
    "checkpoint): the folder it writes into is missing.",
    "Create the folder the message names (or fix the output path the config gives it), then "
    "start again.",
    confidence=0.7,
    transient=False,
    suspect="config",
)


# A process that multiprocessing's spawn (or forkserver) was starting dies reading its start-up
# data from its parent (`multiprocessing/spawn.py`, `_main`: `reduction.pickle.load(from_parent)`
# raising `EOFError: Ran out of input` or `pickle data was truncated`): the parent died or closed
# the pipe first. Its error says nothing of its own; the parent's does.
SPAWN_ORPHAN = standin(
    "launcher.spawn_orphan",
    Category.UNKNOWN,
    "A process that multiprocessing was starting could not read its start-up data: its "
    "parent had died or closed the pipe first.",
    "Find the parent's own error (the main process or a rank, above or in its own log); "
    "this one follows from it.",
    confidence=0.3,
    role="consequence",
)


# A process that waited on its pipe to another process for a message and found it closed
# (`EOFError` raised by multiprocessing's Connection.recv: Stable-Baselines3's SubprocVecEnv,
# gymnasium's AsyncVectorEnv, a pool's worker, or a worker reading its parent's commands): the
# process at the other end died first, and its own error says why.
PIPE_CLOSED = standin(
    "launcher.pipe_closed",
    Category.UNKNOWN,
    "A process waited on its pipe to another process (a vectorised environment's worker, a "
    "pool's worker, or its parent) and found it closed: the other process had died first.",
    "Find the other process's own error (above, or in its own log: an environment that "
    "crashed, a worker killed for memory, by the OOM killer or a signal); this one follows "
    "from it. Run the environment in the main process (DummyVecEnv, num_envs=1) to see it.",
    confidence=0.3,
    role="consequence",
    phase=(False, None),  # before the first training step: an environment's set-up, every time
)


# An I/O error (EIO) raised by a print to the terminal: the terminal the job was started from (an
# ssh session, a window) is gone, and the job wrote to it; no disk is involved. Python raises
# `OSError: [Errno 5] Input/output error` from the print that follows the hang-up.
# (the error's message without a path: `Input/output error: '/mnt/gcs/dataset'` was a read that
# the print's arguments made, on a mount)
_EIO_ALONE = re.compile(r"Input/output error\W*$")
TERMINAL_GONE = standin(
    "launcher.terminal_gone",
    Category.USER_CODE,
    "A print to the job's terminal failed with an I/O error (EIO), no disk's: the terminal "
    "it was started from (an ssh session, a closed window) is gone, and the job still "
    "printed to it",
    "Start the job detached from any terminal, its output sent to a file (nohup python "
    "train.py > train.log 2>&1 &, tmux or screen, or the scheduler), then restart from the "
    "last checkpoint.",
    confidence=0.6,
    transient=False,
    suspect="config",
)


# An exception that says the code is wrong wherever it was raised: a name it never defined, an
# attribute an object of its own lacks (`AttributeError: 'Config' object has no attribute
# 'vis_pointer'`, a dataset's `... object has no attribute 'cache'`). Not a None's (`'NoneType'
# object has no attribute 'shape'`: an image that failed to load), nor a float's string method
# (`'float' object has no attribute 'lower'`: pandas' NaN in a text column): the sample's.
_CODE_SLIPS = frozenset({"NameError", "UnboundLocalError", "AttributeError"})
_NONE_ATTR = re.compile(
    r"'NoneType' object has no attribute|'float' object has no attribute "
    r"'(?:lower|upper|split|strip|encode|replace|startswith|endswith)'"
)


def _code_slip(exc_type: str | None, body: str) -> bool:
    """Whether an exception is the code's own slip even in a dataset's code (_CODE_SLIPS)."""
    return exc_type in _CODE_SLIPS and not _NONE_ATTR.search(body)


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
    """The rule of an exception that ends traceback `tb`, knowing where it was raised:
    - any exception in a process that spawn was starting: its parent's closed pipe
      (SPAWN_ORPHAN, not a checkpoint's `Ran out of input`);
    - an EOFError raised as a process waited on its pipe to another: the other's death
      (PIPE_CLOSED);
    - a Ctrl-C in a wait: a run stuck there (INTERRUPTED_WAIT); anywhere else, a run stopped by
      hand (INTERRUPTED);
    - an I/O error raised by a print to the terminal: a terminal that is gone (TERMINAL_GONE),
      not a disk;
    - a dataset's file the run was writing: its output folder's (OUTPUT_DIR_MISSING);
    - a generic one (a KeyError, a bare RuntimeError, one no rule knows), unless the code's own
      slip (_CODE_SLIPS): a mount's errno or a call the mount lacks, raised by a write
      (WRITE_FAILED, WRITE_UNSUPPORTED); a division by a dataset's length, an empty one
      (EMPTY_DIVISOR); about a sample in a DataLoader worker's own dataset code, in a reader's,
      or, when it is about a value, anywhere below the fetch of a batch (DATA_IN_WORKER,
      DATA_IN_READER)."""
    if tb is None:
        return rule
    chain = frames(tb.lines)
    if spawn_start(tb.file, tb.func, exc_type, body, tb.lines):
        return SPAWN_ORPHAN
    if pipe_closed(tb.file, tb.func, exc_type):
        return PIPE_CLOSED
    if exc_type == "KeyboardInterrupt":
        return INTERRUPTED_WAIT if cut_wait(chain) else INTERRUPTED
    if rule.id == "fs.eio" and _EIO_ALONE.search(body) and printed(chain):
        return TERMINAL_GONE
    if rule.id == "data.missing_file":
        return OUTPUT_DIR_MISSING if writing(chain) else rule
    if rule.id not in GENERIC_IDS or _code_slip(exc_type, body):
        return rule
    if exc_type in _OS_ERRORS and cut_write(chain):
        if _MOUNT_ERRNO.search(body):
            return WRITE_FAILED
        if _UNSUPPORTED_ERRNO.search(body):
            return WRITE_UNSUPPORTED
    if exc_type == "ZeroDivisionError" and chain and _EMPTY_DIVISOR.search(chain[-1][2]):
        return EMPTY_DIVISOR
    if tb.worker and tb.own:
        return DATA_IN_WORKER
    if data_frame(tb.file) and not importing(chain):
        # (not a dataset module's own code run as it is imported: the set-up's, no sample yet)
        return DATA_IN_READER
    if not tb.worker and exc_type in SAMPLE_ERRORS and fetched(chain):
        return DATA_IN_READER
    return rule


def worker_cut(rule: Rule, exc_type: str | None, *, request: bool) -> Rule:
    """The rule of a DataLoader worker's wrapper (`KeyError: Caught KeyError in DataLoader worker
    process 3.`) whose worker's own error never came, its traceback cut from the log: a generic
    exception there is about a sample (DATA_IN_WORKER_CUT), or about a request when the worker's
    last frames were a network client's (`request`: a dataset streamed from a hub or a bucket,
    CUT_NET); a file not found there is a dataset's (MISSING_IN_WORKER_CUT), whatever rule its
    type met (python.config_path reads the run's own paths, and the wrapper names none); any
    other keeps its rule."""
    if rule.id in GENERIC_IDS:
        return CUT_NET if request else DATA_IN_WORKER_CUT
    if exc_type in _WORKER_MISSING:
        return MISSING_IN_WORKER_CUT
    return rule
