#!/usr/bin/env bash
# Build (or locate) a real Alertmanager for the silence end-to-end tests (test/e2e/11-silences*).
#
# Idempotent. The last line on stdout is the path of an executable `alertmanager`.
#
#   BOOTCPLAN_ALERTMANAGER          an existing alertmanager binary: used as is, nothing is built
#   BOOTCPLAN_TESTENV_CACHE         cache root (default ~/.cache/bootcplan-testenv, beside Prometheus)
#   BOOTCPLAN_ALERTMANAGER_VERSION  github.com/prometheus/alertmanager module version (default below)
#
# Alertmanager tags its Go module with its release version (v0.35.0 is Alertmanager 0.35.0). The
# module cannot be built with `go install module@version`: ui/web.go embeds `app/dist`, the
# compiled web UI, which is built by its Makefile and is not part of the module zip ("pattern
# app/dist: no matching files found"). So the script downloads the module through the module
# proxy (`go mod download`, checked against the checksum database like any module), copies its
# source, puts a one-page placeholder where the UI goes (the tests use only the API), and builds
# cmd/alertmanager with the module's own go.mod and go.sum. The version is stamped as Alertmanager's
# Makefile does (-X github.com/prometheus/common/version.Version) and read back from
# `alertmanager --version`, so a binary of another version is never taken for this one (a local
# build's main module is "(devel)" in `go version -m`). All progress goes to stderr; only the path
# goes to stdout.
set -euo pipefail

VERSION="${BOOTCPLAN_ALERTMANAGER_VERSION:-v0.35.0}"
MODULE="github.com/prometheus/alertmanager"

log() { printf '[testenv/build-alertmanager %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

START_TS=$(date +%s)
elapsed() { echo "$(( $(date +%s) - START_TS ))s"; }

# --- 1. BOOTCPLAN_ALERTMANAGER short-cut -----------------------------------------
if [[ -n "${BOOTCPLAN_ALERTMANAGER:-}" ]]; then
  [[ -x "$BOOTCPLAN_ALERTMANAGER" && -f "$BOOTCPLAN_ALERTMANAGER" ]] \
    || die "BOOTCPLAN_ALERTMANAGER=$BOOTCPLAN_ALERTMANAGER is not an executable file"
  log "using BOOTCPLAN_ALERTMANAGER=$BOOTCPLAN_ALERTMANAGER"
  echo "$(cd "$(dirname "$BOOTCPLAN_ALERTMANAGER")" && pwd)/$(basename "$BOOTCPLAN_ALERTMANAGER")"
  exit 0
fi

# --- Go toolchain (needed to build, and to read a cached binary's module version) ---
if ! command -v go >/dev/null 2>&1; then
  for d in /usr/local/go/bin /usr/lib/go/bin; do
    [[ -x "$d/go" ]] && export PATH="$d:$PATH" && break
  done
fi

CACHE_ROOT="${BOOTCPLAN_TESTENV_CACHE:-$HOME/.cache/bootcplan-testenv}"
CACHE="$CACHE_ROOT/alertmanager-$VERSION"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"
BIN="$CACHE/alertmanager"

# The version a binary was built as ("" when unknown): `alertmanager, version 0.35.0 (branch: ...`.
module_version() {
  "$1" --version 2>&1 | awk '$2 == "version" { print "v" $3; exit }'
}

cached() {
  [[ -x "$BIN" ]] || return 1
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

command -v go >/dev/null 2>&1 || die "go not found (need Go >= 1.25), or set BOOTCPLAN_ALERTMANAGER to an alertmanager binary"
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
log "downloading $MODULE@$VERSION ..."
# Outside any module, so that no go.mod around the cache decides anything.
SRC_DIR="$(cd "$OUT" && go mod download -json "$MODULE@$VERSION" | awk -F'"' '$2 == "Dir" { print $4; exit }')"
[[ -n "$SRC_DIR" && -f "$SRC_DIR/go.mod" ]] || die "go mod download $MODULE@$VERSION gave no source directory"
cp -R "$SRC_DIR" "$OUT/src"
chmod -R u+w "$OUT/src"
for ui in elm mantine; do
  mkdir -p "$OUT/src/ui/app/dist/$ui"
  printf '<!doctype html><title>Alertmanager</title><p>The web UI is not built in the bootcplan test environment; the API is at /api/v2/.</p>\n' \
    > "$OUT/src/ui/app/dist/$ui/index.html"
done
log "building $MODULE/cmd/alertmanager@$VERSION (a cold build takes a few minutes on 2 cores) ..."
T_BUILD=$(date +%s)
(cd "$OUT/src" && go build -trimpath \
  -ldflags "-X github.com/prometheus/common/version.Version=${VERSION#v} -X github.com/prometheus/common/version.Branch=module-$VERSION" \
  -o "$OUT/alertmanager" ./cmd/alertmanager) >&2 || die "go build of $MODULE/cmd/alertmanager@$VERSION failed (see above)"
[[ "$(module_version "$OUT/alertmanager")" == "$VERSION" ]] || die "the built binary does not report version $VERSION"
mv -f "$OUT/alertmanager" "$BIN"
log "alertmanager built in $(( $(date +%s) - T_BUILD ))s ($(du -h "$BIN" | cut -f1))"
log "done in $(elapsed)"
echo "$BIN"
