/**
 * A plan runs only on its own cluster (docs/safety.md "A plan runs only on its own cluster"), on
 * two real kube-apiservers loaded with identical objects (the same three bootc workers, no
 * ClusterVersion): what tells them apart is the uid each API server gave its kube-system
 * Namespace. As the bootcplan ServiceAccount of examples/rbac.yaml, one context per server:
 * - `bootcplan snapshot` of east, a plan made from that file applies on east; on west it is
 *   refused with exit 3 naming both uids and both servers, and west is left as it was;
 * - a plan made from a snapshot file without identity is refused on a live cluster, with the hint;
 * - `fleet apply` with the kubeconfig's contexts swapped after `fleet plan`: both clusters fail
 *   with exit 3 and nothing is written to either (no lock, no progress, no fleet record).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify, parse } from 'yaml';
import { cli } from '../support/cli.ts';
import { tempDir, loadObjects } from './env.ts';
import { NodeAgent } from './agent.ts';
import { startFleetEnvs, fleetKubeconfig, resetFleetEnv, type FleetEnv } from './fleet-envs.ts';
import { FleetBuilder, workerCluster, NEW } from '../support/fleet.ts';
import { NEW_DIGEST } from '../support/cluster.ts';
import { readLiveSnapshot } from '../../src/kube/read.ts';
import { NotFoundError } from '../../src/apply/ports/driver.ts';

const t = suite('e2e: a plan runs only on its own cluster');
let envs: FleetEnv[] = [];
let agents: NodeAgent[] = [];
let dir: string;
const env = (n: string) => envs.find((e) => e.name === n)!;

/** The same objects on both servers, without ClusterVersion: only the API servers' own kube-system uids differ. */
async function identicalClusters(): Promise<void> {
  for (const a of agents) a.stop();
  await Promise.all(envs.map(resetFleetEnv));
  const objects = workerCluster(3).objects.filter((o) => o.kind !== 'ClusterVersion');
  await Promise.all(envs.map((e) => loadObjects(e.admin, objects)));
  agents = await Promise.all(envs.map((e) => new NodeAgent(e.admin, { scale: 1 }).start()));
}

const kubeSystemUid = async (e: FleetEnv) => (await e.admin.request('GET', '/api/v1/namespaces/kube-system')).metadata.uid as string;
const host = (e: FleetEnv) => new URL(e.server).host;

async function untouched(e: FleetEnv): Promise<void> {
  const snap = await readLiveSnapshot(e.admin);
  for (const n of snap.nodes) assert.not.ok(n.spec?.unschedulable, `${e.name}/${n.metadata.name} not cordoned`);
  for (const bn of snap.bootcNodes) assert.is.not(bn.status?.booted?.imageDigest, NEW_DIGEST, `${e.name}/${bn.metadata.name} not updated`);
  for (const p of snap.bootcNodePools) assert.is.not(p.spec?.image?.ref, NEW, `${e.name}: pool image not written`);
  assert.is(snap.lock, null, `${e.name}: no lock`);
  assert.is(snap.progress, null, `${e.name}: no progress record`);
  const fleetRecord = await e.admin.request('GET', '/api/v1/namespaces/openshift-bootcplan/configmaps/bootcplan-fleet').catch((err) => {
    if (err instanceof NotFoundError) return null;
    throw err;
  });
  assert.is(fleetRecord, null, `${e.name}: no fleet record`);
}

t.before(async () => {
  const { envs: started, seconds } = await startFleetEnvs(['east', 'west']);
  envs = started;
  console.log(`e2e: 2 kube-apiservers started at once, with CRDs and RBAC, in ${seconds.toFixed(1)}s`);
  dir = tempDir('bootcplan-e2e-identity-');
  await fleetKubeconfig(envs, dir);
  writeFileSync(
    join(dir, 'bootcplan.yaml'),
    stringify({
      apiVersion: 'bootcplan.dev/v1alpha1',
      kind: 'Rollout',
      metadata: { name: 'stores' },
      spec: { pools: [{ name: 'worker', image: NEW, maxUnavailable: 1, drainTimeoutSeconds: 60 }] },
    }),
  );
});
t.after(() => {
  for (const a of agents) a.stop();
});

