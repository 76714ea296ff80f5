/**
 * Sharing the cluster (docs/safety.md) against the real API server: `bootcplan plan` on the live
 * cluster refuses overlapping pools (rule 3) and a BootcNodePool that a MachineConfigPool
 * owns (rule 4), with exit 1 and the diagnostics at the spec entries.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, setupEnv, resetCluster, loadObjects, type TestEnv } from './env.ts';
import { ClusterBuilder, specYaml, NEW, OLD, nodes } from '../support/cluster.ts';
import { io } from '../support/cli.ts';
import { run } from '../support/built.ts'; // the bundle, as the package ships it

const t = suite('e2e: sharing the cluster');
let env: TestEnv;
let dir: string;

const GPU = 'example.com/gpu';

t.before(async () => {
  env = await setupEnv();
  dir = tempDir('bootcplan-e2e-sharing-');
});

async function planLive(spec: string, name: string) {
  const file = join(dir, name);
  writeFileSync(file, spec);
  const json = io();
  const code = await run(['plan', '-f', file, '--kubeconfig', env.kubeconfig, '-o', 'json'], { io: json });
  const text = io();
  const textCode = await run(['plan', '-f', file, '--kubeconfig', env.kubeconfig], { io: text });
  return { code, textCode, plan: JSON.parse(json.out), text: text.out, err: json.err };
}

t('overlapping BootcNodePools: plan exits 1 with the conflict at each pool entry; the shared node is in no wave', async () => {
  await resetCluster(env.admin);
  const b = new ClusterBuilder()
    .bootcPool('worker', nodes('w', 4))
    .bootcPool('gpu', nodes('g', 2, undefined, { labels: { [GPU]: '' } }), {
      selector: { matchLabels: { [GPU]: '' } },
      conditions: [
        {
          type: 'Degraded',
          status: 'True',
          reason: 'NodeConflict',
          message: 'Node selector overlaps with pool(s): worker',
          lastTransitionTime: '2026-09-14T07:00:00Z',
        },
      ],
    })
    .labelNode('w-01', { [GPU]: '' });
  await loadObjects(env.admin, b.objects);
  const r = await planLive(
    specYaml([
      { name: 'worker', image: NEW, maxUnavailable: 2 },
      { name: 'gpu', image: NEW },
    ]),
    'conflict.yaml',
  );
  assert.is(r.code, 1, r.err);
  assert.is(r.textCode, 1);
  const ds = r.plan.diagnostics.filter((d: any) => d.code === 'pool-node-conflict');
  assert.equal(
    ds.map((d: any) => [d.severity, d.path, d.file, d.line, d.column]),
    [
      ['error', 'spec.pools[0].name', join(dir, 'conflict.yaml'), 7, 13],
      ['error', 'spec.pools[1].name', join(dir, 'conflict.yaml'), 10, 13],
    ],
  );
  for (const d of ds) assert.match(d.message, /BootcNodePool\/gpu and BootcNodePool\/worker: w-01/);
  assert.match(ds[1].message, /reports Degraded=True \(NodeConflict\)/, "the operator's own report, read from the API");
  const waves = r.plan.pools.flatMap((p: any) => p.waves.flat());
  assert.not.ok(waves.includes('w-01'));
  assert.is(r.plan.pools.find((p: any) => p.name === 'worker').nodes.find((n: any) => n.name === 'w-01').blockedBy, 'pool-conflict');
  assert.match(r.text, /pool-node-conflict|belong to more than one pool/);
  assert.match(r.text, /conflict\.yaml:7:13/);
});

t('a BootcNodePool owned by a MachineConfigPool: plan exits 1 and explains the ownership; no change to the pool', async () => {
  await resetCluster(env.admin);
  const b = new ClusterBuilder().mcoPool('worker', []).bootcPool('worker', nodes('w', 3), {
    image: OLD,
    ownerReferences: [{ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: 'worker', controller: true }],
  });
  await loadObjects(env.admin, b.objects);
  const r = await planLive(specYaml([{ name: 'worker', image: NEW }]), 'owned.yaml');
  assert.is(r.code, 1, r.err);
  const d = r.plan.diagnostics.find((x: any) => x.code === 'pool-owned-by-machineconfigpool');
  assert.ok(d, JSON.stringify(r.plan.diagnostics));
  assert.equal([d.severity, d.path, d.line, d.column], ['error', 'spec.pools[0].image', 8, 14]);
  assert.match(d.message, /owned by MachineConfigPool worker/);
  assert.match(d.hint, /osImageURL/);
  assert.is(
    r.plan.changes.find((c: any) => c.kind === 'BootcNodePool'),
    undefined,
  );
  assert.equal(r.plan.pools[0].waves, []);
  assert.match(r.text, /owned\.yaml:8:14/);
});

t.run();
