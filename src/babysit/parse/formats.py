"""The formats trainers print their vital signs in: one reader per format, and the dispatcher
that picks the reader a line's marker names. Pure; the canonical names of what they print are
parse.names'.

    dispatch("iter 340: loss 5.4983, time 33785.52ms, mfu 0.96%")
    # -> ("nanogpt", 340, {"loss": 5.4983, "step_time_ms": 33785.52, "mfu": 0.96})

parse.metrics reads a whole output line (its launcher prefix, the cheap tests that reject most
lines) and calls dispatch on what is left; FORMATS.md lists the formats.
"""

from __future__ import annotations

import math
import re

from babysit.parse.names import ALIASES, STEP_KEYS, Values, gated, key_of, put, put_step_time
from babysit.parse.numbers import as_int, gibibytes, millis, num

Parsed = tuple[str, int | None, Values]  # (source, step, values)


# -- format parsers ------------------------------------------------------------------------------
# Each returns (source, step, values), or None when the line is not in its format after all.

# A key starts a word (without the look-behind, a long path costs quadratic backtracking); a
# value is not the next key (`loss= grad_norm=0.5`).
_KV_COLON = re.compile(r"(?<![\w./@\-])([A-Za-z_][\w./@\-]*):\s*(?![A-Za-z_][\w./@\-]*:)(\S+)")


def _titan(body: str, at: int) -> Parsed | None:
    step = None
    values: Values = {}
    validate = body[max(0, at - 9) : at] == "validate "
    for key, text in _KV_COLON.findall(body, at):
        if key == "step":
            step = as_int(text)
        elif key == "memory":  # `9.46GiB(64.99%)`: max reserved, and its share of the device
            gib, _, pct = text.partition("GiB")
            put(values, "memory_gib", gib)
            put(values, "memory_pct", pct.strip("(%)"))
        else:
            put(values, key.lower(), text)
    if validate:
        loss = values.pop("loss", None)
        values = {f"validate/{k}": v for k, v in values.items()}
        if loss is not None:
            values["val_loss"] = loss
    return "torchtitan", step, values


def _verl(body: str, at: int) -> Parsed | None:
    step = None
    values: Values = {}
    for field in body[at:].split(" - "):
        key, sep, text = field.rpartition(":")
        if not sep:
            continue
        key = key.strip()
        if key == "step":
            step = as_int(text)
        else:
            put(values, key.lower(), text.strip())
    # verl logs both; ppo_kl (the policy's KL to the old policy) is the one to watch.
    if "kl" not in values and "actor/kl_loss" in values:
        values["kl"] = values.pop("actor/kl_loss")
    return "verl", step, values


_MEGATRON = re.compile(r"iteration\s+(\d+)\s*/\s*\d+\s*\|")
_ITERATION = re.compile(r"iteration\s+(\d+)")


def _megatron(body: str) -> Parsed | None:
    if "validation loss at" in body:
        # ` validation loss at iteration 100 | lm loss value: 6.97E+00 | lm loss PPL: 1.06E+03 |`
        found = _ITERATION.search(body)
        step = int(found.group(1)) if found else None
        values: Values = {}
        for field in body.split("|")[1:]:
            key, sep, text = field.rpartition(":")
            key = key.strip().lower()
            value = num(text.strip())
            if not sep or value is None:
                continue
            if key.endswith(" value"):
                name = key[: -len(" value")]
                values["val_loss" if name == "lm loss" else f"val {name}"] = value
            elif key.endswith(" ppl"):
                name = key[: -len(" ppl")]
                values["val_ppl" if name == "lm loss" else f"val {name} ppl"] = value
        return "megatron", step, values
    m = _MEGATRON.search(body)
    if m is None:
        return None
    values = {}
    for field in body[m.end() :].split("|"):
        key, sep, text = field.rpartition(":")
        if sep:
            put(values, key.strip().lower(), text.strip())
    return "megatron", int(m.group(1)), values


_DS_KV = re.compile(r"(\w+)=\[*([^,\s/\]]+)")
_DS_OVERFLOW = re.compile(r"Attempted loss scale: ([\d.eE+-]+)(?:, reducing to ([\d.eE+-]+))?")


