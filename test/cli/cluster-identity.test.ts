/**
 * A plan runs only on its own cluster (docs/design.md §5, §6; docs/safety.md "A plan runs only on its
 * own cluster"). The finding: a plan made for one cluster rehearsed with exit 0 against a
 * snapshot of another (another ClusterVersion clusterID), because the plan recorded no identity;
 * in a fleet of identical sites one store's plan ran on another store. Here:
 * - what a snapshot says about its cluster: ClusterVersion spec.clusterID, else the kube-system
 *   Namespace uid, else nothing; the API server from `bootcplan snapshot`'s List annotation;
 * - plans record both, sealed (an edited identity is refused), and plans of snapshots without an
 *   identity keep the bytes (and id) they had;
 * - rehearse and apply refuse a plan made for another cluster (exit 3, both named) before any
 *   write, the rollout status included; a plan without identity never runs where one is found.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { stringify } from 'yaml';
import type { DriverFactory } from '../../src/app/ports.ts';
import type { Plan } from '../../src/plan/types.ts';
import type { KObject } from '../../src/cluster/types.ts';
import { planIdOf } from '../../src/plan/planner.ts';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import { snapshotFromObjects } from '../../src/cluster/snapshot.ts';
import { clusterIdentityOf, serverHost } from '../../src/cluster/identity.ts';
import { ClusterBuilder, specYaml, planFor, NEW, nodes } from '../support/cluster.ts';
import { newSim } from '../support/apply.ts';
import { cli } from '../support/cli.ts';
import { ensureBuilt, ROOT } from '../support/built.ts';
import { readSnapshotFile, nodeInputs } from '../../src/app/inputs.ts';
import { gitIn } from '../support/git.ts';

const s = suite('a plan runs only on its own cluster');

const A = 'da68bf3a-5522-3d19-ffea-bebe48b0af57';
const B = '0e3c55a1-2b7d-4f65-9d1e-8c7a4b2f9d10';
const kubeSystem = (uid: string): KObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'kube-system', uid, labels: { 'kubernetes.io/metadata.name': 'kube-system' } },
  status: { phase: 'Active' },
});
const listWithServer = (objects: KObject[], server: string) =>
  stringify({ apiVersion: 'v1', kind: 'List', metadata: { annotations: { 'bootcplan.dev/server': server } }, items: objects });

/** A bootc worker pool of 4 nodes: the same objects on every site but for the identity. */
function site(o: { clusterID?: string | null; kubeSystemUid?: string }): ClusterBuilder {
  const b = new ClusterBuilder(o.clusterID !== null).bootcPool('worker', nodes('w', 4));
  if (o.clusterID) b.object('ClusterVersion').spec.clusterID = o.clusterID;
  if (o.kubeSystemUid) b.add(kubeSystem(o.kubeSystemUid));
  return b;
}

// ---- what a snapshot says about its cluster

s('OpenShift: ClusterVersion/version spec.clusterID, even when the kube-system Namespace is there too', () => {
  const snap = site({ clusterID: A, kubeSystemUid: '11111111-2222-3333-4444-555555555555' }).snapshot();
  assert.equal(clusterIdentityOf(snap), { kind: 'ClusterVersion.spec.clusterID', id: A });
});

s('plain Kubernetes: the kube-system Namespace uid', () => {
  const snap = site({ clusterID: null, kubeSystemUid: '11111111-2222-3333-4444-555555555555' }).snapshot();
  assert.is(snap.clusterVersion, null);
  assert.equal(clusterIdentityOf(snap), { kind: 'Namespace/kube-system.metadata.uid', id: '11111111-2222-3333-4444-555555555555' });
});

s('missing: neither (a hand-written snapshot), or values no API server writes', () => {
  assert.is(clusterIdentityOf(site({ clusterID: null }).snapshot()), null);
  // Another Namespace's uid is not the cluster's.
  const other = site({ clusterID: null }).add({
    ...kubeSystem('99999999-2222-3333-4444-555555555555'),
    metadata: { name: 'default', uid: '99999999-2222-3333-4444-555555555555' },
  });
  assert.is(clusterIdentityOf(other.snapshot()), null);
  for (const bad of ['', '   ', 42, null, 'x'.repeat(129)]) {
    const b = site({ clusterID: A, kubeSystemUid: '11111111-2222-3333-4444-555555555555' });
    b.object('ClusterVersion').spec.clusterID = bad;
    assert.equal(
      clusterIdentityOf(b.snapshot()),
      { kind: 'Namespace/kube-system.metadata.uid', id: '11111111-2222-3333-4444-555555555555' },
      JSON.stringify(bad),
    );
  }
});

