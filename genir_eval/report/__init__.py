"""genir-eval report stage."""
