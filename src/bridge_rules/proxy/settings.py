"""Every ``serve`` setting, declared once: its name, type, default, help, the check its value
must pass, and whether a route may set its own. The flags of ``bridge-rules serve``, the
``BRIDGE_RULES_<NAME>`` environment variables, the keys ``--config FILE`` takes, the checks
of :class:`~bridge_rules.proxy.config.ServeSettings` and the settings table of
docs/proxy.md are all made from :data:`SETTINGS`, so adding a setting is one entry here.

Standard library only: ``serve`` judges its options before the server stack is imported.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MiB = 1024 * 1024
ENV_PREFIX = "BRIDGE_RULES"

Check = Callable[[Any], "str | None"]
"""A value's check: None when fit, else the end of a sentence that starts with the flag."""


def at_least_one(value: Any) -> str | None:
    return "must be at least 1" if value < 1 else None


def positive(value: Any) -> str | None:
    return "must be positive" if value <= 0 else None


def zero_means(meaning: str) -> Check:
    def check(value: Any) -> str | None:
        return f"must be 0 ({meaning}) or more" if value < 0 else None

    return check


def port_number(value: Any) -> str | None:
    return "must be from 0 to 65535" if not 0 <= value <= 65535 else None


def directory(value: Any) -> str | None:
    return f"must be a directory, got '{value}'" if value and not os.path.isdir(value) else None


@dataclass(frozen=True)
class Setting:
    """One ``serve`` setting. ``name`` is its parameter name (``max_body_bytes``); the flag
    is ``--max-body-bytes``, the variable ``BRIDGE_RULES_MAX_BODY_BYTES``, and ``--config
    FILE`` takes ``max-body-bytes`` or ``max_body_bytes``."""

    name: str
    type: type
    default: Any
    help: str
    metavar: str | None = None
    repeat: bool = False
    """Given again for each value (``--rules a --rules b``); a list in ``--config FILE``."""
    check: Check | None = None
    route: bool = False
    """A route of ``routes:`` may set its own (docs/proxy.md#routes)."""
    proxy: bool = True
    """A field of :class:`~bridge_rules.proxy.config.ProxyConfig` under the same name."""
    minimum: float | None = None
    """Refused by the flag parser itself below this (typer's ``min``)."""
    shared: bool = False
    """The option every command takes (``--rules``): ``serve`` reuses it as it is."""
    aliases: tuple[str, ...] = ()
    """Former names of the same setting, as a flag and a ``--config`` key (the variable is
    the setting's own only: no former one was ever read): one setting, either name."""

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return f"{ENV_PREFIX}_{self.name.upper()}"

    @property
    def key(self) -> str:
        return self.name.replace("_", "-")

    @property
    def flags(self) -> list[str]:
        """The flag, then each alias's."""
        return [self.flag, *("--" + a.replace("_", "-") for a in self.aliases)]

    def problem(self, value: Any) -> str | None:
        """Why ``value`` cannot be this setting, in a sentence naming the flag, or None."""
        if self.check is None or value is None:
            return None
        why = self.check(value)
        return None if why is None else f"{self.flag} {why}"


_CLAUDE = "With --upstream claude-code: "

