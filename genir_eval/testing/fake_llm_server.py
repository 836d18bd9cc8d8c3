"""A local fake LLM server speaking the OpenAI and Anthropic HTTP protocols, for tests and benchmarks.

It listens on 127.0.0.1 (a random free port by default) and answers

- ``POST /v1/chat/completions`` (OpenAI chat completions, with optional logprobs),
- ``POST /v1/messages`` (Anthropic messages),
- ``GET /_stats`` (the counters below, as JSON) and ``POST /_reset`` (zero them),

checking the request shape (model, messages, the auth headers: ``Authorization: Bearer`` for
OpenAI; ``x-api-key`` or a bearer token plus ``anthropic-version`` for Anthropic). Replies are scripted by a
callable ``reply(FakeRequest) -> str | ScriptedReply | Fault`` (default: a fixed text; a
:class:`ScriptedReply` also scripts the OpenAI token logprobs), and faults are
injected by probability (:class:`FaultPlan`) or by a script (a queue consumed one per
request): latency, 429 with ``Retry-After``, 429 ``insufficient_quota``, 500, 503, 529, 400,
dropped connections, malformed bodies, hangs.

``rate_limit_rpm`` makes it enforce a request rate as the hosted APIs do: a token bucket
refilled at ``rpm / 60`` per second holding at most ``rate_limit_burst_s`` seconds of it
(a request arriving at an empty bucket gets a 429 with ``retry-after-ms`` and
``retry-after``, and uses no token). With ``rate_limit_headers`` every reply carries the
provider's rate-limit headers: OpenAI's ``x-ratelimit-limit-requests`` (per minute),
``x-ratelimit-remaining-requests`` and ``x-ratelimit-reset-requests`` (a duration such as
``1s`` or ``6m0s`` until the bucket is full), Anthropic's ``anthropic-ratelimit-requests-limit``,
``-remaining`` and ``-reset`` (an RFC 3339 time).

The server is a minimal HTTP/1.1 implementation on asyncio streams with keep-alive: one
event loop in a background thread carries thousands of connections at low CPU, so it can
hold >= 256 requests in flight. Use it as a context manager::

    with FakeLLMServer(reply=lambda req: '{"label": 1}', latency=0.05) as server:
        provider = OpenAIProvider(model="m", base_url=server.openai_base_url,
                                  api_key=server.api_key)

:class:`FakeLLMServerProcess` runs the same server in a child process (for benchmarks, so
the server's CPU is not charged to the client); read its counters with ``stats()``.

What a test scripts and what the server counts live in :mod:`.fake_llm_script`, what it puts
on the wire besides the reply (rate-limit headers, logprobs, error bodies) in
:mod:`.fake_llm_wire`; their names are importable from here.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import random
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from genir_eval.testing.fake_llm_script import (  # noqa: F401 - importable from here as before
    ALL_FAULTS,
    FakeRequest,
    Fault,
    FaultKind,
    FaultPlan,
    ScriptedReply,
    ServerStats,
    _content_text,
)
from genir_eval.testing.fake_llm_wire import (  # noqa: F401 - importable from here as before
    _REASONS,
    _Bucket,
    _duration,
    _error_body,
    _fake_logprobs,
    _scripted_logprobs,
    default_reply,
)

__all__ = [
    "FaultKind",
    "Fault",
    "FaultPlan",
    "FakeRequest",
    "ScriptedReply",
    "FakeLLMServer",
    "FakeLLMServerProcess",
    "ServerStats",
]


class _Address:
    """Where clients reach a fake server listening on ``host:port``."""

    host: str
    port: int

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url


class FakeLLMServer(_Address):
    """The fake server, run on its own event loop in a background thread."""

    def __init__(
        self,
        *,
        reply: Callable[[FakeRequest], str | Fault] = default_reply,
        latency: float | Callable[[FakeRequest], float] = 0.0,
        faults: FaultPlan | None = None,
        script: Iterable[Fault | str | None] = (),
        api_key: str = "sk-test-fake-key",
        host: str = "127.0.0.1",
        port: int = 0,
        record_prompts: bool = True,
        rate_limit_rpm: float | None = None,
        rate_limit_burst_s: float = 1.0,
        rate_limit_headers: bool = True,
    ) -> None:
        self.reply = reply
        self.latency = latency
        self.faults = faults or FaultPlan()
        self.script: deque[Fault | None] = deque(
            Fault(item) if isinstance(item, str) else item for item in script
        )
        self.api_key = api_key
        self.host = host
        self.port = port
        self.record_prompts = record_prompts
        self.stats = ServerStats()
        self.bucket = (
            _Bucket(rate_limit_rpm, rate_limit_burst_s) if rate_limit_rpm is not None else None
        )
        self.rate_limit_headers = rate_limit_headers
        self._rng = random.Random(self.faults.seed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[Any]] = set()
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._start_error: BaseException | None = None
        self._ids = 0

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> FakeLLMServer:
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name="fake-llm-server", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._start_error is not None:
            raise RuntimeError("fake LLM server failed to start") from self._start_error
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(lambda: asyncio.ensure_future(self._shutdown()))
        thread.join(10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset_stats(self) -> None:
        self.stats = ServerStats()

    def push_script(self, items: Iterable[Fault | str | None]) -> None:
        self.script.extend(Fault(item) if isinstance(item, str) else item for item in items)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        self._stopping = asyncio.Event()
        try:
            self._server = loop.run_until_complete(
                asyncio.start_server(self._handle, self.host, self.port, backlog=4096)
            )
            self.port = self._server.sockets[0].getsockname()[1]
        except BaseException as error:  # noqa: BLE001 - reported to start()
            self._start_error = error
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _shutdown(self) -> None:
        assert self._server is not None and self._stopping is not None
        self._stopping.set()
        self._server.close()
        # Aborting the transports ends every handler by itself (a read or a hang returns);
        # cancelling them instead would make asyncio's stream callback log the cancellation.
        for writer in list(self._writers):
            writer.transport.abort()
        handlers = [t for t in self._handlers if not t.done()]
        if handlers:
            await asyncio.wait(handlers, timeout=5)
        await self._server.wait_closed()
        asyncio.get_running_loop().stop()

    # -- HTTP ----------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
            task.add_done_callback(self._handlers.discard)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                try:
                    method, target, _version = lines[0].split(" ", 2)
                except ValueError:
                    return
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0") or 0)
                body = await reader.readexactly(length) if length else b""
                keep = await self._dispatch(method, target.split("?", 1)[0], headers, body, writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._writers.discard(writer)
            writer.close()

    def _send(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: bytes,
        *,
        content_type: str = "application/json",
        extra: Mapping[str, str] | None = None,
    ) -> None:
        head = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            f"Content-Type: {content_type}",
            f"Content-Length: {len(payload)}",
            "Connection: keep-alive",
        ]
        for name, value in (extra or {}).items():
            head.append(f"{name}: {value}")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)

    async def _dispatch(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        body: bytes,
        writer: asyncio.StreamWriter,
    ) -> bool:
        if path == "/_stats" and method == "GET":
            self._send(writer, 200, json.dumps(self.stats.to_json()).encode())
            await writer.drain()
            return True
        if path == "/_reset" and method == "POST":
            self.reset_stats()
            self._send(writer, 200, b"{}")
            await writer.drain()
            return True
        if path not in ("/v1/chat/completions", "/v1/messages"):
            self._send(writer, 404, _error_body("openai", "not_found", f"no route {path}"))
            await writer.drain()
            return True
        if method != "POST":
            self._send(writer, 405, b"{}")
            await writer.drain()
            return True
        protocol: Literal["openai", "anthropic"] = (
            "openai" if path == "/v1/chat/completions" else "anthropic"
        )
        stats = self.stats
        stats.total += 1
        stats.arrivals.append(time.monotonic())
        stats.in_flight += 1
        stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        try:
            return await self._completion(protocol, headers, body, writer)
        finally:
            stats.in_flight -= 1

    def _next_fault(self) -> Fault | None:
        if self.script:
            return self.script.popleft()
        plan = self.faults
        if plan.rate > 0 and self._rng.random() < plan.rate:
            return Fault(self._rng.choice(plan.kinds), retry_after=plan.retry_after)
        return None

    async def _completion(
        self,
        protocol: Literal["openai", "anthropic"],
        headers: dict[str, str],
        body: bytes,
        writer: asyncio.StreamWriter,
    ) -> bool:
        stats = self.stats
        problem, request = self._check(protocol, headers, body)
        if problem is not None:
            status, kind, message = problem
            stats.shape_errors.append(message)
            stats.by_status[status] += 1
            self._send(writer, status, _error_body(protocol, kind, message))
            await writer.drain()
            return True
        assert request is not None
        if self.record_prompts:
            stats.by_prompt[request.last_user_text] += 1
        limit_headers: dict[str, str] = {}
        now = time.monotonic()
        if self.bucket is not None:
            wait = self.bucket.take(now)
            if self.rate_limit_headers:
                limit_headers = self.bucket.headers(protocol, now)
            if wait is not None:
                stats.rate_limited += 1
                stats.by_status[429] += 1
                limit_headers["retry-after-ms"] = str(max(1, round(wait * 1000)))
                limit_headers["retry-after"] = str(max(1, int(wait + 0.999)))
                message = "Rate limit reached for requests (fake)"
                self._send(
                    writer,
                    429,
                    _error_body(protocol, "rate_limit_exceeded", message),
                    extra=limit_headers,
                )
                await writer.drain()
                return True
        stats.admitted.append(now)
        fault = self._next_fault()
        text: str | None = None
        scripted: ScriptedReply | None = None
        if fault is None:
            answer = self.reply(request)
            if isinstance(answer, Fault):
                fault = answer
            elif isinstance(answer, ScriptedReply):
                scripted, text = answer, answer.text
            else:
                text = answer
        delay = self.latency(request) if callable(self.latency) else self.latency
        if delay > 0:
            await asyncio.sleep(delay)
        if fault is not None:
            stats.by_fault[fault.kind] += 1
            return await self._fault(protocol, fault, writer)
        assert text is not None
        payload = self._success(protocol, request, text, scripted)
        stats.by_status[200] += 1
        stats.answered_ok += 1
        self._send(writer, 200, payload, extra=limit_headers)
        await writer.drain()
        return True

    async def _fault(
        self, protocol: Literal["openai", "anthropic"], fault: Fault, writer: asyncio.StreamWriter
    ) -> bool:
        kind = fault.kind
        if kind == "drop":
            writer.transport.abort()
            return False
        if kind == "hang":
            assert self._stopping is not None
            await self._stopping.wait()
            return False
        if kind == "endless":
            await self._endless(writer)
            return False
        if kind == "malformed":
            self.stats.by_status[200] += 1
            self._send(writer, 200, b'{"choices": [ {"message": ', content_type="application/json")
            await writer.drain()
            return True
        extra: dict[str, str] = {}
        if kind == "rate_limit":
            status, err, message = 429, "rate_limit_exceeded", "Rate limit reached (fake)"
            if fault.retry_after is not None:
                if fault.retry_after_ms:
                    extra["retry-after-ms"] = str(int(fault.retry_after * 1000))
                else:
                    extra["retry-after"] = f"{fault.retry_after:g}"
        elif kind == "quota":
            status, err = 429, "insufficient_quota"
            message = "You exceeded your current quota (fake)"
        elif kind == "server_error":
            status, err, message = 500, "server_error", "internal error (fake)"
        elif kind == "unavailable":
            status, err, message = 503, "service_unavailable", "service unavailable (fake)"
        elif kind == "overloaded":
            status, err, message = 529, "overloaded_error", "Overloaded (fake)"
        elif kind == "bad_request":
            status, err, message = 400, "invalid_request_error", "bad request (fake)"
        elif kind == "context_length":
            status, err = 400, "context_length_exceeded"
            message = "This model's maximum context length is 8 tokens (fake)"
        else:
            status, err, message = 401, "invalid_api_key", "Incorrect API key provided (fake)"
        if fault.message is not None:
            message = fault.message
        self.stats.by_status[status] += 1
        self._send(writer, status, _error_body(protocol, err, message), extra=extra)
        await writer.drain()
        return True

    async def _endless(self, writer: asyncio.StreamWriter) -> None:
        """A 200 whose chunked body never ends: the opening of a reply, then the same 64 KiB
        chunk until the client hangs up (or the server stops)."""
        self.stats.by_status[200] += 1
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        opening = b'{"choices": [{"message": {"role": "assistant", "content": "'
        filler = b"endless " * 8192
        chunk = b"%x\r\n%s\r\n" % (len(filler), filler)
        writer.write(b"%x\r\n%s\r\n" % (len(opening), opening))
        try:
            while self._stopping is None or not self._stopping.is_set():
                writer.write(chunk)
                await writer.drain()
                self.stats.endless_bytes += len(filler)
        except (ConnectionError, RuntimeError):
            return

    def _check(
        self, protocol: Literal["openai", "anthropic"], headers: dict[str, str], body: bytes
    ) -> tuple[tuple[int, str, str] | None, FakeRequest | None]:
        if protocol == "openai":
            auth = headers.get("authorization", "")
            self.stats.auth_values.add(auth)
            if auth != f"Bearer {self.api_key}":
                return (401, "invalid_api_key", "missing or wrong Authorization bearer"), None
        else:
            # Anthropic's x-api-key, or the bearer token that recent SDK releases send.
            key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix(
                "Bearer "
            )
            self.stats.auth_values.add(key)
            if key != self.api_key:
                return (401, "authentication_error", "missing or wrong x-api-key"), None
            if not headers.get("anthropic-version"):
                return (400, "invalid_request_error", "missing anthropic-version header"), None
        try:
            data = json.loads(body)
        except ValueError:
            return (400, "invalid_request_error", "body is not JSON"), None
        if not isinstance(data, dict):
            return (400, "invalid_request_error", "body is not a JSON object"), None
        model = data.get("model")
        messages = data.get("messages")
        if not isinstance(model, str) or not model:
            return (400, "invalid_request_error", "model is required"), None
        if not isinstance(messages, list) or not messages:
            return (400, "invalid_request_error", "messages must be a non-empty list"), None
        allowed = {"system", "user", "assistant", "developer"}
        if protocol == "anthropic":
            allowed = {"user", "assistant"}
            if not isinstance(data.get("max_tokens"), int):
                return (400, "invalid_request_error", "max_tokens is required"), None
        for message in messages:
            if not isinstance(message, dict) or message.get("role") not in allowed:
                return (400, "invalid_request_error", f"bad message {message!r}"), None
            if "content" not in message:
                return (400, "invalid_request_error", "message without content"), None
        system = data.get("system") if protocol == "anthropic" else None
        if system is not None and not isinstance(system, str):
            system = _content_text(system)
        return None, FakeRequest(
            protocol=protocol,
            model=model,
            messages=tuple(messages),
            system=system,
            body=data,
            headers=headers,
        )

    def _success(
        self,
        protocol: Literal["openai", "anthropic"],
        request: FakeRequest,
        text: str,
        scripted: ScriptedReply | None = None,
    ) -> bytes:
        self._ids += 1
        prompt_chars = sum(len(_content_text(m.get("content"))) for m in request.messages)
        prompt_chars += len(request.system or "")
        input_tokens = max(1, prompt_chars // 4)
        output_tokens = max(1, len(text) // 4)
        if protocol == "anthropic":
            return json.dumps(
                {
                    "id": f"msg_fake_{self._ids}",
                    "type": "message",
                    "role": "assistant",
                    "model": request.model,
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
                }
            ).encode()
        logprobs = None
        if request.body.get("logprobs"):
            top_n = int(request.body.get("top_logprobs") or 0)
            if scripted is not None and scripted.logprobs is not None:
                content = _scripted_logprobs(scripted.logprobs, top_n)
            else:
                content = _fake_logprobs(text, top_n)
            logprobs = {"content": content, "refusal": None}
        return json.dumps(
            {
                "id": f"chatcmpl-fake-{self._ids}",
                "object": "chat.completion",
                "created": 0,
                "model": request.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text, "refusal": None},
                        "finish_reason": "stop",
                        "logprobs": logprobs,
                    }
                ],
                "usage": {
                    "prompt_tokens": input_tokens,
                    "completion_tokens": output_tokens,
                    "total_tokens": input_tokens + output_tokens,
                },
            }
        ).encode()


def _serve_child(conn: Any, kwargs: dict[str, Any]) -> None:
    server = FakeLLMServer(**kwargs).start()
    conn.send(server.port)
    conn.recv()  # wait for the stop signal
    server.stop()
    conn.send("stopped")


class FakeLLMServerProcess(_Address):
    """The fake server in a child process (spawned), so its CPU is not the client's.

    Takes the same keyword arguments as :class:`FakeLLMServer`; a custom ``reply`` must be
    picklable (a module-level function).
    """

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.api_key: str = kwargs.get("api_key", "sk-test-fake-key")
        self.host: str = kwargs.get("host", "127.0.0.1")
        self.port = 0
        self._process: Any = None
        self._conn: Any = None

    def start(self) -> FakeLLMServerProcess:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self._process = ctx.Process(target=_serve_child, args=(child, self.kwargs), daemon=True)
        self._process.start()
        if not parent.poll(30):
            self._process.kill()
            raise RuntimeError("fake LLM server process did not start")
        self.port = parent.recv()
        self._conn = parent
        return self

    def stats(self) -> ServerStats:
        with urllib.request.urlopen(f"{self.base_url}/_stats", timeout=30) as response:
            return ServerStats.from_json(json.load(response))

    def reset_stats(self) -> None:
        req = urllib.request.Request(f"{self.base_url}/_reset", data=b"", method="POST")
        with urllib.request.urlopen(req, timeout=30):
            pass

    def stop(self) -> None:
        if self._process is None:
            return
        try:
            self._conn.send("stop")
            self._conn.poll(10)
        finally:
            self._process.join(10)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
            self._conn.close()
            self._process = None

    def __enter__(self) -> FakeLLMServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
