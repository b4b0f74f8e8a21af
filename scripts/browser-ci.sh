#!/usr/bin/env bash
# Install Debian's Chromium and its WebDriver for kenning's browser tests (Debian 12).
#
# Idempotent: a machine that already has both passes through at once. Playwright's own browser
# download is not used (it needs its CDN); Debian's chromium-driver drives /usr/bin/chromium
# through Selenium. Only the Debian archive is reached. Prints the driver's path at the end.
set -euo pipefail

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
say() { echo "browser-ci: $*" >&2; }

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    say "installing chromium and chromium-driver"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        chromium chromium-driver fonts-dejavu-core >/dev/null
fi
command -v chromedriver
