#!/usr/bin/env bash
# Installs Debian's chromium for the report render test (tests/report/test_render.py) and
# its driver for the labelling page's browser tests (tests/label/test_label_browser.py),
# with the Noto CJK fonts (fonts-noto-cjk: without them Chinese answers, URGE's, render as
# empty boxes), unless /usr/bin/chromium, /usr/bin/chromedriver and a Chinese font are
# already there. Needs root (or sudo) and apt-get.
set -euo pipefail

has_cjk_font() {
    command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list ':lang=zh' family 2>/dev/null)" ]
}

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] && has_cjk_font; then
    echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
    echo "a Chinese font is installed: $(fc-list ':lang=zh' family | head -n 1)"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_chromium.sh: apt-get not found; install chromium by hand (/usr/bin/chromium)" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium chromium-driver fonts-dejavu-core fonts-noto-cjk fontconfig
/usr/bin/chromium --version
has_cjk_font || { echo "install_chromium.sh: no Chinese font after installing fonts-noto-cjk" >&2; exit 1; }
