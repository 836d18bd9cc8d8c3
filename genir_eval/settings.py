"""Every numeric setting of genir-eval, with the range it must lie in, checked in one place.

The command line (``--timeout``), the scenario file (``[engine] timeout``) and the Python API
(``EngineConfig(timeout=...)``) all go through :func:`check_setting`, so ``nan``, ``inf``,
a negative count or a bootstrap of ten billion resamples is refused before any call, with
the setting's name and what was expected, instead of a traceback after the paid calls.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "Setting",
    "SETTINGS",
    "MAX_RESAMPLES",
    "check_setting",
    "parse_setting",
    "setting_type",
    "SettingType",
    "check_base_url",
    "public_url",
]

#: The most bootstrap or randomisation resamples any command draws (a million resamples of
#: a few hundred sessions already take minutes; more only hides a typo).
MAX_RESAMPLES = 1_000_000


@dataclass(frozen=True)
class Setting:
    """A numeric setting: integer or real, and its closed (or, for ``above``, open) range."""

    name: str
    integer: bool
    minimum: float
    maximum: float
    #: the minimum itself is not allowed (``timeout > 0``)
    above: bool = False
    #: the maximum itself is not allowed (``alpha < 1``)
    below: bool = False

    def expected(self) -> str:
        kind = "an integer" if self.integer else "a number"
        low = f"> {_number(self.minimum)}" if self.above else f">= {_number(self.minimum)}"
        high = f"< {_number(self.maximum)}" if self.below else f"<= {_number(self.maximum)}"
        return f"{kind} {low} and {high}"

    def check(self, value: Any) -> Any:
        """``value`` as this setting takes it, or :class:`ValueError` saying what was
        expected (see :func:`check_setting`)."""
        return _check(self, value)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e16 else f"{value:g}"


_DAY = 86_400.0

SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting("concurrency", True, 1, 100_000),
        Setting("rpm", False, 0, 1e9, above=True),
        Setting("tpm", True, 1, 10**12),
        Setting("max_attempts", True, 1, 1_000),
        Setting("timeout", False, 0, _DAY, above=True),
        # a reply's bytes: at least 64 KiB (a judgment with log-probabilities is tens of
        # kilobytes), at most 1 GiB (what the process may hold of one reply)
        Setting("max_reply_bytes", True, 65_536, 2**30),
        Setting("deadline", False, 0, 30 * _DAY, above=True),
        Setting("max_missing", False, 0, 1),
        Setting("stop_after", True, 0, 10**9),
        Setting("give_up_after", False, 0, 30 * _DAY),
        Setting("ray_workers", True, 1, 10**6),
        Setting("n_boot", True, 0, MAX_RESAMPLES),
        Setting("resamples", True, 1, MAX_RESAMPLES),
        Setting("splits", True, 1, MAX_RESAMPLES),
        # a run's spending cap: USD, and tokens (prompt and answer) in all
        Setting("max_cost", False, 0, 1e9),
        Setting("max_tokens", True, 1, 10**15),
        # judge noise: how many times a sample of sessions is judged, and the sample's size
        Setting("repeats", True, 1, 100),
        Setting("repeat_sample", True, 1, 10**9),
        Setting("seed", True, 0, 2**63 - 1),
        Setting("limit", True, 1, 10**12),
        # view --bundle-limit: the sessions a static copy holds (a page each; a million
        # pages is no longer a copy to open from file://)
        Setting("bundle_limit", True, 1, 10**6),
        # compare's gate and listing (scores are means of bounded measures: a bound past a
        # billion is a typo)
        Setting("max_drop", False, 0, 1e9),
        Setting("fail_below", False, -1e9, 1e9),
        Setting("alpha", False, 0, 1, below=True),
        Setting("worst", True, 0, 1_000_000),
        Setting("min_sessions", True, 0, 10**12),
        # meta --ppi-labelled: a prediction-powered mean needs two labelled sessions at least
        Setting("ppi_labelled", True, 2, 10**12),
        # arena: a sample of pairs, and the pairwise gate's least acceptable win rate
        Setting("max_pairs", True, 1, 10**12),
        Setting("min_win_rate", False, 0, 1),
        # genir-eval label: the port to serve on (0: any free one), how many people label
        # each item, and the target width of the PPI interval as a share of the label scale
        Setting("port", True, 0, 65_535),
        Setting("per_item", True, 1, 1_000),
        Setting("width", False, 0, 1, above=True),
    )
}


#: ``compare``: the fewest compared pairs (sessions, or turns at turn level) a pass may rest
#: on. With fewer, the exact randomisation test cannot reach p < 0.05 unless (almost) every
#: pair moves one way, and the report gives no interval under 10 either.
DEFAULT_MIN_SESSIONS = 10

#: How ``compare`` decides, in the words ``--help`` and every verdict print.
COMPARE_VERDICT_RULE = (
    "REGRESSION (exit 1) when a compared score of B is significantly worse than A's: p < "
    "--alpha after --correction across the scores (Holm's step-down by default, holding the "
    "chance of any false alarm at --alpha), by the paired randomisation test, or McNemar's "
    "mid-p test for a pass/fail score; for a score given a --margin, instead, when the worse "
    "end of the paired 95% bootstrap interval of the change lies past the margin "
    "(non-inferiority not shown); or when B's mean is below --fail-below. Otherwise TOO FEW "
    "TO DECIDE (exit 4) when fewer than --min-sessions sessions (two at least) were compared: "
    "at --level turn the sessions the turns come from, the unit resampled. Otherwise PASS "
    "(exit 0). A score that is not a finite number is refused (exit 2). Where both runs "
    "carry repeated judgments of a score (run --repeats), its interval also resamples each "
    "session's repeats, and the verdict says when the change is smaller than the judge's own "
    "scatter."
)


def check_setting(name: str, value: Any) -> Any:
    """``value`` as the setting ``name`` takes it (an ``int`` or a ``float``), or
    :class:`ValueError` saying what was expected: never NaN, never infinite, never out of
    range. Booleans are not numbers here (TOML's ``true`` is not ``1``)."""
    return _check(SETTINGS[name], value)


def _check(setting: Setting, value: Any) -> Any:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and setting.integer and not isinstance(value, int):
        ok = isinstance(value, float) and value.is_integer()
    if ok:
        # an integer is compared as one: as a float 2**63 - 1 rounds up past the maximum
        try:
            number = int(value) if setting.integer else float(value)
        except OverflowError:  # an integer past a float's range (10**400 for a rate)
            number = math.inf
        ok = (setting.integer or math.isfinite(number)) and (
            setting.minimum <= number <= setting.maximum
        )
        ok = ok and not (setting.above and number == setting.minimum)
        ok = ok and not (setting.below and number == setting.maximum)
    if not ok:
        raise ValueError(f"expected {setting.expected()}, got {value!r}")
    return int(value) if setting.integer else float(value)


def parse_setting(name: str, text: str) -> Any:
    """A command-line value for the setting ``name`` (``"60"``, ``"1e3"``), checked."""
    setting = SETTINGS[name]
    try:
        if not text.isascii():  # Python reads "١٢" as 12; a setting's digits are ASCII
            raise ValueError(text)
        value: Any = int(text) if setting.integer else float(text)
    except ValueError:
        raise ValueError(f"expected {setting.expected()}, got {text!r}") from None
    return check_setting(name, value)


@dataclass(frozen=True)
class SettingType:
    """An argparse ``type`` for a numeric setting: ``nan``, ``inf``, a word and out-of-range
    values are refused while the command line is read, before any work, with what was
    expected (argparse names the flag)."""

    setting: Setting

    def __call__(self, text: str) -> Any:
        try:
            return parse_setting(self.setting.name, text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None


def setting_type(name: str) -> SettingType:
    """The argparse ``type`` of the setting ``name`` (:data:`SETTINGS`)."""
    return SettingType(SETTINGS[name])


def check_base_url(text: str) -> str:
    """``text`` if it is an http(s) URL with a host (``http://127.0.0.1:8000/v1``), else
    :class:`ValueError`. Credentials in it (``user:key@host``) are allowed and sent, but
    never written out (see :func:`public_url`)."""
    parts = urlsplit(text.strip())
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ValueError(
            f"expected an http(s) URL, got {text!r} (the port is not a number)"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"expected an http(s) URL such as http://127.0.0.1:8000/v1, got {text!r}")
    return text.strip()


def public_url(url: str | None) -> str | None:
    """``url`` without its credentials, query and fragment: what may be written to run.json,
    logs and reports."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return urlunsplit((parts.scheme, host + port, parts.path, "", ""))
