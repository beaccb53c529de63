"""The keys file: what ``keys new`` writes, what ``keys revoke`` takes out, and every
problem ``serve --keys`` reports, located.

Oracles that do not share the code's assumptions: the hash is checked with coreutils'
``sha256sum``; the names left after revocations with GNU ``grep`` over the file; a key's
randomness by its length and alphabet (256 bits of base64url).
"""

from __future__ import annotations

import re
import stat
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.proxy.test_proxy_cli import BIN

from bridge_rules.proxy.keyfile import KeysError, keys_problems, read_keys
from bridge_rules.proxy.keywrite import add_key, revoke_key


def keys_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN), "keys", *args], capture_output=True, text=True, check=False)


def test_keys_new_prints_the_key_once_and_stores_its_sha256(tmp_path: Path) -> None:
    path = tmp_path / "keys.yaml"
    done = keys_cli("new", "ci-bot", "--file", str(path))
    assert done.returncode == 0, done.stderr
    key = done.stdout.strip()
    assert re.fullmatch(r"brk_[A-Za-z0-9_-]{43}", key)  # 32 random bytes, base64url
    text = path.read_text(encoding="utf-8")
    assert key not in text
    oracle = (
        subprocess.run(["/usr/bin/sha256sum"], input=key.encode(), capture_output=True, check=True)
        .stdout.split()[0]
        .decode()
    )
    assert f"sha256: {oracle}" in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = keys_cli("new", "ci-bot", "--file", str(path))
    assert again.returncode == 2
    assert "already named 'ci-bot'" in again.stderr
    listed = keys_cli("list", "--file", str(path))
    assert listed.stdout.startswith("ci-bot\t")
    assert key not in listed.stdout
    assert oracle not in listed.stdout


NAMES = st.lists(st.from_regex(r"[a-z][a-z0-9_.-]{0,12}", fullmatch=True), min_size=1,
                 max_size=6, unique=True)  # fmt: skip


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(names=NAMES, data=st.data())
def test_revoking_leaves_exactly_the_other_keys(
    tmp_path: Path, names: list[str], data: st.DataObject
) -> None:
    path = tmp_path / "keys.yaml"
    path.unlink(missing_ok=True)
    path.write_text("# team keys, reviewed like code\n", encoding="utf-8")
    made = {name: add_key(str(path), name) for name in names}
    gone = data.draw(st.lists(st.sampled_from(names), unique=True))
    for name in gone:
        revoke_key(str(path), name)
    left = [n for n in names if n not in gone]
    grep = subprocess.run(
        ["/usr/bin/grep", "-oP", r"^  - name: \K.*$", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert grep.stdout.split() == left
    assert [k.name for k in read_keys(str(path))] == left
    assert path.read_text(encoding="utf-8").startswith("# team keys, reviewed like code\n")
    for name in left:  # the survivors' hashes are untouched
        assert any(k.name == name for k in read_keys(str(path)))
        assert made[name] not in path.read_text(encoding="utf-8")


GOOD = "  - name: a\n    sha256: " + "ab" * 32 + "\n"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("keys: 3\n", "'keys' takes a list"),
        ("kees: []\n", "a mapping with one key, 'keys:'"),
        ("keys:\n  - name: a\n", "needs sha256: 64 lowercase hex"),
        ("keys:\n  - {name: a, sha256: " + "AB" * 32 + "}\n", "needs sha256"),
        ("keys:\n  - sha256: " + "ab" * 32 + "\n", "needs a name"),
        ("keys:\n" + GOOD + "    rutes: [x]\n", "unknown key setting 'rutes'"),
        ("keys:\n" + GOOD + "    admin: yes-please\n", "'admin' takes true or false"),
        ("keys:\n" + GOOD + "    limits: {concurrent: -1}\n", "limit 'concurrent' takes a whole"),
        ("keys:\n" + GOOD + "    limits: {rpm: 3}\n", "'limits' takes a mapping of"),
        (
            "keys:\n" + GOOD + "    upstream_key: sk-ant-literal\n",
            "takes {env: NAME} or {file: PATH}",
        ),
        (
            "keys:\n" + GOOD + "    upstream_key: {env: UNSET_FOR_TEST_9}\n",
            "UNSET_FOR_TEST_9 is not set",
        ),
        (
            "keys:\n" + GOOD + "    upstream_key: {file: /no/such/cred}\n",
            "cannot read /no/such/cred",
        ),
        ("keys:\n" + GOOD + GOOD, "two keys are named 'a'"),
        ("keys:\n" + GOOD + GOOD.replace("name: a", "name: b"), "same hash as another key"),
        ("keys: [\n", "error[BR"),
    ],
)
def test_a_bad_keys_file_is_a_located_problem(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "keys.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(KeysError) as refused:
        read_keys(str(path), environ={})
    assert any(problem in line for line in refused.value.lines), refused.value.lines
    assert all(str(path) in line for line in refused.value.lines)


def test_serve_reports_a_bad_keys_file_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "keys.yaml"
    path.write_text("keys:\n  - name: a\n", encoding="utf-8")
    done = subprocess.run(
        [str(BIN), "serve", "--upstream", "http://127.0.0.1:9", "--keys", str(path)],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert f"--keys {path}:2:5: key 'a' needs sha256" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_credential_is_never_quoted_in_a_problem(tmp_path: Path) -> None:
    cred = tmp_path / "cred"
    cred.write_text("", encoding="utf-8")
    path = tmp_path / "keys.yaml"
    path.write_text("keys:\n" + GOOD + f"    upstream_key: {{file: {cred}}}\n", encoding="utf-8")
    with pytest.raises(KeysError, match="is empty"):
        read_keys(str(path))
    secret = "sk-ant-do-not-print-me"
    path.write_text("keys:\n" + GOOD + "    upstream_key: {env: CRED_X}\n", encoding="utf-8")
    (spec,) = read_keys(str(path), environ={"CRED_X": secret})
    assert spec.credential == secret
    assert secret not in repr(spec)


@pytest.mark.parametrize(
    ("host", "cli", "refused"),
    [
        ("127.0.0.1", True, False),
        ("127.255.0.1", True, False),
        ("::1", True, False),
        ("[::1]", True, False),
        ("localhost", True, False),
        ("0.0.0.0", True, True),
        ("::", True, True),
        (
            "::ffff:127.0.0.1",
            True,
            True,
        ),  # IPv4-mapped: not loopback to Python's ipaddress, refused is the safe side
        ("0.0.0.0", False, False),
        ("my-host.internal", True, True),
    ],
)
def test_which_addresses_need_keys(host: str, cli: bool, refused: bool) -> None:
    assert bool(keys_problems(None, cli, host)) is refused
