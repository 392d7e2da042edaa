"""Logs are attacker-controlled text: babysit must read them whatever bytes they hold, never
let them drive its own terminal, and never keep the secrets they or the command line carry."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import file_text, run_babysit, start_babysit, status_json, wait_for

pytestmark = pytest.mark.e2e
PY = sys.executable

OOM_SCRIPT = r"""
import os, random, sys
sys.stderr.write("loading shards\n\x00\x01\x02 a stray NUL and control bytes\n")
sys.stderr.write("Traceback (most recent call last):\n")
sys.stderr.write('  File "train.py", line 88, in <module>\n')
# A different size each time: the "same error twice" rule must not be what stops the run.
sys.stderr.write(
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %d.%02d GiB. GPU 0 has a "
    "total capacity of 79.15 GiB of which 1.2 GiB is free.\n"
    % (int(os.environ["BABYSIT_ATTEMPT"]), random.randrange(100))
)
sys.exit(1)
"""


def test_a_nul_byte_before_a_cuda_oom_still_stops_the_run_with_exit_3(workdir: Path) -> None:
    (workdir / "train.py").write_text(OOM_SCRIPT)
    home = workdir / "h"
    res = run_babysit("run", "--home", str(home), "--backoff", "0", "--max-restarts", "3",
                      "--quiet", "--", PY, "train.py", cwd=workdir)
    assert "binary" not in res.stderr
    assert res.returncode == 3, res.stderr
    doc = status_json(home, "train", workdir)
    assert len(doc["attempts"]) == 1
    assert doc["attempts"][0]["cause"] == "cuda_oom"
    (d,) = doc["diagnoses"]
    assert d["category"] == "cuda_oom"
    assert "CUDA out of memory" in d["evidence"][-1]["text"]


# -- terminal escapes from the log -------------------------------------------------------------

EVIL = (
    "title\x1b]0;pwned\x07 clip\x1b]52;c;cHduZWQ=\x07 ris\x1bc csi\x1b[2J\x1b[31mred "
    "c1\u009b31m bel\x07 bs\x08\x08X del\x7f bidi\u202eevil\u202c "
    "[bold magenta]markup[/] [link=http://evil]x[/link]"
)
EVIL_SCRIPT = f"""
import sys
sys.stdout.write("iter 1: loss 2.5\\n")
sys.stderr.write("Traceback (most recent call last):\\n")
sys.stderr.write('  File "train.py", line 3, in <module>\\n')
sys.stderr.write("RuntimeError: boom " + {EVIL!r} + "\\n")
sys.exit(1)
"""
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def assert_shown_not_obeyed(out: str) -> None:
    assert not RAW.search(out), RAW.findall(out)
    assert "\\x1b]0;pwned\\x07" in out and "\\x1b]52;c;cHduZWQ=\\x07" in out
    assert "[bold magenta]markup[/]" in out


def test_escapes_in_the_log_never_reach_babysits_own_output(workdir: Path) -> None:
    (workdir / "train.py").write_text(EVIL_SCRIPT)
    home = workdir / "h"
    quiet = run_babysit("run", "--home", str(home), "--backoff", "0", "--max-restarts", "0",
                        "--quiet", "--", PY, "train.py", cwd=workdir)
    assert quiet.returncode == 4, quiet.stderr
    assert_shown_not_obeyed(quiet.stderr)  # the attempt-ended and giving-up lines
    # Echoed, the run's own output goes through as it is; babysit's lines around it do not.
    loud = run_babysit("run", "--home", str(home), "--backoff", "0", "--max-restarts", "0",
                       "--name", "loud", "--", PY, "train.py", cwd=workdir)
    assert EVIL in loud.stderr
    ours = "\n".join(ln for ln in loud.stderr.split("\n") if ln.startswith("babysit:"))
    assert_shown_not_obeyed(ours)
    for args in (["status", "train"], ["logbook", "train", "--format", "md"],
                 ["triage", str(home / "runs" / "train" / "attempt-0001")]):
        res = run_babysit(*args, "--home", str(home), cwd=workdir)
        assert res.returncode == 0, res.stderr
        assert_shown_not_obeyed(res.stdout)


def test_a_huge_loss_is_printed_compactly(workdir: Path) -> None:
    steps = [f"iter {i}: loss {2.0 + (i % 7) * 0.01:.4f}, time 20.5ms" for i in range(300)]
    steps[250] = "iter 250: loss 1e308, time 20.5ms"
    (workdir / "spike.log").write_text("\n".join(steps) + "\n")
    res = run_babysit("watch", "spike.log", cwd=workdir)
    assert res.returncode == 0, res.stderr
    assert "spiked to 1e+308" in res.stdout
    assert not re.search(r"\d{20}", res.stdout), res.stdout
    doc = json.loads(run_babysit("watch", "spike.log", "--json", cwd=workdir).stdout)
    assert not re.search(r"\d{20}", doc["incidents"][0]["message"])


# -- secrets -----------------------------------------------------------------------------------

HF = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456"
API_KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
TOKEN = "tok-3f9a8b7c6d5e"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SECRETS = (HF, API_KEY, TOKEN, AWS_ID, AWS_SECRET)
ARGS = [f"--api-key={API_KEY}", "--token", TOKEN, "--lr", "3e-4"]
SECRET_SCRIPT = f"""
import os, pathlib, sys, time
want = {ARGS!r}
if sys.argv[1:] != want:  # a relaunch from a redacted command line would land here
    print("argv was changed: " + repr(sys.argv[1:]), file=sys.stderr)
    sys.exit(2)
