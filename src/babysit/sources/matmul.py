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
caught. CUDA_DEVICE_ORDER=PCI_BUS_ID (unless set) makes "GPU n" the n of nvidia-smi and NVML.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from typing import Any

from babysit.records import CheckResult, CheckStatus
from babysit.subproc import kill_session

SCRIPT = r"""
import json, os, sys, threading, time
CORRUPT = os.environ.get("BABYSIT_TEST_CORRUPT_MATMUL") == "1"
CPU_N, GPU_N, ROWS, REPS = 512, 4096, 128, 3

def ints(xp, n, salt):
    # A hash of the index, deterministic on every machine and library: integers in [-4, 4].
    i = xp.arange(n * n, dtype=xp.int64) + salt
    return ((i * 2654435761) % 4294967296 // 65536 % 9 - 4).reshape(n, n)

def err(x, ref):
    return float(abs(x - ref).max())

def run_torch(torch):
    torch.backends.cuda.matmul.allow_tf32 = False
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
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

try:
    import torch
except Exception:
    torch = None
print("imported", flush=True)  # the parent tells a slow import from a hung GPU by this line
if torch is not None:
    doc = {"backend": "torch", "version": torch.__version__, "devices": run_torch(torch)}
else:
    try:
        import numpy
    except Exception:
        numpy = None
    if numpy is None:
        doc = {"backend": None}
    else:
        doc = {"backend": "numpy", "version": numpy.__version__, "devices": run_numpy(numpy)}
print(json.dumps(doc), flush=True)
"""


def matmul_check(python: str, budget_s: float) -> list[CheckResult]:
    """One CheckResult per device (see the module docstring); never runs past `budget_s`."""
    t0 = time.monotonic()
    env = dict(os.environ)
    env.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    try:
        proc = subprocess.Popen(
            [python, "-c", SCRIPT],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # a hung CUDA call: kill its whole group
        )
    except OSError as exc:
        return [_result(CheckStatus.SKIP, f"cannot run {python}: {exc.strerror}", "", t0)]
    try:
        out, err = proc.communicate(timeout=budget_s)
    except subprocess.TimeoutExpired as exc:
        kill_session(proc)
        if b"imported" not in (exc.stdout or b""):
            # Cold imports from a network filesystem can take this long: not the node's fault.
            msg = (
                f"importing torch (or numpy) took over {budget_s:g}s, so the matmul test "
                "did not run: a slow filesystem under the Python environment? Raise the budget"
            )
            return [_result(CheckStatus.WARN, msg, "", t0)]
        msg = (
            f"the matmul self-test did not finish within {budget_s:g}s: a GPU or its driver "
            "may be hung; run nvidia-smi, and drain this node if it hangs too"
        )
        return [_result(CheckStatus.FAIL, msg, "", t0)]
    return _results(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"), t0)


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
