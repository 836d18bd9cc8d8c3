"""genir-eval's version: what ``genir-eval --version`` prints and every run's ``run.json``
records (the same as ``pyproject.toml``'s)."""

__version__ = "0.1.0"
