"""The README's Kubernetes manifests for ``logscan follow`` stay valid and true.

Each ```yaml block of the "Follow logs in Kubernetes" section is parsed with PyYAML; the
logscan arguments are parsed by the real click command; the alert expressions name only
metrics and label values that ``FollowMetrics`` and the packs really have.
"""
from __future__ import annotations

import regex
import yaml

from logscan.cli import follow as follow_command
from logscan.follow.metrics import FollowMetrics
from logscan.models import CostClass
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()
SECTION = README.split("## Follow logs in Kubernetes", 1)[1].split("\n## ", 1)[0]
BLOCKS = regex.findall(r"```yaml\n(.*?)```", SECTION, flags=regex.S)
DOCS = [d for b in BLOCKS for d in yaml.safe_load_all(b) if d]


def _kind(kind: str) -> list[dict]:
    return [d for d in DOCS if d.get("kind") == kind]


def _follow_args(container: dict) -> dict:
    argv = list(container.get("command", [])) + list(container.get("args", []))
    assert argv[:2] == ["logscan", "follow"], argv
    ctx = follow_command.make_context("follow", argv[2:])  # raises on an unknown option
    return ctx.params


def _metric_names() -> set[str]:
    m = FollowMetrics("daemonset", ["weight_only"])
    names = set()
    for fam in m.registry.collect():
        names.add(fam.name)
        names.update(s.name for s in fam.samples)
    names.update(f"{fam.name}_total" for fam in m.registry.collect() if fam.type == "counter")
    return names


def test_every_yaml_block_parses_and_is_a_kubernetes_object():
    assert len(BLOCKS) >= 3
    for d in DOCS:
        assert d["apiVersion"] and d["kind"] and d["metadata"]["name"], d


def test_native_sidecar_shares_an_emptydir_log_file_with_the_engine():
    (dep,) = _kind("Deployment")
    spec = dep["spec"]["template"]["spec"]
    (side,) = [c for c in spec["initContainers"] if "logscan" in c.get("command", [])]
    assert side["restartPolicy"] == "Always"
    params = _follow_args(side)
    (path,) = params["inputs"]
    vols = {v["name"]: v for v in spec["volumes"]}
    mount = next(m for m in side["volumeMounts"] if path.startswith(m["mountPath"] + "/"))
    assert "emptyDir" in vols[mount["name"]]
    assert params["state_file"].startswith(mount["mountPath"] + "/")
    engine = spec["containers"][0]
    assert any(m["name"] == mount["name"] and m["mountPath"] == mount["mountPath"] for m in engine["volumeMounts"])
    assert path in " ".join(engine["command"] + engine["args"])  # the engine writes the followed file
    port = params["metrics_addr"].rsplit(":", 1)[1]
    assert {p["name"]: p["containerPort"] for p in side["ports"]}["metrics"] == int(port)
    assert side["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert side["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert params["mode"] == "sidecar"


def test_daemonset_reads_var_log_pods_read_only_with_pod_labels():
    (ds,) = _kind("DaemonSet")
    spec = ds["spec"]["template"]["spec"]
    (c,) = spec["containers"]
    params = _follow_args(c)
    assert params["mode"] == "daemonset"
    assert all(p.startswith("/var/log/pods/") for p in params["inputs"])
    vols = {v["name"]: v for v in spec["volumes"]}
    pods = next(m for m in c["volumeMounts"] if m["mountPath"] == "/var/log/pods")
    assert pods["readOnly"] is True and vols[pods["name"]]["hostPath"]["path"] == "/var/log/pods"
    state = next(m for m in c["volumeMounts"] if params["state_file"].startswith(m["mountPath"] + "/"))
    assert "hostPath" in vols[state["name"]]  # the state outlives the pod


def test_alerts_use_real_metrics_and_cost_classes():
    (rule,) = _kind("PrometheusRule")
    names = _metric_names()
    rules = [r for g in rule["spec"]["groups"] for r in g["rules"]]
    assert any("emulated" in r["expr"] and "weight_only" in r["expr"] for r in rules)
    for r in rules:
        used = set(regex.findall(r"\b(logscan_[a-z_]+)", r["expr"]))
        assert used and used <= names, used - names
        for value in regex.findall(r'cost_class=~"([^"]+)"', r["expr"]):
            assert set(value.split("|")) <= {c.value for c in CostClass}


def test_metrics_table_names_every_metric():
    table = SECTION.split("### Metrics", 1)[1].split("\n### ", 1)[0]
    listed = set(regex.findall(r"`(logscan_[a-z_]+)`", table))
    exported = {n for n in _metric_names() if not n.endswith("_created")}
    families = {fam.name for fam in FollowMetrics("sidecar", []).registry.collect()}
    for fam in families:
        assert fam in listed or f"{fam}_total" in listed, fam
    assert listed <= exported
