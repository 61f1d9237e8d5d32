"""A player behind any OpenAI-compatible ``/chat/completions`` endpoint (frontier APIs,
``mlx_lm.server``, vLLM, llama.cpp, ...).

One file (over 500 lines) because requests, retries, budgets, caching and parsing share one settings object and one spend account.

The API key is read from an environment variable at call time and never written to logs,
episode records or error messages. Requests time out, are retried with exponential backoff on
429, 5xx and connection errors (after the last retry such an outage is an ``unavailable`` fault:
the provider's, not the player's), run at most ``concurrency`` at once to one endpoint across the
whole run (:mod:`arena_players.endpoints`), stop at a spending cap
(calls or tokens per player), and are cached by the full request (in memory, and on disk with
``cache_dir``), so a repeated evaluation costs nothing. Failures raise typed errors; the runner
records them and the illegal-action policy decides what happens next.

``view="transcript"`` sends one growing conversation per seat and episode (the game's
``"transcript"`` view, :mod:`arena_core.transcript`): each request extends the previous one, so
a server's prompt cache applies. The prompt tokens the server reports as cached
(``usage.prompt_tokens_details.cached_tokens``; also DeepSeek's ``prompt_cache_hit_tokens``) are
recorded per decision (``cached_tokens``) and in :class:`Spend`, and priced at
``price_cached_prompt`` when prices are set.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from arena_core.errors import ConfigError, PlayerError
from arena_core.faults import CapExhausted, FaultKind
from arena_core.game import Game
from arena_core.outputs import scrub_and_cut
from arena_core.players import BasePlayer, Decision, Move

from .endpoints import EndpointSlots
from .llm_common import VIEW_FIELD_DESCRIPTION, PromptView, ViewPrompts, player_settings, retry_feedback, text_record

#: a JSON object as ``json.loads`` gives it (request bodies, replies, cached responses)
JSONObject = dict[str, Any]


class ProviderError(PlayerError):
    """The endpoint failed: an HTTP error, a timeout, a refused connection, or a malformed reply."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        fault: FaultKind = FaultKind.ERROR,
    ):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after  # seconds the server asked to wait (HTTP Retry-After), if it said
        self.fault = fault  # decided here: a timeout is TIMEOUT, the endpoint down UNAVAILABLE (arena_core.faults)


class BudgetExceededError(CapExhausted):
    """The player's spending cap (calls or tokens) is used up (a tournament records it as
    ``cap_exhausted`` and plays none of the entrant's remaining games)."""


class OpenAISettings(BaseModel):
    """Options of :class:`OpenAIPlayer` (also accepted as ``openai:key=value,...``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    api_key_env: str | None = Field(
        default="OPENAI_API_KEY", description="env var holding the key; None or '' sends no key"
    )
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=512, ge=1)
    send_seed: bool = Field(default=True, description="send a per-decision seed (servers that honour it replay)")
    timeout_s: float = Field(default=60.0, gt=0, description="the whole request: connect, wait, and read the reply")
    max_retries: int = Field(default=3, ge=0, description="HTTP retries on 429, 5xx, timeouts and connection errors")
    backoff_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    concurrency: int = Field(
        default=4,
        ge=1,
        description="requests in flight to this base_url and model, across every player, thread and process of the run",
    )
    max_calls: int | None = Field(default=None, ge=0, description="spending cap: HTTP calls (cache hits are free)")
    max_total_tokens: int | None = Field(default=None, ge=0, description="spending cap: prompt + completion tokens")
    cache_dir: str | None = Field(default=None, description="directory for the on-disk response cache")
    retries: int = Field(default=0, ge=0, description="re-asks after an unreadable answer, with feedback")
    record_prompt: Literal["full", "hash", "none"] = Field(
        default="full", description="'full' text (scrubbed of secrets when written), its 'hash' and length, or 'none'"
    )
    record_response: Literal["full", "hash", "none"] = "full"
    extra_body: dict[str, Any] = Field(default_factory=dict, description="merged into every request body")
    view: PromptView = Field(default="snapshot", description=VIEW_FIELD_DESCRIPTION)
    max_conversations: int = Field(
        default=256, ge=1, description="transcript view: seat conversations kept (least recently used dropped)"
    )
    price_prompt: float | None = Field(
        default=None, ge=0, description="price per million uncached prompt tokens (None: no cost accounting)"
    )
    price_cached_prompt: float | None = Field(
        default=None, ge=0, description="price per million cached prompt tokens (None: the uncached price)"
    )
    price_completion: float | None = Field(default=None, ge=0, description="price per million completion tokens")


@dataclass
class Spend:
    """What the player has spent (hits of its own response cache excluded). ``prompt_tokens``
    counts every prompt token the server billed; ``cached_prompt_tokens`` those of them the
    server read from its prompt cache (as it reports them)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    cached_prompt_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def uncached_prompt_tokens(self) -> int:
        return self.prompt_tokens - self.cached_prompt_tokens

    def cost(self, settings: OpenAISettings) -> float | None:
        """The spend priced by ``settings`` (per million tokens; cached prompt tokens at
        ``price_cached_prompt``), or None when no prompt price is set."""
        return token_cost(settings, self.prompt_tokens, self.cached_prompt_tokens, self.completion_tokens)


