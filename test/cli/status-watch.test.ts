/**
 * `status --watch` (docs/cli.md "Following a run: status --watch"): through the CLI with a driver
 * whose lock and progress change between reads (a script of readings, its clock virtual: no
 * test sleeps): a line per change off a terminal, a redraw in place on one, a JSON or YAML
 * document per change; the exit code the run's (done 0, halted 5, a dead apply's lock 1);
 * Ctrl-C exits 130 and writes nothing (the driver has no write method to call); --interval is
 * a duration and goes with --watch.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAllDocuments } from 'yaml';
import type { DriverFactory, SignalSource, StopSignal } from '../../src/app/ports.ts';
import type { ClusterDriver, LockRecord, ProgressState } from '../../src/apply/ports/driver.ts';
import type { PoolProgress } from '../../src/cluster/progress.ts';
import { runEnd } from '../../src/app/status-watch.ts';
import { cli } from '../support/cli.ts';

const s = suite('status --watch');

const T0 = Date.parse('2026-09-14T08:00:00Z') / 1000;
const LOCK: LockRecord = {
  lockId: 'l1',
  holder: 'ci@runner',
  planId: 'p1',
  since: '2026-09-14T08:00:00Z',
  renewedAt: '2026-09-14T08:00:00Z',
  ttlSeconds: 3600,
};

function progress(pool: Partial<PoolProgress>, o: { done?: boolean; inFlight?: boolean } = {}): ProgressState {
  return {
    version: '1',
    run: {
      planId: 'p1',
      startedAt: '2026-09-14T08:00:00Z',
      updatedAt: '2026-09-14T08:00:00Z',
      changesApplied: true,
      pools: { worker: { wavesDone: 0, done: false, ...pool } },
      done: o.done ?? false,
    },
    nodes: o.inFlight ? { 'w-1': { planId: 'p1', pool: 'worker', wave: 1, step: 'reboot', wasCordoned: false } } : {},
  };
}

interface Reading {
  lock: LockRecord | null;
  progress: ProgressState;
}

/** A driver that answers reading i until the i-th sleep ends; the clock moves only by the sleeps. */
function scripted(readings: Reading[], onSleep?: (i: number) => void) {
  let i = 0;
  let t = T0;
  const sleeps: number[] = [];
  const driver = {
    clock: {
      now: () => t,
      sleep: (seconds: number, signal?: AbortSignal) =>
        new Promise<void>((resolve, reject) => {
          sleeps.push(seconds);
          onSleep?.(i);
          if (signal?.aborted) return reject(Object.assign(new Error('aborted'), { name: 'AbortedError' }));
          t += seconds;
          i = Math.min(i + 1, readings.length - 1);
          resolve();
        }),
    },
    readLock: async () => readings[i].lock,
    readProgress: async () => readings[i].progress,
  };
  const openDriver: DriverFactory = async () => ({ driver: driver as unknown as ClusterDriver, holder: 'watch@test' });
  return { openDriver, sleeps };
}

const RUN: Reading[] = [
  { lock: LOCK, progress: progress({}, { inFlight: true }) },
  { lock: LOCK, progress: progress({}, { inFlight: true }) },
  { lock: LOCK, progress: progress({ wavesDone: 1 }) },
  { lock: null, progress: progress({ wavesDone: 2, done: true }, { done: true }) },
];

s('off a terminal: one line per change, the interval between reads, exit 0 when the run is done', async () => {
  const { openDriver, sleeps } = scripted(RUN);
  const r = await cli(['status', '--watch', '--interval', '5s'], { openDriver });
  assert.is(r.code, 0, r.err);
  assert.is(
    r.out,
    [
      '2026-09-14T08:00:00Z lock held by ci@runner (plan p1); plan p1: in progress; worker: 0 wave(s) finished; in flight: w-1 reboot',
      '2026-09-14T08:00:10Z lock held by ci@runner (plan p1); plan p1: in progress; worker: 1 wave(s) finished',
      '2026-09-14T08:00:15Z lock free; plan p1: done; worker: done',
      '',
    ].join('\n'),
  );
  assert.equal(sleeps, [5, 5, 5]);
  // The default interval: 2 s.
  const d = scripted(RUN);
  assert.is((await cli(['status', '-w'], { openDriver: d.openDriver })).code, 0);
  assert.equal(d.sleeps, [2, 2, 2]);
});

