"""Inline SVG plots for the HTML report, drawn with matplotlib's SVG backend.

Figures are built without ``pyplot`` (no global state, no GUI backend): a
:class:`matplotlib.figure.Figure` saved as SVG with text kept as ``<text>`` elements
(``svg.fonttype = "none"``), so the browser draws any script's glyphs and the file stays
small. Labels that come from the logs pass through :func:`plot_text`, which neutralises
matplotlib's mathtext (``$``); matplotlib escapes ``<``, ``>`` and ``&`` in SVG text.
"""

from __future__ import annotations

import io
import random
import re
import warnings
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")  # never a GUI backend, also when someone imports pyplot later

from matplotlib.figure import Figure  # noqa: E402

__all__ = ["plot_text", "scatter_svg", "task_bars_svg", "histogram_svg"]

_XML_PROLOGUE = re.compile(r"^\s*<\?xml[^>]*>\s*(<!DOCTYPE[^>]*>\s*)?", re.DOTALL)
_ID = re.compile(r'\bid="([^"]+)"')
_ID_USE = re.compile(r'(\bid="|url\(#|href="#)([^")]+)')
_POINT = "#3566a8"
_GOLD = "#c46b2b"


def plot_text(text: str, limit: int = 40) -> str:
    """A label from the logs made safe for matplotlib: no mathtext, bounded length."""
    text = " ".join(str(text).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("\\", "\\\\").replace("$", r"\$")


def _to_svg(fig: Figure, salt: str, title: str) -> str:
    buffer = io.StringIO()
    # Each figure gets its own hash salt so the ids of two inline SVGs never collide.
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        with warnings.catch_warnings():
            # Glyphs matplotlib's own font lacks (e.g. CJK task types) are drawn by the
            # browser from <text>; the measuring font's complaint is irrelevant here.
            warnings.filterwarnings("ignore", message=r"Glyph .* missing from")
            warnings.filterwarnings("ignore", message=r"Matplotlib currently does not support")
            fig.savefig(buffer, format="svg", metadata={"Date": None, "Title": title})
    svg = _prefix_ids(_XML_PROLOGUE.sub("", buffer.getvalue()), salt)
    return svg.replace("<svg ", f'<svg role="img" aria-label="{_attr(title)}" ', 1)


def _prefix_ids(svg: str, prefix: str) -> str:
    """Namespace the SVG's ids (matplotlib names them ``axes_1``, ``patch_2`` ... in every
    figure) and the references to them, so several figures can live in one page."""
    ids = set(_ID.findall(svg))

    def rename(match: re.Match[str]) -> str:
        head, name = match.group(1), match.group(2)
        return f"{head}{prefix}-{name}" if name in ids else match.group(0)

    return _ID_USE.sub(rename, svg)


def _attr(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )


def _jitter(values: Sequence[float], amount: float, seed: int) -> list[float]:
    # Satisfaction is on a 1-5 scale: a little seeded jitter keeps ties visible.
    rng = random.Random(seed)
    return [v + rng.uniform(-amount, amount) for v in values]


def scatter_svg(
    panels: Sequence[tuple[str, Sequence[float], Sequence[float]]],
    *,
    y_label: str,
    salt: str = "scatter",
) -> str:
    """Side-by-side scatters of a predicted score (y) against user satisfaction (x).

    ``panels`` holds ``(title, user_satisfaction, predicted)`` per panel.
    """
    fig = Figure(figsize=(4.2 * max(len(panels), 1), 3.6), layout="constrained")
    axes = fig.subplots(1, max(len(panels), 1), squeeze=False)[0]
    for ax, (title, gold, predicted) in zip(axes, panels, strict=True):
        ax.scatter(
            _jitter(gold, 0.08, seed=len(gold)),
            predicted,
            s=18,
            alpha=0.7,
            color=_POINT,
            edgecolors="none",
        )
        ax.set_title(plot_text(title, 60), fontsize=10)
        ax.set_xlabel("user satisfaction (1-5)", fontsize=9)
        ax.set_ylabel(plot_text(y_label, 60), fontsize=9)
        ax.set_xlim(0.5, 5.5)
        ax.set_xticks([1, 2, 3, 4, 5])
        ax.grid(alpha=0.3)
    return _to_svg(fig, salt, "predicted vs user satisfaction")


def task_bars_svg(
    task_types: Sequence[str],
    counts: Sequence[int],
    predicted: Sequence[float | None],
    gold: Sequence[float | None] | None,
    *,
    score_label: str,
    salt: str = "task-bars",
) -> str:
    """Horizontal bars per task type: the mean score and, when known, mean satisfaction."""
    n_panels = 2 if gold is not None else 1
    height = 1.2 + 0.38 * max(len(task_types), 1)
    fig = Figure(figsize=(4.6 * n_panels, height), layout="constrained")
    axes = fig.subplots(1, n_panels, squeeze=False, sharey=True)[0]
    labels = [f"{plot_text(t, 32)} (n={n})" for t, n in zip(task_types, counts, strict=True)]
    positions = list(range(len(task_types)))
    series: list[tuple[str, Sequence[float | None], str]] = [
        (f"mean {score_label}", predicted, _POINT)
    ]
    if gold is not None:
        series.append(("mean user satisfaction (1-5)", gold, _GOLD))
    for ax, (title, values, color) in zip(axes, series, strict=True):
        widths = [0.0 if v is None else v for v in values]
        ax.barh(positions, widths, color=color, height=0.6)
        for y, v in zip(positions, values, strict=True):
            ax.text(
                0 if v is None else v,
                y,
                " n/a" if v is None else f" {v:.2f}",
                va="center",
                fontsize=8,
            )
        ax.set_title(plot_text(title, 60), fontsize=10)
        ax.set_yticks(positions)
        ax.set_yticklabels(labels, fontsize=8)
        ax.invert_yaxis()
        ax.grid(axis="x", alpha=0.3)
        ax.margins(x=0.18)
    return _to_svg(fig, salt, "scores per task type")


def histogram_svg(counts: Sequence[int], lo: float, hi: float, *, label: str = "") -> str:
    """A small inline bar chart of ``counts`` over ``[lo, hi]`` (equal-width bins), drawn
    as plain SVG rectangles: dozens of them fit in one table at no cost. Each bar's
    ``<title>`` gives its range and count."""
    width, height = 110, 26
    if not counts:
        return ""
    peak = max(counts) or 1
    step = width / len(counts)
    bin_width = (hi - lo) / len(counts) if hi > lo else 0.0
    bars = []
    for i, count in enumerate(counts):
        h = 0 if count == 0 else max(1.5, (height - 2) * count / peak)
        a = lo + i * bin_width
        b = a + bin_width
        title = f"{a:.3g}–{b:.3g}: {count}" if bin_width else f"{lo:.3g}: {count}"
        bars.append(
            f'<rect x="{i * step + 0.5:.1f}" y="{height - h:.1f}" width="{max(step - 1, 1):.1f}"'
            f' height="{h:.1f}" fill="{_POINT}"><title>{_attr(title)}</title></rect>'
        )
    return (
        f'<svg class="hist" role="img" aria-label="{_attr(label or "distribution")}" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f'<line x1="0" y1="{height - 0.5}" x2="{width}" y2="{height - 0.5}" stroke="#b8c0cc"/>'
        f"{''.join(bars)}</svg>"
    )
