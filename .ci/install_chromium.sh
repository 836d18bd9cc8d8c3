#!/usr/bin/env bash
# Installs Debian's chromium for the report render test (tests/report/test_render.py) and
# its driver for the labelling page's browser tests (tests/label/test_label_browser.py),
# unless /usr/bin/chromium and /usr/bin/chromedriver are already there. Needs root (or
# sudo) and apt-get.
set -euo pipefail

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
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
$SUDO apt-get install -y --no-install-recommends chromium chromium-driver fonts-dejavu-core fonts-noto-cjk
/usr/bin/chromium --version
