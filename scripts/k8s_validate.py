#!/usr/bin/env python3
"""Validate Kubernetes manifests offline against the API's JSON schemas (strict).

Run by scripts/k8s-validate.sh, which installs what this needs (kubernetes-validate from PyPI in
a venv, kustomize and KEDA's CRDs from the Go module proxy) and passes their paths.

For every TARGET (a file or a directory):
  * each *.yaml / *.yml file (recursively) is loaded; every document that is a Kubernetes object
    (a mapping with apiVersion and kind) is validated; kustomization files and kustomize patch
    files (no apiVersion/kind) are left to kustomize;
  * each directory holding a kustomization.yaml is rendered with `kustomize build` and every
    rendered object is validated: this is what `kubectl apply -k` would send.
Built-in kinds are validated with kubernetes-validate's "local-strict" schemas (generated from
the Kubernetes OpenAPI; additionalProperties false everywhere: an unknown or misspelled field is
an error) for each --k8s-version. Custom resources are validated with the openAPIV3Schema of
their CustomResourceDefinition (--crd), made strict the same way (an object schema with
properties and no x-kubernetes-preserve-unknown-fields admits no other field) and with metadata
checked as a Kubernetes ObjectMeta. CEL rules (x-kubernetes-validations) are not evaluated; they
are listed. Objects whose kind has no schema are errors.

Exit status: 0 all valid, 1 some object invalid (each error printed as
"FAIL <source>: <Kind>/<name> [<schema>]: <path>: <message>"), 2 usage or setup error.
"""
import argparse
import glob
import os
import subprocess
import sys

import jsonschema
import referencing
import yaml

from kubernetes_validate import utils as kv
from kubernetes_validate.version import __version__ as KV_VERSION

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DEFS_URI = "https://kubernetes.io/api/_definitions.json"
OBJECT_META = DEFS_URI + "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


class Failures:
    def __init__(self):
        self.count = 0
        self.objects = 0

    def fail(self, source, obj, schema, path, message):
        self.count += 1
        where = ".".join(str(p) for p in path) or "(root)"
        print(f"FAIL {source}: {describe(obj)} [{schema}]: {where}: {message}")


def describe(obj):
    if not isinstance(obj, dict):
        return f"<{type(obj).__name__}>"
    name = (obj.get("metadata") or {}).get("name", "?") if isinstance(obj.get("metadata"), dict) else "?"
    return f"{obj.get('kind', '?')}/{name}"


# ---- built-in kinds: kubernetes-validate's schemas ------------------------------------------

def k8s_schema_dir(version):
    """The local-strict schema directory kubernetes-validate uses for VERSION (e.g. 1.30)."""
    versions = [v for v in kv.all_versions() if kv.major_minor(v) == kv.major_minor(version)]
    if not versions:
        raise SystemExit(f"k8s_validate: kubernetes-validate {KV_VERSION} has "
                         f"no schemas for Kubernetes {version}; it has "
                         f"{', '.join(sorted({kv.major_minor(v) for v in kv.all_versions()}))}")
    return f"kubernetes-json-schema/v{versions[-1]}-local-strict", kv.major_minor(versions[-1])


_registries = {}


def k8s_registry(version):
    """A referencing registry holding the Kubernetes definitions of VERSION (cached)."""
    if version not in _registries:
        sdir, _ = k8s_schema_dir(version)
        defs = kv.schema_contents(f"{sdir}/_definitions.json", version)
        _registries[version] = referencing.Resource.from_contents(defs) @ referencing.Registry()
    return _registries[version]


def k8s_schema(obj, version):
    """The strict schema for OBJ's apiVersion/kind in VERSION, or None if there is none."""
    import re
    sdir, _ = k8s_schema_dir(version)
    api = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", obj["apiVersion"])
    try:
        return kv.schema_contents(f"{sdir}/{obj['kind'].lower()}-{api}.json", version)
    except FileNotFoundError:
        return None


# ---- custom resources: CRD openAPIV3Schema ----------------------------------------------------

