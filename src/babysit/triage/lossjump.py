"""A training loss that jumped, as a log's last lines show it. Read only when triage found no
error in the log: a run that ends without a word after its loss spiked or diverged.

    j = jumped(tail_lines)  # -> Jump(before=2.24, after=5.10, line=" iteration 31215/ 115311 |
                            #         ... lm loss: 5.098124E+00 | ...") or None

The training loss as trainers print it (Megatron's `lm loss: 6.444662E+00`, `loss: 2.31`, `'loss':
2.31`, `loss=2.3`, `loss 9.2`, OpenNMT's cross-entropy `xent: 5.93`, a TensorFlow estimator's
`cross_entropy = 3.21`, Detectron2's `total_loss: 1.2`, Chainer's and ESPnet's `"main/loss":
58.9`; not a validation's, an evaluation's, a test's, a best or an average one, named before the
loss on its line, though a line may name other metrics' averages, `train_mean_iou`, or a
validation's loss after the training's: Keras's `loss: 2.43 - accuracy: 0.86 - val_loss: 3.99`)
rising to JUMP_RATIO times the median of up to BASELINE values before it, which held steady (the
largest within STEADY of the smallest), and by more than NOISE times their own range: a per-step
loss that wanders by a fifth (fine-tuning on small batches) makes one step half as high again now
and then, which is no spike.
The excerpt of a log may hold only a few steps, too few for the vital signs' robust spike detector
(detect/spike.py, which needs twenty): this asks for a jump no healthy curve makes between two of
its logged values.
A loss below zero is weighed by its size against the values of its own sign before it (an NCC
loss at -1e10, then -1e11), never against the others' (an RL loss swings around zero), except
where it went below zero at HUGE_RATIO times the size of a steady positive curve (a CTC loss
at -1e35 after 59): it left its curve as surely as one that went up.
A loss near zero (below FLOOR) is left alone: its noise is multiplicative, and a few hard batches
double it; unless it blew up to HUGE_RATIO times the highest of the values before it, and past
FLOOR (a diffusion loss from 0.05 to 3.6e7).
Two more shapes of a loss that left its curve: one that rises above JUMP_RATIO times
the highest of the values before it (at least ABOVE_AFTER of them: a curve that came down, then
went past where it started), and one that climbed CLIMB logged values in a row, each above the
one before, to CLIMB_RATIO times where the climb began and above every value before it, as the
log ends (a divergence, slower than a spike; a noisy per-step curve climbs out of a dip now and
then, back to where it was and on).
Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from babysit.triage.anatomy import anatomy

JUMP_RATIO = 1.5
STEADY = 1.3
NOISE = 4.0  # how many times the steady values' range (largest - smallest) the rise must exceed
BASELINE = 20
FLOOR = 0.3
ABOVE_AFTER = 3  # values before one that rises above them all
CLIMB = 4  # rises in a row
CLIMB_RATIO = 1.25
HUGE_RATIO = 1000.0  # a jump no noise makes, whatever the curve before it
_MAX_VALUES = 400  # the last lines' losses read, at most
# A loss's key and its value: `lm loss: 6.44E+00`, `'loss': 2.31`, `loss=2.3`, `loss 9.2`,
# `xent: 5.9`, `cross_entropy = 3.2`, `loss: tensor(2.3)`, `total_loss: 1.2`, `"main/loss": -1e35`;
# not `loss2/classifier` (a layer's name), `loss_scale`, `g_loss`, `validation/main/loss`.
_LOSS = re.compile(
    r"(?i)(?<![\w/.-])(?:(?:lm[ _]|total_|main/)?loss|xent|cross[_ ]entropy)['\"]?"
    r"(?:\s*[:=]\s*|\s+)['\"]?(?:tensor\()?"
    r"(?P<v>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\b"
)
# Words before a loss that is not the training's own.
_NOT_TRAINING = re.compile(r"(?i)valid|\bval\b|val_|eval|\btest|best|\bavg\b|average|\bmean\b")


@dataclass(frozen=True)
class Jump:
    before: float  # the median of the steady values before the jump (a climb: its start)
    after: float  # the loss that jumped (its size: see `negative`)
    line: str  # the line that holds it
    climb: int = 0  # a climb: the rises in a row that ended at `after` (0: a jump)
    negative: bool = False  # the loss that jumped was below zero: `after` is its size


def jumped(lines: Sequence[str]) -> Jump | None:
    """The first jump of the training loss in `lines` (a log's last lines, oldest first)."""
    values: list[tuple[float, str]] = []  # each loss and its line
    for line in lines:
        if "oss" not in line and "xent" not in line and "entropy" not in line:
            continue
        body = anatomy(line).body
        m = _LOSS.search(body)
        if m is None or _NOT_TRAINING.search(body, 0, m.start()):
            continue
        v = float(m["v"])
        if v != 0:
            values.append((v, line))
    values = values[-_MAX_VALUES:]
    for i in range(1, len(values)):
        window = [v for v, _ in values[max(0, i - BASELINE) : i]]
        v, line = values[i]
        negative = v < 0
        before = [abs(b) for b in window if (b < 0) == negative]
        size = abs(v)
        if negative and not before:  # below zero after a positive curve
            positive = [b for b in window if b > 0]
            level = statistics.median(positive) if positive else 0.0
            steady = bool(positive) and max(positive) <= STEADY * min(positive)
            if steady and level >= FLOOR and size >= HUGE_RATIO * level:
                return Jump(level, size, line.strip(), negative=True)
            continue
        if not before:
            continue
        level = statistics.median(before)
        low, high = min(before), max(before)
        if level < FLOOR:
            if size >= FLOOR and size >= HUGE_RATIO * high:  # from near zero, blown up
                return Jump(level, size, line.strip(), negative=negative)
            continue
        steady = high <= STEADY * low
        if size >= JUMP_RATIO * level and steady and size - level > NOISE * (high - low):
            return Jump(level, size, line.strip(), negative=negative)
        if len(before) >= ABOVE_AFTER and size >= JUMP_RATIO * high:
            return Jump(level, size, line.strip(), negative=negative)
    return _climb([(v, line) for v, line in values if v > 0])


def _climb(values: Sequence[tuple[float, str]]) -> Jump | None:
    """The climb that the log's end cut short: its last CLIMB values each above the one before,
    the last at CLIMB_RATIO times the first and above every value before the climb."""
    i = len(values) - 1
    if i < CLIMB or statistics.median(v for v, _ in values[max(0, i - BASELINE) : i]) < FLOOR:
        return None
    start, (v, line) = values[i - CLIMB][0], values[i]
    rising = all(values[k][0] < values[k + 1][0] for k in range(i - CLIMB, i))
    earlier = [x for x, _ in values[max(0, i - CLIMB - BASELINE) : i - CLIMB]]
    if rising and start >= FLOOR and v >= CLIMB_RATIO * start and v > max(earlier, default=0):
        return Jump(start, v, line.strip(), climb=CLIMB)
    return None


def jump_of(tails: Sequence[Sequence[str]]) -> Jump | None:
    """The biggest jump among a run's logs, or None."""
    found = [j for tail in tails if (j := jumped(tail)) is not None]
    return max(found, key=lambda j: j.after / j.before, default=None)
