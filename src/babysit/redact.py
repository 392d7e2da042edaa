"""Secrets out of what babysit keeps: the pure redaction that the store's write path applies.

    redact_text("HTTPError: 401 for https://u:hunter2@hub/x (HF_TOKEN=hf_AbC...)")
        -> "HTTPError: 401 for https://u:***@hub/x (HF_TOKEN=***)"
    redact_argv(["python", "train.py", "--api-key", "sk-...", "--lr=3e-4"])
        -> ["python", "train.py", "--api-key", "***", "--lr=3e-4"]
    redact_tree({"argv": [...], "message": "...", "n": 3})   # the same shape, strings redacted

What is hidden, the name before it kept so that a reader knows what was there:

- the value of a flag whose name looks secret (`--api-key V`, `--api_key=V`, `--token`,
  `--hf-token`, `--password`, `--secret`, `--wandb-key`, `--aws-secret-access-key`, ...), in an
  argv and inside text (`sh -c '... --token V'`, an error quoting the command line);
- `KEY=value`, `KEY: value`, `"key": "value"` where the key looks secret (its name ends in
  TOKEN, SECRET, PASSWORD, API_KEY, ACCESS_KEY, SECRET_KEY, PRIVATE_KEY, CREDENTIALS, AUTH, ...;
  not the tokenizer's `pad_token` and friends); numbers, booleans and None are left alone
  (`use_auth_token=True`);
- tokens of a known shape wherever they stand: Hugging Face `hf_...`, OpenAI and Anthropic
  `sk-...`, GitHub `ghp_...`/`github_pat_...`, AWS key ids `AKIA...`/`ASIA...`, Slack
  `xox?-...`, JWTs, `Bearer ...` and `Authorization: ...` values, and the password of a URL
  (`https://user:***@host`).

Standard library only: the store (a stage) and the vocabulary may use it. It never raises and
returns the very same string when there is nothing to hide (the common case, kept cheap).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

REDACTED = "***"

# A name (of a flag, an environment variable, a JSON key) that holds a secret: it ends in one
# of these words (`HF_TOKEN`, `wandb.api_key`, `--aws-secret-access-key`).
_SECRET_WORDS = (
    r"(?:token|secret|passw(?:or)?d|passphrase|api[_-]?key|access[_-]?key(?:[_-]?id)?"
    r"|secret[_-]?key|private[_-]?key|credentials?|auth|wandb[_-]?key|session[_-]?key)"
)
_SECRET_NAME = re.compile(_SECRET_WORDS + "$", re.IGNORECASE)
# ... except the tokenizer's special tokens (`pad_token=<pad>`), which are no secret.
_NOT_SECRET_NAME = re.compile(r"(?:pad|eos|bos|unk|sep|cls|mask|special)[_-]?token$", re.I)
# Values that hide nothing: a flag's switch (`use_auth_token=True`), a number, nothing.
_HARMLESS_VALUE = re.compile(
    r"(?:true|false|none|null|yes|no|on|off|[-+]?\d+(?:\.\d+)?|\*+|<redacted>)?", re.IGNORECASE
)
_FLAG = re.compile(r"(--?[A-Za-z][\w.-]*)(?:=(.*))?", re.DOTALL)

# Tokens of a known shape: (pattern, what is kept of the match before REDACTED).
_SHAPES: tuple[tuple[re.Pattern[str], str | None], ...] = (
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), "hf_"),
    (re.compile(r"\bsk-(?:proj-|ant-(?:api\d+-)?)?[A-Za-z0-9_-]{20,}"), "sk-"),
    (re.compile(r"\b(gh[pousr]_|github_pat_)[A-Za-z0-9_]{30,}"), None),
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), None),
    (re.compile(r"\b(xox[abposr]-)[A-Za-z0-9-]{10,}"), None),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), "eyJ"),
)
# `Bearer X`, `Authorization: Basic X`, `Authorization: token X`
_AUTH_HEADER = re.compile(
    r"(?i)(\bbearer\s+|\bauthorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token)\s+)?)"
    r"([A-Za-z0-9._~+/=-]{8,})"
)
# The password of a URL: scheme://user:PASSWORD@host
_URL_PASSWORD = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s/:@]+:)([^\s/@]+)@")
# A secret-looking flag inside text, with its value after `=` or a space.
_TEXT_FLAG = re.compile(
    r"(?<![\w-])(--?(?:[A-Za-z][\w.-]{0,60}?)?" + _SECRET_WORDS + r")(=|[ \t]+)"
    r"(\"[^\"\n]*\"|'[^'\n]*'|(?!-)[^\s\"',;]+)",
    re.IGNORECASE,
)
# KEY=value, KEY: value, "key": "value", 'key': 'value'
_PAIR = re.compile(
    r"(?<![\w.-])([\"']?)((?:[A-Za-z_][\w.-]{0,60}?)?" + _SECRET_WORDS + r")\1(\s*[=:]\s*)"
    r"(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&|)}\]]+)",
    re.IGNORECASE,
)
# A bare, lower-case word before a colon is prose more often than a key (`bos token: <s>`,
# `invalid token: '}'`), unless the word itself says password.
_PROSE_KEYS_OK = ("password", "passwd", "passphrase", "secret", "apikey", "credentials")
# Cheap gates, on the lower-cased text: each pattern runs only when a word it needs is there
# (most messages hold none, and cost a few substring searches).
_SHAPE_HINTS = ("hf_", "sk-", "gh", "akia", "asia", "xox", "eyj")
_SECRET_HINTS = ("token", "secret", "passw", "passphrase", "key", "credential", "auth")


def is_secret_name(name: str) -> bool:
    """Whether a flag, variable or key of this name holds a secret (`--hf-token`, `API_KEY`)."""
    name = name.lstrip("-+")
    return bool(_SECRET_NAME.search(name)) and not _NOT_SECRET_NAME.search(name)


def _hidden(value: str) -> str:
    """REDACTED, in the quotes the value came in."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return f"{value[0]}{REDACTED}{value[0]}"
    return REDACTED