t('a plan of east (made from `bootcplan snapshot` of east) applies on east and is refused on west: exit 3, both named, west untouched', async () => {
  await identicalClusters();
  const [eastUid, westUid] = [await kubeSystemUid(env('east')), await kubeSystemUid(env('west'))];
  assert.is.not(eastUid, westUid);
  const snap = await cli(['snapshot', '--kubeconfig', 'kubeconfig', '--context', 'ctx-east', '--out', 'east.yaml'], { cwd: dir });
  assert.is(snap.code, 0, snap.err);
  assert.match(snap.err, new RegExp(`cluster identity: Namespace/kube-system.metadata.uid ${eastUid}`));
  const plan = await cli(['plan', '--cluster', 'east.yaml', '--out', './east-plan.json'], { cwd: dir });
  assert.is(plan.code, 0, plan.err);
  const saved = JSON.parse(readFileSync(join(dir, 'east-plan.json'), 'utf8'));
  assert.equal(saved.cluster.identity, { kind: 'Namespace/kube-system.metadata.uid', id: eastUid });
  assert.is(saved.cluster.server, host(env('east')));

  const wrong = await cli(['apply', 'east-plan.json', '--kubeconfig', 'kubeconfig', '--context', 'ctx-west', '--auto-approve'], { cwd: dir });
  assert.is(wrong.code, 3, wrong.err);
  assert.match(wrong.err, new RegExp(`plan ${saved.id} was made for another cluster`));
  assert.match(wrong.err, new RegExp(`the plan is for: Namespace/kube-system.metadata.uid ${eastUid} \\(server ${host(env('east'))}\\)`));
  assert.match(
    wrong.err,
    new RegExp(`this cluster is: +Namespace/kube-system.metadata.uid ${westUid} \\(server ${host(env('west'))}\\), read from live:ctx-west`),
  );
  await untouched(env('west'));

  const right = await cli(['apply', 'east-plan.json', '--kubeconfig', 'kubeconfig', '--context', 'ctx-east', '--auto-approve'], { cwd: dir });
  assert.is(right.code, 0, right.err);
  for (const bn of (await readLiveSnapshot(env('east').admin)).bootcNodes) assert.is(bn.status?.booted?.imageDigest, NEW_DIGEST);
});

t('a plan made from a snapshot file without identity is refused on the live cluster, with the way out', async () => {
  await identicalClusters();
  assert.is((await cli(['snapshot', '--kubeconfig', 'kubeconfig', '--context', 'ctx-east', '--out', 'east.yaml'], { cwd: dir })).code, 0);
  // As `kubectl get` of a few kinds would write it: no kube-system Namespace.
  const list = parse(readFileSync(join(dir, 'east.yaml'), 'utf8'));
  list.items = list.items.filter((o: { kind: string }) => o.kind !== 'Namespace');
  writeFileSync(join(dir, 'bare.yaml'), stringify(list));
  assert.is((await cli(['plan', '--cluster', 'bare.yaml', '--out', './bare-plan.json'], { cwd: dir })).code, 0);
  const r = await cli(['apply', 'bare-plan.json', '--kubeconfig', 'kubeconfig', '--context', 'ctx-east', '--auto-approve'], { cwd: dir });
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /records no cluster identity, so it cannot be shown to be this cluster's/);
  assert.match(r.err, /plan against this cluster \(bootcplan plan --kubeconfig/);
  await untouched(env('east'));
  assert.is((await cli(['rehearse', 'bare-plan.json'], { cwd: dir })).code, 0, 'its own snapshot still rehearses');
});

t('fleet apply with the contexts swapped after fleet plan: both clusters fail with exit 3, nothing written to either', async () => {
  await identicalClusters();
  const b = new FleetBuilder().withRollout({ pools: [{ name: 'worker', image: NEW, maxUnavailable: 1, soakSeconds: 0, drainTimeoutSeconds: 60 }] });
  for (const n of ['east', 'west']) b.cluster(n, { context: `ctx-${n}`, kubeconfig: 'kubeconfig', labels: { site: n } });
  b.strategy({ canaries: ['east'], maxConcurrency: 2 });
  writeFileSync(join(dir, 'fleet.yaml'), b.yaml());
  const p = await cli(['fleet', 'plan', '-f', 'fleet.yaml', '--out', './fleet-plan.json'], { cwd: dir });
  assert.is(p.code, 0, p.err);
  const fp = JSON.parse(readFileSync(join(dir, 'fleet-plan.json'), 'utf8'));
  assert.equal(
    fp.clusters.map((c: { plan: { cluster: { identity: { id: string } } } }) => c.plan.cluster.identity.id),
    [await kubeSystemUid(env('east')), await kubeSystemUid(env('west'))],
  );
  // The same kubeconfig, its contexts swapped: ctx-east reaches west, ctx-west reaches east.
  await fleetKubeconfig(
    [
      { ...env('east'), context: 'ctx-west' },
      { ...env('west'), context: 'ctx-east' },
    ],
    dir,
  );
  const r = await cli(['fleet', 'apply', './fleet-plan.json', '--auto-approve'], { cwd: dir });
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /east: failed \(exit 3\): plan [0-9a-f]{16} was made for another cluster/);
  assert.match(r.err, /fleet halted \(canary-failed\)/);
  for (const e of envs) await untouched(e);
  await fleetKubeconfig(envs, dir);
});

t.run();
