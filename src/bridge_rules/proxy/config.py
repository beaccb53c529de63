"""Proxy settings, serialisable so ``--workers`` processes can rebuild the app, and the
checks ``serve`` makes on them before it starts: :meth:`ServeSettings.check` for the
values, whether they came from flags, the environment or ``--config FILE``
(:func:`~bridge_rules.proxy.settingsfile.read_settings`), and :func:`bind_problem` for
the port. Problems are data with their messages and where each value was written.
Standard library only (the settings file's reader is imported when there is a file): a
bad option is reported before the server stack is imported."""

from __future__ import annotations

import errno
import json
import os
import socket
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from bridge_rules.debuglog import private_problem
from bridge_rules.proxy.browsers import host_problem, origin_problem
from bridge_rules.proxy.keyfile import keys_problems
from bridge_rules.proxy.kinds import kind_of, normalise_upstream  # noqa: F401  (callers')
from bridge_rules.proxy.routespec import ROUTE_WHERE, RouteSpec
from bridge_rules.proxy.settings import PROXY_FIELDS, SETTINGS, default
from bridge_rules.sealing import ENV_KEY as SEAL_KEY_ENV
from bridge_rules.sealing import MIN_KEY_BYTES as MIN_SEAL_KEY_BYTES

if TYPE_CHECKING:
    from bridge_rules.diagnostics import Diagnostic

ENV_VAR = "BRIDGE_RULES_SERVE_CONFIG"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
"""Where prometheus-client's workers keep their metric values; ``serve --workers N`` sets it."""
DEFAULT_SHUTDOWN_GRACE: float = default("drain_timeout")
CLAUDE_CODE = "claude-code"
"""``--upstream claude-code``: answer with the Claude Code CLI (docs/claude-code-upstream.md)."""
MISSING_SDK = (
    "--upstream claude-code needs the claude-agent-sdk package: "
    "pip install 'bridge-rules[claude-code]'"
)


@dataclass(frozen=True)
class ProxyConfig:
    upstream: str
    rules: tuple[str, ...] = field(default_factory=tuple)
    # The settings below are declared, with their defaults and meaning, in proxy/settings.py.
    max_body_bytes: int = default("max_body_bytes")
    timeout: float = default("timeout")
    connect_timeout: float = 10.0  # not a setting: the time to open an upstream connection
    debug_log: str | None = default("debug_log")
    log_prompts: bool = default("log_prompts")
    max_headers: int = default("max_headers")
    max_header_bytes: int = default("max_header_bytes")
    body_timeout: float = default("body_timeout")
    max_sse_event_bytes: int = default("max_sse_event_bytes")
    outbound_cache_mb: int = default("outbound_cache_mb")
    upstream_keepalive: float = default("upstream_keepalive")
    header_timeout: float = default("header_timeout")
    max_connections: int = default("max_connections")
    max_response_bytes: int = default("max_response_bytes")
    bindings_dir: str | None = default("bindings_dir")
    claude_path: str | None = default("claude_path")
    max_sessions: int = default("max_sessions")
    claude_allow: tuple[str, ...] = ()
    claude_mcp_config: str | None = default("claude_mcp_config")
    claude_max_turns: int = default("claude_max_turns")
    claude_max_bytes: int = default("claude_max_bytes")
    claude_max_time: float = default("claude_max_time")
    claude_spares: int = default("claude_spares")
    claude_spare_ttl: float = default("claude_spare_ttl")
    claude_prepare: bool = default("claude_prepare")
    routes: tuple[RouteSpec, ...] = ()  # ``routes:`` of --config FILE (proxy/routes.py)
    listen_host: str = "127.0.0.1"  # --host: a Host naming it is ours (proxy/browsers.py)
    allow_origins: tuple[str, ...] = ()  # web origins whose requests are served; "*": any
    allow_hosts: tuple[str, ...] = ()  # Host names served besides the listen address; "*"
    keys: str | None = default("keys")  # client keys file (proxy/keyfile.py); None: none asked
    route_choice: bool = default("route_choice")  # the route header and model; off: default

    @property
    def base(self) -> str:
        return self.upstream.rstrip("/")

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ProxyConfig:
        raw = json.loads(os.environ[ENV_VAR])
        raw["rules"] = tuple(raw.get("rules") or ())
        raw["routes"] = tuple(RouteSpec.from_dict(r) for r in raw.get("routes") or ())
        for name in ("claude_allow", "allow_origins", "allow_hosts"):
            raw[name] = tuple(raw.get(name) or ())
        return cls(**raw)