s('the API server: the host and port of the List annotation `bootcplan snapshot` writes; nothing else counts', () => {
  const objs = site({ clusterID: A }).objects;
  assert.is(parseSnapshot(listWithServer(objs, 'https://api.prod-east.example.com:6443'), 'c.yaml').snapshot!.server, 'api.prod-east.example.com:6443');
  assert.is(parseSnapshot(listWithServer(objs, 'https://api.prod-east.example.com'), 'c.yaml').snapshot!.server, 'api.prod-east.example.com');
  for (const bad of ['javascript:alert(1)', 'not a url', 'file:///etc/passwd'])
    assert.is(parseSnapshot(listWithServer(objs, bad), 'c.yaml').snapshot!.server, null, bad);
  // A multi-document stream has no List to carry it.
  assert.is(parseSnapshot(objs.map((o) => stringify(o)).join('---\n'), 'c.yaml').snapshot!.server, null);
  assert.is(serverHost(42), null);
});

s('the kube-system Namespace is read for its uid only: it is not part of the fingerprint', () => {
  const without = site({ clusterID: A }).snapshot();
  const withNs = site({ clusterID: A, kubeSystemUid: '11111111-2222-3333-4444-555555555555' });
  assert.is(withNs.snapshot().fingerprint, without.fingerprint);
  withNs.objects.at(-1)!.metadata.labels = { 'openshift.io/run-level': '0' };
  assert.is(withNs.snapshot().fingerprint, without.fingerprint);
});

// ---- what a plan records

const SPEC = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]);

s('a plan records the identity and the server; one of a snapshot without them records neither (its bytes and id as before)', () => {
  const objs = [...site({ clusterID: A }).objects];
  const plan = planFor(SPEC, snapshotFromObjects(objs, 'file:c.yaml', 'api.prod-east.example.com:6443'));
  assert.equal(plan.cluster.identity, { kind: 'ClusterVersion.spec.clusterID', id: A });
  assert.is(plan.cluster.server, 'api.prod-east.example.com:6443');
  const bare = planFor(SPEC, site({ clusterID: null }).snapshot());
  assert.equal(Object.keys(bare.cluster), ['source', 'fingerprint', 'version', 'platform']);
  // The identity is sealed: the id changes with it.
  const other = planFor(SPEC, snapshotFromObjects(site({ clusterID: B }).objects, 'file:c.yaml', 'api.prod-east.example.com:6443'));
  assert.is.not(other.id, plan.id);
  assert.is(other.cluster.fingerprint === plan.cluster.fingerprint, false, 'the ClusterVersion is in the fingerprint too');
});

// ---- the finding, as the user ran it: the built CLI, a plan of examples/cluster.yaml rehearsed against another cluster

const tmp = mkdtempSync(join(tmpdir(), 'bootcplan-identity-'));

