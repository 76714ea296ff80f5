/**
 * A fleet of identical sites (docs/safety.md "A plan runs only on its own cluster"): three
 * clusters with the same nodes, pools and images, told apart only by their ClusterVersion
 * clusterID. Each cluster's plan in the fleet plan carries its cluster's identity, and a
 * kubeconfig whose contexts were swapped (west's context reaches south, south's reaches west)
 * cannot roll one site's plan on the other: those clusters fail with exit 3 before anything is
 * written to them, their fleet record included. Nor can `apply` of one cluster's plan taken out
 * of the fleet plan run on another site. Two entries that report one identity are a warning.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FleetPlan } from '../../src/fleet/plan-types.ts';
import { readFleetRecord } from '../../src/fleet/record.ts';
import { FleetBuilder, workerCluster, NEW } from '../support/fleet.ts';
import { ClusterBuilder, nodes } from '../support/cluster.ts';
import { simFleet } from '../support/fleet-sim.ts';
import { cli } from '../support/cli.ts';

const s = suite('fleet: each cluster plan is bound to its cluster');

const ID: Record<string, string> = {
  east: '6f1d2a3b-0c4e-4b5a-9e8f-1a2b3c4d5e6f',
  west: '7a2e3b4c-1d5f-4c6b-8f9a-2b3c4d5e6f70',
  south: '8b3f4c5d-2e6a-4d7c-9a0b-3c4d5e6f7081',
};

/** Three identical sites (the same node names), each with its own clusterID. */
function identicalSites(): FleetBuilder {
  const b = new FleetBuilder();
  for (const n of ['east', 'west', 'south']) {
    const cluster = workerCluster(3);
    cluster.object('ClusterVersion').spec.clusterID = ID[n];
    b.cluster(n, { context: `ctx-${n}`, cluster, labels: { site: n } });
  }
  return b.strategy({ canaries: ['east'], maxConcurrency: 2 });
}

s('the fleet plan binds each cluster plan to its own identity', () => {
  const st = simFleet(identicalSites(), { prefix: 'bootcplan-fleet-identity-' });
  const fp: FleetPlan = JSON.parse(readFileSync(st.planFile, 'utf8'));
  assert.equal(
    fp.clusters.map((c) => c.plan!.cluster.identity),
    ['east', 'west', 'south'].map((n) => ({ kind: 'ClusterVersion.spec.clusterID', id: ID[n] })),
  );
  // The sites are identical in every decision: only the identity tells their plans apart.
  const decisions = fp.clusters.map((c) => JSON.stringify(c.plan!.pools));
  assert.is(new Set(decisions).size, 1);
});

s('contexts swapped in the kubeconfig: west and south fail with exit 3 naming both identities, nothing written to them; the canary rolls', async () => {
  const st = simFleet(identicalSites(), { prefix: 'bootcplan-fleet-identity-' });
  [st.sims['ctx-west'], st.sims['ctx-south']] = [st.sims['ctx-south'], st.sims['ctx-west']];
  const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(r.code, 3, r.err);
  assert.match(r.err, new RegExp(`west: failed \\(exit 3\\): plan [0-9a-f]{16} was made for another cluster`));
  assert.match(r.err, new RegExp(`south: failed \\(exit 3\\): plan [0-9a-f]{16} was made for another cluster`));
  assert.is(st.sims['ctx-east'].reboots.length, 3, 'the canary, reached through its own context, rolled');
  for (const ctx of ['ctx-west', 'ctx-south']) {
    assert.equal(st.sims[ctx].writes, [], `${ctx}: nothing written`);
    assert.is(await readFleetRecord(st.sims[ctx].driver('check').records), null, `${ctx}: no fleet record`);
  }
});

s("apply of one cluster's plan out of the fleet plan, on another site: exit 3 naming both, nothing written", async () => {
  const st = simFleet(identicalSites(), { prefix: 'bootcplan-fleet-identity-' });
  const fp: FleetPlan = JSON.parse(readFileSync(st.planFile, 'utf8'));
  writeFileSync(join(st.dir, 'west.json'), JSON.stringify(fp.clusters.find((c) => c.name === 'west')!.plan, null, 2));
  const r = await cli(['apply', 'west.json', '--context', 'ctx-south', '--auto-approve'], st.options);
  assert.is(r.code, 3, r.err);
  assert.match(r.err, new RegExp(`the plan is for: ClusterVersion.spec.clusterID ${ID.west}`));
  assert.match(r.err, new RegExp(`this cluster is: +ClusterVersion.spec.clusterID ${ID.south}`));
  assert.equal(st.sims['ctx-south'].writes, []);
  const own = await cli(['apply', 'west.json', '--context', 'ctx-west', '--auto-approve'], st.options);
  assert.is(own.code, 0, own.err);
});

s('an idle canary (nothing to change, in no batch) confirmed through a swapped context: exit 3 before batch 1, nothing written anywhere', async () => {
  const b = new FleetBuilder();
  for (const n of ['east', 'west', 'south']) {
    // east and south run the target already; only west has work.
    const cluster = n === 'west' ? workerCluster(3) : new ClusterBuilder().bootcPool('worker', nodes('w', 3, undefined, { current: true }), { image: NEW });
    cluster.object('ClusterVersion').spec.clusterID = ID[n];
    b.cluster(n, { context: `ctx-${n}`, cluster, labels: { site: n } });
  }
  b.strategy({ canaries: ['east'], maxConcurrency: 2 });
  const st = simFleet(b, { prefix: 'bootcplan-fleet-identity-' });
  const fp: FleetPlan = JSON.parse(readFileSync(st.planFile, 'utf8'));
  assert.equal(
    fp.clusters.map((c) => c.batch),
    [null, 1, null],
    'the canary has nothing to change',
  );
  [st.sims['ctx-east'], st.sims['ctx-south']] = [st.sims['ctx-south'], st.sims['ctx-east']];
  const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(r.code, 3, r.err);
  assert.match(r.err, new RegExp(`this cluster is: +ClusterVersion.spec.clusterID ${ID.south}`));
  for (const sim of Object.values(st.sims)) assert.equal(sim.writes, []);
});

s('two entries with one identity (one cluster reached twice, or clones): a warning at the later entry, file:line:column', async () => {
  const b = identicalSites();
  b.clusters[2].cluster!.object('ClusterVersion').spec.clusterID = ID.west;
  const fp = b.plan();
  const warning = fp.diagnostics.find((d) => d.code === 'fleet-shared-identity');
  assert.ok(warning, JSON.stringify(fp.diagnostics));
  assert.is(warning!.severity, 'warning');
  assert.is(warning!.path, 'spec.clusters[2]');
  assert.is(warning!.file, 'fleet.yaml');
  assert.ok(warning!.line! > 1);
  assert.match(
    warning!.message,
    new RegExp(`clusters west and south are the same cluster as far as bootcplan can tell \\(ClusterVersion.spec.clusterID ${ID.west}\\)`),
  );
  // Shown where the reviewer looks.
  const st = simFleet(b, { prefix: 'bootcplan-fleet-identity-' });
  const shown = await cli(['fleet', 'show', st.planFile], st.options);
  assert.match(shown.out, /warning: fleet.yaml:\d+:\d+: clusters west and south are the same cluster/);
  assert.not.ok(
    identicalSites()
      .plan()
      .diagnostics.some((d) => d.code === 'fleet-shared-identity'),
    'no warning for distinct sites',
  );
});

s.run();
