"""Read the vital signs a training line prints: loss, grad norm, throughput, ... Pure functions.

    parse_metrics(OutputLine("stdout", 7, "iter 340: loss 5.4983, time 33785.52ms, mfu 0.96%", ts))
    # -> Metric(step=340, values={"loss": 5.4983, "step_time_ms": 33785.52, "mfu": 0.96},
    #           ts=ts, source="nanogpt", rank=None, stream="stdout", line=7)
    split_prefix("[rank3]: step: 14  loss: 3.2")  # -> (3, "step: 14  loss: 3.2")

Formats (see FORMATS.md): nanoGPT, nanochat, llm.c, HF Trainer/TRL dicts, JSON lines, tqdm and
Lightning bars, Megatron-LM, torchtitan, DeepSpeed, verl, mmengine, MaxText, and generic
`key=value` / `key: value` lines. Quantities that several formats print get one canonical name
(`loss`, `grad_norm`, `lr`, `step_time_ms`, `tokens_per_s`, `samples_per_s`, `tflops`, `mfu`
in percent, `loss_scale`, `skipped`, `nan_iterations`, `val_loss`, `entropy`, `kl`, `reward`,
`reward_std`, `epoch`, `memory_gib`); every other numeric field keeps its printed name,
lower-cased. NaN and +-inf are kept as such (Lightning's bar pads them: `nan.0`); a value that
does not parse is left out. A line is read on its own here: the steps that progress bars and HF
log dicts only give with the lines around them are parse.progress's.

Speed matters more than elegance here: every line of every rank comes through. A few substring
tests reject most lines before anything else runs, and a line goes to the one parser its marker
names (parse.formats) rather than through every regex.
"""

from __future__ import annotations

import re

from babysit.parse.formats import dispatch
from babysit.records import Metric, OutputLine

# -- launcher prefixes ---------------------------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PREFIX = re.compile(
    r"\[(?:rank|default)(\d+)\]:[ ]?"  # torchrun: [rank3]: (also --tee/--redirects: [default0]:)
    r"|\[\d+,(\d+)\]<std(?:out|err)>:[ ]?"  # mpirun --tag-output: [jobid,rank]<stdout>:
    r"| *(\d+): "  # srun --label: "3: " (right-aligned when there are 10+ tasks)
)


def split_prefix(text: str) -> tuple[int | None, str]:
    """Remove ANSI SGR codes and one launcher prefix; return (rank, rest).

    torchrun `[rank3]:` / `[rank3]: `, `[default0]:` (torchrun --tee / --redirects), srun --label
    `3: `, mpirun `[1,3]<stdout>:` (rank is the second number). No prefix -> (None, text)."""
    if "\x1b" in text:
        text = ANSI.sub("", text)
    if text.startswith("[rank"):  # the common case, without the regex
        end = text.find("]:", 5, 16)
        rank = text[5:end]
        if end > 5 and rank.isdigit():
            return int(rank), text[end + 3 :] if text[end + 2 : end + 3] == " " else text[end + 2 :]
    first = text[:1]
    if first == "[" or first == " " or first.isdigit():
        m = _PREFIX.match(text)
        if m is not None:
            rank = m.group(1) or m.group(2) or m.group(3)
            rest = text[m.end() :]
            if m.group(3) is not None and rest.startswith("[rank"):
                # `srun torchrun`: srun's label is the node's task; torchrun's [rankN]: inside
                # it is the worker's global rank, the one to name.
                inner, body = split_prefix(rest)
                if inner is not None:
                    return inner, body
            return int(rank), rest
    return None, text


def parse_metrics(line: OutputLine) -> Metric | None:
    """The metrics this line reports, or None when it is not a metrics line."""
    text = line.text
    if not _maybe(text):
        return None
    rank, body = split_prefix(text)
    return parse_body(body, rank, line)


def _maybe(text: str) -> bool:
    # The cheap test first: every format above prints one of these, and most lines (warnings,
    # tracebacks, prose) have none. `oss`: loss/Loss; `tep`: step/Step; `poch`: Epoch/epoch.
    # Lines that pass but are never metrics: traceback frames (`in train_one_epoch`), warnings
    # (`lr_scheduler.step()`), errors (`RuntimeError: loss is NaN at step 3`).
    return (
        "oss" in text or "tep" in text or "iter" in text or "poch" in text or "{" in text
    ) and not ('File "' in text or "Warning" in text or "Error" in text)


def parse_body(body: str, rank: int | None, line: OutputLine) -> Metric | None:
    """parse_metrics for a line whose launcher prefix split_prefix already removed."""
    if not _maybe(body):
        return None
    if "\r" not in body:
        parsed = dispatch(body)
    else:  # tqdm redraws a bar with `\r`: the last segment that says something wins
        for segment in reversed(body.split("\r")):
            parsed = dispatch(segment) if segment.strip() else None
            if parsed is not None and parsed[2]:
                break
    if parsed is None or not parsed[2]:
        return None
    source, step, values = parsed
    return Metric(step, values, line.ts, source, rank, line.stream, line.number)
