#!/usr/bin/env bash
# Re-run notebooks top to bottom in fresh kernels and store their outputs (what nbval then compares).
# Usage: tools/execute_notebooks.sh [NOTEBOOK ...]   (default: every notebook under notebooks/)
# Same settings as the tests: one thread for reproducible floats, and a throw-away progress database so that
# executing a quiz or review cell never touches your own progress.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export COURSE_DB="$scratch/progress.sqlite3"
if [ $# -eq 0 ]; then set -- notebooks/*.ipynb; fi
for nb in "$@"; do
  echo "== $nb"
  (cd "$(dirname "$nb")" && jupyter nbconvert --to notebook --execute --inplace \
    --ExecutePreprocessor.kernel_name=python3 \
    --ExecutePreprocessor.store_widget_state=False \
    --ExecutePreprocessor.record_timing=False \
    "$(basename "$nb")")
done
# A stored widget view cannot be shown again (its state is not stored): JupyterLab would say "Error displaying
# widget: model not found", which reads like a broken install. Keep only the text form, which says to run the cell.
python - "$@" <<'PY'
import sys

import nbformat

for path in sys.argv[1:]:
    nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop("application/vnd.jupyter.widget-view+json", None)
    nbformat.write(nb, path)
PY
