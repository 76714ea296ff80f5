/**
 * A saved plan names its own spec (docs/cli.md "Saved plans"): `apply PLANFILE` and `rehearse
 * PLANFILE` read the spec the plan recorded, at its recorded path in the repository it was made
 * in, as `terraform apply PLANFILE` takes no configuration. So `-f` beside a plan file is refused
 * (it would be ignored, and the user would think it was read), and a recorded spec that is not
 * where the plan says sends the user back to that repository, not to a `-f` that cannot help.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { FleetBuilder } from '../support/fleet.ts';
import { cli } from '../support/cli.ts';
import { gitIn } from '../support/git.ts';

const s = suite('saved plans name their own spec');

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-saved-spec-'));
const home = join(dir, 'home'); // no ~/.kube/config: a command that got as far as the cluster fails there
mkdirSync(home);
const AS_USER = { io: { env: { HOME: home, NO_COLOR: '1' } } };

// The repository the plan is made in: the spec under examples/, as in a GitOps repository.
const repo = join(dir, 'repo');
mkdirSync(join(repo, 'examples'), { recursive: true });
mkdirSync(join(repo, 'plans'));
writeFileSync(join(repo, 'examples/cluster.yaml'), new ClusterBuilder().bootcPool('worker', nodes('w', 3)).yaml());
writeFileSync(join(repo, 'examples/rollout.yaml'), specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]));
new FleetBuilder().cluster('east').write(repo);
const git = gitIn(repo);
git('init', '-q', '-b', 'main');
git('add', '.');
git('commit', '-qm', 'spec');
const commit = git('rev-parse', 'HEAD');

// Another directory, outside any repository, holding a copy of the plan (as a CI artifact would).
const elsewhere = join(dir, 'elsewhere');
mkdirSync(join(elsewhere, 'plans'), { recursive: true });

s.before(async () => {
  const made = await cli(['plan', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml', '--out', 'plans/p.json'], { ...AS_USER, cwd: repo });
  assert.is(made.code, 0, made.err);
  copyFileSync(join(repo, 'plans/p.json'), join(elsewhere, 'plans/p.json'));
  const fleet = await cli(['fleet', 'plan', '--out', './fleet-plan.json'], { ...AS_USER, cwd: repo });
  assert.is(fleet.code, 0, fleet.err);
});

for (const command of ['apply', 'rehearse']) {
  s(`${command} PLANFILE -f FILE is a usage error naming both (exit 1), also where the plan would run`, async () => {
    for (const cwd of [repo, elsewhere]) {
      const r = await cli([command, 'plans/p.json', '-f', join(repo, 'examples/rollout.yaml')], { ...AS_USER, cwd });
      assert.is(r.code, 1, r.err);
      assert.match(r.err, /plans\/p\.json/);
      assert.match(r.err, /-f /);
      // The refusal comes first: nothing was read from the plan's spec or the cluster.
      assert.not.match(r.err, /does not exist|no cluster|kubeconfig/i, r.err);
      assert.is(r.out, '');
    }
  });

  s(`${command} PLANFILE away from the repository: the hint names the recorded spec and commit, not -f`, async () => {
    const r = await cli([command, 'plans/p.json'], { ...AS_USER, cwd: elsewhere });
    assert.is(r.code, 1, r.err);
    const hint = r.err.split('\n').find((l) => l.trim().startsWith('hint:')) ?? '';
    assert.match(hint, /examples\/rollout\.yaml/);
    assert.ok(hint.includes(commit.slice(0, 12)), hint);
    assert.match(hint, /repository/);
    assert.not.match(hint, /-f\b/, hint);
  });
}

s('a plan made outside git: the hint says to run from the directory it was made in', async () => {
  const plain = join(dir, 'plain');
  mkdirSync(plain);
  copyFileSync(join(repo, 'examples/rollout.yaml'), join(plain, 'rollout.yaml'));
  copyFileSync(join(repo, 'examples/cluster.yaml'), join(plain, 'cluster.yaml'));
  const made = await cli(['plan', '-f', 'rollout.yaml', '--cluster', 'cluster.yaml', '--out', './p.json'], { ...AS_USER, cwd: plain });
  assert.is(made.code, 0, made.err);
  copyFileSync(join(plain, 'p.json'), join(elsewhere, 'plain.json'));
  const r = await cli(['rehearse', 'plain.json'], { ...AS_USER, cwd: elsewhere });
  assert.is(r.code, 1, r.err);
  const hint = r.err.split('\n').find((l) => l.trim().startsWith('hint:')) ?? '';
  assert.match(hint, /rollout\.yaml/);
  assert.match(hint, /working directory/);
  assert.not.match(hint, /-f\b/, hint);
});

s('rehearse PLANFILE in the repository it was made in reads the recorded spec (no -f needed)', async () => {
  const r = await cli(['rehearse', 'plans/p.json'], { ...AS_USER, cwd: repo });
  assert.is(r.code, 0, r.err);
  const plan = JSON.parse(readFileSync(join(repo, 'plans/p.json'), 'utf8'));
  assert.is(plan.spec.path, 'examples/rollout.yaml');
});

for (const command of ['apply', 'rehearse']) {
  s(`fleet ${command} FLEETPLAN -f FILE is a usage error naming both (exit 1)`, async () => {
    const r = await cli(
      ['fleet', command, 'fleet-plan.json', '-f', 'fleet.yaml', '--auto-approve'].filter((a) => command === 'apply' || a !== '--auto-approve'),
      {
        ...AS_USER,
        cwd: repo,
      },
    );
    assert.is(r.code, 1, r.err);
    assert.match(r.err, /fleet-plan\.json/);
    assert.match(r.err, /-f /);
    assert.not.match(r.err, /no cluster|kubeconfig/i, r.err);
  });
}

s.run();
