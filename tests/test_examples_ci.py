"""The CI recipes in ``examples/ci/`` work as written: their shell steps are extracted and run,
in order, in a product repository made from the fixtures (offline judges), once with the logs
unchanged (the job passes and posts a green summary) and once with a regression (the job
fails at its last step, after posting the red summary).

Only what needs the hosted service is stood in for: ``pip`` (genir-eval is already
installed), ``gh`` and ``curl`` (they record the comment they would post); ``genir-eval`` is
this checkout's. Steps that ``uses:`` an action (checkout, setup-python, cache, artifacts)
are GitHub's own and are not run.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "ci"

SCENARIO = """\
version = 1
name = "product"
[input]
path = "logs.md"
[engine]
cache = false
[[judges]]
name = "link_usefulness.dna"
[[judges]]
name = "link_usefulness.true"
[aggregate]
measures = ["sdcg_urge"]
[meta]
headline = "sdcg_urge"
"""

RECORDER = """\
#!/bin/sh
# records its arguments, and the file it would post
echo "$(basename "$0") $*" >> "$STUB_LOG"
for arg in "$@"; do
  case "$arg" in
    body@*) cat "${arg#body@}" >> "$STUB_POSTED" ;;
  esac
done
while [ $# -gt 0 ]; do
  if [ "$1" = "--body-file" ]; then cat "$2" >> "$STUB_POSTED"; fi
  shift
done
"""


def _tools(folder: Path) -> Path:
    folder.mkdir()
    for name in ("pip", "gh", "curl"):
        (folder / name).write_text(RECORDER, encoding="utf-8")
    (folder / "genir-eval").write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -m genir_eval "$@"\n', encoding="utf-8"
    )
    for tool in folder.iterdir():
        tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return folder


def _product_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "product"
    (repo / "eval").mkdir(parents=True)
    shutil.copy(ROOT / "fixtures" / "product_logs.md", repo / "eval" / "logs.md")
    (repo / "eval" / "product.toml").write_text(SCENARIO, encoding="utf-8")
    return repo


def _environment(tmp_path: Path) -> dict[str, str]:
    tools = _tools(tmp_path / "bin")
    return {
        **os.environ,
        "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
        "STUB_LOG": str(tmp_path / "calls.log"),
        "STUB_POSTED": str(tmp_path / "posted.md"),
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
        ),
    }


@pytest.fixture(scope="module")
def accepted_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A product repository with its logs, scenario and last accepted run (committed)."""
    tmp_path = tmp_path_factory.mktemp("accepted")
    repo = _product_repo(tmp_path)
    subprocess.run(
        ["genir-eval", "run", "eval/product.toml", "--out", "eval/accepted", "--journal", "none"],
        cwd=repo,
        env=_environment(tmp_path),
        check=True,
        capture_output=True,
    )
    return repo


def _checkout(accepted_repo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(accepted_repo, tmp_path / "checkout"))


def _regress(repo: Path) -> None:
    """Every source of the logs becomes the off-topic careers page: link usefulness drops."""
    logs = repo / "eval" / "logs.md"
    text = re.sub(
        r"^(\[\d+\]) .*$",
        r"\1 Careers at Acme - https://acme.example/careers",
        logs.read_text(encoding="utf-8"),
        flags=re.M,
    )
    logs.write_text(text, encoding="utf-8")


GITHUB_EXPRESSIONS = {
    "secrets.OPENAI_API_KEY": "",
    "github.token": "token-for-tests",
    "github.event.pull_request.number": "42",
    "github.run_id": "1",
}


def _expand(value: Any) -> str:
    def one(match: re.Match[str]) -> str:
        expression = match.group(1).strip()
        assert expression in GITHUB_EXPRESSIONS, f"unexpected expression {expression}"
        return GITHUB_EXPRESSIONS[expression]

    return re.sub(r"\$\{\{(.*?)\}\}", one, str(value))


def _run_github(repo: Path, env: dict[str, str], tmp_path: Path) -> tuple[str | None, str]:
    """Run the workflow's ``run:`` steps as GitHub does (bash -eo pipefail, GITHUB_ENV
    carried over to later steps); the name of the step that failed, if one did."""
    workflow = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text(encoding="utf-8"))
    job = workflow["jobs"]["evaluate"]
    env = {**env, **{k: _expand(v) for k, v in workflow["env"].items()}}
    github_env = tmp_path / "github_env"
    summary = tmp_path / "step_summary.md"
    github_env.write_text("")
    env.update(GITHUB_ENV=str(github_env), GITHUB_STEP_SUMMARY=str(summary))
    for step in job["steps"]:
        if "run" not in step:
            assert "uses" in step
            continue
        assert "if" not in step, "a shell step with a condition the test does not model"
        step_env = {**env, **{k: _expand(v) for k, v in (step.get("env") or {}).items()}}
        for line in github_env.read_text().splitlines():
            key, _, value = line.partition("=")
            step_env[key] = value
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=repo,
            env=step_env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            return step["name"], summary.read_text() if summary.exists() else ""
    return None, summary.read_text()


def _run_gitlab(repo: Path, env: dict[str, str]) -> int:
    """Run the job's script as GitLab's shell does: one bash session, stop at a failure."""
    job = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text(encoding="utf-8"))["genir-eval"]
    assert job["rules"][0]["if"] == '$CI_PIPELINE_SOURCE == "merge_request_event"'
    env = {
        **env,
        **{k: str(v) for k, v in job["variables"].items()},
        "CI_API_V4_URL": "https://gitlab.example/api/v4",
        "CI_PROJECT_ID": "7",
        "CI_MERGE_REQUEST_IID": "42",
        "GITLAB_API_TOKEN": "token-for-tests",
    }
    script = "\n".join(str(line) for line in job["script"])
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    return done.returncode


@pytest.mark.parametrize("regression", [False, True], ids=["unchanged", "regression"])
def test_github_actions_workflow(accepted_repo: Path, tmp_path: Path, regression: bool) -> None:
    repo = _checkout(accepted_repo, tmp_path)
    env = _environment(tmp_path)
    if regression:
        _regress(repo)
    failed_step, summary = _run_github(repo, env, tmp_path)
    calls = (tmp_path / "calls.log").read_text()
    posted = (tmp_path / "posted.md").read_text()
    assert "pip install genir-eval" in calls
    assert "gh pr comment 42 --body-file genir-eval-summary.md" in calls
    assert posted == summary  # the comment is the step summary is the compare output
    assert (repo / "runs" / "candidate" / "report.html").is_file()
    if regression:
        assert failed_step == "Fail on a regression"
        assert posted.startswith("### genir-eval: ❌ regression") and "| `sdcg_urge` |" in posted
    else:
        assert failed_step is None
        assert posted.startswith("### genir-eval: ✅ no regression")


@pytest.mark.parametrize("regression", [False, True], ids=["unchanged", "regression"])
def test_gitlab_ci_job(accepted_repo: Path, tmp_path: Path, regression: bool) -> None:
    repo = _checkout(accepted_repo, tmp_path)
    env = _environment(tmp_path)
    if regression:
        _regress(repo)
    status = _run_gitlab(repo, env)
    calls = (tmp_path / "calls.log").read_text()
    posted = (tmp_path / "posted.md").read_text()
    assert "curl --fail" in calls
    assert "https://gitlab.example/api/v4/projects/7/merge_requests/42/notes" in calls
    assert "PRIVATE-TOKEN: token-for-tests" in calls
    if regression:
        assert status == 1 and posted.startswith("### genir-eval: ❌ regression")
    else:
        assert status == 0 and posted.startswith("### genir-eval: ✅ no regression")
