#!/usr/bin/env bash
# Install everything codeq needs to build, run and test, from Debian packages only.
# Idempotent: packages already present are skipped without touching apt.
set -euo pipefail
pkgs=(
  build-essential cmake pkg-config
  librdkafka-dev libjansson-dev libseccomp-dev libcgroup-dev libcmocka-dev
  libpython3-dev python3 python3-jsonschema libssl-dev
  libmicrohttpd-dev             # the worker's /metrics and health endpoint (libmicrohttpd12)
  python3-prometheus-client     # tests/integration/worker_ops.py parses /metrics with it
  python3-numpy                 # the abuse suite's numpy regression guard runs for real
  python3-confluent-kafka       # bench/e2e's seeds'-way baseline worker and its driver;
                                # clients/python's dependency
  python3-venv python3-setuptools python3-wheel  # tests/integration/client_venv.py: pip
                                # install ./clients/python into a venv, offline
  kcat openjdk-17-jdk-headless maven iproute2 procps
  gdb                           # the kafka tests print a hung worker's thread stacks
  clang libclang-rt-14-dev      # libFuzzer harnesses (fuzz/, scripts/fuzz.sh): clang 14 and
                                # its runtimes (libclang_rt.fuzzer, asan, ubsan)
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "codeq: deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "codeq: deps: ok" >&2
