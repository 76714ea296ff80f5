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

# The steps both testenv Go builds share (log, the override, the cache, its lock, the build dir).
# shellcheck source=scripts/testenv/go-build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-build-lib.sh"
testenv_begin prometheus BOOTCPLAN_PROMETHEUS

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

testenv_cached_or_lock

testenv_prepare_build "BOOTCPLAN_PROMETHEUS to a prometheus binary"
log "building $MODULE/cmd/prometheus@$VERSION (a cold build takes 8 to 32 minutes on 2 cores) ..."
T_BUILD=$(date +%s)
GOBIN="$OUT" go install "$MODULE/cmd/prometheus@$VERSION" >&2 || die "go install $MODULE/cmd/prometheus@$VERSION failed (see above)"
[[ "$(module_version "$OUT/prometheus")" == "$VERSION" ]] || die "the built binary does not report module version $VERSION"
mv -f "$OUT/prometheus" "$BIN"
log "prometheus built in $(( $(date +%s) - T_BUILD ))s ($(du -h "$BIN" | cut -f1))"
"$BIN" --version >/dev/null 2>&1 || die "the built prometheus does not run"
log "done in $(elapsed)"
echo "$BIN"
