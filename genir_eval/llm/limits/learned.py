"""Without a configured request rate, the rate the provider accepts, learned from its
replies and paced to once they show a limit (:class:`LearnedRate`)."""

from __future__ import annotations

import math
import time
from collections import deque

from genir_eval.llm.limits.window import Gate, Send, SendWindow, pace_send
from genir_eval.llm.providers.base import RateLimitInfo

__all__ = ["LearnedRate"]


class LearnedRate:
    """Requests paced to the rate the provider accepts, when the user gave none.

    An in-flight limit alone cannot keep to a provider's request rate: after a 429 it climbs
    back by latency-sized steps while the rate allows none (against a server limiting to R
    requests a second it had 60-80% of its calls rejected and reached 0.60 of R). This paces
    the sends instead, through a :class:`SendWindow` holding ``floor(rate)`` sends per
    ``floor(rate) / rate`` seconds (so time lost to a stall is made up within the window), with
    the rate learned from these signals:

    - **stated**: a reply's ``x-ratelimit-limit-requests`` (OpenAI) or
      ``anthropic-ratelimit-requests-limit`` (Anthropic) header gives the requests allowed per
      minute; the pace never goes above ``limit / 60 * (1 - guard)``. The same reply's
      ``remaining`` (requests left when it arrived) and ``reset`` (time until the allowance is
      full again) say where the provider's own count stands: a send waits until ``remaining``,
      plus what the limit restored since, less this client's sends since, allows one more
      (until ``reset``, after which it is full). This keeps to the provider's count when
      something else spends the same allowance (another run with the same key) or the opening
      burst spent it.
    - **named**: a 429 whose body names the limit it enforces (OpenAI's "on requests per min
      (RPM): Limit 500", Anthropic's "rate limit ... of 50 requests per minute"; see
      :func:`~genir_eval.llm.providers.classify.parse_limit_message`) states it as the headers do; one
      that names another limit (tokens per minute, requests per day) is evidence of a limit
      without its figure.
    - **observed**: 429s that keep coming at a steady send rate: at least
      ``evidence_refusals`` of them within ``window_s``, making up more of the provider's
      replies in it than a provider refusing ``evidence_share`` (5%) of the calls at random
      would send but once in a thousand windows (a binomial tail: 29 of 320 replies, 7 of
      37). A provider enforcing a rate ``R`` refuses ``1 - R / S`` of the calls sent at
      ``S`` (37% at 320 a second against 200), every call past its limit. Until then a 429
      is noise (an overloaded endpoint, a burst elsewhere on a shared key): the request that
      met it waits its Retry-After and goes again, and neither the pace nor the in-flight
      limit is touched. 1.7% of the calls refused at random (36 of 2,107) made the rate
      learned from every 429 a fraction of what the provider served: a run 5-8x slower than
      unpaced, and than its peers (``../shared/peerbench``).

    Once a limit is evident the pace is cut, once per congestion event (a 429 for a request
    sent before the last decrease, or within ``cooldown_s`` of it, is the same event, as in
    :class:`AdaptiveLimit`), to the lower of ``backoff`` times the current pace and the rate
    of the provider's answers (every reply but a 429) over the last ``window_s``: what the
    provider actually accepted while it was rejecting the rest. The first cut goes by the
    unpaced sending rate as the current pace. While paced with sends waiting for the pace,
    every 429 is the limit's (the run sits at the pace, near the limit); paced but below it
    (nothing waiting), a 429 needs the evidence again. After a cut from a pace the provider mostly took (its answers at
    least 90% of the pace), the pace climbs back to ``recover`` (98%) of that pace (or of
    the answers, if fewer) within ``recover_s``, fast at first and levelling off (CUBIC's
    concave growth, Ha, Rhee and Xu 2008; RFC 8312): a cut of 5% then costs ~1% of the
    throughput instead of 2.5% over the five seconds a 1%/s climb takes. Beyond that, and
    after any other cut, the pace climbs by ``increase`` of itself per second (a probe for
    more: providers raise limits, and the estimate may be low), so a 429 comes back now and
    then, as the price of finding the limit without being told it. While sends keep waiting
    for the pace (it, not the work, holds the run back) and no 429 comes, the pace is
    further multiplied by ``1 + probe * t**3`` after ``t`` such seconds, at most
    ``probe_max`` (CUBIC's convex probing; +3% at 2 s, +11% at 3 s, +25% from 4 s on): a cut
    measured low, under client stalls or faults (a run stuck at 0.83 of the limit climbed
    back only 1% a second), is made up in a few seconds, and a run below its pace (nothing
    waiting) never probes. When the 429s stop, sends waiting for the pace ``forget_s``
    without one taken for the limit's, the learned pace is dropped and sends go unpaced again (a stated limit stays): a limit that was there
    comes back as 429s, and is learned again within a fraction of a second.

    Before any evidence sends go unpaced: a limit is then met by the first seconds' burst,
    which is what tells it from noise (the share refused). ``opening`` paces them instead
    from ``opening`` requests a second, as TCP's slow start opens its congestion window (RFC
    5681 section 3.1): ``opening_growth`` times the rate actually sent over the last
    ``opening_window_s``, which compounds to a doubling about every ``opening_window_s``
    (0.46 s with 1.5 and 0.5 s) while the work keeps up with the pace, and stays at
    ``opening_growth`` times the work's own rate when the work is slower (so a slow stretch
    does not bank a burst for later, as RFC 7661 keeps an idle window from growing); a limit
    ends it. It is off by default: it rejected fewer calls at the start (19-23 of about 620
    instead of 137-138 against a server allowing 30 a second), but cost every run its ramp,
    about ``0.66 * ln(R / opening)`` seconds to reach a rate ``R`` (3.6 s for 2,000 a
    second; 80 sessions judged in 1.6 s instead of 0.8 s), and a 429 costs no tokens.
    Retries of judgments already begun (``first=True``) go before new work, as with
    :class:`RequestRate`.
    """

    def __init__(
        self,
        *,
        window_s: float = 1.0,
        backoff: float = 0.95,
        increase: float = 0.01,
        cooldown_s: float = 1.0,
        guard: float = 0.02,
        recover: float = 0.98,
        recover_s: float = 2.0,
        probe: float = 0.004,
        probe_max: float = 1.25,
        evidence_refusals: int = 3,
        evidence_share: float = 0.05,
        forget_s: float = 5.0,
        opening: float | None = None,
        opening_growth: float = 1.5,
        opening_window_s: float = 0.5,
    ) -> None:
        self.window_s = window_s
        self.opening = opening
        self.opening_growth = opening_growth
        self.opening_window_s = opening_window_s
        self.backoff = backoff
        self.increase = increase
        self.cooldown_s = cooldown_s
        self.guard = guard
        self.stated: float | None = None  # requests per second the headers allow
        self.learned: float | None = None  # requests per second set at the last decrease
        self.decreases = 0
        self._learned_at = 0.0
        self._last_decrease = -math.inf
        self._unmeasured = False  # the last cut went by the sending rate alone
        self._answers: deque[float] = deque()  # when the provider's non-429 replies came
        self._refusals: deque[float] = deque()  # when its 429s came
        self.evidence_refusals = evidence_refusals
        self.evidence_share = evidence_share
        self.forget_s = forget_s
        self.refused = 0  # 429s
        self.ignored = 0  # 429s taken for noise: retried, the pace untouched
        self.forgotten = 0  # learned paces dropped when the 429s stopped
        self._last_refusal = -math.inf
        self._sends: deque[float] = deque()  # sends before any pace was learned
        self._first_answer: float | None = None
        self.recover = recover
        self.recover_s = recover_s
        self.probe = probe
        self.probe_max = probe_max
        self._held_since: float | None = None  # sends have waited for the pace since then
        self._target: float | None = None  # the pace to climb back to after a cut
        self.window = SendWindow()
        self._gate = Gate(self.window)
        # what the provider's headers last said of its count: (sent_at, remaining, limit per
        # second, when its allowance is full again)
        self._provider: tuple[float, float, float, float] | None = None
        self.log_s = 2.0
        self._sent: deque[float] = deque()  # this client's sends over the last log_s

    def rate(self, now: float | None = None) -> float | None:
        """The pace in requests per second (``None``: not paced)."""
        ceiling = None if self.stated is None else self.stated * (1.0 - self.guard)
        if self.learned is None:
            return ceiling
        now = time.monotonic() if now is None else now
        if self._stale(now):
            return ceiling  # the 429s stopped: the learned pace is dropped (see _forget)
        since = max(0.0, now - self._learned_at)
        base, target = self.learned, self._target
        if target is not None and target > base:
            if since < self.recover_s:
                # Back toward the pace the provider took just before the 429, fast at first and
                # levelling off as it nears it (CUBIC's concave region, RFC 8312 section 4.1).
                gap = (1.0 - since / self.recover_s) ** 3
                learned = target - (target - base) * gap
                return learned if ceiling is None else min(learned, ceiling)
            base, since = target, since - self.recover_s
        learned = base * (1.0 + self.increase * since)
        if self._held_since is not None:
            # Sends have queued at this pace without a 429 since then: probe faster and
            # faster (CUBIC's convex region beyond the last maximum, RFC 8312 section 4.1),
            # so a pace set low by a cut measured under stalls or faults recovers in seconds.
            held = now - max(self._held_since, self._learned_at)
            learned *= min(self.probe_max, 1.0 + self.probe * max(0.0, held) ** 3)
        return learned if ceiling is None else min(learned, ceiling)

    @property
    def opened(self) -> bool:
        """Whether the opening is over: a 429 or a stated limit gave the pace."""
        return self.stated is not None or self.learned is not None

    def opening_rate(self, now: float | None = None) -> float | None:
        """The pace of the opening (``None`` once it is over, or when ``opening`` is
        ``None``): ``opening_growth`` times the sends of the last ``opening_window_s``, at
        least ``opening`` a second."""
        if self.opening is None or self.opened:
            return None
        now = time.monotonic() if now is None else now
        since = now - self.opening_window_s
        recent = 0
        for t in reversed(self._sent):
            if t <= since:
                break
            recent += 1
        return max(self.opening, self.opening_growth * recent / self.opening_window_s)

    def pace(self, now: float | None = None) -> float | None:
        """The requests per second sends keep to now: :meth:`rate`, or during the opening
        :meth:`opening_rate` (``None``: not paced)."""
        rate = self.rate(now)
        return rate if rate is not None else self.opening_rate(now)

    def _limits(self, now: float) -> tuple[int, float] | None:
        rate = self.pace(now)
        if rate is None:
            return None
        cap = max(1, math.floor(rate))
        return cap, cap / rate

    def provider_allows_at(self, now: float) -> float:
        """When the provider's own count, as its last headers stated it, allows one more
        request: ``remaining`` when the request sent at ``sent_at`` arrived, plus what its
        limit restores per second since, less this client's sends after that one, must reach
        one. Past ``reset`` (when the provider's allowance is full again) it says nothing."""
        state = self._provider
        if state is None:
            return -math.inf
        sent_at, remaining, per_s, full_at = state
        if now >= full_at:
            return -math.inf
        since = 0
        for t in reversed(self._sent):
            if t <= sent_at:
                break
            since += 1
        return min(full_at, sent_at + (1.0 + since - remaining) / per_s)

    async def acquire(self, *, first: bool = False) -> Send:
        """Wait for this request's turn at the current pace; returns the send, to report its
        departure to."""
        if self.learned is not None:
            self._forget(time.monotonic())
        if self.opening is None and not self.opened and self._gate.idle:
            return self.note_send()
        # The pace may change while waiting (a 429): re-read it every 50 ms at most.
        paced = await pace_send(
            self._gate, first, self._limits, ready=self.provider_allows_at, max_sleep=0.05
        )
        if paced is None:
            return self.note_send()
        send, waited = paced
        self.on_send(send.granted, waited=waited)
        return send

    def on_send(self, now: float, *, waited: bool) -> None:
        """A paced send went at ``now``; ``waited``: it had to wait for the pace (the pace,
        not the work at hand, is what holds the run back)."""
        self._log_send(now)
        if not self.opened:
            self._log_opening(now)
        if not waited:
            self._held_since = None
        elif self._held_since is None:
            self._held_since = now

    def _log_opening(self, now: float) -> None:
        """A send before any pace was learned: the sending rate is what the first 429 goes
        by."""
        self._sends.append(now)
        while self._sends[0] < now - self.window_s:
            self._sends.popleft()

    def _log_send(self, now: float) -> None:
        self._sent.append(now)
        while self._sent[0] < now - self.log_s:
            self._sent.popleft()

    def note_send(self) -> Send:
        """An unpaced send: until a pace is set, the sending rate is what a 429 goes by. It
        counts in the window the pace is kept over once set (a provider counts it too)."""
        now = time.monotonic()
        self._log_opening(now)
        self.window.count(now, self.log_s)  # forget what no window will count again
        self._log_send(now)
        return self.window.admit(now)

    def on_answer(self, info: RateLimitInfo | None = None, *, sent_at: float | None = None) -> None:
        """The provider answered (anything but a 429) the request sent at ``sent_at``
        (``time.monotonic()``): count it; read its rate-limit headers."""
        now = time.monotonic()
        if self._first_answer is None:
            self._first_answer = now
        self._answers.append(now)
        self._expire(now)
        self._read(info, sent_at)

    def _read(self, info: RateLimitInfo | None, sent_at: float | None = None) -> None:
        if info is None or not info.limit:
            return
        self.stated = info.limit / 60.0
        if sent_at is None or info.remaining is None:
            return
        if self._provider is not None and self._provider[0] >= sent_at:
            return  # a reply to an older request says less of the provider's count now
        reset = info.reset_s if info.reset_s is not None else self.window_s
        self._provider = (sent_at, info.remaining, self.stated, sent_at + reset)

    def _expire(self, now: float) -> None:
        while self._answers and self._answers[0] < now - self.window_s:
            self._answers.popleft()
        while self._refusals and self._refusals[0] < now - self.window_s:
            self._refusals.popleft()

    def _stale(self, now: float) -> bool:
        """Whether sends have waited for the learned pace ``forget_s`` without a 429 taken for
        the limit's: probed up to ``probe_max`` times it, the limit did not show."""
        if self.learned is None or self._held_since is None:
            return False
        return now - max(self._held_since, self._last_refusal) >= self.forget_s

    def _forget(self, now: float) -> None:
        """Drop the learned pace once it is stale (:meth:`_stale`)."""
        if self._stale(now):
            self.learned = None
            self._target = None
            self._held_since = None
            self._unmeasured = False
            self.forgotten += 1

    def evident(self, info: RateLimitInfo | None = None, now: float | None = None) -> bool:
        """Whether the 429s show a limit: ``info`` (a 429's headers or body) names one, or the
        429s within the last ``window_s`` are at least ``evidence_refusals`` and more of the
        provider's replies than a provider refusing ``evidence_share`` of them at random would
        send but once in a thousand (a binomial tail)."""
        if info is not None and (info.limit or info.names_limit):
            return True
        self._expire(time.monotonic() if now is None else now)
        refusals = len(self._refusals)
        replies = refusals + len(self._answers)
        share = self.evidence_share
        if refusals < self.evidence_refusals or refusals < share * replies:
            return False
        return _binomial_tail(refusals, replies, share) < _EVIDENCE_ALPHA

    def answered(self, now: float | None = None) -> float | None:
        """The provider's answers per second over the last ``window_s`` (``None``: none)."""
        now = time.monotonic() if now is None else now
        self._expire(now)
        if not self._answers or self._first_answer is None:
            return None
        span = min(self.window_s, now - self._first_answer)
        if span < 0.1 * self.window_s or len(self._answers) < 4:
            return None  # too few answers to measure a rate
        return len(self._answers) / span

    def on_rate_limit(
        self, *, sent_at: float | None = None, info: RateLimitInfo | None = None
    ) -> None:
        """A request sent at ``sent_at`` (``time.monotonic()``) got a 429: the pace is cut
        when the 429s show a limit (:meth:`evident`) or the run sits at a learned pace;
        otherwise it is noise, and only the request waits."""
        now = time.monotonic()
        self.refused += 1
        self._refusals.append(now)
        self._forget(now)
        self._read(info, sent_at)
        # Paced, with sends waiting for the pace, the run sits at it: a 429 then is the
        # limit's as the probe finds it (a probe 10% over a limit of 20 a second meets two
        # in a second, too few to tell from noise, and would be forgotten, then met again
        # unpaced, at a third of the calls refused).
        at_pace = self.learned is not None and self._held_since is not None
        if not at_pace and not self.evident(info, now):
            self.ignored += 1
            return
        self._last_refusal = now
        current = self.rate(now)
        answered = self.answered(now)
        if (sent_at is not None and sent_at < self._last_decrease) or (
            now - self._last_decrease < self.cooldown_s
        ):
            # Part of the congestion already acted on: no further cut. But when that cut
            # had no measured acceptance to go by (the opening burst's sending rate, before
            # enough answers were counted), each 429 of the event brings the pace down to
            # the provider's answers as they are measured.
            if self._unmeasured and answered is not None and current is not None:
                if answered < current:
                    self.learned = max(answered, 1.0 / 60.0)
                    self._learned_at = now
            return
        if current is None and len(self._sends) >= 4:
            # The first 429, maybe before any reply: the unpaced sending rate was too much.
            current = len(self._sends) / max(now - self._sends[0], 0.1 * self.window_s)
        candidates = [
            r for r in (answered, None if current is None else current * self.backoff) if r
        ]
        if not candidates:
            return  # nothing to go by yet: the in-flight limit and the backoff act alone
        # A pace that was set (not the opening burst's) and that the provider mostly took is
        # near its limit: climb back close to it within recover_s rather than at 1% a second.
        paced = self.learned is not None or self.stated is not None
        self._last_decrease = now
        self._unmeasured = answered is None
        self.learned = max(min(candidates), 1.0 / 60.0)
        took = answered is not None and current is not None and answered >= 0.9 * current
        self._target = (
            self.recover * min(current, answered)
            if paced and took and current and answered
            else None
        )
        self._learned_at = now
        self.decreases += 1


# How unlikely, for refusals at random, the 429s that count as a limit's must be.
_EVIDENCE_ALPHA = 1e-3


def _binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), for ``k >= n * p`` (the terms then fall from the
    first), summed in floating point from the first term, taken in logs so a large ``n``
    does not underflow it."""
    if k > n:
        return 0.0
    if p <= 0.0:
        return 0.0 if k > 0 else 1.0
    log_first = (
        math.lgamma(n + 1)
        - math.lgamma(k + 1)
        - math.lgamma(n - k + 1)
        + k * math.log(p)
        + (n - k) * math.log1p(-p)
    )
    term = math.exp(log_first)
    total = 0.0
    odds = p / (1.0 - p)
    for i in range(k, n + 1):
        total += term
        term *= (n - i) / (i + 1) * odds
        if term <= total * 1e-12:
            break
    return min(1.0, total)
