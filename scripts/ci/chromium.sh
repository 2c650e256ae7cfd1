#!/usr/bin/env bash
# Installs Debian's Chromium, which the dashboard's browser tests drive through playwright-core (issue 21), where it
# is missing. Debian 12 and 13 both ship it as `chromium`; nothing is downloaded from anywhere but the machine's own
# apt sources (Playwright's browser downloads are not used).
#
# usage: scripts/ci/chromium.sh [--dry-run]
#   --dry-run   print the commands it would run instead of running them; needs no root
set -euo pipefail

dry_run=false
case "${1:-}" in
  "") ;;
  --dry-run) dry_run=true ;;
  *) echo "chromium.sh: unknown argument '$1' (usage: chromium.sh [--dry-run])" >&2; exit 2 ;;
esac

if command -v chromium >/dev/null 2>&1; then
  echo "== Chromium: $(chromium --version 2>/dev/null | head -1)"
  exit 0
fi

run() {
  if $dry_run; then echo "$*"; else "$@"; fi
}
sudo_if_needed=()
[ "$(id -u)" -eq 0 ] || sudo_if_needed=(sudo)

echo "CI: installing Debian's chromium for the dashboard's browser tests" >&2
run "${sudo_if_needed[@]}" apt-get update -qq
run "${sudo_if_needed[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
$dry_run || echo "== Chromium: $(chromium --version 2>/dev/null | head -1)"
