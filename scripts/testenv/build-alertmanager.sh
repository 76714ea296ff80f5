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

# The steps both testenv Go builds share (log, the override, the cache, its lock, the build dir).
# shellcheck source=scripts/testenv/go-build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-build-lib.sh"
testenv_begin alertmanager BOOTCPLAN_ALERTMANAGER

# The version a binary was built as ("" when unknown): `alertmanager, version 0.35.0 (branch: ...`.
module_version() {
  "$1" --version 2>&1 | awk '$2 == "version" { print "v" $3; exit }'
}

cached() {
  [[ -x "$BIN" ]] || return 1
  [[ "$(module_version "$BIN")" == "$VERSION" ]]
}

testenv_cached_or_lock

testenv_prepare_build "BOOTCPLAN_ALERTMANAGER to an alertmanager binary"
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
