"""Whether a line was logged at an error level and says what failed: the words of a logger, a
glog CHECK, a program's `Error: ...`, read when no rule knows the line (standins.ERROR_RECORD).

    error_record("2024-05-01 12:00:00 - trainer - ERROR - the config names 3 classes")  # True
    error_record("Namespace(log_level='ERROR', lr=0.0001)")                              # False

Pure: a line in, a yes or no out. The engine asks only about lines that no rule matched and that
are no Python exception; what such a finding weighs is verdict.py's.
"""

from __future__ import annotations

import re

from babysit.triage.anatomy import ANSI, LAUNCHER_PREFIX, RAY_LABEL

# A logger's level word in capitals where a logger puts it (the line's start, after blanks too:
# rich's handler leaves the time's column blank under a line of the same second, `[ERROR]`, `- ERROR
# -`, `| ERROR |`, a tab, after a date or a logger's name: `2024-05-01 12:00:00 ERROR ...`,
# `fedbiomed ERROR - ...`), glog's E and F lines (a real month: not absl's dateless `E0000
# 00:00:1721223344`, TensorFlow's chatter), a CHECK's failure, or the line's first words (`Error:
# ...`, `Fatal error: ...`, `Error running job: ...`, `Training error: ...`; not a metric's
# `Validation error: 0.12`, nor a setting's `error handling: strict`). glog since 0.6 puts the
# year first: `F20220801 07:29:34.701110 ...]`. c10's (torch's and Caffe2's C++) puts the level
# and the source in brackets: `[E net_dag.cc:188] Exception from operator chain ...`; k2's (under
# icefall) the level alone: `[F] /k2/k2/csrc/host_shim.cu:31:k2host::Fsa ... Check failed: ...`.
# TensorFlow's C++ (and XLA's) puts the date first: `2023-09-19 02:13:08.192277: F tensorflow/tsl/
# platform/statusor.cc:33] ...`, its fatal lines only (its `E` lines are mostly start-up chatter:
# `Unable to register cuDNN factory`). R names the call that failed: `Error in nn_mse_loss(output,
# target) : unused argument (target)`, and when the call is long, alone on its line with the
# message on the next (`Error in mxnet::mx.mlp(data = x, label = y, ...  : `, then `  object
# 'mx.metric.accuracy' not found`): _R_CALL, a call being what it names (a bracket, a `$` or a
# `::`), not words (`Error in epoch 3 :`).
_LEVEL = re.compile(
    r"(?:^\s*|[\[|\t]|[\w\]):.]\s|\s-\s)(?:ERROR|FATAL|CRITICAL)"
    r"(?![\w./'\")=-]| (?:rate|count|metric)\b)"
    r"|^\W{0,3}[EF](?:(?:19|20)\d\d)?(?:0[1-9]|1[0-2])\d\d \d\d:\d\d:\d\d"
    r"|^\W{0,3}\[[EF] [\w./+-]+\.\w{1,4}:\d+\] "
    r"|^\W{0,3}\[[EF]\] [\w./+-]+\.\w{1,4}:\d+:"
    r"|^\W{0,3}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?: F [\w./+-]+\.\w{1,4}:\d+\] "
    r"|^\W{0,3}Error in \S[^\n]{0,200}? : \S"
    r"|(?:^|[\]:]\s*)Check [Ff]ailed\b"
    r"|^\W{0,3}(?:[A-Za-z]+ )?(?:Fatal )?(?:[Ee]rror|ERROR)"
    r"(?! (?:handling|rate|bound|threshold|tolerance|level|count|code|margin|mode|policy|metric"
    r"|function|type)\b)"
    r"(?: [a-z]+){0,2}:\s(?!\s*[-+]?(?:\d|nan\b|inf\b))"
)
_R_CALL = re.compile(r"^\W{0,3}Error in (?=[^\n]*?(?:[(\[$]|::))\S[^\n]{0,200}? :\s*$")
# Not a count or a summary of none (`ERROR SUMMARY: 0 errors`, `0 errors`), a level named as a
# setting (`log_level='ERROR'`, `set_verbosity(ERROR)`), a warning that mentions one, what a
# program says it went on after (pip's note on its dependency resolver, ld.so's LD_PRELOAD `...
# cannot be preloaded ...: ignored.`, an optional dependency, a dashboard, a retry: a last failure
# says so by ending the log, triage/stall.py; a sample it skips, a fallback, `continuing`), a
# tracker's complaint about its own uploads (`wandb: ERROR Dropped streaming file chunk`), nor a
# line that points elsewhere (`Please check its log.`, `See stack trace for the root cause.`).
_NOT_AN_ERROR = re.compile(
    r"(?i)\b(?:no|0|zero) errors?\b|ERROR SUMMARY|pip's dependency resolver"
    r"|log[_ ]?level|\blevel\s*[=:(]|verbosity"
    r"|\b(?:\w*warning|warn|info|debug)\b[^\n]*\b(?:error|fatal|critical)\b"
    r"|\bignored\W*$|\b(?:optional|dashboard)\b|^\W*wandb: ERROR"
    r"|\bretry(?:ing)?\b|\bwill retry\b"
    r"|\bskipping\b|\bcontinuing\b|\b(?:will )?continue with\b|\bfalling back\b|\bignoring\b"
    r"|\bcheck (?:its|the|their) logs?\W*$"
    r"|\bsee (?:the )?(?:stack ?trace|traceback|logs?|above|below)\b"
)
# Nor a line that only reports a failure elsewhere, with no word of what it was: a launcher's or
# a scheduler's summary (`Compute Failed`, `EngineCore encountered a fatal error.`: four words at
# most, with no path, quote or name holding a number, a failure's verb last), a process, a
# worker, a container or a job that failed (`Container failed !!!`, `main process disappeared!`),
# or a header whose message follows (`[ERROR] [actor_train-1 1 / 8][PID 18175]`).
_ENDED = r"(?:failed|aborted|died|disappeared|terminated|exited"
_REPORT_ONLY = re.compile(rf"(?i)\b{_ENDED}|fatal error)\W*$")
_REPORTED = re.compile(
    r"(?i)\b(?:(?:sub)?process(?:es)?|workers?|containers?|jobs?|trainers?|tasks?|child|ranks?|"
    rf"nodes?|replicas?|pods?)\b[^\n]{{0,40}}\b{_ENDED}|crashed)\W*$"
)
_BRACKETED = re.compile(r"\[[^\][]*\]|\([^()]*\)")


