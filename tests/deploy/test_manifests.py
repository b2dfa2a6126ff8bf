#!/usr/bin/env python3
"""Semantic checks of the Kubernetes manifests (deploy/kubernetes), and proof that the schema
validation (scripts/k8s-validate.sh) fails on broken manifests.

Run through `bash scripts/k8s-validate.sh --test` (ctest deploy_manifests): that installs the
tools and runs this file with its venv's Python (PyYAML), passing CODEQ_K8S_KUSTOMIZE (the
kustomize binary) and CODEQ_K8S_VALIDATE (the script).

What the schemas cannot see and this file checks, on the rendered output (`kustomize build`,
what `kubectl apply -k` sends) of the base and of overlays/privileged:
  * the worker's --instance-id is the pod name (downward API), so its transactional.id is
    stable across restarts and unique among live pods;
  * every $(VAR) in args is defined in the container's env; every ConfigMap key used exists;
  * KEDA's maxReplicaCount equals the partitions the topics Job creates; the trigger's brokers,
    group and topic equal the workers'; min <= max (KEDA's CEL rule, not evaluated by schema);
  * terminationGracePeriodSeconds > --grace-ms + the bounded close;
  * all probes read the file passed as --heartbeat-file, on an emptyDir, removed at start;
  * memory limit >= slots x max job memory + overhead, request >= slots x default + overhead,
    cpu request = slots;
  * Parallel pod management, headless governing Service selecting the pods, no spec.replicas.
Each check is also run on a deliberately wrong copy and must fail.
"""
import copy
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import yaml
except ImportError:
    sys.exit("test_manifests: needs PyYAML; run it as: bash scripts/k8s-validate.sh --test")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEPLOY = os.path.join(ROOT, "deploy", "kubernetes")
KUSTOMIZE = os.environ.get("CODEQ_K8S_KUSTOMIZE", "kustomize")
VALIDATE = os.environ.get("CODEQ_K8S_VALIDATE", os.path.join(ROOT, "scripts", "k8s-validate.sh"))

# Sizing assumptions (docs/kubernetes.md): one zygote per slot, numpy preloaded, and the worker.
ZYGOTE_MB = 200
WORKER_MB = 100
# After --grace-ms the worker ends its own stop within 25 s, whatever Kafka does (worker/wrk_stop.c,
# STOP_SLACK_MS): the final commit, the consumer's and the producer's close.
CLOSE_BUDGET_S = 25


