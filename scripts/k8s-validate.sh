#!/usr/bin/env bash
# Validate the Kubernetes manifests (deploy/kubernetes) offline against the real API schemas.
#
#   bash scripts/k8s-validate.sh [--test] [DIR_OR_FILE...]     (default: deploy/kubernetes)
#
# Installs what it needs, idempotently, under $CODEQ_K8S_CACHE (default ~/.cache/codeq-k8s):
#   * a venv with kubernetes-validate (PyPI; ships the JSON schemas of Kubernetes 1.25-1.37
#     generated from the API's OpenAPI, incl. "strict" ones that refuse unknown fields);
#   * kustomize, built from the Go module proxy (renders every kustomization as kubectl apply -k
#     would, and fails on errors in kustomization files and patches);
#   * KEDA's CRDs: the Go module github.com/kedacore/keda/v2 holds
#     config/crd/bases/keda.sh_scaledobjects.yaml (read from the module cache, never copied
#     into the tree).
# Then scripts/k8s_validate.py validates every manifest file and every rendered kustomization,
# strict, against Kubernetes $K8S_VERSIONS (the oldest the manifests support, the newest the
# package ships), and ScaledObjects against KEDA's CRD schema. Exit 0 valid, 1 invalid (each
# error names file, kind/name, schema, field), 2 setup failed.
# --test: afterwards run tests/deploy/test_manifests.py (semantic checks, broken copies).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${CODEQ_K8S_CACHE:-${HOME:-/root}/.cache/codeq-k8s}"
# Pinned tool versions (change here only).
KUBERNETES_VALIDATE_VERSION=1.37.0
KUSTOMIZE_VERSION=v5.8.1      # v5.8.3 needs Go >= 1.27; this machine has 1.26
KEDA_VERSION=v2.21.0
# 1.30: first version with securityContext.appArmorProfile (the worker sets it); 1.37: newest
# schemas kubernetes-validate $KUBERNETES_VALIDATE_VERSION ships.
K8S_VERSIONS="${CODEQ_K8S_VERSIONS:-1.30 1.37}"

run_tests=0
targets=()
for a in "$@"; do
  case "$a" in
    --test) run_tests=1 ;;
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) targets+=("$a") ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("$ROOT/deploy/kubernetes")

say() { echo "k8s-validate: $*" >&2; }
die() { say "$*"; exit 2; }

mkdir -p "$CACHE"
# One installer at a time (ctest and a developer may run this together).
exec 9>"$CACHE/.lock"
flock 9

# --- Python: venv with kubernetes-validate -------------------------------------------------
VENV="$CACHE/venv"
STAMP="$VENV/.codeq-kubernetes-validate-$KUBERNETES_VALIDATE_VERSION"
if [ ! -f "$STAMP" ]; then
  say "installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION into $VENV"
  rm -rf "$VENV"
  PY=/usr/bin/python3; [ -x "$PY" ] || PY="$(command -v python3)" || die "no python3"
  if ! "$PY" -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    # Debian splits the venv module out.
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
    fi
    "$PY" -m venv "$VENV" || die "python3 -m venv failed (install python3-venv)"
  fi
  "$VENV/bin/pip" install -q --disable-pip-version-check \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" || die "pip install failed"
  touch "$STAMP"
fi

# --- Go: kustomize and KEDA's CRDs from the module proxy ---------------------------------------
[ -d /usr/local/go/bin ] && PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || die "go not found (needed for kustomize and KEDA's CRDs)"
export GOMODCACHE="$CACHE/gomod" GOPATH="$CACHE/gopath" GOCACHE="$CACHE/gocache"
export GOBIN="$CACHE/bin" GOFLAGS=-modcacherw GOTOOLCHAIN=local
KUSTOMIZE="$GOBIN/kustomize"
if [ ! -x "$KUSTOMIZE" ] || [ "$("$KUSTOMIZE" version 2>/dev/null)" != "$KUSTOMIZE_VERSION" ]; then
  say "building kustomize $KUSTOMIZE_VERSION into $GOBIN"
  (cd "$CACHE" && go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION") ||
    die "go install kustomize failed"
  rm -rf "$GOCACHE"   # build cache only (about 185 MB); the binary is all that is needed
fi
KEDA_DIR="$GOMODCACHE/github.com/kedacore/keda/v2@$KEDA_VERSION"
if [ ! -f "$KEDA_DIR/config/crd/bases/keda.sh_scaledobjects.yaml" ]; then
  say "downloading github.com/kedacore/keda/v2@$KEDA_VERSION (CRDs) into $GOMODCACHE"
  (cd "$CACHE" && go mod download "github.com/kedacore/keda/v2@$KEDA_VERSION") ||
    die "go mod download keda failed"
fi
CRDS=()
for f in "$KEDA_DIR"/config/crd/bases/keda.sh_*.yaml; do CRDS+=(--crd "$f"); done

# --- validate ---------------------------------------------------------------------------------
VERSIONS=()
for v in $K8S_VERSIONS; do VERSIONS+=(--k8s-version "$v"); done
flock -u 9
rc=0
"$VENV/bin/python" "$ROOT/scripts/k8s_validate.py" "${VERSIONS[@]}" "${CRDS[@]}" \
  --kustomize "$KUSTOMIZE" "${targets[@]}" || rc=$?
[ "$rc" = 0 ] || exit "$rc"

if [ "$run_tests" = 1 ]; then
  CODEQ_K8S_KUSTOMIZE="$KUSTOMIZE" CODEQ_K8S_VALIDATE="$ROOT/scripts/k8s-validate.sh" \
    "$VENV/bin/python" "$ROOT/tests/deploy/test_manifests.py"
fi
