"""Take a log line apart: who printed it (rank, host, GPU), when, and what it says.

    anatomy("[rank3]:[E1206 18:44:12.715298 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog ...")
    # -> Anatomy(body="Watchdog ...", rank=3, host=None, gpu=None, ts=..., ts_kind="glog")

Prefixes come stacked in every order the launchers produce them: torchrun's `[rank3]:` and
`[default0]:`, srun `--label` (`3: `), mpirun (`[1,3]<stderr>:`), pdsh/DeepSpeed
(`worker-1: `), NCCL's `host:pid:tid [gpu] NCCL WARN`, glog (`E1206 18:44:12.715298 ...]`),
vLLM's logger (`ERROR 06-10 10:55:03 [core.py:459] `), Ray's actors (`(TaskRunner pid=7) `),
Determined's trial logs (`[2024-02-27T21:35:28Z] fa88a9df [rank=4] || `),
ISO and Python-logging timestamps, Slurm's `[2024-01-02T03:04:05.123]`, syslog
(`Jan  2 03:04:05 gpu-17 kernel: `) and dmesg (`[ 123.456789] `); and the marks of markdown that a
log pasted into an issue keeps (a quote's `> `, code's backticks around the line). Pure and
cheap: called only on the lines the scanner picked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timezone

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]")  # CSI, and a charset's (`tput sgr0`)
# CloudWatch's console (SageMaker's logs), copied as a table: `| 2024-11-28T07:42:14.532Z | ...`
_TABLE = re.compile(r" *\| (?=\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d)")
_BOLD = re.compile(r" *\*\*[^*\s]")  # markdown's bold opening a line's words (not `***`, `** `)
_TORCHRUN = re.compile(
    r"\[(?:rank(?P<rank>\d{1,6})|(?P<role>[A-Za-z_][\w-]{0,30}?)(?P<local>\d{1,4}))\]:"
)
_MPI = re.compile(r"\[\d+,(?P<rank>\d{1,6})\]<std(?:out|err)>:")
_SRUN = re.compile(r" {0,6}(?P<rank>\d{1,6}): ")


def _unnamed(p: re.Pattern[str]) -> str:
    """A pattern's text with its groups unnamed, to repeat it inside another."""
    return re.sub(r"\(\?P<\w+>", "(?:", p.pattern)