def token_cost(settings: OpenAISettings, prompt: int, cached: int, completion: int) -> float | None:
    """The price of ``prompt`` tokens (``cached`` of them from the server's prompt cache) and
    ``completion`` tokens under ``settings``' prices per million tokens; None without a prompt price."""
    s = settings
    if s.price_prompt is None:
        return None
    cached_price = s.price_prompt if s.price_cached_prompt is None else s.price_cached_prompt
    completion_price = s.price_completion or 0.0
    return ((prompt - cached) * s.price_prompt + cached * cached_price + completion * completion_price) / 1e6


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    cached: bool
    http_attempts: int
    cached_prompt_tokens: int = 0  # prompt tokens the server read from its prompt cache (as it reports)


class ResponseCache:
    """Responses keyed by the SHA-256 of the full request (URL and body; never the key)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None):
        self._memory: dict[str, JSONObject] = {}
        self._dir = Path(directory) if directory else None
        self._lock = threading.Lock()
        if self._dir is not None:
            self._dir.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def key(url: str, body: JSONObject) -> str:
        return hashlib.sha256(
            json.dumps({"url": url, "body": body}, sort_keys=True, ensure_ascii=False).encode()
        ).hexdigest()

    def get(self, key: str) -> JSONObject | None:
        with self._lock:
            if key in self._memory:
                return self._memory[key]
        if self._dir is not None:
            path = self._dir / f"{key}.json"
            if path.exists():
                data: JSONObject = json.loads(path.read_text(encoding="utf-8"))
                with self._lock:
                    self._memory[key] = data
                return data
        return None

    def put(self, key: str, response: JSONObject) -> None:
        with self._lock:
            self._memory[key] = response
        if self._dir is not None:
            tmp = self._dir / f".{key}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp.write_text(json.dumps(response), encoding="utf-8")
            os.replace(tmp, self._dir / f"{key}.json")


class OpenAIPlayer(BasePlayer):
    """Free-text play through an OpenAI-compatible chat endpoint; answers are read by the
    game's parser. Options are :class:`OpenAISettings` fields."""

    name = "openai"
    mode = "free"  # free text, read by the game's parser
    concurrent_act = True  # act may run on several threads at once (arena_players.batched.play_pipelined)

    def __init__(self, seed: int = 0, *, sleep: Callable[[float], None] = time.sleep, **options: Any):
        super().__init__(seed)
        literal = sorted(
            k for k in options if k.lower().replace("-", "_") in ("api_key", "key", "token", "authorization", "secret")
        )
        if literal:
            raise ConfigError(
                f"OpenAIPlayer: a literal {literal[0]!r} is refused (it would be written to results, records and errors); "
                "put the key in an environment variable and pass api_key_env='NAME'"
            )
        self.settings = player_settings(OpenAISettings, "OpenAIPlayer", options)
        self.name = f"openai:{self.settings.model}"
        self.spend = Spend()
        self.cache = ResponseCache(self.settings.cache_dir)
        self._slots = EndpointSlots(self.settings.base_url, self.settings.model, self.settings.concurrency)
        self._sleep = sleep
        self._last_ply: dict[tuple[int, int], tuple[int, int]] = {}
        self._ply_lock = threading.Lock()
        self.prompts = ViewPrompts(self.settings.view, max_conversations=self.settings.max_conversations)

    # -- the Player protocol
    def begin_episode(self, game: Game[Any, Any], seat: int, episode_seed: int) -> None:
        with self._ply_lock:
            self._last_ply.pop((int(episode_seed), int(seat)), None)
        self.prompts.begin_episode(game, seat, episode_seed)

    def act(self, decision: Decision) -> Move:
        return self._decide(decision, self._attempt(decision))

    def act_batch(self, decisions: Sequence[Decision]) -> list[Move | BaseException]:
        """Decide concurrently (at most ``concurrency`` requests in flight to the endpoint); a failed decision
        comes back as its exception, which the batched runner records."""
        attempts = [self._attempt(d) for d in decisions]

        def one(args: tuple[Decision, int]) -> Move | BaseException:
            decision, attempt = args
            try:
                return self._decide(decision, attempt)
            except Exception as exc:
                return exc

        # more threads than slots: a decision waiting out a backoff does not keep another from a free slot
        with ThreadPoolExecutor(max_workers=max(1, min(len(decisions), 8 * self.settings.concurrency))) as pool:
            return list(pool.map(one, zip(decisions, attempts)))

    def preflight(self) -> None:
        """Before a tournament: the key is set, and the endpoint answers one cheap request
        (``GET /models``; free, no tokens). Raises a one-line :class:`ProviderError` or
        :class:`ConfigError` without the key."""
        key = self._api_key()
        url = self.settings.base_url.rstrip("/") + "/models"
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        req = urllib.request.Request(url, headers=headers, method="GET")
        timeout = min(self.settings.timeout_s, 15.0)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                resp.read(1 << 16)
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):
                raise ProviderError(
                    f"{url} refused the key in {self.settings.api_key_env} (HTTP {exc.code})", status=exc.code
                ) from None
            return  # the endpoint answers (a server without a model list, e.g. mlx_lm.server offline, says 404 or 5xx)
        except TimeoutError:
            raise ProviderError(f"{url} did not answer within {timeout:g} s", fault=FaultKind.TIMEOUT) from None
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ProviderError(
                scrub_and_cut(f"cannot reach {url}: {type(reason).__name__}: {reason}", 300, [key]),
                fault=FaultKind.UNAVAILABLE,
            ) from None

    # -- internals
    def _attempt(self, decision: Decision) -> int:
        key = (decision.episode_seed, decision.seat)
        with self._ply_lock:
            ply, count = self._last_ply.get(key, (-1, -1))
            count = count + 1 if ply == decision.ply else 0
            self._last_ply[key] = (decision.ply, count)
        return count

    def _decide(self, decision: Decision, attempt: int) -> Move:
        """One decision: the view's messages (the whole snapshot prompt, or the seat's growing
        conversation), up to ``retries`` re-asks with feedback appended as extra turns, then the
        final answer recorded in the conversation. In the transcript view ``prompt`` in the
        telemetry is the messages this decision added (the conversation before it was recorded
        with the earlier decisions)."""
        started = time.perf_counter()
        transcript = self.settings.view == "transcript"
        prompt = self.prompts.prompt(decision)
        messages = prompt.messages
        prompt_text = json.dumps(prompt.new_messages() if transcript else messages, ensure_ascii=False)
        responses: list[str] = []
        usage = {"tokens_in": 0, "cached_tokens": 0, "tokens_out": 0, "http_attempts": 0, "cached": True}
        view_info: dict[str, Any] = {"view": self.settings.view}
        if transcript:
            view_info.update(conversation_turn=prompt.turn, conversation_messages=len(messages))
        for round_ in range(self.settings.retries + 1):
            seed = int(decision.rng("openai", self.seed, attempt, round_).integers(0, 2**31 - 1))
            completion = self.complete(messages, seed=seed)
            responses.append(completion.text)
            usage["tokens_in"] += completion.prompt_tokens
            usage["cached_tokens"] += completion.cached_prompt_tokens
            usage["tokens_out"] += completion.completion_tokens
            usage["http_attempts"] += completion.http_attempts
            usage["cached"] = usage["cached"] and completion.cached
            parsed = self.prompts.parse(decision, completion.text)
            cost = token_cost(self.settings, usage["tokens_in"], usage["cached_tokens"], usage["tokens_out"])
            telemetry = {
                "model": self.settings.model,
                "mode": "free",
                **view_info,
                "temperature": self.settings.temperature,
                **usage,
                **({"cost": round(cost, 9)} if cost is not None else {}),
                "latency_s": round(time.perf_counter() - started, 6),
                "finish_reason": completion.finish_reason,
                "retries": round_,
                "attempt": attempt,
                **parsed.telemetry(),
                **text_record("prompt", prompt_text, self.settings.record_prompt),
                **text_record("response", completion.text, self.settings.record_response),
            }
            if len(responses) > 1 and self.settings.record_response == "full":
                telemetry["earlier_responses"] = responses[:-1]
            if not parsed.default_used:
                self.prompts.answered(prompt, completion.text)
                return Move(parsed.action, telemetry)
            if round_ == self.settings.retries:
                self.prompts.answered(prompt, completion.text)
                telemetry["parse_detail"] = parsed.detail
                return Move(completion.text, telemetry)  # the runner's policy decides
            prompt = self.prompts.retry(prompt, completion.text, retry_feedback(prompt.legal, parsed.detail))
            messages = prompt.messages
        raise AssertionError("unreachable")  # pragma: no cover

    def request_body(self, messages: list[dict[str, str]], *, seed: int | None) -> dict[str, Any]:
        s = self.settings
        body: dict[str, Any] = {
            "model": s.model,
            "messages": messages,
            "temperature": s.temperature,
            "top_p": s.top_p,
            "max_tokens": s.max_tokens,
        }
        if s.send_seed and seed is not None:
            body["seed"] = seed
        body.update(s.extra_body)
        return body

    def complete(self, messages: list[dict[str, str]], *, seed: int | None = None) -> Completion:
        """One chat completion: from the cache, or over HTTP within the spending cap."""
        url = self.settings.base_url.rstrip("/") + "/chat/completions"
        body = self.request_body(messages, seed=seed)
        key = ResponseCache.key(url, body)
        hit = self.cache.get(key)
        if hit is not None:
            with self.spend._lock:
                self.spend.cache_hits += 1
            return _read_completion(hit, cached=True, attempts=0)
        self._reserve_call()
        data, attempts = self._post_with_retries(url, body)
        completion = _read_completion(data, cached=False, attempts=attempts)
        with self.spend._lock:
            self.spend.prompt_tokens += completion.prompt_tokens
            self.spend.cached_prompt_tokens += completion.cached_prompt_tokens
            self.spend.completion_tokens += completion.completion_tokens
        self.cache.put(key, data)
        return completion

    def _reserve_call(self) -> None:
        s = self.settings
        with self.spend._lock:
            if s.max_calls is not None and self.spend.calls >= s.max_calls:
                raise BudgetExceededError(f"spending cap reached: {self.spend.calls} calls of max_calls={s.max_calls}")
            if s.max_total_tokens is not None and self.spend.total_tokens >= s.max_total_tokens:
                raise BudgetExceededError(
                    f"spending cap reached: {self.spend.total_tokens} tokens of max_total_tokens={s.max_total_tokens}"
                )
            self.spend.calls += 1

    def _api_key(self) -> str | None:
        env = self.settings.api_key_env
        if not env:
            return None
        key = os.environ.get(env)
        if not key:
            raise ConfigError(
                f"the API key variable {env} is not set; export it, or pass api_key_env='' for a server that needs no key"
            )
        return key

    def _post_with_retries(self, url: str, body: JSONObject) -> tuple[JSONObject, int]:
        s = self.settings
        key = self._api_key()
        payload = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        attempt = 0
        while True:
            attempt += 1
            try:
                with self._slots.hold():
                    return _post_json(url, payload, headers, s.timeout_s, key), attempt
            except ProviderError as exc:
                if not exc.retryable or attempt > s.max_retries:
                    raise ProviderError(
                        f"{exc} (after {attempt} attempt{'s' if attempt > 1 else ''})",
                        status=exc.status,
                        retryable=exc.retryable,
                        fault=exc.fault,
                    ) from None
                delay = min(s.backoff_max_s, s.backoff_s * 2 ** (attempt - 1))
                if exc.retry_after is not None:
                    delay = min(s.backoff_max_s, max(delay, exc.retry_after))
                self._sleep(delay)