def strict_openapi(node, path=()):
    """Copy of a CRD's openAPIV3Schema as a JSON Schema (2020-12) that refuses unknown fields,
    as the API server's strict field validation does (kubectl apply --validate=strict)."""
    if isinstance(node, list):
        return [strict_openapi(n, path) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k in ("properties", "patternProperties", "$defs", "definitions"):
            out[k] = {name: strict_openapi(s, path + (name,)) for name, s in v.items()}
        elif k in ("items", "additionalProperties", "not") and isinstance(v, dict):
            out[k] = strict_openapi(v, path)
        elif k in ("allOf", "anyOf", "oneOf"):
            out[k] = strict_openapi(v, path)
        else:
            out[k] = v
    if out.pop("x-kubernetes-int-or-string", False):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if out.pop("nullable", False) and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    preserve = out.get("x-kubernetes-preserve-unknown-fields") is True
    if out.get("type") == "object" and "additionalProperties" not in out and not preserve:
        # Structural schemas prune (lenient) or reject (strict) every field not in properties;
        # an object schema without properties admits none.
        out["additionalProperties"] = False
    return out


def cel_rules(node, path=(), found=None):
    found = [] if found is None else found
    if isinstance(node, dict):
        for r in node.get("x-kubernetes-validations", []):
            found.append(("/".join(path) or "/", r.get("rule"), r.get("message")))
        for k, v in node.items():
            if k != "x-kubernetes-validations":
                cel_rules(v, path + (k,) if k not in ("properties",) else path, found)
    elif isinstance(node, list):
        for v in node:
            cel_rules(v, path, found)
    return found


def load_crds(paths):
    """{(group/version, kind): (json schema, source, cel rules)} from CRD files."""
    crds = {}
    for p in paths:
        with open(p) as f:
            for doc in yaml.load_all(f, Loader=Loader):
                if not doc or doc.get("kind") != "CustomResourceDefinition":
                    continue
                spec = doc["spec"]
                for ver in spec["versions"]:
                    raw = ver["schema"]["openAPIV3Schema"]
                    schema = strict_openapi(raw)
                    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
                    props = schema.setdefault("properties", {})
                    props["metadata"] = {"$ref": OBJECT_META}
                    props["apiVersion"] = {"const": f"{spec['group']}/{ver['name']}"}
                    props["kind"] = {"const": spec["names"]["kind"]}
                    schema["required"] = sorted(set(schema.get("required", [])) |
                                                {"apiVersion", "kind", "metadata"})
                    crds[(f"{spec['group']}/{ver['name']}", spec["names"]["kind"])] = (
                        schema, os.path.basename(p), cel_rules(raw))
    return crds


# ---- documents ------------------------------------------------------------------------------

def validate_object(obj, source, versions, crds, failures, notes):
    failures.objects += 1
    if not isinstance(obj, dict) or not isinstance(obj.get("apiVersion"), str) \
            or not isinstance(obj.get("kind"), str):
        failures.fail(source, obj, "-", (), "not a Kubernetes object (apiVersion/kind missing)")
        return
    key = (obj["apiVersion"], obj["kind"])
    if key in crds:
        schema, crd_source, rules = crds[key]
        # ObjectMeta from the newest Kubernetes version asked for.
        registry = k8s_registry(versions[-1])
        v = jsonschema.Draft202012Validator(schema, registry=registry)
        for e in sorted(v.iter_errors(obj), key=lambda e: list(e.absolute_path)):
            failures.fail(source, obj, f"CRD {crd_source}", e.absolute_path, e.message)
        for where, rule, message in rules:
            notes.add(f"CEL rule of {obj['kind']} at {where} not evaluated here: {rule!r} "
                      f"({message})")
        return
    for version in versions:
        schema = k8s_schema(obj, version)
        _, used = k8s_schema_dir(version)
        if schema is None:
            failures.fail(source, obj, f"k8s {used}", (),
                          f"no schema for apiVersion {obj['apiVersion']} kind {obj['kind']} "
                          f"in Kubernetes {used} (misspelled kind or apiVersion, or a custom "
                          f"resource without --crd)")
            continue
        v = jsonschema.Draft202012Validator(schema, registry=k8s_registry(version))
        for e in sorted(v.iter_errors(obj), key=lambda e: list(e.absolute_path)):
            failures.fail(source, obj, f"k8s {used}", e.absolute_path, e.message)


def is_kustomize_file(path, doc):
    """kustomization files and JSON patches (a list) are kustomize's: it checks them when it
    renders. Any other document must be a Kubernetes object."""
    name = os.path.basename(path)
    return name in ("kustomization.yaml", "kustomization.yml") or isinstance(doc, list)


def yaml_files(target):
    if os.path.isfile(target):
        return [target]
    found = []
    for ext in ("yaml", "yml"):
        found += glob.glob(os.path.join(target, "**", f"*.{ext}"), recursive=True)
    return sorted(found)


def kustomize_roots(target):
    if os.path.isfile(target):
        return []
    roots = []
    for dirpath, _, files in os.walk(target):
        if "kustomization.yaml" in files or "kustomization.yml" in files:
            roots.append(dirpath)
    return sorted(roots)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k8s-version", action="append", required=True,
                    help="Kubernetes minor version to validate against, repeatable")
    ap.add_argument("--crd", action="append", default=[], help="CRD file, repeatable")
    ap.add_argument("--kustomize", help="kustomize binary; without it nothing is rendered")
    ap.add_argument("targets", nargs="+")
    args = ap.parse_args()

    versions = args.k8s_version
    for v in versions:
        k8s_schema_dir(v)  # fail early on a version the package does not ship
    crds = load_crds(args.crd)
    failures, notes = Failures(), set()

    for target in args.targets:
        if not os.path.exists(target):
            print(f"k8s_validate: {target}: no such file or directory", file=sys.stderr)
            return 2
        for path in yaml_files(target):
            try:
                with open(path) as f:
                    docs = [d for d in yaml.load_all(f, Loader=Loader) if d is not None]
            except yaml.YAMLError as e:
                failures.fail(path, None, "yaml", (), f"not valid YAML: {e}")
                continue
            for doc in docs:
                if not is_kustomize_file(path, doc):
                    validate_object(doc, path, versions, crds, failures, notes)
        if args.kustomize:
            for root in kustomize_roots(target):
                label = f"{root} (kustomize build)"
                r = subprocess.run([args.kustomize, "build", root], capture_output=True, text=True)
                if r.returncode != 0:
                    failures.fail(label, None, "kustomize", (), r.stderr.strip())
                    continue
                for doc in yaml.load_all(r.stdout, Loader=Loader):
                    if doc is not None:
                        validate_object(doc, label, versions, crds, failures, notes)

    for n in sorted(notes):
        print(f"NOTE {n}")
    crd_kinds = ", ".join(f"{k[1]} ({k[0]})" for k in sorted(crds)) or "none"
    print(f"k8s_validate: {failures.objects} objects checked against Kubernetes "
          f"{', '.join(kv.major_minor(v) for v in versions)} (kubernetes-validate "
          f"{KV_VERSION}, strict) and CRDs: {crd_kinds}; "
          f"{failures.count} errors")
    return 1 if failures.count else 0


if __name__ == "__main__":
    sys.exit(main())
