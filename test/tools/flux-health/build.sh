#!/usr/bin/env bash
# Builds flux-health (main.go: Flux's own CEL health-check evaluator, fluxcd/pkg runtime/cel)
# into $BOOTCPLAN_TOOLS/flux-health-<hash of its sources>, unless that binary exists, and
# prints its path. Modules come from the Go module proxy, pinned by go.mod and go.sum; the
# binary is cached outside the repository like actionlint and kustomize (.ci/run).
# test/cli/flux-health.test.ts finds it by the same hash.
set -euo pipefail
cd "$(dirname "$0")"
tools="${BOOTCPLAN_TOOLS:-$HOME/.cache/bootcplan-tools/bin}"
hash=$(cat go.mod go.sum main.go | sha256sum | cut -c1-12)
out="$tools/flux-health-$hash"
if [ ! -x "$out" ]; then
  mkdir -p "$tools"
  GOFLAGS=-modcacherw go build -trimpath -o "$out.tmp" .
  mv "$out.tmp" "$out"
fi
echo "$out"
