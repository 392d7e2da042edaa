"""What triage says of logs in which it found no error: `unknown`, and what is known (nothing
to read, a run that says it finished, a log that ends without a word), or `hang` where the log
shows one without an error line (its dated lines going on long after the last training step,
or the stacks of stuck processes at its end), and a weak `hang` where its last lines show no
sign at all that its process ended (stall.quiet); a weak `numerical` where its training's values
went NaN and stayed (nanend.py) or its loss jumped (lossjump.py), `network` or `hang` where it
ends retrying (stall.py).

    nothing_found(["rank0.log"], 12_000, "step 900 | loss 2.1")
    # -> Diagnosis(category=Category.UNKNOWN, summary="no error found in 12,000 lines of
    #              rank0.log: the log ends without an error (...)", confidence=0.1, ...)
    nothing_found(["rank0.log"], 12_000, "step 900 | loss 2.1", still=True)
    # -> Diagnosis(category=Category.HANG, summary="... its last lines show no sign that the
    #              process ended (...): most likely it hung there, unless ...", confidence=0.1)

Pure: no I/O, no clock.
"""

from __future__ import annotations

import re

from babysit.durations import format_duration
from babysit.records import Category, Diagnosis, Suspect
from babysit.triage.lossjump import Jump
from babysit.triage.nanend import NanEnd
from babysit.triage.stall import Ending, LockWait, Loop, Stall

_QUOTE_MAX = 220


def quote(text: str) -> str:
    """A line as a summary quotes it: its whitespace collapsed, at most 220 characters."""
    text = " ".join(text.split())
    return text if len(text) <= _QUOTE_MAX else text[: _QUOTE_MAX - 3] + "..."


# The last line of a run that ended on its own (no error, nothing to triage).
_FINISHED = re.compile(
    r"(?i)(?:training (?:is )?(?:complete|completed|finished|done)|finished training|"
    r"train(?:ing)? ended|exiting (?:normally|successfully)|all done|done training|"
    r"\bsucceeded\b|saved (?:the )?(?:final )?model|`Trainer\.fit` stopped|'train_runtime')"
)
_SILENT_END_ACTION = (
    "If the job is still running but silent, it hung: dump the ranks' stacks (py-spy dump "
    "--pid PID) before killing it, and restart. If it exited, it was probably killed from "
    "outside without a word (the kernel's OOM killer, a SIGKILL, a preemption or a time limit): "
    "ask the scheduler why (sacct -j JOBID -o State,ExitCode,Reason) and look at the node's "
    "kernel log (dmesg -T | grep -iE 'oom|xid') for OOM kills and GPU errors."
)
# The last line of a log that stopped while the ranks were still meeting (NCCL's set-up,
# Lightning's DDP start-up): where a rank or node that never joins leaves the others waiting.
_SETUP = re.compile(
    r"NCCL INFO|\[\d+\] (?:INFO|WARN) |Init COMPLETE|Launch mode|initializing ddp|"
    r"Initializing distributed|All distributed processes registered|init_process_group|"
    r"(?i:rendezvous)"
)
# The last line of a log that ends in stack dumps: a py-spy frame `    all_gather (torch/
# distributed/distributed_c10d.py:2345)` or thread `Thread 42 (idle): "MainThread"`, a gdb frame
# `#3  0x00007f... in cudaMemcpyAsync () from libcudart.so` (or the `    from /lib/libnccl.so.2`
# or `    at futex.c:57` that gdb wraps a long one's end to), a faulthandler frame `  File
# "train.py", line 88 in step`, Horovod's stall inspector list `Stalled ranks:`. Progress that
# stops with the stacks of stuck processes is a hang the log shows, not only an ending.
_STACKS_END = re.compile(
    r"^\s*[\w.<>]+ \([^()\s]+\.py:\d+\)$|^Thread (?:0x[0-9a-fA-F]+|\d+) \((?:idle|active)|"
    r"^#\d+\s+0x[0-9a-fA-F]+ in \S|^#\d+\s+\S+ \(.*\) at \S+:\d+$|^\s+(?:from /\S+|at \S+:\d+)$|"
    r'^\s*File "[^"]+", line \d+ in \S+$|(?i:^stalled (?:ranks|ops):?$)'
)
_EXTENSION_ACTION = (
    "Check that no build is still running (ninja or nvcc on the nodes), then delete the "
    "extension build's lock (or its whole build directory: under ~/.cache/torch_extensions, or "
    "$TORCH_EXTENSIONS_DIR, the folder of the op it loads, such as cpu_adam or fused_adam), which "
    "an earlier build that was killed left behind, and restart. If no lock is there, the build "
    "itself hangs: run it once alone (for DeepSpeed, pre-build the ops: DS_BUILD_OPS=1 pip "
    "install deepspeed), and give every node its own extensions directory if they share one over "
    "NFS."
)
_RANK_PREFIX = re.compile(r"^(?:\[[A-Za-z_]*\d+\]: ?|\[\d+,\d+\]<std(?:out|err)>:)")


