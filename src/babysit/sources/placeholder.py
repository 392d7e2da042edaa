"""Put a path where a placeholder (`{checkpoint}`) stands in a command, never as code.

    fill(["python", "check.py", "--ckpt={checkpoint}"], "{checkpoint}", path)   # argv: as is
    fill(["sh", "-c", "check {checkpoint} && echo ok"], "{checkpoint}", path)   # quoted

A word of argv reaches the program as it is: the path stays one argument whatever it holds
(spaces, `;`, quotes), there is nothing to quote. The script of a shell (`sh -c SCRIPT`,
`bash -lc`, `bash -o pipefail -c`, also after `env`, `timeout 60`, `nice`) is code: there the
path is quoted for the place it stands in: shlex.quote outside quotes, backslashes inside "...",
'\\'' inside '...'. A checkpoint named `ckpt_10;touch PWNED;.pt` is then a name, not a command.
Where the place is not plain (after a `$(`, a backquote, a `$'...'`, a here-document or a
comment in the script) and the path holds a character a shell reads, babysit refuses
(LaunchError) rather than guess. The same for the code of other interpreters (`python -c CODE`,
`perl -e CODE`): only a path of plain characters ([A-Za-z0-9_./+,:=@%-]) is put there. A path
made of those characters only, the usual case, is put in unchanged everywhere.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence

from babysit.errors import LaunchError

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash"})
_CODE_FLAGS = {"python": "-c", "pypy": "-c", "perl": "-e", "ruby": "-e", "node": "-e"}
_SHELL_ARG_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_PLAIN = re.compile(r"[A-Za-z0-9_./+,:=@%-]*")


def fill(words: Sequence[str], placeholder: str, value: str) -> list[str]:
    """`words` with every `placeholder` replaced by `value`, quoted where a word is code.
    Raises LaunchError where a word is code and `value` cannot be put there safely."""
    code = _code_words(words)
    out = []
    for i, word in enumerate(words):
        if placeholder not in word:
            out.append(word)
        elif code.get(i) == "shell":
            out.append(_fill_script(word, placeholder, value))
        elif i in code:
            out.append(word.replace(placeholder, _plain_only(value, word, placeholder)))
        else:
            out.append(word.replace(placeholder, value))
    return out


def _program(word: str) -> str:
    name = os.path.basename(word)
    return re.sub(r"[0-9.]+$", "", name)  # python3.11 -> python, bash5 -> bash


def _code_words(words: Sequence[str]) -> dict[int, str]:
    """{index: "shell" | interpreter} of the words that are code."""
    out: dict[int, str] = {}
    for i, word in enumerate(words):
        prog = _program(word)
        if prog in SHELLS:
            script = _shell_script_index(words, i + 1)
            if script is not None:
                out[script] = "shell"
        elif prog in _CODE_FLAGS:
            flag = _CODE_FLAGS[prog]
            for j in range(i + 1, len(words) - 1):
                if words[j] == flag:
                    out[j + 1] = prog
                    break
                if not words[j].startswith("-"):
                    break  # a script file: its arguments are argv
    return out


def _shell_script_index(words: Sequence[str], start: int) -> int | None:
    """Where `sh [options] -c SCRIPT` has its SCRIPT (None: a script file or stdin)."""
    c_flag = False
    j = start
    while j < len(words):
        w = words[j]
        if w == "--":
            j += 1
            break
        if w in _SHELL_ARG_OPTIONS:
            j += 2
            continue
        if w.startswith(("-", "+")) and len(w) > 1:
            if not w.startswith("--") and "c" in w[1:]:
                c_flag = True
            j += 1
            continue
        break
    return j if c_flag and j < len(words) else None


def _plain_only(value: str, word: str, placeholder: str) -> str:
    if _PLAIN.fullmatch(value):
        return value
    raise LaunchError(
        f"cannot put {value!r} in place of {placeholder} in {word!r}: that is code, and the "
        f"path holds characters it would read as code. Pass the path as an argument of its "
        f'own instead (in a shell script: "$1" after the script, or an environment variable '
        f"such as BABYSIT_CHECKPOINT)"
    )


def _fill_script(script: str, placeholder: str, value: str) -> str:
    """Each placeholder in a shell script replaced by `value` quoted for where it stands."""
    out: list[str] = []
    state = "u"  # u: unquoted, q: in '...', d: in "...", x: after $(, `, <<, # (not followed)
    i, n = 0, len(script)
    while i < n:
        if script.startswith(placeholder, i):
            out.append(_quoted(value, state, script, placeholder))
            i += len(placeholder)
            continue
        c = script[i]
        if state == "x":
            pass
        elif state == "q":
            if c == "'":
                state = "u"
        elif c == "\\" and i + 1 < n:  # u or d: the next character is literal
            out.append(script[i : i + 2])
            i += 2
            continue
        elif state == "d":
            if c == '"':
                state = "u"
            elif c == "`" or script.startswith("$(", i):
                state = "x"
        elif c == "'":
            state = "q"
        elif c == '"':
            state = "d"
        elif c == "`" or script.startswith(("$(", "$'", "<<"), i) or _comment(script, i):
            state = "x"
        out.append(c)
        i += 1
    return "".join(out)


def _comment(script: str, i: int) -> bool:
    return script[i] == "#" and (i == 0 or script[i - 1] in " \t\n;&|(")


def _quoted(value: str, state: str, script: str, placeholder: str) -> str:
    if _PLAIN.fullmatch(value):
        return value
    if state == "u":
        return shlex.quote(value)
    if state == "q":
        return value.replace("'", "'\\''")
    if state == "d":
        return re.sub(r'([\\"$`])', r"\\\1", value)
    return _plain_only(value, script, placeholder)
