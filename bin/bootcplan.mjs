#!/usr/bin/env node
// bootcplan entry point: runs the TypeScript sources through tsx's loader, so that the
// installed command and the tests always run the same code (no stale build output).
import { register } from 'tsx/esm/api';

register();
const { run } = await import('../src/cli/main.ts');
process.exitCode = await run(process.argv.slice(2));
