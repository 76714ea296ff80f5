import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, OLD, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { parseRolloutSpec } from '../../../src/rollout-spec/load.ts';
import { parsePlanFile } from '../../../src/plan/saved/reader.ts';
import type { ApplyEvent } from '../../../src/apply/ports/events.ts';
import type { ClusterSnapshot } from '../../../src/cluster/types.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../../src/cli/main.ts';
import { io } from '../../support/cli.ts';

const s = suite('slots: rollout: slots per pool');
const D = { stage: 100, drain: 60, reboot: 300, softReboot: 60, ready: 30 };
const JITTER = { fraction: 0.3, seed: 7 };

function cluster(n: number, extra: (ns: ReturnType<typeof nodes>) => void = () => {}): ClusterSnapshot {
  const ns = nodes('w', n);
  extra(ns);
  return new ClusterBuilder().bootcPool('worker', ns, { maxUnavailable: 3 }).snapshot();
}
const spec = (rollout: 'waves' | 'slots' | null, more: Record<string, unknown> = {}) =>
  specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3, ...(rollout ? { rollout } : {}), ...more }]);

/** Most of the pool's nodes cordoned by this apply at once, from the events. */
function peakInFlight(events: ApplyEvent[]): number {
  let n = 0,
    peak = 0;
  for (const e of events) {
    if (e.type === 'cordon') peak = Math.max(peak, ++n);
    if (e.type === 'uncordon' || e.type === 'node-failed') n--;
  }
  return peak;
}

s('spec: rollout is waves or slots, positioned; soakSeconds with slots is an error with a hint', () => {
  const bad = parseRolloutSpec(spec(null, { rollout: 'slot' }), 'b.yaml').diagnostics.find((d) => d.code === 'invalid-enum')!;
  assert.is(bad.path, 'spec.pools[0].rollout');
  assert.is(bad.line, 10);
  assert.match(bad.expected!, /"waves", "slots"/);
  assert.match(bad.hint!, /slots/);
  const soak = parseRolloutSpec(spec('slots', { soakSeconds: 120 }), 'b.yaml').diagnostics.find((d) => d.code === 'soak-with-slots')!;
  assert.is(soak.path, 'spec.pools[0].soakSeconds');
  assert.ok(soak.line && soak.expected && soak.hint);
  assert.equal(parseRolloutSpec(spec('slots', { soakSeconds: 0 }), 'b.yaml').diagnostics, []);
  assert.equal(parseRolloutSpec(spec('waves', { soakSeconds: 60 }), 'b.yaml').diagnostics, []);
});

s('plan: a slots pool keeps the order, its batches are the waves, says 1.1 and rollout: slots; a waves plan is unchanged', () => {
  const snap = cluster(8, (ns) => {
    ns[1].staged = true;
    ns[5].cordoned = true;
  });
  const slots = planWith(spec('slots'), snap, D).plan;
  const waves = planWith(spec(null), snap, D).plan;
  const explicit = planWith(spec('waves'), snap, D).plan;
  assert.is(waves.formatVersion, '1.0');
  assert.is(waves.pools[0].rollout, undefined);
  assert.equal(explicit.pools, waves.pools, 'rollout: waves is the default: the same pools');
  assert.is(explicit.formatVersion, '1.0');
  assert.is(slots.formatVersion, '1.1');
  assert.is(slots.pools[0].rollout, 'slots');
  // Same order, same blocked node, same batches (cordoned node uses one slot: 2 per batch).
  assert.equal(slots.pools[0].waves, waves.pools[0].waves);
  assert.equal(
    slots.pools[0].nodes.map((n) => [n.name, n.wave, n.blockedBy]),
    waves.pools[0].nodes.map((n) => [n.name, n.wave, n.blockedBy]),
  );
  assert.is(slots.pools[0].waveSize, 2);
  assert.is(slots.pools[0].wavesEstimatedSeconds, waves.pools[0].estimatedSeconds);
  // w-01 is staged: admitted at once; the rest wait for staging (100 s) - slots start the
  // second node then, while the first wave of waves waits for its unstaged node.
  assert.ok(slots.pools[0].estimatedSeconds < waves.pools[0].estimatedSeconds, `${slots.pools[0].estimatedSeconds} < ${waves.pools[0].estimatedSeconds}`);
  assert.ok(slots.id !== waves.id);
});

s('plan: an MCO pool with rollout: slots is refused with a positioned error', () => {
  const snap = new ClusterBuilder().mcoPool('worker', nodes('w', 4)).snapshot();
  const plan = planWith(spec('slots'), snap, D).plan;
  const d = plan.diagnostics.find((x) => x.code === 'slots-mco-pool')!;
  assert.ok(d, JSON.stringify(plan.diagnostics.map((x) => x.code)));
  assert.is(d.severity, 'error');
  assert.is(d.path, 'spec.pools[0].rollout');
  assert.is(d.line, 10);
  assert.match(d.hint!, /waves/);
  assert.is(plan.pools[0].rollout, undefined);
});

