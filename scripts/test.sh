#!/usr/bin/env bash
# Install what the tests need into .venv and run all of them: the module's
# unit, property, reference and doctests, and nbval (strict) on every
# chapter. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh requirements-test.txt
ruff check posenc_core.py posenc_plots tests
python -m pytest -p no:cacheprovider -n 2 --dist loadfile \
  --nbval chapters tests "$@"
