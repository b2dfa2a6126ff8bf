#!/usr/bin/env bash
# bench/e2e: codeq worker against the seeds' way through a real Kafka broker (bench/README.md).
# Debian's python3 on purpose: it has python3-confluent-kafka; the python3 first on PATH may not.
set -euo pipefail
/usr/bin/python3 -c 'import confluent_kafka' 2>/dev/null ||
  { echo "codeq: e2e: /usr/bin/python3 lacks confluent_kafka: run scripts/deps.sh" >&2; exit 2; }
exec /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/e2e.py" "$@"
