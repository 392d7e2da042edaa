"""Tiny byte-level GPT trained on the CPU, with fault injection for babysit demos and tests.

Usage:
    python examples/tinygpt/train.py --out-dir runs/tg --max-steps 300
    python examples/tinygpt/train.py --out-dir runs/tg --crash-at 60   # fires once
    python examples/tinygpt/train.py --out-dir runs/tg --nan-at 60     # a bad batch: every time
    BABYSIT_SKIP_STEPS=120-160 BABYSIT_LR_SCALE=0.5 python train.py --out-dir runs/tg
    torchrun --standalone --nproc-per-node 2 train.py --out-dir runs/tg   # gloo, on the CPU

The training text is the standard library's own ``.py`` sources (sorted, first ~2 MB),
so nothing is downloaded. The batch for step ``s`` comes from a generator seeded by
``(seed, s)``, so a resumed run sees the same data at the same step.

Progress (stdout): ``iter {step}: loss {loss:.4f}, time {dt_ms:.2f}ms``; evals print
``step {step}: train loss {x:.4f}, val loss {y:.4f}``. Checkpoints are
``{out_dir}/ckpt_{completed_steps:06d}.pt``. Faults fired are recorded in
``{out_dir}/faults_fired.json`` so none fires twice in the same out-dir; the exceptions are
the faults that are a property of the data, the node or the code, not an event: ``--nan-at``,
``--spike-data-at`` (every time that data is trained on), ``--bad-host`` (every attempt the
host is part of) and ``--bug-at`` (every attempt that reaches the step).

Under torchrun (WORLD_SIZE > 1) it joins a gloo process group and averages the gradients with
one all_reduce per step; rank ``r`` trains on its own batch for step ``s`` (rank 0's is the
single-process one). Rank 0 prints, evaluates and writes the checkpoints; every rank resumes
from the same one. The one-rank faults (crash, kill, the hangs, the bug) fire on
``--fault-rank`` / ``--hang-rank``. ``--events-log FILE`` appends one JSON line per start,
step, save, fault and finish, with wall-clock times: the chaos benchmark measures from it.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import re
import signal
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

Pair = tuple[Tensor, Tensor]

DATA_BYTES = 2_000_000
EVAL_BATCHES = 4
SPIKE_STEPS = 5
SPIKE_LR_MULT = 10.0
MODEL_KEYS = ("n_layer", "n_head", "n_embd", "block_size")
CKPT_RE = re.compile(r"^ckpt_(\d+)\.pt$")


class DistBackendError(RuntimeError):
    """Stand-in for torch.distributed.DistBackendError (a transient NCCL failure)."""


DistBackendError.__module__ = "torch.distributed"
NCCL_MESSAGE = (
    "NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system "
    "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\nncclSystemError: System "
    "call (e.g. socket, malloc) or external library call failed or device error.\nLast error:\n"
    "socket recv failed"
)


def die(msg: str) -> None:
    print(f"error: {msg}", file=sys.stderr, flush=True)
    sys.exit(2)


def load_text() -> Tensor:
    """Concatenate stdlib .py files (top level first, then subpackages, sorted) up to DATA_BYTES."""
    root = Path(sysconfig.get_paths()["stdlib"])
    skip_dirs = {"site-packages", "dist-packages", "__pycache__"}
    buf = bytearray()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in skip_dirs)
        for name in sorted(filenames):
            if name.endswith(".py") and not name.startswith("_sysconfigdata"):
                buf += (Path(dirpath) / name).read_bytes()
                if len(buf) >= DATA_BYTES:
                    return torch.frombuffer(buf[:DATA_BYTES], dtype=torch.uint8).long()
    return torch.frombuffer(buf, dtype=torch.uint8).long()


def get_batch(data: Tensor, seed: int, step: int, batch: int, block: int, rank: int = 0) -> Pair:
    gen = torch.Generator().manual_seed((seed * 1_000_000_007 + step + rank * 100_000_007) % 2**63)
    ix = torch.randint(len(data) - block - 1, (batch,), generator=gen)
    offs = ix[:, None] + torch.arange(block)
    return data[offs], data[offs + 1]


class Block(nn.Module):
    def __init__(self, n_embd: int, n_head: int) -> None:
        super().__init__()
        self.n_head = n_head
        self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        hid = 4 * n_embd
        self.mlp = nn.Sequential(nn.Linear(n_embd, hid), nn.GELU(), nn.Linear(hid, n_embd))

    def forward(self, x: Tensor) -> Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, n_layer: int, n_head: int, n_embd: int, block_size: int) -> None:
        vocab = 256  # bytes
        super().__init__()
        self.tok = nn.Embedding(vocab, n_embd)
        self.pos = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList(Block(n_embd, n_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab, bias=False)

    def forward(self, idx: Tensor, targets: Tensor, poison: bool = False) -> Tensor:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln_f(x))
        if poison:  # --nan-at: a NaN that flows into the weights, like a real divergence
            logits = logits * float("nan")
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def parse_skip(raw: str) -> list[tuple[int, int]]:
    ranges = []
    for part in raw.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m:
            die(f"malformed BABYSIT_SKIP_STEPS={raw!r}: expected ranges like '120-160,300-310'")
        a, b = int(m.group(1)), int(m.group(2) or m.group(1))
        if b < a:
            die(f"malformed BABYSIT_SKIP_STEPS={raw!r}: range {a}-{b} ends before it starts")
        ranges.append((a, b))
    return ranges


def parse_lr_scale(raw: str) -> float:
    try:
        scale = float(raw)
    except ValueError:
        scale = math.nan
    if not math.isfinite(scale) or scale <= 0:
        die(f"malformed BABYSIT_LR_SCALE={raw!r}: expected a positive number")
    return scale


class AdamW:
    """Plain AdamW (torch.optim's defaults). torch.optim imports torch._dynamo, ~3 s per start."""

    def __init__(self, params: list[nn.Parameter], betas: tuple[float, float] = (0.9, 0.999)):
        self.params, self.betas, self.t = params, betas, 0
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]

    @torch.no_grad()
    def step(self, lr: float, eps: float = 1e-8, weight_decay: float = 0.01) -> None:
        b1, b2 = self.betas
        self.t += 1
        bc1, bc2 = 1 - b1**self.t, 1 - b2**self.t
        for p, m, v in zip(self.params, self.m, self.v, strict=True):
            assert p.grad is not None
            p.mul_(1 - lr * weight_decay)
            m.lerp_(p.grad, 1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            p.addcdiv_(m, (v.sqrt() / math.sqrt(bc2)).add_(eps), value=-lr / bc1)

    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t, "m": self.m, "v": self.v}

    def load_state_dict(self, sd: dict[str, Any]) -> None:
        self.t = int(sd["t"])
        for dst, src in zip(self.m + self.v, sd["m"] + sd["v"], strict=True):
            dst.copy_(src)


