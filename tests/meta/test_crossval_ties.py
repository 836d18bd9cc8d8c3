"""A tie between choosing a design and its ingredient (genir_eval/meta/crossval.py): the
design is adopted only when choosing does strictly better out of sample; an equal figure
keeps the ingredient (the simpler one), as ``beats_ingredient`` says.

The design ``copy`` gets exactly the ingredient's hits (half of each topic's items right, an
exact binary fraction, so both figures are 0.5 to the last bit); a chooser that always picks
it makes the out-of-sample figure equal the ingredient's."""

from __future__ import annotations

from genir_eval.meta.crossval import cross_validate

TOPICS = [f"t{i:02d}" for i in range(12)]
HALF = {t: [1.0, 0.0, 1.0, 0.0] for t in TOPICS}


def test_an_equal_figure_keeps_the_ingredient() -> None:
    hits = {"ingredient": HALF, "copy": dict(HALF)}
    result = cross_validate(
        hits, TOPICS, "ingredient", k=3, repeats=2, n_boot=200, choose=lambda h, t: "copy"
    )
    assert result.chosen == {"copy": 6}
    assert result.figure == result.ingredient_figure == 0.5
    assert not result.beats_ingredient
    assert result.adopted == "ingredient"


def test_a_strictly_better_figure_adopts_the_design() -> None:
    better = {t: [1.0, 1.0, 1.0, 0.0] for t in TOPICS}  # 0.75 on every topic
    hits = {"ingredient": HALF, "better": better}
    result = cross_validate(hits, TOPICS, "ingredient", k=3, repeats=2, n_boot=200)
    assert result.figure == 0.75 and result.ingredient_figure == 0.5
    assert result.beats_ingredient and result.adopted == "better"
