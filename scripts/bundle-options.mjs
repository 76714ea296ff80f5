/**
 * esbuild's options for the bundle (scripts/build.mjs), shared with the tests that compile one
 * module of src/ the same way (test/support/built.ts bundledModule): ESM for Node.js 20, the libraries
 * inside except the Kubernetes client (a production dependency, loaded by the live commands only).
 */
export function bundleOptions(root, entryPoints, outdir, { sourcemap = false, splitting = true } = {}) {
  return {
    absWorkingDir: root,
    entryPoints,
    outdir,
    bundle: true,
    splitting,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: '[name]-[hash]',
    tsconfig: 'tsconfig.json',
    sourcemap,
    legalComments: 'eof',
    logLevel: 'warning',
    external: ['@kubernetes/client-node'],
    // CommonJS libraries inside an ES module call require() for Node.js built-ins.
    banner: { js: "import { createRequire as __bootcplanRequire } from 'node:module'; const require = __bootcplanRequire(import.meta.url);" },
  };
}
