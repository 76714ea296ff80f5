/**
 * Sealed plans (issue "Sealed plans and hostile input"): a saved plan altered in any field
 * apply acts on is refused before any write, whether the id was left as it was (the file
 * was modified: exit 3) or recomputed by whoever edited it (the re-plan from the verified
 * spec and the cluster disagrees: exit 3; a stripped policy error: exit 6). What runs is
 * always the fresh plan. Each tamper of a saved plan is put through apply, show and rehearse in
 * test/cli/sealed-plans-tampered.test.ts, -resealed and -moved-on (test/support/sealed-plans.ts).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Plan } from '../../src/plan/types.ts';
import { planIdOf } from '../../src/plan/planner.ts';
import { ClusterBuilder, NEW, nodes } from '../support/cluster.ts';
import { nodeInputs } from '../../src/app/inputs.ts';
import { cli } from '../support/cli.ts';
import { TAMPERS, resealed, sealedRepo, worker } from '../support/sealed-plans.ts';

const s = suite('sealed plans: what was reviewed is what runs');
const { repo, savedPlan, reviewedPlan, applyAgainstSim, write } = sealedRepo();

s('an untouched saved plan applies: the fresh plan runs under the reviewed id', async () => {
  const plan = await savedPlan('bootcplan.yaml', 'cluster.yaml');
  assert.is(plan.id, planIdOf(plan));
  const r = await applyAgainstSim('plan.json');
  assert.is(r.code, 0, r.err);
  const events = r.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.is(events[0].type, 'start');
  assert.is(events[0].message, plan.id);
  const rebooted = events.filter((e) => e.type === 'reboot').map((e) => e.node);
  assert.not.ok(rebooted.includes('w-01'), 'the administrator-cordoned node is not rebooted');
  assert.is(rebooted.length, 5);
});

s("a field's type changed (a number made a string), id left as it was: exit 3 for show, apply and rehearse, naming the field", async () => {
  const plan = await reviewedPlan();
  const edited = { ...plan, summary: { ...plan.summary, nodes: String(plan.summary.nodes) } };
  write('retyped.json', edited);
  const r = await applyAgainstSim('retyped.json');
  assert.is(r.code, 3, r.err);
  assert.not.ok(r.wrote);
  for (const args of [
    ['show', 'retyped.json'],
    ['show', 'retyped.json', '-o', 'json'],
    ['rehearse', 'retyped.json'],
  ]) {
    const shown = await cli(args, { cwd: repo });
    assert.is(shown.code, 3, `${args.join(' ')}: ${shown.err}`);
    assert.is(shown.out, '');
    assert.match(
      shown.err,
      /^error: stale plan: the plan file was modified after it was made\n {2}retyped\.json:\d+:\d+: summary\.nodes: expected a whole number/,
    );
    assert.match(shown.err, new RegExp(`but it says it is plan ${plan.id}`));
  }
  // Resealed (the id recomputed), it is a malformed plan file: exit 1 with the diagnostics.
  write('retyped-resealed.json', { ...edited, id: planIdOf(edited as unknown as Plan) });
  const bad = await cli(['show', 'retyped-resealed.json'], { cwd: repo });
  assert.is(bad.code, 1, bad.err);
  assert.match(bad.err, /summary\.nodes: expected a whole number/);
  assert.match(bad.err, /not a usable plan file/);
});

s('the difference names what was altered: a cordoned node moved into a wave', async () => {
  const plan = await reviewedPlan();
  TAMPERS.find(([w]) => w.includes('cordoned'))![1](plan);
  write('moved.json', resealed(plan));
  const r = await applyAgainstSim('moved.json');
  assert.match(r.err, /worker\/w-01: wave is 1 in the plan file, null from the spec and the cluster/);
  assert.match(r.err, /worker\/w-01: blockedBy is null in the plan file, "cordoned" from the spec and the cluster/);
});

s('the cluster moved since review: a node the plan blocked is schedulable now; apply refuses it (exit 3)', async () => {
  await savedPlan('bootcplan.yaml', 'cluster.yaml');
  const uncordoned = nodes('w', 6); // the administrator lifted the cordon of w-01 after the review
  writeFileSync(join(repo, 'moved-cluster.yaml'), new ClusterBuilder().bootcPool('worker', uncordoned).yaml());
  const r = await applyAgainstSim('plan.json', 'moved-cluster.yaml');
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /worker\/w-01: blocked \(cordoned\) in the reviewed plan, scheduled in wave \d now/);
  assert.not.ok(r.wrote);
});

s('the cluster moved since review: an administrator cordoned a node the plan scheduled; apply refuses (exit 3)', async () => {
  await savedPlan('bootcplan.yaml', 'cluster.yaml');
  const later = nodes('w', 6);
  later[1].cordoned = true;
  later[3].cordoned = true; // cordoned after the review
  writeFileSync(join(repo, 'cordoned-cluster.yaml'), new ClusterBuilder().bootcPool('worker', later).yaml());
  const r = await applyAgainstSim('plan.json', 'cordoned-cluster.yaml');
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /worker\/w-03: in wave \d of the reviewed plan, blocked \(cordoned\) now/);
  assert.not.ok(r.wrote);
});

s('the cluster moved since review: waves larger than the budget or a change without its wait are refused (exit 3)', async () => {
  const later = nodes('w', 6);
  later[1].cordoned = true;
  later[5].notReady = true; // the cluster moved: the strict comparison does not apply
  writeFileSync(join(repo, 'moved2-cluster.yaml'), new ClusterBuilder().bootcPool('worker', later).yaml());
  const plan = await reviewedPlan();
  const w = worker(plan);
  w.waves = [w.waves.flat()];
  for (const n of w.nodes) if (n.wave !== null) n.wave = 1;
  write('big-wave.json', resealed(plan));
  const r = await applyAgainstSim('big-wave.json', 'moved2-cluster.yaml');
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /pool worker: wave 1 has \d nodes, more than maxUnavailable 2/);
  assert.not.ok(r.wrote);
});

s('review finding F1: a change redirected to another object (kind/name edited, address kept) never reaches it, whether or not the cluster moved', async () => {
  writeFileSync(join(repo, 'two-pools.yaml'), new ClusterBuilder().bootcPool('worker', nodes('w', 4)).bootcPool('infra', nodes('i', 2)).yaml());
  const m = nodes('w', 4);
  m[3].current = true; // w-03 finished: the cluster moved on
  writeFileSync(join(repo, 'two-pools-moved.yaml'), new ClusterBuilder().bootcPool('worker', m).bootcPool('infra', nodes('i', 2)).yaml());
  for (const cluster of ['two-pools.yaml', 'two-pools-moved.yaml']) {
    const plan = await savedPlan('bootcplan.yaml', 'two-pools.yaml');
    plan.changes.find((c) => c.kind === 'BootcNodePool' && c.name === 'worker')!.name = 'infra';
    write('redirected.json', resealed(plan));
    const r = await applyAgainstSim('redirected.json', cluster);
    const infra = (await r.sim.driver().snapshot()).bootcNodePools.find((p) => p.metadata.name === 'infra')!;
    assert.is.not(infra.spec!.image!.ref, NEW, `${cluster}: the infra pool was written`);
    assert.is(r.code, 3, `${cluster}: ${r.err}`);
    assert.match(r.err, /name is "infra" in the plan file, "worker" from the spec and the cluster/);
  }
});

s('review finding F2: a cordoned node smuggled into the waves list only (its entry left blocked) is refused', async () => {
  const plan = await reviewedPlan();
  const w = worker(plan);
  w.waves[w.waves.length - 1].push('w-01');
  write('smuggled.json', resealed(plan));
  const later = nodes('w', 6);
  later[1].cordoned = true;
  later[5].current = true; // the cluster moved on
  writeFileSync(join(repo, 'smuggle-cluster.yaml'), new ClusterBuilder().bootcPool('worker', later).yaml());
  for (const cluster of ['cluster.yaml', 'smuggle-cluster.yaml']) {
    const r = await applyAgainstSim('smuggled.json', cluster);
    assert.is(r.code, 1, `${cluster}: ${r.err}`);
    assert.match(r.err, /pool worker: w-01 is in wave \d of waves but its node entry says wave null/);
    assert.not.ok(r.wrote);
  }
});

s('review finding F4: plan-file paths through a symbolic link, and special files, are refused', async () => {
  const { symlinkSync } = await import('node:fs');
  symlinkSync('/etc/hostname', join(repo, 'host-link'));
  symlinkSync('/dev/zero', join(repo, 'zero-link'));
  const plan = await reviewedPlan();
  plan.spec.ref = null;
  plan.spec.commit = null;
  plan.spec.path = 'host-link';
  write('link-spec.json', resealed(plan));
  const a = await applyAgainstSim('link-spec.json');
  assert.is(a.code, 1, a.err);
  assert.match(a.err, /spec path "host-link" is outside the repository/);
  const zero = await reviewedPlan();
  zero.cluster.source = 'file:zero-link';
  write('zero.json', resealed(zero));
  const r = await cli(['rehearse', 'zero.json'], { cwd: repo });
  assert.is(r.code, 1, r.err);
  assert.match(r.err, /outside the working directory|not a regular file/);
  const dev = await cli(['rehearse', '-f', 'bootcplan.yaml', '--cluster', '/dev/zero'], { cwd: repo });
  assert.is(dev.code, 1, dev.err);
  assert.match(dev.err, /is not a regular file/);
});

s("git never reads a plan file's commit as an option, even past the commit check (--end-of-options)", async () => {
  const { verifyPlanSpec } = await import('../../src/app/saved-plan.ts');
  const plan = await reviewedPlan();
  plan.spec.commit = `--output=${join(repo, 'written-by-git')}`;
  plan.spec.path = 'bootcplan.yaml';
  assert.throws(() => verifyPlanSpec(nodeInputs, plan, { cwd: repo }));
  // git would write `--output=<file>:<path>`: any file named after the marker counts.
  const { readdirSync } = await import('node:fs');
  assert.equal(
    readdirSync(repo).filter((f) => f.startsWith('written-by-git')),
    [],
    'git took the commit for an option',
  );
});

s('the policy error stripped from a saved plan: the fresh plan still has it, exit 6, nothing written', async () => {
  const plan = await savedPlan('cpms.yaml', 'cpms-cluster.yaml', ['--for-review']);
  assert.ok(plan.diagnostics.some((d) => d.code === 'cpms-replacement-not-allowed'));
  assert.is(plan.reviewOnly, true);
  plan.diagnostics = plan.diagnostics.filter((d) => d.code !== 'cpms-replacement-not-allowed');
  plan.summary.errors = 0;
  delete plan.reviewOnly;
  write('stripped.json', resealed(plan));
  const r = await applyAgainstSim('stripped.json', 'cpms-cluster.yaml');
  assert.is(r.code, 6, r.err);
  assert.match(r.err, /replaces control-plane machines and the spec does not allow it/);
  assert.not.ok(r.wrote);
  const rehearsal = await cli(['rehearse', 'stripped.json'], { cwd: repo });
  assert.is(rehearsal.code, 6, rehearsal.err);
});

s('a plan with errors is not saved by --out; --for-review saves it marked, and apply refuses it', async () => {
  const before = readFileSync(join(repo, 'plan.json'), 'utf8');
  const r = await cli(['plan', '-f', 'cpms.yaml', '--cluster', 'cpms-cluster.yaml', '--out', './plan.json'], { cwd: repo });
  assert.is(r.code, 1);
  assert.match(r.err, /not saved: the plan has 1 error and cannot be applied/);
  assert.match(r.err, /--for-review/);
  assert.is(readFileSync(join(repo, 'plan.json'), 'utf8'), before, 'the file was not replaced');
  const plan = await savedPlan('cpms.yaml', 'cpms-cluster.yaml', ['--for-review']);
  assert.is(plan.id, planIdOf(plan), 'sealed with the mark');
  const a = await applyAgainstSim('plan.json', 'cpms-cluster.yaml');
  assert.is(a.code, 1);
  assert.match(a.err, /saved for review only/);
  assert.not.ok(a.wrote);
  // Saved to be reviewed: show renders it (its seal holds), errors and all.
  const shown = await cli(['show', 'plan.json'], { cwd: repo });
  assert.is(shown.code, 0, shown.err);
  assert.match(shown.out, /this plan cannot be applied/);
});

s('git and paths from a plan file: an option as the commit, a spec or snapshot outside the repository', async () => {
  const marker = join(repo, 'pwned');
  const cases: [string, (p: Plan) => void, RegExp][] = [
    [
      'commit',
      (p) => {
        p.spec.commit = `--output=${marker}`;
      },
      /spec.commit "--output=.*" is not a full git object id/,
    ],
    [
      'short commit',
      (p) => {
        p.spec.commit = p.spec.commit!.slice(0, 12);
      },
      /is not a full git object id/,
    ],
    [
      'spec path',
      (p) => {
        p.spec.path = '../../../../etc/passwd';
      },
      /spec path "..\/..\/..\/..\/etc\/passwd" is outside the repository/,
    ],
    [
      'absolute spec path',
      (p) => {
        p.spec.path = '/etc/passwd';
      },
      /spec path "\/etc\/passwd" is outside the repository/,
    ],
  ];
  for (const [what, tamper, message] of cases) {
    const plan = await reviewedPlan();
    tamper(plan);
    write('paths.json', resealed(plan));
    const r = await applyAgainstSim('paths.json');
    assert.is(r.code, 1, `${what}: ${r.err}`);
    assert.match(r.err, message, what);
    assert.not.ok(r.wrote, what);
    assert.not.ok(existsSync(marker), `${what}: git wrote a file`);
  }
  const plan = await reviewedPlan();
  plan.cluster.source = 'file:/etc/passwd';
  write('source.json', resealed(plan));
  const r = await cli(['rehearse', 'source.json'], { cwd: repo });
  assert.is(r.code, 1, r.err);
  assert.match(r.err, /cluster source "file:\/etc\/passwd" is outside the working directory/);
});

s.run();
