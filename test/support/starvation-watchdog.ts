/**
 * A watchdog for suites where a bug shows as a starved event loop (a loop that spins on promise
 * callbacks: src/apply/engine/interrupt.ts). Such a loop never yields, so no timer of the suite can
 * fail the test: the suite would hang. The watchdog is a worker thread, which runs while the
 * main thread spins: the main thread ticks a shared counter every 100 ms, and when it has not
 * moved for `limitMs` the worker writes why to stderr (a direct write: the main thread cannot
 * relay it) and kills the process (SIGKILL: nothing of the spinning thread runs any more).
 */
import { Worker } from 'node:worker_threads';

const WATCH = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const beat = new Int32Array(workerData.buffer);
let last = Atomics.load(beat, 0);
let since = Date.now();
setInterval(() => {
  const now = Atomics.load(beat, 0);
  if (now !== last) { last = now; since = Date.now(); return; }
  if (Date.now() - since < workerData.limitMs) return;
  writeSync(2, '\\nstarvation watchdog: the event loop did not turn for ' + workerData.limitMs + ' ms during ' + workerData.label + ': a loop spins on promise callbacks (a wait retried at once after it was aborted?); killing the process\\n');
  process.kill(process.pid, 'SIGKILL');
}, 250);
`;

/** Starts the watchdog; returns its stop. */
export function starvationWatchdog(label: string, limitMs = 60_000): () => Promise<void> {
  const buffer = new SharedArrayBuffer(4);
  const beat = new Int32Array(buffer);
  const worker = new Worker(WATCH, { eval: true, workerData: { buffer, limitMs, label } });
  worker.unref();
  const tick = setInterval(() => Atomics.add(beat, 0, 1), 100);
  tick.unref();
  return async () => {
    clearInterval(tick);
    await worker.terminate();
  };
}