def _deepspeed(body: str) -> Parsed | None:
    if "Skipping step" in body:
        # `[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to
        # 32768`; with hysteresis the scale stays: `..., but hysteresis is 2. Reducing ...`
        m = _DS_OVERFLOW.search(body)
        values: Values = {"overflow": 1.0}
        if m is not None:
            scale = num(m.group(2) or m.group(1))
            if scale is not None:
                values["loss_scale"] = scale
        return "deepspeed", None, values
    if "time (ms) |" in body:
        # wall_clock_breakdown: `rank=0 time (ms) | forward: 27.41 | backward: 73.44 | step: 72.8`
        values = {}
        for field in body.split("|")[1:]:
            key, sep, text = field.partition(":")
            value = num(text.strip())
            if sep and value is not None:
                values[f"{key.strip().lower()}_ms"] = value
        return "deepspeed", None, values
    at = body.find("global_step=")
    if at < 0:
        at = body.find("step=")
    if at < 0:
        return None
    # `epoch=0/micro_step=34/global_step=34, ...` or `step=35, skipped=0, lr=[2.1e-06, ...]`
    at = body.rfind(" ", 0, at) + 1
    step = None
    values = {}
    for key, text in _DS_KV.findall(body, at):
        if key in ("step", "global_step"):
            step = as_int(text)
        elif key == "MaxMemAllocated":
            put(values, "memory_gib", text)
        elif key != "mom":  # momentum betas, a nested list: no single number to keep
            put(values, key.lower(), text)
    return "deepspeed", step, values


def _maxtext(body: str) -> Parsed | None:
    # `completed step: 30, seconds: 0.449, TFLOP/s/device: 1877.176, Tokens/s/device: 36470.971,
    #  total_weights: 131072, loss: nan`
    step = None
    values: Values = {}
    for key, text in _KV_COLON.findall(body, body.find("completed step:") + len("completed ")):
        if key == "step":
            step = as_int(text)
        elif key == "seconds":
            ms = millis(text.rstrip(","))
            if ms is not None:
                values["step_time_ms"] = ms
        else:
            put(values, key.lower(), text)
    return "maxtext", step, values


_MMENGINE = re.compile(r"\b(Epoch|Iter)(?:\((\w+)\))?\s*\[(\d+)(?:/\d+)?\](?:\[\d+/\d+\])?")


def _mmengine(body: str) -> Parsed | None:
    # `Epoch(train) [1][240/735]  lr: 1.98e-04  eta: ...  time: 2.8874  memory: 10762  loss: 2.5`
    # `Iter(train) [10/270] ...`; mmcv before mmengine: `Epoch [1][100/62598]\tlr: ..., time: ...`
    m = _MMENGINE.search(body)
    if m is None:
        return None
    kind, mode, number = m.groups()
    train = mode in (None, "train")
    step = int(number) if kind == "Iter" else None
    values: Values = {} if kind == "Iter" else {"epoch": float(number)}
    for key, text in _KV_COLON.findall(body, m.end()):
        key = key.lower()
        if key == "time" and train:
            ms = millis(text)
            if ms is not None:
                values["step_time_ms"] = ms
        elif key == "memory":  # torch.cuda.max_memory_allocated() in MiB
            gib = gibibytes(text, "MiB")
            if gib is not None:
                values["memory_gib"] = gib
        elif key == "loss" and not train:
            put(values, "val_loss", text)
        else:
            put(values, key, text)
    return "mmengine", step, values


_TQDM = re.compile(
    r"(\d+)%(?:\|[^|]*\|)?\s*(?:\d+|\?)/(?:\d+|\?)\s*\[[^<\]]*<[^,\]]*,\s*([\d.]+|\?)\s*"
    r"(s/it|it/s)(?:,\s*([^\]]*))?\]"
)
_EPOCH_WORD = re.compile(r"[Ee]poch\s*\[?(\d+)")
_NOT_TRAINING = ("validation", "validating", "sanity", "testing", "predicting")


