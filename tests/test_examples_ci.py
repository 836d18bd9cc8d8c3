"""The CI recipes in ``examples/ci/`` work as written: their shell steps are extracted and run,
in order, in a product repository made from the fixtures (offline judges), once with the logs
unchanged (the job passes and posts a green summary) and once with a regression (the job
fails at its last step, after posting the red summary).

Only what needs the hosted service is stood in for: ``pip`` (genir-eval is already
installed: it checks the folder it is given holds genir-eval's source tree, which the
product repository keeps at ``tools/genir-eval``, here this checkout), ``gh`` and ``curl``
(they record the comment they would post); ``genir-eval`` is this checkout's. Steps that
``uses:`` an action (checkout, setup-python, cache, artifacts) are GitHub's own and are not
run.
"""

from __future__ import annotations

import json
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

CURL = """\
#!{python}
# records its arguments and keeps the merge request's notes in $STUB_NOTES (JSON), as GitLab
# would: GET .../notes lists them, POST .../notes adds one, PUT .../notes/ID edits one; the
# body of a write (--data-urlencode body@FILE) is also appended to $STUB_POSTED
import json, os, sys
from pathlib import Path

args = sys.argv[1:]
with open(os.environ["STUB_LOG"], "a") as log:
    log.write("curl " + " ".join(args) + "\\n")
store = Path(os.environ["STUB_NOTES"])
notes = json.loads(store.read_text()) if store.exists() else []
method = args[args.index("--request") + 1] if "--request" in args else "GET"
url = args[-1]
assert "PRIVATE-TOKEN: token-for-tests" in args, args
if method == "GET":
    assert "/merge_requests/42/notes" in url, url
    print(json.dumps(notes))
else:
    data = next(a for a in args if a.startswith("body@"))
    body = Path(data[5:]).read_text()
    with open(os.environ["STUB_POSTED"], "a") as posted:
        posted.write(body)
    if method == "POST":
        assert url.endswith("/merge_requests/42/notes"), url
        notes.append({{"id": 500 + len(notes), "body": body}})
    else:
        assert method == "PUT", method
        target = int(url.rsplit("/", 1)[1])
        [note] = [n for n in notes if n["id"] == target]
        note["body"] = body
    print("{{}}")
store.write_text(json.dumps(notes))
"""


PIP = """\
#!/bin/sh
# records its arguments; `pip install DIR` must be given genir-eval's source tree
echo "pip $*" >> "$STUB_LOG"
if [ "$1" = "install" ]; then
  grep -q '^name = "genir-eval"$' "$2/pyproject.toml" || exit 1
fi
"""


GH = """\
#!{python}
# records its arguments and keeps the pull request's comments in $STUB_COMMENTS (JSON), as
# GitHub would: `gh pr comment N --body-file F` adds one, `gh api --method PATCH
# repos/R/issues/comments/ID -F body=@F` edits one, `gh api repos/R/issues/N/comments --jq ...`
# lists the ids of those whose body starts with the recipe's marker
import json, os, sys
from pathlib import Path

args = sys.argv[1:]
with open(os.environ["STUB_LOG"], "a") as log:
    log.write("gh " + " ".join(args) + "\\n")
store = Path(os.environ["STUB_COMMENTS"])
comments = json.loads(store.read_text()) if store.exists() else []
if args[:2] == ["pr", "comment"]:
    body = Path(args[args.index("--body-file") + 1]).read_text()
    comments.append({{"id": 1000 + len(comments), "body": body}})
elif args[0] == "api" and "PATCH" in args:
    target = int(next(a for a in args if "/issues/comments/" in a).rsplit("/", 1)[1])
    body = Path(next(a for a in args if a.startswith("body=@"))[6:]).read_text()
    for comment in comments:
        if comment["id"] == target:
            comment["body"] = body
elif args[0] == "api":
    assert "--jq" in args and args[1].endswith("/issues/42/comments"), args
    for comment in comments:
        if comment["body"].startswith("<!-- genir-eval -->"):
            print(comment["id"])
store.write_text(json.dumps(comments))
"""


def _tools(folder: Path) -> Path:
    folder.mkdir()
    (folder / "curl").write_text(CURL.format(python=sys.executable), encoding="utf-8")
    (folder / "pip").write_text(PIP, encoding="utf-8")
    (folder / "gh").write_text(GH.format(python=sys.executable), encoding="utf-8")
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
    # genir-eval's source tree kept in the repository (a submodule or a copy): this checkout
    (repo / "tools").mkdir()
    (repo / "tools" / "genir-eval").symlink_to(ROOT, target_is_directory=True)
    (repo / "eval" / "product.toml").write_text(SCENARIO, encoding="utf-8")
    return repo


