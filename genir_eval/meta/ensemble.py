"""Does combining judges help on sessions they were not fitted on?

A ridge regression of gold link labels on several judges' scores for the same links (an LLM
judge's expected label beside the offline twins' evidence, say), checked on sessions its fit
never saw: the sessions are split at random into two halves, the weights are fitted on one
half's gold and the other half is scored with them, ``splits`` times. Each held-out half is
scored by one fitted model, so every link in it is ranked on the same footing (pooling the
predictions of many leave-one-out fits would instead order tied links by whichever fold they
fell in). The ensemble's figures on the held-out halves are reported beside each member's on
the same halves; a member's rank figures need no fitting (a monotone map leaves Spearman and
AUC unchanged), so the comparison favours the members. An ensemble that does not beat its
best member this way is not worth shipping.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from genir_eval.meta.stats import correlations, pairwise_auc

__all__ = ["Ridge", "fit_ridge", "cross_validated_ensemble"]


@dataclass(frozen=True)
class Ridge:
    """A fitted ridge regression on standardised features."""

    mean: np.ndarray
    scale: np.ndarray
    centre: float
    weights: np.ndarray

    def predict(self, features: np.ndarray) -> np.ndarray:
        z = (np.asarray(features, dtype=float) - self.mean) / self.scale
        return self.centre + z @ self.weights


def fit_ridge(features: np.ndarray, gold: np.ndarray, *, alpha: float = 1.0) -> Ridge:
    """Ridge regression of ``gold`` on ``features``, each standardised on these rows; the
    intercept (the mean gold) is not penalised."""
    x = np.asarray(features, dtype=float)
    y = np.asarray(gold, dtype=float)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0  # a constant feature carries nothing
    z = (x - mean) / scale
    centre = float(y.mean())
    weights = np.linalg.solve(z.T @ z + alpha * np.eye(x.shape[1]), z.T @ (y - centre))
    return Ridge(mean, scale, centre, weights)


def _figures(pred: np.ndarray, gold: np.ndarray) -> dict[str, float | None]:
    return {
        "spearman": correlations(pred.tolist(), gold.tolist(), n_boot=0)["spearman"],
        "auc": pairwise_auc(pred.tolist(), gold.tolist()),
        "mae": float(np.mean(np.abs(pred - gold))),
    }


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def cross_validated_ensemble(
    members: Mapping[str, Sequence[float | None]],
    gold: Sequence[int],
    groups: Sequence[str],
    *,
    alpha: float = 1.0,
    splits: int = 200,
    seed: int = 0,
) -> dict[str, Any]:
    """The ridge ensemble of ``members`` (name -> score per link, ``None`` where missing)
    against ``gold`` on the links every member scored, fitted on a random half of the
    sessions (``groups``) and scored on the other half, ``splits`` times: the mean held-out
    Spearman, pairwise AUC and MAE of the ensemble beside each member's on the same halves,
    how often the ensemble's Spearman beat the best member's, and whether its mean does."""
    names = list(members)
    if len(names) < 2:
        raise ValueError("an ensemble needs at least two members")
    n = len(gold)
    for name in names:
        if len(members[name]) != n:
            raise ValueError(f"member {name!r} scores {len(members[name])} links, gold has {n}")
    keep = [i for i in range(n) if all(members[name][i] is not None for name in names)]
    x = np.array([[float(members[name][i]) for name in names] for i in keep])  # type: ignore[arg-type]
    y = np.array([gold[i] for i in keep], dtype=float)
    labels = np.asarray([groups[i] for i in keep])
    sessions = list(dict.fromkeys(labels.tolist()))
    if len(sessions) < 4:
        raise ValueError("an ensemble needs links from at least 4 sessions")
    rng = np.random.default_rng(seed)
    per_split: dict[str, list[dict[str, float | None]]] = {k: [] for k in [*names, "ensemble"]}
    wins = 0
    for _ in range(splits):
        train_sessions = set(rng.permutation(sessions)[: len(sessions) // 2].tolist())
        train = np.isin(labels, list(train_sessions))
        test = ~train
        model = fit_ridge(x[train], y[train], alpha=alpha)
        ensemble = _figures(model.predict(x[test]), y[test])
        per_split["ensemble"].append(ensemble)
        best = None
        for j, name in enumerate(names):
            single = _figures(x[test, j], y[test])
            per_split[name].append(single)
            if single["spearman"] is not None:
                best = single["spearman"] if best is None else max(best, single["spearman"])
        if ensemble["spearman"] is not None and best is not None and ensemble["spearman"] > best:
            wins += 1
    summary = {
        name: {
            stat: _mean([figures[stat] for figures in rows]) for stat in ("spearman", "auc", "mae")
        }
        for name, rows in per_split.items()
    }
    best_member = max(
        (name for name in names if summary[name]["spearman"] is not None),
        key=lambda name: summary[name]["spearman"],  # type: ignore[arg-type,return-value]
        default=None,
    )
    ens = summary["ensemble"]["spearman"]
    return {
        "members": names,
        "n_links": len(keep),
        "n_left_out": n - len(keep),
        "n_sessions": len(sessions),
        "alpha": alpha,
        "splits": splits,
        "seed": seed,
        "validation": (
            f"{splits} random halvings of the sessions: fitted on one half's gold, "
            "scored on the other"
        ),
        "ensemble": summary["ensemble"],
        "single": {name: summary[name] for name in names},
        "best_member": best_member,
        "wins": wins / splits,
        "helps": (
            best_member is not None and ens is not None and ens > summary[best_member]["spearman"]  # type: ignore[operator]
        ),
    }
