"""The real pi and the real opencode at the same time through one ``serve`` with two routes.

``serve --config`` (a separate process) has a ``pi`` route with the ``read_only`` policy
switch, to one local upstream, and an ``opencode`` route, to another. Both upstreams ask
for a file change whatever tools they were given, as an upstream that ignores ``tools[]``
would. pi's write attempt must never reach its upstream as a tool, nor its disk; opencode's
edit must run and change the file.

Setup: npm installs pi and opencode into the shared cache (toolchain.py); opencode's grep
and glob run the venv's ripgrep.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest
from fake_upstream import FakeUpstream, tool_results
from opencode_driver import run_opencode, serving
from pi_driver import HELLO, run_pi

pytestmark = pytest.mark.e2e

DENIED = {"Write", "Edit", "NotebookEdit"}


@contextmanager
def serve_routes(settings: Path) -> Iterator[str]:
    """``bridge-rules serve --config settings`` as a separate process; yields its URL."""
    with serving("--config", str(settings)) as url:
        yield url


def test_two_agents_two_routes_one_read_only(pi: Path, opencode: Path, tmp_path: Path) -> None:
    pi_dir, oc_home, oc_project = tmp_path / "pi", tmp_path / "oc-home", tmp_path / "oc"
    oc_project.mkdir()
    (oc_project / "edit_me.txt").write_text("answer = 42\n")
    with FakeUpstream() as pi_up, FakeUpstream() as oc_up:
        pi_project = pi_dir / "project"
        pi_up.script.tool_calls = [
            {"name": "Write", "input": {"file_path": str(pi_project / "new.txt"),
                                        "content": "written\n"}},
            {"name": "Edit", "input": {"file_path": str(pi_project / "hello.txt"),
                                       "old_string": "42", "new_string": "43"}},
        ]  # fmt: skip
        oc_up.script.tool_calls = [
            {"name": "Edit", "input": {"file_path": str(oc_project / "edit_me.txt"),
                                       "old_string": "42", "new_string": "43"}},
        ]  # fmt: skip
        settings = tmp_path / "serve.yaml"
        settings.write_text(
            f"upstream: {pi_up.url}\n"
            "routes:\n"
            f"  - {{name: pi, rules: [default], upstream: '{pi_up.url}', policy: [read_only]}}\n"
            f"  - {{name: opencode, rules: [opencode], upstream: '{oc_up.url}'}}\n",
            encoding="utf-8",
        )
        with serve_routes(settings) as url, ThreadPoolExecutor(2) as pool:
            pi_run = pool.submit(run_pi, pi, pi_dir, f"{url}/r/pi", "Change the files.")
            oc_run = pool.submit(
                run_opencode, opencode, oc_home, oc_project, f"{url}/r/opencode", "Edit it."
            )
            pi_done, oc_done = pi_run.result(), oc_run.result()

    # The read-only agent: no write tool went upstream, and nothing was written.
    assert pi_done.returncode == 0, pi_done.stderr
    assert pi_up.requests, pi_done.stdout + pi_done.stderr
    assert "Read" in {t["name"] for t in pi_up.requests[0].json["tools"]}
    for request in pi_up.requests:
        sent = {t["name"] for t in request.json.get("tools") or ()}
        assert not sent & DENIED, sent
        assert not tool_results(request.json)  # no call reached pi to run
    assert not (pi_done.project / "new.txt").exists()
    assert (pi_done.project / "hello.txt").read_text() == HELLO
    assert "the policy denies" in pi_done.stdout, pi_done.stdout

    # The other agent: its edit ran and changed the file.
    assert oc_done.returncode == 0, oc_done.stderr
    assert (oc_project / "edit_me.txt").read_text() == "answer = 43\n"
    sent = {t["name"] for r in oc_up.requests for t in r.json.get("tools") or ()}
    assert "Edit" in sent
    results = [r for req in oc_up.requests for r in tool_results(req.json)]
    assert results
    assert all(not r.get("is_error") for r in results), results
