/**
 * `bootcplan fleet render argocd FLEETPLAN --out-dir DIR` (docs/gitops.md) in a git checkout, from the
 * fleet plan `fleet plan --out` saved: the files, the Rollout object holding exactly each
 * cluster's effective spec (with overrides), a re-render replacing the previous one, and the
 * refusals: a modified fleet plan or Fleet file (exit 3), a cluster name that is not a DNS-1123
 * label (exit 1, one screen), a directory holding files it did not write or that were edited
 * since (exit 1; nothing deleted: docs/safety.md "fleet render never deletes what it did not write").
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, statSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { cli } from '../support/cli.ts';
import { FleetBuilder, NEW } from '../support/fleet.ts';
import { git } from '../support/git.ts';

const s = suite('fleet render argocd: the command');

/** A repository with fleets/prod/fleet.yaml (and its snapshots), committed, and its fleet plan. */
async function repoWith(fleet: FleetBuilder): Promise<{ repo: string; planFile: string }> {
  const repo = mkdtempSync(join(tmpdir(), 'bootcplan-argo-cli-'));
  git(repo, 'init', '-q', '-b', 'main');
  mkdirSync(join(repo, 'fleets/prod'), { recursive: true });
  fleet.write(join(repo, 'fleets/prod'));
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'fleet');
  const r = await cli(['fleet', 'plan', '-f', 'fleets/prod/fleet.yaml', '--out', 'plans/fleet-plan.json'], { cwd: repo });
  assert.is(r.code, 0, r.err);
  return { repo, planFile: 'plans/fleet-plan.json' };
}

const RENDER = [
  '--out-dir',
  'fleets/prod/argocd',
  '--repo-url',
  'https://git.example.com/platform/fleet.git',
  '--image',
  'REPLACE-ME.example/bootcplan:0.1.0',
  '--revision',
  'main',
];

const three = () =>
  new FleetBuilder()
    .cluster('east-1', { labels: { region: 'east' } })
    .cluster('west-1', { labels: { region: 'west' }, overrides: { pools: [{ name: 'worker', maxUnavailable: 2 }] } })
    .cluster('east-2', { labels: { region: 'east' }, destination: { server: 'https://api.east-2.example.com:6443' } })
    .override({ clusterSelector: { matchLabels: { region: 'east' } }, timezone: 'America/New_York' })
    .withRollout({ pools: [{ name: 'worker', image: NEW, maxUnavailable: 1 }], maintenanceWindows: [{ schedule: '0 22 * * *', duration: '6h' }] })
    .strategy({ canaries: ['east-1'], maxConcurrency: 2 });

s("renders the fleet plan: the ApplicationSet, one directory per cluster, each Rollout object the cluster's effective spec", async () => {
  const { repo, planFile } = await repoWith(three());
  const r = await cli(['fleet', 'render', 'argocd', planFile, ...RENDER], { cwd: repo });
  assert.is(r.code, 0, r.err);
  assert.match(r.out, /wrote ApplicationSet bootcplan-fleet \(3 Applications, 2 RollingSync steps\)/);
  assert.match(r.out, /step 1 \(canary, maxUpdate 1\): east-1\n {2}step 2 \(maxUpdate 2\): east-2, west-1\n/);
  assert.match(r.err, /--enable-progressive-syncs/);
  const out = join(repo, 'fleets/prod/argocd');
  assert.equal(readdirSync(join(out, 'clusters')).sort(), ['east-1', 'east-2', 'west-1']);
  const set = parse(readFileSync(join(out, 'applicationset.yaml'), 'utf8'));
  // Rendered to be committed: readable by all (0644 less the umask), never 0600 as plan --out is.
  const umask = process.umask(0o022);
  process.umask(umask);
  assert.is(statSync(join(out, 'applicationset.yaml')).mode & 0o777, 0o644 & ~umask);
  assert.is(set.spec.generators[0].list.elements[0].path, 'fleets/prod/argocd/clusters/east-1', '--path defaults to --out-dir in the repository');
  const fp = JSON.parse(readFileSync(join(repo, planFile), 'utf8'));
  assert.is(set.metadata.annotations['bootcplan.dev/fleet-plan'], fp.id);
  const rollout = (c: string) => parse(readFileSync(join(out, 'clusters', c, 'rollout.yaml'), 'utf8'));
  assert.is(rollout('west-1').spec.pools[0].maxUnavailable, 2, 'the cluster override');
  assert.is(rollout('east-1').spec.maintenanceWindows[0].timezone, 'America/New_York', 'the label override');
  assert.is(rollout('west-1').spec.maintenanceWindows[0].timezone, undefined);
  assert.is(rollout('east-1').metadata.name, 'fleet');
  assert.is(readFileSync(join(out, 'clusters/east-1/fleet.yaml'), 'utf8'), readFileSync(join(repo, 'fleets/prod/fleet.yaml'), 'utf8'));
  const plan = JSON.parse(readFileSync(join(out, 'clusters/west-1/plan.json'), 'utf8'));
  assert.equal(
    [plan.id, plan.spec.fleetCluster, plan.spec.path],
    [fp.clusters.find((c: any) => c.name === 'west-1').plan.id, 'west-1', 'fleets/prod/fleet.yaml'],
  );

  // A second render replaces the first: what it wrote and the user did not touch (a cluster
  // that no longer rolls leaves no file behind).
  const manifest = readFileSync(join(out, '.bootcplan-render'), 'utf8');
  assert.match(manifest, /^sha256:[0-9a-f]{64} {2}applicationset\.yaml$/m);
  assert.match(manifest, /^sha256:[0-9a-f]{64} {2}clusters\/west-1\/plan\.json$/m);
  assert.is((await cli(['fleet', 'render', 'argocd', planFile, ...RENDER], { cwd: repo })).code, 0);
  assert.is(readFileSync(join(out, '.bootcplan-render'), 'utf8'), manifest, 'the same render: the same files');
});

