#!/usr/bin/env node
// bootcplan: runs the compiled CLI in dist/bundle/ (`npm run build`; npm's `prepare` builds it on
// `npm install` of a clone). bin/bootcplan-dev.mjs runs the TypeScript sources instead.
import { launch } from './launch.mjs';

await launch('bootcplan', new URL('../dist/bundle/', import.meta.url), '.js');
