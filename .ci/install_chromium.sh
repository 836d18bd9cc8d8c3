#!/usr/bin/env bash
# Installs Debian's chromium for the report render test (tests/report/test_render.py),
# unless /usr/bin/chromium is already there. Needs root (or sudo) and apt-get.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
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
$SUDO apt-get install -y --no-install-recommends chromium fonts-dejavu-core fonts-noto-cjk
/usr/bin/chromium --version
