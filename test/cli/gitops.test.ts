import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, mkdirSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { StalePlanError, exitCodeOf } from '../../src/base/errors.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { verifyPlanSpec } from '../../src/app/saved-plan.ts';
import { nodeInputs } from '../../src/app/inputs.ts';
import { cli } from '../support/cli.ts';
import { spawnSync } from 'node:child_process';
import { ensureBuilt } from '../support/built.ts';
import { git } from '../support/git.ts';

const s = suite('gitops: specs from git');

const sha = (t: string) => createHash('sha256').update(t).digest('hex');

const repo = mkdtempSync(join(tmpdir(), 'bootcplan-git-'));
git(repo, 'init', '-q', '-b', 'main');
mkdirSync(join(repo, 'clusters/prod'), { recursive: true });
const specPath = join(repo, 'clusters/prod/bootcplan.yaml');
const v1 = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]);
const v2 = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]);
writeFileSync(specPath, v1);
git(repo, 'add', '.');
git(repo, 'commit', '-qm', 'v1');
const c1 = git(repo, 'rev-parse', 'HEAD');
writeFileSync(specPath, v2);
git(repo, 'commit', '-qam', 'v2');
const c2 = git(repo, 'rev-parse', 'HEAD');
const clusterFile = join(repo, 'cluster.yaml');
writeFileSync(clusterFile, new ClusterBuilder().bootcPool('worker', nodes('w', 6)).yaml());

s('--ref reads the spec at that revision and records commit, path and sha256', async () => {
  const r = await cli(['plan', '-f', specPath, '--ref', 'HEAD~1', '--cluster', clusterFile, '-o', 'json']);
  assert.is(r.code, 0, r.err);
  const plan = JSON.parse(r.out);
  assert.equal(plan.spec, { name: 'test', path: 'clusters/prod/bootcplan.yaml', ref: 'HEAD~1', commit: c1, sha256: sha(v1), dirty: null });
  assert.is(plan.pools[0].maxUnavailable.resolved, 1);
});

s('without --ref: HEAD commit and a dirty flag when the file differs', async () => {
  let plan = JSON.parse((await cli(['plan', '-f', specPath, '--cluster', clusterFile, '-o', 'json'])).out);
  assert.equal([plan.spec.commit, plan.spec.dirty, plan.spec.ref, plan.spec.sha256], [c2, false, null, sha(v2)]);
  writeFileSync(specPath, v2 + '# local edit\n');
  try {
    plan = JSON.parse((await cli(['plan', '-f', specPath, '--cluster', clusterFile, '-o', 'json'])).out);
    assert.is(plan.spec.dirty, true);
    const text = (await cli(['plan', '-f', specPath, '--cluster', clusterFile])).out;
    assert.match(text, /uncommitted changes/);
  } finally {
    writeFileSync(specPath, v2);
  }
});

s('a repository without a commit yet: the path in the repository, no commit, and dirty (the file is untracked)', async () => {
  const fresh = mkdtempSync(join(tmpdir(), 'bootcplan-git-empty-'));
  git(fresh, 'init', '-q', '-b', 'main');
  mkdirSync(join(fresh, 'prod'));
  writeFileSync(join(fresh, 'prod/bootcplan.yaml'), v1);
  const r = await cli(['plan', '-f', join(fresh, 'prod/bootcplan.yaml'), '--cluster', clusterFile, '-o', 'json']);
  assert.is(r.code, 0, r.err);
  assert.equal(JSON.parse(r.out).spec, { name: 'test', path: 'prod/bootcplan.yaml', ref: null, commit: null, sha256: sha(v1), dirty: true });
});

s('outside any repository: the path as given, no commit, no dirty flag', async () => {
  const outside = mkdtempSync(join(tmpdir(), 'bootcplan-nogit-'));
  writeFileSync(join(outside, 'bootcplan.yaml'), v1);
  const r = await cli(['plan', '-f', join(outside, 'bootcplan.yaml'), '--cluster', clusterFile, '-o', 'json']);
  assert.is(r.code, 0, r.err);
  assert.equal(JSON.parse(r.out).spec, { name: 'test', path: join(outside, 'bootcplan.yaml'), ref: null, commit: null, sha256: sha(v1), dirty: null });
});

s('relative -f from a subdirectory resolves against the repository', async () => {
  const r = await cli(['plan', '-f', 'bootcplan.yaml', '--ref', 'main', '--cluster', clusterFile, '-o', 'json'], { cwd: join(repo, 'clusters/prod') });
  assert.is(r.code, 0, r.err);
  assert.is(JSON.parse(r.out).spec.commit, c2);
});