def _own_words(text: str) -> str:
    """The line as the program printed it: without colours, nor a launcher's label of its rank
    (torchrun's, MPI's, srun's), nor Ray's of the actor that printed it (`(RolloutWorker
    pid=8848) Error: File 'nets/4x4.net.xml' is not accessible`)."""
    if "\x1b" in text:
        text = ANSI.sub("", text)
    launcher = LAUNCHER_PREFIX.match(text)
    if launcher is not None:
        text = text[launcher.end() :]
    ray = RAY_LABEL.match(text) if text.startswith("(") else None
    return text if ray is None else text[ray.end() :]


def went_on(text: str) -> bool:
    """Whether a line says the program went on after it, or that it is no error of the run: a
    warning that mentions an error, a retry, a skipped sample, a fallback, a tracker's complaint
    about its own uploads, a setting, a count of none (what error_record never counts)."""
    return _NOT_AN_ERROR.search(_own_words(text)) is not None


def error_record(text: str) -> bool:
    """Whether a line (its prefixes too: glog's and vLLM's carry the level) was logged at an
    error level, and says what failed."""
    text = _own_words(text)
    if _R_CALL.search(text):
        return _NOT_AN_ERROR.search(text) is None
    m = _LEVEL.search(text)
    if m is None or _NOT_AN_ERROR.search(text):
        return False
    said = _BRACKETED.sub("", text[m.end() :])
    if not any(c.isalpha() for c in said) or said.lstrip().startswith("|"):
        return False  # only more labels in brackets (a header whose message follows), a table
    if _REPORTED.search(said):
        return False  # a process, a worker, a job that failed: its own error is elsewhere
    # A failure's verb last and few words with nothing particular in them (no path, no quote, no
    # name with a number): a report of one, not its words (a date or a time does not count).
    words = [w for w in said.split() if any(c.isalpha() for c in w)]
    particular = any(any(c in "/\\'\"`" or c.isdigit() for c in w) for w in words)
    return not (_REPORT_ONLY.search(said) and len(words) <= 4 and not particular)
