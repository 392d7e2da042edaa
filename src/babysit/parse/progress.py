"""The step counter of trainers that print only a progress bar: HF Trainer, Lightning, tqdm loops.

    bars = ProgressBars()
    metric, released = bars.feed(raw, line, parse_body(raw, rank, line))
    # metric: what the line reports (with its step, when the bar tells it; None while an HF log
    # dict waits for its step); released: Progress from a bar, and HF log dicts given their step

Stateful, one per attempt (a LineParser holds one). What each trainer prints, and how it becomes
a global step:

- **A bare tqdm bar** (HF Trainer's ` 45%|████▌     | 450/1000 [00:12<00:15, 36.1it/s]`, a
  custom `for step in tqdm(range(n))` loop): no description, a rate in it/s or s/it. Its count
  is the global step (HF: optimizer steps done; it resumes at the checkpoint's step). The
  training bar is the first such bar; a bar with another total (an eval loop after training)
  replaces it only while no log dict was matched to it (a bare data-preparation bar before
  training). Bars drawn below another one (tqdm's nested bars end with a cursor-up, `ESC[A`:
  HF's eval bar during training, checkpoint-writing bars) are never the counter.
- **HF's log dict** (`{'loss': '4.12', 'grad_norm': '1.3', ..., 'epoch': '0.45'}` on stdout) has
  no step. It is held back for its bar frame once a bar was seen, or when its values are quoted
  (transformers 5 quotes what its bar's callback prints); any other dict (transformers 4 before
  its bar was read, `disable_tqdm`'s plain print, a script's own dict) goes out as it is.
  The Trainer prints it with `tqdm.write` at global step N, after the bar's count became N:
  tqdm clears the bar (a line of spaces on the bar's stream), prints the dict, and redraws the
  bar at N. So the k-th bar frame drawn after a clear is the k-th dict's step, whichever of
  stdout and stderr is read first. Where the steps per epoch S are known (learned from those
  pairs: S = N / epoch, as an interval narrowed by each pair) and the printed epoch is precise
  enough (S x its rounding < 0.5 step), `epoch x S` gives the step at once, and settles a pair
  that disagrees. While no bar was seen at all, a held dict goes out once a dict read a second
  later finds it still waiting, and at the end of the input (`flush`), with the epoch's step if
  known, else none.
- **Lightning's bar** (`Epoch 3:  45%|████▌     | 450/1000 [00:12<00:15, 36.1it/s, v_num=0,
  train_loss=2.31]`, on stdout) counts batches in the epoch, and its total shrinks for the last
  epoch of a `max_steps` run. The global step is the count plus the batches of the epochs before,
  learned as they end (from epoch 0 of a fresh run), or anchored by Lightning's own `Restoring
  states from the checkpoint path at .../step=400.ckpt` (the first count after a resume is the
  checkpoint's step + 1; a resumed epoch's bar is named `Training:`). A `step=` in the postfix
  (`self.log("step", ...)`) wins: with gradient accumulation the bar counts batches, not steps.
  Lightning draws each count twice, first with the postfix of the count before, then with its
  own: a frame whose postfix is the one before it says nothing new and reports no metrics.
  A NaN prints as `nan.0` (read in parse.metrics).

A bar whose count went back is a new bar (a second `trainer.train()`, a new epoch); the step it
reports is never made up: when the offset is not known, the bar reports no step.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import deque
from decimal import Decimal, InvalidOperation

from babysit.records import Metric, OutputLine, Progress

Released = list[Progress | Metric]

# `  45%|████▌     | 450/1000 [00:12<00:15, 36.1it/s, loss=2.3]`, `Training: |   | 31/? [...]`
_BAR = re.compile(
    r"(?:(\d+)%)?\s*(?:\|[^|]*\|)?\s*(\d+)/(\d+|\?)\s*"
    r"\[[^<\],]*(?:<[^,\]]*)?,\s*(?:[\d.]+|\?)\s*(?:it/s|s/it)(?:,\s*([^\]]*))?\]"
)
_LIGHTNING = re.compile(r"^(?:Epoch\s+(\d+)|Training)\b")
_RESTORE = re.compile(r"[Rr]estor(?:ing|ed)\b.*?checkpoint.*?\bat\s+(\S+)")
_KEYED_STEP = re.compile(r"(?:step|iter|ckpt|checkpoint)[_\-=]?(\d+)", re.IGNORECASE)
_EPOCH = re.compile(r"""['"]epoch['"]\s*:\s*['"]?([-+\d.eE]+)""")
_POSTFIX_STEP = re.compile(r"(?:^|,\s*)(?:global_step|step)=(\d+)(?:\.0*)?(?=,|\s*$)")
MIN_CLEAR = 10  # tqdm clears a bar with as many spaces as it was wide
NESTED = "\x1b[A"  # tqdm moves back up after drawing a bar below another one
MAX_PENDING = 256  # HF dicts waiting for their bar frame (bounded, whatever the log says)
NO_BAR_WAIT_S = 1.0  # with no bar seen yet, a dict waits this long (the bar's stream is late)


@dataclasses.dataclass(frozen=True)
class Bar:
    """One frame of a tqdm bar."""

    desc: str  # the text before it, `Epoch 3` (stripped, no colon); "" for a bare bar
    n: int
    total: int | None  # None when tqdm prints `?`
    postfix: str  # `v_num=0, train_loss=2.31` ("" when none)


def read_bar(body: str) -> Bar | None:
    """A tqdm frame with an it/s or s/it rate; None for any other line."""
    m = _BAR.search(body)
    if m is None:
        return None
    _, n, total, postfix = m.groups()
    desc = body[: m.start()].strip().rstrip(":").strip()
    return Bar(desc, int(n), None if total == "?" else int(total), (postfix or "").strip())


def step_in_path(path: str) -> int | None:
    """`out/step=400.ckpt` -> 400; the number after step/iter/ckpt/checkpoint, if any."""
    name = path.rstrip("/'\".").rsplit("/", 1)[-1]
    found = _KEYED_STEP.findall(name)
    return int(found[-1]) if found else None


def epoch_of(raw: str) -> tuple[float, float] | None:
    """(epoch, half its last printed digit) from an HF dict: `'epoch': '0.4688'` -> (0.4688,
    5e-05). The rounding is read off the text, so `.4g`-formatted epochs (transformers 5) and
    full floats (4.x) each get the precision they have."""
    m = _EPOCH.search(raw)
    if m is None:
        return None
    try:
        d = Decimal(m.group(1))
    except InvalidOperation:
        return None
    exponent = d.as_tuple().exponent
    if not isinstance(exponent, int) or not d.is_finite():
        return None
    value = float(d)
    # A float's own rounding (the Trainer adds fractions of an epoch) bounds it too.
    return value, max(0.5 * 10.0**exponent, 1e-12 * max(1.0, abs(value)))


@dataclasses.dataclass
class _Dict:
    metric: Metric
    epoch: tuple[float, float] | None
    sent: bool = False


class ProgressBars:
    def __init__(self) -> None:
        # The training bar of a bare-bar trainer (HF, a tqdm loop).
        self.total: int | None = None
        self.confirmed = False  # a log dict was matched to it: an eval bar cannot replace it
        self.last_step: int | None = None  # the last step a bar reported
        self._postfix = ""  # the postfix of the last training frame
        # Lightning: the global step of count 0 in the current epoch, when known.
        self._epoch: int | None = None  # the epoch the bar shows (-1: `Training`, a resumed one)
        self._offset: int | None = None
        self._epoch_n = 0  # the highest count seen in the current epoch
        self._first: tuple[int, int] | None = None  # (epoch, count) of the first count > 0
        self._resume_step: int | None = None
        # HF log dicts and the bar frames drawn after a clear.
        self._cleared: set[str] = set()  # streams whose bar was cleared since its last frame
        self._pending: deque[_Dict] = deque()
        self._redraws: deque[int] = deque()
        self._bar_seen = False
        self._spe = (0.0, math.inf)  # what the pairs allow for the steps per epoch

    # -- the one entry -----------------------------------------------------------------------

    def feed(
        self, raw: str, line: OutputLine, metric: Metric | None
    ) -> tuple[Metric | None, Released]:
        if (
            metric is not None
            and metric.source == "hf"
            and metric.step is None
            and "epoch" in raw
            and (self._bar_seen or "': '" in raw)
        ):
            # The Trainer's log dict, printed under its bar: transformers 5 quotes the values
            # of the dicts its progress bar writes (`'loss': '2.31'`), so a bar is coming.
            return None, self._dict(raw, metric)
        if "it/s" in raw or "s/it" in raw:
            bar = read_bar(raw)
            if bar is not None:
                return self._bar(bar, line, metric)
        elif raw[:1] == " " and len(raw) >= MIN_CLEAR and raw.isspace():
            self._cleared.add(line.stream)  # tqdm.write clears the bar first
        elif "estor" in raw and "heckpoint" in raw and (m := _RESTORE.search(raw)):
            self._resume_step = step_in_path(m.group(1))
            return metric, self._anchor_late(line)
        return metric, []

    # -- bars ----------------------------------------------------------------------------------

    def _bar(
        self, bar: Bar, line: OutputLine, metric: Metric | None
    ) -> tuple[Metric | None, Released]:
        nested = NESTED in line.text
        lit = _LIGHTNING.match(bar.desc) if not nested else None
        if lit is not None:
            step = self._lightning_step(bar, -1 if lit.group(1) is None else int(lit.group(1)))
        elif bar.desc or nested or not self._counter(bar):
            return metric, []  # not the training bar (an eval, a download, a nested bar)
        else:
            step = bar.n
            self._bar_seen = True
            if line.stream in self._cleared:
                self._cleared.discard(line.stream)
                self._redraws.append(bar.n)
        fixed = _POSTFIX_STEP.search(bar.postfix)
        if fixed is not None:
            step = int(fixed.group(1))
        out: Released = []
        if step is not None and bar.n > 0 and step != self.last_step:
            self.last_step = step
            out.append(Progress(step, line.ts, line.stream, line.number))
        # Lightning draws a count with the postfix of the count before, then with its own.
        fresh = bar.postfix != self._postfix
        self._postfix = bar.postfix
        if metric is not None and metric.values:
            # (count 0: a new epoch's bar, with the postfix of the epoch before)
            metric = dataclasses.replace(metric, step=step) if fresh and bar.n else None
        return metric, out + self._match()

    def _anchor_late(self, line: OutputLine) -> Released:
        """The restore line read after the resumed bar's first frames (stdout and stderr are
        read apart: a short attempt's whole bar may come first): the bar's offset is known now,
        and so is the step of its latest count."""
        if self._offset is not None or self._resume_step is None or self._first is None:
            return []
        first_epoch, first_n = self._first
        if first_epoch != self._epoch or self._epoch_n <= 0:
            return []
        self._offset = self._resume_step - (first_n - 1)
        step = self._offset + self._epoch_n
        if step == self.last_step:
            return []
        self.last_step = step
        return [Progress(step, line.ts, line.stream, line.number)]

    def _counter(self, bar: Bar) -> bool:
        """Whether this bare bar is the training bar (and becomes it when there is none)."""
        if bar.total is None:
            return False
        if self.total is None or (bar.total != self.total and not self.confirmed):
            if bar.total != self.total:
                self.last_step = None
            self.total = bar.total
        return bar.total == self.total

    def _lightning_step(self, bar: Bar, epoch: int) -> int | None:
        if self._first is None and bar.n > 0:
            self._first = (epoch, bar.n)
            if epoch == 0 and bar.n == 1:
                self._offset = 0  # a fresh run: the epochs add up from here
        if epoch != self._epoch:
            if self._epoch is not None and self._offset is not None and epoch > self._epoch:
                self._offset += self._epoch_n  # the epoch before ended at its highest count
            elif self._epoch is not None and self._epoch_n > 0:
                self._offset = None  # went back: another fit, offset unknown
            self._epoch, self._epoch_n = epoch, 0
        if self._offset is None and self._resume_step is not None and self._first is not None:
            first_epoch, first_n = self._first
            if first_epoch == epoch:
                # The first count after a resume is the checkpoint's step + 1.
                self._offset = self._resume_step - (first_n - 1)
        self._epoch_n = max(self._epoch_n, bar.n)
        return None if self._offset is None else self._offset + bar.n

    # -- HF log dicts --------------------------------------------------------------------------

    def _dict(self, raw: str, metric: Metric) -> Released:
        self._pending.append(_Dict(metric, epoch_of(raw)))
        out: Released = []
        if not self._bar_seen:
            # No bar yet: the bar's stream may be read later, or there is none (`disable_tqdm`).
            stale = sum(1 for e in self._pending if e.metric.ts < metric.ts - NO_BAR_WAIT_S)
            out += self._flush(stale)
        if len(self._pending) > MAX_PENDING:
            out += self._flush(len(self._pending) - MAX_PENDING)
        return out + self._match()

    def _by_epoch(self) -> Released:
        """The waiting dicts whose epoch gives their step, in order (they still take their bar
        frame when it comes, so that the pairs stay in step)."""
        out: Released = []
        for entry in self._pending:
            if entry.sent:
                continue
            step = self.epoch_step(entry.epoch)
            if step is None:
                break  # the ones after it wait too: the detectors read steps in order
            entry.sent = True
            out.append(dataclasses.replace(entry.metric, step=step))
        return out

    def flush(self) -> Released:
        """The dicts still waiting, with the step their epoch gives (a log's end)."""
        return self._flush(len(self._pending))

    def _flush(self, count: int) -> Released:
        out: Released = []
        for _ in range(count):
            entry = self._pending.popleft()
            if not entry.sent:
                out.append(dataclasses.replace(entry.metric, step=self.epoch_step(entry.epoch)))
        return out

    def _match(self) -> Released:
        """Pair the waiting dicts with the bar frames drawn after a clear, in order."""
        out: Released = []
        while self._pending and self._redraws:
            entry, n = self._pending.popleft(), self._redraws.popleft()
            self.confirmed = True
            by_epoch = self.epoch_step(entry.epoch)
            if by_epoch is None or by_epoch == n:
                self._learn(entry.epoch, n)
            if not entry.sent:
                step = by_epoch if by_epoch is not None else n
                out.append(dataclasses.replace(entry.metric, step=step))
        if len(self._redraws) > MAX_PENDING:
            self._redraws.clear()  # frames no dict claims (a user's own tqdm.write)
        return out + self._by_epoch()

    def _learn(self, epoch: tuple[float, float] | None, n: int) -> None:
        """Narrow the steps per epoch S by one pair: n = epoch x S, the epoch rounded."""
        if epoch is None or n <= 0:
            return
        value, half = epoch
        if value - half <= 0:
            return
        lo, hi = n / (value + half), n / (value - half)
        new = (max(self._spe[0], lo), min(self._spe[1], hi))
        self._spe = new if new[0] <= new[1] * (1 + 1e-9) else (lo, hi)  # contradicted: anew

    def steps_per_epoch(self) -> int | None:
        """S, once the pairs allow one integer only."""
        lo, hi = self._spe
        if not math.isfinite(hi):
            return None
        first, last = math.ceil(lo - 1e-9), math.floor(hi + 1e-9)
        return first if first == last and first > 0 else None

    def epoch_step(self, epoch: tuple[float, float] | None) -> int | None:
        """epoch x S where that is exact: S known and S x the epoch's rounding < half a step."""
        if epoch is None:
            return None
        spe = self.steps_per_epoch()
        value, half = epoch
        if spe is None or spe * half >= 0.5 or value < 0:
            return None
        return round(value * spe)
