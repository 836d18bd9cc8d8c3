"""genir-eval judges stage."""
