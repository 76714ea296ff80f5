/**
 * The plan's drain forecast (docs/apply.md "Drain forecast"): each planned node's forecast in its
 * wave, every class with its numbers and hint, the waves spread over the PodDisruptionBudgets,
 * the note of a snapshot without workloads, the pool's `drain` policy and apply refusing skip.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterBuilder, nodes, NEW, planFor, specYaml } from '../support/cluster.ts';
import { budget, pod, snapshotWith } from '../support/drain.ts';
import { drainContextOf, drainWaitSeconds } from '../../src/plan/drain.ts';
import type { Plan, PlanNode } from '../../src/plan/types.ts';
import { checkApplicable } from '../../src/plan/saved/verify.ts';
import { confirmSavedPlan } from '../../src/plan/saved/compare.ts';
import { planFileText } from '../../src/plan/saved/writer.ts';
import { parsePlanFile } from '../../src/plan/saved/reader.ts';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { run } from '../../src/cli/main.ts';
import { io } from '../support/cli.ts';

const s = suite('plan: drain forecast');

const api3 = ['w-00', 'w-01', 'w-02'].map((n, i) => pod(`api-${i + 1}`, n));
const spec = (extra: Record<string, unknown> = {}) => specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3, ...extra }]);
const nodeOf = (plan: Plan, name: string): PlanNode => {
  const n = plan.pools[0].nodes.find((x) => x.name === name);
  if (!n) throw new Error(`no node ${name}`);
  return n;
};

s('3 pods of one PDB allowing 1 on 3 nodes, maxUnavailable 3: 3 waves, each drain ok, formatVersion 1.3', () => {
  const plan = planFor(spec(), snapshotWith({ pods: api3, budgets: [budget('api', { minAvailable: 2 })] }));
  assert.equal(plan.pools[0].waves, [['w-00'], ['w-01'], ['w-02']]);
  assert.is(plan.formatVersion, '1.3');
  for (const n of plan.pools[0].nodes) assert.equal(n.drainForecast, { class: 'ok', rounds: 1, findings: [], effects: [] });
  assert.equal(plan.diagnostics, []);
});

s('pods moved since the plan: the reviewed waves run, the plan is not stale (workloads are not in the fingerprint)', () => {
  const b = [budget('api', { minAvailable: 2 })];
  const snapThen = snapshotWith({ pods: api3, budgets: b });
  const saved = planFor(spec(), snapThen);
  assert.equal(saved.pools[0].waves, [['w-00'], ['w-01'], ['w-02']]);
  // api-2 was rescheduled onto w-00: planned now, the budget would split the waves otherwise.
  const moved = [pod('api-1', 'w-00'), pod('api-2', 'w-00'), pod('api-3', 'w-01')];
  const snapNow = snapshotWith({ pods: moved, budgets: b });
  const fresh = planFor(spec(), snapNow);
  assert.not.equal(fresh.pools[0].waves, saved.pools[0].waves, 'the fresh plan spreads the moved pods otherwise');
  const confirmed = confirmSavedPlan(saved, fresh, snapNow, { compareDurations: true });
  assert.is(confirmed.id, saved.id);
  assert.equal(confirmed.pools[0].waves, saved.pools[0].waves);
  assert.equal(
    confirmed.pools[0].nodes.map((n) => [n.name, n.wave]),
    saved.pools[0].nodes.map((n) => [n.name, n.wave]),
  );
});

s('no budget constrains: the waves are what they are without workloads', () => {
  const w = ['w-00', 'w-01', 'w-02'].map((n, i) => pod(`web-${i}`, n, { labels: { app: 'web' }, controller: { kind: 'ReplicaSet', name: `web-${i}` } }));
  const withWorkloads = planFor(spec(), snapshotWith({ pods: w, budgets: [budget('api', { minAvailable: 2 })] }));
  const without = planFor(spec(), snapshotWith(null));
  assert.equal(withWorkloads.pools[0].waves, without.pools[0].waves);
  assert.equal(without.pools[0].waves, [['w-00', 'w-01', 'w-02']]);
});

s('blocked: minAvailable 3 of 3 healthy allows 0 disruptions, with the numbers and the hint', () => {
  const b = budget('api', { minAvailable: 3 }, { desiredHealthy: 3, disruptionsAllowed: 0 });
  const plan = planFor(spec(), snapshotWith({ pods: api3, budgets: [b] }));
  // A budget allowing none blocks every wave alike: the waves are not split for it.
  assert.equal(plan.pools[0].waves, [['w-00', 'w-01', 'w-02']]);
  const f = nodeOf(plan, 'w-01').drainForecast;
  assert.is(f?.class, 'blocked');
  const x = f?.findings[0];
  assert.is(x?.reason, 'min-available-all');
  assert.is(x?.budget, 'payments/api');
  assert.equal(x?.numbers, { currentHealthy: 3, desiredHealthy: 3, disruptionsAllowed: 0, expectedPods: 3, evictions: 3 });
  assert.equal(x?.pods, ['payments/api-1', 'payments/api-2', 'payments/api-3']);
  assert.is(x?.message, 'PDB payments/api: minAvailable 3 of 3 healthy allows 0 disruptions');
  assert.is(x?.hint, 'scale to 4 or set maxUnavailable: 1 on PDB payments/api');
});

s('blocked: maxUnavailable 0 allows no disruption', () => {
  const b = budget('api', { maxUnavailable: 0 }, { desiredHealthy: 3, disruptionsAllowed: 0 });
  const f = nodeOf(planFor(spec(), snapshotWith({ pods: api3, budgets: [b] })), 'w-00').drainForecast;
  assert.is(f?.class, 'blocked');
  assert.is(f?.findings[0].message, 'PDB payments/api (maxUnavailable 0) allows no disruption');
  assert.is(f?.findings[0].hint, 'set maxUnavailable: 1 (or a percentage above 0) on PDB payments/api, or leave these nodes out');
});

s('blocked: a pod under two PDBs cannot be evicted', () => {
  const b2 = { ...budget('api-all', { minAvailable: 1 }), selector: { matchLabels: {} } };
  const f = nodeOf(planFor(spec(), snapshotWith({ pods: [pod('api-1', 'w-00')], budgets: [budget('api', { minAvailable: 1 }), b2] })), 'w-00').drainForecast;
  assert.is(f?.class, 'blocked');
  assert.is(f?.findings[0].reason, 'multiple-budgets');
  assert.is(f?.findings[0].budget, 'payments/api, payments/api-all');
  assert.is(f?.findings[0].hint, 'make the budgets\u2019 selectors disjoint, so that each pod has at most one');
});

s('serialized: a node with 2 pods of a PDB allowing 1 waits 2 rounds, and the plan says no wave helps', () => {
  const pods = [pod('api-1', 'w-00'), pod('api-2', 'w-00'), pod('api-3', 'w-01')];
  const plan = planFor(spec(), snapshotWith({ pods, budgets: [budget('api', { minAvailable: 2 })] }));
  assert.equal(plan.pools[0].waves, [['w-00', 'w-02'], ['w-01']]);
  const f = nodeOf(plan, 'w-00').drainForecast;
  assert.is(f?.class, 'serialized');
  assert.is(f?.rounds, 2);
  assert.is(f?.findings[0].message, 'PDB payments/api allows 1 at once; the wave evicts 2: 2 rounds, each waiting for the replacements to be Ready');
  assert.is(nodeOf(plan, 'w-02').drainForecast?.class, 'ok');
  // The estimate waits one more drain for the second round.
  assert.is(drainWaitSeconds(plan.pools[0], plan.durations), plan.durations.drain);
  const d = plan.diagnostics.find((x) => x.code === 'drain-waves-cannot-spread');
  assert.ok(d);
  assert.is(d?.severity, 'warning');
  assert.match(d?.message ?? '', /node w-00 runs 2 pods of PDB payments\/api, which allows 1 disruption at once/);
});

s('outage: a single replica without a PDB goes down during its drain', () => {
  const lone = pod('cache-0', 'w-02', { labels: { app: 'cache' }, controller: { kind: 'StatefulSet', name: 'cache' } });
  const f = nodeOf(planFor(spec(), snapshotWith({ pods: [lone] })), 'w-02').drainForecast;
  assert.is(f?.class, 'outage');
  assert.is(
    f?.findings[0].message,
    "StatefulSet payments/cache has its only ready replica on this wave's nodes and no PodDisruptionBudget: it is down during the drain",
  );
  assert.is(f?.findings[0].hint, 'run at least 2 replicas spread over nodes, with a PodDisruptionBudget');
});

s('no-room: the evicted pods do not fit the free allocatable elsewhere (first-fit estimate)', () => {
  const snap = snapshotWith(
    {
      pods: [
        pod('big-0', 'w-00', { labels: { app: 'big' }, requests: { cpuMillis: 3000, memoryBytes: 0 } }),
        pod('big-1', 'w-01', { labels: { app: 'big' }, requests: { cpuMillis: 3000, memoryBytes: 0 } }),
      ],
    },
    3,
    1,
  );
  for (const n of snap.nodes) (n.status as Record<string, unknown>).allocatable = { cpu: '4', memory: '16Gi', pods: '110' };
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), snap);
  const f = nodeOf(plan, 'w-00').drainForecast;
  assert.is(f?.class, 'ok'); // w-02 has room for big-0
  const snap2 = snapshotWith({ pods: [pod('big-0', 'w-00', { labels: { app: 'big' }, requests: { cpuMillis: 3000, memoryBytes: 0 } })] }, 2, 1, 0);
  for (const n of snap2.nodes) (n.status as Record<string, unknown>).allocatable = { cpu: '2', memory: '16Gi', pods: '110' };
  const g = nodeOf(planFor(specYaml([{ name: 'worker', image: NEW }]), snap2), 'w-00').drainForecast;
  assert.is(g?.class, 'no-room');
  assert.is(g?.findings[0].message, '1 evicted pod would not fit on the nodes they may move to (first-fit estimate of requests against free allocatable)');
});

s('bare pods are deleted and emptyDir data is lost, said per pod', () => {
  const bare = pod('debug', 'w-01', { labels: { app: 'debug' }, controller: null, emptyDir: true });
  const f = nodeOf(planFor(spec(), snapshotWith({ pods: [bare] })), 'w-01').drainForecast;
  assert.equal(f?.effects, [
    { pod: 'payments/debug', node: 'w-01', effect: 'deleted-unmanaged' },
    { pod: 'payments/debug', node: 'w-01', effect: 'emptydir-lost' },
  ]);
});

s('a snapshot without workloads: no forecast, the old format; with a drain policy, a note', () => {
  const plain = planFor(spec(), snapshotWith(null));
  assert.is(plain.formatVersion, '1.0');
  assert.ok(plain.pools[0].nodes.every((n) => !('drainForecast' in n)));
  assert.ok(!plain.diagnostics.some((d) => d.code === 'no-drain-forecast'));
  const withPolicy = planFor(spec({ drain: { onBlocked: 'halt' } }), snapshotWith(null));
  assert.is(withPolicy.formatVersion, '1.3');
  const note = withPolicy.diagnostics.find((d) => d.code === 'no-drain-forecast');
  assert.is(note?.message, 'no drain forecast: the snapshot holds no workloads (Pods and PodDisruptionBudgets)');
});

s('spec drain: the plan carries the policy; drainTimeoutSeconds is its alias', () => {
  const plan = planFor(spec({ drain: { timeoutSeconds: 600, onBlocked: 'skip', maxSkippedNodes: 2 } }), snapshotWith(null));
  assert.equal(plan.pools[0].drain, { timeoutSeconds: 600, onBlocked: 'skip', maxSkippedNodes: 2 });
  assert.is(plan.pools[0].drainTimeoutSeconds, 600);
  const alias = planFor(spec({ drainTimeoutSeconds: 300 }), snapshotWith(null));
  assert.is(alias.pools[0].drain, undefined);
  assert.is(alias.pools[0].drainTimeoutSeconds, 300);
  const defaults = planFor(spec({ drain: {} }), snapshotWith(null));
  assert.equal(defaults.pools[0].drain, { timeoutSeconds: null, onBlocked: 'halt', maxSkippedNodes: 0 });
});

s('spec drain: both timeouts, a wrong onBlocked, a negative maxSkippedNodes: positioned errors', () => {
  const both = specYaml([{ name: 'worker', image: NEW, drainTimeoutSeconds: 60, drain: { timeoutSeconds: 60 } }]);
  const d = parseRolloutSpec(both, 'spec.yaml').diagnostics.find((x) => x.code === 'drain-timeout-twice');
  assert.is(d?.severity, 'error');
  assert.is(d?.path, 'spec.pools[0].drainTimeoutSeconds');
  assert.ok((d?.line ?? 0) > 0 && (d?.column ?? 0) > 0);
  const wrong = parseRolloutSpec(specYaml([{ name: 'worker', image: NEW, drain: { onBlocked: 'skipp', maxSkippedNodes: -1 } }]), 'spec.yaml').diagnostics;
  const e = wrong.find((x) => x.path === 'spec.pools[0].drain.onBlocked');
  assert.is(e?.code, 'invalid-enum');
  assert.match(e?.expected ?? '', /"halt", "skip"/);
  assert.ok((e?.line ?? 0) > 0);
  assert.ok(wrong.some((x) => x.path === 'spec.pools[0].drain.maxSkippedNodes' && x.severity === 'error'));
});

s('a 1.3 plan file with drain forecasts and a policy reads back; a wrong class is refused', () => {
  const plan = planFor(
    spec({ drain: { onBlocked: 'halt' } }),
    snapshotWith({ pods: api3, budgets: [budget('api', { maxUnavailable: 0 }, { desiredHealthy: 3, disruptionsAllowed: 0 })] }),
  );
  const text = planFileText(plan);
  const back = parsePlanFile(text, 'p.json');
  assert.equal(back.diagnostics, []);
  assert.equal(back.plan?.pools[0].nodes[0].drainForecast, plan.pools[0].nodes[0].drainForecast);
  const broken = JSON.parse(text);
  broken.pools[0].nodes[0].drainForecast.class = 'fine';
  assert.ok(parsePlanFile(JSON.stringify(broken), 'p.json').diagnostics.length > 0);
});

s('a plan with onBlocked: skip is refused by checkApplicable; halt is not', () => {
  assert.throws(
    () => checkApplicable(planFor(spec({ drain: { onBlocked: 'skip' } }), snapshotWith(null))),
    /drain onBlocked: skip is planned \(pool worker\) but not yet applied/,
  );
  checkApplicable(planFor(spec({ drain: { onBlocked: 'halt' } }), snapshotWith(null)));
});

s('apply and rehearse refuse a plan with onBlocked: skip, exit 1, before touching a cluster', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-drain-'));
  writeFileSync(join(dir, 'cluster.yaml'), new ClusterBuilder().bootcPool('worker', nodes('w', 3)).yaml());
  writeFileSync(join(dir, 'rollout.yaml'), spec({ drain: { onBlocked: 'skip', maxSkippedNodes: 1 } }));
  const p = io();
  const planCode = await run(['plan', '-f', join(dir, 'rollout.yaml'), '--cluster', join(dir, 'cluster.yaml'), '--out', join(dir, 'plan.json')], { io: p });
  assert.ok(planCode === 0 || planCode === 2, p.err);
  const o = io();
  assert.is(await run(['apply', join(dir, 'plan.json')], { io: o }), 1, o.err);
  assert.match(o.err, /drain onBlocked: skip is planned \(pool worker\) but not yet applied by this version/);
  assert.not.match(o.err, / {4}at /);
  const r = io();
  assert.is(await run(['rehearse', join(dir, 'plan.json'), '--cluster', join(dir, 'cluster.yaml')], { io: r }), 1, r.err);
  assert.match(r.err, /drain onBlocked: skip is planned/);
});

s('the forecast reads the nodes as the scheduler would: taints, cordons, allocatable; none without workloads', () => {
  const snap = snapshotWith({ pods: api3 });
  const n = snap.nodes[0];
  n.spec = { unschedulable: true, taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }, { bad: 1 }] };
  (n.status as Record<string, unknown>).allocatable = { cpu: '3500m', memory: '8Gi', pods: '110' };
  const ctx = drainContextOf(snap);
  const d = ctx?.cluster.nodes.find((x) => x.name === n.metadata.name);
  assert.equal(d?.taints, [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }]);
  assert.is(d?.unschedulable, true);
  assert.equal(d?.allocatable, { cpuMillis: 3500, memoryBytes: 8 * 2 ** 30, pods: 110 });
  assert.is(drainContextOf(snapshotWith(null)), null);
});

s('an MCO pool keeps the MCO order and says which wave waits on a PDB', () => {
  const snap = new ClusterBuilder().mcoPool('worker', nodes('w', 3), { maxUnavailable: 3 }).bootcPool('infra', nodes('i', 2)).snapshot();
  snap.workloads = { pods: api3, budgets: [budget('api', { minAvailable: 2 })], controllers: [] };
  const plan = planFor(spec(), snap);
  assert.equal(plan.pools[0].waves, [['w-00', 'w-01', 'w-02']]);
  assert.is(nodeOf(plan, 'w-00').drainForecast?.class, 'serialized');
  const d = plan.diagnostics.find((x) => x.code === 'drain-waves-mco-order');
  assert.match(d?.message ?? '', /wave 1 asks PDB payments\/api for 3 \(it allows 1\)/);
  assert.is(d?.path, 'spec.pools[0].maxUnavailable');
});

s('the control plane stays one node per wave whatever the budgets', () => {
  const snap = new ClusterBuilder().bootcPool('master', nodes('w', 3), { maxUnavailable: 3 }).bootcPool('infra', nodes('i', 2)).snapshot();
  snap.workloads = { pods: api3, budgets: [budget('api', { minAvailable: 2 })], controllers: [] };
  const plan = planFor(specYaml([{ name: 'master', image: NEW, maxUnavailable: 3 }]), snap);
  assert.ok(plan.pools[0].controlPlane);
  assert.equal(plan.pools[0].waves, [['w-00'], ['w-01'], ['w-02']]);
});

s.run();
