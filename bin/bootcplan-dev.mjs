#!/usr/bin/env node
// Development entry (not in the package): runs the TypeScript sources through tsx, so an edit
// in src/ shows without `npm run build`; `npm run bench` times it beside the compiled start-up.
import { register } from 'tsx/esm/api';
import { launch } from './launch.mjs';

register();
await launch('bootcplan', new URL('../src/cli/', import.meta.url), '.ts');