if os.environ["BABYSIT_ATTEMPT"] == "2":
    print("iter 1: loss 2.0")
    sys.exit(0)
print("iter 1: loss 2.5", flush=True)
while not pathlib.Path("go").exists():  # the test may kill babysit meanwhile
    time.sleep(0.05)
sys.stderr.write("Traceback (most recent call last):\\n")
sys.stderr.write('  File "train.py", line 9, in <module>\\n')
sys.stderr.write("RuntimeError: upload failed with HF_TOKEN={HF} and "
                 "aws_secret_access_key={AWS_SECRET} for {AWS_ID}\\n")
sys.exit(1)
"""


def test_secrets_are_not_kept_and_the_relaunch_and_reattach_still_work(workdir: Path) -> None:
    (workdir / "train.py").write_text(SECRET_SCRIPT)
    home = workdir / "h"
    args = ("run", "--home", str(home), "--backoff", "0", "--quiet", "--name", "sec", "--", PY,
            "train.py", *ARGS)
    first = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b1.err")
    stdout = home / "runs" / "sec" / "attempt-0001" / "stdout.log"
    wait_for(lambda: "loss 2.5" in file_text(stdout), what="attempt 1 to start")
    first.kill()  # babysit dies; the training goes on
    first.wait(30)
    # The same command again re-attaches (the store's argv is redacted: it must not matter).
    second = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b2.err")
    wait_for(lambda: status_json(home, "sec", workdir)["supervised"], what="the re-attach")
    (workdir / "go").write_text("")
    assert second.wait(60) == 0, file_text(workdir / "b2.err")
    doc = status_json(home, "sec", workdir)
    assert [a["outcome"] for a in doc["attempts"]] == ["failed", "succeeded"]
    assert doc["attempts"][1]["argv"][2:5] == ["--api-key=***", "--token", "***"]
    stored = b"".join(p.read_bytes() for p in home.iterdir() if p.is_file())
    shown = "".join(
        run_babysit(*cmd, "--home", str(home), cwd=workdir).stdout
        for cmd in (["status", "sec"], ["status", "sec", "--json"], ["logbook", "sec"],
                    ["logbook", "sec", "--format", "json"])
    )
    said = file_text(workdir / "b1.err") + file_text(workdir / "b2.err")  # --quiet: no echo
    assert "HF_TOKEN=***" in said
    for secret in SECRETS:
        assert secret.encode() not in stored, secret
        assert secret not in shown, secret
        assert secret not in said, secret
    assert "HF_TOKEN=***" in shown and "--api-key=***" in shown
