"""genir-eval llm stage."""
