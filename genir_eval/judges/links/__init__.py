"""Link usefulness judges: each cited link graded for the turn that cites it.

``dna`` (description-narrative-aspects prompt, Thomas et al.), ``true`` (the TRUE rubric
with link evidence) and ``listwise`` (all of a turn's links in one call)."""