def private_file_problem(path: str) -> str | None:
    """Why ``path`` cannot hold a private log (see :func:`private_problem`); None when it is
    absent or fit."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    return private_problem(path, info)


def bind_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (in use, not allowed, no such address), or None."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return f"port {port} on {host} is already in use; stop what holds it or use --port"
            if exc.errno == errno.EACCES:
                return f"not allowed to listen on {host}:{port} (ports below 1024 need privileges)"
            return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


@dataclass(frozen=True)
class SettingProblem:
    """A setting ``serve`` cannot start with (or, as a warning, one it changed): what is
    wrong in the words a user reads, naming the option, and where the value was written when
    that was not a flag (``BRIDGE_RULES_PORT``, ``--config serve.yaml:3:7``)."""

    message: str
    where: str | None = None
    warning: bool = False

    def line(self) -> str:
        severity = "warning" if self.warning else "error"
        where = f"{self.where}: " if self.where else ""
        return f"bridge-rules: {severity}: {where}{self.message}"


Problem = Union[SettingProblem, "Diagnostic"]
"""Either kind prints as one ``line()``: a settings file the YAML reader refuses (syntax,
encoding, size) is reported located, the way a rule file is."""


@dataclass(frozen=True)
class ServeSettings:
    """Everything ``serve`` runs with: where it listens, how many workers, and the
    :class:`ProxyConfig` each worker builds its app from."""

    config: ProxyConfig
    host: str = "127.0.0.1"
    port: int = 8787
    workers: int = 1
    drain_timeout: float = DEFAULT_SHUTDOWN_GRACE

    @classmethod
    def check(
        cls,
        options: Mapping[str, Any],
        where: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> tuple[ServeSettings | None, list[SettingProblem]]:
        """The settings from ``serve``'s option values (by parameter name), or ``None`` when
        one is wrong, and every problem found; a value is judged the same wherever it came
        from, and ``where`` (option name -> origin) says where to mend it."""
        where = where or {}
        env = os.environ if environ is None else environ
        problems: list[SettingProblem] = []

        def bad(name: str, message: str) -> None:
            problems.append(SettingProblem(message, where.get(name)))

        routes: tuple[RouteSpec, ...] = tuple(options.get("routes") or ())
        upstream = options.get("upstream") or ""
        if not upstream:
            upstream, unserved = _routes_upstream(routes)
            problems += [SettingProblem(m, where.get(ROUTE_WHERE + n)) for n, m in unserved]
            if any(not p.warning for p in problems):
                return None, problems
        upstream, found = kind_of(upstream).problems(upstream, options)
        for name, message, warning in found:
            problems.append(SettingProblem(message, where.get(name), warning=warning))
        for setting in SETTINGS:
            refused = setting.problem(options.get(setting.name, setting.default))
            if refused is not None:
                bad(setting.name, refused)
        for origin in options.get("allow_origin") or ():
            refused = origin_problem(str(origin))
            if refused is not None:
                bad("allow_origin", refused)
        for host in options.get("allow_host") or ():
            refused = host_problem(str(host))
            if refused is not None:
                bad("allow_host", refused)
        keys = options.get("keys")
        owners = [upstream, *(r.upstream for r in routes if r.upstream is not None)]
        held = any(kind_of(value).owner_credentials for value in owners)
        for message in keys_problems(keys, held, str(options["host"])):
            bad("keys", message)
        if options.get("log_prompts") and not options.get("debug_log"):
            bad("log_prompts", "--log-prompts only applies with --debug-log FILE")
        if options.get("debug_log"):
            refused = private_file_problem(str(options["debug_log"]))
            if refused is not None:
                bad("debug_log", f"--debug-log {refused}")
        key = env.get(SEAL_KEY_ENV, "")
        if key and len(key.encode("utf-8")) < MIN_SEAL_KEY_BYTES:
            problems.append(
                SettingProblem(
                    f"{SEAL_KEY_ENV} must be at least {MIN_SEAL_KEY_BYTES} bytes; use a long "
                    "random secret, the same in every worker and replica"
                )
            )
        shared = env.get(MULTIPROC_ENV)
        if shared and not os.path.isdir(shared):  # prometheus-client would fail on first use
            problems.append(
                SettingProblem(
                    f"{MULTIPROC_ENV}={shared} is not a directory; create it, or unset it "
                    "(with --workers N, serve then makes a temporary one)"
                )
            )
        if any(not p.warning for p in problems):
            return None, problems
        fields = {n: options[n] for n in PROXY_FIELDS if n in options}
        config = ProxyConfig(
            upstream=upstream,
            rules=tuple(options["rules"] or ()),
            claude_allow=tuple(options.get("claude_allow") or ()),
            routes=routes,
            listen_host=str(options["host"]),
            allow_origins=tuple(map(str, options.get("allow_origin") or ())),
            allow_hosts=tuple(map(str, options.get("allow_host") or ())),
            **fields,
        )
        grace = options.get("drain_timeout", DEFAULT_SHUTDOWN_GRACE)
        return cls(config, options["host"], options["port"], options["workers"], grace), problems


NO_UPSTREAM = (
    "Missing option '--upstream' (or BRIDGE_RULES_UPSTREAM, or 'upstream:' in --config): "
    "where to forward to, an http(s) URL or claude-code"
)


def _routes_upstream(routes: tuple[RouteSpec, ...]) -> tuple[str, list[tuple[str, str]]]:
    """With no ``--upstream``: the one ``serve`` stands for (the default route's, else the
    first route's; it answers ``/readyz``), and (route, problem) for each route that names
    none, as nothing else could serve it."""
    if not routes:
        return "", [("", NO_UPSTREAM)]
    missing = [
        (r.name, f"route '{r.name}' names no upstream, and serve has none: give the route "
                 "'upstream: URL' (or claude-code), or serve --upstream")
        for r in routes
        if r.upstream is None
    ]  # fmt: skip
    chosen = next((r for r in routes if r.default), routes[0])
    return chosen.upstream or "", missing


def read_mcp_config(path: str) -> dict[str, Any]:
    """The servers of an MCP config file (``{"mcpServers": {...}}``); ValueError with the
    reason when it cannot be used."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not all(isinstance(v, dict) for v in servers.values()):
        raise ValueError(f'{path} must be {{"mcpServers": {{"name": {{...}}, ...}}}}')
    return servers