s("a halt ends the watch with apply's exit code for it, 5", async () => {
  const halted = progress({ wavesDone: 1, halted: { node: 'w-2', reason: 'w-2 did not come back' } });
  const { openDriver } = scripted([RUN[0], { lock: null, progress: halted }]);
  const r = await cli(['status', '--watch'], { openDriver });
  assert.is(r.code, 5, r.err);
  assert.match(r.out, /2026-09-14T08:00:02Z lock free; plan p1: HALTED; worker: HALTED: w-2 did not come back\n$/);
});

s('on a terminal: the status redrawn in place, only when it changed', async () => {
  const { openDriver } = scripted(RUN);
  const r = await cli(['status', '--watch'], { openDriver, io: { stdoutIsTTY: true } });
  assert.is(r.code, 0, r.err);
  const drawings = r.out.split(/\x1b\[\d+A\r\x1b\[J/);
  assert.is(drawings.length, 3, 'three states, two redraws');
  assert.match(drawings[0], /^lock: held by ci@runner/);
  assert.match(drawings[2], /^lock: free\nplan p1: done/);
  // Each redraw goes up as many lines as the drawing before it had.
  const ups = [...r.out.matchAll(/\x1b\[(\d+)A/g)].map((m) => Number(m[1]));
  assert.equal(ups, [drawings[0].split('\n').length - 1, drawings[1].split('\n').length - 1]);
});

s('-o json: one document per change (NDJSON); -o yaml: the same documents', async () => {
  const j = await cli(['status', '--watch', '-o', 'json'], { openDriver: scripted(RUN).openDriver });
  const y = await cli(['status', '--watch', '-o', 'yaml'], { openDriver: scripted(RUN).openDriver });
  assert.is(j.code, 0, j.err);
  assert.is(y.code, 0, y.err);
  const docs = j.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(
    docs.map((d) => d.progress.state),
    ['in progress', 'in progress', 'done'],
  );
  assert.equal(
    parseAllDocuments(y.out).map((d) => d.toJS()),
    docs,
  );
});

s('Ctrl-C: exit 130 at once, a notice that nothing changed, no write', async () => {
  let handler: ((sig: StopSignal) => void) | null = null;
  const signals: SignalSource = (h) => {
    handler = h;
    return () => (handler = null);
  };
  let sleepsSoFar = 0;
  const { openDriver } = scripted([RUN[0]], () => sleepsSoFar++ === 2 && handler?.('SIGINT'));
  const r = await cli(['status', '--watch'], { openDriver, signals, exitNow: () => assert.unreachable('a second signal') });
  assert.is(r.code, 130, r.err);
  assert.is(sleepsSoFar, 3);
  assert.is(r.err, 'bootcplan: SIGINT: stopped watching; nothing was changed\n');
  assert.is(r.out.split('\n').length, 2, 'one line: the state never changed');
});

s('when the run ends: done 0, halted 5, stopped by a signal 130/143, a lock left to expire 1; a live lock or a run between Jobs goes on', () => {
  const at = (lock: LockRecord | null, p: ProgressState, expired = false) => runEnd({ lock, expired, progress: p });
  assert.is(at(LOCK, progress({ done: true }, { done: true })), null, 'the apply still holds the lock');
  assert.is(at(null, progress({ done: true }, { done: true })), 0);
  assert.is(at(null, { version: null, run: null, nodes: {} }), 0, 'no apply has run: nothing to follow');
  assert.is(at(null, progress({ halted: { node: null, reason: 'budget' } })), 5);
  assert.is(at(null, progress({ interrupted: { at: '2026-09-14T08:00:00Z', wave: 1, reason: 'SIGINT' } })), 130);
  assert.is(at(null, progress({ interrupted: { at: '2026-09-14T08:00:00Z', wave: 1, reason: 'SIGTERM' } })), 143);
  assert.is(at(null, progress({ interrupted: { at: '2026-09-14T08:00:00Z', wave: 1, reason: 'batch-timeout' } })), 5);
  assert.is(at(LOCK, progress({}), true), 1, 'the lock expired: its apply died');
  assert.is(at(null, progress({})), null, 'in progress, no lock: the next apply --step continues it');
});

s('--interval is a duration above 0 and goes with --watch', async () => {
  const { openDriver } = scripted(RUN);
  const alone = await cli(['status', '--interval', '5s'], { openDriver });
  assert.is(alone.code, 1);
  assert.match(alone.err, /--interval goes with --watch/);
  const zero = await cli(['status', '-w', '--interval', '0'], { openDriver });
  assert.is(zero.code, 1);
  assert.match(zero.err, /--interval 0: expected a duration above 0/);
  const bad = await cli(['status', '-w', '--interval', 'soon'], { openDriver });
  assert.is(bad.code, 1);
  assert.match(bad.err, /--interval "soon": expected a duration/);
});

s.run();
