"""A tiny Lightning run on the CPU, babysat as it is: a recipe and a test subject.

Usage:
    python examples/lightning/train.py --out-dir out --max-steps 60
    python examples/lightning/train.py --out-dir out --nan-at 35      # a NaN, once per out-dir
    babysit run --checkpoint 'out/step=*.ckpt' --resume-args '--ckpt-path {checkpoint}' -- \\
        python examples/lightning/train.py --out-dir out --nan-at 35

A 2-layer MLP learns a fixed random linear map from synthetic data (so the loss goes down);
nothing is downloaded. What babysit reads is what Lightning prints by itself: its progress bar
(`Epoch 0:  45%|████▌     | 27/60 [00:03<00:04, 8.1it/s, v_num=0, train_loss=0.231,
grad_norm=1.04]`), where a NaN reads `nan.0`. The bar counts batches in the epoch; babysit
makes it the global step with the epoch number and the bar's total (so with
`accumulate_grad_batches` > 1, log the step yourself: `self.log("step", ...)` below is one way).

Checkpoints are `OUT_DIR/step=N.ckpt` (N = optimizer steps done), written every `--ckpt-every`
steps by ModelCheckpoint. `--nan-at K` makes the loss of step K (1-based) NaN, once per output
directory (`OUT_DIR/nan_fired` remembers it). A resumed run (`--ckpt-path FILE`) moves the
checkpoints newer than FILE to `OUT_DIR/abandoned/`: they belong to the timeline that was
rolled back.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint, TQDMProgressBar
from torch import Tensor, nn
from torch.utils.data import DataLoader, TensorDataset

CKPT_RE = re.compile(r"^step=(\d+)\.ckpt$")


class Tiny(L.LightningModule):
    def __init__(self, lr: float, nan_at: int | None, marker: Path) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))
        self.lr, self.nan_at, self.marker = lr, nan_at, marker

    def training_step(self, batch: tuple[Tensor, Tensor], batch_idx: int) -> Tensor:
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        # global_step counts the steps done: step `nan_at` (1-based) runs when `nan_at - 1` are.
        if self.global_step + 1 == self.nan_at and not self.marker.exists():
            self.marker.write_text(f"{self.nan_at}\n")
            print(f"injecting a NaN at step {self.nan_at}", file=sys.stderr, flush=True)
            loss = loss * float("nan")
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def on_before_optimizer_step(self, optimizer: Any) -> None:
        norms = [p.grad.norm() for p in self.parameters() if p.grad is not None]
        self.log("grad_norm", torch.stack(norms).norm(), prog_bar=True)

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=self.lr, momentum=0.9)


def data(n: int, batch: int, seed: int) -> DataLoader[tuple[Tensor, ...]]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=gen)
    w = torch.randn(16, 4, generator=gen) / 4
    y = x @ w + 0.1 * torch.randn(n, 4, generator=gen)
    return DataLoader(TensorDataset(x, y), batch_size=batch, shuffle=True, generator=gen)


def set_aside_newer(out_dir: Path, resume: Path) -> None:
    """Checkpoints newer than the one resumed from are another timeline's: moved aside."""
    m = CKPT_RE.match(resume.name)
    if m is None:
        return
    for path in sorted(out_dir.iterdir()):
        later = CKPT_RE.match(path.name)
        if later is not None and int(later.group(1)) > int(m.group(1)):
            aside = out_dir / "abandoned"
            aside.mkdir(exist_ok=True)
            print(f"setting aside {path} (newer than {resume.name})", file=sys.stderr, flush=True)
            shutil.move(str(path), str(aside / f"{path.name}.{os.getpid()}"))


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description="A tiny Lightning run on the CPU, for babysit.")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--max-steps", type=int, default=60)
    p.add_argument("--examples", type=int, default=640, help="dataset size")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--ckpt-every", type=int, default=10)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--devices", type=int, default=1, help="CPU processes (DDP with gloo if > 1)")
    p.add_argument("--ckpt-path", default=None, help="checkpoint to resume from")
    p.add_argument("--nan-at", type=int, default=None, help="step whose loss is NaN (once)")
    return p.parse_args()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", ".*does not have many workers.*")
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.ckpt_path:
        set_aside_newer(out_dir, Path(args.ckpt_path))
    L.seed_everything(args.seed, verbose=False)
    model = Tiny(args.lr, args.nan_at, out_dir / "nan_fired")
    ckpt = ModelCheckpoint(
        dirpath=out_dir,
        filename="{step}",
        every_n_train_steps=args.ckpt_every,
        save_top_k=-1,
    )
    trainer = L.Trainer(
        max_steps=args.max_steps,
        accelerator="cpu",
        devices=args.devices,
        strategy="ddp" if args.devices > 1 else "auto",
        # tqdm's bar, not the rich one Lightning picks when rich is installed: rich draws
        # nothing into a pipe or a file until the end.
        callbacks=[ckpt, TQDMProgressBar()],
        logger=False,
        enable_model_summary=False,
        log_every_n_steps=1,
        default_root_dir=str(out_dir),
    )
    trainer.fit(model, data(args.examples, args.batch_size, args.seed), ckpt_path=args.ckpt_path)
    print("training done", flush=True)


if __name__ == "__main__":
    main()