# The same three at a line's start, stacked (`[rank3]:`, `[1,3]<stderr>:`, `3: `): a launcher's
# label on what a rank printed, not the rank's own words (their groups unnamed, to repeat them).
LAUNCHER_PREFIX = re.compile(
    "(?:(?:{}) ?)+".format("|".join(_unnamed(p) for p in (_TORCHRUN, _MPI, _SRUN)))
)
# A paste's indentation before torchrun's or mpirun's label (a log quoted in an issue as an
# indented block: `\t[rank1]:   File "..."`): the label is the launcher's all the same.
_INDENTED_LABEL = re.compile(rf"[ \t]{{1,8}}(?={_unnamed(_TORCHRUN)}|{_unnamed(_MPI)})")
# A pdsh/DeepSpeed host label: must hold a digit or a hyphen, so `RuntimeError: ` is no host.
# Nor is an exception class whose name holds a digit (boto3's S3UploadFailedError), nor a network
# interface (`ib0: link down`), nor an Ascend CANN, HCCL or HCCP error code (`EZ9999: Inner
# Error!`, `EI0009: ...`, `EJ0001: ...`), nor a program naming itself before its message
# (`python3: can't open file`, `nvidia-smi: command not found`, `nvidia-container-cli: ...`,
# gcc's `collect2: error: ld returned 1 exit status`).
_HOST_LABEL = re.compile(
    r"(?!(?:ib|eth|eno|ens|enp|bond|mlx\d_)\d|E[ZIEJL]\d{4}: |E\d9999: )"
    r"(?!(?:python|pip|pypy)\d[\d.]*: |apt-get: |docker-compose: |collect2: "
    r"|nvidia-(?:smi|container-cli|docker|persistenced|modprobe): "
    r"|ssh-(?:keygen|add|agent|keyscan|copy-id): )"
    r"(?=[A-Za-z][\w.]{0,62}?[-\d])"  # holds a digit or a hyphen, found in bounded time
    r"(?P<host>[A-Za-z][\w.-]{0,62})"
    r"(?<!Error)(?<!Exception)(?<!Warning)(?<!Exit)(?<!Interrupt): "
)
# The same label where the host file names the nodes by address (DeepSpeed's pdsh, MPI):
# `10.0.3.7: [rank3]: ...`.
_IP_LABEL = re.compile(r"(?P<host>\d{1,3}(?:\.\d{1,3}){3}): ")
_NCCL = re.compile(
    r"(?P<host>[\w.-]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<gpu>\d+)\] (?:[\w./-]+[: ]\d+ )?(?=NCCL )"
)
# vLLM's logger, on every line of what it logs (a traceback's frames too): `ERROR 06-10
# 10:55:03 [core.py:459] ...`, older `INFO 02-18 17:39:47 llm_engine.py:72] ...` (no year).
_VLLM = re.compile(
    r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<mo>\d\d)-(?P<d>\d\d) "
    r"(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d(?:\.\d+)?) \[?[\w./-]+\.py:\d+\] ?"
)
_RAY_CPP = re.compile(r"(?P<level>[DIWEF]) \d+ \d+\] ")  # the level, pid and tid
# Determined's (HPE MLDE) trial logs, after their timestamp: the container's short id, the rank
# when the trial runs several, then `|| ` and the line as the process printed it
# (`[2024-02-27T21:35:28.893536Z] fa88a9df [rank=4] ||   File "train.py", line 3, in <module>`).
_DETERMINED = re.compile(r"[0-9a-f]{8}(?: \[rank=(?P<rank>\d{1,6})\])? \|\| ")
# Ray's label of the process that printed a line: an actor's or a task's, its name optional
# and holding colons or parentheses (`(MegatronTrainRayActor pid=19450, ip=10.0.0.7) `,
# `(pid=8848) `, `(ServeReplica:app:Model pid=7) `, `(MapBatches(fn) pid=7, ip=10.0.0.7) `,
# `(llama-qlora-fsdp, pid=17187) `), and its daemons' (`(raylet) `, `(autoscaler +2m3s) `).
RAY_LABEL = re.compile(
    r"\((?:\S+?(?:\([^()]*\))? )?pid=\d+(?:, ip=(?P<ip>[\d.]+))?\) "
    r"|\((?:raylet|autoscaler \+\S+)(?:, ip=(?P<ip2>[\d.]+))?\) "
)
# ctime, e.g. mpirun --timestamp-output: `Fri Aug 11 12:31:45 2023`
_CTIME = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +"
    r"(?P<d>\d{1,2}) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d) (?P<y>\d{4}) ?"
)
_GLOG = re.compile(
    # PyTorch's c10 logger prints the month unpadded: `E626` is June 26, `E1206` December 6;
    # glog since 0.6 the year before them: `F20220801 07:29:34.701110  2256 file.cc:42] `.
    r"\[?(?P<level>[IWEF])(?:\d{4}(?=\d{4} ))?(?P<mo>\d{1,2}?)(?P<d>\d\d) "
    r"(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d(?:\.\d+)?)"
    r"(?: +\d+)?(?: [\w./-]+:\d+)?\] ?"
)
# (and in double quotes, as some clusters' log exports print it: `"2023-08-09T09:46:00+08:00" `)
_ISO = re.compile(
    r"[\[\x22]?(?P<y>\d{4})-(?P<mo>\d\d)-(?P<d>\d\d)[T ](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"(?:[.,](?P<frac>\d{1,9}))?(?:Z|(?P<tz>[+-])(?P<tzh>\d\d):?(?P<tzm>\d\d))?"
    r"[\]\x22]?(?: - | \| |: | )?"
)
_MONTHS = {
    m: i
    for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)  # noqa: SIM905
}
_SYSLOG = re.compile(
    r"(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?P<d>\d{1,2}) "
    r"(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d) (?P<host>[\w.-]+) (?P<prog>kernel|\w+(?:\[\d+\])?): "
)
_DMESG = re.compile(r"\[ *\d+\.\d+\] |\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [^\]]{15,30}\] ")
# `[Rank 3]` (c10d), `[rank: 2]` (Lightning's rank_zero logger), and c10d's process-group
# forms `[PG 0 Rank 3]`, `[PG ID 0 PG GUID 0(default_pg) Rank 3]`: the global rank.
_RANK_IN_BODY = re.compile(
    r"\[(?:PG (?:ID )?\d{1,6} (?:PG GUID [\w()-]{1,64} )?)?"
    r"(?:Rank|rank|RANK):? ?(?P<rank>\d{1,6})\]:? ?"
)
# rsyslog's high-precision format puts the host and `kernel:` after an ISO timestamp.
_ISO_KERNEL = re.compile(r"(?P<host>[\w.-]{1,64}) kernel: ")
# The kubelet's container log files (CRI's format, what a collector tailing /var/log/containers
# reads): after the time, the stream and whether the line is whole (F) or a part (P):
# `2024-05-01T12:00:00.123456789Z stderr F RuntimeError: ...`.
_CRI = re.compile(r"(?:stdout|stderr) [FP] ")
# Docker Compose's label of the container that printed a line, padded to the longest of them:
# `trainer-1  | Traceback ...` (v2), `rasa_1      | ...` (v1).
_COMPOSE = re.compile(r"[A-Za-z0-9][\w.-]{0,62}?[-_]\d{1,4} +\|(?: |$)")
# The GPU driver's and the kernel's own words, whatever prefix the collector put before them.
_DRIVER = ("NVRM: ", "kernel: ")
# Older PyTorch glog without a date: `[E ProcessGroupNCCL.cpp:474] `; a bare pid: `[80746] `.
_GLOG_SHORT = re.compile(r"\[[IWEF] [\w./\\-]+:\d+\] ?|\[\d{1,8}\] ")


