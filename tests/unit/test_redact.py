"""babysit.redact: secrets hidden from what babysit keeps, everything else left as it was."""

from __future__ import annotations

import pytest

from babysit.redact import REDACTED, is_secret_name, redact_argv, redact_text, redact_tree

HF = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GH = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
SK = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (f"OSError: 401 (HF_TOKEN={HF})", "OSError: 401 (HF_TOKEN=***)"),
        (f"export HF_TOKEN={HF}", "export HF_TOKEN=***"),
        (f"token {HF} rejected", "token hf_*** rejected"),
        (f"aws_secret_access_key={AWS_SECRET} id {AWS_ID}", "aws_secret_access_key=*** id AKIA***"),
        (f"AWS_ACCESS_KEY_ID={AWS_ID}", "AWS_ACCESS_KEY_ID=***"),
        ('cfg {"api_key": "abc123def", "lr": 0.1, "password":"x y"}',
         'cfg {"api_key": "***", "lr": 0.1, "password":"***"}'),
        ("{'hf_token': 'v4lue', 'pad_token': '<pad>'}",
         "{'hf_token': '***', 'pad_token': '<pad>'}"),
        ("Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer ***"),
        (f"-H 'Authorization: token {GH}'", "-H 'Authorization: token ghp_***'"),
        (f"push {GH} failed", "push ghp_*** failed"),
        (f"unrecognized arguments: --api-key {SK} --lr 3",
         "unrecognized arguments: --api-key *** --lr 3"),
        ("python t.py --token abc --hf_token 'a b' --secret=s3", "python t.py --token *** "
         "--hf_token '***' --secret=***"),
        ("clone https://user:hunter2@github.com/x.git", "clone https://user:***@github.com/x.git"),
        (f"jwt {JWT} expired", "jwt eyJ*** expired"),
        ("slack xoxb-1234567890-abcdefghij down", "slack xoxb-*** down"),
        ("WANDB_API_KEY=0123456789abcdef0123 set", "WANDB_API_KEY=*** set"),
        ("password: hunter2", "password: ***"),
        ("GITHUB_TOKEN: abc", "GITHUB_TOKEN: ***"),
    ],
)
def test_secrets_are_hidden(text: str, want: str) -> None:
    assert redact_text(text) == want


@pytest.mark.parametrize(
    "text",
    [
        "iter 10: loss 2.3417, time 20.61ms, mfu 41.2%",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "use_auth_token=True max_new_tokens=512 num_tokens=4 tokenizer=gpt2",
        "bos token: <s>, invalid token: '}', token_id=5, pad_token=<pad>",
        "--password= --token=None api_key=null --token 12",
        "http://host:8080/path@x and s3://bucket/key",
        "KeyError: 'token'",
        "NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled system error",
        "",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_text(text) is text


def test_redacting_twice_changes_nothing() -> None:
    once = redact_text(f"HF_TOKEN={HF} --api-key {SK} https://u:p@h/x")
    assert redact_text(once) == once


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["python", "t.py", "--api-key", SK, "--lr", "3e-4"],
         ["python", "t.py", "--api-key", REDACTED, "--lr", "3e-4"]),
        (["t.py", "--api-key=abc", "--token", "xyz", "--hf-token", HF],
         ["t.py", "--api-key=***", "--token", REDACTED, "--hf-token", REDACTED]),
        (["t.py", "--password", "--secret", "s3cr3t"], ["t.py", "--password", "--secret", "***"]),
        (["t.py", "--use-auth-token", "--lr", "1"], ["t.py", "--use-auth-token", "--lr", "1"]),
        (["t.py", "--wandb_key=k", "--aws-secret-access-key", "a", "--private-key", "b"],
         ["t.py", "--wandb_key=***", "--aws-secret-access-key", "***", "--private-key", "***"]),
        (["env", f"HF_TOKEN={HF}", "python", "t.py", "api_key=x"],
         ["env", "HF_TOKEN=***", "python", "t.py", "api_key=***"]),
        (["sh", "-c", "python t.py --token abc"], ["sh", "-c", "python t.py --token ***"]),
        (["t.py", "--max-tokens", "100", "--tokenizer", "gpt2", "--token"],
         ["t.py", "--max-tokens", "100", "--tokenizer", "gpt2", "--token"]),
    ],
)
def test_argv(argv: list[str], want: list[str]) -> None:
    assert redact_argv(argv) == want


def test_secret_names() -> None:
    for name in ("--api-key", "HF_TOKEN", "hf-token", "password", "AWS_SECRET_ACCESS_KEY",
                 "client_secret", "credentials", "wandb.api_key", "--auth"):
        assert is_secret_name(name), name
    for name in ("--max-tokens", "tokenizer", "pad_token", "eos-token", "token_id", "--lr",
                 "author", "monkey"):
        assert not is_secret_name(name), name


def test_tree_keeps_its_shape() -> None:
    tree = {
        "command": ["python", "t.py", "--token", "abc"],
        "argv": ("--api-key=x",),
        "message": f"HF_TOKEN={HF}",
        "n": 3,
        "x": None,
        "nested": [{"text": f"AKIA key {AWS_ID}"}, 1.5],
    }
    assert redact_tree(tree) == {
        "command": ["python", "t.py", "--token", "***"],
        "argv": ["--api-key=***"],
        "message": "HF_TOKEN=***",
        "n": 3,
        "x": None,
        "nested": [{"text": "AKIA key AKIA***"}, 1.5],
    }


def test_a_long_line_is_redacted_quickly() -> None:
    import time

    line = "word " * 2000 + f"HF_TOKEN={HF}"
    t0 = time.perf_counter()
    assert redact_text(line).endswith("HF_TOKEN=***")
    assert time.perf_counter() - t0 < 1.0  # generous: about 3 ms on a slow core
