#!/usr/bin/env bash
# Configure and build codeq into build/ (warnings are errors).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCODEQ_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
