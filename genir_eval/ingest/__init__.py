"""genir-eval ingest stage."""
