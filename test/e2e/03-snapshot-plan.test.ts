/**
 * `bootcplan snapshot` then `plan`: the plan from the live cluster equals the plan from
 * the snapshot file written from it.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, setupEnv, resetCluster, loadObjects, type TestEnv } from './env.ts';
import { ClusterBuilder, specYaml, NEW } from '../support/cluster.ts';
import { machineSetObject, OLD_AMI } from '../../src/sim/cluster-objects.ts';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import { io } from '../support/cli.ts';
import { run } from '../support/built.ts'; // the bundle, as the package ships it

const t = suite('e2e: snapshot and plan live');
let env: TestEnv;
let dir: string;

t.before(async () => {
  env = await setupEnv();
  await resetCluster(env.admin);
  dir = tempDir('bootcplan-e2e-plan-');
  const b = new ClusterBuilder()
    .bootcPool(
      'worker',
      [
        { name: 'w-1', zone: 'us-east-1a' },
        { name: 'w-2', zone: 'us-east-1b' },
        { name: 'w-3', zone: 'us-east-1c' },
        { name: 'w-4', zone: 'us-east-1a', staged: true },
        { name: 'w-5', zone: 'us-east-1b', cordoned: true },
      ],
      { maxUnavailable: 2 },
    )
    .mcoPool('infra', [
      { name: 'i-1', zone: 'us-east-1a' },
      { name: 'i-2', zone: 'us-east-1b' },
    ])
    .add(machineSetObject('prod-east-worker-us-east-1a', 'us-east-1a', 'us-east-1', OLD_AMI));
  await loadObjects(env.admin, b.objects);
  writeFileSync(
    join(dir, 'bootcplan.yaml'),
    specYaml(
      [
        { name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0 },
        { name: 'infra', image: NEW, maxUnavailable: 1, soakSeconds: 0 },
      ],
      {
        managedBootImages: { machineManagers: [{ resource: 'machinesets', apiGroup: 'machine.openshift.io', selection: { mode: 'All' } }] },
      },
    ),
  );
});

/** Fields that differ only because one plan read a file and the other the API. */
function comparable(planJson: string) {
  const p = JSON.parse(planJson);
  delete p.id;
  delete p.createdAt;
  delete p.cluster.source;
  return p;
}

t('snapshot --out FILE writes every kind; plan from the file equals plan from the live cluster', async () => {
  const file = join(dir, 'cluster.yaml');
  const s = io();
  assert.is(await run(['snapshot', '--kubeconfig', env.kubeconfig, '--context', 'testenv', '--out', file], { io: s }), 0, s.err);
  assert.match(s.err, /snapshot of testenv \(https:\/\/127\.0\.0\.1:\d+\): \d+ objects/);
  // The cluster's objects (MachineConfigs may carry credentials): readable by the owner only (docs/cli.md "Output files").
  assert.is(statSync(file).mode & 0o777, 0o600);
  const loaded = parseSnapshot(readFileSync(file, 'utf8'), file);
  assert.equal(loaded.diagnostics, []);
  const snap = loaded.snapshot!;
  assert.is(snap.nodes.length, 7);
  assert.is(snap.bootcNodes.length, 5);
  assert.is(snap.bootcNodePools.length, 1);
  assert.is(snap.machineConfigPools.length, 1);
  assert.is(snap.machineSets.length, 1);
  for (const k of ['machineConfiguration', 'controlPlaneMachineSet', 'bootImagesConfigMap', 'featureGate', 'infrastructure', 'clusterVersion'] as const)
    assert.ok(snap[k], `${k} read`);
  assert.not.match(readFileSync(file, 'utf8'), /managedFields/);

  const spec = join(dir, 'bootcplan.yaml');
  const fromFile = io();
  assert.is(await run(['plan', '-f', spec, '--cluster', file, '-o', 'json'], { io: fromFile }), 0, fromFile.err);
  const live = io();
  assert.is(await run(['plan', '-f', spec, '--kubeconfig', env.kubeconfig, '-o', 'json'], { io: live }), 0, live.err);
  const a = comparable(fromFile.out);
  const b = comparable(live.out);
  assert.equal(b, a);
  assert.is(JSON.parse(live.out).cluster.source, 'live:testenv');
  assert.is(a.cluster.fingerprint, JSON.parse(live.out).cluster.fingerprint, 'same fingerprint');
  assert.is(a.summary.nodes, 6, 'nodes to update (the cordoned w-5 is left out)');
  assert.ok(a.pools.find((p: any) => p.name === 'worker').waves.length >= 2);

  // The JSON snapshot variant parses the same.
  const jfile = join(dir, 'cluster.json');
  assert.is(await run(['snapshot', '--kubeconfig', env.kubeconfig, '--out', jfile], { io: io() }), 0);
  assert.is(parseSnapshot(readFileSync(jfile, 'utf8'), jfile).snapshot!.fingerprint, snap.fingerprint);
});

t.run();