s('plan file: a 1.1 plan reads back; an unknown version is refused naming both', () => {
  const plan = planWith(spec('slots'), cluster(4), D).plan;
  assert.is(parsePlanFile(JSON.stringify(plan), 'p.json').plan?.id, plan.id);
  const d = parsePlanFile(JSON.stringify({ ...plan, formatVersion: '1.4' }), 'p.json').diagnostics[0];
  assert.is(d.code, 'plan-format-unsupported');
  assert.match(d.message, /1\.0, 1\.1, 1\.2 and 1\.3/);
});

s('apply: slots refill as nodes come back, never more than maxUnavailable out, every node once, faster than waves', async () => {
  const snap = cluster(12);
  const runs: Record<string, { seconds: number; reboots: string[]; peak: number; inFlight: number }> = {};
  for (const mode of ['waves', 'slots'] as const) {
    const { plan, replan } = planWith(spec(mode), snap, D);
    const sim = newSim(snap, { durations: D, jitter: JITTER });
    const r = await runApply(sim, plan, replan);
    assert.is(r.code, 0, String(r.error));
    runs[mode] = {
      seconds: r.result!.durationSeconds,
      reboots: sim.reboots.map((x) => x.node).sort(),
      peak: sim.peakUnavailable.get('worker')!,
      inFlight: peakInFlight(r.events),
    };
  }
  assert.equal(
    runs.slots.reboots,
    nodes('w', 12).map((n) => n.name),
  );
  assert.equal(runs.waves.reboots, runs.slots.reboots);
  assert.is(runs.slots.peak, 3);
  assert.is(runs.slots.inFlight, 3);
  assert.ok(runs.slots.seconds < runs.waves.seconds, `slots ${runs.slots.seconds} s < waves ${runs.waves.seconds} s`);
});

s('apply: a node out of service on its own keeps its slot; slots never take it', async () => {
  const snap = cluster(9, (ns) => {
    ns[4].cordoned = true;
  });
  const { plan, replan } = planWith(spec('slots'), snap, D);
  const sim = newSim(snap, { durations: D, jitter: JITTER });
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 0, String(r.error));
  assert.is(sim.peakUnavailable.get('worker'), 3);
  assert.is(peakInFlight(r.events), 2);
  assert.not.ok(sim.reboots.some((x) => x.node === 'w-04'));
  assert.is(sim.reboots.length, 8);
});

s('apply: a failed node stops admission at once; the nodes in flight finish; the pool halts (exit 5)', async () => {
  const snap = cluster(12);
  const { plan, replan } = planWith(spec('slots'), snap, D);
  const sim = newSim(snap, { durations: D, jitter: JITTER, faults: { seed: 3, rebootFailRate: 0.25 } });
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 5);
  const failedAt = r.events.find((e) => e.type === 'node-failed')!.t;
  const failedNode = sim.reboots.find((x) => x.failed)!;
  // No cordon after the failure was seen (the failed node's reboot ended before failedAt).
  assert.not.ok(r.events.some((e) => e.type === 'cordon' && e.t > failedAt));
  assert.ok(r.events.some((e) => e.type === 'halt'));
  assert.ok(sim.reboots.length < 12, `${sim.reboots.length} reboots before the halt (failed: ${failedNode.node})`);
  // Every node started before the halt came back (none left mid-update by a detached promise).
  const started = r.events.filter((e) => e.type === 'reboot').map((e) => (e as { node: string }).node);
  const back = new Set(r.events.filter((e) => e.type === 'booted' || e.type === 'node-failed').map((e) => (e as { node: string }).node));
  for (const n of started) assert.ok(back.has(n), `${n} came back or failed`);
});

s('apply: re-plans once per admission batch, not per node', async () => {
  const snap = cluster(12);
  const { plan, replan } = planWith(spec('slots'), snap, D);
  let replans = 0;
  const sim = newSim(snap, { durations: D });
  const r = await runApply(sim, plan, (x) => {
    replans++;
    return replan(x);
  });
  assert.is(r.code, 0, String(r.error));
  // apply start, the gate before the first batch, then one per later batch (4 batches of 3).
  assert.is(plan.pools[0].waves.length, 4);
  assert.is(replans, 2 + 3);
  assert.equal(
    r.events
      .filter((e) => e.type === 'wave-end')
      .map((e) => (e as { wave: number }).wave)
      .sort(),
    [1, 2, 3, 4],
  );
});

s('apply --step admits one batch, returns once it is back, and a rerun continues', async () => {
  const snap = cluster(7);
  const { plan, replan } = planWith(spec('slots'), snap, D);
  const sim = newSim(snap, { durations: D });
  const first = await runApply(sim, plan, replan, { step: true });
  assert.is(first.code, 0, String(first.error));
  assert.is(first.result!.outcome, 'stepped');
  assert.is(sim.reboots.length, 3);
  let outcome = '';
  for (let i = 0; i < 5 && outcome !== 'done'; i++) outcome = (await runApply(sim, plan, replan, { step: true })).result!.outcome;
  assert.is(outcome, 'done');
  assert.equal(
    sim.reboots.map((x) => x.node).sort(),
    nodes('w', 7).map((n) => n.name),
  );
});

