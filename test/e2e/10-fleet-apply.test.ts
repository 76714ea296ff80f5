/**
 * `bootcplan fleet plan` and `fleet apply` against three real kube-apiservers at once (docs/fleets.md),
 * each with bootcplan's CRDs, the RBAC of examples/rbac.yaml and a node agent playing the
 * bootc-operator; one kubeconfig with a context per server, as each server's ServiceAccount:
 * - `fleet plan` over the three contexts, then `fleet apply` with one canary and maxConcurrency 2:
 *   every node of every cluster updated, each cluster's fleet progress recorded in it, the canary
 *   finished before the others started, and a rerun that applies nothing again;
 * - a canary whose node fails its reboot: exit 5, and no request at all reached the other two
 *   (no node cordoned, no lock, no progress record, no fleet record).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli } from '../support/cli.ts';
import { tempDir } from './env.ts';
import { NodeAgent } from './agent.ts';
import { startFleetEnvs, fleetKubeconfig, resetFleetEnv, type FleetEnv } from './fleet-envs.ts';
import { loadObjects } from './env.ts';
import { FleetBuilder, workerCluster, NEW } from '../support/fleet.ts';
import { NEW_DIGEST } from '../support/cluster.ts';
import { requestStats, resetRequestStats } from '../../src/kube/rest.ts';
import { readLiveSnapshot } from '../../src/kube/read.ts';
import { NotFoundError } from '../../src/apply/ports/driver.ts';

const t = suite('e2e: fleet apply');
const NAMES = ['east', 'west', 'south'] as const;
let envs: FleetEnv[] = [];
let agents: NodeAgent[] = [];
let dir: string;

/** Fresh clusters (3 bootc workers each), node agents, and the Fleet file next to the kubeconfig. */
async function scenario(failRebootIn: string | null): Promise<void> {
  for (const a of agents) a.stop();
  await Promise.all(envs.map(resetFleetEnv));
  await Promise.all(envs.map((e) => loadObjects(e.admin, workerCluster(3).objects)));
  agents = await Promise.all(envs.map((e) => new NodeAgent(e.admin, { scale: 1, failReboot: e.name === failRebootIn ? () => true : undefined }).start()));
  const b = new FleetBuilder().withRollout({ pools: [{ name: 'worker', image: NEW, maxUnavailable: 1, soakSeconds: 0, drainTimeoutSeconds: 60 }] });
  for (const n of NAMES) b.cluster(n, { context: `ctx-${n}`, kubeconfig: 'kubeconfig', labels: { site: n } });
  b.strategy({ canaries: ['east'], maxConcurrency: 2 });
  writeFileSync(join(dir, 'fleet.yaml'), b.yaml());
}

const ndjson = (s: string) =>
  s
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const env = (n: string) => envs.find((e) => e.name === n)!;

async function getOrNull(e: FleetEnv, path: string): Promise<any> {
  try {
    return await e.admin.request('GET', path);
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    throw err;
  }
}
const fleetRecord = async (e: FleetEnv) => {
  const cm = await getOrNull(e, '/api/v1/namespaces/openshift-bootcplan/configmaps/bootcplan-fleet');
  return cm ? JSON.parse(cm.data['fleet.json']) : null;
};

t.before(async () => {
  const { envs: started, seconds } = await startFleetEnvs(NAMES);
  envs = started;
  console.log(`e2e: ${envs.length} kube-apiservers started at once, with CRDs and RBAC, in ${seconds.toFixed(1)}s`);
  dir = tempDir('bootcplan-e2e-fleet-');
  await fleetKubeconfig(envs, dir);
});
t.after(() => {
  for (const a of agents) a.stop();
});

