"""supervise.cadence: the learned hang timeout kept for a re-attach."""

from __future__ import annotations

from pathlib import Path

from babysit.supervise.cadence import CADENCE_FILE, read_cadence, save_cadence


def test_saved_when_it_moved_and_read_back(tmp_path: Path) -> None:
    assert read_cadence(tmp_path) is None
    assert save_cadence(tmp_path, None, None) is None  # nothing learned yet: nothing written
    assert save_cadence(tmp_path, 4.0, None) == 4.0 and read_cadence(tmp_path) == 4.0
    assert save_cadence(tmp_path, 4.3, 4.0) == 4.0  # within 10%: not written again
    assert read_cadence(tmp_path) == 4.0
    assert save_cadence(tmp_path, 9.0, 4.0) == 9.0 and read_cadence(tmp_path) == 9.0


def test_a_bad_file_reads_as_none(tmp_path: Path) -> None:
    for text in ("{not json", '{"timeout_s": -1}', '{"timeout_s": "5"}', '{"x": 1}', "[]"):
        (tmp_path / CADENCE_FILE).write_text(text)
        assert read_cadence(tmp_path) is None, text


def test_a_directory_that_cannot_be_written_keeps_what_was_saved(tmp_path: Path) -> None:
    assert save_cadence(tmp_path / "gone", 4.0, 2.0) == 2.0
