"""genir-eval: evaluate generative search sessions against what users found useful."""

from genir_eval.records import (
    Dissatisfaction,
    Gold,
    Link,
    Segment,
    Session,
    Statement,
    Turn,
    session_from_dict,
    session_to_dict,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "Dissatisfaction",
    "Gold",
    "Link",
    "Segment",
    "Session",
    "Statement",
    "Turn",
    "session_from_dict",
    "session_to_dict",
]
