"""Segments (URGE useful-text units) and language detection."""

from __future__ import annotations

import pytest

from genir_eval.ingest import detect_language, split_segments

# (text, expected segment texts). Chinese rows: units as they appear in URGE's useful-text
# columns (URGE sample rows 0, 6, 10 and the dataset README); English rows: computed by hand
# from the rule in genir_eval.ingest.segments.
SEGMENT_CASES = [
    (
        "服务器可以用于多种用途，涵盖个人、企业以及开发者的需求。",
        ["服务器可以用于多种用途，", "涵盖个人、企业以及开发者的需求。"],
    ),
    (
        "以下是场景：\n企业和商业用途\n\n网站托管：可用",
        ["以下是场景：", "企业和商业用途", "网站托管：", "可用"],
    ),
    ("1. 开窗通风\n净利润为193.09亿美元，增长", ["1. 开窗通风", "净利润为193.09亿美元，", "增长"]),
    ("具体日期为2000年8月3日. 在2003年，他", ["具体日期为2000年8月3日. 在2003年，", "他"]),
    ('在服务器配置中，"几核"是参数，', ["在服务器配置中，", '"几核"是参数，']),
    ("3. NBC Meshtec 过滤网", ["3. NBC Meshtec 过滤网"]),
    ("Array: 数组是连续的。", ["Array:", "数组是连续的。"]),
    (
        "Servers host sites. They store data! Really?",
        ["Servers host sites.", "They store data!", "Really?"],
    ),
    (
        "It costs 1,000 dollars at 12:30, see https://a.example/x.",
        ["It costs 1,000 dollars at 12:30,", "see https://a.example/x."],
    ),
    ("Wait?! Yes; no.", ["Wait?!", "Yes;", "no."]),
    ("  \n ", []),
]


@pytest.mark.parametrize(("text", "expected"), SEGMENT_CASES)
def test_split_segments(text, expected):
    segments = split_segments(text)
    assert [s.text for s in segments] == expected
    for segment in segments:
        assert text[segment.start : segment.end] == segment.text


# (text, expected language); by hand: CJK letters vs Latin letters.
LANGUAGE_CASES = [
    ("服务器可以干什么", "zh"),
    ("在Python中，使用 numpy 库创建的数组", "zh"),
    ("What does a web server do?", "en"),
    ("Nginx 是 web server", "en"),
    ("", "en"),
    ("12345 !!!", "en"),
]


@pytest.mark.parametrize(("text", "expected"), LANGUAGE_CASES)
def test_detect_language(text, expected):
    assert detect_language(text) == expected