def _tqdm(body: str) -> Parsed | None:
    # Lightning: `Epoch 0:  22%|██▏  | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]`.
    # The batch index is per epoch, not a global step: step stays None.
    m = _TQDM.search(body)
    if m is None:
        return None
    tail = body[m.end() :]
    if tail.strip():  # another line glued on after the bar: `...3.33s/it][2021-11-26 ...`
        glued = dispatch(tail)
        if glued is not None and glued[2]:
            return glued
    # From here on the line is a bar: when it says nothing about training, it is claimed with no
    # values, so that no other parser reads its postfix.
    desc = body[: m.start()].strip().rstrip(":").strip().lower()
    if desc.startswith(_NOT_TRAINING):
        return "tqdm", None, {}
    _, rate, unit, postfix = m.groups()
    values: Values = {}
    epoch = _EPOCH_WORD.search(body, 0, m.start())
    if epoch is not None:
        values["epoch"] = float(epoch.group(1))
    for pair in (postfix or "").split(", "):
        key, sep, text = pair.partition("=")
        name = key_of(key) if sep else None
        if name is not None:
            put(values, name, text)
    if epoch is None and not gated(values):
        return "tqdm", None, {}  # a bare progress bar (downloads, eval loops, HF's own bar)
    speed = num(rate)
    if speed is not None:
        if unit == "it/s":
            values["iters_per_s"] = speed
        else:
            values["step_time_ms"] = speed * 1e3
    return "lightning" if epoch is not None else "tqdm", None, values


_NANOGPT = re.compile(r"(?<![\w/])(iter|step) (\d+): (.*)")


def _nanogpt(body: str) -> Parsed | None:
    # `iter 340: loss 5.4983, time 33785.52ms, mfu 0.96%` (forks: `lr 1.00e-04`) and the eval
    # line `step 0: train loss 2.2365, val loss 1.9580`. Anything else of that shape: generic.
    m = _NANOGPT.search(body)
    if m is None:
        return None
    values: Values = {}
    for field in m.group(3).split(", "):
        name, _, text = field.strip().rpartition(" ")
        if not name or not name[0].isalpha() or "=" in field or ":" in field:
            return None
        name = name.lower()
        if name == "time":
            put_step_time(values, text)
        else:
            put(values, name, text)
    return "nanogpt", int(m.group(2)), values


_STEP_OF = re.compile(r"(?<![\w/])step\s+(\d+)/\d+[^|]*\|")
_LLMC_UNITS = {"ms": "step_time_ms", "tok/s": "tokens_per_s"}


def _step_of(body: str) -> Parsed | None:
    # nanochat: `step 00100/21400 (0.47%) | loss: 3.12 | dt: 123.45ms | tok/sec: 1,234,567 | ...`
    # llm.c: `step   61/74 | loss 3.208939 (+nanz)| norm 1.4800 (+nanz)| lr 3.00e-04 | 44.57 ms |
    #         -100.0% bf16 MFU | 91886 tok/s`   ((...z) is llm.c's own outlier z-score)
    m = _STEP_OF.search(body)
    if m is None:
        return None
    fields = body[m.end() :].split("|")
    source = "nanochat" if ":" in fields[0] else "llmc"
    values: Values = {}
    for field in fields:
        if ":" in field:
            key, _, text = field.partition(":")
            key = key.strip().lower()
            text = text.strip()
            if key == "dt":
                put_step_time(values, text)
            else:
                put(values, key, text)
            continue
        words = field.split()
        if len(words) < 2:
            continue
        first = words[0]
        if first[0].isdigit() or first[0] == "-":  # `44.57 ms`, `-100.0% bf16 MFU`, `91886 tok/s`
            unit = words[-1]
            name = "mfu" if unit == "MFU" else _LLMC_UNITS.get(unit, unit.lower())
            put(values, name, first)
        else:  # `loss 3.208939 (+nanz)`, `norm 1.4800 (1.23z)`, `lr 3.00e-04`
            name = "grad_norm" if first == "norm" else first.lower()
            put(values, name, words[1])
            if len(words) > 2 and words[2].endswith("z)"):
                z = num(words[2][1:-2])
                if z is not None and not math.isnan(z):
                    values[f"{ALIASES.get(name, name)}_z"] = z
    return source, int(m.group(1)), values


_DICT_KV = re.compile(r"""['"]([^'"]+)['"]\s*:\s*['"]?([^,'"}\s]*)""")