s('a bad ref, a path missing at the ref, or a ref that looks like an option are clean errors', async () => {
  const bad = await cli(['plan', '-f', specPath, '--ref', 'no-such-branch', '--cluster', clusterFile]);
  assert.is(bad.code, 1);
  assert.match(bad.err, /--ref no-such-branch: no such revision/);
  writeFileSync(join(repo, 'new.yaml'), v1);
  const missing = await cli(['plan', '-f', join(repo, 'new.yaml'), '--ref', 'HEAD', '--cluster', clusterFile]);
  assert.is(missing.code, 1);
  assert.match(missing.err, /new\.yaml does not exist at HEAD/);
  const marker = join(repo, 'pwned');
  const inj = await cli(['plan', '-f', specPath, `--ref=--output=${marker}`, '--cluster', clusterFile]);
  assert.is(inj.code, 1);
  assert.not.ok(existsSync(marker), 'git got the ref as an argument, never as an option or through a shell');
  const outside = await cli(['plan', '-f', join(tmpdir(), 'x.yaml'), '--ref', 'HEAD', '--cluster', clusterFile], { cwd: repo });
  assert.is(outside.code, 1);
  for (const r of [bad, missing, inj, outside]) assert.not.match(r.err, /\n\s+at /);
});

s('--base shows what the change does to the spec itself', async () => {
  const r = await cli(['plan', '-f', specPath, '--base', 'HEAD~1', '--cluster', clusterFile, '-o', 'json']);
  assert.is(r.code, 0, r.err);
  const sc = JSON.parse(r.out).specChanges;
  assert.is(sc.base, 'HEAD~1');
  assert.is(sc.baseCommit, c1);
  assert.equal([sc.added, sc.removed], [1, 1]);
  assert.match(sc.unified, /^-\s+maxUnavailable: 1$/m);
  assert.match(sc.unified, /^\+\s+maxUnavailable: 2$/m);
  const same = JSON.parse((await cli(['plan', '-f', specPath, '--base', 'HEAD', '--cluster', clusterFile, '-o', 'json'])).out).specChanges;
  assert.is(same.unified, '');
});

s('a saved plan refuses to run when the spec it was made from changed (stale, exit 3)', async () => {
  const out = join(repo, 'plan.json');
  assert.is((await cli(['plan', '-f', specPath, '--cluster', clusterFile, '--out', out])).code, 0);
  const plan = JSON.parse(readFileSync(out, 'utf8'));
  verifyPlanSpec(nodeInputs, plan, { cwd: repo });
  writeFileSync(specPath, v2.replace('maxUnavailable: 2', 'maxUnavailable: 5'));
  try {
    const err = catchErr(() => verifyPlanSpec(nodeInputs, plan, { cwd: repo }));
    assert.instance(err, StalePlanError);
    assert.is(exitCodeOf(err), 3);
    assert.match((err as StalePlanError).difference.join('\n'), /now has sha256/);
    // A plan made from a ref is checked at its commit, whatever the working tree holds.
    assert.is((await cli(['plan', '-f', specPath, '--ref', 'HEAD~1', '--cluster', clusterFile, '--out', out])).code, 0);
    verifyPlanSpec(nodeInputs, JSON.parse(readFileSync(out, 'utf8')), { cwd: repo });
    const forged = { ...JSON.parse(readFileSync(out, 'utf8')), spec: { ...plan.spec, ref: 'HEAD~1', commit: c1, sha256: sha(v2) } };
    assert.instance(
      catchErr(() => verifyPlanSpec(nodeInputs, forged, { cwd: repo })),
      StalePlanError,
    );
  } finally {
    writeFileSync(specPath, v2);
  }
});

s(
  'a saved plan applied from a mount outside git (an apply Job) whose spec is missing: the error names the file it expected in the mount, and how to mount it',
  async () => {
    const out = join(repo, 'clusters/prod/plans/bootcplan.json');
    const made = await cli(['plan', '-f', 'clusters/prod/bootcplan.yaml', '--cluster', clusterFile, '--out', out], { cwd: repo });
    assert.is(made.code, 0, made.err);
    // The Job's working directory: the mounted ConfigMap, not a clone; here only the plan is in it.
    const work = mkdtempSync(join(tmpdir(), 'bootcplan-mount-'));
    mkdirSync(join(work, 'clusters/prod/plans'), { recursive: true });
    writeFileSync(join(work, 'clusters/prod/plans/bootcplan.json'), readFileSync(out));
    // The spec is looked for before any cluster access: no kubeconfig is read.
    const r = await cli(['apply', 'clusters/prod/plans/bootcplan.json', '--auto-approve', '--kubeconfig', join(work, 'none')], { cwd: work });
    assert.is(r.code, 1, r.err);
    assert.match(r.err, `${join(work, 'clusters/prod/bootcplan.yaml')}`);
    assert.match(r.err, /not a git clone/);
    assert.match(r.err, /mount the spec at clusters\/prod\/bootcplan\.yaml under the working directory/);
    assert.not.match(r.err, /run bootcplan inside a clone/);
  },
);

