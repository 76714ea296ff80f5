#!/usr/bin/env bash
# Build (or locate) a real kube-apiserver + etcd for end-to-end tests.
#
# Idempotent. The last line on stdout is the directory holding executable
# `kube-apiserver` and `etcd` (suitable as KUBEBUILDER_ASSETS).
#
#   build.sh [COMPONENT ...]  also build these binaries of the same k8s.io/kubernetes module
#                             into the same directory: kube-controller-manager, kube-scheduler
#                             (the drain suites run the disruption and ReplicaSet controllers
#                             and the scheduler against the test API server)
#
#   KUBEBUILDER_ASSETS        if set and it holds both binaries, use it as is
#   BOOTCPLAN_TESTENV_CACHE   cache root (default ~/.cache/bootcplan-testenv)
#   BOOTCPLAN_K8S_VERSION     k8s.io/kubernetes version to build (default below)
#   BOOTCPLAN_ETCD_VERSION    go.etcd.io/etcd version if etcd must be built
#   BOOTCPLAN_ETCD_FROM_APT=0 skip Debian's etcd-server, always build etcd
#
# All progress goes to stderr; only the asset dir goes to stdout.
set -euo pipefail

K8S_VERSION="${BOOTCPLAN_K8S_VERSION:-v1.35.4}"
ETCD_VERSION="${BOOTCPLAN_ETCD_VERSION:-v3.6.5}"
# Debian's etcd-server must be at least this (Kubernetes docs: 3.4.22+ or 3.5.6+);
# otherwise etcd is built from source.
ETCD_MIN_VERSION="3.4.22"

log() { printf '[testenv/build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

START_TS=$(date +%s)
elapsed() { echo "$(( $(date +%s) - START_TS ))s"; }

# The binaries asked for: kube-apiserver and etcd always, then the components named.
COMPONENTS=(kube-apiserver)
for c in "$@"; do
  case "$c" in
    kube-controller-manager|kube-scheduler) COMPONENTS+=("$c") ;;
    *) die "unknown component $c (expected kube-controller-manager or kube-scheduler)" ;;
  esac
done

have_assets() {
  [[ -n "${1:-}" && -x "$1/etcd" ]] || return 1
  local c
  for c in "${COMPONENTS[@]}"; do [[ -x "$1/$c" ]] || return 1; done
}

# A component is built when its binary is there with a stamp of this version.
is_built() { # is_built DIR COMPONENT
  [[ -x "$1/$2" && -f "$1/.$2.stamp" && "$(cat "$1/.$2.stamp")" == "$K8S_VERSION" ]]
}
missing_components() { # the components of COMPONENTS not built in DIR, one per line
  local c
  for c in "${COMPONENTS[@]}"; do is_built "$1" "$c" || echo "$c"; done
}

# --- 1. KUBEBUILDER_ASSETS short-cut -----------------------------------------
if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  if have_assets "$KUBEBUILDER_ASSETS"; then
    log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
    (cd "$KUBEBUILDER_ASSETS" && pwd)
    exit 0
  fi
  log "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS lacks one of etcd ${COMPONENTS[*]}; building instead"
fi

CACHE_ROOT="${BOOTCPLAN_TESTENV_CACHE:-$HOME/.cache/bootcplan-testenv}"
CACHE="$CACHE_ROOT/$K8S_VERSION"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"

# Serialise concurrent builds into the same cache dir.
exec 9>"$CACHE/.lock"
if command -v flock >/dev/null 2>&1; then
  flock -w 3600 9 || die "timed out waiting for lock $CACHE/.lock"
fi

# Fast path: already built.
if have_assets "$CACHE" && [[ -z "$(missing_components "$CACHE")" ]]; then
  log "cached assets in $CACHE ($(elapsed))"
  echo "$CACHE"
  exit 0
fi

# --- Go toolchain -------------------------------------------------------------
if ! command -v go >/dev/null 2>&1; then
  for d in /usr/local/go/bin /usr/lib/go/bin; do
    [[ -x "$d/go" ]] && export PATH="$d:$PATH" && break
  done
fi
command -v go >/dev/null 2>&1 || die "go not found (need Go >= 1.25)"
export GOTOOLCHAIN=local   # never try to download another toolchain
export GOFLAGS="-mod=mod -buildvcs=false"
export CGO_ENABLED=0
log "using $(go version)"

version_ge() { # version_ge A B  -> A >= B (dotted, no leading v)
  [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" == "$2" ]]
}

# --- 2. etcd ------------------------------------------------------------------
etcd_ok() { # etcd_ok BINARY -> prints version if usable
  local v
  v="$("$1" --version 2>/dev/null | sed -n 's/^etcd Version: *//p' | head -n1)" || return 1
  [[ -n "$v" ]] && version_ge "$v" "$ETCD_MIN_VERSION" && echo "$v"
}

build_etcd() {
  log "building etcd $ETCD_VERSION from go.etcd.io/etcd/server/v3 ..."
  local t0 dir
  t0=$(date +%s)
  dir="$(mktemp -d "${TMPDIR:-/tmp}/bootcplan-etcd-build.XXXXXX")"
  (
    cd "$dir"
    cat > go.mod <<EOF
module bootcplan.local/etcdbuild

go 1.25
EOF
    # server/v3 is the etcd server main package ("etcd" binary).
    go get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}" >&2
    go build -trimpath -ldflags "-s -w" -o "$CACHE/etcd.tmp" go.etcd.io/etcd/server/v3 >&2
  )
  rm -rf "$dir"
  mv -f "$CACHE/etcd.tmp" "$CACHE/etcd"
  log "etcd built in $(( $(date +%s) - t0 ))s"
}

