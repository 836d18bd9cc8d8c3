"""Session satisfaction judges: ``geval`` (G-Eval probability-weighted rating), ``urs`` and
``gah`` (per-dimension ratings combined into an overall one), with their shared ``common``."""
