"""The matmul self-test: does every device of this node compute right? (catches silent data
corruption: a GPU that trains on, producing wrong numbers)

    results = matmul_check(python=sys.executable, budget_s=10.0)   # [CheckResult, ...]

Runs `python -c SCRIPT` in its own process (babysit never imports torch itself), with torch when
that interpreter has it (the CPU and every CUDA device, each GPU in its own thread), else numpy
(the CPU), else a clean SKIP. The inputs are deterministic pseudo-random integers in [-4, 4]
stored as floats, so every product and partial sum is an integer well below 2**24: float32,
TF32, float64 and any summation order give the exact same result, and the check can demand
equality. Each GPU multiplies in float32 three times (all must agree bit for bit) and in float64
(different units of the chip), and rows 0..127 are checked against a float64 product on the CPU
(catches a GPU that is wrong in both precisions). BABYSIT_TEST_CORRUPT_MATMUL=1 perturbs one
element of one device's result (the first GPU, else the CPU) so tests can prove a wrong device is
caught (=node2: only where SLURMD_NODENAME is node2, a Slurm node of the tests' cluster).
CUDA_DEVICE_ORDER=PCI_BUS_ID (unless set) makes "GPU n" the n of nvidia-smi and NVML.

The child says how far it got, one marker line per phase (`babysit-matmul: imported torch`,
then `babysit-matmul: gpus 8`), and the parent follows them as they come (MatmulCheck.phase),
so a timeout names the phase that overran, also to a caller that stopped waiting first
(MatmulCheck.overrun):

- before the import finished: a slow Python/torch import (a cold network filesystem under the
  environment), a WARN, never a FAIL: the node is not to blame, and must not be banned;
- torch imported, CUDA not yet initialised: the GPU driver did not answer, a FAIL;
- computing on GPUs: a GPU or its driver may be hung, a FAIL;
- computing on the CPU only (no GPU): an overloaded machine, a WARN; no GPU was tested.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from typing import Any

from babysit.records import CheckResult, CheckStatus
from babysit.subproc import kill_session

SCRIPT = r"""
import json, os, sys, threading, time
_WHERE = os.environ.get("BABYSIT_TEST_CORRUPT_MATMUL") or ""
CORRUPT = _WHERE in ("1", os.environ.get("SLURMD_NODENAME") or "1")
CPU_N, GPU_N, ROWS, REPS = 512, 4096, 128, 3

