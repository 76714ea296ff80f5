#!/usr/bin/env node
// kubectl plugin: with this file on PATH as kubectl-bootcplan, `kubectl bootcplan ARGS` runs
// bootcplan ARGS (kubectl passes the arguments after the plugin name unchanged).
import { launch } from './launch.mjs';

await launch('kubectl bootcplan', new URL('../dist/bundle/', import.meta.url), '.js');
