/**
 * apply --step as the in-cluster Job runs it (docs/design.md §3; docs/gitops.md "apply --step in a Job"): exit 0 when it
 * advanced or when nothing may be done now (outside the window, nodes still staging, another
 * apply running), with the reason in the rollout status; non-zero only for what needs a human
 * (stale 3, lock stuck 4, halted 5). The status of the Rollout object and the Events, read back
 * from the simulator as an operator would read them.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import type { RolloutStatus } from '../../src/apply/ports/rollout-object.ts';
import { planWith, runApply, newSim } from '../support/apply.ts';
import { windowPolicy } from '../../src/apply/ports/policy.ts';
import { inDir, io } from '../support/cli.ts';
import { LUA, luaHealth } from '../support/lua-health.ts';
import { run } from '../../src/cli/main.ts';
import type { DriverFactory } from '../../src/app/ports.ts';
import type { SimCluster } from '../../src/sim/cluster.ts';
import { skipLocally } from '../support/skips.ts';

const s = suite('apply --step: exit semantics, rollout status, Events');
const dir = mkdtempSync(join(tmpdir(), 'bootcplan-step-'));
const D = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 };

/** A spec file and a simulator whose cluster has the spec's Rollout object synced. */
function setup(count: number, window?: { schedule: string; duration: string; timezone?: string }, o: { rebootFailRate?: number } = {}) {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', count)).snapshot();
  const text = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0 }], window ? { maintenanceWindows: [window] } : {});
  const file = join(dir, `spec-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text);
  const sim = newSim(snap, { durations: D, ...(o.rebootFailRate ? { faults: { seed: 1, rebootFailRate: o.rebootFailRate } } : {}) });
  sim.rollouts.put('test', parse(text).spec);
  let n = 0;
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: `job-${++n}@test` });
  return { file, sim, openDriver, text, snap };
}

/** The Rollout's status as the reporter wrote it whole (a full write comes before any lockObserved write). */
const status = (sim: SimCluster) => sim.rollouts.objects.get('test')!.status as RolloutStatus;

/** The Rollout objects as each scenario left them, for the Argo CD health check at the end. */
const seen2 = new Map<string, { metadata: { generation: number }; status: unknown }>();
const keep = (name: string, sim: SimCluster) => {
  const o = sim.rollouts.objects.get('test')!;
  seen2.set(name, structuredClone({ metadata: { generation: o.generation }, status: o.status }));
};

s('outside the window: apply --step exits 0, writes nothing, and the status says Suspended until the next window', async () => {
  // The simulator's clock: Monday 2026-09-14 08:00 UTC; the window opens 22:00 Berlin (20:00 UTC).
  const { file, sim, openDriver } = setup(4, { schedule: '0 22 * * 1-5', duration: '4h', timezone: 'Europe/Berlin' });
  const o = io();
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--step'], { io: o, openDriver }), 0, o.err);
  assert.match(o.out, /nothing to do now: outside window until 22:00 Europe\/Berlin/);
  const st = status(sim);
  assert.equal(
    [st.phase, st.reason, st.message, st.nextWindow, st.lastExitCode],
    ['Suspended', 'OutsideWindow', 'outside window until 22:00 Europe/Berlin', '2026-09-14T20:00:00.000Z', 0],
  );
  assert.equal(
    st.conditions.map((c) => `${c.type}=${c.status}`),
    ['Ready=False', 'Reconciling=True', 'Stalled=False'],
  );
  assert.is(st.observedGeneration, 1);
  keep('suspended', sim);
  assert.is(sim.reboots.length, 0);
  assert.equal(
    sim.writes.filter((w) => !/lock|lease|progress|status|event|unlock/i.test(`${w.op} ${w.target}`)),
    [],
    'no object, node or pool was touched',
  );
  // The same run without --step is blocked by policy: exit 6.
  const full = io();
  assert.is(await run(['apply', '-f', file, '--auto-approve'], { io: full, openDriver }), 6);
});

s('the window is open: one wave per run, status Progressing "wave k/n of pool worker", then Healthy; one Event per node', async () => {
  const { file, sim, openDriver } = setup(6);
  const seen: string[] = [];
  for (let i = 0; i < 6; i++) {
    const o = io();
    assert.is(await run(['apply', '-f', file, '--auto-approve', '--step'], { io: o, openDriver }), 0, o.err);
    const st = status(sim);
    seen.push(`${st.phase}: ${st.message}`);
    if (st.reason === 'Stepped' && !seen2.has('progressing')) keep('progressing', sim);
    sim.advance(700);
    if (st.phase === 'Healthy') break;
  }
  assert.ok(seen.includes('Progressing: wave 1/3 of pool worker done; the next run continues'), seen.join('\n'));
  assert.ok(
    seen.some((l) => /^Progressing: waiting for staging: \d node\(s\) of pool worker/.test(l)) || seen[0].startsWith('Progressing: wave 1/3'),
    seen.join('\n'),
  );
  assert.match(seen[seen.length - 1], /^Healthy: plan \S+ applied$/);
  const st = status(sim);
  assert.equal(
    st.conditions.map((c) => `${c.type}=${c.status}`),
    ['Ready=True', 'Reconciling=False', 'Stalled=False'],
  );
  // The CronJob keeps running after the end: the status stays Healthy (never flips to
  // Progressing), and no second RolloutApplied Event is recorded.
  const since = st.conditions[0].lastTransitionTime;
  for (let i = 0; i < 2; i++) {
    const o = io();
    assert.is(await run(['apply', '-f', file, '--auto-approve', '--step'], { io: o, openDriver }), 0, o.err);
    sim.advance(900);
  }
  assert.equal([status(sim).phase, status(sim).conditions[0].lastTransitionTime], ['Healthy', since]);
  assert.is(sim.rollouts.events.filter((e) => e.reason === 'RolloutApplied').length, 1);
  keep('healthy', sim);
  // The spec changes (a GitOps sync of a new commit): the status is for the previous generation.
  sim.rollouts.put('test', { pools: [] });
  keep('unobserved', sim);
  const perNode = new Map<string, number>();
  for (const e of sim.rollouts.events.filter((e) => e.regarding.kind === 'Node')) perNode.set(e.regarding.name, (perNode.get(e.regarding.name) ?? 0) + 1);
  assert.is(perNode.size, 6);
  // One Event per node (docs/gitops.md "Events": at most 8 API requests per node): its outcome, which says
  // how and when its reboot was requested; no Event of the request itself.
  assert.ok(
    [...perNode.values()].every((n) => n === 1),
    JSON.stringify([...perNode]),
  );
  const reasons = new Set(sim.rollouts.events.map((e) => e.reason));
  for (const r of ['WaveStarted', 'NodeUpdated', 'PoolUpdated', 'RolloutApplied']) assert.ok(reasons.has(r as never), r);
  for (const e of sim.rollouts.events.filter((e) => e.regarding.kind === 'Node')) {
    assert.match(
      e.note,
      /^cordoned and drained, (soft|hard) reboot requested at \d{4}-\d\d-\d\dT[\d:.]+Z; booted the target and Ready \(pool worker, wave \d, plan /,
      e.note,
    );
  }
});

s('the nodes are still staging: apply --step exits 0 saying so, and the next run takes the wave', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 4)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0 }]), snap, D);
  const sim = newSim(snap, { durations: D });
  const first = await runApply(sim, plan, replan, { step: true });
  assert.is(first.code, 0, String(first.error));
  assert.is(first.result!.outcome, 'waiting');
  assert.is(first.result!.wait!.reason, 'staging');
  assert.match(first.result!.wait!.message, /waiting for staging: \d node\(s\) of pool worker still staging/);
  assert.is(sim.reboots.length, 0);
  sim.advance(700);
  const second = await runApply(sim, plan, replan, { step: true });
  assert.is(second.code, 0, String(second.error));
  assert.is(second.result!.outcome, 'stepped');
  assert.is(sim.reboots.length, 2);
});

s('a full apply still waits for staging (no early exit without --step)', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0 }]), snap, D);
  const sim = newSim(snap, { durations: D });
  const r = await runApply(sim, plan, replan, {});
  assert.is(r.result!.outcome, 'done');
});

s('outside the window through the applier: outcome waiting with the next window; without --step exit 6', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 3)).snapshot();
  const w = { schedule: '0 22 * * 1-5', duration: '4h', timezone: 'Europe/Berlin' };
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3 }], { maintenanceWindows: [w] }), snap, D);
  const sim = newSim(snap, { durations: D });
  const policy = windowPolicy([w], plan);
  const step = await runApply(sim, plan, replan, { step: true, policy });
  assert.is(step.code, 0);
  assert.equal(step.result!.wait, {
    reason: 'outside-window',
    message: step.result!.wait!.message,
    nextWindow: { start: '2026-09-14T20:00:00.000Z', timezone: 'Europe/Berlin' },
  });
  const full = await runApply(sim, plan, replan, { policy });
  assert.is(full.code, 6);
});

s('another apply running: --step exits 0 and leaves the status to it; a lock held for longer than any step is stuck: exit 4, status says so', async () => {
  const { file, sim, openDriver } = setup(2);
  const other = sim.driver('other');
  await other.acquireLock({ holder: 'job-old@test', planId: 'p0', ttlSeconds: 300 });
  const o = io();
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--step'], { io: o, openDriver }), 0, o.err);
  assert.match(o.err, /nothing to do now: another apply holds the lock: job-old@test/);
  // The status is the running apply's to write: this run keeps only what it saw of the lock.
  assert.equal(Object.keys(sim.rollouts.objects.get('test')!.status ?? {}), ['lockObserved'], "the status is the running apply's to write");
  // 7 hours later, still renewed (alive but stuck): a human looks.
  for (let h = 0; h < 7 * 12; h++) {
    sim.advance(300);
    await other.renewLock((await other.readLock())!.lockId);
  }
  const stuck = io();
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--step'], { io: stuck, openDriver }), 4);
  assert.equal([status(sim).phase, status(sim).reason], ['Degraded', 'LockStuck']);
  assert.equal(
    status(sim).conditions.map((c) => `${c.type}=${c.status}`),
    ['Ready=False', 'Reconciling=False', 'Stalled=True'],
  );
});

s('a node Degraded after its reboot: exit 5, status Degraded "halted: <node> Degraded after the reboot", Events NodeFailed and PoolHalted', async () => {
  const { file, sim, openDriver } = setup(4, undefined, { rebootFailRate: 1 });
  let code = 0;
  const o = io();
  for (let i = 0; i < 4 && code === 0; i++) {
    code = await run(['apply', '-f', file, '--auto-approve', '--step'], { io: o, openDriver });
    sim.advance(700);
  }
  assert.is(code, 5, o.err);
  const st = status(sim);
  assert.equal([st.phase, st.reason, st.lastExitCode], ['Degraded', 'Halted', 5]);
  assert.match(st.message, /^halted: w-\d\d Degraded after the reboot \(pool worker\)$/, st.message);
  keep('halted', sim);
  const reasons = sim.rollouts.events.map((e) => `${e.type} ${e.reason} ${e.regarding.kind}`);
  for (const r of ['Warning NodeFailed Node', 'Warning PoolHalted BootcNodePool', 'Warning RolloutHalted Rollout'])
    assert.ok(reasons.includes(r), reasons.join('\n'));
});

s('the cluster moved since the reviewed plan: exit 3 and status Degraded "stale: re-plan needed"', async () => {
  const work = mkdtempSync(join(tmpdir(), 'bootcplan-stale-'));
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 4));
  const text = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0 }]);
  writeFileSync(join(work, 'bootcplan.yaml'), text);
  writeFileSync(join(work, 'cluster.yaml'), b.yaml());
  const sim = newSim(b.snapshot(), { durations: D });
  sim.rollouts.put('test', parse(text).spec);
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'job@test' });
  await inDir(work, async () => {
    const p = io();
    assert.is(await run(['plan', '-f', 'bootcplan.yaml', '--cluster', 'cluster.yaml', '--out', 'plans/prod.json'], { io: p }), 0, p.err);
    // Someone else cordons two nodes: the reviewed waves no longer fit the budget.
    sim.mutate((x) => {
      x.nodes.get('w-00')!.spec!.unschedulable = true;
      x.nodes.get('w-01')!.spec!.unschedulable = true;
    });
    const r = io();
    assert.is(await run(['apply', 'plans/prod.json', '--auto-approve', '--step'], { io: r, openDriver }), 3, r.err);
  });
  const st = status(sim);
  assert.equal([st.phase, st.reason, st.lastExitCode], ['Degraded', 'Stale', 3]);
  assert.match(st.message, /^stale: re-plan needed \(.+\)$/);
  assert.equal(
    st.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`),
    ['Ready=False/Stale', 'Reconciling=False/Stale', 'Stalled=True/Stale'],
  );
  assert.is(sim.reboots.length, 0);
  keep('stale', sim);
  // The spec edited on the branch after the plan was reviewed (no new plan): still exit 3, and
  // the Rollout named in the plan says so.
  writeFileSync(join(work, 'bootcplan.yaml'), text.replace('maxUnavailable: 2', 'maxUnavailable: 3'));
  await inDir(work, async () => {
    const r = io();
    assert.is(await run(['apply', 'plans/prod.json', '--auto-approve', '--step'], { io: r, openDriver }), 3, r.err);
    assert.match(r.err, /the spec changed since the plan was made/);
  });
  assert.match(status(sim).message, /^stale: re-plan needed \(plan \w+ was made from a spec with sha256/);
  assert.is(status(sim).observedGeneration, undefined, 'no spec verified: no generation observed');
});

