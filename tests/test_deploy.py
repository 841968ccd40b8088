"""The Kubernetes files under ``deploy/`` are valid and true.

- Every core object validates against the Kubernetes 1.33.0 OpenAPI schemas shipped in the
  ``kubernetes-validate`` package, strictly (an unknown field fails).
- The prometheus-operator objects (ServiceMonitor, PrometheusRule: CRDs, no schema in that
  package) are checked for the fields the operator needs; the PrometheusRule's groups pass
  ``promtool check rules`` and ``promtool test rules`` (tests/data/promtool/alerts-test.yaml:
  an emulation series fires the alert, a clean one does not).
- The logscan arguments are parsed by the real click command, and every metric and cost class
  the alerts name is one that ``FollowMetrics`` exports.
"""
from __future__ import annotations

import shutil
import subprocess

import kubernetes_validate
import pytest
import regex
import yaml

from logscan.cli import follow as follow_command
from logscan.follow.metrics import FollowMetrics
from logscan.models import CostClass
from tests.conftest import ROOT

K8S_VERSION = "1.33.0"  #: the Kubernetes schema version the manifests are validated against
DEPLOY = ROOT / "deploy"
FILES = sorted(DEPLOY.glob("*.yaml"))
DOCS = [(f.name, d) for f in FILES for d in yaml.safe_load_all(f.read_text()) if d]
CRDS = {"ServiceMonitor", "PrometheusRule"}
#: metrics an alert may name before this branch exports them (the fail-closed work adds it)
PENDING_METRICS = {"logscan_start_failures_total", "logscan_start_failed", "logscan_missing_files"}
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian's prometheus package; .ci/run installs it)")


def _kind(kind: str, file: str | None = None) -> list[dict]:
    return [d for f, d in DOCS if d["kind"] == kind and (file is None or f == file)]


def _follow_args(container: dict) -> dict:
    argv = list(container.get("command", [])) + list(container.get("args", []))
    assert argv[:2] == ["logscan", "follow"], argv
    return follow_command.make_context("follow", argv[2:]).params  # raises on an unknown option


def _metric_names() -> set[str]:
    m = FollowMetrics("daemonset", ["weight_only"])
    names = set()
    for fam in m.registry.collect():
        names.add(fam.name)
        names.update(s.name for s in fam.samples)
        if fam.type == "counter":
            names.add(f"{fam.name}_total")
    return names


def test_the_files_hold_each_object_the_docs_promise():
    kinds = {d["kind"] for _, d in DOCS}
    assert {"Deployment", "DaemonSet", "ServiceMonitor", "PrometheusRule", "Role", "RoleBinding",
            "ServiceAccount", "Service"} <= kinds


@pytest.mark.parametrize("name,doc", [(f, d) for f, d in DOCS if d["kind"] not in CRDS],
                         ids=lambda x: x if isinstance(x, str) else f"{x['kind']}/{x['metadata']['name']}")
def test_core_objects_validate_against_the_kubernetes_schema(name, doc):
    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_a_wrong_field_is_caught_by_the_schema():
    (dep,) = _kind("Deployment")
    broken = yaml.safe_load(yaml.safe_dump(dep))
    broken["spec"]["template"]["spec"]["initContainers"][0]["restartPolicy"] = 1
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


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


@pytest.mark.parametrize("file", ["sidecar.yaml", "daemonset.yaml"])
def test_each_servicemonitor_selects_a_service_whose_port_reaches_logscan(file):
    (sm,) = _kind("ServiceMonitor", file)
    (svc,) = _kind("Service", file)
    assert sm["metadata"]["namespace"] == svc["metadata"]["namespace"]
    assert sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    (ep,) = sm["spec"]["endpoints"]
    (port,) = [p for p in svc["spec"]["ports"] if p["name"] == ep["port"]]
    workload = (_kind("Deployment", file) or _kind("DaemonSet", file))[0]
    tmpl = workload["spec"]["template"]
    assert svc["spec"]["selector"].items() <= tmpl["metadata"]["labels"].items()
    pods = tmpl["spec"].get("initContainers", []) + tmpl["spec"]["containers"]
    assert any(p.get("name") == port["targetPort"] for c in pods for p in c.get("ports", []))
    assert ep.get("honorLabels", False) == (file == "daemonset.yaml")  # daemonset series carry pod labels


def test_rbac_grants_prometheus_discovery_where_the_sidecar_runs():
    (role,) = _kind("Role")
    (binding,) = _kind("RoleBinding")
    (dep,) = _kind("Deployment")
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == dep["metadata"]["namespace"]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    granted = {r for rule in role["rules"] for r in rule["resources"]}
    assert {"endpoints", "services", "pods"} <= granted
    assert all(set(rule["verbs"]) <= {"get", "list", "watch"} for rule in role["rules"])  # read-only
    for sa in _kind("ServiceAccount"):
        assert sa["automountServiceAccountToken"] is False  # logscan never calls the API


def test_alerts_use_real_metrics_and_cost_classes():
    (rule,) = _kind("PrometheusRule")
    names = _metric_names() | PENDING_METRICS
    rules = [r for g in rule["spec"]["groups"] for r in g["rules"]]
    assert any("emulated" in r["expr"] and "weight_only" in r["expr"] for r in rules)
    assert any("logscan_start_failures_total" in r["expr"] for r in rules)
    for r in rules:
        used = set(regex.findall(r"\b(logscan_[a-z_]+)", r["expr"]))
        assert used and used <= names, used - names
        for value in regex.findall(r'cost_class=~"([^"]+)"', r["expr"]):
            assert set(value.split("|")) <= {c.value for c in CostClass}


def _rules_dir(tmp_path):
    (rule,) = _kind("PrometheusRule")
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
    shutil.copy(ROOT / "tests" / "data" / "promtool" / "alerts-test.yaml", tmp_path / "alerts-test.yaml")
    return tmp_path


@needs_promtool
def test_promtool_check_rules(tmp_path):
    d = _rules_dir(tmp_path)
    out = subprocess.run([PROMTOOL, "check", "rules", "rules.yaml"], cwd=d, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SUCCESS: 3 rules found" in out.stdout


@needs_promtool
def test_promtool_test_rules_fires_on_emulation_not_on_a_clean_series(tmp_path):
    d = _rules_dir(tmp_path)
    out = subprocess.run([PROMTOOL, "test", "rules", "alerts-test.yaml"], cwd=d, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


@needs_promtool
def test_promtool_test_rules_can_fail(tmp_path):
    """The unit test is not vacuous: a rule that never fires makes it fail."""
    d = _rules_dir(tmp_path)
    rules = yaml.safe_load((d / "rules.yaml").read_text())
    rules["groups"][0]["rules"][0]["expr"] = 'logscan_kernel_selection_info{cost_class="none"} == 1'
    (d / "rules.yaml").write_text(yaml.safe_dump(rules))
    out = subprocess.run([PROMTOOL, "test", "rules", "alerts-test.yaml"], cwd=d, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode != 0 and "QuantizedKernelDegraded" in out.stdout + out.stderr