def _dict(body: str) -> Parsed | None:
    # HF Trainer/TRL `{'loss': 0.2051, 'grad_norm': nan, 'learning_rate': 9.7e-06, 'epoch': 0.53}`
    # (bare nan, floats as strings `'2.345'`); JSON lines `{"step": 10, "loss": 2.3}`.
    start = body.find("{")
    end = body.rfind("}")
    text = body[start : end if end > start else len(body)]
    step = None
    values: Values = {}
    for raw, value in _DICT_KV.findall(text):
        key = raw.lower()
        if key in STEP_KEYS or key == "global_step/max_steps":  # ms-swift: '10/1000'
            step = as_int(value)
        elif key == "train_loss":  # HF: the whole run's average, in the final summary
            average = num(value)
            if average is not None:
                values["train_loss"] = average
        else:
            put(values, key, value)
    if not values or (step is None and not gated(values)):
        return None
    source = "hf" if text[1:].lstrip()[:1] == "'" else "json"
    return source, step, values


_STEP_WORD = re.compile(
    r"(?<![\w/.\-])(?:[Ss]tep|STEP|[Ii]ter(?:ation)?|ITER|global_step)\b[\s:=\[]*(\d+)(?![\d.])"
)
_SEPARATORS = ("|", "\t", " - ", ", ")
_KV_ANY = re.compile(
    r"(?<![\w./@\-])([A-Za-z_][\w./@\-]*)\s*[:=]\s*(?![A-Za-z_][\w./@\-]*[:=])(\S+)"
)


def _generic(body: str) -> Parsed | None:
    """`step=10 loss=2.31 lr=3e-4`, `step: 10 | loss: 2.31 | grad_norm: 0.8`, `Step 100, Loss: 2.3`.

    Fields are separated by `|`, tabs, ` - ` or `, `; inside a field, `key: value` or `key=value`
    pairs (single-word keys), or a lone pair whose key may be several words (`Train Loss: 2.3`),
    or `name value` for known names (`loss 2.31`). Metrics only with a step or a known metric."""
    stripped = body.lstrip()
    if stripped[:1] in ("'", '"') or "Namespace(" in body:
        return None  # a pretty-printed config's line, an argparse dump
    for sep in _SEPARATORS[1:]:
        body = body.replace(sep, "|")
    step = None
    values: Values = {}
    for field in body.split("|"):
        colons = field.count(":")
        equals = field.count("=")
        if colons + equals == 1:
            raw, _, text = field.partition(":" if colons else "=")
            pairs = [(raw, text.strip())]
        elif colons or equals:
            pairs = _KV_ANY.findall(field)
        else:
            words = field.split()
            pairs = [
                (word, words[i + 1])
                for i, word in enumerate(words[:-1])
                if (w := word.lower()) in ALIASES or w in STEP_KEYS
            ]
        for raw, text in pairs:
            key = key_of(raw)
            if key is None:
                continue
            if key in STEP_KEYS:
                if step is None:
                    step = as_int(text)
            else:
                put(values, key, text)
    if not values:
        return None
    if step is None:
        found = _STEP_WORD.search(body)
        if found is not None:
            step = int(found.group(1))
    if step is None and not gated(values):
        return None
    return "generic", step, values


def dispatch(body: str) -> Parsed | None:
    """The parser the line's marker names; the generic one when no marker matches."""
    parsed: Parsed | None = None
    if "{" in body and ("':" in body or '":' in body):
        parsed = _dict(body)
        if parsed is not None:
            return parsed
    if "step" in body:
        if (
            "Skipping step" in body
            or "time (ms) |" in body
            or "SamplesPerSec=" in body
            or ("skipped=" in body and "lr=[" in body)
        ):
            parsed = _deepspeed(body)
        elif "completed step:" in body:
            parsed = _maxtext(body)
        elif (at := body.find("step:")) >= 0:
            if body[at + 5 : at + 6].isdigit() and " - " in body:
                parsed = _verl(body, at)
            elif "tps:" in body or "[titan]" in body:
                parsed = _titan(body, at)
        elif "step " in body:
            parsed = _step_of(body) or _nanogpt(body)
    if parsed is None and "iter" in body:
        if "iteration" in body and "|" in body:
            parsed = _megatron(body)
        elif "iter " in body:
            parsed = _nanogpt(body)
    if parsed is None and ("it/s" in body or "s/it" in body):
        parsed = _tqdm(body)
    if parsed is None and ("Epoch" in body or "Iter" in body):
        parsed = _mmengine(body)
    return parsed if parsed is not None else _generic(body)


__all__ = ["Parsed", "dispatch"]
