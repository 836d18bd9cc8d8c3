"""genir-eval metrics stage."""