s('render never deletes or overwrites what it did not write: a foreign file, an edited file, a directory without its record', async () => {
  const { repo, planFile } = await repoWith(three());
  const gitops = join(repo, 'gitops');
  const args = ['fleet', 'render', 'argocd', planFile, ...RENDER.slice(2), '--out-dir', 'gitops'];
  // The finding: a user's directory with a kustomization and a README under clusters/.
  mkdirSync(join(gitops, 'clusters/prod-east'), { recursive: true });
  writeFileSync(join(gitops, 'clusters/prod-east/kustomization.yaml'), 'resources: [mine.yaml]\n');
  writeFileSync(join(gitops, 'clusters/README.md'), '# our clusters\n');
  const foreign = await cli(args, { cwd: repo });
  assert.is(foreign.code, 1, foreign.err);
  assert.match(foreign.err, /--out-dir gitops holds files bootcplan did not write: clusters\/README\.md, clusters\/prod-east\/kustomization\.yaml/);
  assert.match(foreign.err, /hint: render into a directory of its own/);
  assert.is(readFileSync(join(gitops, 'clusters/prod-east/kustomization.yaml'), 'utf8'), 'resources: [mine.yaml]\n');
  assert.is(readFileSync(join(gitops, 'clusters/README.md'), 'utf8'), '# our clusters\n');
  assert.not.ok(existsSync(join(gitops, 'applicationset.yaml')), 'nothing written');

  // A directory of its own: rendered; a file added later beside the render is foreign too.
  const out = join(repo, 'fleets/prod/argocd');
  assert.is((await cli(['fleet', 'render', 'argocd', planFile, ...RENDER], { cwd: repo })).code, 0);
  writeFileSync(join(out, 'clusters/east-1/notes.txt'), 'mine');
  const added = await cli(['fleet', 'render', 'argocd', planFile, ...RENDER], { cwd: repo });
  assert.is(added.code, 1);
  assert.match(added.err, /holds files bootcplan did not write: clusters\/east-1\/notes\.txt/);
  assert.is(readFileSync(join(out, 'clusters/east-1/notes.txt'), 'utf8'), 'mine');
  rmSync(join(out, 'clusters/east-1/notes.txt'));

  // A rendered file the user edited: refused, the edit kept, with a hint.
  const job = join(out, 'clusters/west-1/apply-job.yaml');
  writeFileSync(job, readFileSync(job, 'utf8') + '# tuned by hand\n');
  const edited = await cli(['fleet', 'render', 'argocd', planFile, ...RENDER], { cwd: repo });
  assert.is(edited.code, 1);
  assert.match(edited.err, /clusters\/west-1\/apply-job\.yaml was changed since bootcplan wrote it/);
  assert.match(edited.err, /hint: .*git checkout/);
  assert.match(readFileSync(job, 'utf8'), /# tuned by hand\n$/);

  // A previous render without the record (an older bootcplan): refused, nothing removed.
  rmSync(join(out, 'clusters/west-1/apply-job.yaml'));
  rmSync(join(out, '.bootcplan-render'));
  const unrecorded = await cli(['fleet', 'render', 'argocd', planFile, ...RENDER], { cwd: repo });
  assert.is(unrecorded.code, 1);
  assert.match(unrecorded.err, /holds files bootcplan did not write: applicationset\.yaml/);
  assert.ok(existsSync(join(out, 'clusters/east-1/plan.json')));
});

s('a cluster that no longer rolls: its files go, and only its files', async () => {
  const { repo, planFile } = await repoWith(three());
  const out = join(repo, 'fleets/prod/argocd');
  assert.is((await cli(['fleet', 'render', 'argocd', planFile, ...RENDER], { cwd: repo })).code, 0);
  // west-1 left out of a second fleet (a second plan file; the first render's record holds west-1).
  const two = new FleetBuilder()
    .cluster('east-1', { labels: { region: 'east' } })
    .cluster('east-2', { labels: { region: 'east' }, destination: { server: 'https://api.east-2.example.com:6443' } })
    .withRollout({ pools: [{ name: 'worker', image: NEW, maxUnavailable: 1 }] })
    .strategy({ canaries: ['east-1'], maxConcurrency: 2 });
  two.write(join(repo, 'fleets/prod'));
  git(repo, 'commit', '-qam', 'two clusters');
  assert.is((await cli(['fleet', 'plan', '-f', 'fleets/prod/fleet.yaml', '--out', 'plans/two.json'], { cwd: repo })).code, 0);
  const r = await cli(['fleet', 'render', 'argocd', 'plans/two.json', ...RENDER], { cwd: repo });
  assert.is(r.code, 0, r.err);
  assert.equal(readdirSync(join(out, 'clusters')).sort(), ['east-1', 'east-2']);
  assert.not.match(readFileSync(join(out, '.bootcplan-render'), 'utf8'), /west-1/);
});

s('a fleet plan modified after it was made, or a Fleet file changed since: exit 3, nothing written', async () => {
  const { repo, planFile } = await repoWith(three());
  const fp = JSON.parse(readFileSync(join(repo, planFile), 'utf8'));
  fp.strategy.maxConcurrency.resolved = 3;
  writeFileSync(join(repo, 'tampered.json'), JSON.stringify(fp));
  const t = await cli(['fleet', 'render', 'argocd', 'tampered.json', ...RENDER], { cwd: repo });
  assert.is(t.code, 3, t.err);
  assert.match(t.err, /modified after it was made/);
  writeFileSync(join(repo, 'fleets/prod/fleet.yaml'), readFileSync(join(repo, 'fleets/prod/fleet.yaml'), 'utf8') + '# changed\n');
  const changed = await cli(['fleet', 'render', 'argocd', planFile, ...RENDER], { cwd: repo });
  assert.is(changed.code, 3, changed.err);
  assert.not.ok(existsSync(join(repo, 'fleets/prod/argocd')));
});

s('a cluster name that is not a DNS-1123 label: exit 1, one screen naming it, no stack trace, nothing written', async () => {
  const { repo, planFile } = await repoWith(
    new FleetBuilder()
      .cluster('east.1')
      .cluster('west-1')
      .strategy({ canaries: ['east.1'] }),
  );
  const r = await cli(['fleet', 'render', 'argocd', planFile, ...RENDER], { cwd: repo });
  assert.is(r.code, 1, r.err);
  assert.match(r.err, /cluster "east\.1" is not a DNS-1123 label/);
  assert.not.match(r.err, /\n\s+at /);
  assert.ok(r.err.split('\n').length < 25);
  assert.not.ok(existsSync(join(repo, 'fleets/prod/argocd')));
});

s('the notes on what Argo CD does not enforce: one line each, no JSON-escaped line break in them', async () => {
  const { repo, planFile } = await repoWith(three().strategy({ batchSoakSeconds: 600, batchTimeoutSeconds: 7200 }));
  const r = await cli(['fleet', 'render', 'argocd', planFile, ...RENDER], { cwd: repo });
  assert.is(r.code, 0, r.err);
  assert.not.match(r.err, /\\u00/);
  assert.equal(
    r.err
      .split('\n')
      .filter((l) => l.startsWith('note: '))
      .map((l) => l.split(' ').slice(0, 2).join(' ')),
    ['note: batchSoakSeconds', 'note: batchTimeoutSeconds', 'note: progressive'],
  );
});

s.run();