s('finding: a plan of cluster A rehearsed against a snapshot of cluster B (another clusterID) exits 3, naming both', () => {
  const bin = ensureBuilt();
  const example = readFileSync(join(ROOT, 'examples/cluster.yaml'), 'utf8');
  assert.ok(example.includes(`clusterID: ${A}`));
  writeFileSync(
    join(tmp, 'store-b.yaml'),
    example.replace(`clusterID: ${A}`, `clusterID: ${B}`).replace('api.prod-east.example.com', 'api.store-b.example.com'),
  );
  const plan = spawnSync('node', [bin, 'plan', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml', '--out', join(tmp, 'a.json')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.is(plan.status, 0, plan.stderr);
  const r = spawnSync('node', [bin, 'rehearse', join(tmp, 'a.json'), '--cluster', join(tmp, 'store-b.yaml')], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  assert.is(r.status, 3, r.stdout + r.stderr);
  assert.match(r.stderr, /stale plan: plan [0-9a-f]{16} was made for another cluster/);
  assert.match(
    r.stderr,
    new RegExp(`the plan is for: ClusterVersion.spec.clusterID ${A} \\(server api.prod-east.example.com:6443\\), planned from file:examples/cluster.yaml`),
  );
  assert.match(r.stderr, new RegExp(`this cluster is: +ClusterVersion.spec.clusterID ${B} \\(server api.store-b.example.com:6443\\)`));
  assert.is(r.stdout, '', 'no rehearsal report');
  // Its own snapshot still rehearses.
  const own = spawnSync('node', [bin, 'rehearse', join(tmp, 'a.json')], { cwd: ROOT, encoding: 'utf8' });
  assert.is(own.status, 0, own.stderr);
});

// ---- rehearse and apply through run(), in a repository of their own

const repo = mkdtempSync(join(tmpdir(), 'bootcplan-identity-repo-'));
const git = gitIn(repo);
git('init', '-q', '-b', 'main');
writeFileSync(join(repo, 'bootcplan.yaml'), SPEC);
writeFileSync(join(repo, 'a.yaml'), listWithServer(site({ clusterID: A }).objects, 'https://api.a.example.com:6443'));
writeFileSync(join(repo, 'b.yaml'), listWithServer(site({ clusterID: B }).objects, 'https://api.b.example.com:6443'));
// Plain Kubernetes, as an older bootcplan or `kubectl get` wrote it: no identity at all.
writeFileSync(join(repo, 'bare.yaml'), stringify({ apiVersion: 'v1', kind: 'List', items: site({ clusterID: null }).objects }));
writeFileSync(
  join(repo, 'k8s.yaml'),
  listWithServer([...site({ clusterID: null }).objects, kubeSystem('11111111-2222-3333-4444-555555555555')], 'https://10.0.0.1:6443'),
);
git('add', '.');
git('commit', '-qm', 'specs');

async function savedPlan(cluster: string, out: string): Promise<Plan> {
  const r = await cli(['plan', '-f', 'bootcplan.yaml', '--ref', 'HEAD', '--cluster', cluster, '--out', `./${out}`], { cwd: repo });
  assert.is(r.code, 0, r.err);
  return JSON.parse(readFileSync(join(repo, out), 'utf8'));
}

/** `apply FILE` against a simulator of `clusterFile` with a Rollout object to report on: exit code, stderr, and every write. */
async function applyOn(file: string, clusterFile: string) {
  const sim = newSim(readSnapshotFile(nodeInputs, join(repo, clusterFile)));
  sim.rollouts.put('test', {});
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'identity@test' });
  const r = await cli(['apply', file, '--auto-approve', '--json'], { cwd: repo, openDriver });
  return { ...r, writes: sim.writes.length, status: sim.rollouts.objects.get('test')!.status, events: sim.rollouts.events.length };
}

s('rehearse: a plan of a.yaml on b.yaml exits 3 naming both; on a.yaml it runs', async () => {
  await savedPlan('a.yaml', 'a.json');
  const r = await cli(['rehearse', 'a.json', '--cluster', 'b.yaml'], { cwd: repo });
  assert.is(r.code, 3, r.err);
  assert.match(r.err, new RegExp(`plan is for: ClusterVersion.spec.clusterID ${A} \\(server api.a.example.com:6443\\)`));
  assert.match(r.err, new RegExp(`this cluster is: +ClusterVersion.spec.clusterID ${B} \\(server api.b.example.com:6443\\), read from file:.*b.yaml`));
  assert.is((await cli(['rehearse', 'a.json'], { cwd: repo })).code, 0);
});

s('apply: a plan of cluster A on cluster B exits 3 before any write, the rollout status and Events included', async () => {
  await savedPlan('a.yaml', 'a.json');
  const wrong = await applyOn('a.json', 'b.yaml');
  assert.is(wrong.code, 3, wrong.err);
  assert.match(wrong.err, /was made for another cluster/);
  assert.equal([wrong.writes, wrong.status, wrong.events], [0, null, 0], 'nothing written to cluster B');
  const right = await applyOn('a.json', 'a.yaml');
  assert.is(right.code, 0, right.err);
  assert.ok(right.writes > 0 && right.status !== null);
});

s('a plan without identity: rehearses against its own snapshot; refused where an identity is found, with the way out', async () => {
  const bare = await savedPlan('bare.yaml', 'bare.json');
  assert.is(bare.cluster.identity, undefined);
  assert.is((await cli(['rehearse', 'bare.json'], { cwd: repo })).code, 0);
  const r = await cli(['rehearse', 'bare.json', '--cluster', 'k8s.yaml'], { cwd: repo });
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /records no cluster identity, so it cannot be shown to be this cluster's/);
  assert.match(r.err, /this cluster is: +Namespace\/kube-system.metadata.uid 11111111-2222-3333-4444-555555555555 \(server 10.0.0.1:6443\)/);
  assert.match(r.err, /plan against this cluster \(bootcplan plan --kubeconfig \.\.\., or --cluster with a snapshot `bootcplan snapshot` wrote\)/);
  // A live cluster always has a kube-system Namespace: the simulator of k8s.yaml stands for one.
  const applied = await applyOn('bare.json', 'k8s.yaml');
  assert.is(applied.code, 3, applied.err);
  assert.is(applied.writes, 0);
});

s('a plan with an identity is refused on a snapshot that has none', async () => {
  await savedPlan('a.yaml', 'a.json');
  const r = await cli(['rehearse', 'a.json', '--cluster', 'bare.yaml'], { cwd: repo });
  assert.is(r.code, 3, r.err);
  assert.match(
    r.err,
    /file:.*bare.yaml holds neither ClusterVersion\/version spec.clusterID nor the kube-system Namespace, so it cannot be shown to be that cluster/,
  );
});

s("identities of two kinds (the plan's snapshot lacked the ClusterVersion this cluster has): refused, saying neither is shown", async () => {
  await savedPlan('k8s.yaml', 'k8s.json');
  writeFileSync(
    join(repo, 'k8s-openshift.yaml'),
    listWithServer([...site({ clusterID: A }).objects, kubeSystem('11111111-2222-3333-4444-555555555555')], 'https://10.0.0.1:6443'),
  );
  const r = await cli(['rehearse', 'k8s.json', '--cluster', 'k8s-openshift.yaml'], { cwd: repo });
  assert.is(r.code, 3, r.err);
  assert.match(
    r.err,
    /knows its cluster by Namespace\/kube-system.metadata.uid, this cluster is known by ClusterVersion.spec.clusterID: it cannot be shown to be the same cluster/,
  );
});

s('the identity is sealed: edited in the file, the plan is refused (exit 3); edited and sealed again, it names the cluster it does not match', async () => {
  const plan = await savedPlan('a.yaml', 'a.json');
  const edited: Plan = structuredClone(plan);
  edited.cluster.identity = { kind: 'ClusterVersion.spec.clusterID', id: B };
  writeFileSync(join(repo, 'edited.json'), JSON.stringify(edited, null, 2));
  const r = await cli(['rehearse', 'edited.json', '--cluster', 'b.yaml'], { cwd: repo });
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /the plan file was modified after it was made/);
  const applied = await applyOn('edited.json', 'b.yaml');
  assert.is(applied.code, 3);
  assert.match(applied.err, /the plan file was modified after it was made/);
  // A plan of cluster A refused for another reason (modified) leaves no status on cluster B.
  const modified: Plan = structuredClone(plan);
  modified.pools[0].soakSeconds = 999;
  writeFileSync(join(repo, 'modified.json'), JSON.stringify(modified, null, 2));
  const elsewhere = await applyOn('modified.json', 'b.yaml');
  assert.is(elsewhere.code, 3, elsewhere.err);
  assert.match(elsewhere.err, /the rollout status was not recorded: plan [0-9a-f]{16} was made for another cluster/);
  assert.equal([elsewhere.writes, elsewhere.status, elsewhere.events], [0, null, 0]);
  const home = await applyOn('modified.json', 'a.yaml');
  assert.match(home.status?.message ?? '', /stale: re-plan needed/, 'on its own cluster the status says why nothing happens');
  // Sealed again (anyone can recompute the hash): the file now names B, so a.yaml, the cluster
  // it was planned from, refuses it; so it does with the identity removed.
  writeFileSync(join(repo, 'resealed.json'), JSON.stringify({ ...edited, id: planIdOf(edited) }, null, 2));
  const resealed = await cli(['rehearse', 'resealed.json', '--cluster', 'a.yaml'], { cwd: repo });
  assert.is(resealed.code, 3, resealed.err);
  assert.match(resealed.err, /was made for another cluster/);
  const stripped: Plan = structuredClone(plan);
  delete stripped.cluster.identity;
  writeFileSync(join(repo, 'stripped.json'), JSON.stringify({ ...stripped, id: planIdOf(stripped) }, null, 2));
  const none = await applyOn('stripped.json', 'a.yaml');
  assert.is(none.code, 3, none.err);
  assert.match(none.err, /records no cluster identity/);
  assert.is(none.writes, 0);
});

s('a plan file whose identity is not of the known kinds is refused when it is read (exit 3: edited, file:line:column)', async () => {
  const plan = await savedPlan('a.yaml', 'a.json');
  const odd = structuredClone(plan) as unknown as { cluster: { identity: { kind: string } } };
  odd.cluster.identity.kind = 'Server.url';
  writeFileSync(join(repo, 'odd.json'), JSON.stringify(odd, null, 2));
  const r = await cli(['rehearse', 'odd.json'], { cwd: repo });
  // Its content no longer hashes to its id: an edited plan file (docs/cli.md "Conventions").
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /odd.json:\d+:\d+/);
  assert.match(r.err, /cluster.identity.kind/);
});

s.run();
