/**
 * docs/safety.md rule 2: the control plane never has more than one node out of service. The
 * value written to the control-plane pool is 1 whatever the spec says; a spec asking for
 * more is an error (not a silent clamp); a pool that is not the control plane must not
 * take a control-plane node. The scenario that happened: `maxUnavailable: 2` on the
 * MCO-only master pool rebooted two of three control-plane nodes together.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterBuilder, specYaml, planFor, NEW, nodes } from '../support/cluster.ts';
import { planWith } from '../support/apply.ts';
import { rehearse } from '../../src/sim/rehearse.ts';
import { run } from '../../src/cli/main.ts';
import type { ApplyEvent } from '../../src/apply/ports/events.ts';
import type { Plan } from '../../src/plan/types.ts';
import { io } from '../support/cli.ts';

const s = suite('control plane: one node at a time');

const masters = () => nodes('m', 3);
const D = { stage: 100, drain: 10, reboot: 50, softReboot: 5, ready: 3 };

/** The most of `names` out of service at once in an event stream (cordon .. uncordon). */
export function peakOutOfService(events: readonly ApplyEvent[], names: ReadonlySet<string>): number {
  const out = new Set<string>();
  let peak = 0;
  for (const e of events) {
    if (!('node' in e) || !e.node || !names.has(e.node)) continue;
    if (e.type === 'cordon' || e.type === 'reboot') out.add(e.node);
    if (e.type === 'uncordon' || e.type === 'node-available') out.delete(e.node);
    peak = Math.max(peak, out.size);
  }
  return peak;
}

const mcpChange = (plan: Plan, pool: string) => plan.changes.find((c) => c.kind === 'MachineConfigPool' && c.name === pool);

s('the scenario that happened: maxUnavailable 2 on the MCO-only master pool is an error at the field, and 1 is written', () => {
  const snap = new ClusterBuilder().mcoPool('master', masters()).snapshot();
  const plan = planFor(specYaml([{ name: 'master', image: NEW, maxUnavailable: 2 }]), snap);
  const d = plan.diagnostics.find((x) => x.code === 'control-plane-max-unavailable');
  assert.ok(d, JSON.stringify(plan.diagnostics));
  assert.is(d!.severity, 'error');
  assert.equal([d!.file, d!.line, d!.column, d!.path], ['spec.yaml', 9, 23, 'spec.pools[0].maxUnavailable']);
  assert.match(d!.message, /2/);
  assert.match(d!.hint!, /etcd-quorum-guard/);
  assert.match(d!.hint!, /remove maxUnavailable|maxUnavailable: 1/);
  assert.is(plan.summary.errors, 1);
  const pool = plan.pools[0];
  assert.ok(pool.controlPlane);
  assert.is(pool.maxUnavailable.resolved, 1);
  assert.equal(pool.waves, [['m-00'], ['m-01'], ['m-02']]);
  assert.equal(mcpChange(plan, 'master')!.after, { spec: { maxUnavailable: 1, paused: false } }, 'the MachineConfigPool never gets 2');
});

s('a percentage is judged by what it resolves to: 67% of 3 masters (2) is an error, 50% (1) is not', () => {
  const snap = new ClusterBuilder().mcoPool('master', masters()).snapshot();
  const bad = planFor(specYaml([{ name: 'master', image: NEW, maxUnavailable: '67%' }]), snap);
  const d = bad.diagnostics.find((x) => x.code === 'control-plane-max-unavailable')!;
  assert.is(d.severity, 'error');
  assert.match(d.message, /67%/);
  assert.match(d.message, /resolves to 2/);
  const ok = planFor(specYaml([{ name: 'master', image: NEW, maxUnavailable: '50%' }]), snap);
  assert.equal(
    ok.diagnostics.filter((x) => x.severity === 'error'),
    [],
  );
  assert.is(ok.pools[0].maxUnavailable.resolved, 1);
});

s('the spec says nothing and the live master pool has 3: the plan writes 1 (whatever the cluster or the spec says)', () => {
  const snap = new ClusterBuilder().mcoPool('master', masters(), { maxUnavailable: 3 }).snapshot();
  const plan = planFor(specYaml([{ name: 'master', image: NEW }]), snap);
  assert.equal(
    plan.diagnostics.filter((x) => x.severity === 'error'),
    [],
  );
  const c = mcpChange(plan, 'master')!;
  assert.equal(
    c.patch.filter((op) => op.path === '/spec/maxUnavailable'),
    [
      { op: 'test', path: '/spec/maxUnavailable', value: 3 },
      { op: 'replace', path: '/spec/maxUnavailable', value: 1 },
    ],
  );
  assert.match(plan.pools[0].maxUnavailable.rule, /control plane/);
});

s('a bootc control-plane pool: the BootcNodePool gets 1 too, and asking for 2 is the same error', () => {
  const b = new ClusterBuilder().bootcPool('master', masters());
  const ok = planFor(specYaml([{ name: 'master', image: NEW }]), b.snapshot());
  assert.is((ok.changes.find((c) => c.kind === 'BootcNodePool')!.after as any).spec.rollout.maxUnavailable, 1);
  const bad = planFor(specYaml([{ name: 'master', image: NEW, maxUnavailable: 2 }]), b.snapshot());
  assert.ok(bad.diagnostics.some((d) => d.code === 'control-plane-max-unavailable' && d.severity === 'error'));
  assert.is((bad.changes.find((c) => c.kind === 'BootcNodePool')!.after as any).spec.rollout.maxUnavailable, 1);
});

