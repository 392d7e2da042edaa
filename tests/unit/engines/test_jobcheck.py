"""The preflight inside a job per attempt (engines/jobcheck.py): the script's lines, the
nodes' answers read back, and the gate that ends a job with a sick node before the training."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from babysit.engines.jobcheck import (
    EXIT_SICK,
    PREFLIGHT_DIR,
    STOPPED,
    main,
    prologue,
    results,
    sick,
)
from babysit.engines.srun import job_script


def _answer(d: Path, host: str, checks: list[dict[str, object]] | None, rc: str = "0") -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{host}.json").write_text("" if checks is None else json.dumps({"checks": checks}))
    (d / f"{host}.err").write_text("" if checks is not None else "python: No module babysit\n")
    (d / f"{host}.rc").write_text(rc + "\n")


def _check(name: str, status: str, summary: str = "ok", **details: object) -> dict[str, object]:
    return {"name": name, "status": status, "summary": summary, "details": details}


def test_no_preflight_dir_is_no_preflight(tmp_path: Path) -> None:
    assert results(tmp_path) is None


def test_the_nodes_answers_are_read_back_by_node(tmp_path: Path) -> None:
    d = tmp_path / PREFLIGHT_DIR
    _answer(d, "node1", [_check("matmul", "pass")])
    _answer(d, "node2", [_check("matmul", "fail", "CPU off by 1")], rc="6")
    _answer(d, "node3", None, rc="124")  # `timeout` killed it at its time
    got = results(tmp_path, ["node4", "node1"])
    assert got is not None and not got.stopped
    # the job's nodes first, by name (node4 never answered: said so), then any other found
    assert [r.host for r in got.answers] == ["node4", "node1", "node2", "node3"]
    found = {r.host: r for r in got.answers}
    assert found["node4"].returncode is None and "no answer" in found["node4"].stderr
    assert found["node2"].returncode == 6 and json.loads(found["node2"].stdout)["checks"]
    assert found["node3"].returncode is None and "within its time" in found["node3"].stderr
    assert sick(got.answers) == {"node2": "matmul: CPU off by 1"}


def test_only_the_nodes_own_hardware_makes_it_sick(tmp_path: Path) -> None:
    # A full disk or a slow mount is the node's surroundings: a ban would not fix it.
    d = tmp_path / PREFLIGHT_DIR
    _answer(d, "node1", [_check("disk", "fail", "2 GiB free"), _check("gpu", "pass")], rc="6")
    _answer(d, "node2", [_check("gpu", "fail", "GPU 3 fell off the bus")], rc="6")
    # a check that broke (babysit's bug) says nothing of the node
    _answer(d, "node3", [_check("matmul", "fail", "the check itself failed", check_error=True)])
    got = results(tmp_path)
    assert got is not None and sick(got.answers) == {"node2": "gpu: GPU 3 fell off the bus"}


def test_the_gate_ends_the_job_only_for_a_sick_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / PREFLIGHT_DIR
    _answer(d, "node1", [_check("matmul", "pass")])
    _answer(d, "node3", None, rc="1")  # could not be checked: said, the training starts
    assert main([str(d), "node1", "node3"]) == 0
    assert "could not check node3" in capsys.readouterr().err
    assert not (d / STOPPED).exists()
    _answer(d, "node2", [_check("matmul", "fail", "CPU off by 1")], rc="6")
    assert main([str(d), "node1", "node2"]) == EXIT_SICK
    err = capsys.readouterr().err
    assert "node node2 FAILED its own health check: matmul: CPU off by 1" in err
    assert "ending the job before the training starts" in err
    assert (d / STOPPED).read_text().split() == ["node2"]
    got = results(tmp_path)
    assert got is not None and got.stopped
    assert main([]) == 2


def test_the_job_script_runs_the_preflight_before_the_step(tmp_path: Path) -> None:
    attempt = tmp_path / "run dir" / "attempt-0001"
    check = prologue([sys.executable, "-m", "babysit", "doctor", "--json"], 40.4, attempt)
    script = job_script(["srun", "python", "t.py"], check)
    lines = script.splitlines()
    assert lines[0] == "#!/bin/bash" and lines[-1] == "exec srun python t.py"
    step = next(x for x in lines if " srun " in x)
    assert "--ntasks-per-node=1" in step and "timeout -k 5 40 " in step
    assert step.startswith("timeout -k 10 85 srun ")  # the whole step bounded: a hung mount
    assert lines[1].startswith("rm -rf ")  # a requeued job's old answers are not judged again
    assert f"'{attempt / PREFLIGHT_DIR}'" in step  # the path with a space, quoted
    assert "2>>" in step  # srun's own task reports stay out of the job's stderr
    # What the shell makes of it: bash parses the script (no syntax error from the quoting).
    ok = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
    assert ok.returncode == 0, ok.stderr


def test_the_gate_runs_as_a_module(tmp_path: Path) -> None:
    d = tmp_path / PREFLIGHT_DIR
    _answer(d, "node2", [_check("gpu", "fail", "Xid 79")], rc="6")
    res = subprocess.run(
        [sys.executable, "-m", "babysit.engines.jobcheck", str(d)], capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert res.returncode == EXIT_SICK, res.stderr


FAKE_SRUN = """#!/bin/bash
# srun's options, then the program: run it once per node, as each node's task would
while [[ "$1" == --* ]]; do shift; done
for n in node1 node2; do SLURMD_NODENAME=$n "$@"; done
"""
DOCTOR = (
    "import json, os; bad = os.environ['SLURMD_NODENAME'] == os.environ['SICK']; "
    "print(json.dumps({'checks': [{'name': 'matmul', 'status': 'fail' if bad else 'pass', "
    "'summary': 'wrong' if bad else 'ok'}]}))"
)


@pytest.mark.parametrize("sick_node", ["node2", "none"])
def test_the_script_runs_the_check_then_the_gate_decides(tmp_path: Path, sick_node: str) -> None:
    # The batch script as bash runs it, with srun and scontrol stood in for (two nodes).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("srun", FAKE_SRUN), ("scontrol", "#!/bin/sh\necho node1\necho node2\n")):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    attempt = tmp_path / "it's a \"dir\" $(x)"  # quoting: nothing of the path runs as code
    check = prologue([sys.executable, "-c", DOCTOR], 30.0, attempt)
    script = job_script(["echo", "TRAINING"], check)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "SICK": sick_node, "SLURM_JOB_NUM_NODES": "2",
           "SLURM_JOB_NODELIST": "node[1-2]", "PYTHONPATH": ":".join(sys.path)}  # fmt: skip
    res = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True,
                         timeout=60)  # fmt: skip
    got = results(attempt, ["node1", "node2"])
    assert got is not None and [a.host for a in got.answers] == ["node1", "node2"]
    if sick_node == "none":
        assert res.returncode == 0 and "TRAINING" in res.stdout, res.stderr
        assert not got.stopped and sick(got.answers) == {}
    else:
        assert res.returncode == EXIT_SICK and "TRAINING" not in res.stdout, res.stderr
        assert got.stopped and sick(got.answers) == {"node2": "matmul: wrong"}
        assert "node node2 FAILED" in res.stderr