def _harmless(value: str) -> bool:
    return bool(_HARMLESS_VALUE.fullmatch(value.strip("\"'")))


def _flag(m: re.Match[str]) -> str:
    name, sep, value = m.group(1), m.group(2), m.group(3)
    if not is_secret_name(name) or _harmless(value):
        return m.group()
    return f"{name}{sep}{_hidden(value)}"


def _pair(m: re.Match[str]) -> str:
    quote, key, sep, value = m.group(1), m.group(2), m.group(3), m.group(4)
    if not is_secret_name(key) or _harmless(value):
        return m.group()
    prose = ":" in sep and not quote and key.islower() and key.isalpha()
    if prose and key not in _PROSE_KEYS_OK:
        return m.group()
    return f"{quote}{key}{quote}{sep}{_hidden(value)}"


def redact_text(text: str) -> str:
    """`text` with the secrets in it replaced by REDACTED (see the module's docstring)."""
    if not text:
        return text
    low = text.lower()
    out = text
    if any(h in low for h in _SHAPE_HINTS):
        for pattern, keep in _SHAPES:
            if keep is None:
                out = pattern.sub(lambda m: m.group(1) + REDACTED, out)
            else:
                out = pattern.sub(keep + REDACTED, out)
    if "bearer" in low or "authorization" in low:
        out = _AUTH_HEADER.sub(lambda m: m.group(1) + REDACTED, out)
    if "://" in low and "@" in low:
        out = _URL_PASSWORD.sub(lambda m: m.group(1) + REDACTED + "@", out)
    if any(h in low for h in _SECRET_HINTS):
        out = _TEXT_FLAG.sub(_flag, out)
        out = _PAIR.sub(_pair, out)
    return out if out != text else text


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line with the values of secret-looking flags hidden (`--token V`,
    `--token=V`) and every argument's text redacted (`HF_TOKEN=...`, `sh -c '...'`). Only for
    keeping and showing: babysit relaunches from the command line it was given, never this."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        arg = str(arg)
        if hide_next and not arg.startswith("-"):
            out.append(REDACTED if not _harmless(arg) else arg)
            hide_next = False
            continue
        hide_next = False
        m = _FLAG.fullmatch(arg)
        if m is not None and is_secret_name(m.group(1)):
            value = m.group(2)
            if value is None:
                hide_next = True  # `--token VALUE`: the value is the next argument
                out.append(arg)
            else:
                out.append(arg if _harmless(value) else f"{m.group(1)}={REDACTED}")
            continue
        out.append(redact_text(arg))
    return out


ARGV_KEYS = frozenset({"argv", "command", "cmd"})


def redact_tree(value: Any, key: str | None = None) -> Any:
    """A JSON-like value with every string redacted; a list of strings under an argv-like
    key (`argv`, `command`) as a command line. Keys and non-strings are kept."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {k: redact_tree(v, k if isinstance(k, str) else None) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if key in ARGV_KEYS and all(isinstance(x, str) for x in value):
            return redact_argv(value)
        return [redact_tree(x) for x in value]
    return value
