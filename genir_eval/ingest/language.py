"""Language detection good enough to pick prompts: Chinese when Chinese characters dominate."""

from __future__ import annotations

import re

__all__ = ["detect_language"]

# CJK Unified Ideographs, extension A and compatibility ideographs.
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")


def detect_language(text: str) -> str:
    """``"zh"`` when Chinese characters outnumber Latin words in ``text``, else ``"en"``.

    A Chinese character is weighed like a Latin *word* (each carries about as much of the
    text), so a Chinese answer quoting ``MySQL`` or ``numpy`` stays Chinese and an English
    one naming a city in Chinese stays English. Empty or letterless text is ``"en"``.
    """
    if text.isascii():
        return "en"
    han = sum(map(len, _HAN.findall(text)))  # runs, not characters: fewer matches to build
    if not han:
        return "en"
    return "zh" if han > len(_LATIN_WORD.findall(text)) else "en"
