#!/usr/bin/env node
// kubectl's plugin completion (kubectl 1.26+): for `kubectl bootcplan ARGS <TAB>`, kubectl runs
// the executable `kubectl_complete-bootcplan` it finds on PATH with ARGS and the word being
// completed, and reads the candidates from its stdout, one per line, with an optional last line
// `:<directive>` (k8s.io/kubectl pkg/cmd/plugin/plugin_completion.go). That is what
// `bootcplan __complete` prints (src/cli/complete.ts); `__complete_kubectl` is the same for
// kubectl's own completion scripts, which expand or insert unquoted what they get: it offers only
// names that are plain shell words (docs/safety.md "Completion never evaluates data").
import { launch } from './launch.mjs';

await launch('kubectl bootcplan', new URL('../dist/bundle/', import.meta.url), '.js', ['__complete_kubectl', ...process.argv.slice(2)]);
