#!/usr/bin/env bash
# Installs Mesa's lavapipe (Vulkan on the CPU), which the WebGPU tests run on, where a new enough one is missing:
# Dawn rejects Mesa older than 25. Debian 12 (bookworm) ships Mesa 22, so it gets Mesa 25 from bookworm-backports,
# added on the same mirror as the machine's own apt sources; Debian 13 (trixie) and later install from their own
# suite. Nothing is done where Mesa 25 or newer and its ICD file are installed.
#
# usage: scripts/ci/lavapipe.sh [--dry-run] [--root DIR]
#   --dry-run   print the commands it would run (and the file it would write) instead of running them; needs no root
#   --root DIR  read /etc/os-release, /etc/apt, the Vulkan ICD folder and dpkg's database under DIR (for tests)
set -euo pipefail

dry_run=false
root=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry_run=true ;;
    --root) root="${2:?--root needs a directory}"; shift ;;
    *) echo "lavapipe.sh: unknown argument '$1' (usage: lavapipe.sh [--dry-run] [--root DIR])" >&2; exit 2 ;;
  esac
  shift
done

PACKAGES=(mesa-vulkan-drivers libvulkan1)
MINIMUM_MESA=25

# The installed mesa-vulkan-drivers version, or nothing.
installed_mesa() {
  dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${db:Status-Status} ${Version}' mesa-vulkan-drivers 2>/dev/null |
    awk '$1 == "installed" { print $2 }' || true
}

has_icd() { compgen -G "$root/usr/share/vulkan/icd.d/lvp_icd*.json" >/dev/null; }

# Runs a command, or prints it under --dry-run.
run() {
  if $dry_run; then echo "$*"; else "$@"; fi
}

# Writes standard input to a root-owned file, or prints it under --dry-run.
write_file() {
  if $dry_run; then
    echo "write $1:"
    sed 's/^/  /'
  else
    $sudo tee "$1" >/dev/null
  fi
}

sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"

version=$(installed_mesa)
if [ -n "$version" ] && dpkg --compare-versions "$version" ge "$MINIMUM_MESA" && has_icd; then
  echo "lavapipe: Mesa $version is installed; nothing to do"
  exit 0
fi

os_release="$root/etc/os-release"
[ -f "$os_release" ] || os_release="$root/usr/lib/os-release"
codename=$(sed -n 's/^VERSION_CODENAME=//p' "$os_release" 2>/dev/null | tr -d "\"'")
if [ -z "$codename" ]; then
  echo "lavapipe: no VERSION_CODENAME in $os_release: this script knows Debian 12 (bookworm) and 13 (trixie)" >&2
  exit 1
fi

echo "lavapipe: Mesa ${version:-not installed} on $codename; Dawn needs $MINIMUM_MESA or newer"
install=($sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends)
if [ "$codename" = bookworm ]; then
  if ! grep -rqs "bookworm-backports" "$root/etc/apt/sources.list" "$root/etc/apt/sources.list.d/"; then
    # The machine's own Debian mirror (deb822 sources first, then the one-line format), not its security mirror.
    mirror=$(grep -hs '^URIs:' "$root"/etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -1 || true)
    [ -n "$mirror" ] || mirror=$(grep -hs '^deb ' "$root/etc/apt/sources.list" | awk '{print $2}' | grep -v security | head -1 || true)
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "${mirror:-http://deb.debian.org/debian}" | write_file "$root/etc/apt/sources.list.d/bookworm-backports.sources"
  fi
  run $sudo apt-get update -qq
  run "${install[@]}" -t bookworm-backports "${PACKAGES[@]}"
else
  # trixie and later: their own Mesa is new enough (trixie has 25.0).
  run $sudo apt-get update -qq
  run "${install[@]}" "${PACKAGES[@]}"
fi

if ! $dry_run; then
  version=$(installed_mesa)
  if [ -z "$version" ] || ! dpkg --compare-versions "$version" ge "$MINIMUM_MESA" || ! has_icd; then
    echo "lavapipe: installed Mesa ${version:-nothing} on $codename, older than $MINIMUM_MESA or without lavapipe's ICD file; Dawn will not use it" >&2
    exit 1
  fi
  echo "lavapipe: Mesa $version installed"
fi
