"""babysit.views.safe and every view that prints the run's text: escapes from a log are shown,
never obeyed; rich markup in a log line prints as written."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from rich.console import Console

from babysit.records import Level
from babysit.views.console import ConsoleReporter
from babysit.views.doctor import doctor_table
from babysit.views.document import run_document
from babysit.views.nodes import nodes_table
from babysit.views.render import logbook_markdown, runs_table, status_tables
from babysit.views.safe import markup, plain
from babysit.views.triage import print_diagnosis

# Everything a hostile or broken log can send to a terminal.
EVIL = (
    "title\x1b]0;pwned\x07 clip\x1b]52;c;cHduZWQ=\x07 ris\x1bc csi\x1b[2J\x1b[31mred "
    "c1\x9b31m bel\x07 bs\x08\x08X cr\rover del\x7f bidi\u202eevil\u202c ls\u2028x "
    "[bold magenta]markup[/] [link=http://evil]x[/link]"
)
# Any of these in babysit's own output means the log drove the terminal.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def assert_safe(out: str) -> None:
    assert not RAW.search(out), repr(RAW.findall(out))
    assert "\\x1b]0;pwned\\x07" in out  # the text is all there, made visible
    assert "\\x1b]52;c;cHduZWQ=\\x07" in out
    assert "\\x9b31m" in out
    assert "[bold magenta]markup[/]" in out  # markup printed as written, not obeyed


def test_plain_shows_controls_as_escapes() -> None:
    assert plain("a\x1b[31mb\x07c\x08d\re\x00f\x7fg\x9bh") == (
        "a\\x1b[31mb\\x07c\\x08d\\re\\x00f\\x7fg\\x9bh"
    )
    assert plain("bidi\u202eevil\u2066x\u2028y") == "bidi\\u202eevil\\u2066x\\u2028y"


def test_plain_keeps_tabs_and_newlines_only_when_asked() -> None:
    assert plain("a\tb\nc") == "a\tb\\nc"
    assert plain("a\tb\nc", newlines=True) == "a\tb\nc"
    ordinary = "ordinary text: loss 2.3, ünïcödé, 日本語"
    assert plain(ordinary) is ordinary or plain(ordinary) == ordinary


def test_plain_of_a_non_string() -> None:
    assert plain(12) == "12" and plain(None) == "None"


def test_markup_escapes_rich_markup_too() -> None:
    buf = io.StringIO()
    Console(file=buf, width=400, color_system="truecolor", highlight=False).print(markup(EVIL))
    out = buf.getvalue()
    assert "\x1b]8;" not in out  # no hyperlink from [link=...]
    assert "[bold magenta]markup[/] [link=http://evil]x[/link]" in out


def test_markup_of_a_trailing_backslash() -> None:
    buf = io.StringIO()
    path = "C:\\"
    Console(file=buf, width=100, color_system=None).print(f"[bold]{markup(path)}[/]")
    assert buf.getvalue() == "C:\\\n"


def test_console_reporter_shows_the_log_text_escaped() -> None:
    buf = io.StringIO()
    say = ConsoleReporter(Console(file=buf, width=400, color_system="truecolor", highlight=False))
    say(Level.ERROR, f"attempt 1 exited with code 1: RuntimeError: {EVIL}")
    out = buf.getvalue()
    # The reporter's own colour comes through; nothing of the log's escapes does.
    assert_safe(RAW.sub("", out.replace("\x1b[1;31m", "").replace("\x1b[0m", "")))
    assert out.count("\x1b") == 2


def test_console_reporter_keeps_its_own_newlines() -> None:
    buf = io.StringIO()
    ConsoleReporter(Console(file=buf, width=100, color_system=None))(Level.INFO, "a\nb")
    assert buf.getvalue() == "babysit: a\nb\n"


def _doc() -> dict[str, Any]:
    run = {
        "name": "evil",
        "state": "failed",
        "reason": f"gave up: {EVIL}",
        "exit_code": 3,
        "command": ["python", "train.py", EVIL],
        "cwd": "/w",
        "created": 1.0,
        "updated": 2.0,
    }
    attempts = [
        {
            "number": 1,
            "started": 1.0,
            "ended": 2.0,
            "outcome": "failed",
            "exit_code": 1,
            "first_step": None,
            "last_step": None,
            "category": "unknown",
            "summary": EVIL,
        }
    ]
    events = [{"ts": 1.0, "attempt": 1, "kind": "attempt_ended", "message": EVIL, "data": {}}]
    incidents = [
        {"ts": 1.5, "attempt": 1, "kind": "loss_spike", "category": "loss_spike", "step": 3,
         "message": EVIL}
    ]
    diagnosis = {
        "ts": 1.9,
        "attempt": 1,
        "document": _diagnosis_doc(),
    }
    stacks = [
        {"ts": 1.8, "attempt": 1,
         "report": {"summary": EVIL, "groups": [{"count": 2, "ranks": [0, 1], "where": EVIL}]}}
    ]
    return run_document(run, attempts, events, False, incidents, [diagnosis], stacks)


def _diagnosis_doc() -> dict[str, Any]:
    return {
        "category": "unknown",
        "transient": None,
        "suspect": {"kind": "code", "host": EVIL, "rank": 3, "gpu": None},
        "summary": EVIL,
        "action": EVIL,
        "evidence": [{"file": EVIL, "line": 7, "text": EVIL}],
        "consequences": [
            {"count": 2, "category": "nccl_timeout", "summary": EVIL, "ranks": [1, 2],
             "first": {"file": EVIL, "line": 9}}
        ],
        "fingerprint": "abc",
        "confidence": 0.5,
        "rule": None,
    }


def _render(fn: Any, *args: Any, **kwargs: Any) -> str:
    buf = io.StringIO()
    fn(*args, Console(file=buf, width=4000, color_system=None), **kwargs)
    return buf.getvalue()


def test_status_tables_show_the_log_text_escaped() -> None:
    out = _render(status_tables, _doc())
    assert_safe(out)
    assert out.count("\\x1b]0;pwned") >= 6  # reason, command, summary, triage, incident, event


def test_runs_table_escapes_the_run_name() -> None:
    d = {**_doc(), "run": EVIL}
    assert_safe(_render(runs_table, [d]))


def test_logbook_markdown_shows_the_log_text_escaped() -> None:
    md = logbook_markdown(_doc())
    assert_safe(md)
    assert md.count("\\x1b]0;pwned") >= 9


@pytest.mark.parametrize("text", ["a `b` c", "`x", "x``", "```"])
def test_logbook_code_spans_cannot_be_closed_by_the_text(text: str) -> None:
    d = run_document({"name": "r", "state": "failed", "command": [text], "cwd": text}, [], [],
                     False)
    md = logbook_markdown(d)
    line = next(ln for ln in md.splitlines() if ln.startswith("- working directory: "))
    span = line.removeprefix("- working directory: ")
    fence = re.match("`+", span)
    assert fence is not None
    assert span.endswith(fence.group()) and fence.group() not in span[len(fence.group()) : -len(
        fence.group())]


def test_logbook_table_cells_stay_one_line() -> None:
    d = _doc()
    d["attempts"][0]["summary"] = "a\nb | c"
    md = logbook_markdown(d)
    assert "| a\\nb \\| c |" in md


def test_triage_view_shows_the_log_text_escaped() -> None:
    out = _render(print_diagnosis, _diagnosis_doc(), seen_line=EVIL, files=1, lines=3,
                  skipped=[EVIL])
    assert_safe(out)


def test_nodes_table_escapes_reasons() -> None:
    docs = [{"host": "gpu-1", "state": "ok", "failures": 1, "last_health": None, "ban": None,
             "last_failure": {"reason": EVIL}}]
    buf = io.StringIO()
    Console(file=buf, width=4000, color_system=None).print(nodes_table(docs, 86400))
    assert_safe(buf.getvalue())


def test_doctor_table_escapes_summaries() -> None:
    from babysit.records import CheckResult, CheckStatus

    out = _render(doctor_table, [CheckResult("disk", CheckStatus.FAIL, EVIL, target=EVIL)])
    assert_safe(out)


def test_console_reporter_hides_secrets_as_the_store_does() -> None:
    buf = io.StringIO()
    say = ConsoleReporter(Console(file=buf, width=400, color_system=None))
    say(Level.ERROR, "attempt 1 exited: OSError: 401 (HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz1234)")
    assert buf.getvalue() == "babysit: attempt 1 exited: OSError: 401 (HF_TOKEN=***)\n"
