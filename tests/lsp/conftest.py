"""A real ``bridge-rules lsp`` over stdio, driven by pytest-lsp's client, rooted in a copy of
``lint``'s own fixtures (tests/lint/fixtures) so both see the same files."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

FIXTURES = Path(__file__).resolve().parent.parent / "lint" / "fixtures"
COMMAND = [str(Path(sys.executable).parent / "bridge-rules"), "lsp"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The lint fixtures (and their `.bridge-rules/pins`), copied: a project of their own."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES, root)
    (root / ".git").mkdir()  # the project's boundary, as a checkout has one
    return root


@pytest_asyncio.fixture
async def client(project: Path) -> AsyncIterator[LanguageClient]:
    config = ClientServerConfig(server_command=COMMAND, server_env=dict(os.environ))
    lsp_client = await config.start()
    assert isinstance(lsp_client, LanguageClient)
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=project.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="proj")],
        )
    )
    yield lsp_client
    await lsp_client.shutdown_session()
    await lsp_client.stop()
