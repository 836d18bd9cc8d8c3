"""The session (cluster) bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from genir_eval.meta.resample import session_bootstrap
from genir_eval.meta.stats import mae


def test_constant_statistic_gives_a_point_interval() -> None:
    out = session_bootstrap(lambda p, g: 1.0, [1, 2, 3], [1, 2, 3], ["a", "b", "c"], n_boot=50)
    assert out == [1.0, 1.0]


def test_undefined_everywhere_and_single_session_give_none() -> None:
    assert session_bootstrap(lambda p, g: None, [1, 2], [1, 2], ["a", "b"], n_boot=20) is None
    assert session_bootstrap(mae, [1, 2], [1, 2], ["a", "a"], n_boot=20) is None


def test_clustered_items_give_a_wider_interval_than_pretending_independence() -> None:
    # 10 sessions of 10 links each; each session shifts all its errors together, so the
    # item-level bootstrap (every item its own group) understates the spread of the MAE.
    rng = np.random.default_rng(0)
    shift = np.repeat(rng.normal(0.0, 1.0, size=10), 10)
    gold = rng.integers(0, 4, size=100).astype(float)
    pred = gold + shift + rng.normal(0.0, 0.1, size=100)
    sessions = np.repeat(np.arange(10), 10).tolist()
    by_session = session_bootstrap(mae, pred.tolist(), gold.tolist(), sessions, n_boot=400)
    by_item = session_bootstrap(mae, pred.tolist(), gold.tolist(), list(range(100)), n_boot=400)
    assert by_session is not None and by_item is not None
    assert by_session[1] - by_session[0] > 1.5 * (by_item[1] - by_item[0])
    assert by_session[0] <= mae(pred.tolist(), gold.tolist()) <= by_session[1]


def test_rejects_unequal_inputs() -> None:
    with pytest.raises(ValueError):
        session_bootstrap(mae, [1], [1, 2], ["a", "b"])
