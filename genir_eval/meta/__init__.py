"""genir-eval meta stage."""
