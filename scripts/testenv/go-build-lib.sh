# Sourced, not run: the steps build-prometheus.sh and build-alertmanager.sh share to build (or
# locate) a Go binary of a pinned module version in the testenv cache, under a lock.
#
# The sourcing script sets VERSION and MODULE, and defines module_version BINARY (the version a
# binary was built as, "" when unknown) and cached (whether "$BIN" is that version), which read
# BIN: it is set by testenv_begin. Every step logs to stderr; only a binary's path goes to stdout.
# A step that finds the binary prints its path and exits the script (0).

# testenv_begin NAME OVERRIDE: the log tag, the OVERRIDE variable's short-cut (an existing binary
# used as is), Go on PATH, and the cache: CACHE=$CACHE_ROOT/NAME-$VERSION, BIN=$CACHE/NAME.
testenv_begin() {
  TESTENV_NAME="$1"
  local override="$2"
  START_TS=$(date +%s)

  # --- 1. the OVERRIDE short-cut -----------------------------------------
  local given="${!override:-}"
  if [[ -n "$given" ]]; then
    [[ -x "$given" && -f "$given" ]] || die "$override=$given is not an executable file"
    log "using $override=$given"
    echo "$(cd "$(dirname "$given")" && pwd)/$(basename "$given")"
    exit 0
  fi

  # --- Go toolchain (needed to build, and to read a cached binary's module version) ---
  if ! command -v go >/dev/null 2>&1; then
    for d in /usr/local/go/bin /usr/lib/go/bin; do
      [[ -x "$d/go" ]] && export PATH="$d:$PATH" && break
    done
  fi

  CACHE_ROOT="${BOOTCPLAN_TESTENV_CACHE:-$HOME/.cache/bootcplan-testenv}"
  CACHE="$CACHE_ROOT/$TESTENV_NAME-$VERSION"
  mkdir -p "$CACHE"
  CACHE="$(cd "$CACHE" && pwd)"
  BIN="$CACHE/$TESTENV_NAME"
}

log() { printf '[testenv/build-%s %s] %s\n' "$TESTENV_NAME" "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
elapsed() { echo "$(( $(date +%s) - START_TS ))s"; }

# testenv_cached_or_lock: exits with the cached binary's path, or returns holding the cache's lock.
testenv_cached_or_lock() {
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
}

# testenv_prepare_build WHAT: Go for a reproducible local build (WHAT names the binary the
# override takes, for the error without Go), a stale binary removed, and OUT, a build directory
# in the cache removed on exit.
testenv_prepare_build() {
  command -v go >/dev/null 2>&1 || die "go not found (need Go >= 1.25), or set $1"
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
}