s('apply: a window that refuses stops admission; nodes in flight finish; exit 6; a rerun finishes the rest', async () => {
  const snap = cluster(9);
  const { plan, replan } = planWith(spec('slots'), snap, D);
  const sim = newSim(snap, { durations: D });
  let t0: number | null = null;
  // The window "closes" 250 s after the first admission round.
  const policy = (now: number, pool: unknown) => {
    if (!pool) return null;
    t0 ??= now;
    return now - t0 > 250 ? 'the window closes' : null;
  };
  const r = await runApply(sim, plan, replan, { policy });
  assert.is(r.code, 6, String(r.error));
  const cordoned = r.events.filter((e) => e.type === 'cordon').length;
  const uncordoned = r.events.filter((e) => e.type === 'uncordon').length;
  assert.ok(cordoned >= 3 && cordoned < 9, `${cordoned} admitted`);
  assert.is(uncordoned, cordoned, 'every admitted node finished before the apply stopped');
  const again = await runApply(sim, plan, replan);
  assert.is(again.code, 0, String(again.error));
  assert.equal(
    sim.reboots.map((x) => x.node).sort(),
    nodes('w', 9).map((n) => n.name),
  );
});

s('apply: the staging gate node by node: a staged node goes ahead; one that never starts staging halts the pool after the limit', async () => {
  // The pool already asks for NEW; the bootc-operator handed it to every node but w-01.
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 3), { image: NEW });
  for (const n of ['w-00', 'w-02']) b.object('BootcNode', n).spec.desiredImage = NEW;
  b.object('BootcNode', 'w-01').spec.desiredImage = OLD;
  const snap = b.snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, rollout: 'slots' }]), snap, D);
  assert.equal(plan.pools[0].waves, [['w-00', 'w-01'], ['w-02']]);
  const sim = newSim(snap, { durations: D });
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 5, String(r.error));
  const failed = r.events.find((e) => e.type === 'node-failed');
  assert.ok(failed && failed.type === 'node-failed' && failed.node === 'w-01');
  if (failed?.type !== 'node-failed') return;
  assert.match(failed.message, /^never started staging: /);
  assert.ok(failed.t > 600, `after the 10-minute limit (t=${failed.t})`);
  assert.equal(
    sim.reboots.map((x) => x.node),
    ['w-00'],
    'w-00 did not wait for w-01; w-02 was never admitted',
  );
  assert.ok(r.events.some((e) => e.type === 'uncordon' && e.node === 'w-00'));
  assert.not.ok(r.events.some((e) => e.type === 'cordon' && e.node !== 'w-00'));
});

// ---- rehearse --jitter and the gain ----

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-slots-'));
const clusterFile = join(dir, 'cluster.yaml');
writeFileSync(clusterFile, new ClusterBuilder().bootcPool('worker', nodes('w', 12), { maxUnavailable: 3 }).yaml());
writeFileSync(join(dir, 'slots.yaml'), spec('slots'));
writeFileSync(join(dir, 'waves.yaml'), spec(null));

s('rehearse --jitter: seeded and deterministic; a slots plan shows the gain over the same plan in waves', async () => {
  const json = async (file: string, ...more: string[]) => {
    const o = io();
    const code = await run(['rehearse', '-f', join(dir, file), '--cluster', clusterFile, '--jitter', '0.3', '--seed', '5', ...more], { io: o });
    assert.is(code, 0, o.err);
    return o.out;
  };
  const a = JSON.parse(await json('slots.yaml', '-o', 'json'));
  const b = JSON.parse(await json('slots.yaml', '-o', 'json'));
  assert.equal(a, b, 'the same seed gives the same rehearsal');
  assert.equal(a.jitter, { fraction: 0.3, seed: 5 });
  assert.ok(a.wavesComparison, 'a slots plan is compared with waves');
  assert.ok(a.durationSeconds < a.wavesComparison.durationSeconds, `slots ${a.durationSeconds} < waves ${a.wavesComparison.durationSeconds}`);
  const waves = JSON.parse(await json('waves.yaml', '-o', 'json'));
  assert.is(waves.wavesComparison, undefined);
  assert.is(waves.durationSeconds, a.wavesComparison.durationSeconds, 'the comparison is the waves rehearsal of the same cluster, jitter and seed');
  const other = JSON.parse(await json('waves.yaml', '-o', 'json', '--seed', '6'));
  assert.ok(other.durationSeconds !== waves.durationSeconds, 'another seed, other durations');
  const text = await json('slots.yaml');
  assert.match(text, /jitter ±30% per node, seed 5/);
  assert.match(text, /Slots: .*; the same plan in waves: .*: slots .* faster \(\d+(\.\d)?%\)\./);
});

s('rehearse --jitter out of range is a one-line input error', async () => {
  for (const bad of ['1.5', '0.95', 'x']) {
    const o = io();
    const code = await run(['rehearse', '-f', join(dir, 'slots.yaml'), '--cluster', clusterFile, '--jitter', bad], { io: o });
    assert.is(code, 1);
    assert.match(o.err, /--jitter/);
    assert.not.match(o.err, / {4}at /);
  }
});

s.run();
