/**
 * `fleet plan --ref REV` reads every file the Fleet names at that revision (docs/fleets.md
 * "The Fleet spec"): the kubeconfig files did already, the snapshot files were read from the working
 * tree, so a pull request's Fleet at its commit was planned against whatever snapshots the
 * checkout happened to hold. Here the working tree's snapshots differ from the commit's.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FleetPlan } from '../../src/fleet/plan-types.ts';
import { cli } from '../support/cli.ts';
import { FleetBuilder, workerCluster } from '../support/fleet.ts';
import { gitIn } from '../support/git.ts';

const s = suite('fleet --ref: snapshot files at the revision');

const repo = mkdtempSync(join(tmpdir(), 'bootcplan-fleet-ref-'));
const git = gitIn(repo);
git('init', '-q', '-b', 'main');
mkdirSync(join(repo, 'fleets'));
new FleetBuilder()
  .cluster('east', { cluster: workerCluster(3) })
  .cluster('west', { cluster: workerCluster(3) })
  .strategy({ maxConcurrency: 2 })
  .write(join(repo, 'fleets'));
git('add', '.');
git('commit', '-qm', 'fleet');
const commit = git('rev-parse', 'HEAD');
// The checkout moved on without a commit: east has 5 nodes in the working tree, 3 at HEAD.
writeFileSync(join(repo, 'fleets/east.yaml'), workerCluster(5).yaml());

const nodesOf = (fp: FleetPlan, name: string) => fp.clusters.find((c) => c.name === name)!.plan!.summary.nodes;

s('fleet plan --ref HEAD plans against the snapshots committed at HEAD, not the working tree', async () => {
  const atRef = await cli(['fleet', 'plan', '-f', 'fleets/fleet.yaml', '--ref', 'HEAD', '-o', 'json'], { cwd: repo });
  assert.is(atRef.code, 0, atRef.err);
  const fp: FleetPlan = JSON.parse(atRef.out);
  assert.is(nodesOf(fp, 'east'), 3, "the commit's snapshot");
  const east = fp.clusters.find((c) => c.name === 'east')!.plan!;
  assert.is(east.cluster.source, `git:${commit}:fleets/east.yaml`, 'the plan says where its snapshot came from');
  const worktree = await cli(['fleet', 'plan', '-f', 'fleets/fleet.yaml', '-o', 'json'], { cwd: repo });
  assert.is(nodesOf(JSON.parse(worktree.out), 'east'), 5, 'without --ref: the working tree');
});

s("fleet plan --ref: a snapshot only in the working tree is that cluster's error, naming the revision", async () => {
  const fleet = readFileSync(join(repo, 'fleets/fleet.yaml'), 'utf8');
  writeFileSync(join(repo, 'fleets/fleet.yaml'), fleet.replace('snapshot: west.yaml', 'snapshot: west-new.yaml'));
  writeFileSync(join(repo, 'fleets/west-new.yaml'), workerCluster(3).yaml());
  git('add', 'fleets/fleet.yaml');
  git('commit', '-qm', 'west moves to a file that is not committed');
  try {
    const r = await cli(['fleet', 'plan', '-f', 'fleets/fleet.yaml', '--ref', 'HEAD'], { cwd: repo });
    assert.is(r.code, 1, r.err);
    assert.match(r.out, /west: snapshot-invalid: snapshot "west-new\.yaml" is not in HEAD \([0-9a-f]{12}\)/);
    assert.is(
      nodesOf(JSON.parse((await cli(['fleet', 'plan', '-f', 'fleets/fleet.yaml', '-o', 'json'], { cwd: repo })).out), 'west'),
      3,
      'the working tree has it',
    );
  } finally {
    git('reset', '-q', '--hard', commit);
    writeFileSync(join(repo, 'fleets/east.yaml'), workerCluster(5).yaml());
  }
});

s('fleet plan --ref: a snapshot path that leaves the repository is refused, as in the working tree', async () => {
  const fleet = readFileSync(join(repo, 'fleets/fleet.yaml'), 'utf8');
  writeFileSync(join(repo, 'fleets/fleet.yaml'), fleet.replace('snapshot: west.yaml', 'snapshot: ../../west.yaml'));
  git('add', 'fleets/fleet.yaml');
  git('commit', '-qm', 'west outside');
  try {
    const r = await cli(['fleet', 'plan', '-f', 'fleets/fleet.yaml', '--ref', 'HEAD'], { cwd: repo });
    assert.is(r.code, 1, r.err);
    assert.match(r.out, /snapshot "\.\.\/\.\.\/west\.yaml" is outside/);
  } finally {
    git('reset', '-q', '--hard', commit);
    writeFileSync(join(repo, 'fleets/east.yaml'), workerCluster(5).yaml());
  }
});

s('fleet rehearse of a fleet plan made with --ref rehearses the snapshots at its commit', async () => {
  const saved = await cli(['fleet', 'plan', '-f', 'fleets/fleet.yaml', '--ref', 'HEAD', '--out', './fleet-plan.json'], { cwd: repo });
  assert.is(saved.code, 0, saved.err);
  const r = await cli(['fleet', 'rehearse', 'fleet-plan.json', '-o', 'json'], { cwd: repo });
  assert.is(r.code, 0, r.err);
  const east = JSON.parse(r.out).clusters.find((c: { name: string }) => c.name === 'east');
  assert.is(east.outcome, 'done', JSON.stringify(east));
  assert.is(east.summary.nodes, 3, "the commit's snapshot (the working tree has 5 nodes)");
});

s.run();
