"""genir-eval runner stage."""