def render(path):
    r = subprocess.run([KUSTOMIZE, "build", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"kustomize build {path} failed: {r.stderr}")
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def one(docs, kind, name=None):
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def mebibytes(q):
    m = re.fullmatch(r"(\d+)(Mi|Gi|Ki)?", str(q))
    assert m, f"memory quantity {q!r}: use Ki, Mi or Gi"
    n, unit = int(m.group(1)), m.group(2)
    return {"Ki": n / 1024, "Mi": n, "Gi": n * 1024, None: n / (1 << 20)}[unit]


def cpus(q):
    q = str(q)
    return int(q[:-1]) / 1000 if q.endswith("m") else float(q)


def flag(args, name):
    """The value after NAME in ARGS (exactly once)."""
    idx = [i for i, a in enumerate(args) if a == name]
    assert len(idx) == 1, f"{name} appears {len(idx)} times in {args}"
    assert idx[0] + 1 < len(args), f"{name} has no value"
    return args[idx[0] + 1]


def resolve(value, container, configmaps):
    """VALUE with each $(VAR) replaced as the kubelet does, from the container's env
    (literal values and configMapKeyRef; fieldRef stays as 'fieldRef:PATH')."""
    env = {}
    for e in container.get("env", []):
        if "value" in e:
            env[e["name"]] = e["value"]
        elif "configMapKeyRef" in e.get("valueFrom", {}):
            ref = e["valueFrom"]["configMapKeyRef"]
            cm = configmaps.get(ref["name"])
            assert cm is not None, f"env {e['name']}: no ConfigMap {ref['name']}"
            assert ref["key"] in cm.get("data", {}), \
                f"env {e['name']}: ConfigMap {ref['name']} has no key {ref['key']}"
            env[e["name"]] = cm["data"][ref["key"]]
        elif "fieldRef" in e.get("valueFrom", {}):
            env[e["name"]] = "fieldRef:" + e["valueFrom"]["fieldRef"]["fieldPath"]

    def sub(m):
        assert m.group(1) in env, f"$({m.group(1)}) is not defined in the container's env"
        return env[m.group(1)]
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", sub, value)


class Manifests:
    """The objects of one rendering and the worker's resolved settings."""

    def __init__(self, docs):
        self.docs = docs
        self.cms = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
        self.sts = one(docs, "StatefulSet", "codeq-worker")
        self.pod = self.sts["spec"]["template"]["spec"]
        assert len(self.pod["containers"]) == 1, "the worker pod has one container"
        self.worker = self.pod["containers"][0]
        self.args = [resolve(a, self.worker, self.cms) for a in self.worker["args"]]
        self.job = one(docs, "Job", "codeq-topics")
        self.topics = self.job["spec"]["template"]["spec"]["containers"][0]
        self.topics_args = [resolve(a, self.topics, self.cms) for a in self.topics["args"]]
        self.so = one(docs, "ScaledObject", "codeq-worker")


# ---- the checks (each raises AssertionError with the reason) -----------------------------------

def check_instance_id(m):
    assert m.args[0] == "worker", "the container runs `codeq worker`"
    raw = m.worker["args"][m.worker["args"].index("--instance-id") + 1]
    assert flag(m.args, "--instance-id") == "fieldRef:metadata.name", \
        f"--instance-id {raw!r} is not the pod name from the downward API"


def check_partitions(m):
    partitions = int(flag(m.topics_args, "--partitions"))
    assert m.topics_args[0] == "topics"
    mx, mn = m.so["spec"]["maxReplicaCount"], m.so["spec"].get("minReplicaCount", 0)
    assert mx == partitions, \
        f"KEDA maxReplicaCount {mx} != {partitions} partitions the topics Job creates"
    assert 1 <= mn <= mx, f"minReplicaCount {mn} must be within 1..maxReplicaCount {mx}"


def check_trigger(m):
    target = m.so["spec"]["scaleTargetRef"]
    assert (target.get("apiVersion"), target.get("kind"), target["name"]) == \
        ("apps/v1", "StatefulSet", m.sts["metadata"]["name"]), f"scaleTargetRef {target}"
    (trig,) = m.so["spec"]["triggers"]
    assert trig["type"] == "kafka"
    md = trig["metadata"]
    assert md["bootstrapServers"] == flag(m.args, "-b"), \
        f"KEDA bootstrapServers {md['bootstrapServers']} != worker -b {flag(m.args, '-b')}"
    assert md["consumerGroup"] == flag(m.args, "-g"), "KEDA consumerGroup != worker -g"
    assert md["topic"] == flag(m.args, "--jobs-topic") == flag(m.topics_args, "--jobs-topic"), \
        "KEDA topic, worker --jobs-topic and topics Job --jobs-topic differ"
    assert md.get("offsetResetPolicy") == "earliest", \
        "the worker's auto.offset.reset is earliest; KEDA must count lag the same way"
    assert md.get("allowIdleConsumers", "false") == "false"
    assert int(md["lagThreshold"]) > 0


def check_termination_grace(m):
    grace_ms = int(flag(m.args, "--grace-ms"))
    tgps = m.pod["terminationGracePeriodSeconds"]
    need = grace_ms / 1000 + CLOSE_BUDGET_S
    assert tgps > need, (f"terminationGracePeriodSeconds {tgps} <= --grace-ms {grace_ms} ms + "
                         f"{CLOSE_BUDGET_S} s close")


def check_heartbeat(m):
    path = flag(m.args, "--heartbeat-file")
    assert path.startswith("/"), f"--heartbeat-file {path} must be absolute"
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        p = m.worker.get(probe)
        assert p and "exec" in p, f"{probe}: an exec probe is required"
        cmd = " ".join(p["exec"]["command"])
        assert path in cmd, f"{probe} does not read {path}: {cmd}"
        assert "stat -c %Y" in cmd and "date +%s" in cmd, f"{probe}: not an mtime check"
    # Liveness must tolerate more than the worst beat interval (5 s) by a wide margin.
    age = int(re.search(r"-lt (\d+)", " ".join(m.worker["livenessProbe"]["exec"]["command"])).group(1))
    assert age >= 30, f"liveness allows a heartbeat age of only {age} s"
    mounts = [v for v in m.worker["volumeMounts"]
              if path.startswith(v["mountPath"].rstrip("/") + "/")]
    assert mounts, f"{path} is on no volume mount"
    mount = max(mounts, key=lambda v: len(v["mountPath"]))
    vol = next(v for v in m.pod["volumes"] if v["name"] == mount["name"])
    assert "emptyDir" in vol, f"{path} must be on an emptyDir (volume {vol['name']})"
    assert f"rm -f {path}" in " ".join(m.worker.get("command", [])), \
        "the entry command must remove a heartbeat left by a previous container"


def check_resources(m):
    slots = int(flag(m.args, "--slots"))
    job_default = int(flag(m.args, "--limit-default").removeprefix("memory_mb="))
    job_max = int(flag(m.args, "--limit-max").removeprefix("memory_mb="))
    res = m.worker["resources"]
    overhead = slots * ZYGOTE_MB + WORKER_MB
    limit, request = mebibytes(res["limits"]["memory"]), mebibytes(res["requests"]["memory"])
    assert limit >= slots * job_max + overhead, (
        f"memory limit {limit} MiB < {slots} slots x {job_max} MiB + {slots} x {ZYGOTE_MB} "
        f"+ {WORKER_MB} = {slots * job_max + overhead} MiB")
    assert request >= slots * job_default + overhead, (
        f"memory request {request} MiB < {slots} x {job_default} + {overhead} MiB")
    assert cpus(res["requests"]["cpu"]) == slots, \
        f"cpu request {res['requests']['cpu']} != {slots} slots"
    if "cpu" in res.get("limits", {}):
        assert cpus(res["limits"]["cpu"]) >= slots


def check_statefulset(m):
    spec = m.sts["spec"]
    assert spec.get("podManagementPolicy") == "Parallel"
    assert "replicas" not in spec, "spec.replicas would fight KEDA on every apply"
    svc = one(m.docs, "Service", spec["serviceName"])
    assert svc["spec"].get("clusterIP") == "None", "the governing Service must be headless"
    labels = spec["template"]["metadata"]["labels"]
    assert all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()), \
        "the Service does not select the worker pods"
    assert all(labels.get(k) == v for k, v in spec["selector"]["matchLabels"].items())
    for d in m.docs:
        if d["kind"] != "Namespace":
            assert d["metadata"].get("namespace") == "codeq", f"{d['kind']} not in namespace codeq"
    ns = one(m.docs, "Namespace", "codeq")
    assert ns["metadata"]["labels"].get("pod-security.kubernetes.io/enforce") == "privileged"