def _environment(tmp_path: Path) -> dict[str, str]:
    tools = _tools(tmp_path / "bin")
    return {
        **os.environ,
        "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
        "STUB_LOG": str(tmp_path / "calls.log"),
        "STUB_POSTED": str(tmp_path / "posted.md"),
        "STUB_COMMENTS": str(tmp_path / "comments.json"),
        "STUB_NOTES": str(tmp_path / "notes.json"),
        "GITHUB_REPOSITORY": "acme/product",
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
    return Path(shutil.copytree(accepted_repo, tmp_path / "checkout", symlinks=True))


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
    "github.event.pull_request.head.repo.full_name": "acme/product",
    "github.run_id": "1",
}


def _expand(value: Any, expressions: dict[str, str] | None = None) -> str:
    expressions = expressions or GITHUB_EXPRESSIONS

    def one(match: re.Match[str]) -> str:
        expression = match.group(1).strip()
        assert expression in expressions, f"unexpected expression {expression}"
        return expressions[expression]

    return re.sub(r"\$\{\{(.*?)\}\}", one, str(value))


def _run_github(
    repo: Path, env: dict[str, str], tmp_path: Path, *, fork: bool = False
) -> tuple[str | None, str]:
    """Run the workflow's ``run:`` steps as GitHub does (bash -eo pipefail, GITHUB_ENV
    carried over to later steps); the name of the step that failed, if one did. ``fork``: the
    pull request comes from a fork."""
    expressions = dict(GITHUB_EXPRESSIONS)
    if fork:
        expressions["github.event.pull_request.head.repo.full_name"] = "someone/product"
    workflow = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text(encoding="utf-8"))
    job = workflow["jobs"]["evaluate"]
    env = {**env, **{k: _expand(v, expressions) for k, v in workflow["env"].items()}}
    # the one checkout brings genir-eval's tree along (a submodule of the product repository)
    [checkout] = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
    assert checkout["with"]["submodules"] is True
    github_env = tmp_path / "github_env"
    summary = tmp_path / "step_summary.md"
    github_env.write_text("")
    env.update(GITHUB_ENV=str(github_env), GITHUB_STEP_SUMMARY=str(summary))
    failed: str | None = None
    for step in job["steps"]:
        condition = step.get("if")
        assert condition in (None, "always()"), f"a condition the test does not model: {condition}"
        if failed is not None and condition != "always()":
            continue  # GitHub skips a step without if: always() once one has failed
        if "run" not in step:
            assert "uses" in step
            continue
        step_env = {
            **env,
            **{k: _expand(v, expressions) for k, v in (step.get("env") or {}).items()},
        }
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
        if done.returncode != 0 and failed is None:
            failed = step["name"]
    if failed is not None:
        return failed, summary.read_text() if summary.exists() else ""
    return None, summary.read_text()


def _run_gitlab(repo: Path, env: dict[str, str]) -> int:
    """Run the job's script as GitLab's shell does: one bash session, stop at a failure."""
    job = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text(encoding="utf-8"))["genir-eval"]
    assert job["rules"][0]["if"] == '$CI_PIPELINE_SOURCE == "merge_request_event"'
    # the checkout brings genir-eval's tree along (a submodule of the product repository)
    assert job["variables"]["GIT_SUBMODULE_STRATEGY"] == "recursive"
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


MARKER = "<!-- genir-eval -->\n"


def _comments(tmp_path: Path) -> list[dict[str, Any]]:
    store = tmp_path / "comments.json"
    return list(json.loads(store.read_text())) if store.exists() else []


