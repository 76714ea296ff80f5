/**
 * `bootcplan status --watch` (docs/cli.md "Following a run: status --watch"): reads what `status`
 * reads (the apply lock and the progress record, through the driver) every `--interval`, as
 * `kubectl get -w` and `argocd app wait` follow an object, until the run ends; nothing is written.
 * On a terminal the status redraws in place; otherwise (a log, a pipe) one line per change, and
 * with -o json|yaml one document per change. The exit code is the run's, as apply would have
 * returned it (docs/cli.md "Exit codes"): done 0, halted 5, stopped by a signal 130/143, a lock
 * whose holder stopped renewing it 1. Ctrl-C (SIGINT) ends the watch with 130 and touches nothing.
 * Time and waiting come from the driver's clock (the simulator's is virtual).
 */
import { isoOf, type LockRecord, type ProgressState } from '../apply/ports/driver.ts';
import { EXIT, type ExitCode } from '../base/errors.ts';
import { jsonText } from '../base/json-text.ts';
import { progressSummary, renderStatus, runningNow } from '../render/status.ts';
import { forDisplay } from '../render/secrets.ts';
import { yamlOfJson } from '../render/formats.ts';
import type { CommandResult, KubeOptions, Ports } from './ports.ts';

interface WatchOptions {
  kube: KubeOptions;
  output: 'text' | 'json' | 'yaml';
  /** Seconds between two reads. */
  intervalSeconds: number;
}

/** One read of the cluster: the lock, whether it expired, the progress. */
interface Reading {
  lock: LockRecord | null;
  expired: boolean;
  progress: ProgressState;
}

/**
 * Whether the run has ended, and its exit code. A live lock: an apply runs (or is about to
 * record its run): go on. Without one: done 0; halted 5; a pool stopped by a signal 130/143, by
 * the fleet's batch timeout 5; a lock left to expire (its apply died) 1; no run at all 0. A run
 * in progress with no lock goes on: the next `apply --step` Job continues it.
 */
export function runEnd(r: Reading): ExitCode | null {
  if (r.lock && !r.expired) return null;
  const s = progressSummary(r.progress);
  if (!s) return EXIT.ok;
  if (s.state === 'done') return EXIT.ok;
  if (s.state === 'halted') return EXIT.halted;
  const stops = Object.values(s.pools).flatMap((p) => (p.interrupted && !p.done ? [p.interrupted.reason] : []));
  if (stops.includes('batch-timeout')) return EXIT.halted;
  if (stops.includes('SIGINT')) return EXIT.sigint;
  if (stops.includes('SIGTERM')) return EXIT.sigterm;
  return r.lock ? EXIT.error : null;
}

/** The one line a change prints off a terminal: lock, run state, each pool, the nodes in flight. */
function watchLine(r: Reading): string {
  const lock = forDisplay(r.lock);
  const s = forDisplay(progressSummary(r.progress, runningNow(r.lock, r.expired, r.progress)));
  const parts = [lock ? `lock ${r.expired ? 'expired' : 'held'} by ${lock.holder} (plan ${lock.planId})` : 'lock free'];
  if (!s) parts.push('no apply has run on this cluster');
  else {
    parts.push(`plan ${s.planId}: ${s.state === 'halted' ? 'HALTED' : s.state}`);
    for (const [name, p] of Object.entries(s.pools))
      parts.push(`${name}: ${p.done ? 'done' : p.halted ? `HALTED: ${p.halted.reason}` : `${p.wavesDone} wave(s) finished`}`);
    const nodes = Object.entries(s.nodesInFlight).map(([n, e]) => `${n} ${e.step}`);
    if (nodes.length) parts.push(`in flight: ${nodes.join(', ')}`);
  }
  return parts.join('; ');
}

async function read(driver: Awaited<ReturnType<Ports['openDriver']>>['driver']): Promise<Reading> {
  const [lock, progress] = [await driver.readLock(), await driver.readProgress()];
  const expired = lock ? Date.parse(lock.renewedAt) / 1000 + lock.ttlSeconds < driver.clock.now() : false;
  return { lock, expired, progress };
}

/** What one reading prints, per output and destination; `''` when nothing changed. */
function printer(ports: Ports, output: WatchOptions['output'], now: () => number): (r: Reading) => void {
  const { io } = ports;
  let last = '';
  let drawnLines = 0;
  return (r) => {
    if (output !== 'text') {
      const doc = {
        lock: r.lock ? { ...r.lock, expired: r.expired } : null,
        progress: progressSummary(r.progress, runningNow(r.lock, r.expired, r.progress), now()),
      };
      const key = jsonText(doc);
      if (key === last) return;
      last = key;
      io.stdout(output === 'json' ? key + '\n' : `---\n${yamlOfJson(jsonText(doc, 2) + '\n')}`);
    } else if (io.stdoutIsTTY) {
      const text = renderStatus(r.lock, r.expired, r.progress, now());
      if (text === last) return;
      last = text;
      // Back to the first line of the last drawing, cleared to the end of the screen (ECMA-48 CUU, ED).
      io.stdout(`${drawnLines ? `\x1b[${drawnLines}A\r\x1b[J` : ''}${text}`);
      drawnLines = text.split('\n').length - 1;
    } else {
      const line = watchLine(r);
      if (line === last) return;
      last = line;
      io.stdout(`${isoOf(now())} ${line}\n`);
    }
  };
}

/** `status --watch`: reads until the run ends; its exit code, or 130/143 when stopped by a signal. */
export async function watchStatus(ports: Ports, opts: WatchOptions): Promise<CommandResult> {
  const { driver, close } = await ports.openDriver(opts.kube, ports.io);
  try {
    const print = printer(ports, opts.output, () => driver.clock.now());
    return await ports.stops.during(async (signal) => {
      for (;;) {
        const r = await read(driver);
        print(r);
        const end = runEnd(r);
        if (end !== null) return { exitCode: end };
        try {
          await driver.clock.sleep(opts.intervalSeconds, signal);
        } catch (e) {
          // The wait ends early only for the watch's own stop (Ctrl-C): it ends the watch, no loop goes on.
          if (signal.aborted) return { exitCode: signal.reason === 'SIGTERM' ? EXIT.sigterm : EXIT.sigint };
          throw e;
        }
      }
    }, 'stopped watching; nothing was changed');
  } finally {
    close?.();
  }
}
