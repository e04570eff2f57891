#!/usr/bin/env bash
# Installs the system packages Strata needs on a fresh Debian/Ubuntu machine.
# Idempotent: installs only what is missing. Run as root or with sudo available.
set -euo pipefail

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# ncurses wide-char headers and libraries (explorer), tmux (explorer end-to-end tests),
# redis-server and redis-tools (redis-benchmark) for the StrataRedis integration tests and benchmark,
# valgrind for the get-hit instruction-count guard (scripts/callgrind-guard.sh, run by `make test`),
# ncurses-term for the direct-colour terminal descriptions (xterm-direct, tmux-direct) the
# explorer uses for true colour. util-linux (essential on Debian/Ubuntu) has setpriv, through which
# the tests start redis-server so that it dies with the test process. gdb prints the threads of a
# test process that hangs (scripts/test.sh's watchdog). openssl makes the throwaway certificates
# of the StrataRedis TLS tests (Debian's redis-server is built with TLS).
for pkg in libncurses-dev ncurses-term tmux redis-server redis-tools valgrind util-linux gdb openssl; do
  have_pkg "$pkg" || need+=("$pkg")
done
# python3 lists the public symbols without documentation for `make docs`
# (scripts/docs-coverage.py, run by `make test`); any python3 on PATH will do.
command -v python3 >/dev/null 2>&1 || need+=(python3)

if ! command -v swift >/dev/null 2>&1; then
  echo "setup: swift is not on PATH; install the Swift 6.x toolchain first (https://swift.org/install)" >&2
  exit 1
fi
# `make docs` (scripts/docs.sh) runs docc and swift-symbolgraph-extract, which
# come with the Swift toolchain: on PATH, or beside the swift binary.
swift_bin=$(dirname "$(readlink -f "$(command -v swift)")")
for tool in docc swift-symbolgraph-extract; do
  if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "$swift_bin/$tool" ]; then
    echo "setup: $tool is not on PATH nor in $swift_bin; install a full Swift 6.x toolchain (it ships $tool)" >&2
    exit 1
  fi
done

if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      echo "setup: need root (or sudo) to install: ${need[*]}" >&2; exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
echo "setup: system packages present"