s(
  'plan --out refuses, at plan time, a spec no directory could apply (a relative path climbing out, outside git); an absolute one applies from its directory',
  async () => {
    const outside = mkdtempSync(join(tmpdir(), 'bootcplan-outside-'));
    mkdirSync(join(outside, 'specs'));
    mkdirSync(join(outside, 'work'));
    writeFileSync(join(outside, 'specs/bootcplan.yaml'), v1);
    // Planned from a sibling directory outside git: recorded as "../specs/bootcplan.yaml", which
    // apply (reading only inside the working directory outside git) finds from nowhere.
    const out = join(outside, 'work/p.json');
    const r = await cli(['plan', '-f', '../specs/bootcplan.yaml', '--cluster', clusterFile, '--out', out], { cwd: join(outside, 'work') });
    assert.is(r.code, 1, r.err);
    assert.match(r.err, /climbs out of the working directory/);
    assert.match(r.err, /hint: .*from the directory that holds the spec/);
    assert.not.ok(existsSync(out), 'nothing saved');
    assert.is(
      (await cli(['plan', '-f', '../specs/bootcplan.yaml', '--cluster', clusterFile], { cwd: join(outside, 'work') })).code,
      0,
      'a plan not saved is fine',
    );
    // An absolute path, planned from a repository: saved; applied from the repository it is refused
    // with the directory to run from, and from that directory it is found.
    const abs = join(outside, 'specs/bootcplan.yaml');
    const saved = join(repo, 'plans/outside.json');
    const made = await cli(['plan', '-f', abs, '--cluster', clusterFile, '--out', saved], { cwd: repo });
    assert.is(made.code, 0, made.err);
    const plan = JSON.parse(readFileSync(saved, 'utf8'));
    try {
      verifyPlanSpec(nodeInputs, plan, { cwd: repo });
      assert.unreachable('refused from the repository');
    } catch (e) {
      assert.match(String((e as { hint?: string }).hint), new RegExp(`run bootcplan from ${join(outside, 'specs').replace(/[/.]/g, '\\$&')}`));
    }
    verifyPlanSpec(nodeInputs, plan, { cwd: join(outside, 'specs') });
    rmSync(saved);
  },
);

s('a plan made from a snapshot on stdin (--cluster -): rehearse without --cluster says so and how to pass it again; with --cluster - it rehearses', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-stdin-'));
  writeFileSync(join(dir, 'bootcplan.yaml'), v1);
  const snapshot = readFileSync(clusterFile, 'utf8');
  const bin = (args: string[], input?: string) =>
    spawnSync(process.execPath, [ensureBuilt(), ...args], { cwd: dir, input, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  assert.is(bin(['plan', '-f', 'bootcplan.yaml', '--cluster', '-', '--out', 'plans/p.json'], snapshot).status, 0);
  const bare = bin(['rehearse', 'plans/p.json']);
  assert.is(bare.status, 1, bare.stderr);
  assert.not.match(bare.stderr, /<stdin> does not exist/);
  assert.match(bare.stderr, /made from a snapshot read from stdin/);
  assert.match(bare.stderr, /--cluster - < SNAPSHOT/);
  const again = bin(['rehearse', 'plans/p.json', '--cluster', '-'], snapshot);
  assert.is(again.status, 0, again.stderr);
});

s('text, markdown and HTML show the spec diff', async () => {
  for (const fmt of ['text', 'markdown', 'html']) {
    const r = await cli(['plan', '-f', specPath, '--base', 'HEAD~1', '--cluster', clusterFile, '-o', fmt]);
    assert.is(r.code, 0, r.err);
    const out = fmt === 'markdown' ? r.out.replace(/\\([~_*])/g, '$1') : r.out;
    assert.match(out, /Spec changes since HEAD~1 \([0-9a-f]{12}\): 1 added, 1 removed lines in clusters\/prod\/bootcplan\.yaml/, fmt);
    assert.match(out, /maxUnavailable: 2/, fmt);
  }
});

function catchErr(fn: () => void): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected an error');
}

s.run();
