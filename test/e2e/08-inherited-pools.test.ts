/**
 * Inherited pools (docs/spec.md "Inherited pools and the merge order") against the real API
 * server, the node agent playing the MCO (it renders a MachineConfig into every pool whose
 * machineConfigSelector selects it, merged in the MCO's order): an MCO-only worker rollout with a
 * custom infra pool that inherits worker's MachineConfigs.
 * - without infra in the spec, `plan` exits 1 and names infra and its nodes;
 * - with it, `apply` as the ServiceAccount updates exactly the nodes of both pools in the plan
 *   (read back from the cluster), touches no other node, and keeps each pool within its
 *   maxUnavailable; infra, after worker by priority, is not touched before its turn.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { io } from '../support/cli.ts';
import { tempDir, setupEnv, type TestEnv } from './env.ts';
import { applyWatchingNodes, freshCluster } from './helpers.ts';
import { run } from '../support/built.ts';
import type { NodeAgent } from './agent.ts';
import { ClusterBuilder, specYaml, NEW, type TestObject } from '../support/cluster.ts';
import { readLiveSnapshot } from '../../src/kube/read.ts';
import { MCO_CURRENT_CONFIG } from '../../src/domain/labels.ts';

const t = suite('e2e: inherited pools');
let env: TestEnv;
let agent: NodeAgent | null = null;
let dir: string;

const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const POOLS: Record<string, string[]> = { worker: ['w-1', 'w-2', 'w-3', 'w-4'], infra: ['i-1', 'i-2'], storage: ['s-1'] };
const BUDGET: Record<string, number> = { worker: 2, infra: 1 };
const poolOf = (node: string) => Object.keys(POOLS).find((p) => POOLS[p].includes(node)) ?? null;

function cluster() {
  const at = (names: string[]) => names.map((name, i) => ({ name, zone: ZONES[i % 3] }));
  return new ClusterBuilder()
    .mcoPool('worker', at(POOLS.worker))
    .mcoPool('infra', at(POOLS.infra), { configRoles: ['worker', 'infra'] })
    .mcoPool('storage', at(POOLS.storage)).objects;
}

/** Per pool, the most nodes unschedulable or NotReady at once, and when each node was first touched. */
class Recorder {
  readonly max: Record<string, number> = {};
  readonly touched = new Map<string, number>();
  readonly sample = (nodes: Iterable<TestObject>) => {
    const count: Record<string, number> = {};
    for (const n of nodes) {
      const pool = poolOf(n.metadata.name);
      const out = n.spec?.unschedulable || !(n.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
      if (!pool || !out) continue;
      count[pool] = (count[pool] ?? 0) + 1;
      if (!this.touched.has(n.metadata.name)) this.touched.set(n.metadata.name, Date.now());
    }
    for (const [p, c] of Object.entries(count)) this.max[p] = Math.max(this.max[p] ?? 0, c);
  };
}

async function scenario() {
  agent = await freshCluster(env, cluster(), agent);
}

function specFile(pools: Record<string, unknown>[]) {
  const file = join(dir, `inherit-${Date.now()}.yaml`);
  writeFileSync(file, specYaml(pools));
  return file;
}

t.before(async () => {
  env = await setupEnv();
  dir = tempDir('bootcplan-e2e-inherit-');
});
t.after(() => agent?.stop());

t('infra inherits worker and is not in the spec: plan exits 1 naming infra and its nodes', async () => {
  await scenario();
  const file = specFile([{ name: 'worker', image: NEW, maxUnavailable: 2 }]);
  const cap = io();
  const code = await run(['plan', '-f', file, '--kubeconfig', env.saKubeconfig, '-o', 'json'], { io: cap });
  assert.is(code, 1, cap.err);
  const plan = JSON.parse(cap.out);
  const d = plan.diagnostics.find((x: any) => x.code === 'inherited-pool-not-in-spec');
  assert.ok(d, JSON.stringify(plan.diagnostics));
  assert.is(d.severity, 'error');
  assert.match(d.message, 'infra (i-1, i-2)');
  assert.match(d.hint, '- name: infra');
});

t('worker and the inheriting infra in the spec: apply updates exactly the planned nodes, each pool within its budget', async () => {
  await scenario();
  const file = specFile([
    { name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0 },
    { name: 'infra', image: NEW, maxUnavailable: 1, priority: 30, soakSeconds: 0 },
  ]);
  const planned = io();
  assert.is(await run(['plan', '-f', file, '--kubeconfig', env.saKubeconfig, '-o', 'json'], { io: planned }), 0, planned.err);
  const plan = JSON.parse(planned.out);
  const planNodes = plan.pools.flatMap((p: any) => p.waves.flat()).sort();
  assert.equal(planNodes, [...POOLS.infra, ...POOLS.worker].sort());
  const before = await readLiveSnapshot(env.admin);
  const configOf = (snap: typeof before) => new Map(snap.nodes.map((n) => [n.metadata.name, n.metadata.annotations?.[MCO_CURRENT_CONFIG]]));
  const was = configOf(before);

  const rec = new Recorder();
  const applied = await applyWatchingNodes(env, file, rec.sample);
  assert.is(applied.code, 0, applied.err);
  assert.equal(agent!.errors, []);

  const after = await readLiveSnapshot(env.admin);
  const now = configOf(after);
  const updated = [...now].filter(([n, c]) => c !== was.get(n)).map(([n]) => n);
  assert.equal(updated.sort(), planNodes, 'the nodes the run updated are the nodes of the plan');
  const rendered = new Map(after.machineConfigs.map((m) => [m.metadata.name, m]));
  for (const n of planNodes) assert.is(rendered.get(now.get(n) ?? '')?.spec?.osImageURL, NEW, `${n} runs a config with the target image`);
  assert.equal(
    [...rec.touched.keys()].filter((n) => poolOf(n) === 'storage'),
    [],
    'no storage node touched',
  );
  assert.is(now.get('s-1'), was.get('s-1'));
  for (const [pool, budget] of Object.entries(BUDGET)) {
    assert.ok((rec.max[pool] ?? 0) >= 1, `${pool} nodes were taken out of service`);
    assert.ok(rec.max[pool] <= budget, `${pool}: ${rec.max[pool]} out of service at once, maxUnavailable ${budget}`);
  }
  // infra rolls after worker (priority 30): kept paused while worker's MachineConfig rolled.
  const lastWorker = Math.max(...POOLS.worker.map((n) => rec.touched.get(n) ?? 0));
  const firstInfra = Math.min(...POOLS.infra.map((n) => rec.touched.get(n) ?? Infinity));
  assert.ok(firstInfra > lastWorker, 'no infra node out of service before worker had started its last node');
  const infraMcp = after.machineConfigPools.find((p) => p.metadata.name === 'infra');
  assert.is(infraMcp?.spec?.paused, false, 'infra left unpaused at the end, as the spec wants');
});

t.run();