SETTINGS: tuple[Setting, ...] = (
    Setting("upstream", str, None, "The anthropic-messages endpoint to forward to, e.g. "
            "https://api.anthropic.com (without /v1), or claude-code to answer with the "
            "Claude Code CLI (docs/claude-code-upstream.md). Required unless every route "
            "of --config names its own.", route=True, proxy=False),
    Setting("rules", str, None, "A rule file, a directory of them, or a packaged profile "
            "name; repeat to layer. Default: the packaged default rules.",
            metavar="PATH|PROFILE", repeat=True, route=True, proxy=False, shared=True),
    Setting("host", str, "127.0.0.1", "Interface to bind; loopback unless you say so.",
            proxy=False),
    Setting("port", int, 8787, "Port to listen on.", check=port_number, proxy=False),
    Setting("allow_origin", str, None, "A web origin (https://app.example:443) whose "
            "requests are served; repeatable, * for any. A request with any other Origin "
            "header gets 403, so a web page cannot reach serve (docs/proxy.md#browsers). "
            "Default: none.", metavar="ORIGIN", repeat=True, proxy=False),
    Setting("allow_host", str, None, "A Host name served besides the listen address, "
            "localhost and loopback addresses; repeatable, * for any. Any other Host gets 403 "
            "(DNS rebinding). With --host 0.0.0.0, IP addresses are served too.",
            metavar="NAME", repeat=True, proxy=False),
    Setting("keys", str, None, "A file of client keys (bridge-rules keys new NAME): every "
            "request but /healthz then needs one, as x-api-key or Authorization: Bearer; read "
            "again on SIGHUP (docs/security.md).", metavar="FILE"),
    Setting("route_choice", bool, True, "Let a request choose its route by the "
            "x-bridge-rules-route header or its model; --no-route-choice sends every request "
            "without an /r/<route>/ prefix to the default route (docs/security.md)."),
    Setting("workers", int, 1, "Worker processes (the proxy is stateless; see "
            "docs/proxy.md).", check=at_least_one, proxy=False),
    Setting("max_body_bytes", int, 32 * MiB, "Larger request bodies get 413.",
            check=at_least_one),
    Setting("timeout", float, 600.0, "Seconds the upstream may stay silent before the "
            "request fails.", check=positive),
    Setting("max_headers", int, 100, "Requests with more headers than this get 431.",
            check=at_least_one),
    Setting("max_header_bytes", int, 64 * 1024, "Requests whose header names and values "
            "exceed this get 431.", check=at_least_one),
    Setting("body_timeout", float, 60.0, "Seconds a client has to send its whole request "
            "body, else 408.", check=positive),
    Setting("header_timeout", float, 10.0, "Seconds a client has to send a request's "
            "headers once it has started (or its first request once connected), else 408 "
            "and the connection is closed.", metavar="SECONDS", check=positive),
    Setting("max_connections", int, 0, "Client connections one worker holds; past it the "
            "connection waiting longest for its headers (or idle) is closed for the new one, "
            "else the new one gets 503. 0: as many as the open-file limit allows for two "
            "descriptors each.", check=zero_means("from the open-file limit")),
    Setting("max_response_bytes", int, 32 * MiB, "A JSON answer the proxy must rewrite that "
            "is larger than this (decoded) gets 502.", check=at_least_one),
    Setting("max_sse_event_bytes", int, 16 * MiB, "A rewritten stream whose current event "
            "grows past this is closed with an error event.", check=at_least_one),
    Setting("outbound_cache_mb", int, 64, "Megabytes of rewritten messages kept per worker, "
            "so a request that resends the conversation only rewrites its new messages; 0 "
            "turns the cache off.", metavar="MB", check=zero_means("off")),
    Setting("upstream_keepalive", float, 30.0, "Seconds an idle connection to the upstream is "
            "kept for reuse; keep it below the upstream's own idle timeout (Node and uvicorn "
            "close after 5 s). 0: a new connection per request.", metavar="SECONDS",
            check=zero_means("no reuse")),
    Setting("bindings_dir", str, None, "A directory of YAML files of bindings laid over the "
            "rules (one origin per file), read at start and again on reload; see "
            "docs/bindings.md.", metavar="DIR", check=directory),
    Setting("drain_timeout", float, 30.0, "Seconds SIGTERM or SIGINT lets in-flight "
            "requests (streams too) finish before they are cut; /readyz answers 503 and new "
            "connections are refused from the signal on; serve then exits 0. Also "
            "--shutdown-grace (its former name).", metavar="SECONDS",
            check=lambda v: "must be 0 (cut at once) or more" if v < 0 else None, proxy=False,
            aliases=("shutdown_grace",)),
    Setting("debug_log", str, None, "Append a JSON line per request (credentials redacted) to "
            "this file."),
    Setting("log_prompts", bool, False, "Put prompt and response text in the debug log too."),
    Setting("claude_path", str, None, _CLAUDE + "the CLI binary (default: the SDK's own)."),
    Setting("max_sessions", int, 4, _CLAUDE + "CLI processes at once; more get 429."),
    Setting("claude_allow", str, None, _CLAUDE + "a tool the CLI may run itself (a pattern "
            "such as WebSearch or mcp__github__*); repeatable. Default: none.", metavar="TOOL",
            repeat=True, proxy=False),
    Setting("claude_mcp_config", str, None, _CLAUDE + "a JSON file of your own MCP servers."),
    Setting("claude_max_turns", int, 1000, _CLAUDE + "messages a request may replay; more: "
            "413."),
    Setting("claude_max_bytes", int, 16 * MiB, _CLAUDE + "the largest request body; larger: "
            "413."),
    Setting("claude_max_time", float, 1800.0, _CLAUDE + "seconds one request may hold a CLI "
            "session; past it, 413 while its history is replayed, else 504."),
    Setting("claude_spares", int, 2, _CLAUDE + "CLI processes each worker keeps started "
            "ahead of requests of a shape it has just answered (model, system prompt, tools, "
            "settings); 0: none.", check=zero_means("none")),
    Setting("claude_spare_ttl", float, 300.0, _CLAUDE + "seconds a spare CLI waits for a "
            "request before it is ended.", metavar="SECONDS", check=positive),
    Setting("claude_prepare", bool, False, _CLAUDE + "replay each conversation's history "
            "into the spare left for its next request, which then writes only its new turns; "
            "keeps that history in the worker until the spare is taken or expires."),
    Setting("watch", bool, False, "Reload the rules by themselves when their files change (a "
            "ConfigMap the kubelet swaps), as on SIGHUP; see docs/deploy.md.", proxy=False),
    Setting("watch_interval", float, 1.0, "With --watch: seconds between two looks at the "
            "rule files.", metavar="SECONDS", minimum=0.05, proxy=False),
)  # fmt: skip
"""``serve``'s settings in the order ``--help`` lists them."""

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
ALIASES: dict[str, str] = {alias: s.name for s in SETTINGS for alias in s.aliases}
"""A former name of a setting -> its name (``shutdown_grace`` -> ``drain_timeout``)."""
ROUTE_SETTINGS = tuple(s.name for s in SETTINGS if s.route)
"""Settings a route of ``routes:`` may set for itself."""
PROXY_FIELDS = tuple(s.name for s in SETTINGS if s.proxy)
"""Settings that are :class:`~bridge_rules.proxy.config.ProxyConfig` fields as they are."""


