import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { progressPlan } from '../../src/render/progress.ts';
import { TtyProgress, CiProgress, RehearseProgress } from '../../src/render/events.ts';
import { renderRehearsalText, rehearsalReport, rehearsalJson } from '../../src/render/rehearsal.ts';
import { renderStatus } from '../../src/render/status.ts';
import type { LockRecord } from '../../src/apply/ports/driver.ts';
import { foldWaves } from '../../src/render/format.ts';
import { rehearse } from '../../src/sim/rehearse.ts';
import { run } from '../../src/cli/main.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { planWith, newSim } from '../support/apply.ts';
import { golden, bigPlan } from '../support/render.ts';
import { renderText } from '../../src/render/text.ts';
import type { DriverFactory } from '../../src/app/ports.ts';
import { io } from '../support/cli.ts';

const s = suite('progress and folded text: golden files');

/** Two pools: 6 bootc nodes (maxUnavailable 2, soak 60 s) and 40 nodes in waves of 1 (40 waves). */
/** A spec and snapshot of one bootc pool of 30 nodes (maxUnavailable 1) in a temp dir, and a captured IO without terminals. */
function infraOf30() {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-progress-'));
  const spec = join(dir, 'rollout.yaml');
  const cluster = join(dir, 'cluster.yaml');
  writeFileSync(spec, specYaml([{ name: 'infra', image: NEW, maxUnavailable: 1 }]));
  writeFileSync(cluster, new ClusterBuilder().bootcPool('infra', nodes('i', 30)).yaml());
  const o = io();
  return { spec, cluster, o };
}

async function twoPools() {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 6)).bootcPool('infra', nodes('i', 40)).snapshot();
  const { plan, replan } = planWith(
    specYaml([
      { name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 60 },
      { name: 'infra', image: NEW, maxUnavailable: 1 },
    ]),
    snap,
  );
  const { rehearsal, error } = await rehearse({ plan, replan, snapshot: snap });
  return { plan, replan, snap, rehearsal, error };
}