t('fleet plan over three contexts, then fleet apply: canary east first, then west and south together; all updated, each recorded in itself', async () => {
  await scenario(null);
  const p = await cli(['fleet', 'plan', '-f', 'fleet.yaml', '--out', './fleet-plan.json'], { cwd: dir });
  assert.is(p.code, 0, p.err);
  assert.match(p.out, /1 +canary .*east/);
  assert.match(p.out, /2 +batch .*south, west/);
  const fpId = JSON.parse(readFileSync(join(dir, 'fleet-plan.json'), 'utf8')).id;
  resetRequestStats();
  const t0 = Date.now();
  const r = await cli(['fleet', 'apply', './fleet-plan.json', '--auto-approve', '-o', 'json'], { cwd: dir });
  const seconds = (Date.now() - t0) / 1000;
  assert.is(r.code, 0, r.err);
  const evs = ndjson(r.out);
  assert.is(evs.at(-1).type, 'fleet-done');
  const at = (type: string, cluster: string) => evs.findIndex((e) => e.type === type && e.cluster === cluster);
  assert.ok(at('fleet-cluster-done', 'east') < at('fleet-cluster-start', 'west'), 'the canary finished first');
  assert.ok(
    at('fleet-cluster-start', 'south') < at('fleet-cluster-done', 'west') && at('fleet-cluster-start', 'west') < at('fleet-cluster-done', 'south'),
    'west and south ran at the same time',
  );
  for (const e of envs) {
    const snap = await readLiveSnapshot(e.admin);
    for (const bn of snap.bootcNodes) assert.is(bn.status?.booted?.imageDigest, NEW_DIGEST, `${e.name}/${bn.metadata.name} runs the target`);
    for (const n of snap.nodes) assert.not.ok(n.spec?.unschedulable, `${e.name}/${n.metadata.name} schedulable again`);
    assert.is(snap.lock, null, `${e.name}: lock released`);
    const rec = await fleetRecord(e);
    assert.is(rec.fleetPlanId, fpId);
    assert.is(rec.outcome, 'done');
    assert.is(rec.batch, e.name === 'east' ? 1 : 2);
  }
  for (const a of agents) assert.equal(a.errors, []);
  const per = envs.map((e) => `${e.name} ${requestStats(e.context).total}`).join(', ');
  const total = envs.reduce((n, e) => n + requestStats(e.context).total, 0);
  for (const e of envs) assert.ok(requestStats(e.context).total >= 6, `${e.name}: its apply counted ${requestStats(e.context).total} requests`);
  console.log(
    `e2e: fleet apply of 3 clusters x 3 nodes (canary, then 2 at once) in ${seconds.toFixed(1)}s: ${total} API requests (${per}; ${(total / 9).toFixed(1)} per node)`,
  );
  // A rerun: every cluster finished by this fleet plan is skipped, except the canary, never skipped on
  // its record: its own apply answers nothing-to-do from its own progress. No node is touched again.
  const reboots = agents.map((a) => a.log.filter((x) => x.what === 'reboot').length);
  const again = await cli(['fleet', 'apply', './fleet-plan.json', '--auto-approve'], { cwd: dir });
  assert.is(again.code, 0, again.err);
  assert.match(again.out, /east \(canary\) +1 +nothing-to-do/);
  assert.match(again.out, /west +2 +already-done/);
  assert.equal(
    agents.map((a) => a.log.filter((x) => x.what === 'reboot').length),
    reboots,
  );
});

t('a failing canary (its node fails the reboot) halts the fleet: exit 5, the other two untouched', async () => {
  await scenario('east');
  const p = await cli(['fleet', 'plan', '-f', 'fleet.yaml', '--out', './fleet-plan-2.json'], { cwd: dir });
  assert.is(p.code, 0, p.err);
  resetRequestStats();
  const r = await cli(['fleet', 'apply', './fleet-plan-2.json', '--auto-approve'], { cwd: dir });
  assert.is(r.code, 5, r.err);
  assert.match(r.err, /fleet halted \(canary-failed\): canary east failed/);
  assert.match(r.out, /west +2 +not-started/);
  assert.is((await fleetRecord(env('east'))).outcome, 'failed');
  // The canary's requests are counted, so the zero below is a count and not a blind spot.
  assert.ok(requestStats(env('east').context).total > 0, 'the canary east was reached');
  for (const n of ['west', 'south']) {
    const e = env(n);
    assert.is(requestStats(e.context).total, 0, `no request reached ${n}`);
    const snap = await readLiveSnapshot(e.admin);
    for (const node of snap.nodes) assert.not.ok(node.spec?.unschedulable, `${n}/${node.metadata.name} not cordoned`);
    for (const bn of snap.bootcNodes) assert.is.not(bn.status?.booted?.imageDigest, NEW_DIGEST);
    assert.is(snap.lock, null);
    assert.is(snap.progress, null, `${n}: no progress record`);
    assert.is(await fleetRecord(e), null, `${n}: no fleet record`);
  }
});

t.run();
