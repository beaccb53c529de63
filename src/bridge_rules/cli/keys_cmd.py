"""``bridge-rules keys``: the client keys of ``serve --keys FILE``, made, listed, revoked.

``keys new NAME`` prints the new key once, on stdout, and writes only its hash; nothing
keeps the key itself, so a lost key is revoked and made again. The running ``serve``
reads the file again on SIGHUP (or by itself with ``--watch``).
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from bridge_rules.cli.app import Group, app, fail
from bridge_rules.diagnostics import EXIT_OK

keys_app = typer.Typer(
    cls=Group,
    name="keys",
    help="Client keys for serve --keys FILE: new, list, revoke (docs/security.md).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(keys_app, name="keys")

FileOption = Annotated[
    str,
    typer.Option(
        "--file",
        help="The keys file (the one serve --keys reads).",
        metavar="FILE",
        envvar="BRIDGE_RULES_KEYS",
    ),
]
DEFAULT_FILE = "keys.yaml"


@keys_app.command("new")
def new(
    name: Annotated[str, typer.Argument(help="The key's name, shown in logs and metrics.")],
    file: FileOption = DEFAULT_FILE,
) -> int:
    """Make a key: print it once, write its name and SHA-256 hash to FILE."""
    from bridge_rules.proxy.keyfile import KeysError
    from bridge_rules.proxy.keywrite import add_key

    try:
        key = add_key(file, name)
    except KeysError as exc:
        fail(*exc.lines)
    sys.stdout.write(key + "\n")
    sys.stderr.write(
        f"bridge-rules: key '{name}' written to {file} (its hash only: keep the key now, it "
        "is not shown again); send SIGHUP to serve to take it up\n"
    )
    return EXIT_OK


@keys_app.command("list")
def list_keys(file: FileOption = DEFAULT_FILE) -> int:
    """List the keys of FILE: name, routes, policy and limits (no hash, no key)."""
    from bridge_rules.proxy.keyfile import KeysError, read_keys

    try:
        specs = read_keys(file, environ=_AnyEnv()) if _exists(file) else ()
    except KeysError as exc:
        fail(*exc.lines)
    for spec in specs:
        limits = ", ".join(f"{k}={v}" for k, v in vars(spec.limits).items() if v) or "-"
        sys.stdout.write(
            f"{spec.name}\troutes={','.join(spec.routes) or '*'}\t"
            f"policy={','.join(spec.policy) or '-'}\tlimits={limits}"
            f"{chr(9) + 'admin' if spec.admin else ''}\n"
        )
    return EXIT_OK


@keys_app.command("revoke")
def revoke(
    name: Annotated[str, typer.Argument(help="The key to take out.")],
    file: FileOption = DEFAULT_FILE,
) -> int:
    """Take a key out of FILE; serve refuses it from its next SIGHUP on."""
    from bridge_rules.proxy.keyfile import KeysError
    from bridge_rules.proxy.keywrite import revoke_key

    if not _exists(file):
        fail(f"{file}: no such file")
    try:
        revoke_key(file, name)
    except KeysError as exc:
        fail(*exc.lines)
    sys.stderr.write(f"bridge-rules: key '{name}' revoked in {file}; send SIGHUP to serve\n")
    return EXIT_OK


def _exists(path: str) -> bool:
    import os

    return os.path.isfile(path)


class _AnyEnv(dict[str, str]):
    """An environment in which every variable is set: ``keys list`` shows a key whose
    upstream credential lives in serve's environment, not in the one it runs in."""

    def get(self, key: str, default: object = None) -> str:
        return "set"
