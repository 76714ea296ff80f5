/**
 * `apply --lock-timeout` and SIGTERM/SIGINT through the CLI, against the simulator (the
 * signals come from a fake source: CliDeps.signals).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/cli/main.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { newSim } from '../support/apply.ts';
import type { DriverFactory, SignalSource, StopSignal } from '../../src/app/ports.ts';
import { readSnapshotFile, nodeInputs } from '../../src/app/inputs.ts';
import { inDir, io } from '../support/cli.ts';

const s = suite('lock and signals through the CLI');

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-lock-'));
const specFile = join(dir, 'rollout.yaml');
const clusterFile = join(dir, 'cluster.yaml');
writeFileSync(specFile, specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]));
writeFileSync(clusterFile, new ClusterBuilder().bootcPool('worker', nodes('w', 6)).yaml());

function setup() {
  const sim = newSim(readSnapshotFile(nodeInputs, clusterFile));
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'cli@test' });
  let handler: ((sig: StopSignal) => void) | null = null;
  let subscribed = 0;
  const signals: SignalSource = (h) => {
    handler = h;
    subscribed++;
    return () => {
      handler = null;
    };
  };
  const exits: number[] = [];
  return {
    sim,
    openDriver,
    signals,
    exits,
    exitNow: (c: number) => exits.push(c),
    send: (sig: StopSignal) => handler?.(sig),
    subscribed: () => subscribed,
    listening: () => handler !== null,
  };
}

s("--lock-timeout: waits for a dead apply's lock, saying who holds it, and takes it once it has seen it unchanged for its duration", async () => {
  const { sim, openDriver } = setup();
  await sim.driver('dead').acquireLock({ holder: 'cronjob-7f9@ci', planId: 'p1', ttlSeconds: 300 });
  const o = io();
  assert.is(await run(['apply', '-f', specFile, '--auto-approve', '--lock-timeout', '6m'], { io: o, openDriver }), 0, o.err);
  assert.match(o.err, /waiting for the lock: held by cronjob-7f9@ci since 2026-09-14T08:00:00Z \(plan p1, lock id [0-9a-f]+\); waited 0s of 6m/);
  assert.match(o.out, /done in/);
  assert.is(sim.reboots.length, 6);
});

s('--lock-timeout: a lock that stays held ends the wait with exit 4 naming the holder; a bad duration is a clean error', async () => {
  const { sim, openDriver } = setup();
  const live = sim.driver('live');
  const held = await live.acquireLock({ holder: 'alice@ci', planId: 'p1', ttlSeconds: 60 });
  const keep = () =>
    sim.after(20, () => {
      void live.renewLock(held.lockId).then(keep);
    });
  keep();
  const o = io();
  assert.is(await run(['apply', '-f', specFile, '--auto-approve', '--lock-timeout', '2m'], { io: o, openDriver }), 4);
  assert.match(o.err, /error: another apply holds the lock: alice@ci/);
  assert.ok(sim.now - sim.start >= 120, `gave up after ${sim.now - sim.start}s`);
  assert.is(sim.reboots.length, 0);
  const bad = io();
  assert.is(await run(['apply', '-f', specFile, '--auto-approve', '--lock-timeout', '5 minutes'], { io: bad, openDriver }), 1);
  assert.match(bad.err, /^error: --lock-timeout "5 minutes": expected a duration such as 90s, 5m or 1h/m);
});

s(
  'SIGTERM mid-wave: one notice, stops at a safe point, exit 143 with a one-line message; the saved plan applied again resumes, each node rebooted once',
  async () => {
    const { sim, openDriver, signals, send, exits, exitNow, listening } = setup();
    const planFile = join(dir, 'plan.json');
    const p = io();
    assert.is(await inDir(dir, () => run(['plan', '-f', specFile, '--cluster', clusterFile, '--out', planFile], { io: p })), 0, p.err);
    sim.after(800, () => send('SIGTERM')); // wave 1 is rebooting (staging takes 600 s)
    const o = io();
    const code = await inDir(dir, () => run(['apply', planFile, '--auto-approve'], { io: o, openDriver, signals, exitNow }));
    assert.is(code, 143, o.err);
    assert.equal(exits, []);
    assert.match(o.err, /^bootcplan: SIGTERM: stopping at the next safe point \(send it again to exit at once\)$/m);
    assert.match(o.err, /\nbootcplan: stopped by SIGTERM in pool worker, wave 1: stopped at a safe point, .*lock is released; run apply again to continue\n$/);
    assert.not.match(o.err, /internal error|\n\s+at /);
    assert.is(listening(), false, 'the signal handlers are removed');
    assert.is(sim.lock.leaseOf(), null);
    const again = io();
    assert.is(await inDir(dir, () => run(['apply', planFile, '--auto-approve'], { io: again, openDriver, signals, exitNow })), 0, again.err);
    for (const [node, count] of sim.rebootCounts()) assert.is(count, 1, node);
    assert.is(sim.rebootCounts().size, 6);
  },
);

s(
  "SIGTERM while an MCO pool is unpaused: the saved plan applied again is accepted (bootcplan's own pause, the MCO's nodes in flight) and finishes",
  async () => {
    const mcoCluster = join(dir, 'mco-cluster.yaml');
    const mcoSpec = join(dir, 'mco-rollout.yaml');
    writeFileSync(mcoCluster, new ClusterBuilder().mcoPool('infra', nodes('i', 4)).yaml());
    writeFileSync(mcoSpec, specYaml([{ name: 'infra', image: NEW, maxUnavailable: 2 }]));
    const sim = newSim(readSnapshotFile(nodeInputs, mcoCluster));
    const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'cli@test' });
    let handler: ((sig: StopSignal) => void) | null = null;
    const signals: SignalSource = (h) => {
      handler = h;
      return () => {
        handler = null;
      };
    };
    const planFile = join(dir, 'mco-plan.json');
    const p = io();
    assert.is(await inDir(dir, () => run(['plan', '-f', mcoSpec, '--cluster', mcoCluster, '--out', planFile], { io: p })), 0, p.err);
    const o = io();
    let sent = false;
    o.stdout = (x) => {
      o.out += x;
      if (!sent && /"type":"cordon","pool":"infra","node":"[^"]+","wave":2/.test(o.out)) {
        sent = true;
        handler?.('SIGTERM');
      }
    };
    const exitNow = () => assert.unreachable('one signal only');
    assert.is(await inDir(dir, () => run(['apply', planFile, '--auto-approve', '--json'], { io: o, openDriver, signals, exitNow })), 143, o.err);
    assert.is(sim.get('MachineConfigPool', 'infra')!.spec!.paused, true);
    const again = io();
    assert.is(await inDir(dir, () => run(['apply', planFile, '--auto-approve'], { io: again, openDriver, signals, exitNow })), 0, again.err);
    assert.is(sim.rebootCounts().size, 4);
    for (const [node, count] of sim.rebootCounts()) assert.is(count, 1, node);
  },
);

s('SIGTERM while waiting for the lock: exit 143, nothing written', async () => {
  const { sim, openDriver, signals, send, exitNow } = setup();
  await sim.driver('dead').acquireLock({ holder: 'cronjob-7f9@ci', planId: 'p1', ttlSeconds: 300 });
  sim.after(30, () => send('SIGTERM'));
  const o = io();
  assert.is(await run(['apply', '-f', specFile, '--auto-approve', '--lock-timeout', '10m'], { io: o, openDriver, signals, exitNow }), 143, o.err);
  assert.match(o.err, /\nbootcplan: stopped by SIGTERM while waiting for the lock: nothing was written\n$/);
  assert.equal(
    sim.writes.filter((w) => w.op !== 'lock'),
    [],
  );
});

s('a second signal exits at once (SIGINT: 130)', async () => {
  const { sim, openDriver, signals, send, exits, exitNow } = setup();
  sim.after(800, () => {
    send('SIGINT');
    send('SIGINT');
  });
  const o = io();
  const code = await run(['apply', '-f', specFile, '--auto-approve'], { io: o, openDriver, signals, exitNow });
  assert.equal(exits, [130]);
  assert.match(o.err, /bootcplan: SIGINT again: exiting now/);
  assert.is(code, 130, 'the fake exit returns: the first stop still finishes cleanly');
});

s.run();
