#!/usr/bin/env bash
# The package as users and the image get it (docs/development.md "What ships", "The smoke
# suite"), `npm run test:smoke`:
#  1. `npm pack` (its prepack step builds dist/bundle/): the file list the Containerfile copies
#     too; refuses tests, benches, sources, source maps and fixtures in it;
#  2. a global install of the tarball into a temporary prefix (production dependencies only),
#     then the smoke suite (test/smoke/) through the installed bootcplan and kubectl-bootcplan;
#  3. the install the image makes (the tarball's files, the lockfile, `npm ci --omit=dev`: no
#     tsx, no esbuild) and a plan with it.
# Needs the registry (or npm's cache) for the dependencies. Run by .ci/run after `npm ci`.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== npm pack"
npm pack --loglevel=error --pack-destination "$tmp" >/dev/null
tgz=$(echo "$tmp"/bootcplan-*.tgz)
tar -tzf "$tgz" | sed 's#^package/##' | sort > "$tmp/files"
echo "packed $(basename "$tgz"): $(wc -l < "$tmp/files") files, $(du -k "$tgz" | cut -f1) KiB"
if grep -P '^(test|bench|src|scripts|plans|\.ci)/|^deploy/(crds|gitops-crds)/|fixtures?/|golden/|\.test\.|\.map$|\.ts$|^dist/(?!bundle/|build-info)|^bin/bootcplan-dev' "$tmp/files"; then
  echo "error: the package holds the files above (tests, benches, sources, source maps or fixtures)" >&2
  exit 1
fi

echo "== global install of the tarball, production dependencies only"
npm install -g --prefix "$tmp/global" --no-audit --no-fund --loglevel=error "$tgz"
pkg="$tmp/global/lib/node_modules/bootcplan"
for dev in tsx esbuild typescript uvu fast-check; do
  if [ -e "$pkg/node_modules/$dev" ] || [ -e "$tmp/global/lib/node_modules/$dev" ]; then echo "error: $dev is installed with the package" >&2; exit 1; fi
done
echo "installed: $("$tmp/global/bin/bootcplan" --version), $(du -sk --exclude=node_modules "$pkg" | cut -f1) KiB without its dependencies"

echo "== smoke suite (test/smoke/) through the installed commands"
BOOTCPLAN_SMOKE_PREFIX="$tmp/global" npx tsx test/run.ts test/smoke > "$tmp/smoke.log" 2>&1 || {
  # The runner lists every failure after the run: print from there (all of it if it never got there).
  if grep -q '^== [0-9]* failed' "$tmp/smoke.log"; then sed -n '/^== [0-9]* failed/,$p' "$tmp/smoke.log"; else cat "$tmp/smoke.log"; fi
  exit 1
}
tail -n1 "$tmp/smoke.log"

echo "== as the image installs it: the tarball's files, the lockfile, npm ci --omit=dev"
mkdir "$tmp/image"
tar -xzf "$tgz" -C "$tmp/image" --strip-components=1
cp package-lock.json "$tmp/image/"
(cd "$tmp/image" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)
for dev in tsx esbuild typescript; do
  if [ -e "$tmp/image/node_modules/$dev" ]; then echo "error: $dev is installed without dev dependencies" >&2; exit 1; fi
done
(cd "$tmp" && node "$tmp/image/bin/bootcplan.mjs" plan -f "$tmp/image/examples/rollout.yaml" --cluster "$tmp/image/examples/cluster.yaml" | tail -n1)
echo "package ok"