def _scrub(text: str, secret: str | None, limit: int = 500) -> str:
    """``text`` without the key (nor any key-shaped string), then cut to ``limit`` characters:
    scrubbing first, so a cut never leaves a fragment of a key behind."""
    return scrub_and_cut(text, limit, [secret])


def _read_until(resp: Any, deadline: float) -> bytes:
    """The reply body, read in pieces so that a server trickling bytes cannot hold the request
    past ``deadline`` (each wait on the socket is cut to the time left)."""
    sock = getattr(getattr(getattr(resp, "fp", None), "raw", None), "_sock", None)
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        if sock is not None:
            sock.settimeout(left)
        chunk = resp.read1(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _post_json(url: str, payload: bytes, headers: dict[str, str], timeout_s: float, secret: str | None) -> JSONObject:
    """POST and decode JSON; every failure becomes a :class:`ProviderError` without the key."""
    req = urllib.request.Request(url, data=payload, headers=headers, method="POST")
    deadline = time.monotonic() + timeout_s
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            raw = _read_until(resp, deadline)
    except urllib.error.HTTPError as exc:
        try:
            detail = exc.read(1 << 16).decode("utf-8", "replace")
        except Exception:
            detail = ""
        status = int(exc.code)
        ra = exc.headers.get("Retry-After") if exc.headers else None
        try:
            retry_after = float(ra) if ra is not None else None
        except ValueError:
            retry_after = None
        raise ProviderError(
            _scrub(f"HTTP {status} from {url}: {detail}", secret, 300),
            status=status,
            retryable=status == 429 or status >= 500,
            retry_after=retry_after,
            fault=FaultKind.UNAVAILABLE if status == 429 or status >= 500 else FaultKind.ERROR,
        ) from None
    except TimeoutError:
        raise ProviderError(
            f"timed out after {timeout_s} s waiting for {url}", retryable=True, fault=FaultKind.TIMEOUT
        ) from None
    except (urllib.error.URLError, ConnectionError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise ProviderError(
                f"timed out after {timeout_s} s waiting for {url}", retryable=True, fault=FaultKind.TIMEOUT
            ) from None
        raise ProviderError(
            _scrub(f"cannot reach {url}: {type(reason).__name__}: {reason}", secret),
            retryable=True,
            fault=FaultKind.UNAVAILABLE,
        ) from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ProviderError(_scrub(f"malformed reply from {url} (not JSON): {raw[:4096]!r}", secret, 160)) from None
    if not isinstance(data, dict):
        raise ProviderError(f"malformed reply from {url}: a JSON {type(data).__name__}, not an object")
    return data


def _read_completion(data: JSONObject, *, cached: bool, attempts: int) -> Completion:
    try:
        choice = data["choices"][0]
        text = choice["message"]["content"]
        if not isinstance(text, str):
            raise TypeError("content is not text")
    except (KeyError, IndexError, TypeError) as exc:
        raise ProviderError(f"malformed reply: no choices[0].message.content ({type(exc).__name__}: {exc})") from None
    usage = data.get("usage") or {}
    prompt_tokens = _count(usage.get("prompt_tokens"))
    return Completion(
        text=text,
        prompt_tokens=prompt_tokens,
        completion_tokens=_count(usage.get("completion_tokens")),
        finish_reason=str(choice.get("finish_reason") or ""),
        cached=cached,
        http_attempts=attempts,
        cached_prompt_tokens=min(cached_prompt_tokens(usage), prompt_tokens),
    )


def _count(value: Any) -> int:
    """A token count from a reply (0 when missing or not a non-negative number)."""
    try:
        n = int(value or 0)
    except (TypeError, ValueError):
        return 0
    return max(n, 0)


def cached_prompt_tokens(usage: JSONObject) -> int:
    """The prompt tokens a server says it read from its prompt cache: OpenAI's (and
    ``mlx_lm.server``'s, vLLM's) ``prompt_tokens_details.cached_tokens``, else DeepSeek's
    ``prompt_cache_hit_tokens``; 0 when the server says nothing."""
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and details.get("cached_tokens") is not None:
        return _count(details.get("cached_tokens"))
    return _count(usage.get("prompt_cache_hit_tokens"))