if [[ -x "$CACHE/etcd" ]] && etcd_ok "$CACHE/etcd" >/dev/null; then
  log "etcd already in cache: $(etcd_ok "$CACHE/etcd")"
else
  rm -f "$CACHE/etcd"
  if [[ "${BOOTCPLAN_ETCD_FROM_APT:-1}" != 0 ]]; then
    if [[ ! -x /usr/bin/etcd ]] && command -v apt-get >/dev/null 2>&1 && [[ $(id -u) == 0 ]]; then
      log "installing Debian etcd-server ..."
      if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends etcd-server >&2; then
        DEBIAN_FRONTEND=noninteractive apt-get update >&2 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends etcd-server >&2 || true
      fi
    fi
    if [[ -x /usr/bin/etcd ]]; then
      if v=$(etcd_ok /usr/bin/etcd); then
        log "using Debian etcd $v (/usr/bin/etcd)"
        ln -sf /usr/bin/etcd "$CACHE/etcd"
      else
        log "/usr/bin/etcd is $(/usr/bin/etcd --version 2>/dev/null | head -n1) (< $ETCD_MIN_VERSION); building instead"
      fi
    fi
  fi
  [[ -x "$CACHE/etcd" ]] || build_etcd
fi

# --- 3. kube-apiserver and the components asked for -------------------------
mapfile -t TO_BUILD < <(missing_components "$CACHE")
if [[ ${#TO_BUILD[@]} -eq 0 ]]; then
  log "${COMPONENTS[*]} already in cache; done in $(elapsed)"
  echo "$CACHE"
  exit 0
fi
for c in "${TO_BUILD[@]}"; do rm -f "$CACHE/.$c.stamp"; done

BUILD_DIR="$(mktemp -d "${TMPDIR:-/tmp}/bootcplan-apiserver-build.XXXXXX")"
trap 'rm -rf "$BUILD_DIR"' EXIT

log "resolving k8s.io/kubernetes@$K8S_VERSION ..."
DL_JSON="$(cd "$BUILD_DIR" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION")" \
  || die "go mod download k8s.io/kubernetes@$K8S_VERSION failed"
K8S_GOMOD="$(printf '%s\n' "$DL_JSON" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p' | head -n1)"
[[ -f "$K8S_GOMOD" ]] || die "could not find GoMod of k8s.io/kubernetes@$K8S_VERSION"

# Staging modules: lines like "k8s.io/api => ./staging/src/k8s.io/api".
STAGING="$(sed -n 's#^[[:space:]]*\(k8s\.io/[A-Za-z0-9._/-]*\)[[:space:]]*=>[[:space:]]*\./staging/src/.*#\1#p' "$K8S_GOMOD" | sort -u)"
[[ -n "$STAGING" ]] || die "no staging replace directives found in $K8S_GOMOD"
GO_DIRECTIVE="$(sed -n 's/^go \([0-9.]*\).*/\1/p' "$K8S_GOMOD" | head -n1)"
GODEBUG_LINE="$(grep -E '^godebug ' "$K8S_GOMOD" || true)"
STAGING_VERSION="v0.${K8S_VERSION#v1.}"    # v1.35.4 -> v0.35.4
log "$(echo "$STAGING" | wc -l) staging modules -> $STAGING_VERSION (go $GO_DIRECTIVE)"

K8S_MM="${K8S_VERSION#v}"; K8S_MAJOR="${K8S_MM%%.*}"; K8S_MM="${K8S_MM#*.}"; K8S_MINOR="${K8S_MM%%.*}"

{
  echo "module bootcplan.local/apiserverbuild"
  echo
  echo "go $GO_DIRECTIVE"
  [[ -n "$GODEBUG_LINE" ]] && { echo; echo "$GODEBUG_LINE"; }
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  echo "replace ("
  while read -r m; do echo "	$m => $m $STAGING_VERSION"; done <<<"$STAGING"
  echo ")"
} > "$BUILD_DIR/go.mod"

vars=(
  "gitVersion=$K8S_VERSION"
  "gitMajor=$K8S_MAJOR"
  "gitMinor=$K8S_MINOR"
  "gitTreeState=clean"
  "buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
)
LDFLAGS="-s -w"
for kv in "${vars[@]}"; do
  LDFLAGS+=" -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
done

log "building ${TO_BUILD[*]} $K8S_VERSION (this takes a while on a cold cache) ..."
T_BUILD=$(date +%s)
PACKAGES=()
for c in "${TO_BUILD[@]}"; do PACKAGES+=("k8s.io/kubernetes/cmd/$c"); done
OUT="$BUILD_DIR/bin"
mkdir -p "$OUT"
(
  cd "$BUILD_DIR"
  # Resolve the full module graph (adds the rest of the requirements).
  go mod download k8s.io/kubernetes >&2
  # One `go build` for every binary: their packages are compiled once (with -o DIR/ Go writes
  # each main package to DIR/<name>).
  go build -trimpath -tags "notest,grpcnotrace" -ldflags "$LDFLAGS" -o "$OUT/" "${PACKAGES[@]}" >&2
) || die "go build of ${TO_BUILD[*]} failed (see above)"
for c in "${TO_BUILD[@]}"; do
  mv -f "$OUT/$c" "$CACHE/$c"
  echo "$K8S_VERSION" > "$CACHE/.$c.stamp"
done
cp "$BUILD_DIR/go.mod" "$CACHE/apiserver-build.go.mod"
log "${TO_BUILD[*]} built in $(( $(date +%s) - T_BUILD ))s"

for c in "${TO_BUILD[@]}"; do
  "$CACHE/$c" --version >&2 || die "built $c does not run"
done
log "done in $(elapsed); assets in $CACHE"
echo "$CACHE"
