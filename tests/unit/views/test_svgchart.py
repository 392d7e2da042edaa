"""views.svgchart: small SVG charts by hand, checked as XML (well formed, the right shapes)."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from babysit.views.svgchart import OUTCOME_COLOURS, Span, fmt_number, line_chart, timeline_chart

NS = "{http://www.w3.org/2000/svg}"


def _svg(text: str) -> ET.Element:
    root = ET.fromstring(text)  # well formed, or this raises
    assert root.tag == f"{NS}svg"
    return root


def _numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(r'(?:x|y|x1|x2|y1|y2|cx|cy|width)="(-?[\d.]+)"', text)]


def test_a_line_with_the_anomaly_marked_and_ringed() -> None:
    points = [(float(s), 2.5 - s * 0.01) for s in range(50, 70)] + [(70.0, 6.9), (71.0, 6.8)]
    svg = line_chart(points, "loss", marks=[70.0], bands=[(68.0, 73.0)])
    root = _svg(svg)
    (line,) = root.iter(f"{NS}polyline")
    assert len(line.attrib["points"].split()) == len(points)
    dashed = [el for el in root.iter(f"{NS}line") if el.get("stroke-dasharray")]
    assert len(dashed) == 1 and dashed[0].get("stroke") == "#dc2626"  # the anomaly's step
    rings = [el for el in root.iter(f"{NS}circle") if el.get("fill") == "none"]
    assert len(rings) == 1  # the point at the anomaly
    texts = [el.text for el in root.iter(f"{NS}text")]
    assert (
        "loss" in texts and "step 70" in texts and "step 50" in texts and "step 73" in texts
    )  # the band widens the axis
    bands = [el for el in root.iter(f"{NS}rect") if el.get("fill") == "#fde68a"]
    assert len(bands) == 1  # the skipped data
    title = root.find(f"{NS}title")
    assert title is not None and "anomaly at step 70" in (title.text or "")


def test_the_highest_value_is_drawn_above_the_lowest() -> None:
    svg = line_chart([(0.0, 1.0), (1.0, 5.0)], "loss", width=200, height=100)
    (line,) = _svg(svg).iter(f"{NS}polyline")
    (x0, y0), (x1, y1) = (tuple(map(float, p.split(","))) for p in line.attrib["points"].split())
    assert x0 < x1 and y1 < y0  # SVG's y grows downwards
    assert y1 >= 0 and y0 <= 100


def test_a_non_finite_or_huge_value_breaks_the_line_and_is_flagged_at_the_top() -> None:
    points = [(0.0, 2.0), (1.0, 2.1), (2.0, math.nan), (3.0, 1e308), (4.0, 2.2), (5.0, 2.3)]
    svg = line_chart(points, "loss", marks=[2.0])
    root = _svg(svg)
    assert len(list(root.iter(f"{NS}polyline"))) == 2  # broken where the value is off the scale
    flagged = [el for el in root.iter(f"{NS}path") if el.get("fill") == "#dc2626"]
    assert len(flagged) == 2
    assert all(math.isfinite(n) for n in _numbers(svg))  # 1e308 did not squash the axis
    assert "nan" in svg and "1.00e+308" in svg


@pytest.mark.parametrize("points", [[], [(3.0, 1.0)], [(0.0, 2.0), (1.0, 2.0)]])
def test_empty_single_or_flat_series_draw_without_dividing_by_zero(
    points: list[tuple[float, float]],
) -> None:
    svg = line_chart(points, "grad_norm", marks=[1.0])
    _svg(svg)
    assert all(math.isfinite(n) for n in _numbers(svg))


def test_text_from_a_log_is_escaped_and_shown_not_obeyed() -> None:
    evil = 'loss</text><script>alert(1)</script>"\x1b]0;pwned\x07'
    svg = line_chart([(0.0, 1.0), (1.0, 2.0)], evil)
    root = _svg(svg)
    assert "<script" not in svg and "\x1b" not in svg and "\x07" not in svg
    assert root.find(f"{NS}script") is None
    assert any("\\x1b]0;pwned\\x07" in (el.text or "") for el in root.iter(f"{NS}text"))


def test_the_timeline_colours_attempts_by_outcome_and_marks_incidents() -> None:
    spans = [Span(0.0, 100.0, "#1", "failed"), Span(110.0, 300.0, "#2", "succeeded")]
    svg = timeline_chart(spans, ticks=[(0.0, "05:00Z"), (300.0, "05:05Z")], marks=[(90.0, "I1")])
    root = _svg(svg)
    bars = [el for el in root.iter(f"{NS}rect") if el.get("rx")]
    assert [b.get("fill") for b in bars] == [
        OUTCOME_COLOURS["failed"],
        OUTCOME_COLOURS["succeeded"],
    ]
    assert float(bars[0].attrib["x"]) < float(bars[1].attrib["x"])
    assert float(bars[1].attrib["width"]) > float(bars[0].attrib["width"])  # 190 s vs 100 s
    assert len([el for el in root.iter(f"{NS}path")]) == 1
    assert {"05:00Z", "05:05Z"} <= {el.text for el in root.iter(f"{NS}text")}


def test_a_timeline_of_one_instant_or_none_still_draws() -> None:
    _svg(timeline_chart([Span(5.0, 5.0, "#1", "running")]))
    _svg(timeline_chart([]))


@pytest.mark.parametrize(
    ("value", "shown"),
    [(0.0, "0"), (2.3456, "2.35"), (123.4, "123"), (91234.0, "91234"), (1.5e7, "1.50e+07"),
     (0.0001, "1.00e-04"), (math.inf, "inf"), (math.nan, "nan")],
)  # fmt: skip
def test_fmt_number(value: float, shown: str) -> None:
    assert fmt_number(value) == shown
