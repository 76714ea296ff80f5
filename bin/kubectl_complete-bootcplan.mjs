#!/usr/bin/env node
// kubectl's plugin completion (kubectl 1.26+): for `kubectl bootcplan ARGS <TAB>`, kubectl runs
// the executable `kubectl_complete-bootcplan` it finds on PATH with ARGS and the word being
// completed, and reads the candidates from its stdout, one per line, with an optional last line
// `:<directive>` (k8s.io/kubectl pkg/cmd/plugin/plugin_completion.go). That is what
// `bootcplan __complete` prints (src/cli/complete.ts), so this runs it.
import { launch } from './launch.mjs';

await launch('kubectl bootcplan', new URL('../dist/bundle/', import.meta.url), '.js', ['__complete', ...process.argv.slice(2)]);
