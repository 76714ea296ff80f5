#!/usr/bin/env bash
# Build (or locate) a real Prometheus for the health-gate end-to-end tests.
#
# Idempotent. The last line on stdout is the path of an executable `prometheus`.
#
#   BOOTCPLAN_PROMETHEUS          an existing prometheus binary: used as is, nothing is built
#   BOOTCPLAN_TESTENV_CACHE       cache root (default ~/.cache/bootcplan-testenv)
#   BOOTCPLAN_PROMETHEUS_VERSION  github.com/prometheus/prometheus module version (default below)
#
# The module version v0.316.0 is Prometheus 3.16.0 (Prometheus tags its Go module v0.<minor>.<patch>).
# `go install` of a module version builds no UI assets and stamps no version into the binary
# (`prometheus --version` prints an empty version); the module version is read back from the
# binary's build information (`go version -m`), so a binary of another version is never taken
# for this one. All progress goes to stderr; only the binary's path goes to stdout.
set -euo pipefail

VERSION="${BOOTCPLAN_PROMETHEUS_VERSION:-v0.316.0}"
MODULE="github.com/prometheus/prometheus"

log() { printf '[testenv/build-prometheus %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

START_TS=$(date +%s)
elapsed() { echo "$(( $(date +%s) - START_TS ))s"; }

# --- 1. BOOTCPLAN_PROMETHEUS short-cut -----------------------------------------
if [[ -n "${BOOTCPLAN_PROMETHEUS:-}" ]]; then
  [[ -x "$BOOTCPLAN_PROMETHEUS" && -f "$BOOTCPLAN_PROMETHEUS" ]] \
    || die "BOOTCPLAN_PROMETHEUS=$BOOTCPLAN_PROMETHEUS is not an executable file"
  log "using BOOTCPLAN_PROMETHEUS=$BOOTCPLAN_PROMETHEUS"
  echo "$(cd "$(dirname "$BOOTCPLAN_PROMETHEUS")" && pwd)/$(basename "$BOOTCPLAN_PROMETHEUS")"
  exit 0
fi

# --- Go toolchain (needed to build, and to read a cached binary's module version) ---
if ! command -v go >/dev/null 2>&1; then
  for d in /usr/local/go/bin /usr/lib/go/bin; do
    [[ -x "$d/go" ]] && export PATH="$d:$PATH" && break
  done
fi

CACHE_ROOT="${BOOTCPLAN_TESTENV_CACHE:-$HOME/.cache/bootcplan-testenv}"
CACHE="$CACHE_ROOT/prometheus-$VERSION"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"
BIN="$CACHE/prometheus"

# The module version a binary was built from ("" when unknown).
module_version() {
  command -v go >/dev/null 2>&1 || return 0
  go version -m "$1" 2>/dev/null | awk -v m="$MODULE" '$1 == "mod" && $2 == m { print $3; exit }'
}

cached() {
  [[ -x "$BIN" ]] || return 1
  # Without Go the directory name is the only record of the version: trust it.
  command -v go >/dev/null 2>&1 || return 0
  [[ "$(module_version "$BIN")" == "$VERSION" ]]
}

# Fast path without the lock: a finished binary is only ever moved into place whole.
if cached; then
  log "cached $BIN ($(elapsed))"
  echo "$BIN"
  exit 0
fi

# Serialise concurrent builds into the same cache dir (a CI job that started the build in the
# background and a test that asks for the binary wait for the same build).
exec 9>"$CACHE/.lock"
if command -v flock >/dev/null 2>&1; then
  log "waiting for $CACHE/.lock ..."
  flock -w 3600 9 || die "timed out waiting for lock $CACHE/.lock"
fi
if cached; then
  log "built by another process: $BIN ($(elapsed))"
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go not found (need Go >= 1.25), or set BOOTCPLAN_PROMETHEUS to a prometheus binary"
export GOTOOLCHAIN=local   # never try to download another toolchain
export CGO_ENABLED=0
# -modcacherw: the module cache stays removable; no VCS stamping outside a repository.
export GOFLAGS="-modcacherw -buildvcs=false"
log "using $(go version)"

if [[ -e "$BIN" ]]; then
  log "$BIN is module version '$(module_version "$BIN")', not $VERSION: rebuilding"
  rm -f "$BIN"
fi
OUT="$(mktemp -d "$CACHE/.build.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT
log "building $MODULE/cmd/prometheus@$VERSION (a cold build takes 8 to 32 minutes on 2 cores) ..."
T_BUILD=$(date +%s)
GOBIN="$OUT" go install "$MODULE/cmd/prometheus@$VERSION" >&2 || die "go install $MODULE/cmd/prometheus@$VERSION failed (see above)"
[[ "$(module_version "$OUT/prometheus")" == "$VERSION" ]] || die "the built binary does not report module version $VERSION"
mv -f "$OUT/prometheus" "$BIN"
log "prometheus built in $(( $(date +%s) - T_BUILD ))s ($(du -h "$BIN" | cut -f1))"
"$BIN" --version >/dev/null 2>&1 || die "the built prometheus does not run"
log "done in $(elapsed)"
echo "$BIN"
