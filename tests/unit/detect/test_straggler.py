"""detect/straggler.py on hand-made arrival times (pure: no clock, no I/O), the parser's rank step
lines, the pipeline's wiring, and a persistent straggler counted against its node."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from babysit.config import build_config
from babysit.detect.straggler import (
    METRIC,
    StragglerDetector,
    StragglerIncident,
    StragglerRule,
    message,
)
from babysit.errors import ConfigError
from babysit.parse.lines import LineParser
from babysit.records import Category, Level, OutputLine
from babysit.sources.health import HealthTargets
from babysit.store import Store
from babysit.supervise.journal import Journal
from babysit.supervise.nodes import Nodes
from babysit.supervise.pipeline import Pipeline, ban_evidence
from babysit.views.nodes import nodes_document, nodes_table

Lag = Callable[[int, int], float]  # (rank, step) -> seconds after the step's start


def trace(
    ranks: int,
    steps: int,
    lag: Lag,
    step_s: float | Callable[[int], float] = 1.0,
    jitter: float = 0.02,
    prints: Callable[[int, int], bool] = lambda r, s: True,
    seed: int = 0,
) -> list[tuple[int, int, float]]:
    """(rank, step, ts) in the order the lines arrive."""
    rng = random.Random(seed)
    out: list[tuple[int, int, float]] = []
    t = 0.0
    for s in range(steps):
        t += step_s(s) if callable(step_s) else step_s
        for r in range(ranks):
            if prints(r, s):
                out.append((r, s, t + abs(rng.gauss(0, jitter)) + lag(r, s)))
    return sorted(out, key=lambda x: x[2])


def run(
    reports: list[tuple[int, int, float]],
    rule: StragglerRule | None = None,
    hosts: dict[int, str] | None = None,
    host: str | None = None,
) -> list[StragglerIncident]:
    d = StragglerDetector(rule, hosts, host)
    out: list[StragglerIncident] = []
    for rank, step, ts in reports:
        out += d.feed(rank, step, ts)
    return out


def test_a_persistent_lag_names_the_rank_and_its_host() -> None:
    reports = trace(32, 150, lambda r, s: 0.38 if r == 17 and s >= 20 else 0.0)
    hosts = {r: f"node-{r // 8:02d}" for r in range(32)}
    (inc,) = run(reports, hosts=hosts)
    assert inc.category == Category.THROUGHPUT_DROP and inc.metric == METRIC
    (s,) = inc.stragglers
    assert (s.rank, s.host, s.ban_candidate, s.drifting) == (17, "node-02", False, False)
    assert 0.33 <= s.slower <= 0.43 and 0.33 <= s.lag_s <= 0.43 and 0.95 <= s.step_s <= 1.05
    assert inc.message.startswith(
        f"rank 17 on node-02 is {round(s.slower * 100)}% slower than the median rank over the "
        "last 50 steps (its step lines come"
    ), inc.message
    assert 20 < (inc.step or 0) <= 20 + 50  # within a window of the onset
    assert inc.window and inc.value == s.slower and inc.ts > 0
    assert not ban_evidence(inc)  # one window: not yet a ban candidate


def test_one_slow_step_and_short_pauses_are_not_stragglers() -> None:
    def lag(r: int, s: int) -> float:
        if r == 0 and s % 50 == 49:
            return 8.0  # rank 0 saves a checkpoint every 50 steps
        if (r, s // 3) in ((5, 10), (9, 30)):
            return 1.5  # a GC pause of three steps on one rank
        return 0.0

    assert run(trace(16, 300, lag)) == []


def test_all_ranks_slow_together_is_not_a_straggler() -> None:
    slow = trace(16, 300, lambda r, s: 0.0, step_s=lambda s: 2.5 if 100 <= s < 200 else 1.0)
    assert run(slow) == []


def test_ranks_that_print_at_different_cadences() -> None:
    # Rank 0 prints every step, ranks 1-7 every 5th, ranks 8-15 every 10th; nobody lags.
    def prints(r: int, s: int) -> bool:
        return r == 0 or (s % 5 == 0 if r < 8 else s % 10 == 0)

    assert run(trace(16, 400, lambda r, s: 0.0, prints=prints)) == []
    # Rank 12 (every 10th step) lags: still named, from its own reports.
    found = run(trace(16, 400, lambda r, s: 0.5 if r == 12 else 0.0, prints=prints))
    assert found and [s.rank for s in found[0].stragglers] == [12], found


def test_missing_ranks_are_not_stragglers() -> None:
    # Ranks 8-15 never print; rank 3 stops printing at step 60 (its lines go elsewhere).
    def prints(r: int, s: int) -> bool:
        return r < 8 and not (r == 3 and s >= 60)

    assert run(trace(16, 300, lambda r, s: 0.0, prints=prints)) == []
    # Only two ranks print: too few for a median.
    assert run(trace(2, 300, lambda r, s: 0.5 if r == 1 else 0.0)) == []


def test_a_rank_falling_further_behind_is_named_drifting() -> None:
    # Unsynchronised ranks: rank 6 takes 1.3 s a step, the others 1 s.
    reports = trace(12, 200, lambda r, s: 0.3 * s if r == 6 else 0.0)
    found = run(reports, host="gpu-1")
    (s,) = found[0].stragglers
    assert s.rank == 6 and s.drifting and 0.25 <= s.slower <= 0.35, found[0].message
    assert "rank 6 on gpu-1 is" in found[0].message and "further behind every" in found[0].message


def test_a_straggler_that_persists_is_a_ban_candidate_once() -> None:
    reports = trace(16, 400, lambda r, s: 0.5 if r in (4, 5) else 0.0)
    found = run(reports, hosts={4: "node-01", 5: "node-01"})
    first, ban = found  # flagged, then (ban_window_steps later) a ban candidate; nothing more
    assert {s.rank for s in first.stragglers} == {4, 5} and not first.ban_candidates
    assert first.message.startswith("ranks 4, 5 on node-01 are "), first.message
    assert {s.rank for s in ban.ban_candidates} == {4, 5}
    assert "over the last 200 steps" in ban.message and "a ban candidate" not in ban.message
    assert "ban candidates, counted against node-01" in ban.message
    assert (ban.step or 0) - (first.step or 0) == 150
    assert ban_evidence(ban) == [("node-01", ban.message)]  # one node: one piece of evidence


def test_recovered_then_lagging_again_is_a_new_episode() -> None:
    def lag(r: int, s: int) -> float:
        return 0.5 if r == 2 and (s < 120 or s >= 240) else 0.0

    rule = StragglerRule(ban_window_steps=1000)
    found = run(trace(8, 400, lag), rule)
    assert len(found) == 2 and all(i.stragglers[0].rank == 2 for i in found), found
    assert (found[1].step or 0) > 240


def test_new_attempt_and_counters_going_back_start_over() -> None:
    d = StragglerDetector()
    for rank, step, ts in trace(8, 80, lambda r, s: 0.5 if r == 1 else 0.0):
        d.feed(rank, step, ts)
    assert d.stragglers() == [1]
    d.new_attempt()
    assert d.stragglers() == [] and d.ranks == {}
    # A restart nobody announced: every counter back at 0, long after.
    for rank, step, ts in trace(8, 400, lambda r, s: 0.0):
        d.feed(rank, step, ts)
    for rank, step, ts in trace(8, 100, lambda r, s: 0.0):
        assert d.feed(rank, step, ts + 1000.0) == []


def test_no_timing_means_no_verdict() -> None:
    # Every line read at once (a replay of an old log): no step time, nothing said.
    assert run([(r, s, 5.0) for s in range(200) for r in range(8)]) == []


def test_message_groups_ranks_by_host() -> None:
    from babysit.detect.straggler import Straggler

    found = [
        Straggler(16, "n3", 0.35, 0.35, 1.0, 0.35, False, 50),
        Straggler(17, "n3", 0.41, 0.41, 1.0, 0.41, False, 50),
        Straggler(18, "n3", 0.4, 0.4, 1.0, 0.4, False, 50),
        Straggler(40, None, 0.3, 0.3, 1.0, 0.3, False, 50),
    ]
    assert message(found).startswith(
        "ranks 16-18 on n3 are 35-41% slower and rank 40 is 30% slower than the median rank "
        "over the last 50 steps"
    )


def test_the_config_section_is_checked() -> None:
    cfg = build_config({"straggler.window_steps": 20, "straggler.ban_window_steps": 80})
    assert cfg.straggler == StragglerRule(window_steps=20, ban_window_steps=80)
    with pytest.raises(ConfigError, match=r"straggler\.lag must be >= 0\.01"):
        build_config({"straggler.lag": 0})
    with pytest.raises(ConfigError, match=r"straggler\.most must be < 1"):
        build_config({"straggler.most": 1.5})
    with pytest.raises(ConfigError, match=r"ban_window_steps must be >= straggler\.window_steps"):
        build_config({"straggler.ban_window_steps": 10})


# -- the parser and the pipeline -----------------------------------------------------------------


def feed(parser: LineParser, texts: list[str]) -> list[tuple[int, int, float, int]]:
    for i, text in enumerate(texts, 1):
        parser.feed(OutputLine("stdout", i, text, float(i)))
    return list(parser.rank_steps or [])


def test_the_parser_keeps_every_ranks_step_lines() -> None:
    titan = (
        "[titan] 2026-05-18 16:04:46,338 - root - INFO - \x1b[31mstep: {s:2}  \x1b[32mloss: "
        "3.2440  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%\x1b[39m"
    )
    texts = [f"[rank{r}]:{titan.format(s=s)}" for s in (1, 2) for r in (0, 1, 2)]
    texts += ["[rank2]: NCCL INFO Connected all rings", "[rank1]: iter 3: loss 2.0, time 1ms"]
    got = feed(LineParser(rank_steps=True), texts)
    assert [(r, s) for r, s, _, _ in got] == [
        (0, 1),
        (1, 1),
        (2, 1),
        (0, 2),
        (1, 2),
        (2, 2),
        (1, 3),
    ]
    assert got[0][2:] == (1.0, 1)  # the line's time and number
    # srun --label (believed from the second line of a label on) and mpirun's tags.
    srun = feed(
        LineParser(rank_steps=True), ["3: hello", "3: step 7 loss 2.0", "1: x", "1: step 7"]
    )
    assert [(r, s) for r, s, _, _ in srun] == [(3, 7), (1, 7)]
    mpi = feed(LineParser(rank_steps=True), ["[1,5]<stdout>: step 4 loss 1.0"])
    assert [(r, s) for r, s, _, _ in mpi] == [(5, 4)]
    # Off by default; unprefixed lines are nobody's rank.
    assert feed(LineParser(), texts) == []
    assert feed(LineParser(rank_steps=True), ["step 5 loss 2.0"]) == []


def reads(reports: list[tuple[int, int, float]], every_s: float = 0.2) -> list[list[OutputLine]]:
    """The lines as babysit reads them: every `every_s`, each read stamped with its own time."""
    out: list[list[OutputLine]] = []
    batch: list[OutputLine] = []
    read_at = every_s
    for number, (rank, step, ts) in enumerate(reports, 1):
        while ts > read_at:
            out.append(batch)
            batch, read_at = [], read_at + every_s
        text = f"[rank{rank}]:step: {step}  loss: 2.0  memory: 9.46GiB(64.99%)  tps: 7,282"
        batch.append(OutputLine("stdout", number, text, read_at))
    return [*out, batch]


def test_the_pipeline_names_a_straggler_through_reads_stamped_at_once() -> None:
    reports = trace(8, 150, lambda r, s: 0.45 if r == 3 else 0.0)
    p = Pipeline()
    p.new_attempt(0.0)
    p.set_hosts({}, host="node-1")
    found = [i for batch in reads(reports) for i in p.lines(batch)]
    (inc,) = found
    assert isinstance(inc, StragglerIncident) and inc.stragglers[0].rank == 3
    assert 0.3 <= inc.stragglers[0].slower <= 0.6, inc.message
    assert inc.message.startswith("rank 3 on node-1 is ") and p.stragglers() == [3]
    assert p.last_step == 149 and p.failures == 0
    # Ranks printing in a steady order (rank 7 always last of a step): nobody lags.
    steady = [(r, s, 0.3 * s + 0.001 * r) for s in range(300) for r in range(8)]
    p = Pipeline()
    p.new_attempt(0.0)
    assert [i for batch in reads(steady) for i in p.lines(batch)] == []
    # Off: the same lines say nothing.
    off = Pipeline(straggler=StragglerRule(enabled=False))
    off.new_attempt(0.0)
    assert [i for batch in reads(reports) for i in off.lines(batch)] == []
    assert off.parser.rank_steps is None and off.stragglers() == []


# -- a persistent straggler counts against its node ------------------------------------------------


def test_a_ban_candidate_counts_toward_its_hosts_ban(tmp_path: Path) -> None:
    (tmp_path / "hosts.txt").write_text("node-01\nnode-02\n")
    cfg = build_config({"nodes.hostfile": "hosts.txt", "nodes.ban_after": 2})
    said: list[str] = []

    def say(level: Level, text: str) -> None:
        said.append(text)

    now = [1000.0]
    with Store.open(tmp_path / "home") as store:
        journal = Journal(store, "r", say, lambda: now[0])
        nodes = Nodes(cfg, "r", tmp_path, say, lambda: journal, lambda: now[0], HealthTargets())
        why = "rank 9 on node-01 is 40% slower than the median rank over the last 200 steps"
        assert nodes.blame(1, "node-01", why, "throughput_drop", kind="straggler") is None
        now[0] += 60
        ban = nodes.blame(2, "node-01", why, "throughput_drop", kind="straggler")
        assert ban is not None and ban.host == "node-01", said
        (doc,) = [d for d in nodes_document(store.node_events(), store.bans(), now[0], 86400.0)]
        assert doc["stragglers"] == 2 and doc["last_straggler"]["reason"] == why
        assert doc["state"] == "banned"
        # Before the ban, the table names the straggler as why the node is worth a look.
        early = nodes_document(store.node_events(), [], now[0], 86400.0)
        table = nodes_table(early, 86400.0)
        assert list(table.columns[4].cells) == [f"straggler: {why}"]
