"""A real ``bridge-rules lsp`` over stdio, driven by pytest-lsp's client, rooted in a copy of
``lint``'s own fixtures (tests/lint/fixtures) so both see the same files.

Every test here is bounded: a test (each hypothesis example on its own) that has not finished
within :data:`LIMIT` fails, saying so, rather than holding the run while it waits for a
server that stopped answering.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import shutil
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

FIXTURES = Path(__file__).resolve().parent.parent / "lint" / "fixtures"
COMMAND = [str(Path(sys.executable).parent / "bridge-rules"), "lsp"]
HERE = Path(__file__).resolve().parent
LIMIT = 240.0
"""Seconds a test may take before it fails as hung (many times what the slowest takes)."""


def _bounded(test: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(test)
    async def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return await asyncio.wait_for(test(*args, **kwargs), LIMIT)
        except asyncio.TimeoutError:
            raise AssertionError(
                f"{test.__name__} did not finish within {LIMIT:.0f} s: the server stopped "
                "answering, or a wait has no end"
            ) from None

    return run


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not isinstance(item, pytest.Function) or HERE not in item.path.parents:
            continue
        inner = getattr(getattr(item.obj, "hypothesis", None), "inner_test", None)
        if inner is not None and inspect.iscoroutinefunction(inner):
            item.obj.hypothesis.inner_test = _bounded(inner)
        elif inspect.iscoroutinefunction(item.obj):
            item.obj = _bounded(item.obj)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The lint fixtures (and their `.bridge-rules/pins`), copied: a project of their own."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES, root)
    (root / ".git").mkdir()  # the project's boundary, as a checkout has one
    return root


async def started(
    project: Path, capabilities: types.ClientCapabilities | None = None
) -> tuple[LanguageClient, types.InitializeResult]:
    """A real server, initialized for ``project`` by a client that, like an editor, accepts
    the registrations the server asks for (``client/registerCapability``)."""
    config = ClientServerConfig(server_command=COMMAND, server_env=dict(os.environ))
    lsp_client = await config.start()
    assert isinstance(lsp_client, LanguageClient)
    registered: list[types.Registration] = []
    lsp_client.registered = registered  # type: ignore[attr-defined]  # what it was asked

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def _register(params: types.RegistrationParams) -> None:
        registered.extend(params.registrations)

    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities or client_capabilities("visual-studio-code"),
            root_uri=project.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="proj")],
        )
    )
    return lsp_client, result


@pytest_asyncio.fixture
async def client(project: Path) -> AsyncIterator[LanguageClient]:
    lsp_client, _ = await started(project)
    yield lsp_client
    await lsp_client.shutdown_session()
    await lsp_client.stop()