/** The last NDJSON line of an apply's stdout, parsed. */
const lastEvent = (out: string) => JSON.parse(out.trim().split('\n').pop() || '{}') as { type: string; reason: string; exitCode: number; details: string[] };

s('under --json each refusal is the last event on stdout: a stale plan and an edited spec (3), the lock (4; --step: 0)', async () => {
  const work = mkdtempSync(join(tmpdir(), 'bootcplan-refused-'));
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 4));
  const text = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0 }]);
  writeFileSync(join(work, 'bootcplan.yaml'), text);
  writeFileSync(join(work, 'cluster.yaml'), b.yaml());
  const sim = newSim(b.snapshot(), { durations: D });
  sim.rollouts.put('test', parse(text).spec);
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'job@test' });
  await inDir(work, async () => {
    assert.is(await run(['plan', '-f', 'bootcplan.yaml', '--cluster', 'cluster.yaml', '--out', 'plans/prod.json'], { io: io() }), 0);
    sim.mutate((x) => {
      x.nodes.get('w-00')!.spec!.unschedulable = true;
      x.nodes.get('w-01')!.spec!.unschedulable = true;
    });
    const stale = io();
    assert.is(await run(['apply', 'plans/prod.json', '--json'], { io: stale, openDriver }), 3, stale.err);
    const e = lastEvent(stale.out);
    assert.equal([e.type, e.reason, e.exitCode], ['refused', 'stale', 3]);
    assert.ok(e.details.length > 0, 'the differences');
    writeFileSync(join(work, 'bootcplan.yaml'), text.replace('maxUnavailable: 2', 'maxUnavailable: 3'));
    const edited = io();
    assert.is(await run(['apply', 'plans/prod.json', '--json'], { io: edited, openDriver }), 3, edited.err);
    assert.equal([lastEvent(edited.out).type, lastEvent(edited.out).reason], ['refused', 'stale']);
  });
  const { file, sim: other, openDriver: otherDriver } = setup(2);
  await other.driver('other').acquireLock({ holder: 'job-old@test', planId: 'p0', ttlSeconds: 300 });
  const step = io();
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--step', '--json'], { io: step, openDriver: otherDriver }), 0, step.err);
  assert.equal([lastEvent(step.out).type, lastEvent(step.out).reason, lastEvent(step.out).exitCode], ['refused', 'locked', 0]);
  const full = io();
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--json'], { io: full, openDriver: otherDriver }), 4, full.err);
  assert.equal([lastEvent(full.out).type, lastEvent(full.out).reason, lastEvent(full.out).exitCode], ['refused', 'locked', 4]);
});