def default(name: str) -> Any:
    """The declared default of setting ``name`` (for :class:`ProxyConfig`'s fields)."""
    return BY_NAME[name].default


_TYPE_WORDS = {int: "a whole number", float: "a number", bool: "true or false", str: "text"}


def file_value(setting: Setting, raw: Any, key: str) -> tuple[Any, str | None]:
    """A ``--config FILE`` value as the setting takes it, or why it cannot be: a value of the
    wrong type is refused here, with every other mistake in the file, rather than by the
    flag parser one run later. Numbers written as text are read as the flag would."""
    scalar = (str, int, float, bool)
    if setting.repeat:
        items = raw if isinstance(raw, list) else [raw]
        if not all(isinstance(v, scalar) for v in items):
            return None, f"'{key}' takes a list of values, got {type(raw).__name__}"
        return items, None
    if not isinstance(raw, scalar):
        return None, f"'{key}' takes one value, got {type(raw).__name__}"
    value = _as_type(setting.type, raw)
    if value is None:
        want = _TYPE_WORDS[setting.type]
        return None, f"'{key}' takes {want}, got {raw!r}"
    return value, None


def _as_type(kind: type, raw: Any) -> Any:
    if kind is str:
        return raw if isinstance(raw, str) else str(raw)
    if kind is bool:
        if isinstance(raw, bool):
            return raw
        return {"true": True, "false": False}.get(str(raw).lower())
    if isinstance(raw, bool):
        return None
    try:
        return kind(raw) if kind is float or not isinstance(raw, float) else None
    except ValueError:
        return None


TABLE_BEGIN = "<!-- settings table: made by scripts/settings_table.py from proxy/settings.py -->"
TABLE_END = "<!-- end of settings table -->"


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def markdown_table() -> str:
    """docs/proxy.md's settings table, one row per declared setting."""
    rows = [
        "| flag | environment | `--config` key | default | a route may set it | what it does |",
        "|---|---|---|---|---|---|",
    ]
    for s in SETTINGS:
        key = f"`{s.key}`" + (" (a list)" if s.repeat else "")
        route = "yes" if s.route else ""
        text = s.help.replace("|", "\\|")
        rows.append(
            f"| `{s.flag}` | `{s.env}` | {key} | `{_shown(s.default)}` | {route} | {text} |"
        )
    return "\n".join([TABLE_BEGIN, *rows, TABLE_END])