@dataclass(frozen=True, slots=True)
class Anatomy:
    body: str  # the line without its prefixes
    rank: int | None = None
    host: str | None = None
    gpu: str | None = None
    ts: float | None = None  # seconds; comparable only between lines of the same ts_kind
    ts_kind: str | None = None  # "iso" (absolute), "glog" or "syslog" (no year)
    warning: bool = False  # a glog warning (`[W socket.cpp:464]`): c10d's start-up chatter
    # Printed by the kernel or the GPU driver (a syslog `kernel:` line, a dmesg timestamp, an
    # `NVRM:` message), not by a training process: it sees a GPU fault before any process does.
    kernel: bool = False


def _iso(m: re.Match[str]) -> float | None:
    try:
        dt = datetime(
            int(m["y"]),
            int(m["mo"]),
            int(m["d"]),
            int(m["h"]),
            int(m["mi"]),
            int(m["s"]),
            tzinfo=timezone.utc,
        )
    except ValueError:
        return None
    frac = m["frac"]
    offset = 0.0
    if m["tz"]:
        offset = (int(m["tzh"]) * 3600 + int(m["tzm"]) * 60) * (1 if m["tz"] == "+" else -1)
    return dt.timestamp() - offset + (int(frac) / 10 ** len(frac) if frac else 0.0)


def _yearless(mo: int, d: int, h: str, mi: str, s: str) -> float:
    """Seconds since a fixed leap year's start: real calendar days, so that the time between two
    lines across a month's end is right (glog's `I0430 23:58:50` to `I0501 00:04:00`: 5 min)."""
    days = date(2000, mo, 1).toordinal() + d - 1  # an impossible day (Feb 30) still orders
    return ((days * 24 + int(h)) * 60 + int(mi)) * 60 + float(s)