def ints(xp, n, salt):
    # A hash of the index, deterministic on every machine and library: integers in [-4, 4].
    i = xp.arange(n * n, dtype=xp.int64) + salt
    return ((i * 2654435761) % 4294967296 // 65536 % 9 - 4).reshape(n, n)

def err(x, ref):
    return float(abs(x - ref).max())

def run_torch(torch, gpus):
    torch.backends.cuda.matmul.allow_tf32 = False
    out = []
    t0 = time.perf_counter()
    a, b = ints(torch, CPU_N, 0).double(), ints(torch, CPU_N, 7).double()
    c = a.float() @ b.float()
    if CORRUPT and gpus == 0:
        c[0, 0] += 1.0
    out.append({"device": "cpu", "label": "CPU", "name": "CPU", "n": CPU_N,
                "max_error": err(c.double(), a @ b), "compute_s": time.perf_counter() - t0})
    if not gpus:
        return out
    A, B = ints(torch, GPU_N, 0).double(), ints(torch, GPU_N, 7).double()
    ref = A[:ROWS] @ B
    slots = [None] * gpus

    def one(i):
        t = time.perf_counter()
        doc = {"device": f"cuda:{i}", "label": f"GPU {i}", "n": GPU_N}
        try:
            p = torch.cuda.get_device_properties(i)
            doc["name"], doc["pci"] = p.name, getattr(p, "pci_bus_id", None)
            dev = torch.device("cuda", i)
            a, b = A.to(dev), B.to(dev)
            a32, b32 = a.float(), b.float()
            runs = [a32 @ b32 for _ in range(REPS)]
            if CORRUPT and i == 0:
                runs[-1][GPU_N // 2, GPU_N // 3] += 1.0
            c64 = a @ b
            e = max(err(r.double(), c64) for r in runs)
            e = max(e, err(c64[:ROWS].cpu(), ref))
            torch.cuda.synchronize(dev)
            doc["max_error"] = e
        except Exception as exc:
            text = f"{type(exc).__name__}: {exc}"
            # A GPU full of someone's training is busy, not broken.
            doc["busy" if "out of memory" in text.lower() else "error"] = text[:500]
        doc["compute_s"] = time.perf_counter() - t
        slots[i] = doc

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(gpus)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out + slots

def run_numpy(np):
    t0 = time.perf_counter()
    a, b = ints(np, CPU_N, 0).astype(np.float64), ints(np, CPU_N, 7).astype(np.float64)
    c = a.astype(np.float32) @ b.astype(np.float32)
    if CORRUPT:
        c[0, 0] += 1.0
    return [{"device": "cpu", "label": "CPU", "name": "CPU", "n": CPU_N,
             "max_error": err(c.astype(np.float64), a @ b), "compute_s": time.perf_counter() - t0}]

# Every import before the first marker: the parent tells a slow import from a hung GPU by it.
numpy = None
try:
    import torch
except Exception:
    torch = None
    try:
        import numpy
    except Exception:
        pass
backend = "torch" if torch is not None else "numpy" if numpy is not None else "none"
print("babysit-matmul: imported", backend, flush=True)
gpus = (torch.cuda.device_count() if torch.cuda.is_available() else 0) if torch else 0
print("babysit-matmul: gpus", gpus, flush=True)
if torch is not None:
    doc = {"backend": "torch", "version": torch.__version__, "devices": run_torch(torch, gpus)}
elif numpy is not None:
    doc = {"backend": "numpy", "version": numpy.__version__, "devices": run_numpy(numpy)}
else:
    doc = {"backend": None}
print(json.dumps(doc), flush=True)
"""

MARK = "babysit-matmul: "
MAX_OUTPUT = 1 << 20  # bytes kept of each stream: the child's own answer is a few hundred


class MatmulCheck:
    """One run of the self-test child. `phase` follows the child's markers as they come:
    "importing" -> "initialising CUDA" (torch imported) -> "computing" (`gpus` known) -> "done".
    A plain attribute, read by another thread without a lock (a str is swapped whole)."""

    def __init__(self, python: str) -> None:
        self.python = python
        self.phase = "importing"
        self.gpus: int | None = None  # known once the child said so (0: the CPU only)
        self.t0 = time.monotonic()
        self._seen = 0  # bytes of stdout already followed

    def run(self, budget_s: float) -> list[CheckResult]:
        """One CheckResult per device (see the module docstring); never runs past `budget_s`
        (plus up to a second to reap a child stuck in the kernel)."""
        self.t0 = t0 = time.monotonic()
        env = dict(os.environ)
        env.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
        try:
            proc = subprocess.Popen(
                [self.python, "-c", SCRIPT],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,  # a hung CUDA call: kill its whole group
            )
        except OSError as exc:
            self.phase = "done"
            return [_result(CheckStatus.SKIP, f"cannot run {self.python}: {exc.strerror}", "", t0)]
        try:
            out, err, finished = self._read(proc, t0 + budget_s)
        except BaseException:
            kill_session(proc)
            raise
        if not finished:
            kill_session(proc)  # closes the pipes too
            return [self.overrun(budget_s)]
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        self.phase = "done"
        return _results(proc.returncode, out, err, t0)

    def overrun(self, budget_s: float) -> CheckResult:
        """The result of a run still going after `budget_s`, by the phase it was in."""
        t0 = self.t0
        if self.phase == "importing":
            # Cold imports from a network filesystem can take this long: not the node's fault.
            return _result(
                CheckStatus.WARN,
                f"slow Python/torch import (network filesystem?): importing torch (or numpy) "
                f"took over {budget_s:g}s, so the matmul test did not run and no device was "
                "tested; not the node's hardware. Put the environment on local disk (or warm "
                "it up), or give the checks longer (doctor --timeout, "
                "health.preflight_budget_s)",
                "",
                t0,
                {"phase": "import"},
            )
        if self.phase == "initialising CUDA":
            return _result(
                CheckStatus.FAIL,
                f"torch was imported but CUDA did not initialise within {budget_s:g}s "
                "(torch.cuda.device_count() did not return): a GPU or its driver may be hung; "
                "run nvidia-smi, and drain this node if it hangs too",
                "",
                t0,
                {"phase": "cuda_init"},
            )
        if not self.gpus:
            return _result(
                CheckStatus.WARN,
                f"the CPU matmul (no GPU here) did not finish within {budget_s:g}s: is this "
                "machine overloaded? No GPU was tested",
                "CPU",
                t0,
                {"phase": "matmul", "gpus": 0},
            )
        return _result(
            CheckStatus.FAIL,
            f"the matmul self-test on {self.gpus} GPU(s) did not finish within {budget_s:g}s: "
            "a GPU or its driver may be hung; run nvidia-smi, and drain this node if it hangs "
            "too",
            "",
            t0,
            {"phase": "matmul", "gpus": self.gpus},
        )

    def _read(self, proc: subprocess.Popen[bytes], deadline: float) -> tuple[str, str, bool]:
        """Both streams until they close and the child exits, or until `deadline`; follows the
        markers on stdout as they come. Returns (stdout, stderr, finished)."""
        assert proc.stdout is not None and proc.stderr is not None
        bufs = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
        out_fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            for fd in bufs:
                sel.register(fd, selectors.EVENT_READ)
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    return "", "", False
                for key, _ in sel.select(left):
                    fd = int(key.fd)
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        sel.unregister(fd)
                        continue
                    buf = bufs[fd]
                    if len(buf) < MAX_OUTPUT:
                        buf += chunk[: MAX_OUTPUT - len(buf)]
                    if fd == out_fd:
                        self._follow(buf)
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return "", "", False
        return _text(bufs[out_fd]), _text(bufs[proc.stderr.fileno()]), True

    def _follow(self, out: bytearray) -> None:
        """Move `phase` on by the complete marker lines of stdout not yet followed."""
        end = out.rfind(b"\n") + 1
        lines, self._seen = bytes(out[self._seen : end]), max(self._seen, end)
        for raw in lines.decode("utf-8", "replace").splitlines():
            if not raw.startswith(MARK):
                continue
            what, _, value = raw[len(MARK) :].strip().partition(" ")
            if what == "imported" and value == "torch":
                self.phase = "initialising CUDA"  # torch.cuda may hang in the driver
            elif what == "imported":
                self.gpus, self.phase = 0, "computing"  # numpy (or nothing): the CPU only
            elif what == "gpus" and value.isdigit():
                self.gpus, self.phase = int(value), "computing"


def matmul_check(python: str, budget_s: float) -> list[CheckResult]:
    """One CheckResult per device (see the module docstring); never runs past `budget_s`."""
    return MatmulCheck(python).run(budget_s)


def _text(data: bytes | bytearray) -> str:
    return data.decode("utf-8", "replace")


def _results(rc: int | None, out: str, err: str, t0: float) -> list[CheckResult]:
    lines = out.strip().splitlines()
    try:
        doc: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    except ValueError:
        doc = {}
    if rc != 0 or "backend" not in doc:
        tail = (err.strip().splitlines() or [f"exit code {rc}"])[-1][:300]
        return [
            _result(
                CheckStatus.FAIL,
                f"the matmul self-test crashed: {tail} (a CUDA error here means a broken GPU "
                "or driver: run nvidia-smi)",
                "",
                t0,
                {"exit_code": rc},
            )
        ]
    if doc["backend"] is None:
        return [
            _result(
                CheckStatus.SKIP,
                "neither torch nor numpy is installed for this interpreter: no matmul test",
                "",
                t0,
            )
        ]
    results = []
    for dev in doc.get("devices", []):
        details = {"backend": doc["backend"], "version": doc.get("version"), **dev}
        label = str(dev.get("label", dev.get("device")))
        what = "this CPU" if label == "CPU" else label
        todo = (
            "drain this node (its CPU or memory is faulty)"
            if label == "CPU"
            else "drain this node and run the NVIDIA field diagnostic"
        )
        if dev.get("busy"):
            status = CheckStatus.WARN
            summary = f"{what} has no memory free for the test (in use?): not tested"
        elif dev.get("error"):
            status = CheckStatus.FAIL
            summary = f"{what} failed the matmul test: {dev['error']}; {todo}"
        elif dev.get("max_error", 0.0) != 0.0:
            status = CheckStatus.FAIL
            summary = (
                f"{what} computes wrong results: max error {dev['max_error']:g} on an exact "
                f"integer matmul (n={dev.get('n')}); do not train on it: {todo}"
            )
        else:
            status = CheckStatus.PASS
            summary = (
                f"{dev.get('name') or what}: {dev.get('n')}x{dev.get('n')} matmul exact "
                f"({doc['backend']} {doc.get('version')})"
            )
        results.append(_result(status, summary, label, t0, details))
    return results


def _result(
    status: CheckStatus,
    summary: str,
    target: str,
    t0: float,
    details: dict[str, Any] | None = None,
) -> CheckResult:
    return CheckResult("matmul", status, summary, target, time.monotonic() - t0, details or {})
