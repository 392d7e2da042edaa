"""A tiny Hugging Face Trainer run on the CPU, babysat as it is: a recipe and a test subject.

Usage:
    python examples/hf_trainer/train.py --output-dir out --max-steps 60
    python examples/hf_trainer/train.py --output-dir out --nan-at 35     # a NaN, once per out-dir
    babysit run --checkpoint 'out/checkpoint-*' \\
        --resume-args '--resume_from_checkpoint {checkpoint}' -- \\
        python examples/hf_trainer/train.py --output-dir out --nan-at 35

The model is a 2-layer GPT-2 (or Llama, `--arch llama`) with 32 dimensions built from its
config, so nothing is downloaded; the data is synthetic (noisy repeating token patterns, so the
loss goes down). What babysit reads is what the Trainer prints by itself: the progress bar on
stderr (` 45%|████▌     | 27/60 [00:03<00:04, 8.1it/s]`) and the log dict on stdout
(`{'loss': '4.12', 'grad_norm': '1.3', 'learning_rate': '0.001', 'epoch': '0.45'}`).

Checkpoints are the Trainer's own `OUTPUT_DIR/checkpoint-N/` (N = optimizer steps done).
`--nan-at K` makes the forward pass of step K (1-based, as the Trainer's `global_step` after
it) return NaN, once per output directory (`OUTPUT_DIR/nan_fired` remembers it), so the
attempt resumed from a checkpoint trains on. `logging_nan_inf_filter` is off: by default the
Trainer prints the average of the window instead of a NaN loss, and babysit then sees only
`grad_norm: nan` (see the README recipe).

A resumed run (`--resume_from_checkpoint DIR`) moves the checkpoints newer than DIR to
`OUTPUT_DIR/abandoned/`: they belong to the timeline that was rolled back, and a later rollback
must not pick one of them.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("WANDB_DISABLED", "true")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch
from torch.utils.data import Dataset
from transformers import (
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedModel,
    Trainer,
    TrainerCallback,
    TrainingArguments,
)

VOCAB = 64
CKPT_RE = re.compile(r"^checkpoint-(\d+)$")


class Patterns(Dataset[dict[str, torch.Tensor]]):
    """Sequences that repeat a short random pattern, with 10% noise: learnable, not trivial.
    Item i is the same in every run (seeded by i)."""

    def __init__(self, n: int, block: int, seed: int) -> None:
        self.n, self.block, self.seed = n, block, seed

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        gen = torch.Generator().manual_seed(self.seed * 1_000_003 + i)
        period = int(torch.randint(2, 6, (1,), generator=gen))
        pattern = torch.randint(VOCAB, (period,), generator=gen)
        ids = pattern.repeat(self.block // period + 1)[: self.block]
        noise = torch.rand(self.block, generator=gen) < 0.1
        ids = torch.where(noise, torch.randint(VOCAB, (self.block,), generator=gen), ids)
        return {"input_ids": ids, "labels": ids.clone()}


def build_model(arch: str, block: int) -> PreTrainedModel:
    if arch == "llama":
        llama = LlamaConfig(
            vocab_size=VOCAB,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=block,
            bos_token_id=0,
            eos_token_id=0,
        )
        return LlamaForCausalLM(llama)
    gpt2 = GPT2Config(
        vocab_size=VOCAB,
        n_positions=block,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=0,
        eos_token_id=0,
    )
    return GPT2LMHeadModel(gpt2)


class InjectNaN(TrainerCallback):
    """Step `at`'s forward pass returns NaN logits (a forward hook armed for that step only),
    the first time only: `marker` remembers that it fired."""

    def __init__(self, model: torch.nn.Module, at: int, marker: Path) -> None:
        self.at, self.marker, self.armed = at, marker, False
        model.register_forward_hook(self._hook)

    def _hook(self, _module: torch.nn.Module, _inputs: Any, output: Any) -> Any:
        if self.armed:  # the loss too: the model computed it from the logits already
            output.logits = output.logits * float("nan")
            output.loss = output.loss * float("nan")
        return output

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        # global_step counts the steps done: step `at` (1-based) begins when `at - 1` are done.
        if state.global_step + 1 == self.at and not self.marker.exists():
            self.marker.write_text(f"{self.at}\n")
            print(f"injecting a NaN at step {self.at}", file=sys.stderr, flush=True)
            self.armed = True

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.armed = False


def set_aside_newer(output_dir: Path, resume: Path) -> None:
    """Checkpoints newer than the one resumed from are another timeline's: moved aside."""
    m = CKPT_RE.match(resume.name)
    if m is None:
        return
    for path in sorted(output_dir.iterdir()):
        later = CKPT_RE.match(path.name)
        if later is not None and int(later.group(1)) > int(m.group(1)):
            aside = output_dir / "abandoned"
            aside.mkdir(exist_ok=True)
            print(f"setting aside {path} (newer than {resume.name})", file=sys.stderr, flush=True)
            shutil.move(str(path), str(aside / f"{path.name}.{os.getpid()}"))


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description="A tiny HF Trainer run on the CPU, for babysit.")
    p.add_argument("--output-dir", required=True)
    p.add_argument("--max-steps", type=int, default=60)
    p.add_argument("--epochs", type=float, default=0, help="train for epochs, not --max-steps")
    p.add_argument("--examples", type=int, default=512, help="dataset size")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--block-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--logging-steps", type=int, default=1)
    p.add_argument("--save-steps", type=int, default=10)
    p.add_argument("--arch", choices=("gpt2", "llama"), default="gpt2")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--ddp-backend", default=None, help="gloo under torchrun on CPUs")
    p.add_argument("--resume_from_checkpoint", "--resume-from-checkpoint", default=None)
    p.add_argument("--nan-at", type=int, default=None, help="step whose loss is NaN (once)")
    return p.parse_args()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    output_dir = Path(args.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    if args.resume_from_checkpoint:
        set_aside_newer(output_dir, Path(args.resume_from_checkpoint))
    torch.manual_seed(args.seed)
    model = build_model(args.arch, args.block_size)
    training = TrainingArguments(
        output_dir=str(output_dir),
        max_steps=-1 if args.epochs else args.max_steps,
        num_train_epochs=args.epochs or 1,
        per_device_train_batch_size=args.batch_size,
        learning_rate=args.lr,
        warmup_steps=5,
        logging_steps=args.logging_steps,
        save_steps=args.save_steps,
        save_total_limit=None,
        report_to=[],
        use_cpu=True,
        dataloader_num_workers=0,
        logging_nan_inf_filter=False,  # print a NaN loss as NaN (the default hides it)
        seed=args.seed,
        ddp_backend=args.ddp_backend,
    )
    trainer = Trainer(
        model=model,
        args=training,
        train_dataset=Patterns(args.examples, args.block_size, args.seed),
    )
    if args.nan_at is not None:
        trainer.add_callback(InjectNaN(model, args.nan_at, output_dir / "nan_fired"))
    trainer.train(resume_from_checkpoint=args.resume_from_checkpoint)
    print("training done", flush=True)


if __name__ == "__main__":
    main()