def check_security_context(m, privileged):
    sc = m.worker["securityContext"]
    assert sc.get("runAsUser") == 0
    if privileged:
        assert sc.get("privileged") is True
        return
    assert not sc.get("privileged")
    caps = sc["capabilities"]
    assert caps["drop"] == ["ALL"]
    assert "SYS_ADMIN" in caps["add"]
    assert sc.get("allowPrivilegeEscalation") is True, "the API requires it with SYS_ADMIN"
    assert sc["seccompProfile"]["type"] in ("Unconfined", "Localhost"), \
        "RuntimeDefault (containerd) has no pivot_root"
    tsc = m.topics["securityContext"]
    assert tsc.get("runAsNonRoot") is True and tsc["capabilities"]["drop"] == ["ALL"] \
        and "add" not in tsc["capabilities"], "the topics Job needs no privileges"


CHECKS = [check_instance_id, check_partitions, check_trigger, check_termination_grace,
          check_heartbeat, check_resources, check_statefulset]


class RenderedManifests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = render(DEPLOY)
        cls.privileged = render(os.path.join(DEPLOY, "overlays", "privileged"))

    def test_checks_base(self):
        m = Manifests(self.base)
        for check in CHECKS:
            with self.subTest(check=check.__name__):
                check(m)
        check_security_context(m, privileged=False)

    def test_checks_privileged_overlay(self):
        m = Manifests(self.privileged)
        for check in CHECKS:
            with self.subTest(check=check.__name__):
                check(m)
        check_security_context(m, privileged=True)
        # The overlay changes the worker's securityContext and nothing else.
        a, b = copy.deepcopy(self.base), copy.deepcopy(self.privileged)
        for docs in (a, b):
            one(docs, "StatefulSet")["spec"]["template"]["spec"]["containers"][0].pop("securityContext")
        self.assertEqual(a, b)

    def test_capabilities_listed_once(self):
        with open(os.path.join(DEPLOY, "base", "statefulset.yaml")) as f:
            text = f.read()
        self.assertEqual(len(re.findall(r"^\s*capabilities:", text, re.M)), 1)
        self.assertEqual(len(re.findall(r"\bSYS_ADMIN\b", text.split("capabilities:")[1]
                                        .split("seccompProfile")[0])), 1)

    # Each semantic check must fail on a manifest that breaks it.
    def broken(self, mutate, check):
        docs = copy.deepcopy(self.base)
        mutate(docs)
        with self.assertRaises(AssertionError, msg=f"{check.__name__} accepted a broken copy"):
            check(Manifests(docs))

    def test_checks_catch_mistakes(self):
        sts = lambda d: one(d, "StatefulSet")
        wk = lambda d: sts(d)["spec"]["template"]["spec"]["containers"][0]
        cm = lambda d: one(d, "ConfigMap")["data"]

        def set_arg(name, value):
            def f(d):
                args = wk(d)["args"]
                args[args.index(name) + 1] = value
            return f

        cases = [
            (set_arg("--instance-id", "worker"), check_instance_id),
            (set_arg("--instance-id", "$(HOSTNAME_UNDEFINED)"), check_instance_id),
            (lambda d: one(d, "ScaledObject")["spec"].update(maxReplicaCount=8), check_partitions),
            (lambda d: cm(d).update(CODEQ_PARTITIONS="2"), check_partitions),
            (lambda d: one(d, "ScaledObject")["spec"]["triggers"][0]["metadata"].update(
                consumerGroup="other"), check_trigger),
            (lambda d: cm(d).update(CODEQ_BROKERS="elsewhere:9092"), check_trigger),
            (lambda d: sts(d)["spec"]["template"]["spec"].update(
                terminationGracePeriodSeconds=30), check_termination_grace),
            (lambda d: cm(d).update(CODEQ_GRACE_MS="50000"), check_termination_grace),
            (set_arg("--heartbeat-file", "/run/elsewhere/heartbeat"), check_heartbeat),
            (lambda d: wk(d).pop("readinessProbe"), check_heartbeat),
            (lambda d: cm(d).update(CODEQ_SLOTS="4"), check_resources),
            (lambda d: cm(d).update(CODEQ_JOB_MEMORY_MAX_MB="2048"), check_resources),
            (lambda d: wk(d)["resources"]["limits"].update(memory="1Gi"), check_resources),
            (lambda d: sts(d)["spec"].update(replicas=2), check_statefulset),
            (lambda d: sts(d)["spec"].update(podManagementPolicy="OrderedReady"),
             check_statefulset),
        ]
        for mutate, check in cases:
            with self.subTest(check=check.__name__):
                self.broken(mutate, check)