class Events:
    """--events-log: one JSON line per event, appended and flushed at once (O_APPEND: lines
    from several ranks do not interleave). Off (no file) without the flag."""

    def __init__(self, path: str | None, rank: int) -> None:
        self.path, self.rank = path, rank

    def emit(self, kind: str, **fields: Any) -> None:
        if self.path is None:
            return
        line = json.dumps({"t": time.time(), "kind": kind, "rank": self.rank, **fields}) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


class Faults:
    """Faults, recorded in faults_fired.json before firing, fire at most once per out-dir.

    Under torchrun every rank reads the file at start and decides alike; only `writer` (the
    rank the fault is for) records a firing, so that the ranks never race on the file."""

    def __init__(self, out_dir: Path, events: Events | None = None) -> None:
        self.path = out_dir / "faults_fired.json"
        self.fired: dict[str, int] = json.loads(self.path.read_text()) if self.path.exists() else {}
        self.this_run: set[str] = set()
        self.events = events

    def fire(self, name: str, step: int, writer: bool = True) -> bool:
        if name in self.fired:
            return False
        self.fired[name] = step
        self.this_run.add(name)
        if not writer:
            return True
        tmp = self.path.with_suffix(f".json.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.fired, indent=1) + "\n")
        os.replace(tmp, self.path)
        if self.events is not None:
            self.events.emit("fault", fault=name, step=step)
        return True


def list_ckpts(out_dir: Path) -> list[tuple[int, Path]]:
    found = [(int(m.group(1)), p) for p in out_dir.iterdir() if (m := CKPT_RE.match(p.name))]
    return sorted(found)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Tiny byte-level GPT on stdlib source, for babysit.")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--max-steps", type=int, default=300)
    p.add_argument("--ckpt-every", type=int, default=50, help="0 = only the final checkpoint")
    p.add_argument("--keep-ckpts", type=int, default=3, help="0 = keep all")
    p.add_argument("--eval-every", type=int, default=100, help="0 = off")
    p.add_argument("--log-every", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--block-size", type=int, default=64)
    p.add_argument("--n-layer", type=int, default=2)
    p.add_argument("--n-head", type=int, default=2)
    p.add_argument("--n-embd", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--min-step-s",
        type=float,
        default=0.0,
        help="each step takes at least this long (the rest is slept): a steady cadence, like a "
        "GPU job's, whatever the speed of the CPU",
    )
    p.add_argument("--resume", default=None, help="checkpoint to resume from")
    p.add_argument(
        "--events-log",
        default=None,
        help="append JSON lines (start, step, save, fault, done; wall-clock 't') to this file",
    )
    g = p.add_argument_group("fault injection (each fires at most once per out-dir)")
    g.add_argument("--crash-at", type=int, default=None)
    g.add_argument("--crash-message", default=NCCL_MESSAGE)
    g.add_argument("--kill-at", type=int, default=None)
    g.add_argument("--hang-at", type=int, default=None)
    g.add_argument("--nan-at", type=int, default=None)
    g.add_argument("--spike-at", type=int, default=None)
    g.add_argument("--slow-ckpt-at", type=int, default=None)
    g.add_argument("--slow-ckpt-s", type=float, default=30.0)
    g.add_argument("--ignore-sigterm", action="store_true")
    g.add_argument(
        "--fault-rank",
        type=int,
        default=0,
        help="the rank that crashes, is killed, or hits --bug-at (under torchrun)",
    )
    g.add_argument("--hang-rank", type=int, default=0, help="the rank that hangs (under torchrun)")
    g.add_argument(
        "--hang-in-collective-at",
        type=int,
        default=None,
        help="--hang-rank enters an all_reduce the other ranks never join (needs torchrun)",
    )
    g.add_argument(
        "--hang-in-data-at",
        type=int,
        default=None,
        help="--hang-rank blocks forever reading its shard (no collective; the others wait)",
    )
    g.add_argument(
        "--spike-data-at",
        type=int,
        default=None,
        help="garbage batches for --spike-data-steps steps from here: the loss spikes and stays "
        "up for a while, every time this data is trained on (until BABYSIT_SKIP_STEPS skips it)",
    )
    g.add_argument("--spike-data-steps", type=int, default=20)
    g.add_argument(
        "--bad-host",
        default=None,
        help="a rank on this host fails at the first step of every attempt (a GPU with ECC "
        "errors); the rank's host: $BABYSIT_CHAOS_HOST, else line RANK of --hostfile",
    )
    g.add_argument("--hostfile", default=None, help="the hosts, one per line; rank r is on line r")
    g.add_argument(
        "--bug-at",
        type=int,
        default=None,
        help="a KeyError in the code at this step, on every attempt that gets there (a user bug)",
    )
    g.add_argument("--eval-pause-s", type=float, default=0.0, help="extra seconds per eval")
    g.add_argument(
        "--eval-s",
        type=float,
        default=0.0,
        help="each eval computes (real forward passes) for at least this long, like nanoGPT's "
        "estimate_loss over many eval_iters",
    )
    g.add_argument(
        "--save-s",
        type=float,
        default=0.0,
        help="each checkpoint is written in small pieces spread over this long: storage that "
        "slow (a throttled NFS mount)",
    )
    g.add_argument(
        "--silent",
        action="store_true",
        help="announce neither evals nor saves (nanoGPT prints nothing while estimate_loss runs)",
    )
    args = p.parse_args()
    if args.n_embd % args.n_head:
        p.error("--n-embd must be divisible by --n-head")
    counts = (args.max_steps, args.ckpt_every, args.keep_ckpts, args.eval_every)
    if min(counts) < 0 or args.log_every < 1 or args.min_step_s < 0:
        p.error("step counts and --min-step-s must be >= 0 and --log-every >= 1")
    return args


def on_sigterm(ignore: bool) -> None:
    def handler(signum: int, frame: Any) -> None:
        if ignore:
            print("ignoring SIGTERM", flush=True)
            return
        print("received SIGTERM, exiting", flush=True)
        sys.stderr.flush()
        os._exit(143)  # promptly: no interpreter teardown

    signal.signal(signal.SIGTERM, handler)


def write_paced(data: bytes, path: Path, seconds: float) -> None:
    """Write `data` to `path` in small pieces spread over `seconds`: storage that slow."""
    pieces = max(1, min(len(data) // 4096, int(seconds * 20)))
    size = -(-len(data) // pieces)
    start = time.monotonic()
    with open(path, "wb") as fh:
        for i in range(pieces):
            fh.write(data[i * size : (i + 1) * size])
            fh.flush()
            time.sleep(max(0.0, start + seconds * (i + 1) / pieces - time.monotonic()))


def all_reduce_gradients(step: int, message: str) -> None:
    """Where a real multi-node job would meet its transient NCCL failure."""
    raise DistBackendError(message)


def read_shard(step: int) -> None:
    """--hang-in-data-at: a read from storage that never answers (a dead NFS server): the
    process sleeps in read(2), in no collective, while the other ranks wait for it."""
    r, w = os.pipe()  # nobody ever writes to `w`, and it stays open
    print(f"injecting a hang in data loading at step {step}", file=sys.stderr, flush=True)
    os.read(r, 1)
    os.close(w)


def wait_in_collective(step: int, group: Any) -> None:
    """--hang-in-collective-at: this rank enters an all_reduce the others never join; they
    block in the step's own all_reduce, so every rank sits in a collective (an NCCL hang)."""
    import torch.distributed as dist

    print(f"injecting a hang inside a collective at step {step}", file=sys.stderr, flush=True)
    dist.all_reduce(torch.zeros(1), group=group)
    while True:  # gloo's timeout gives up at last: stay hung, as NCCL's hangs do
        time.sleep(3600)


def lr_at(step: int, base: float, bug_at: int | None) -> float:
    """The learning rate; --bug-at: a schedule change that reads a key the config lacks."""
    if bug_at is not None and step == bug_at:
        schedule: dict[str, float] = {"warmup_iters": 0.0}
        return base * schedule["lr_decay_iters"]  # KeyError: a bug, the same on every attempt
    return base


def host_of(rank: int, hostfile: str | None) -> str | None:
    """This rank's host: $BABYSIT_CHAOS_HOST (set per rank), else line `rank` of --hostfile."""
    if host := os.environ.get("BABYSIT_CHAOS_HOST"):
        return host
    if hostfile is None:
        return None
    hosts = [ln.split()[0] for ln in Path(hostfile).read_text().splitlines() if ln.strip()]
    return hosts[rank] if rank < len(hosts) else None


def fail_bad_host(host: str, rank: int) -> None:
    """--bad-host: what a GPU with uncorrectable ECC errors prints, every attempt."""
    print(
        f"{host}:{os.getpid()}:{os.getpid()} [{rank}] NCCL WARN Cuda failure 'uncorrectable "
        f"ECC error encountered'",
        file=sys.stderr,
        flush=True,
    )
    raise RuntimeError(
        "CUDA error: uncorrectable ECC error encountered\nCUDA kernel errors might be "
        "asynchronously reported at some other API call, so the stacktrace below might be "
        "incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1"
    )


def main() -> None:
    args = parse_args()
    on_sigterm(args.ignore_sigterm)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    side_group: Any = None
    if world > 1:
        import torch.distributed as dist

        dist.init_process_group("gloo")
        side_group = dist.new_group(backend="gloo")  # for --hang-in-collective-at only
    elif args.hang_in_collective_at is not None:
        die("--hang-in-collective-at needs ranks to wait for: run under torchrun")
    lead = rank == 0
    events = Events(args.events_log, rank)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if lead:
        for stale in out_dir.glob("ckpt_*.pt.tmp"):
            stale.unlink()
    raw_skip = os.environ.get("BABYSIT_SKIP_STEPS", "")
    raw_scale = os.environ.get("BABYSIT_LR_SCALE", "")
    skip = parse_skip(raw_skip) if raw_skip else []
    lr_scale = parse_lr_scale(raw_scale) if raw_scale else 1.0

    resume = args.resume or os.environ.get("BABYSIT_RESUME_FROM") or None
    if resume is not None and not Path(resume).is_file():
        src = "--resume" if args.resume else "BABYSIT_RESUME_FROM"
        die(f"{src} checkpoint not found: {resume}")
    if resume is None and (ckpts := list_ckpts(out_dir)):
        resume = str(ckpts[-1][1])
    state = torch.load(resume, map_location="cpu", weights_only=True) if resume else None
    if state is not None:  # the model shape comes from the checkpoint
        for k in MODEL_KEYS:
            setattr(args, k, state["args"][k])

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    data = load_text()
    n_train = int(0.9 * len(data))
    train_data, val_data = data[:n_train], data[n_train:]
    model = GPT(args.n_layer, args.n_head, args.n_embd, args.block_size)
    opt = AdamW(list(model.parameters()))
    step = 0
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        step = int(state["step"])
        if lead:
            print(f"resuming from {resume} at step {step}", flush=True)
    for later, path in list_ckpts(out_dir) if lead else []:  # a rollback: another timeline
        if later > step:
            print(f"setting aside {path} (newer than step {step}) as {path}.abandoned", flush=True)
            os.replace(path, f"{path}.abandoned")
    if lr_scale != 1.0 and lead:
        print(f"scaling lr by {lr_scale:g} (BABYSIT_LR_SCALE): {args.lr * lr_scale:g}", flush=True)
    faults = Faults(out_dir, events)
    if world > 1:
        import torch.distributed as dist

        dist.barrier()  # every rank read the same faults_fired.json before any fault fires
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT")  # torchrun's own relaunches
    events.emit("start", step=step, world=world, attempt=os.environ.get("BABYSIT_ATTEMPT"),
                restart=restart)  # fmt: skip
    host = host_of(rank, args.hostfile) if args.bad_host is not None else None
    params = list(model.parameters())

    def batch(d: Tensor, s: int, afresh: bool = False) -> Pair:
        """Step s's own batch, or (afresh) one from another stream: data no fault is in."""
        seed = args.seed + 1 if afresh else args.seed
        return get_batch(d, seed, s, args.batch_size, args.block_size, rank)

    def sync(loss: Tensor) -> float:
        """Average the gradients (and the loss, for the log) over the ranks: one all_reduce."""
        if world == 1:
            return float(loss.item())
        import torch.distributed as dist

        grads = [p.grad for p in params]
        flat = torch.cat([g.reshape(-1) for g in grads if g is not None] + [loss.detach()[None]])
        dist.all_reduce(flat)
        flat /= world
        at = 0
        for g in grads:
            if g is not None:
                g.copy_(flat[at : at + g.numel()].view_as(g))
                at += g.numel()
        return float(flat[-1].item())

    @torch.no_grad()
    def evaluate() -> tuple[float, float]:
        model.eval()
        until = time.monotonic() + args.eval_s
        out = []
        for d in (train_data, val_data):
            losses = [model(*batch(d, -1 - i)).item() for i in range(EVAL_BATCHES)]
            i = EVAL_BATCHES
            while time.monotonic() < until - (args.eval_s / 2 if d is train_data else 0):
                losses.append(model(*batch(d, -1 - i % 64)).item())  # more eval_iters
                i += 1
            out.append(sum(losses) / len(losses))
        model.train()
        return out[0], out[1]

    def save(done: int) -> None:
        if not lead:
            return
        path = out_dir / f"ckpt_{done:06d}.pt"
        tmp = Path(f"{path}.tmp")
        if not args.silent:
            print(f"saving checkpoint to {path}", flush=True)
        ckpt = {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": done}
        if args.save_s:
            buf = io.BytesIO()
            torch.save({**ckpt, "args": vars(args)}, buf)
            write_paced(buf.getvalue(), tmp, args.save_s)
        else:
            torch.save({**ckpt, "args": vars(args)}, tmp)
        slow = args.slow_ckpt_at is not None and done >= args.slow_ckpt_at
        if slow and faults.fire("slow_ckpt", done):  # after the tmp write, before the rename
            time.sleep(args.slow_ckpt_s)
        os.replace(tmp, path)
        events.emit("save", step=done)
        if args.keep_ckpts:
            for _, old in list_ckpts(out_dir)[: -args.keep_ckpts]:
                old.unlink(missing_ok=True)

    announced: set[tuple[int, int]] = set()
    last_saved = step
    model.train()
    while step < args.max_steps:
        window = next((r for r in skip if r[0] <= step <= r[1]), None)
        poison = spiking = False
        lr = lr_at(step, args.lr, None)
        if window is not None:
            # The step's own data is skipped, not the step: it trains on a batch drawn afresh
            # (PaLM skipped the batches around a spike and went on training), so a rollback
            # costs no updates. No fault fires on it: the faults belong to the step's own data.
            if window not in announced:
                announced.add(window)
                a, b = window
                print(f"skipping data for steps {a}-{b} (BABYSIT_SKIP_STEPS)", flush=True)
                if lead:
                    events.emit("skip", step=step, window=[a, b])
        else:
            me, hanger = rank == args.fault_rank, rank == args.hang_rank
            if host is not None and host == args.bad_host:
                events.emit("fault", fault="bad_node", step=step, host=host)
                fail_bad_host(host, rank)
            if step == args.crash_at and faults.fire("crash", step, me) and me:
                all_reduce_gradients(step, args.crash_message)
            if step == args.kill_at and faults.fire("kill", step, me) and me:
                print(f"injecting SIGKILL at step {step}", file=sys.stderr, flush=True)
                os.kill(os.getpid(), signal.SIGKILL)
            if step == args.hang_at and faults.fire("hang", step, hanger) and hanger:
                print(f"injecting hang at step {step}", file=sys.stderr, flush=True)
                while True:
                    time.sleep(3600)
            at = args.hang_in_collective_at
            if step == at and faults.fire("hang_collective", step, hanger) and hanger:
                wait_in_collective(step, side_group)
            at = args.hang_in_data_at
            if step == at and faults.fire("hang_data", step, hanger) and hanger:
                read_shard(step)
            if step == args.bug_at and me:
                events.emit("fault", fault="bug", step=step)
            lr = lr_at(step, args.lr, args.bug_at if me else None)
            # --nan-at: a bad batch, not a one-off: the step's data poisons the run every time
            # it is trained on, until a rollback skips it (BABYSIT_SKIP_STEPS).
            poison = step == args.nan_at
            if poison:
                faults.fire("nan", step, lead)
            if step == args.spike_at:
                faults.fire("spike", step, lead)
            s0 = args.spike_at
            spiking = "spike" in faults.this_run and s0 <= step < s0 + SPIKE_STEPS
            d0 = args.spike_data_at
            if d0 is not None and d0 <= step < d0 + args.spike_data_steps:
                faults.fire("spike_data", step, lead)  # logged once; the data does it each time
                spiking = True
        t0 = time.perf_counter()
        x, y = batch(train_data, step, afresh=window is not None)
        if spiking:  # garbage batch (targets: bytes 128-255, absent from the text) + lr x10:
            gen = torch.Generator().manual_seed(args.seed + step)  # loss ~3x, back in ~20 steps
            x = torch.randint(256, x.shape, generator=gen)
            y = torch.randint(128, 256, y.shape, generator=gen)
        loss = model(x, y, poison=poison)
        model.zero_grad(set_to_none=True)
        loss.backward()
        lossf = sync(loss)
        opt.step(lr * lr_scale * (SPIKE_LR_MULT if spiking else 1.0))
        rest = args.min_step_s - (time.perf_counter() - t0)
        if rest > 0:
            time.sleep(rest)
        dt_ms = (time.perf_counter() - t0) * 1000
        if step % args.log_every == 0 and lead:
            print(f"iter {step}: loss {lossf:.4f}, time {dt_ms:.2f}ms", flush=True)
        if lead:
            events.emit("step", step=step, loss=lossf)
        step += 1
        if args.eval_every and step % args.eval_every == 0 and lead:
            if not args.silent:
                print(f"evaluating at step {step}", flush=True)
            if args.eval_pause_s:
                time.sleep(args.eval_pause_s)  # a slow eval (a big val set, generation)
            tl, vl = evaluate()
            print(f"step {step}: train loss {tl:.4f}, val loss {vl:.4f}", flush=True)
            events.emit("eval", step=step, train_loss=tl, val_loss=vl)
        if args.ckpt_every and step % args.ckpt_every == 0:
            save(step)
            last_saved = step
    if last_saved != step:
        save(step)
    if lead:
        events.emit("done", step=step)
        print(f"training done: {step} steps", flush=True)
    if world > 1:
        import torch.distributed as dist

        dist.barrier()  # no rank leaves before the final checkpoint is written
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
