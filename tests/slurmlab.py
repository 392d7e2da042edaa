"""A real Slurm cluster on localhost for the tests: slurmctld plus three slurmd (node1..node3).

    lab = SlurmLab.start(Path("/tmp/lab"))    # about a second; raises SlurmLabError with the logs
    env = lab.env()                           # SLURM_CONF for sbatch, srun, squeue, scontrol
    lab.idle()                                # cancel every job, resume drained nodes, wait idle
    lab.stop()                                # kills every daemon it started

Debian's packages (slurmctld, slurmd, slurm-client; Slurm 22.05), no munge (auth/none,
cred/none), no accounting (sacct has nothing: babysit must do without it), linuxproc process
tracking and no task plugin, so it runs in a container as root. Each slurmd is one node on its
own port with NodeHostname=localhost; the processes of a job see SLURMD_NODENAME=nodeN. Every
file (config, state, spool, logs) lives under the lab's directory; the ports are picked free at
start. Job credentials expire after 5 s (Slurm's default is 120 s, which is also how long a
requeued job waits before it may start again); the scheduler runs every second. A job in
partition `urgent` preempts (cancels: PREEMPTED) jobs of the default partition `debug`.
`missing()` says which binary is not installed (the tests skip only then, and only when
BABYSIT_REQUIRE_SLURM is unset).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

DAEMONS = ("slurmctld", "slurmd")
CLIENTS = ("sbatch", "srun", "squeue", "scontrol", "scancel", "sinfo")
NODES = ("node1", "node2", "node3")
SBIN = ("/usr/sbin", "/usr/local/sbin", "/sbin")
START_TIMEOUT_S = 30.0


class SlurmLabError(RuntimeError):
    """The lab did not come up (or go down); the message carries the tail of its logs."""


def _which(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for d in SBIN:
        p = Path(d) / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def missing() -> list[str]:
    """The Slurm binaries that are not installed (empty: the lab can start)."""
    return [n for n in (*DAEMONS, *CLIENTS) if _which(n) is None]


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


CONF = """\
ClusterName=babysitlab
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmUser={user}
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
AuthInfo=cred_expire=5
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation={d}/state
SlurmdSpoolDir={spool}/%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd-%n.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd-%n.log
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
KillWait=2
MinJobAge=600
SlurmdTimeout=10
InactiveLimit=0
OverTimeLimit=0
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
{nodes}
PartitionName=debug Nodes=node[1-{n}] Default=YES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=urgent Nodes=node[1-{n}] MaxTime=INFINITE State=UP PriorityTier=10
"""
NODE_LINE = (
    "NodeName={name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} CPUs=2 "
    "RealMemory=1000 State=UNKNOWN"
)


@dataclass
class SlurmLab:
    root: Path
    conf: Path
    spool: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    own_session: bool = True

    @classmethod
    def start(
        cls, root: Path, timeout_s: float = START_TIMEOUT_S, own_session: bool = True
    ) -> SlurmLab:
        """own_session=False: the daemons stay in the caller's process group, so that whoever
        kills that group (a benchmark's timeout) kills them too."""
        gone = missing()
        if gone:
            raise SlurmLabError(f"Slurm is not installed: missing {', '.join(gone)}")
        root.mkdir(parents=True, exist_ok=True)
        (root / "state").mkdir(exist_ok=True)
        ports = _free_ports(1 + len(NODES))
        nodes = "\n".join(
            NODE_LINE.format(name=n, port=p) for n, p in zip(NODES, ports[1:], strict=True)
        )
        conf = root / "slurm.conf"
        user = "root" if os.getuid() == 0 else os.environ.get("USER", "root")
        # slurmstepd's sockets live in the spool: a Unix socket path has 108 bytes at most,
        # which a pytest temp dir can exceed. A short directory of its own, removed by stop().
        spool = Path(tempfile.mkdtemp(prefix="bsl-", dir="/tmp" if os.path.isdir("/tmp") else None))
        conf.write_text(
            CONF.format(
                ctld_port=ports[0], user=user, d=root, spool=spool, nodes=nodes, n=len(NODES)
            ),
            encoding="utf-8",
        )
        lab = cls(root, conf, spool, own_session=own_session)
        try:
            lab._spawn([_need("slurmctld"), "-D", "-i", "-f", str(conf)], "slurmctld")
            for n in NODES:
                (spool / n).mkdir(parents=True, exist_ok=True)
                lab._spawn([_need("slurmd"), "-D", "-N", n, "-f", str(conf)], f"slurmd-{n}")
            lab.wait_idle(timeout_s)
        except BaseException:
            lab.stop()
            raise
        return lab

    def _spawn(self, argv: list[str], name: str) -> None:
        out = (self.root / f"{name}.stdout").open("ab")
        try:
            self.procs.append(
                subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=self.env(),
                    start_new_session=self.own_session,
                )
            )
        finally:
            out.close()

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """`base` (default: this process's environment) with SLURM_CONF pointing at the lab, and
        no SLURM_* of an allocation around the tests."""
        env = {
            k: v for k, v in (os.environ if base is None else base).items()
            if not k.startswith("SLURM_")
        }
        env["SLURM_CONF"] = str(self.conf)
        return env

    def run(self, *argv: str, timeout_s: float = 10.0) -> subprocess.CompletedProcess[str]:
        """A Slurm client command, run in the lab's own directory: a job it submits without
        --output writes its slurm-%j.out there, never in the caller's working directory."""
        return subprocess.run(
            list(argv),
            env=self.env(),
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )

    def node_states(self) -> dict[str, str]:
        """node -> its state as sinfo prints it (idle, alloc, drain, down*, ...)."""
        try:
            res = self.run("sinfo", "-h", "-N", "-o", "%N %t", timeout_s=5.0)
        except subprocess.TimeoutExpired:
            return {}
        out: dict[str, str] = {}
        for line in res.stdout.splitlines():
            parts = line.split()
            if len(parts) == 2:
                out[parts[0]] = parts[1]
        return out

    def wait_idle(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Until every node is idle (and slurmctld answers); SlurmLabError with the logs."""
        deadline = time.monotonic() + timeout_s
        states: dict[str, str] = {}
        while time.monotonic() < deadline:
            dead = [p for p in self.procs if p.poll() is not None]
            if dead:
                raise SlurmLabError(
                    f"a Slurm daemon exited ({dead[0].args}, code {dead[0].returncode})\n"
                    + self.logs()
                )
            states = self.node_states()
            if len(states) == len(NODES) and all(s == "idle" for s in states.values()):
                return
            time.sleep(0.1)
        raise SlurmLabError(
            f"the Slurm lab is not idle after {timeout_s:g}s (nodes: {states})\n" + self.logs()
        )

    def idle(self, timeout_s: float = 30.0) -> None:
        """Back to a clean cluster between tests: cancel every job, resume what is drained or
        down, wait until every node is idle."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.run("scancel", "--full", "--user", _user_name())
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            res = self.run("squeue", "-h", "-o", "%i")
            if not res.stdout.strip():
                break
            time.sleep(0.1)
        for node, state in self.node_states().items():
            if state.rstrip("*~#") not in ("idle", "alloc", "mix", "comp"):
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.run("scontrol", "update", f"NodeName={node}", "State=RESUME")
        self.wait_idle(max(1.0, deadline - time.monotonic()))

    def logs(self, lines: int = 30) -> str:
        """The tail of every daemon's log (for a failure's message)."""
        out = []
        for path in sorted(self.root.glob("*.log")) + sorted(self.root.glob("*.stdout")):
            with contextlib.suppress(OSError):
                text = path.read_text(errors="replace").splitlines()[-lines:]
                out.append(f"--- {path} ---\n" + "\n".join(text))
        return "\n".join(out)

    def stop(self, timeout_s: float = 10.0) -> None:
        """SIGTERM every daemon the lab started, SIGKILL what is left after timeout_s; then
        whatever their pid files name and still runs from this lab's config."""
        with contextlib.suppress(Exception):
            self.run("scancel", "--full", "--user", _user_name(), timeout_s=3.0)
        for p in self.procs:
            with contextlib.suppress(OSError):
                if self.own_session:
                    os.killpg(p.pid, signal.SIGTERM)
                else:
                    p.terminate()
        deadline = time.monotonic() + timeout_s
        for p in self.procs:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    if self.own_session:
                        os.killpg(p.pid, signal.SIGKILL)
                    else:
                        p.kill()
                p.wait(5)
        self.procs.clear()
        # Job steps outlive a killed slurmd (slurmstepd): kill what still names this lab.
        for pid in _pids_with(str(self.conf)):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.spool, ignore_errors=True)


def _need(name: str) -> str:
    path = _which(name)
    if path is None:
        raise SlurmLabError(f"{name} is not installed")
    return path


def _user_name() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def _pids_with(needle: str) -> list[int]:
    """Processes whose environment or command line mentions `needle`."""
    me = os.getpid()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                env = fh.read()
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read()
        except OSError:
            continue
        if needle.encode() in env or needle.encode() in cmd:
            out.append(int(name))
    return out
