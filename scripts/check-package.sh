#!/usr/bin/env bash
# The package as users and the image get it (README "Install"): packs the compiled CLI with
# `npm pack` (the file list the Containerfile copies too), refuses test, bench, source and
# fixture files in it, installs the tarball globally into a temporary prefix and plans the
# bundled example with the installed command, then installs it as the image does (the
# tarball's files, the lockfile, `npm ci --omit=dev`: no tsx, no esbuild) and plans again.
# Needs the registry for the dependencies. Run by .ci/run after `npm ci` (which builds dist/).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

npm run --silent build
npm pack --ignore-scripts --pack-destination "$tmp" >/dev/null
tgz=$(echo "$tmp"/bootcplan-*.tgz)
tar -tzf "$tgz" | sed 's#^package/##' | sort > "$tmp/files"
echo "packed $(basename "$tgz"): $(wc -l < "$tmp/files") files, $(du -k "$tgz" | cut -f1) KiB"
if grep -E '^(test|bench|src|scripts|plans|deploy)/|fixtures?/|golden/|\.test\.|^bin/bootcplan-dev' "$tmp/files"; then
  echo "error: the package holds the files above (tests, benches, sources or fixtures)" >&2
  exit 1
fi

echo "== global install of the tarball"
npm install -g --prefix "$tmp/global" --no-audit --no-fund --loglevel=error "$tgz"
pkg="$tmp/global/lib/node_modules/bootcplan"
"$tmp/global/bin/bootcplan" version
"$tmp/global/bin/kubectl-bootcplan" --help | head -n1
(cd "$tmp" && "$tmp/global/bin/bootcplan" plan -f "$pkg/examples/rollout.yaml" --cluster "$pkg/examples/cluster.yaml" | tail -n1)

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