def anatomy(text: str) -> Anatomy:
    """The line's prefixes read and removed; the rest is the body."""
    if "\x1b" in text:
        text = ANSI.sub("", text)
    rank: int | None = None
    host: str | None = None
    gpu: str | None = None
    ts: float | None = None
    kind: str | None = None
    warning = False
    kernel = False
    pos = 0
    quoted = bold = table = False
    logged = False  # a logger's own header read: what follows is its message, not a host label
    for _ in range(6):  # prefixes stack: `[rank3]:[E1206 ...] [Rank 3] ...`
        if pos >= len(text):
            break
        c = text[pos]
        if pos == 0 and c in " \t":
            m = _INDENTED_LABEL.match(text)
            if m:
                pos = m.end()
                continue
        if pos == 0 and c.isalnum() and text.find("| ", 0, 72) > 0:  # no copy of the line
            m = _COMPOSE.match(text)
            if m:
                pos = m.end()
                continue
        if c == ">" and text.startswith("> ", pos):  # a markdown quote's mark, pasted with it
            pos += 2
            continue
        if c == "`" and not quoted:  # markdown's code marks around a pasted line
            quoted = True
            pos += 3 if text.startswith("```", pos) else 1
            continue
        if c in " |" and not table:
            m = _TABLE.match(text, pos)
            if m:
                table = True  # a console's table of log events, its time in the first column
                pos = m.end()
                continue
        if c in " *" and not bold:
            m = _BOLD.match(text, pos)
            if m and text.rstrip().endswith("**"):
                bold = True  # markdown's bold around a pasted line (`**Killed**`), not glog's `***`
                pos = m.end() - 1
                continue
        if c == "[":
            m = _TORCHRUN.match(text, pos)
            if m:
                if m["rank"] is not None:
                    rank = int(m["rank"])
                elif rank is None:
                    rank = int(m["local"])
                pos = m.end()
                if text[pos : pos + 1] == " ":
                    pos += (
                        1  # torchrun's Python-side prefix is `[rank3]: ` (a space, then the line)
                    )
                continue
            m = _MPI.match(text, pos)
            if m:
                rank = int(m["rank"])
                pos = m.end()
                continue
        if c.isdigit() or c in ' ["':
            m = _ISO.match(text, pos)
            if m:
                ts, kind = _iso(m), "iso"
                pos = m.end()
                k = _ISO_KERNEL.match(text, pos)
                if k:
                    host, kernel, pos = k["host"], True, k.end()
                elif k := _CRI.match(text, pos):
                    pos = k.end()
                continue
            if c != "[":
                m = _SRUN.match(text, pos)
                if m:
                    rank = int(m["rank"]) if rank is None else rank
                    pos = m.end()
                    continue
            m = _DMESG.match(text, pos)
            if m:
                kernel = True
                pos = m.end()
                continue
        if c in "IWEF[" and pos + 5 < len(text):
            m = _GLOG.match(text, pos)
            if m and 1 <= int(m["mo"]) <= 12:
                ts, kind = _yearless(int(m["mo"]), int(m["d"]), m["h"], m["mi"], m["s"]), "glog"
                warning = m["level"] == "W"
                logged = True
                pos = m.end()
                continue
        if c == "[":
            m = _GLOG_SHORT.match(text, pos)
            if m:
                warning = warning or text.startswith("[W ", pos)
                logged = logged or text[pos + 1] in "IWEF"
                pos = m.end()
                continue
            m = _RANK_IN_BODY.match(text, pos)
            if m:
                rank = int(m["rank"])
                pos = m.end()
                continue
        if c in "DIWEF" and kind == "iso":
            # Ray's C++ logs, after their timestamp: `[2025-07-23 10:05:49,679 W 5100 5100] ...`
            m = _RAY_CPP.match(text, pos)
            if m:
                warning = warning or m["level"] == "W"
                logged = True
                pos = m.end()
                continue
        if kind == "iso" and c in "0123456789abcdef":
            m = _DETERMINED.match(text, pos)
            if m:
                rank = int(m["rank"]) if m["rank"] is not None else rank
                logged = True
                pos = m.end()
                continue
        if c == "(":
            m = RAY_LABEL.match(text, pos)
            if m:
                host = host or m["ip"] or m["ip2"]
                pos = m.end()
                continue
        if c in "MTWFS":
            m = _CTIME.match(text, pos)
            if m:
                try:
                    ts = datetime(
                        int(m["y"]),
                        _MONTHS[m["mon"]],
                        int(m["d"]),
                        int(m["h"]),
                        int(m["mi"]),
                        int(m["s"]),
                        tzinfo=timezone.utc,
                    ).timestamp()
                    kind = "iso"
                except ValueError:  # `Feb 30`: a prefix all the same, without a time
                    pass
                pos = m.end()
                continue
        if c in "JFMASOND":
            m = _SYSLOG.match(text, pos)
            if m:
                host = m["host"]
                kernel = kernel or m["prog"] == "kernel"
                ts, kind = (
                    _yearless(_MONTHS[m["mon"]], int(m["d"]), m["h"], m["mi"], m["s"]),
                    "syslog",
                )
                pos = m.end()
                continue
        if c in "DIWEC":
            m = _VLLM.match(text, pos)
            if m and 1 <= int(m["mo"]) <= 12:
                ts, kind = _yearless(int(m["mo"]), int(m["d"]), m["h"], m["mi"], m["s"]), "glog"
                warning = warning or m["level"] == "WARNING"
                logged = True
                pos = m.end()
                continue
        if c.isalnum():  # a host's name, or its address (`10.0.3.7: `, NCCL's `10.0.3.7:1:2 [0]`)
            m = _NCCL.match(text, pos)
            if m:
                host, gpu = m["host"], m["gpu"]
                pos = m.end()
                continue
            label = _IP_LABEL if c.isdigit() else _HOST_LABEL
            m = None if logged else label.match(text, pos)
            if m and host is None:
                host = m["host"]
                pos = m.end()
                continue
        break
    body = text[pos:] if pos else text
    if bold:
        body = body.rstrip().removesuffix("**").rstrip()
    if table:
        body = body.rstrip().removesuffix(" |").rstrip()  # the table's closing column
    if quoted:
        body = body.rstrip().rstrip("`")
    elif body.endswith("```"):  # a markdown fence closed on the log's last line (`KeyError```)
        body = body[:-3].rstrip()
    kernel = kernel or body.startswith(_DRIVER)
    return Anatomy(body, rank, host, gpu, ts, kind, warning, kernel)
