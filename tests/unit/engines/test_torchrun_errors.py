"""engines.torchrun_errors: torchrun's error files (real shapes, from torch 2.13 on gloo)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from babysit.engines.torchrun_errors import (
    first_failure,
    found_error_files,
    parse_error,
    read_error_file,
    render,
)

# What `@record` wrote for rank 2 of tests/fixtures/torchrun_ranks.py --fault raise.
RECORDED = (
    '{"message": {"message": "KeyError: \'attention_mask\'", "extraInfo": {"py_callstack": '
    '"Traceback (most recent call last):\\n  File \\"/venv/lib/python3.11/site-packages/torch/'
    'distributed/elastic/multiprocessing/errors/__init__.py\\", line 367, in wrapper\\n    '
    'return f(*args, **kwargs)\\n           ^^^^^^^^^^^^^^^^^^\\n  File \\"/work/train.py\\", '
    'line 71, in main\\n    t = collate({\\"input_ids\\": t})\\n  File \\"/work/train.py\\", '
    'line 47, in collate\\n    return batch[\\"attention_mask\\"]\\nKeyError: '
    '\'attention_mask\'\\n", "timestamp": "1796123147"}}}'
)
# A survivor of the same job: gloo's error once rank 2 was gone.
PEER = {
    "message": {
        "message": "RuntimeError: [../gloo/transport/tcp/pair.cc:553] Connection closed by peer "
        "[127.0.0.1]:30114",
        "extraInfo": {
            "py_callstack": "Traceback (most recent call last):\n  File \"/work/train.py\", "
            "line 72, in main\n    dist.all_reduce(t)\nRuntimeError: [../gloo/transport/tcp/"
            "pair.cc:553] Connection closed by peer [127.0.0.1]:30114\n",
            "timestamp": "1796123147",
        },
    }
}


def _layout(root: Path, local_rank: int, text: str) -> Path:
    path = root / "none_wxxo1qyn" / "attempt_0" / str(local_rank) / "error.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_recorded_python_exception() -> None:
    e = parse_error(RECORDED, Path("/l/none_x/attempt_0/2/error.json"))
    assert e is not None
    assert e.local_rank == 2 and e.rank is None
    assert e.message == "KeyError: 'attention_mask'"
    assert e.timestamp == 1796123147 and e.error_code is None
    assert e.traceback is not None and e.traceback.startswith("Traceback (most recent call last)")
    assert "in collate" in e.traceback


def test_the_agents_copy_with_an_error_code() -> None:
    data = json.loads(RECORDED)
    data["message"]["errorCode"] = -9  # override_error_code_in_rootcause_data
    e = parse_error(json.dumps(data), Path("/l/r/attempt_0/0/error.json"))
    assert e is not None and e.error_code == -9 and e.local_rank == 0


def test_the_string_message_format() -> None:
    text = '{"message": "CUDA error: an illegal memory access", "timestamp": 1796123150}'
    e = parse_error(text, Path("/l/r/attempt_1/3/error.json"), rank=11)
    assert e is not None
    assert e.message == "CUDA error: an illegal memory access" and e.traceback is None
    assert e.timestamp == 1796123150 and e.rank == 11 and e.local_rank == 3


def test_what_is_not_an_error_file_is_none(tmp_path: Path) -> None:
    p = Path("/l/r/attempt_0/0/error.json")
    assert parse_error('{"message": {"message": "Key', p) is None  # written half-way
    assert parse_error('{"other": 1}', p) is None
    assert parse_error("[1, 2]", p) is None
    assert parse_error('{"message": {"extraInfo": {}}}', p) is None
    assert read_error_file(tmp_path / "missing.json") is None


def test_error_files_are_found_in_torchruns_layout(tmp_path: Path) -> None:
    two = _layout(tmp_path, 2, RECORDED)
    one = _layout(tmp_path, 1, json.dumps(PEER))
    (tmp_path / "none_wxxo1qyn" / "attempt_0" / "0").mkdir()  # a rank that wrote none
    assert found_error_files(tmp_path) == [one, two]
    old = _layout(tmp_path / "old", 0, RECORDED)
    os.utime(old, (1000.0, 1000.0))
    assert found_error_files(tmp_path / "old", since=2000.0) == []
    assert found_error_files(tmp_path / "absent") == []


def test_the_first_failure_is_the_earliest_file_within_the_same_second(tmp_path: Path) -> None:
    two = _layout(tmp_path, 2, RECORDED)
    one = _layout(tmp_path, 1, json.dumps(PEER))
    three = _layout(tmp_path, 3, json.dumps(PEER))
    # Real times of one run: rank 2 raised at .31, its peers learned of it at .64.
    os.utime(two, (1796123147.31, 1796123147.31))
    os.utime(one, (1796123147.64, 1796123147.64))
    os.utime(three, (1796123147.65, 1796123147.65))
    errors = [e for e in (read_error_file(p) for p in (one, two, three)) if e is not None]
    first = first_failure(errors)
    assert first is not None and first.local_rank == 2
    assert first_failure([]) is None


def test_render_puts_the_first_failure_first_with_the_ranks_prefix(tmp_path: Path) -> None:
    two = _layout(tmp_path, 2, RECORDED)
    one = _layout(tmp_path, 1, json.dumps(PEER))
    os.utime(two, (1796123147.31, 1796123147.31))
    os.utime(one, (1796123147.64, 1796123147.64))
    e2, e1 = read_error_file(two, rank=2), read_error_file(one, rank=1)
    assert e2 is not None and e1 is not None
    lines = render([e1, e2]).splitlines()
    assert lines[0] == "[rank2]: Traceback (most recent call last):"
    assert "[rank2]: KeyError: 'attention_mask'" in lines
    assert lines.index("[rank2]: KeyError: 'attention_mask'") < lines.index(
        "[rank1]: Traceback (most recent call last):"
    )
    assert render([]) == ""


def test_render_without_a_global_rank_names_the_file(tmp_path: Path) -> None:
    path = _layout(tmp_path, 3, '{"message": "boom", "timestamp": 5}')
    e = read_error_file(path)
    assert e is not None
    assert render([e]).splitlines() == [f"torchrun error file of local rank 3: {path}", "boom"]
