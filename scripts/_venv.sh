# Sourced by book.sh and test.sh: make .venv (once) and install $1 into it.
# PYTHON picks the interpreter that creates it (Python 3.11 or newer).
set -euo pipefail
if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r "$1"
export PATH="$PWD/.venv/bin:$PATH"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# Build matplotlib's font cache now, so that its one-time notice never
# lands in a notebook's stderr (which nbval and the build would flag).
python -c "import matplotlib.pyplot" >/dev/null 2>&1