class SchemaValidationFails(unittest.TestCase):
    """scripts/k8s-validate.sh on broken copies of deploy/kubernetes: exit 1, naming the error."""

    def run_broken(self, edits, expect):
        with tempfile.TemporaryDirectory() as tmp:
            copy_dir = os.path.join(tmp, "kubernetes")
            shutil.copytree(DEPLOY, copy_dir)
            for rel, old, new in edits:
                p = os.path.join(copy_dir, rel)
                with open(p) as f:
                    text = f.read()
                self.assertIn(old, text, f"{rel}: the test's edit no longer applies")
                with open(p, "w") as f:
                    f.write(text.replace(old, new, 1))
            r = subprocess.run(["bash", VALIDATE, copy_dir], capture_output=True, text=True)
            out = r.stdout + r.stderr
            self.assertEqual(r.returncode, 1, f"validator accepted a broken copy:\n{out}")
            for e in expect:
                self.assertIn(e, out)

    def test_valid_tree_passes(self):
        r = subprocess.run(["bash", VALIDATE, DEPLOY], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("0 errors", r.stdout)

    def test_misspelled_field(self):
        self.run_broken([("base/statefulset.yaml", "terminationGracePeriodSeconds: 60",
                          "terminationGracePeriodSecond: 60")],
                        ["statefulset.yaml: StatefulSet/codeq-worker [k8s 1.30]",
                         "'terminationGracePeriodSecond' was unexpected",
                         "(kustomize build): StatefulSet/codeq-worker"])

    def test_wrong_type_nested(self):
        self.run_broken([("base/statefulset.yaml", "allowPrivilegeEscalation: true",
                          "allowPrivilegeEscalation: \"yes\"")],
                        ["securityContext.allowPrivilegeEscalation: 'yes' is not of type"])

    def test_scaledobject_against_keda_crd(self):
        self.run_broken([("base/scaledobject.yaml", "minReplicaCount: 1", "minReplicaCount: one"),
                         ("base/scaledobject.yaml", 'lagThreshold: "8"', "lagThreshold: 8"),
                         ("base/scaledobject.yaml", "cooldownPeriod: 300", "cooldownPeriods: 300")],
                        ["ScaledObject/codeq-worker [CRD keda.sh_scaledobjects.yaml]",
                         "spec.minReplicaCount: 'one' is not of type 'integer'",
                         "spec.triggers.0.metadata.lagThreshold: 8 is not of type 'string'",
                         "'cooldownPeriods' was unexpected"])

    def test_unknown_kind(self):
        self.run_broken([("base/service.yaml", "kind: Service", "kind: Servce")],
                        ["no schema for apiVersion v1 kind Servce"])

    def test_broken_kustomization(self):
        self.run_broken([("overlays/privileged/privileged.yaml", "/securityContext",
                          "/securityContxt")],
                        ["overlays/privileged (kustomize build)"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
