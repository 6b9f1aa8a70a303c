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
# posenc_apt_install PACKAGE...: install Debian packages with apt-get, as
# root or through sudo; on failure, print the end of apt's log (the caller
# checks that what it needs is there).
posenc_apt_install() {
  local sudo=""
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then sudo=sudo; fi
  if ! { $sudo apt-get update -qq &&
         DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"; } \
       >/tmp/posenc-apt.log 2>&1; then
    tail -20 /tmp/posenc-apt.log >&2
  fi
}
# The Chinese edition's figures need a CJK font: WenQuanYi Micro Hei,
# Debian's fonts-wqy-microhei (1.6 MB; Noto CJK is 57 MB), which has every
# character the book uses (tests/test_i18n.py checks it).
POSENC_CJK_FONT_FILE=/usr/share/fonts/truetype/wqy/wqy-microhei.ttc
if [ ! -f "$POSENC_CJK_FONT_FILE" ]; then
  echo "Installing Debian's fonts-wqy-microhei (the Chinese figures' font)"
  posenc_apt_install fonts-wqy-microhei
  if [ ! -f "$POSENC_CJK_FONT_FILE" ]; then
    echo "error: the Chinese edition needs the font WenQuanYi Micro Hei" \
      "(apt-get install fonts-wqy-microhei)" >&2
    exit 1
  fi
fi
# Build matplotlib's font cache now, so that its one-time notice never
# lands in a notebook's stderr (which nbval and the build would flag); a
# cache from before the font was installed is rebuilt.
python -c "import matplotlib.pyplot" >/dev/null 2>&1
python - <<'PY'
from pathlib import Path

import matplotlib
from matplotlib import font_manager as fm

if "WenQuanYi Micro Hei" not in {f.name for f in fm.fontManager.ttflist}:
    cache = Path(matplotlib.get_cachedir(),
                 f"fontlist-v{fm.FontManager.__version__}.json")
    fm.json_dump(fm.FontManager(), cache)
PY
