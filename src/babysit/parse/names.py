"""The canonical names of the quantities trainers print, their printed spellings, and how a
printed key and value become a canonical one. Pure; parse.formats' readers use them.

    key_of("Train Loss")  # -> "train loss"
    values = {}; put(values, "train loss", "5.49")  # values == {"loss": 5.49}
"""

from __future__ import annotations

from babysit.parse.numbers import DIGITS, millis, num, num_slow

Values = dict[str, float]


# Printed spellings (lower-cased) of the canonical quantities.
# fmt: off
_SPELLINGS: dict[str, tuple[str, ...]] = {
    "loss": ("lm loss", "lm_loss", "train loss", "train_loss", "train/loss", "training_loss",
             "loss train"),
    "val_loss": ("val loss", "val/loss", "eval_loss", "eval loss", "eval/loss", "valid_loss",
                 "validation loss", "validation_loss", "validation/loss"),
    "grad_norm": ("grad norm", "gradnorm", "grad-norm", "train/grad_norm", "actor/grad_norm"),
    "lr": ("learning_rate", "learning rate", "train/learning_rate", "train/lr"),
    "step_time_ms": ("elapsed time per iteration (ms)", "elapsed_time_per_iteration_ms",
                     "iter_time_ms", "time_per_step_ms"),
    "tokens_per_s": ("tps", "tok/s", "tok/sec", "tokens/s", "tokens/sec", "tokens_per_sec",
                     "tokens_per_second", "throughput (token/sec/gpu)", "tokens/s/device"),
    "samples_per_s": ("samples per second", "samples/s", "samples_per_sec",
                      "samples_per_second", "samples/s/device", "currsamplespersec"),
    "tflops": ("tflop/s", "tflops/s", "tflop/s/device", "tflop/s/gpu",
               "throughput per gpu (tflop/s/gpu)", "tflops_per_gpu", "model_tflops_per_gpu"),
    "mfu": (),
    "loss_scale": ("loss scale", "loss-scale"),
    "skipped": ("number of skipped iterations", "skipped_iters", "skipped_steps"),
    "nan_iterations": ("number of nan iterations",),
    "entropy": ("actor/entropy", "train/entropy"),
    "kl": ("actor/ppo_kl", "train/kl"),
    "reward": ("critic/score/mean", "train/reward"),
    "reward_std": ("train/reward_std",),
    "epoch": ("train/epoch",),
    "memory_gib": ("memory(gib)", "mem_gib", "memory_gb", "max_memory_gib"),
}
STEP_KEYS = frozenset({"step", "iter", "iteration", "global_step", "global step", "train/step",
                        "train/global_step", "trainer/global_step"})
# One of these (or a key with "loss" in it) makes a generic line a metrics line. Not `lr` or
# `epoch`: printed configs and argument dumps are full of those.
_GATE = frozenset({"loss", "val_loss", "grad_norm", "tokens_per_s", "samples_per_s", "tflops",
                   "mfu", "entropy", "kl", "reward", "reward_std", "skipped", "nan_iterations",
                   "step_time_ms"})
# fmt: on
ALIASES = {name: canon for canon, names in _SPELLINGS.items() for name in (canon, *names)}
# Clock strings (`eta: 2:44:49`, `'remaining_time': '1h 2m'`) that parse into nonsense.
_DROP = frozenset({"eta", "elapsed_time", "remaining_time"})


def put_step_time(values: Values, text: str) -> None:
    """`33.52ms` (or a bare number of milliseconds) as step_time_ms; nothing if not a time."""
    ms = millis(text, "ms")
    if ms is not None:
        values["step_time_ms"] = ms


def put(values: Values, key: str, text: str) -> None:
    """Store `text`'s number under the canonical name of `key` (a second spelling of the same
    quantity keeps its own name); nothing when `text` is not a number."""
    if key in _DROP:
        return
    if text[-1:] in DIGITS and "," not in text:  # the common case, inlined: every field
        try:
            value: float | None = float(text)
        except ValueError:
            value = num_slow(text)
    else:
        value = num(text)
    if value is None:
        return
    canon = ALIASES.get(key, key)
    if canon in values and canon != key:
        values[key] = value
    else:
        values[canon] = value


def gated(values: Values) -> bool:
    """Whether the values hold a quantity that makes a generic line a metrics line (a loss, a
    gradient norm, a throughput, ...), not only a step, a learning rate or an epoch."""
    return any(key in _GATE or ("loss" in key and key != "loss_scale") for key in values)


def key_of(raw: str) -> str | None:
    """A printed key, lower-cased; None when it cannot be a metric name."""
    key = raw.strip().strip("'\"").lower()
    if " " in key and key not in ALIASES:
        words = key.split()
        last = words[-1]
        # `INFO step`, `[train] epoch 1 iter 110/125 focalloss`: only the last word is the key.
        if last in STEP_KEYS or len(words) > 5 or not all(w[0].isalpha() for w in words):
            key = last
        else:
            key = " ".join(words)
    if not key or not (key[0].isalpha() or key[0] == "_"):
        return None
    return key