@pytest.mark.parametrize("regression", [False, True], ids=["unchanged", "regression"])
@pytest.mark.slow
def test_github_actions_workflow(accepted_repo: Path, tmp_path: Path, regression: bool) -> None:
    repo = _checkout(accepted_repo, tmp_path)
    env = _environment(tmp_path)
    if regression:
        _regress(repo)
    failed_step, summary = _run_github(repo, env, tmp_path)
    calls = (tmp_path / "calls.log").read_text()
    # genir-eval is installed from the tree the repository keeps, not the package index
    assert "pip install ./tools/genir-eval" in calls
    assert "gh pr comment 42 --body-file genir-eval-comment.md" in calls
    [comment] = _comments(tmp_path)
    assert comment["body"] == MARKER + summary  # the comment is the compare output
    assert (repo / "runs" / "candidate" / "report.html").is_file()
    if regression:
        assert failed_step == "Fail on a regression or a failed run"
        assert summary.startswith("### genir-eval: ❌ regression") and "| `sdcg_urge` |" in summary
    else:
        assert failed_step is None
        assert summary.startswith("### genir-eval: ✅ no regression")


@pytest.mark.slow
def test_github_actions_updates_one_comment_per_pull_request(
    accepted_repo: Path, tmp_path: Path
) -> None:
    # a first push without a regression, then one with: still one comment, now red
    repo = _checkout(accepted_repo, tmp_path)
    env = _environment(tmp_path)
    assert _run_github(repo, env, tmp_path)[0] is None
    _regress(repo)
    (tmp_path / "step_summary.md").unlink()
    failed_step, summary = _run_github(repo, env, tmp_path)
    assert failed_step == "Fail on a regression or a failed run"
    [comment] = _comments(tmp_path)
    assert comment["body"] == MARKER + summary
    assert summary.startswith("### genir-eval: ❌ regression")
    calls = (tmp_path / "calls.log").read_text()
    assert calls.count("gh pr comment") == 1
    assert "gh api --method PATCH repos/acme/product/issues/comments/1000" in calls


@pytest.mark.slow
def test_github_actions_on_a_fork_fails_without_commenting(
    accepted_repo: Path, tmp_path: Path
) -> None:
    # a fork's token is read-only: no comment is attempted; the job summary has the comparison
    # and a regression still fails the job
    repo = _checkout(accepted_repo, tmp_path)
    env = _environment(tmp_path)
    _regress(repo)
    failed_step, summary = _run_github(repo, env, tmp_path, fork=True)
    assert failed_step == "Fail on a regression or a failed run"
    assert summary.startswith("### genir-eval: ❌ regression")
    assert "gh " not in (tmp_path / "calls.log").read_text()
    assert _comments(tmp_path) == []


@pytest.mark.slow
def test_github_actions_posts_why_compare_could_not_compare(
    accepted_repo: Path, tmp_path: Path
) -> None:
    # no accepted run to compare with: compare exits 2; its message is posted and the job
    # fails at its last step with that status
    repo = _checkout(accepted_repo, tmp_path)
    env = _environment(tmp_path)
    shutil.rmtree(repo / "eval" / "accepted")
    failed_step, summary = _run_github(repo, env, tmp_path)
    assert failed_step == "Fail on a regression or a failed run"
    assert summary.startswith("### genir-eval: ⚠️ could not compare")
    assert "eval/accepted" in summary and "no such folder" in summary
    [comment] = _comments(tmp_path)
    assert comment["body"] == MARKER + summary
    assert "COMPARE_STATUS=2" in (tmp_path / "github_env").read_text()


@pytest.mark.parametrize("regression", [False, True], ids=["unchanged", "regression"])
@pytest.mark.slow
def test_gitlab_ci_job(accepted_repo: Path, tmp_path: Path, regression: bool) -> None:
    repo = _checkout(accepted_repo, tmp_path)
    env = _environment(tmp_path)
    if regression:
        _regress(repo)
    status = _run_gitlab(repo, env)
    calls = (tmp_path / "calls.log").read_text()
    posted = (tmp_path / "posted.md").read_text()
    assert "pip install ./tools/genir-eval" in calls
    assert "curl --fail" in calls
    assert "https://gitlab.example/api/v4/projects/7/merge_requests/42/notes" in calls
    assert "PRIVATE-TOKEN: token-for-tests" in calls
    [note] = json.loads((tmp_path / "notes.json").read_text())
    assert note["body"] == posted  # one pipeline: one note, the summary under its marker
    if regression:
        assert status == 1 and posted.startswith(
            "<!-- genir-eval -->\n### genir-eval: ❌ regression"
        )
    else:
        assert status == 0 and posted.startswith(
            "<!-- genir-eval -->\n### genir-eval: ✅ no regression"
        )


