"""Where the judging runs: local by default (Ray never imported), Ray when asked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
