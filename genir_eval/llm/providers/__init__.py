"""Providers behind one interface: the records a call is made of and the :class:`Provider`
class (``base``), one module per provider (``openai_provider``, ``anthropic_provider``,
``offline``), how a provider's errors are classified (``classify``) and the factory that
builds one by name (``factory``)."""

from genir_eval.llm.providers.base import (
    Completion,
    ErrorClass,
    Failure,
    GenerateConfig,
    JudgmentKey,
    Message,
    Provider,
    ProviderError,
    RateLimitInfo,
    Request,
    TokenLogprob,
    Usage,
)
from genir_eval.llm.providers.factory import (
    DEFAULT_MODELS,
    PROVIDER_NAMES,
    make_provider,
    resolve_provider,
)
from genir_eval.llm.providers.offline import OfflineProvider, offline_handler, register_offline

__all__ = [
    "Completion",
    "DEFAULT_MODELS",
    "ErrorClass",
    "Failure",
    "GenerateConfig",
    "JudgmentKey",
    "Message",
    "OfflineProvider",
    "PROVIDER_NAMES",
    "Provider",
    "ProviderError",
    "RateLimitInfo",
    "Request",
    "TokenLogprob",
    "Usage",
    "make_provider",
    "offline_handler",
    "register_offline",
    "resolve_provider",
]