s('a pool whose nodes are all control-plane nodes is the control plane, whatever it is called', () => {
  const b = new ClusterBuilder().bootcPool('cp', masters(), {
    role: 'master',
    selector: { matchExpressions: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' }] },
  });
  const plan = planFor(specYaml([{ name: 'cp', image: NEW, maxUnavailable: 3 }]), b.snapshot());
  assert.ok(plan.pools[0].controlPlane);
  assert.is(plan.pools[0].priority, 30);
  assert.equal(
    plan.pools[0].waves.map((w) => w.length),
    [1, 1, 1],
  );
  assert.ok(plan.diagnostics.some((d) => d.code === 'control-plane-max-unavailable'));
});

s('a zone-selected bootc pool that matches a control-plane node is an error naming the node', () => {
  const b = new ClusterBuilder()
    .mcoPool('master', [
      { name: 'm-a', zone: 'us-east-1a' },
      { name: 'm-b', zone: 'us-east-1b' },
      { name: 'm-c', zone: 'us-east-1c' },
    ])
    .bootcPool(
      'zone-a',
      [
        { name: 'e-1', zone: 'us-east-1a' },
        { name: 'e-2', zone: 'us-east-1a' },
      ],
      {
        role: 'edge',
        selector: { matchLabels: { 'topology.kubernetes.io/zone': 'us-east-1a' } },
        maxUnavailable: 2,
      },
    );
  const plan = planFor(specYaml([{ name: 'zone-a', image: NEW, maxUnavailable: 2 }]), b.snapshot());
  const d = plan.diagnostics.find((x) => x.code === 'control-plane-node-in-pool');
  assert.ok(d, JSON.stringify(plan.diagnostics));
  assert.is(d!.severity, 'error');
  assert.is(d!.path, 'spec.pools[0].name');
  assert.match(d!.message, /m-a/);
  assert.not.match(d!.message, /m-b|m-c/);
  assert.not.ok(
    plan.pools[0].nodes.some((n) => n.name === 'm-a' && n.wave !== null),
    'never in a wave of the zone pool',
  );
});

s('a compact cluster (masters carry the worker role too): the worker MachineConfigPool is not blamed; the MCO gives those nodes to master', () => {
  const ms = masters().map((n) => ({ ...n, labels: { 'node-role.kubernetes.io/worker': '' } }));
  const b = new ClusterBuilder().mcoPool('master', ms).mcoPool('worker', nodes('w', 2));
  const plan = planFor(
    specYaml([
      { name: 'worker', image: NEW },
      { name: 'master', image: NEW },
    ]),
    b.snapshot(),
  );
  assert.equal(
    plan.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  assert.equal(
    plan.pools.find((p) => p.name === 'worker')!.nodes.map((n) => n.name),
    ['w-00', 'w-01'],
  );
});

// ---- rehearsals --------------------------------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-cp-'));

s('rehearse of the scenario that happened: refused (exit 1) with the error at the spec field; nothing is rebooted', async () => {
  const specFile = join(dir, 'two.yaml');
  const clusterFile = join(dir, 'cluster.yaml');
  writeFileSync(specFile, specYaml([{ name: 'master', image: NEW, maxUnavailable: 2 }]));
  writeFileSync(clusterFile, new ClusterBuilder().mcoPool('master', masters()).yaml());
  const o = io();
  const code = await run(['rehearse', '-f', specFile, '--cluster', clusterFile, '-o', 'json'], { io: o });
  assert.is(code, 1, o.out);
  assert.match(o.err, /control-plane|etcd/);
  assert.match(o.err, /two\.yaml:9:23/);
  assert.is(o.out, '');
});

s('rehearse with the master pool at maxUnavailable 2 in the cluster: peak control-plane unavailable is 1 for the whole run', async () => {
  const b = new ClusterBuilder().mcoPool('master', masters(), { maxUnavailable: 2 }).bootcPool('worker', nodes('w', 4));
  const snapshot = b.snapshot();
  const { plan, replan } = planWith(
    specYaml([
      { name: 'worker', image: NEW, maxUnavailable: 2 },
      { name: 'master', image: NEW },
    ]),
    snapshot,
    { ...D, softReboot: 5 },
  );
  assert.equal(
    plan.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  const { rehearsal, error } = await rehearse({ plan, replan, snapshot, durations: D });
  assert.is(error, null, String(error));
  const master = rehearsal.pools.find((p) => p.name === 'master')!;
  assert.is(master.maxUnavailable, 1);
  assert.is(master.peakUnavailable, 1, 'the simulated MCO never had two masters out');
  const cp = new Set(['m-00', 'm-01', 'm-02']);
  assert.is(peakOutOfService(rehearsal.events, cp), 1, 'from the event stream');
  const rebooted = rehearsal.events
    .filter((e) => e.type === 'reboot' && cp.has(e.node))
    .map((e) => (e as { node: string }).node)
    .sort();
  assert.equal(rebooted, ['m-00', 'm-01', 'm-02'], 'every master rebooted, one at a time');
  assert.is(rehearsal.pools.find((p) => p.name === 'worker')!.peakUnavailable, 2, 'the worker pool keeps its own budget');
});

s.run();
