"""Where the judging runs: local by default (Ray never imported), Ray when asked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from genir_eval.runner.run import Overrides, apply_overrides
from genir_eval.runner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


def test_scenario_and_command_line_choose_the_executor() -> None:
    scenario = load_scenario(ROOT / "scenarios" / "demo-offline.toml")
    assert (scenario.engine.executor, scenario.engine.ray_address) == ("local", None)
    on_ray = apply_overrides(scenario, Overrides(executor="ray", ray_address="auto", ray_workers=3))
    assert (on_ray.engine.executor, on_ray.engine.ray_address, on_ray.engine.ray_workers) == (
        "ray",
        "auto",
        3,
    )


@pytest.mark.slow
def test_a_local_run_never_imports_ray(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from genir_eval.runner import run_scenario\n"
        f"run_scenario({str(ROOT / 'scenarios' / 'demo-offline.toml')!r}, out_dir={str(tmp_path)!r})\n"
        "assert 'ray' not in sys.modules, 'a local run imported ray'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "run.json").exists()


def _ray_running_here() -> bool:
    """Whether a Ray cluster's GCS process runs on this machine (Linux /proc)."""
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == "gcs_server":
                return True
        except OSError:
            continue
    return False


def _run_ray(tmp_path: Path, address: str, **env: str) -> subprocess.CompletedProcess[str]:
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "demo-offline.toml"
    argv = ["run", str(scenario), "--out", str(tmp_path / "run"), "--executor", "ray"]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    # a Ray temp folder of its own: `auto` finds no cluster another test (or user) started
    environment["RAY_TMPDIR"] = str(tmp_path / "ray")
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-m", "genir_eval", *argv, "--ray-address", address, "--quiet"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )


@pytest.mark.ray
@pytest.mark.parametrize(
    ("address", "env", "words"),
    [
        ("auto", {}, "no Ray cluster is running on this machine; start one with `ray start"),
        (
            "ray://127.0.0.1:9",  # the discard port: nothing answers
            {"RAY_CLIENT_INITIAL_CONNECTION_TIMEOUT_S": "1"},
            "cannot reach the Ray cluster",
        ),
    ],
    ids=["auto without a cluster", "ray:// that does not answer"],
)
def test_a_cluster_that_cannot_be_joined_is_one_line_before_any_call(
    tmp_path: Path, address: str, env: dict[str, str], words: str
) -> None:
    pytest.importorskip("ray")
    if address == "auto" and _ray_running_here():
        pytest.skip("a Ray cluster runs on this machine: `auto` joins it (Ray finds its process)")
    done = _run_ray(tmp_path, address, **env)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"genir-eval: error: --ray-address {address}: "), lines[0]
    assert words in lines[0] and "Traceback" not in done.stderr
    assert not (tmp_path / "run" / "run.json").exists()


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (
            ValueError("Ray Client requires pip package `ray[client]`. If you installed ..."),
            'needs Ray Client, which this Ray lacks: pip install "genir-eval[ray]"',
        ),
        (ConnectionError("ray client connection timeout"), "cannot reach the Ray cluster"),
        (RuntimeError("Maybe you called ray.init twice"), "Ray could not start: RuntimeError"),
        (TimeoutError("GCS did not answer"), "cannot reach the Ray cluster"),
    ],
    ids=["no Ray Client", "timeout", "runtime error", "GCS timeout"],
)
def test_every_way_ray_init_fails_is_one_config_line(error: Exception, words: str) -> None:
    from genir_eval.errors import ConfigError
    from genir_eval.runner.ray_executor import _connect

    class Ray:
        def init(self, **kwargs: object) -> None:
            raise error

    with pytest.raises(ConfigError) as raised:
        _connect(Ray(), "ray://head.example:10001")
    assert words in str(raised.value) and "\n" not in str(raised.value)
    assert str(raised.value).startswith("--ray-address ray://head.example:10001: ")