const health = (obj: unknown) => luaHealth('examples/argocd/health/rollout.lua', obj);

s('the Argo CD health check (examples/argocd/health/rollout.lua, lua5.4) of the status each state wrote', () => {
  if (!LUA) {
    skipLocally('lua5.4', '.ci/run installs it');
    return;
  }
  assert.equal([...seen2.keys()].sort(), ['halted', 'healthy', 'progressing', 'stale', 'suspended', 'unobserved']);
  assert.equal(health(seen2.get('suspended')), { status: 'Suspended', message: 'outside window until 22:00 Europe/Berlin' });
  assert.equal(health(seen2.get('progressing')), { status: 'Progressing', message: 'wave 1/3 of pool worker done; the next run continues' });
  assert.is(health(seen2.get('healthy')).status, 'Healthy');
  assert.match(health(seen2.get('healthy')).message, /^plan \w+ applied$/);
  const halted = health(seen2.get('halted'));
  assert.is(halted.status, 'Degraded');
  assert.match(halted.message, /^halted: w-\d\d Degraded after the reboot \(pool worker\)$/);
  const stale = health(seen2.get('stale'));
  assert.is(stale.status, 'Degraded');
  assert.match(stale.message, /^stale: re-plan needed \(/);
  assert.equal(health(seen2.get('unobserved')), {
    status: 'Progressing',
    message: `Waiting for bootcplan apply to take generation 2 (the last run said: ${health(seen2.get('healthy')).message})`,
  });
  assert.equal(health({ metadata: { generation: 1 } }), { status: 'Progressing', message: 'Waiting for bootcplan apply to report the rollout status' });
});

s.run();
