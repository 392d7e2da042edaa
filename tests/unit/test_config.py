"""babysit.config: defaults, precedence, validation messages, run names."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from babysit.config import (
    Config,
    build_config,
    derive_run_name,
    load_config,
    read_toml,
)
from babysit.errors import ConfigError, UsageError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "babysit.toml"
    path.write_text(text)
    return path


# -- defaults and precedence ---------------------------------------------------------------------


def test_defaults() -> None:
    cfg = build_config({})
    assert cfg == Config()
    assert cfg.run.name is None
    assert cfg.run.home == ".babysit"
    assert cfg.restart.max_restarts == 10
    assert cfg.restart.backoff_s == 10.0
    assert cfg.restart.backoff_max_s == 600.0
    assert cfg.stop.grace_s == 30.0
    assert cfg.checkpoint.glob is None
    assert cfg.checkpoint.settle_s == 2.0


def test_config_is_frozen() -> None:
    cfg = build_config({})
    with pytest.raises(AttributeError):
        cfg.restart.max_restarts = 3  # type: ignore[misc]


def test_load_config_without_file_uses_defaults(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no babysit.toml here
    assert load_config(None, {}) == Config()


def test_toml_values_are_read(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[run]\nname = "gpt-small"\n[restart]\nmax_restarts = 3\nbackoff_s = 5\n'
        '[checkpoint]\nglob = "out/ckpt_*.pt"\n',
    )
    cfg = load_config(path, {})
    assert cfg.run.name == "gpt-small"
    assert cfg.restart.max_restarts == 3
    assert cfg.restart.backoff_s == 5.0
    assert isinstance(cfg.restart.backoff_s, float)  # int in TOML, float in the config
    assert cfg.checkpoint.glob == "out/ckpt_*.pt"


def test_overrides_beat_toml(tmp_path: Path) -> None:
    path = write(tmp_path, "[restart]\nmax_restarts = 3\nbackoff_s = 5\n")
    cfg = load_config(path, {"restart.max_restarts": 7})
    assert cfg.restart.max_restarts == 7
    assert cfg.restart.backoff_s == 5.0  # not overridden: from the file


def test_none_override_does_not_clobber_toml(tmp_path: Path) -> None:
    path = write(tmp_path, "[restart]\nmax_restarts = 3\n")
    cfg = load_config(path, {"restart.max_restarts": None})
    assert cfg.restart.max_restarts == 3


def test_babysit_toml_in_cwd_is_picked_up(tmp_path: Path, monkeypatch) -> None:
    write(tmp_path, "[stop]\ngrace_s = 1.5\n")
    monkeypatch.chdir(tmp_path)
    assert load_config(None, {}).stop.grace_s == 1.5


def test_error_from_file_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "[restart]\nmax_restrats = 3\n")
    with pytest.raises(ConfigError, match=r"babysit\.toml"):
        load_config(path, {})


def test_error_from_flags_says_flags(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"^flags: unknown key"):
        load_config(None, {"restart.max_restrats": 3})


# -- unknown names -------------------------------------------------------------------------------


def test_unknown_key_names_it_and_suggests() -> None:
    with pytest.raises(ConfigError) as info:
        build_config({"restart.max_restrats": 3})
    msg = str(info.value)
    assert "restart.max_restrats" in msg
    assert "did you mean 'max_restarts'" in msg
    assert "known keys of [restart]" in msg


def test_unknown_key_without_close_match_lists_known_keys() -> None:
    with pytest.raises(ConfigError) as info:
        build_config({"stop.zzzzzz": 1})
    msg = str(info.value)
    assert "stop.zzzzzz" in msg
    assert "did you mean" not in msg
    assert "grace_s" in msg


def test_unknown_section_names_it_and_suggests() -> None:
    with pytest.raises(ConfigError) as info:
        build_config({"restrat.max_restarts": 3})
    msg = str(info.value)
    assert "[restrat]" in msg
    assert "did you mean 'restart'" in msg


def test_unknown_section_in_toml(tmp_path: Path) -> None:
    path = write(tmp_path, "[chekpoint]\nglob = 'x'\n")
    with pytest.raises(ConfigError, match=r"chekpoint.*did you mean 'checkpoint'"):
        load_config(path, {})


def test_toml_top_level_value_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n')
    with pytest.raises(ConfigError, match=r"'name' must be a \[section\] table"):
        read_toml(path)


def test_toml_nested_table_is_an_unknown_key(tmp_path: Path) -> None:
    path = write(tmp_path, "[restart.extra]\nx = 1\n")
    with pytest.raises(ConfigError, match=r"restart\.extra"):
        load_config(path, {})


# -- types ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "want"),
    [
        ("restart.max_restarts", "3", "int"),
        ("restart.max_restarts", 2.5, "int"),
        ("restart.max_restarts", True, "int"),  # bool is an int in Python, not here
        ("restart.backoff_factor", "2", "float"),  # a "10" for a *_s key is 10 seconds
        ("restart.backoff_s", False, "float"),
        ("run.echo", 1, "bool"),
        ("run.echo", "yes", "bool"),
        ("run.home", 5, "str"),
        ("run.name", 5, "str"),  # default None: a string is wanted
        ("checkpoint.glob", ["a"], "str"),
    ],
)
def test_type_errors_name_key_type_and_value(key: str, value: object, want: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_config({key: value})
    msg = str(info.value)
    assert msg.startswith(f"{key} must be a {want}")
    assert repr(value) in msg


def test_int_is_accepted_for_float() -> None:
    cfg = build_config({"stop.grace_s": 3})
    assert cfg.stop.grace_s == 3.0
    assert isinstance(cfg.stop.grace_s, float)


def test_bool_values() -> None:
    assert build_config({"run.echo": False}).run.echo is False


def test_config_error_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        build_config({"restart.max_restarts": -1})


# -- minimums ------------------------------------------------------------------------------------


def test_minimum_message_format() -> None:
    with pytest.raises(ConfigError) as info:
        build_config({"restart.max_restarts": -1})
    assert str(info.value) == "restart.max_restarts must be >= 0 restarts, got -1"


@pytest.mark.parametrize(
    ("key", "value", "unit"),
    [
        ("run.poll_s", 0.001, "seconds"),
        ("restart.backoff_s", -1.0, "seconds"),
        ("restart.backoff_factor", 0.5, "(a factor)"),
        ("restart.backoff_max_s", -0.5, "seconds"),
        ("restart.jitter", -0.1, "(a fraction)"),
        ("restart.reset_after_s", -1, "seconds"),
        ("stop.grace_s", -2, "seconds"),
        ("checkpoint.settle_s", -3.5, "seconds"),
    ],
)
def test_minimums(key: str, value: float, unit: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_config({key: value})
    msg = str(info.value)
    assert msg.startswith(f"{key} must be >= ")
    assert unit in msg
    assert f"got {float(value)!r}" in msg or f"got {value!r}" in msg
    assert "  " not in msg


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("run.poll_s", 0.01),
        ("restart.max_restarts", 0),
        ("restart.backoff_s", 0),
        ("restart.backoff_factor", 1),
        ("restart.jitter", 0),
        ("stop.grace_s", 0),
        ("checkpoint.settle_s", 0),
    ],
)
def test_minimums_are_inclusive(key: str, value: float) -> None:
    build_config({key: value})


def test_jitter_must_be_below_one() -> None:
    with pytest.raises(ConfigError, match=r"restart.jitter must be < 1.*got 1.0"):
        build_config({"restart.jitter": 1.0})
    assert build_config({"restart.jitter": 0.99}).restart.jitter == 0.99


def test_backoff_max_below_backoff() -> None:
    with pytest.raises(ConfigError) as info:
        build_config({"restart.backoff_s": 60, "restart.backoff_max_s": 30})
    msg = str(info.value)
    assert "restart.backoff_max_s" in msg
    assert "restart.backoff_s" in msg
    assert "30 < 60" in msg


def test_backoff_max_equal_to_backoff_is_fine() -> None:
    cfg = build_config({"restart.backoff_s": 30, "restart.backoff_max_s": 30})
    assert cfg.restart.backoff_max_s == 30.0


def test_default_backoff_max_below_raised_backoff() -> None:
    # only backoff_s raised above the default cap (600): the cross-check still applies
    with pytest.raises(ConfigError, match="backoff_max_s"):
        build_config({"restart.backoff_s": 1000})


@pytest.mark.parametrize("key", ["restart.backoff_s", "run.poll_s", "stop.grace_s"])
def test_nan_is_rejected(key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        build_config({key: math.nan})


def test_nan_from_toml_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "[restart]\njitter = nan\n")
    with pytest.raises(ConfigError, match=r"restart\.jitter"):
        load_config(path, {})


# -- bad files -----------------------------------------------------------------------------------


def test_invalid_toml(tmp_path: Path) -> None:
    path = write(tmp_path, "[restart\nmax_restarts = 3\n")
    with pytest.raises(ConfigError, match="is not valid TOML") as info:
        load_config(path, {})
    assert str(path) in str(info.value)
    assert info.value.__cause__ is not None


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match="does not exist") as info:
        load_config(path, {})
    assert str(path) in str(info.value)


def test_unreadable_path_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        read_toml(tmp_path)  # a directory


def test_non_utf8_toml(tmp_path: Path) -> None:
    path = tmp_path / "babysit.toml"
    path.write_bytes(b'[run]\nname = "\xff\xfe"\n')
    with pytest.raises(ConfigError):
        read_toml(path)


def test_read_toml_flattens(tmp_path: Path) -> None:
    path = write(tmp_path, "[run]\nname = 'a'\n[stop]\ngrace_s = 1\n")
    assert read_toml(path) == {"run.name": "a", "stop.grace_s": 1}


# -- run.name and resume_args --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gpt", "gpt-small", "a.b_c-1", "X", "9lives", "a" * 100])
def test_good_run_names(name: str) -> None:
    assert build_config({"run.name": name}).run.name == name


@pytest.mark.parametrize(
    "name", ["", "-gpt", ".hidden", "_x", "has space", "a/b", "../up", "é", "a" * 101, "a\nb"]
)
def test_bad_run_names(name: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_config({"run.name": name})
    msg = str(info.value)
    assert msg.startswith("run.name must be")
    assert repr(name) in msg


def test_resume_args_must_be_shell_words() -> None:
    assert build_config({"run.resume_args": "--init_from=resume --x 'a b'"}).run.resume_args
    with pytest.raises(ConfigError, match=r"run\.resume_args") as info:
        build_config({"run.resume_args": "--x 'unterminated"})
    assert isinstance(info.value.__cause__, ValueError)


# -- derive_run_name -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["python", "train.py"], "train"),
        (["python3.11", "train.py", "--lr", "3e-4"], "train"),
        (["torchrun", "--nproc_per_node=4", "pretrain.py"], "pretrain"),
        (["torchrun", "--nproc_per_node", "4", "pretrain.py", "--cfg", "x"], "pretrain"),
        (["./run_llama.sh"], "run_llama"),
        (["bash", "scripts/run_llama.sh"], "run_llama"),
        (["python", "/abs/path/to/finetune.py"], "finetune"),
        (["python", "-m", "mymod"], "mymod"),
        (["python", "-m", "torch.distributed.run", "train.py"], "train"),
        (["env", "FOO=1", "deepspeed", "my_trainer"], "my_trainer"),
        (["/usr/bin/some-binary", "--flag"], "some-binary"),
        (["python", "--config=conf.py", "train.py"], "train"),
        (["python", "my train!.py"], "my-train"),
        (["python", "a@b#c.py"], "a-b-c"),
        (["python", "训练.py"], "run"),
        ([], "run"),
        (["python"], "python"),
        (["python3", "-c", "import time; time.sleep(9)"], "python3"),  # not the code
        (["python", "-u", "-m", "pkg.train", "--lr", "3"], "pkg.train"),
    ],
)
def test_derive_run_name(command: list[str], name: str) -> None:
    assert derive_run_name(command) == name


@pytest.mark.parametrize(
    "command",
    [
        ["python", "-c", "print(1)"],
        ["python", "--" + "x" * 300 + ".py"],
        ["python", "x" * 300 + ".py"],
        ["python", "...py"],
        ["!!!"],
        ["python", "-", "<", "a.py"],
    ],
)
def test_derived_names_are_valid_run_names(command: list[str]) -> None:
    name = derive_run_name(command)
    assert build_config({"run.name": name}).run.name == name


# -- [alerts] (babysit.alerts.settings) -----------------------------------------------------------


def test_alerts_section_from_toml(tmp_path: Path) -> None:
    from babysit.alerts import Destination, Severity

    path = write(
        tmp_path,
        '[alerts]\nnotify = ["json://127.0.0.1:9/", {url = "pd://k@t", min_severity = "page"}]\n'
        'cooldown_s = "5m"\nburst_s = 10\ndeadman_url = "https://hc-ping.com/x"\n'
        'on_event = "cat"\non_event_timeout_s = 5\n',
    )
    cfg = load_config(path, {})
    assert cfg.alerts.notify == (
        Destination("json://127.0.0.1:9/"),
        Destination("pd://k@t", Severity.PAGE),
    )
    assert cfg.alerts.cooldown_s == 300.0 and cfg.alerts.burst_s == 10.0
    assert cfg.alerts.enabled
    assert not build_config({}).alerts.enabled


def test_notify_flags_replace_the_files_urls(tmp_path: Path) -> None:
    path = write(tmp_path, '[alerts]\nnotify = ["json://a/"]\n')
    cfg = load_config(path, {"alerts.notify": ("ntfy://ntfy.sh/b",)})
    assert [d.url for d in cfg.alerts.notify] == ["ntfy://ntfy.sh/b"]
    assert [d.url for d in load_config(path, {"alerts.notify": None}).alerts.notify] == [
        "json://a/"
    ]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"alerts.notify": ["nope"]}, r"alerts.notify\[0\] must be an apprise URL"),
        ({"alerts.cooldown_s": -1}, "alerts.cooldown_s must be >= 0 seconds, got -1"),
        ({"alerts.deadman_url": "ftp://x"}, "alerts.deadman_url must be an http"),
        ({"alerts.on_event": "  "}, "alerts.on_event is blank"),
        ({"alerts.notfy": ["x://"]}, r"unknown key 'alerts.notfy' \(did you mean 'notify'\?\)"),
    ],
)
def test_alerts_bad_values_name_the_key(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_config(values)


def test_the_stored_config_masks_the_alert_urls() -> None:
    from babysit.config import config_document

    cfg = build_config(
        {
            "alerts.notify": ["slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ"],
            "alerts.deadman_url": "https://hc-ping.com/0f1e2d3c-secret",
        }
    )
    doc = config_document(cfg)
    text = str(doc)
    assert "TIiajkdnlazkcOXrIdevi7FQ" not in text and "secret" not in text
    assert doc["alerts"]["notify"] == [{"url": "slack://***", "min_severity": "info"}]
    assert doc["alerts"]["deadman_url"] == "https://hc-ping.com"
