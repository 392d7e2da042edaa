"""babysit.parse.metrics: vital signs from the lines trainers print, as they print them.

Sample lines are real unless marked "built from": each cites the issue or source it was copied
from (see also /work/shared/FORMATS.md).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping

import pytest

from babysit.parse.metrics import parse_metrics, split_prefix
from babysit.records import Metric, OutputLine

TS = 123.0
NAN = float("nan")
INF = float("inf")


def parse(text: str, stream: str = "stdout", number: int = 7) -> Metric | None:
    return parse_metrics(OutputLine(stream, number, text, TS))


def metric(text: str) -> Metric:
    m = parse(text)
    assert m is not None, f"not parsed as metrics: {text!r}"
    return m


def check(values: Mapping[str, float], expected: Mapping[str, float], exact: bool = False) -> None:
    """`values` holds `expected` (NaN equals NaN); with `exact`, nothing else."""
    for key, want in expected.items():
        assert key in values, f"{key!r} missing from {dict(values)}"
        got = values[key]
        if math.isnan(want):
            assert math.isnan(got), f"{key}: {got} is not NaN"
        else:
            assert got == pytest.approx(want, rel=1e-9), f"{key}: {got} != {want}"
    if exact:
        assert set(values) == set(expected), f"{sorted(values)} != {sorted(expected)}"


# -- launcher prefixes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rank", "rest"),
    [
        ("[rank3]:step: 14", 3, "step: 14"),
        ("[rank3]: step: 14", 3, "step: 14"),
        (
            "[rank12]:[W1130 12:00:01.556 Utils.hpp:164] Warning",
            12,
            "[W1130 12:00:01.556 Utils.hpp:164] Warning",
        ),
        ("[default0]:iter 1: loss 2.0", 0, "iter 1: loss 2.0"),
        ("[default7]: iter 1: loss 2.0", 7, "iter 1: loss 2.0"),
        ("3: step=1 loss=2", 3, "step=1 loss=2"),
        ("  3: step=1 loss=2", 3, "step=1 loss=2"),  # srun right-aligns labels past 9 tasks
        ("11: step=1 loss=2", 11, "step=1 loss=2"),
        ("[1,3]<stdout>:step=1 loss=2", 3, "step=1 loss=2"),
        ("[1,3]<stderr>: step=1 loss=2", 3, "step=1 loss=2"),
        ("\x1b[1m[rank3]:\x1b[0m step: 14  loss: 7.1", 3, "step: 14  loss: 7.1"),
        ("0: [rank3]: x", 3, "x"),  # srun torchrun: the global rank inside the task label
        ("0: [default3]: x", 0, "[default3]: x"),  # a local rank is not the rank
        ("iter 1: loss 2.0", None, "iter 1: loss 2.0"),
        ("[titan] 2025-06-16 22:30:50,322 - root", None, "[titan] 2025-06-16 22:30:50,322 - root"),
        ("[2025-01-01 12:00:00] iteration 1/ 2 |", None, "[2025-01-01 12:00:00] iteration 1/ 2 |"),
        ("10/30 22:19:57 - mmengine - INFO", None, "10/30 22:19:57 - mmengine - INFO"),
        ("12:00:00 started", None, "12:00:00 started"),
        ("[rank]: x", None, "[rank]: x"),
        ("[rankX]: x", None, "[rankX]: x"),
        ("\x1b[31mred\x1b[0m", None, "red"),
        ("", None, ""),
    ],
)
def test_split_prefix(text: str, rank: int | None, rest: str) -> None:
    assert split_prefix(text) == (rank, rest)


def test_the_record_carries_rank_stream_line_and_time() -> None:
    m = parse("[rank5]: iter 340: loss 5.4983, time 33785.52ms, mfu 0.96%", "stderr", 42)
    assert m == Metric(
        340,
        {"loss": 5.4983, "step_time_ms": 33785.52, "mfu": 0.96},
        TS,
        "nanogpt",
        rank=5,
        stream="stderr",
        line=42,
    )


# -- nanoGPT, nanochat, llm.c --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "step", "expected"),
    [
        # karpathy/nanoGPT#466
        (
            "iter 340: loss 5.4983, time 33785.52ms, mfu 0.96%",
            340,
            {"loss": 5.4983, "step_time_ms": 33785.52, "mfu": 0.96},
        ),
        # nanoGPT before warm-up: the MFU placeholder (FORMATS.md)
        (
            "iter 0: loss 2.7512, time 30728.83ms, mfu -100.00%",
            0,
            {"loss": 2.7512, "step_time_ms": 30728.83, "mfu": -100.0},
        ),
        # nanoGPT eval line (train.py: `step {iter_num}: train loss ..., val loss ...`)
        ("step 0: train loss 2.2365, val loss 1.9580", 0, {"loss": 2.2365, "val_loss": 1.958}),
        # built from the nanoGPT forks that print `lr {lr:.2e}` in place of mfu
        (
            "iter 1200: loss 3.1415, time 120.50ms, lr 6.00e-04",
            1200,
            {"loss": 3.1415, "step_time_ms": 120.5, "lr": 6e-4},
        ),
    ],
)
def test_nanogpt(text: str, step: int, expected: dict[str, float]) -> None:
    m = metric(text)
    assert (m.source, m.step) == ("nanogpt", step)
    check(m.values, expected, exact=True)


def test_nanochat() -> None:
    # karpathy/nanochat#242 (FORMATS.md), grad_norm filled in for the `…` there
    m = metric(
        "step 00100/21400 (0.47%) | loss: 3.123456 | grad_norm: 0.8123 | lrm: 1.00 | "
        "dt: 123.45ms | tok/sec: 1,234,567 | mfu: 45.67 | total time: 1.23m"
    )
    assert (m.source, m.step) == ("nanochat", 100)
    check(
        m.values,
        {
            "loss": 3.123456,
            "grad_norm": 0.8123,
            "lrm": 1.0,
            "step_time_ms": 123.45,
            "tokens_per_s": 1234567,
            "mfu": 45.67,
            "total time": 1.23,
        },
        exact=True,
    )


def test_llmc() -> None:
    # karpathy/llm.c#796
    m = metric(
        "step   61/74 | loss 3.208939 (+nanz)| norm 1.4800 (+nanz)| lr 3.00e-04 | 44.57 ms | "
        "-100.0% bf16 MFU | 91886 tok/s"
    )
    assert (m.source, m.step) == ("llmc", 61)
    check(
        m.values,
        {
            "loss": 3.208939,
            "grad_norm": 1.48,
            "lr": 3e-4,
            "step_time_ms": 44.57,
            "mfu": -100.0,
            "tokens_per_s": 91886,
        },
        exact=True,
    )


def test_llmc_nan_loss() -> None:
    # anthonix/llm.c#2
    m = metric(
        "step   10/74 | loss     nan (+nanz)| norm    nan (+nanz)| lr 3.00e-04 | 36.58 ms | "
        "9.2% bf16 MFU | 112241 tok/s"
    )
    assert m.step == 10
    check(m.values, {"loss": NAN, "grad_norm": NAN, "mfu": 9.2, "tokens_per_s": 112241})


def test_llmc_zscores_are_kept_when_numeric() -> None:
    # built from train_gpt2.cu's format once the outlier detector has a window
    m = metric(
        "step  500/5000 | loss 3.102000 (-0.51z)| norm 0.3100 (2.75z)| lr 6.00e-04 | "
        "44.57 ms | 51.2% bf16 MFU | 91886 tok/s"
    )
    check(m.values, {"loss": 3.102, "loss_z": -0.51, "grad_norm": 0.31, "grad_norm_z": 2.75})


# -- HF Trainer / TRL / JSON lines ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # AnswerDotAI/ModernBERT#233: bare nan, which ast.literal_eval rejects
        (
            "{'loss': 0.2051, 'grad_norm': nan, 'learning_rate': 9.774074342405685e-06, "
            "'epoch': 0.53}",
            {"loss": 0.2051, "grad_norm": NAN, "lr": 9.774074342405685e-06, "epoch": 0.53},
        ),
        # huggingface/transformers#14531 (older: no grad_norm)
        (
            "{'loss': 6.2645, 'learning_rate': 0.001, 'epoch': 0.02}",
            {"loss": 6.2645, "lr": 0.001, "epoch": 0.02},
        ),
        # newer ProgressCallback copies print floats as strings (FORMATS.md)
        (
            "{'loss': '2.345', 'grad_norm': '0.5', 'learning_rate': '1e-05', 'epoch': '0.1'}",
            {"loss": 2.345, "grad_norm": 0.5, "lr": 1e-05, "epoch": 0.1},
        ),
        # eval dicts [K]
        (
            "{'eval_loss': 2.1043, 'eval_runtime': 3.21, 'eval_samples_per_second': 311.5, "
            "'epoch': 1.0}",
            {
                "val_loss": 2.1043,
                "eval_runtime": 3.21,
                "eval_samples_per_second": 311.5,
                "epoch": 1.0,
            },
        ),
        # the final summary: train_loss is the run's average, not the loss at a step
        (
            "{'train_runtime': 1234.5, 'train_samples_per_second': 12.3, "
            "'train_steps_per_second': 0.4, 'train_loss': 2.3456, 'epoch': 3.0}",
            {
                "train_loss": 2.3456,
                "train_runtime": 1234.5,
                "train_samples_per_second": 12.3,
                "train_steps_per_second": 0.4,
                "epoch": 3.0,
            },
        ),
    ],
)
def test_hf_trainer_dicts(text: str, expected: dict[str, float]) -> None:
    m = metric(text)
    assert (m.source, m.step) == ("hf", None)
    check(m.values, expected, exact=True)


def test_trl_grpo_dict() -> None:
    # bingreeky/MemGen#33 (the `…` of FORMATS.md left out); entropy and kl as TRL logs them
    m = metric(
        "{'loss': -0.2874, 'grad_norm': 6.23, 'learning_rate': 1.94e-06, 'num_tokens': 280752.0, "
        "'completions/mean_length': 163.0, 'completions/clipped_ratio': 0.0, "
        "'rewards/compute_reward/mean': 0.375, 'reward': 0.375, 'reward_std': 0.5175, "
        "'frac_reward_zero_std': 0.0, 'clip_ratio/low_mean': 0.0, 'entropy': 0.91, 'kl': 0.0012, "
        "'epoch': 0.02}"
    )
    check(
        m.values,
        {
            "loss": -0.2874,
            "grad_norm": 6.23,
            "lr": 1.94e-06,
            "num_tokens": 280752.0,
            "completions/mean_length": 163.0,
            "completions/clipped_ratio": 0.0,
            "rewards/compute_reward/mean": 0.375,
            "reward": 0.375,
            "reward_std": 0.5175,
            "frac_reward_zero_std": 0.0,
            "clip_ratio/low_mean": 0.0,
            "entropy": 0.91,
            "kl": 0.0012,
            "epoch": 0.02,
        },
        exact=True,
    )


def test_hf_dict_with_a_step() -> None:
    assert metric("{'loss': 1.5, 'step': 250}").step == 250
    assert metric("{'loss': 1.5, 'global_step': 250}").step == 250
    # ms-swift: `'global_step/max_steps': '10/1000'`, clock strings left out
    m = metric(
        "{'loss': 1.2, 'grad_norm': 3.4, 'learning_rate': 1e-05, 'memory(GiB)': 23.4, "
        "'train_speed(iter/s)': 0.31, 'epoch': 0.1, 'global_step/max_steps': '10/1000', "
        "'elapsed_time': '1m 2s', 'remaining_time': '2h 3m'}"
    )
    assert m.step == 10
    check(
        m.values,
        {
            "loss": 1.2,
            "grad_norm": 3.4,
            "lr": 1e-05,
            "memory_gib": 23.4,
            "train_speed(iter/s)": 0.31,
            "epoch": 0.1,
        },
        exact=True,
    )


def test_hf_dict_after_a_progress_bar() -> None:
    # Time-MoE/Time-MoE#71: the bar and the dict share a physical line
    m = metric(
        "100%|██████████| 7/7 [00:00<00:00, 1809.34it/s]\r"
        "{'loss': 0.1474, 'grad_norm': nan, 'learning_rate': 0.0001, 'epoch': 0.04}"
    )
    check(m.values, {"loss": 0.1474, "grad_norm": NAN, "lr": 0.0001})


@pytest.mark.parametrize(
    ("text", "step", "expected"),
    [
        ('{"step": 10, "loss": 2.3}', 10, {"loss": 2.3}),
        ('{"step": 10, "loss": NaN, "grad_norm": Infinity}', 10, {"loss": NAN, "grad_norm": INF}),
        ('{"train/global_step": 7, "train/loss": 1.5, "train/lr": 0.1}', 7, {"loss": 1.5}),
        ('{"iteration": 3, "acc": 0.5}', 3, {"acc": 0.5}),  # a step makes it metrics
        ('{"loss": 2.0, "lambda": 1.0, "class": 2, "def": 3}', None, {"lambda": 1.0, "class": 2}),
        # huggingface trainer_state.json log_history entries, one per line in a JSONL file
        (
            '{"epoch": 0.0025259541791911896, "grad_norm": 1.0528565645217896, '
            '"learning_rate": 4.800000000000001e-06, "loss": 0.1677, "step": 25}',
            25,
            {"grad_norm": 1.0528565645217896, "lr": 4.800000000000001e-06, "loss": 0.1677},
        ),
    ],
)
def test_json_lines(text: str, step: int | None, expected: dict[str, float]) -> None:
    m = metric(text)
    assert (m.source, m.step) == ("json", step)
    check(m.values, expected)


def test_python_keywords_as_metric_names() -> None:
    check(metric("{'lambda': 1.0, 'class': 2, 'loss': 0.5}").values, {"lambda": 1, "class": 2})


# -- tqdm and Lightning bars ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Lightning-AI/pytorch-lightning#4225 (PL 1.x)
        (
            "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]",
            {"epoch": 0, "loss": 10.072, "v_num": 193315, "step_time_ms": 4470},
        ),
        # Lightning-AI/pytorch-lightning#14094
        (
            "Epoch 0:  96%|███▍ | 974/1016 [00:34<00:01, 27.84it/s, loss=0.223, v_num=77, "
            "acc=0.875]",
            {"epoch": 0, "loss": 0.223, "v_num": 77, "acc": 0.875, "iters_per_s": 27.84},
        ),
        # Lightning-AI/pytorch-lightning#3866: no bar characters; train_loss kept apart from loss
        (
            "Epoch 0:  97% 1651/1702 [13:00<00:24,  2.11it/s, loss=0.158, v_num=0, "
            "train_loss=0.149]",
            {"epoch": 0, "loss": 0.158, "v_num": 0, "train_loss": 0.149, "iters_per_s": 2.11},
        ),
        # official-stockfish/nnue-pytorch#83
        (
            "Epoch 1:  39%|█████████▍              | 4846/12331 [05:59<09:15, 13.47it/s, "
            "loss=0.0136, v_num=1]",
            {"epoch": 1, "loss": 0.0136, "v_num": 1, "iters_per_s": 13.47},
        ),
        # Lightning 2.x with a prog_bar metric [K]: train_loss is the loss
        (
            "Epoch 3:  50%|█████     | 50/100 [00:05<00:05,  9.80it/s, v_num=2, train_loss=2.310]",
            {"epoch": 3, "v_num": 2, "loss": 2.31, "iters_per_s": 9.8},
        ),
        # the first redraw, before any rate: the epoch alone
        ("Epoch 0:   0%|          | 0/18 [00:00<?, ?it/s]", {"epoch": 0}),
    ],
)
def test_lightning(text: str, expected: dict[str, float]) -> None:
    m = metric(text)
    assert (m.source, m.step) == ("lightning", None)  # the batch index is not a global step
    check(m.values, expected, exact=True)


def test_tqdm_redraws_split_on_carriage_returns() -> None:
    # Lightning-AI/pytorch-lightning#4225: updates pile up on one "line" in Slurm logs
    m = metric(
        "Epoch 0:   6%|▌         | 1/18 [00:08<02:29,  8.77s/it]\r"
        "Epoch 0:   6%|▌         | 1/18 [00:08<02:29,  8.77s/it, loss=10.473, v_num=193315]\r"
        "Epoch 0:  11%|█         | 2/18 [00:11<01:33,  5.82s/it, loss=10.224, v_num=193315]\r"
    )
    check(m.values, {"loss": 10.224, "step_time_ms": 5820})


def test_a_line_glued_after_a_bar() -> None:
    # huggingface/accelerate#1589: DeepSpeed's timer line right after HF's bar
    m = metric(
        "  3%|███        | 12/345 [00:07<06:50,  1.23s/it][2023-06-21 07:39:09,625] [INFO] "
        "[logging.py:96:log_dist] [Rank 0] rank=0 time (ms) | optimizer_allgather: 7.96 | "
        "optimizer_gradients: 0.02 | optimizer_step: 60.64"
    )
    assert m.source == "deepspeed"
    check(
        m.values,
        {
            "optimizer_allgather_ms": 7.96,
            "optimizer_gradients_ms": 0.02,
            "optimizer_step_ms": 60.64,
        },
        exact=True,
    )
    # built from the same pattern with a custom script's print after a bar
    m = metric(
        "Epoch Progress:   0%|          | 0/1000 [00:00<?, ?it/s]Dataset Size: 1%, Epoch: 1, "
        "Train Loss: 11.004348516464233, Val Loss: 10.997926981021196"
    )
    check(m.values, {"epoch": 1, "loss": 11.004348516464233, "val_loss": 10.997926981021196})


# -- Megatron-LM ---------------------------------------------------------------------------------


def test_megatron() -> None:
    # FORMATS.md: the real line of epfLLM/Megatron-LLM#11 plus the optional date and throughput
    m = metric(
        "[2025-01-01 12:00:00] iteration      122/  250000 | consumed samples:       124928 | "
        "elapsed time per iteration (ms): 86545.2 | throughput per GPU (TFLOP/s/GPU): 412.3 | "
        "learning rate: 9.150E-06 | global batch size:  1024 | lm loss: 2.504220E+00 | "
        "loss scale: 1.0 | grad norm: 0.231 | number of skipped iterations:   0 | "
        "number of nan iterations:   0 |"
    )
    assert (m.source, m.step) == ("megatron", 122)
    check(
        m.values,
        {
            "consumed samples": 124928,
            "step_time_ms": 86545.2,
            "tflops": 412.3,
            "lr": 9.15e-06,
            "global batch size": 1024,
            "loss": 2.50422,
            "loss_scale": 1.0,
            "grad_norm": 0.231,
            "skipped": 0,
            "nan_iterations": 0,
        },
        exact=True,
    )


def test_megatron_real_lines() -> None:
    # epfLLM/Megatron-LLM#11
    m = metric(
        " iteration      182/  250000 | consumed samples:       186368 | elapsed time per "
        "iteration (ms): 126995.3 | learning rate: 1.365E-05 | global batch size:  1024 | "
        "lm loss: 2.382640E+00 | loss scale: 1.0 | grad norm: 0.227 | number of skipped "
        "iterations:   0 | number of nan iterations:   0 |"
    )
    assert m.step == 182
    check(m.values, {"loss": 2.38264, "step_time_ms": 126995.3, "lr": 1.365e-05})
    # bigscience-workshop/Megatron-DeepSpeed#396: no lm loss, grad norm nan, DeepSpeed's extras
    m = metric(
        " iteration     5426/  250000 | consumed samples:        43408 | consumed tokens:     "
        "88899584 | elapsed time per iteration (ms): 4247.9 | learning rate: 2.999E-04 | global "
        "batch size:     8 | loss scale: 1.0 | grad norm: nan | actual seqlen:  2048 | number of "
        "skipped iterations:   0 | number of nan iterations:   0 | samples per second: 1.883 | "
        "TFLOPs: 78.36 |"
    )
    assert m.step == 5426
    check(
        m.values,
        {
            "grad_norm": NAN,
            "consumed tokens": 88899584,
            "actual seqlen": 2048,
            "samples_per_s": 1.883,
            "tflops": 78.36,
        },
    )
    assert "loss" not in m.values


def test_megatron_validation() -> None:
    # built from megatron/training/training.py (evaluate_and_print_results)
    m = metric(
        " validation loss at iteration 100 | lm loss value: 6.974014E+00 | "
        "lm loss PPL: 1.068319E+03 | "
    )
    assert (m.source, m.step) == ("megatron", 100)
    check(m.values, {"val_loss": 6.974014, "val_ppl": 1068.319}, exact=True)


# -- torchtitan ----------------------------------------------------------------------------------

TITAN_14 = (
    "[rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  "
    "grad_norm:  0.8319  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%"
)  # pytorch/torchtitan#3393


def test_torchtitan() -> None:
    m = metric(TITAN_14)
    assert (m.source, m.step, m.rank) == ("torchtitan", 14, 0)
    check(
        m.values,
        {
            "loss": 3.24405,
            "grad_norm": 0.8319,
            "memory_gib": 9.46,
            "memory_pct": 64.99,
            "tokens_per_s": 7282,
            "tflops": 0.52,
            "mfu": 0.17,
        },
        exact=True,
    )


def test_torchtitan_older_and_unprefixed() -> None:
    # pytorch/torchtitan#1287: no grad_norm
    m = metric(
        "[rank0]:[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200  loss:  6.1384  "
        "memory: 49.66GiB(52.28%)  tps: 5,856  tflops: 339.16  mfu: 34.29%"
    )
    assert m.step == 200
    check(m.values, {"loss": 6.1384, "memory_gib": 49.66, "tokens_per_s": 5856, "mfu": 34.29})
    # pytorch/torchtitan#2389: every rank prints it, no rank prefix, thousands separator
    m = metric(
        "[titan] 2026-02-24 19:46:17,508 - root - INFO - step:  4  loss:  7.62585  grad_norm: "
        "26.6250  memory: 66.91GiB(37.51%)  tps: 10,050  tflops: 314.71  mfu: 13.99%"
    )
    assert (m.step, m.rank) == (4, None)
    check(m.values, {"grad_norm": 26.625, "tokens_per_s": 10050, "tflops": 314.71})


def test_torchtitan_in_colour() -> None:
    # built from torchtitan/components/metrics.py: colours when writing to a TTY
    m = metric(
        "[rank0]:[titan] 2025-06-16 22:30:50,322 - root - INFO - \x1b[31mstep: 200  "
        "\x1b[32mloss:  6.1384  \x1b[33mgrad_norm:  0.5123  \x1b[38;2;180;60;0mmemory: "
        "49.66GiB(52.28%)  \x1b[34mtps: 5,856  \x1b[36mtflops: 339.16  \x1b[35mmfu: 34.29%\x1b[39m"
    )
    assert m.step == 200
    check(m.values, {"loss": 6.1384, "grad_norm": 0.5123, "tokens_per_s": 5856, "mfu": 34.29})


def test_torchtitan_validation() -> None:
    # built from torchtitan's validator log (FORMATS.md): `validate step: …  loss: …`
    m = metric(
        "[rank0]:[titan] 2025-06-16 22:35:00,000 - root - INFO - validate step: 200  "
        "loss:  6.0012  memory: 49.66GiB(52.28%)  tps: 21,042"
    )
    assert m.step == 200
    check(m.values, {"val_loss": 6.0012, "validate/tokens_per_s": 21042})
    assert "loss" not in m.values and "tokens_per_s" not in m.values


# -- DeepSpeed -----------------------------------------------------------------------------------


def test_deepspeed_log_dist() -> None:
    # deepspeedai/DeepSpeed#3742
    m = metric(
        "[2023-07-25 21:03:21,037] [INFO] [logging.py:96:log_dist] [Rank 0] step=35, skipped=0, "
        "lr=[2.1731931451279077e-06, 2.1731931451279077e-06], mom=[[0.9, 0.95], [0.9, 0.95]]"
    )
    assert (m.source, m.step) == ("deepspeed", 35)
    check(m.values, {"skipped": 0, "lr": 2.1731931451279077e-06}, exact=True)


def test_deepspeed_timer() -> None:
    # deepspeedai/DeepSpeed#3742
    m = metric(
        "[2023-07-25 21:03:17,269] [INFO] [timer.py:215:stop] epoch=0/micro_step=34/"
        "global_step=34, RunningAvgSamplesPerSec=7.864669709950182, "
        "CurrSamplesPerSec=8.00912418308922, MemAllocated=59.65GB, MaxMemAllocated=63.31GB"
    )
    assert (m.source, m.step) == ("deepspeed", 34)
    check(
        m.values,
        {
            "epoch": 0,
            "micro_step": 34,
            "runningavgsamplespersec": 7.864669709950182,
            "samples_per_s": 8.00912418308922,
            "memallocated": 59.65,
            "memory_gib": 63.31,
        },
        exact=True,
    )


def test_deepspeed_overflow() -> None:
    # deepspeedai/DeepSpeed#5779
    m = metric(
        "[2024-07-17 19:44:06,945] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] "
        "OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768"
    )
    assert (m.source, m.step) == ("deepspeed", None)
    check(m.values, {"loss_scale": 32768, "overflow": 1}, exact=True)
    m = metric(
        "[2024-07-17 19:44:06,945] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] "
        "OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, but hysteresis is 2. "
        "Reducing hysteresis to 1"
    )
    check(m.values, {"loss_scale": 65536, "overflow": 1}, exact=True)


def test_deepspeed_wall_clock_breakdown() -> None:
    # deepspeedai/DeepSpeed#1436: `step` there is the optimizer step's time, not a counter
    m = metric(
        "[2021-10-08 20:03:15,649] [INFO] [logging.py:68:log_dist] [Rank 0] rank=0 time (ms) | "
        "forward: 435.67 | backward: 744.11 | backward_inner: 513.92 | backward_allreduce: "
        "230.11 | step: 0.98"
    )
    assert m.step is None
    check(m.values, {"forward_ms": 435.67, "step_ms": 0.98}, exact=False)


# -- verl ----------------------------------------------------------------------------------------


def test_verl() -> None:
    # verl-project/verl#2060 (a slice of the line)
    m = metric(
        "step:1 - global_seqlen/min:484245.000 - global_seqlen/max:519990.000 - "
        "actor/entropy:0.323 - actor/kl_loss:0.000 - actor/kl_coef:0.001 - actor/pg_loss:0.001 - "
        "actor/pg_clipfrac:0.001 - actor/ppo_kl:-0.000 - actor/grad_norm:0.020 - "
        "perf/mfu/actor:0.343 - perf/max_memory_allocated_gb:62.447 - actor/lr:0.000 - "
        "training/global_step:1.000 - critic/score/mean:0.558 - critic/rewards/mean:0.558 - "
        "response_length/mean:288.698"
    )
    assert (m.source, m.step) == ("verl", 1)
    check(
        m.values,
        {
            "global_seqlen/min": 484245,
            "global_seqlen/max": 519990,
            "entropy": 0.323,
            "actor/kl_loss": 0.0,
            "actor/kl_coef": 0.001,
            "actor/pg_loss": 0.001,
            "actor/pg_clipfrac": 0.001,
            "kl": -0.0,  # ppo_kl is preferred; kl_loss keeps its own name
            "grad_norm": 0.02,
            "perf/mfu/actor": 0.343,  # a fraction, not the percent `mfu` means
            "perf/max_memory_allocated_gb": 62.447,
            "actor/lr": 0.0,
            "training/global_step": 1.0,
            "reward": 0.558,
            "critic/rewards/mean": 0.558,
            "response_length/mean": 288.698,
        },
        exact=True,
    )


def test_verl_validation_and_ray_prefix() -> None:
    # verl-project/verl#2060
    m = metric(
        "step:0 - val-aux/openai/gsm8k/reward/mean@1:0.565 - "
        "val-aux/openai/gsm8k/score/mean@1:0.565 - val-core/openai/gsm8k/acc/mean@1:0.508"
    )
    assert m.step == 0
    check(m.values, {"val-core/openai/gsm8k/acc/mean@1": 0.508})
    # zhaochenyang20/Awesome-ML-SYS-Tutorial#106: Ray's prefix, kl_loss without ppo_kl
    m = metric(
        "(TaskRunner pid=87031) step:83 - global_seqlen/min:340538.000 - "
        "actor/entropy_loss:0.317 - actor/kl_loss:0.024 - actor/grad_norm:0.006"
    )
    assert m.step == 83
    check(
        m.values,
        {
            "global_seqlen/min": 340538,
            "actor/entropy_loss": 0.317,
            "kl": 0.024,
            "grad_norm": 0.006,
        },
        exact=True,
    )


# -- mmengine / mmcv -----------------------------------------------------------------------------


def test_mmengine_epoch_based() -> None:
    # InternLM/xtuner#187
    m = metric(
        "10/30 22:19:57 - mmengine - INFO - Epoch(train) [1][240/735]  lr: 1.9813e-04  "
        "eta: 2:44:49  time: 2.8874  data_time: 0.0042  memory: 10762  loss: 2.5128  "
        "grad_norm: nan"
    )
    assert (m.source, m.step) == ("mmengine", None)
    check(
        m.values,
        {
            "epoch": 1,
            "lr": 1.9813e-04,
            "step_time_ms": 2887.4,
            "data_time": 0.0042,
            "memory_gib": 10762 / 1024,
            "loss": 2.5128,
            "grad_norm": NAN,
        },
        exact=True,
    )


def test_mmengine_iter_based() -> None:
    # open-mmlab/mmengine#155
    m = metric(
        "04/22 11:14:42 - mmengine - INFO - Iter(train) [10/270]  lr: 1.000e-02  eta: 0:00:27  "
        "time: 0.004  data_time: 0.000  memory: 0  loss: 5.3294"
    )
    assert m.step == 10
    check(m.values, {"lr": 0.01, "step_time_ms": 4.0, "loss": 5.3294})


def test_mmcv_before_mmengine() -> None:
    # NJU-LHRS/official-CMID#5
    m = metric(
        "2023-06-21 05:37:06,540 - mmseg - INFO - Iter [200/21600]\tlr: 9.998e-03, eta: 1:05:45, "
        "time: 0.141, data_time: 0.008, memory: 22159, decode.loss_ce: 1.2669, "
        "decode.acc_seg: 11.8965, aux.loss_ce: 0.4904, aux.acc_seg: 16.9658, loss: 1.7573"
    )
    assert (m.source, m.step) == ("mmengine", 200)
    check(
        m.values, {"lr": 9.998e-03, "step_time_ms": 141, "decode.loss_ce": 1.2669, "loss": 1.7573}
    )
    # JiaquanYe/TableMASTER-mmocr#32
    m = metric(
        "2021-11-22 01:32:34,502 - mmocr - INFO - Epoch [1][200/62598]\tlr: 1.000e-03, eta: 7 "
        "days, 15:55:58, time: 0.705, data_time: 0.002, memory: 7239, loss_ce: 0.5921, "
        "horizon_bbox_loss: 0.2210, vertical_bbox_loss: 0.1055, loss: 0.9186, grad_norm: 3.9772"
    )
    assert m.step is None
    check(m.values, {"epoch": 1, "loss": 0.9186, "grad_norm": 3.9772, "step_time_ms": 705})
    assert "eta" not in m.values


def test_mmengine_validation() -> None:
    # built from mmengine's LogProcessor for val
    m = metric("Epoch(val) [1][50/50]    loss: 0.7342  accuracy/top1: 76.5  time: 0.1012")
    check(
        m.values,
        {
            "epoch": 1,
            "val_loss": 0.7342,
            "accuracy/top1": 76.5,
            "time": 0.1012,
        },  # time: not a step's
        exact=True,
    )


# -- MaxText -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "step", "expected"),
    [
        # AI-Hypercomputer/maxtext#3440
        (
            "completed step: 30, seconds: 0.449, TFLOP/s/device: 1877.176, "
            "Tokens/s/device: 36470.971, total_weights: 131072, loss: nan",
            30,
            {
                "step_time_ms": 449.0,
                "tflops": 1877.176,
                "tokens_per_s": 36470.971,
                "total_weights": 131072,
                "loss": NAN,
            },
        ),
        # AI-Hypercomputer/maxtext#8 (2023)
        (
            "completed step: 15107, seconds: 2.167, TFLOP/s: 36.722, loss: 2.191",
            15107,
            {"step_time_ms": 2167.0, "tflops": 36.722, "loss": 2.191},
        ),
    ],
)
def test_maxtext(text: str, step: int, expected: dict[str, float]) -> None:
    m = metric(text)
    assert (m.source, m.step) == ("maxtext", step)
    check(m.values, expected, exact=True)


# -- generic forms -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "step", "expected"),
    [
        ("step=10 loss=2.31 lr=3e-4", 10, {"loss": 2.31, "lr": 3e-4}),
        ("step=10, loss=2.31, grad_norm=0.8", 10, {"loss": 2.31, "grad_norm": 0.8}),
        ("step: 10 | loss: 2.31 | grad_norm: 0.8", 10, {"loss": 2.31, "grad_norm": 0.8}),
        ("step: 10 - loss: 2.31 - lr: 1e-4", 10, {"loss": 2.31, "lr": 1e-4}),
        ("step: 10  loss: 2.31  grad_norm: 0.8", 10, {"loss": 2.31, "grad_norm": 0.8}),
        ("Step 100, Loss: 2.3000, LR: 1.0e-04", 100, {"loss": 2.3, "lr": 1e-4}),
        ("loss: 2.31", None, {"loss": 2.31}),
        ("reward=0.5 step=3", 3, {"reward": 0.5}),
        (
            "2024-05-01 10:00:00,123 - __main__ - INFO - step 10: loss=2.3100 grad_norm=1.2",
            10,
            {"loss": 2.31, "grad_norm": 1.2},
        ),
        # Keras: no step, ` - ` separators
        (
            "100/100 [==============================] - 5s 50ms/step - loss: 0.5000 - "
            "accuracy: 0.9000 - val_loss: 0.4000 - val_accuracy: 0.9100",
            None,
            {"loss": 0.5, "accuracy": 0.9, "val_loss": 0.4, "val_accuracy": 0.91},
        ),
        # huggingface/nanotron#23: humanised counts are scaled
        (
            "01/17/2024 13:47:27 [INFO|DP=0|PP=0|TP=0|ip-26-0-160-225]: iteration: 991 / 1000 | "
            "consumed_tokens: 634K | elapsed_time_per_iteration_ms: 45 | tokens_per_sec: 14.2K | "
            "tokens_per_sec_per_gpu: 1.78K | global_batch_size: 20 | lm_loss: 10.6 | lr: 1e-05 | "
            "model_tflops_per_gpu: 0.00869 | grad_norm: 0.515",
            991,
            {
                "consumed_tokens": 634e3,
                "step_time_ms": 45,
                "tokens_per_s": 14.2e3,
                "tokens_per_sec_per_gpu": 1.78e3,
                "loss": 10.6,
                "lr": 1e-05,
                "tflops": 0.00869,
                "grad_norm": 0.515,
            },
        ),
        # Lightning-AI/litgpt#1110
        (
            "Epoch 4 | iter 961 step 961 | loss train: 1.062, val: 1.057 | "
            "iter time: 529.46 ms (step)",
            961,
            {"epoch": 4, "loss": 1.062, "iter time": 529.46},
        ),
        # MzeroMiko/VMamba#273 (Swin-style: tab-separated `name value (average)`)
        (
            "[2024-07-27 03:37:34 vssm1_high_tiny_gradacc2] (main.py 295): INFO Train: "
            "[30/300][210/2859]\teta 0:25:26 lr 0.000872\t wd 0.0500\ttime 0.4205 (0.5761)\t"
            "data time 0.0010 (0.1443)\tmodel time 0.4195 (0.4317)\tloss 1.9993 (1.9758)\t"
            "grad_norm 2.1558 (2.5588)\tloss_scale 32768.0000 (32768.0000)\tmem 16138MB",
            None,
            {"loss": 1.9993, "grad_norm": 2.1558, "loss_scale": 32768},
        ),
    ],
)
def test_generic(text: str, step: int | None, expected: dict[str, float]) -> None:
    m = metric(text)
    assert (m.source, m.step) == ("generic", step)
    check(m.values, expected)


# -- numbers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("printed", "value"),
    [
        ("2.31", 2.31),
        ("-2.5", -2.5),
        (".5", 0.5),
        ("nan", NAN),
        ("NaN", NAN),
        ("inf", INF),
        ("-inf", -INF),
        ("Infinity", INF),
        ("-Infinity", -INF),
        ("10,050", 10050),
        ("1,234,567.5", 1234567.5),
        ("2.504220E+00", 2.50422),
        ("9.150E-06", 9.15e-06),
        ("0.17%", 0.17),
        ("-100.00%", -100.0),
        ("9.46GiB", 9.46),
        ("44.57ms", 44.57),
        ("1e309", INF),
        ("-1e309", -INF),
        ("634K", 634000),
        ("1.5M", 1.5e6),
        ("'2.345'", 2.345),
        ("np.float64(0.323)", 0.323),
        ("tensor(2.3100,", 2.31),
    ],
)
def test_number_forms(printed: str, value: float) -> None:
    check(metric(f"step=1 loss={printed}").values, {"loss": value}, exact=True)


@pytest.mark.parametrize(
    "printed", ["abc", "2:44:49", "2024-01-01", "1.2.3", "3kq2", "True", "None", "", "-", "."]
)
def test_a_value_that_does_not_parse_is_left_out(printed: str) -> None:
    check(metric(f"step=1 loss={printed} grad_norm=0.5").values, {"grad_norm": 0.5}, exact=True)


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("step=-5 loss=1", -5),
        ("step=123456789012345678901234567890 loss=1", 123456789012345678901234567890),
        ('{"step": 1e3, "loss": 1}', 1000),
        ("step=1.5 loss=1", None),  # not a counter
        ('{"step": 1e400, "loss": 1}', None),
    ],
)
def test_steps_are_returned_as_printed(text: str, step: int | None) -> None:
    assert metric(text).step == step


# -- not metrics ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Loading checkpoint: 50%",
        "Using device: cuda",
        "Starting epoch 3 of 10",
        "Step 5 of 100 done",  # progress without a metric: lines.py's business
        "[rank3]:[W1130 12:00:01.556 Utils.hpp:164] Warning: Environment variable "
        "NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead",
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/workspace/train.py", line 212, in train_one_epoch',
        "[rank0]:     loss.backward()",
        "RuntimeError: loss is NaN at step 1200",
        "/opt/conda/lib/python3.11/site-packages/torch/optim/lr_scheduler.py:143: UserWarning: "
        "Detected call of `lr_scheduler.step()` before `optimizer.step()`.",
        "Saving checkpoint to /checkpoints/run-42/step_1000 ...",
        "Loading checkpoint shards: 100%|██████████| 4/4 [00:03<00:00,  1.12it/s]",
        "  5%|▌         | 50/1000 [00:10<03:10,  5.00it/s]",
        "Validation DataLoader 0:  73%|████ | 115/157 [00:04<00:01, 27.54it/s]",
        "Sanity Checking DataLoader 0: 100%|██████████| 2/2 [00:00<00:00,  9.10it/s, loss=1.0]",
        "{'n_layer': 12, 'n_head': 12, 'learning_rate': 0.0006, 'max_iters': 600000}",
        "Namespace(batch_size=32, lr=0.001, max_steps=1000, warmup_steps=100, loss_scale=0)",
        '    "loss_scale": 0,',  # a DeepSpeed config, pretty-printed
        "[2023-07-25 21:00:00,000] [INFO] [config.py:962:print]   steps_per_print .......... 10",
        "[2023-07-25 21:00:00,000] [INFO] [config.py:962:print]   json = {",
        "epoch=3",
        "lr=0.001 epoch=2",
        "step 1/2 |",
        "iteration 1/ 2 |",
        "Epoch(train) [",
        "completed step: x",
        "{'step': 'abc', 'loss': 'abc'}",
    ],
)
def test_not_metrics(text: str) -> None:
    assert parse(text) is None


# -- hostile input -------------------------------------------------------------------------------


def test_binary_garbage_never_raises() -> None:
    rng = random.Random(1234)
    frames = (
        "{}",
        "loss={}",
        "step: {} loss: 1",
        "{{'{}': 1}}",
        "Epoch 0: {} 1%| | 1/9 [0<1, 1it/s, loss={}]",
    )
    for _ in range(300):
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(200))).decode(
            "utf-8", errors="replace"
        )
        for frame in frames:
            result = parse(frame.replace("{}", junk))
            assert result is None or isinstance(result, Metric)


@pytest.mark.parametrize(
    "text",
    [
        "\r",
        "\r\r\r",
        "{",
        "}",
        "{'",
        "\x00loss\x00=\x001",
        "\x1b[",
        "[rank3]:",
        "[rank99999999999]: loss=1",
        "step" * 1000,
        "{'" * 5000,
        "loss=" * 5000,
        "iteration 1/2 |" * 1000,
        "Epoch [" * 3000,
        "1%|" * 5000 + "it/s",
    ],
)
def test_odd_input_never_raises(text: str) -> None:
    result = parse(text)
    assert result is None or isinstance(result, Metric)


def test_a_64_kib_line() -> None:
    m = metric(("loss=1.0 " * 8000)[: 64 * 1024])
    check(m.values, {"loss": 1.0}, exact=True)
    wide = "{" + ", ".join(f"'k{i}': {i}" for i in range(7000)) + ", 'loss': 0.5}"
    m = metric(wide[: 64 * 1024 - 16] + ", 'loss': 0.5}")
    assert m.values["loss"] == 0.5 and m.values["k1"] == 1


# -- throughput ----------------------------------------------------------------------------------


def test_throughput_check_runs() -> None:
    """A smoke run of the benchmark the issue asks for (no timing assert: machines differ)."""
    rng = random.Random(7)
    noise = [
        "[rank{r}]:[W1130 12:00:01.123 ProcessGroupNCCL.cpp:4561] Warning: "
        "TORCH_NCCL_AVOID_RECORD_STREAMS is the default now (function operator())",
        '[rank{r}]:   File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", '
        "line 1511, in _wrapped_call_impl",
        "[rank{r}]:     return self._call_impl(*args, **kwargs)",
        "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read",
    ]
    metrics = [
        TITAN_14.replace("[rank0]", "[rank{r}]"),
        "[rank{r}]: iter 340: loss 5.4983, time 33785.52ms, mfu 0.96%",
        "[rank{r}]:{{'loss': 0.2051, 'grad_norm': nan, 'learning_rate': 9.77e-06, 'epoch': 0.53}}",
    ]
    lines = [
        OutputLine(
            "stdout",
            i,
            rng.choice(metrics if rng.random() < 0.3 else noise).format(r=rng.randrange(8)),
            TS,
        )
        for i in range(2000)
    ]
    found = list(map(parse_metrics, lines))
    parsed = [m for m in found if m is not None]
    assert 400 < len(parsed) < 800
    assert {m.source for m in parsed} == {"torchtitan", "nanogpt", "hf"}
    assert all(m.rank is not None and 0 <= m.rank < 8 for m in parsed)
