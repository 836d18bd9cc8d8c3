"""Chat-template control tokens: what a server that renders the chat itself may read as a
turn boundary, a role or a special token when it meets one in message text.

Model families spell them in a few shapes, and the shapes, not a list of tokens, are what
:data:`CHAT_TOKEN` matches, so a family's next token of a known shape is caught too:

- bars inside angle brackets, ASCII or fullwidth: ChatML ``<|im_start|>``, Llama 3
  ``<|begin_of_text|>`` ``<|start_header_id|>``, Phi and GLM ``<|user|>``, Command-R
  ``<|START_OF_TURN_TOKEN|>``, DeepSeek ``<｜begin▁of▁sentence｜>`` ``<｜User｜>``;
- a name joined by underscores inside angle brackets: Gemma ``<start_of_turn>``
  ``<end_of_turn>``, Baichuan ``<reserved_106>``, T5 ``<extra_id_0>``, Qwen ``<tool_call>``;
- a word and a number inside angle brackets: ``<reserved106>``, Gemma ``<unused0>``;
- a role word inside angle brackets, in English or Chinese: MiniCPM ``<用户>`` ``<AI>``,
  ``<system>``, ``<assistant>``, ``</user>``;
- the sentence and special tokens of SentencePiece and BERT vocabularies: ``<s>`` ``</s>``
  ``<bos>`` ``<eos>`` ``<pad>`` ``<unk>`` ``<mask>``, GLM ``<sop>`` ``<eop>``, MOSS ``<eoh>``
  ``<eom>``, reasoning models' ``<think>``;
- upper-case names inside square brackets: Llama 2 and Mistral ``[INST]`` ``[/INST]``,
  Mistral ``[SYSTEM_PROMPT]`` ``[AVAILABLE_TOOLS]`` ``[TOOL_CALLS]``, BERT ``[CLS]`` ``[SEP]``,
  GLM ``[gMASK]``, Skywork ``[USER]`` ``[BOT]``;
- Llama 2's ``<<SYS>>`` ``<</SYS>>``.

:func:`neutralise_chat_tokens` turns each one's brackets into look-alike characters
(guillemets ‹ › and white square brackets ⟦ ⟧), so the token reaches the model as the text it
was, readable, and no tokenizer reads it as its special token. Ordinary bracketed text is
left alone: citation marks ``[1]``, ``a < b > c``, HTML such as ``<br>`` or ``<h2>``, code
such as ``Vec<T>``.
"""

from __future__ import annotations

import re

__all__ = ["CHAT_TOKEN", "neutralise_chat_tokens"]

_ROLE_WORDS = (
    "system|user|assistant|model|human|bot|ai|tool|function|observation|developer|ipython"
    "|用户|助手|系统|机器人|人类|模型|AI助手"
)
_SPECIAL_WORDS = "s|bos|eos|pad|unk|mask|sep|cls|sop|eop|eoh|eom|eoa|eot|think"

CHAT_TOKEN = re.compile(
    r"<[|｜][^<>\n]{0,64}?[|｜]>"  # <|im_start|>, <｜User｜>
    r"|</?[A-Za-z][A-Za-z0-9]{0,31}(?:_[A-Za-z0-9]{1,32}){1,8}>"  # <start_of_turn>
    r"|</?[A-Za-z]{3,32}[0-9]{1,6}>"  # <unused0>, <reserved106>
    rf"|(?i:</?(?:{_ROLE_WORDS}|{_SPECIAL_WORDS})>)"  # <用户>, <AI>, <system>, <s>, <bos>
    r"|\[/?[a-z]?[A-Z]{2,32}(?:_[A-Z0-9]{1,32}){0,8}\]"  # [INST], [SYSTEM_PROMPT], [gMASK]
    r"|<</?[A-Z]{2,32}>>"  # <<SYS>>
)

_LOOK_ALIKES = str.maketrans({"<": "‹", ">": "›", "[": "⟦", "]": "⟧"})


def neutralise_chat_tokens(text: str) -> str:
    """``text`` with every chat-template control token's brackets replaced by look-alikes:
    the token stays readable as text and is no longer the token."""
    return CHAT_TOKEN.sub(lambda match: match.group().translate(_LOOK_ALIKES), text)
