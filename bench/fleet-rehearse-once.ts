/**
 * One `fleet rehearse -f FLEET -o json --jitter 0.3` through the CLI's run(), in this process
 * (so its peak RSS is the rehearsal's); prints one JSON line with wall and CPU time, peak RSS and the
 * fleet figures.   node --import tsx bench/fleet-rehearse-once.ts FLEET
 */
import { dirname } from 'node:path';
import { run } from '../src/cli/main.ts';
import type { CliIO } from '../src/app/ports.ts';

const file = process.argv[2];
let out = '';
let err = '';
const io = {
  env: { NO_COLOR: '1' },
  stdoutIsTTY: false,
  stderrIsTTY: false,
  stdout: (s: string) => {
    out += s;
  },
  stderr: (s: string) => {
    err += s;
  },
} as unknown as CliIO;
process.chdir(dirname(file));
const t0 = performance.now();
const code = await run(['fleet', 'rehearse', '-f', 'fleet.yaml', '-o', 'json', '--jitter', '0.3', '--seed', '1'], { io });
const wallMs = performance.now() - t0;
if (code !== 0) throw new Error(`fleet rehearse exited ${code}: ${err.slice(0, 2000)}`);
const r = JSON.parse(out);
const ru = process.resourceUsage();
console.log(
  JSON.stringify({
    wallMs,
    cpuMs: (ru.userCPUTime + ru.systemCPUTime) / 1000,
    peakRssMB: ru.maxRSS / 1024,
    makespanSeconds: r.makespanSeconds,
    estimatedSeconds: r.estimatedSeconds,
    batches: r.batches.length,
    exitCode: code,
  }),
);
