"""babysit.sources.placeholder.fill: a checkpoint's path in a command, never run as code."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from babysit.errors import LaunchError
from babysit.records import Checkpoint
from babysit.sources.placeholder import fill
from babysit.supervise.prepare import build_argv

P = "{checkpoint}"
EVIL = "ckpt_10;touch PWNED;.txt"
NAMES = [
    EVIL,
    "a b",
    "it's",
    'say "hi"',
    "$(touch PWNED)",
    "`touch PWNED`",
    "back\\slash",
    "new\nline",
    "*",
    "-rf",
    "a'\"$`\\;|&<>(){}!#~ x",
    "a\\'; touch PWNED; '",
    "ckpt_000150.pt",
]


def test_argv_words_are_left_whole_whatever_the_path() -> None:
    words = ["python", "check.py", P, f"--ckpt={P}", "--x", "y"]
    assert fill(words, P, EVIL) == ["python", "check.py", EVIL, f"--ckpt={EVIL}", "--x", "y"]


def test_a_plain_path_is_put_in_unchanged_even_in_a_script() -> None:
    assert fill(["sh", "-c", f"check '{P}' \"{P}\" {P}"], P, "/o/ckpt_1.pt") == [
        "sh",
        "-c",
        "check '/o/ckpt_1.pt' \"/o/ckpt_1.pt\" /o/ckpt_1.pt",
    ]


@pytest.mark.parametrize(
    "words",
    [
        ["sh", "-c", f"test -f {P}"],
        ["/bin/bash", "-lc", f"test -f {P}"],
        ["bash", "-o", "pipefail", "-c", f"test -f {P}"],
        ["env", "A=1", "sh", "-ec", f"test -f {P}"],
        ["timeout", "60", "dash", "-c", f"test -f {P}"],
    ],
)
def test_the_script_of_a_shell_is_quoted(words: list[str]) -> None:
    out = fill(words, P, EVIL)
    assert out[-1] == "test -f 'ckpt_10;touch PWNED;.txt'"
    assert out[:-1] == words[:-1]


def test_the_arguments_after_a_script_are_argv() -> None:
    assert fill(["sh", "-c", 'test -f "$1"', "sh", P], P, EVIL)[-1] == EVIL
    assert fill(["bash", "check.sh", P], P, EVIL) == ["bash", "check.sh", EVIL]


@pytest.mark.parametrize("shell", ["sh", "bash"])
@pytest.mark.parametrize(
    "script",
    [
        f"printf %s {P}",
        f'printf %s "{P}"',
        f"printf %s '{P}'",
        f"printf %s x{P}y",
        f'printf %s "pre {P} post"',
        f"printf %s 'a'{P}\"b\"",
    ],
)
def test_no_name_runs_and_each_arrives_whole(shell: str, script: str, tmp_path: Path) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"no {shell}")
    for name in NAMES:
        argv = fill([shell, "-c", script], P, name)
        got = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True).stdout
        want = subprocess.run(
            [shell, "-c", script.replace(P, "X__X")], capture_output=True, text=True
        ).stdout.replace("X__X", name)
        assert not (tmp_path / "PWNED").exists(), f"{name!r} in {script!r} ran a command"
        assert got == want, f"{name!r} in {script!r}"


@pytest.mark.parametrize(
    "script",
    [f"echo $(cat {P})", f"echo `cat {P}`", f"printf %s $'{P}'", f"cat <<EOF\n{P}\nEOF", f"# {P}"],
)
def test_a_place_babysit_does_not_follow_refuses_an_unplain_path(script: str) -> None:
    with pytest.raises(LaunchError, match="characters it would read as code"):
        fill(["sh", "-c", script], P, EVIL)
    assert fill(["sh", "-c", script], P, "out/ckpt_1.pt")[-1] == script.replace(P, "out/ckpt_1.pt")


def test_the_code_of_an_interpreter_takes_plain_paths_only() -> None:
    code = f"import torch; torch.load('{P}')"
    filled = fill(["python3", "-c", code], P, "o/c_1.pt")
    assert filled[-1] == "import torch; torch.load('o/c_1.pt')"
    with pytest.raises(LaunchError):
        fill(["python3", "-c", code], P, "x');import os;os.system('touch PWNED');('")
    # a script file's arguments are argv, whatever they hold
    assert fill(["python", "check.py", "-c", P], P, EVIL)[-1] == EVIL


def test_the_training_command_is_quoted_too_and_resume_args_are_not_split() -> None:
    """build_argv (supervise/prepare.py) fills the training command the same way."""
    ckpt = Checkpoint("/o/ckpt 10;touch PWNED;.pt", 10, 1.0, 5, True, None)
    argv = build_argv(["sh", "-c", f"python train.py --resume {P}"], f"--from {P}", ckpt)
    assert argv == [
        "sh",
        "-c",
        "python train.py --resume '/o/ckpt 10;touch PWNED;.pt'",
        "--from",
        "/o/ckpt 10;touch PWNED;.pt",
    ]
    assert build_argv(["python", "t.py", f"--resume={P}"], f"--from {P}", None) == [
        "python",
        "t.py",
    ]