@pytest.mark.slow
def test_gitlab_ci_job_posts_why_compare_could_not_compare(
    accepted_repo: Path, tmp_path: Path
) -> None:
    repo = _checkout(accepted_repo, tmp_path)
    env = _environment(tmp_path)
    shutil.rmtree(repo / "eval" / "accepted")
    assert _run_gitlab(repo, env) == 2
    posted = (tmp_path / "posted.md").read_text()
    assert posted.startswith(MARKER + "### genir-eval: could not compare")
    assert "no such folder" in posted


def test_the_projects_own_workflow_runs_the_readme_command_from_its_checkout() -> None:
    """genir-eval's own CI (.github/workflows/ci.yml) checks out this repository, no other,
    and runs .ci/run, which installs that checkout and runs the README's test command."""
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text("utf-8"))
    [job] = workflow["jobs"].values()
    checkouts = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
    assert checkouts and all("repository" not in (s.get("with") or {}) for s in checkouts)
    assert [s["run"] for s in job["steps"] if "run" in s] == [".ci/run"]
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [command] = [line.strip() for line in ci_run.splitlines() if "pytest" in line]
    assert command.startswith('python -m pip install -e ".[test]" && ')
    assert command in readme  # the README's test command, verbatim
    assert os.access(ROOT / ".ci" / "run", os.X_OK)
    for recipe in (*EXAMPLES.glob("*.yml"), ROOT / ".github" / "workflows" / "ci.yml"):
        assert "your-org" not in recipe.read_text(encoding="utf-8"), recipe


def _break_logs(repo: Path) -> None:
    """The candidate's logs are not readable logs: the run stops with a located error."""
    (repo / "eval" / "logs.md").write_text("[1] no answer precedes this source\n", encoding="utf-8")


@pytest.mark.slow
def test_github_actions_reports_a_failed_candidate_run(accepted_repo: Path, tmp_path: Path) -> None:
    # the run step fails: the compare, comment and last steps still run (if: always()); the
    # summary and the comment say the run failed and why, and the job fails
    repo = _checkout(accepted_repo, tmp_path)
    env = _environment(tmp_path)
    _break_logs(repo)
    failed_step, summary = _run_github(repo, env, tmp_path)
    assert failed_step == "Judge and score the logs"
    assert summary.startswith("### genir-eval: ❌ the candidate run failed (exit 2)")
    assert "logs.md" in summary  # the run's own located error, quoted
    [comment] = _comments(tmp_path)
    assert comment["body"] == MARKER + summary
    assert "COMPARE_STATUS=2" in (tmp_path / "github_env").read_text()


@pytest.mark.slow
def test_github_actions_fails_when_the_run_step_never_started(
    accepted_repo: Path, tmp_path: Path
) -> None:
    # genir-eval could not be installed: no run, but still a summary saying so and a failure
    repo = _checkout(accepted_repo, tmp_path)
    env = _environment(tmp_path)
    (repo / "tools" / "genir-eval").unlink()
    (repo / "tools" / "genir-eval").mkdir()
    failed_step, summary = _run_github(repo, env, tmp_path)
    assert failed_step == "Install genir-eval"
    assert summary.startswith("### genir-eval: ❌ the candidate run failed (exit none")
    assert "did not run" in summary
    assert "COMPARE_STATUS=1" in (tmp_path / "github_env").read_text()


@pytest.mark.slow
def test_gitlab_ci_reports_a_failed_candidate_run(accepted_repo: Path, tmp_path: Path) -> None:
    repo = _checkout(accepted_repo, tmp_path)
    env = _environment(tmp_path)
    _break_logs(repo)
    assert _run_gitlab(repo, env) == 2
    posted = (tmp_path / "posted.md").read_text()
    assert posted.startswith(MARKER + "### genir-eval: ❌ the candidate run failed (exit 2)")
    assert "logs.md" in posted


@pytest.mark.slow
def test_gitlab_ci_updates_one_note_per_merge_request(accepted_repo: Path, tmp_path: Path) -> None:
    # two pipelines of one merge request, the second with a regression: one note, now red
    repo = _checkout(accepted_repo, tmp_path)
    env = _environment(tmp_path)
    assert _run_gitlab(repo, env) == 0
    _regress(repo)
    assert _run_gitlab(repo, env) == 1
    [note] = json.loads((tmp_path / "notes.json").read_text())
    assert note["body"].startswith(MARKER + "### genir-eval: ❌ regression")
    calls = (tmp_path / "calls.log").read_text()
    assert calls.count("--request POST") == 1 and calls.count("--request PUT") == 1
