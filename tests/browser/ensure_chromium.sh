#!/usr/bin/env bash
# Install Debian's chromium for the browser tests (tests/browser/), only when it is missing.
#
# Idempotent: does nothing when /usr/bin/chromium exists. Installs with apt-get only when
# running as root; otherwise says what to run and exits non-zero, so CI notices.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  echo "ensure_chromium: $CHROMIUM is present ($("$CHROMIUM" --version 2>/dev/null || echo 'version unknown'))"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "ensure_chromium: $CHROMIUM is missing and this is not root; run" \
    "'sudo apt-get update && sudo apt-get install -y chromium' (Debian) and retry." >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
"$CHROMIUM" --version