def ending_tells(last_line: str, ending: Ending | None) -> bool:
    """Whether the log's end says more than that it ends (what nothing_found reads from it): the
    run says it finished, it ends in stacks, or `ending` (stall.ending_of: a stall, a loop of one
    line, values gone NaN, a loss that jumped, a wait for an extension build's lock)."""
    return (
        ending is not None
        or bool(_FINISHED.search(last_line))
        or bool(_STACKS_END.search(_RANK_PREFIX.sub("", last_line)))
    )


def nothing_found(
    files: list[str],
    lines: int,
    last_line: str,
    note: str = "",
    ending: Ending | None = None,
    untrained: bool = False,
    still: bool = False,
) -> Diagnosis:
    """No error in the logs: `unknown`, and say what is known: there is nothing to read, the
    run says it finished, or the log ends without an error (which a hung job leaves behind,
    and so does one killed from outside: the OOM killer, SIGKILL, a preemption). `hang` only
    when the log shows one: it ends in the stacks of stuck processes, or its dated lines went on
    long after its last training step (`ending`, a Stall from triage/stall.py). A log that ends
    retrying or waiting, one line again and again (`ending`, a Loop), waits for something that
    never came: `network` when the line names a server or a connection, else `hang`. A training
    loss that jumped before the log ended (`ending`, a Jump) is `numerical`, weak; so are values
    that went NaN in its last lines and stayed (`ending`, a NanEnd), not transient. A watchdog
    or NCCL timeout, or stacks earlier in the log, are a rule's finding and never come here.
    A log that stops where torch loads a JIT-built extension, no log showing its build
    (`ending`, a LockWait), waits for the build's lock: `hang`, weak, and not transient (a lock
    that a killed build left behind stays). A log that ends without a word and shows no
    training step (`untrained`) stopped in the set-up, which a restart repeats: `transient`
    False, suspect `config`. One whose last lines show no sign that its process ended (`still`:
    no exit, signal, kill, error or stop; see stall.quiet) most likely hung there: `hang`, weak (it
    may have been killed from outside without a word all the same)."""
    where = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    counted = "1 line" if lines == 1 else f"{lines:,} lines"
    if not files:
        where = "the input"
    action = _SILENT_END_ACTION
    category, confidence = Category.UNKNOWN, 0.1
    transient: bool | None = None
    last = _RANK_PREFIX.sub("", last_line)
    if lines == 0:
        summary = f"nothing to triage: {where} holds no text"
    elif not last_line:
        summary = f"no error found in {counted} of {where}: they hold only blank lines"
    elif isinstance(ending, NanEnd):
        # As numerical.nan's: a plain restart meets the same NaN at the same data. Before the
        # run's word that it finished: one that finished at NaN trained to nothing. (A log that
        # shows no step is read so too: most such logs print their steps in shapes that
        # blocks.first_progress does not know; a table of a dataframe's missing values at the end
        # of a set-up reads so as well, weakly, and never decides under `babysit run`: no rule.)
        category, confidence, transient = Category.NUMERICAL, 0.3, False
        summary = (
            f"no error found in {counted} of {where}, but {ending.count} of its last lines show "
            "the training's values at NaN: the loss (or a metric) went NaN and stayed so to the "
            f"end of the log; the last: {quote(ending.line)}"
        )
        action = (
            "Roll back to a checkpoint from before the first NaN and lower the learning rate (or "
            "use bf16, or clip the gradients); if it comes back at the same step, look at that "
            "batch. If the job was killed instead, ask the scheduler why (sacct -j JOBID -o "
            "State,ExitCode,Reason)."
        )
    elif _FINISHED.search(last_line):
        summary = (
            f"no error found in {counted} of {where}, and the run says it finished: "
            f"{quote(last_line)}"
        )
        action = (
            "Nothing failed in these logs. If the job was still reported as failed, ask the "
            "scheduler why (sacct -j JOBID -o State,ExitCode,Reason) and look at the node's "
            "kernel log (dmesg -T | grep -iE 'oom|xid'): something outside the training ended it."
        )
    elif isinstance(ending, Stall):
        category, confidence = Category.HANG, 0.4
        summary = (
            f"no error found in {counted} of {where}, and the log went on for "
            f"{'' if ending.exact else 'at least '}{format_duration(ending.seconds)} after the "
            "last training step without another one: progress stopped (the job hung); last "
            f"step: {quote(ending.step)}; last line: {quote(ending.last)}"
        )
        action = (
            "If the job is still running, dump the ranks' stacks (py-spy dump --pid PID) to see "
            "where they wait (a collective, a file system, a data loader), then restart from the "
            "last checkpoint; exclude a node if the same rank is stuck again."
        )
    elif _STACKS_END.search(last):
        category, confidence = Category.HANG, 0.4
        summary = (
            f"no error found in {counted} of {where}, and the log ends in the stacks of "
            "stuck processes (py-spy, gdb, faulthandler or Horovod's stall inspector): the job "
            f"hung; last line: {quote(last_line)}"
        )
        action = (
            "Compare the ranks' stacks: the rank that is not where the others wait (a "
            "collective, a barrier, a file lock) is the one stuck; restart, and exclude its "
            "node if it repeats."
        )
    elif isinstance(ending, LockWait):
        # Not a build killed midway (its lines would show): a wait for a lock, the same on the
        # next run until it goes.
        category, confidence, transient = Category.HANG, 0.3, False
        summary = (
            f"no error found in {counted} of {where}, and the log stops where torch loads a "
            "JIT-built C++/CUDA extension, with none of the build's own lines after it in any "
            "log: the ranks wait for the build's lock, which a build killed earlier leaves "
            f"behind (a restart waits there again); last line: {quote(ending.line)}"
        )
        action = _EXTENSION_ACTION
    elif isinstance(ending, Jump):
        category, confidence = Category.NUMERICAL, 0.3
        times = ending.after / ending.before
        ratio = f"x{times:.1f}" if times < 1000 else f"x{times:.2g}"
        if ending.negative:
            ratio += " in size"
        how = (
            f"climbed {ending.climb} logged steps in a row, from {ending.before:.4g}"
            if ending.climb
            else f"jumped from about {ending.before:.4g}"
        )
        summary = (
            f"no error found in {counted} of {where}, and the training loss {how} to "
            f"{'-' if ending.negative else ''}{ending.after:.4g} ({ratio}) before the log ended: "
            f"a loss spike or a divergence; the step: {quote(ending.line)}"
        )
        action = (
            "Roll back to a checkpoint from before the jump and skip the data of the steps around "
            "it (babysit run does this for a spike it sees), or lower the learning rate; if the "
            "loss jumps again at the same data, look at that batch. If the job was killed "
            "instead, ask the scheduler why (sacct -j JOBID -o State,ExitCode,Reason)."
        )
    elif isinstance(ending, Loop):
        category = Category.NETWORK if ending.remote else Category.HANG
        confidence = 0.3
        summary = (
            f"no error found in {counted} of {where}, and the log ends saying the same "
            f"thing {ending.count} times in a row, retrying or waiting for something that never "
            f"came{' (a server or a connection across the network)' if ending.remote else ''}: "
            f"{quote(ending.line)}"
        )
        action = (
            "Check that what it waits for is up and reachable from this node (the server, host "
            "or port the line names: curl or nc from the node; is the address in the config "
            "right, was the server started, does a firewall drop it?); restart once it answers."
            if ending.remote
            else "Find what it waits for (dump its stacks: py-spy dump --pid PID): another "
            "process, a file or lock, a worker that died; fix that, then restart."
        )
    else:
        # An ending without a word: whether the job hung or was killed from outside, the log
        # alone cannot prove. Where its last lines show no sign at all that the process ended
        # (`still`), a hang is the likelier (in the corpus, about 3 such logs of hangs for one
        # of a run killed without a word): weak, the action says both.
        if still:
            category, confidence = Category.HANG, 0.1
            their = "their" if len(files) > 1 else "its"
            summary = (
                f"no error found in {counted} of {where}, and {their} last lines show no sign "
                "that the process ended (no exit status, signal, kill, error or stop): most "
                "likely it hung there, unless it was killed from outside without a word; "
                f"last line: {quote(last_line)}"
            )
        else:
            summary = (
                f"no error found in {counted} of {where}: the log ends without an error "
                "(a hung job leaves it so, and so does one killed from outside without a word); "
                f"last line: {quote(last_line)}"
            )
        if _SETUP.search(last_line):
            summary += (
                "; it stops while the ranks were still setting up their communication (NCCL "
                "or DDP initialisation), where a rank or node that never joins leaves the "
                "others waiting: if the job is still running, that is where it hangs"
            )
        if untrained:
            # Most such logs in the corpus are a set-up that never got going (a hook, a path, a
            # library, a data directory, a rank that never joined), which a restart repeats.
            transient = False
            summary += (
                "; no training step shows before it, so it stopped in the set-up (the config, "
                "the environment, what the job loads or waits for), which a restart repeats"
            )
            action = (
                "It never reached its first training step: look for what the set-up waited for "
                "or could not find (the last line above, a path, a library, a rank or node that "
                "never joined), fix that, then restart. " + action
            )
    if note:
        summary += f" ({note})"
    kinds = {Category.NETWORK: "network", Category.NUMERICAL: "numerics"}
    named = kinds.get(category)
    suspect = Suspect(named or ("config" if transient is False else "unknown"))
    return Diagnosis(category, transient, suspect, summary, action, confidence=confidence)