s('golden: the live block (no colour) at a few moments of a rehearsal: nodes done of the pool total, wave k/N, elapsed, ETA', async () => {
  const { plan, rehearsal } = await twoPools();
  const tty = new TtyProgress({ color: false, plan: progressPlan(plan), width: 160 });
  const frames: string[] = [];
  const pick = new Set([
    rehearsal.events.findIndex((e) => e.type === 'wave-start'),
    rehearsal.events.findIndex((e) => e.type === 'wave-end' && e.pool === 'worker' && e.wave === 2),
    rehearsal.events.findIndex((e) => e.type === 'wave-start' && e.pool === 'infra' && e.wave === 17),
    rehearsal.events.length - 1,
  ]);
  rehearsal.events.forEach((e, i) => {
    const out = tty.update(e);
    if (pick.has(i)) frames.push(`--- after event ${i} (${e.type} at ${e.t}s)\n` + out.replace(/\x1b\[\d+A\x1b\[J/g, '<clear>\n'));
  });
  golden('progress-tty.txt', frames.join(''));
  const last = frames[frames.length - 1];
  assert.match(last, /worker +done +\[#{20}\] 6\/6 nodes/);
  assert.match(last, /infra +done +\[#{20}\] 40\/40 nodes/);
});

s('golden: the CI log of the same rehearsal: one line per wave start and end with counts, elapsed and ETA', async () => {
  const { plan, rehearsal } = await twoPools();
  const ci = new CiProgress({ plan: progressPlan(plan) });
  const log = rehearsal.events.map((e) => ci.update(e)).join('');
  golden('progress-ci.txt', log);
  const waves = rehearsal.events.filter((e) => e.type === 'wave-start').length;
  assert.is(log.split('\n').filter((l) => / wave \d+\/\d+ start: /.test(l)).length, waves);
  assert.is(log.split('\n').filter((l) => / wave \d+\/\d+ done /.test(l)).length, waves);
  assert.not.match(log, / (cordon|drain-done|booted|uncordon|reboot \()/);
});

s('golden: rehearsal text folds a pool of 40 waves (first 5, "... 34 more waves ...", the last); -o json keeps them all', async () => {
  const { rehearsal, error } = await twoPools();
  const report = rehearsalReport(rehearsal, error);
  const text = renderRehearsalText(report, { color: false, ascii: true });
  golden('rehearsal-folded.txt', text);
  assert.match(text, /\n {2}\.\.\. 34 more waves \.\.\.\n {2}40 /);
  assert.is(JSON.parse(rehearsalJson(report)).pools.find((p: { name: string }) => p.name === 'infra').waves.length, 40);
});

s('foldWaves: at most 12 items as they are; beyond, the first 5 and the last, with the waves left out counted', () => {
  assert.equal(foldWaves([1, 2, 3]), { items: [1, 2, 3], hidden: 0, at: 3 });
  const twelve = Array.from({ length: 12 }, (_, i) => i);
  assert.is(foldWaves(twelve).hidden, 0);
  const f = foldWaves(Array.from({ length: 300 }, (_, i) => i + 1));
  assert.equal(f.items, [1, 2, 3, 4, 5, 300]);
  assert.is(f.hidden, 294);
  // a line standing for a run of waves counts its waves
  const runs = Array.from({ length: 20 }, (_, i) => ({ waves: i + 1 }));
  assert.is(foldWaves(runs, { count: (r) => r.waves }).hidden, 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 14 + 15 + 16 + 17 + 18 + 19);
});

s('plan text: a large pool whose wave sizes keep changing folds its runs of waves (first 5 lines, "… N more waves …", the last)', () => {
  const plan = structuredClone(bigPlan(1000, 10));
  const pool = plan.pools.find((p) => p.waves.length > 100)!;
  const names = pool.waves.flat();
  const waves: string[][] = [];
  for (let i = 0, k = 0; i < names.length; k++) {
    const n = k % 2 ? 2 : 1;
    waves.push(names.slice(i, i + n));
    i += n;
  }
  pool.waves = waves;
  const text = renderText(plan, { color: false });
  const lines = text.split('\n');
  const at = lines.findIndex((l) => /^ {2}… \d+ more waves …$/.test(l));
  assert.ok(at > 0, text.slice(0, 3000));
  assert.match(lines[at - 5], /^ {2}wave 1 +1 node /);
  assert.match(lines[at - 1], /^ {2}wave 5 +1 node /);
  // the last line: the last run of waves (here the last two waves, both of 1 node)
  const last = /^ {2}waves? (\d+)(?:-(\d+))? /.exec(lines[at + 1]);
  assert.is(Number(last?.[2] ?? last?.[1]), waves.length);
  assert.is(lines[at], `  … ${Number(last?.[1]) - 6} more waves …`, 'waves 6 to the one before the last line');
});

s('status folds the finished waves of a long run into ranges', () => {
  const out = renderStatus(null, false, {
    run: {
      planId: 'p',
      startedAt: 'a',
      updatedAt: 'b',
      done: false,
      changesApplied: true,
      pools: { worker: { wavesDone: 300, done: false, halted: null, lastWaveEnd: null } },
    },
    version: '1',
    nodes: {},
  });
  assert.match(out, /worker: 300 wave\(s\) finished \(1-300\)\n/);
});

s('status headlines a halted run as HALTED, naming what halted each pool; a finished or running one as before', () => {
  const record = (pools: Record<string, unknown>, done = false) =>
    renderStatus(null, false, {
      run: { planId: 'p', startedAt: 'a', updatedAt: 'b', done, changesApplied: true, pools: pools as never },
      version: '1',
      nodes: {},
    }).split('\n')[1];
  const pool = (halted: unknown, done = false) => ({ wavesDone: 1, done, halted, lastWaveEnd: null });
  assert.is(
    record({ worker: pool({ node: null, reason: 'health check alerts failed after wave 1/3 of pool worker: x', check: 'alerts' }), infra: pool(null) }),
    'plan p: HALTED by health check alerts in pool worker (started a, last update b)',
  );
  assert.is(
    record({ worker: pool({ node: 'w-03', reason: 'w-03 Degraded after the reboot' }) }),
    'plan p: HALTED at node w-03 in pool worker (started a, last update b)',
  );
  assert.is(
    record({ a: pool({ node: null, reason: 'budget' }), b: pool({ node: null, reason: 'y', check: 'slo' }) }),
    'plan p: HALTED in pool a; by health check slo in pool b (started a, last update b)',
  );
  assert.is(record({ worker: pool(null) }), 'plan p: in progress (started a, last update b)');
  // apply --retry going on after the halt (it holds the lock): in progress again.
  const lock: LockRecord = { holder: 'job', since: 'a', renewedAt: 'b', ttlSeconds: 300, planId: 'p', lockId: 'l' };
  const pools = { worker: pool({ node: null, reason: 'x', check: 'alerts' }) } as never;
  const retried = renderStatus(lock, false, {
    run: { planId: 'p', startedAt: 'a', updatedAt: 'b', done: false, changesApplied: true, pools },
    version: '1',
    nodes: {},
  });
  assert.is(retried.split('\n')[1], 'plan p: in progress (started a, last update b)');
  assert.is(record({ worker: pool({ node: null, reason: 'x', check: 'alerts' }, true) }, true), 'plan p: done (started a, last update b)');
});

s('rehearse progress: nothing within the quiet time; without a terminal one line per pool in progress every 10 s of wall clock', async () => {
  const { plan, rehearsal } = await twoPools();
  let ms = 0;
  const quiet = new RehearseProgress({ plan: progressPlan(plan), terminal: false, color: false, clock: () => ms });
  for (const e of rehearsal.events) {
    ms += 1;
    assert.is(quiet.update(e), '');
  }
  assert.is(quiet.finish(), '');
  ms = 0;
  const slow = new RehearseProgress({ plan: progressPlan(plan), terminal: false, color: false, clock: () => ms });
  const lines = rehearsal.events
    .map((e) => {
      ms += 500;
      return slow.update(e);
    })
    .join('')
    .split('\n')
    .filter(Boolean);
  const expected = Math.floor((rehearsal.events.length * 500 - 2000) / 10_000) + 1;
  assert.ok(Math.abs(lines.length - expected) <= 1, `${lines.length} lines, about ${expected} expected`);
  for (const l of lines) assert.match(l, /^rehearsing: (worker|infra) wave \d+\/\d+, \d+\/(6|40) nodes; simulated \S+, ETA \S+ \(simulated\); \S+ wall clock$/);
});

s('rehearse progress on a terminal: the live block after the quiet time, at most every 100 ms, erased at the end', async () => {
  const { plan, rehearsal } = await twoPools();
  let ms = 0;
  const p = new RehearseProgress({ plan: progressPlan(plan), terminal: true, color: false, clock: () => ms });
  let out = '';
  for (const e of rehearsal.events) {
    ms += 50;
    out += p.update(e);
  }
  const draws = out.split('elapsed ').length - 1;
  assert.ok(draws > 0 && draws <= Math.ceil((rehearsal.events.length * 50 - 2000) / 100) + 1, String(draws));
  assert.match(out, /infra +wave \d+\/40 /);
  assert.is(p.finish(), '\x1b[3A\x1b[J', 'two pool lines and the total line erased');
  assert.is(p.finish(), '', 'once');
});

s('rehearse CLI: a long run (by the clock passed in) writes progress lines to stderr; stdout keeps the report', async () => {
  const { spec, cluster, o } = infraOf30();
  let ms = 0;
  assert.is(await run(['rehearse', '-f', spec, '--cluster', cluster], { io: o, now: () => (ms += 300) }), 0, o.err);
  assert.match(o.err, /^rehearsing: infra wave \d+\/30, \d+\/30 nodes; simulated /m);
  assert.match(o.out, /Rehearsal: done in/);
  assert.match(o.out, /\.\.\. 24 more waves \.\.\./);
  const quick = { ...o, out: '', err: '' } as typeof o;
  quick.stdout = (x) => {
    quick.out += x;
  };
  quick.stderr = (x) => {
    quick.err += x;
  };
  assert.is(await run(['rehearse', '-f', spec, '--cluster', cluster, '-o', 'json'], { io: quick, now: () => 0 }), 0);
  assert.is(quick.err, '', 'a short run writes nothing to stderr');
});

s("apply on a terminal: the live block on stderr ends with every pool done, nodes done = the plan's total, ETA 0s", async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 6)).snapshot();
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-progress-'));
  const spec = join(dir, 'rollout.yaml');
  writeFileSync(spec, specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]));
  const sim = newSim(snap);
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'cli@test' });
  const o = io({ stderrIsTTY: true, stderrColumns: 120 });
  assert.is(await run(['apply', '-f', spec, '--auto-approve'], { io: o, openDriver }), 0, o.err);
  const lastBlock = o.err.slice(o.err.lastIndexOf('\x1b[J') + 3);
  assert.match(
    lastBlock,
    /^\[\d\d:\d\d:\d\d\] done\nworker +done +\[#{20}\] 6\/6 nodes, took \S+\nelapsed \S+, ETA 0s \(plan estimate \S+; finished waves took 100% of their estimate\)\n$/,
  );
  // the block's own lines (the event lines above it may wrap: they are not redrawn)
  const block = o.err
    .split('\n')
    .map((l) => l.replace(/\x1b\[\d*[A-Za-z]/g, ''))
    .filter((l) => l && !l.startsWith('['));
  assert.ok(block.length > 0);
  for (const l of block) assert.ok(l.length <= 119, `cut one short of the terminal: ${l}`);
});

s('a halt names the waves not finished as ranges (a halt in wave 1 of 30: "waves 1-30")', async () => {
  const { spec, cluster, o } = infraOf30();
  assert.is(await run(['rehearse', '-f', spec, '--cluster', cluster, '--fail-rate', '1', '-o', 'json'], { io: o, now: () => 0 }), 5);
  assert.match(o.err, /pool infra is paused; waves 1-30 of 30 were not finished/);
});

s.run();
