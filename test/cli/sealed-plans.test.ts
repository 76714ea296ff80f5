/**
 * Sealed plans (issue "Sealed plans and hostile input"): a saved plan altered in any field
 * apply acts on is refused before any write, whether the id was left as it was (the file
 * was modified: exit 3) or recomputed by whoever edited it (the re-plan from the verified
 * spec and the cluster disagrees: exit 3; a stripped policy error: exit 6). What runs is
 * always the fresh plan.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { DriverFactory } from '../../src/app/ports.ts';
import type { Plan } from '../../src/plan/types.ts';
import { planIdOf } from '../../src/plan/planner.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { clusterObjects, MS, CP } from '../support/bootimages.ts';
import { newSim } from '../support/apply.ts';
import { readSnapshotFile, nodeInputs } from '../../src/app/inputs.ts';
import { cli } from '../support/cli.ts';
import { gitIn } from '../support/git.ts';

const s = suite('sealed plans: what was reviewed is what runs');

const repo = mkdtempSync(join(tmpdir(), 'bootcplan-sealed-'));
const git = gitIn(repo);
git('init', '-q', '-b', 'main');

const ns = nodes('w', 6);
ns[1].cordoned = true; // an administrator's cordon: the plan blocks w-01
writeFileSync(join(repo, 'cluster.yaml'), new ClusterBuilder().bootcPool('worker', ns).yaml());
writeFileSync(
  join(repo, 'bootcplan.yaml'),
  specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 60, rebootPolicy: 'AllowSoftReboot', drainTimeoutSeconds: 300, priority: 5 }]),
);
// A control-plane replacement the spec does not allow (4.20, CPMS RollingUpdate, opted in).
writeFileSync(
  join(repo, 'cpms-cluster.yaml'),
  stringify({ apiVersion: 'v1', kind: 'List', items: clusterObjects({ version: '4.20.8', cpms: {}, machineManagers: [MS('All')] }) }),
);
writeFileSync(
  join(repo, 'cpms.yaml'),
  stringify({
    apiVersion: 'bootcplan.dev/v1alpha1',
    kind: 'Rollout',
    metadata: { name: 'cpms' },
    spec: { managedBootImages: { machineManagers: [MS('All'), CP('All')] } },
  }),
);
git('add', '.');
git('commit', '-qm', 'specs');

async function savedPlan(spec: string, cluster: string, extra: string[] = []): Promise<Plan> {
  const r = await cli(['plan', '-f', spec, '--ref', 'HEAD', '--cluster', cluster, '--out', './plan.json', ...extra], { cwd: repo });
  assert.ok(existsSync(join(repo, 'plan.json')), r.err);
  return JSON.parse(readFileSync(join(repo, 'plan.json'), 'utf8'));
}

/** Applies `file` against a simulator of cluster.yaml; returns the exit code, stderr and whether the cluster was written. */
async function applyAgainstSim(file: string, clusterFile = 'cluster.yaml') {
  const sim = newSim(readSnapshotFile(nodeInputs, join(repo, clusterFile)));
  const before = (await sim.driver().snapshot()).fingerprint;
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'sealed@test' });
  const r = await cli(['apply', file, '--auto-approve', '--json'], { cwd: repo, openDriver });
  const after = await sim.driver().snapshot();
  return { ...r, wrote: after.fingerprint !== before || (await sim.driver().readProgress()).run !== null, sim };
}

const write = (name: string, plan: unknown) => writeFileSync(join(repo, name), JSON.stringify(plan, null, 2));
const resealed = (p: Plan): Plan => ({ ...p, id: planIdOf(p) });

type Tamper = [string, (p: Plan) => void];
const worker = (p: Plan) => p.pools.find((x) => x.name === 'worker')!;
const TAMPERS: Tamper[] = [
  [
    "a change's patch value",
    (p) => {
      const op = p.changes.find((c) => c.kind === 'BootcNodePool')!.patch.find((o) => o.op === 'replace' || o.op === 'add') as { value: unknown };
      op.value = 'quay.io/evil/os@sha256:' + 'e'.repeat(64);
    },
  ],
  [
    "a change's action",
    (p) => {
      p.changes.find((c) => c.kind === 'BootcNodePool')!.action = 'noop';
    },
  ],
  [
    "a change's order",
    (p) => {
      p.changes.find((c) => c.kind === 'BootcNodePool')!.order = 99;
    },
  ],
  [
    'a change removed',
    (p) => {
      p.changes = p.changes.filter((c) => c.kind !== 'BootcNodePool');
    },
  ],
  [
    'soakSeconds',
    (p) => {
      worker(p).soakSeconds = 0;
    },
  ],
  [
    'rebootPolicy',
    (p) => {
      worker(p).rebootPolicy = 'RebootOnly';
    },
  ],
  [
    'drainTimeoutSeconds',
    (p) => {
      worker(p).drainTimeoutSeconds = 1;
    },
  ],
  [
    'priority',
    (p) => {
      worker(p).priority = 99;
    },
  ],
  [
    'paused',
    (p) => {
      worker(p).paused = !worker(p).paused;
    },
  ],
  [
    'the resolved maxUnavailable',
    (p) => {
      worker(p).maxUnavailable.resolved = 6;
    },
  ],
  [
    'the target image',
    (p) => {
      worker(p).targetImage = 'quay.io/evil/os@sha256:' + 'e'.repeat(64);
    },
  ],
  [
    'an administrator-cordoned node moved into a wave',
    (p) => {
      const n = worker(p).nodes.find((x) => x.name === 'w-01')!;
      n.wave = 1;
      n.blockedBy = null;
      worker(p).waves[0].push('w-01');
    },
  ],
  [
    "a node's reboot kind",
    (p) => {
      const n = worker(p).nodes.find((x) => x.wave !== null)!;
      n.reboot = n.reboot === 'soft' ? 'hard' : 'soft';
    },
  ],
  [
    'the waves reordered (node entries renumbered to match)',
    (p) => {
      const w = worker(p);
      w.waves.reverse();
      w.waves.forEach((wave, i) => {
        for (const name of wave) w.nodes.find((n) => n.name === name)!.wave = i + 1;
      });
    },
  ],
  [
    'the phase durations',
    (p) => {
      p.durations = { ...p.durations, reboot: 1, stage: 1 };
    },
  ],
  [
    'the spec hash',
    (p) => {
      p.spec.sha256 = 'f'.repeat(64);
    },
  ],
];

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
  const plan = await savedPlan('bootcplan.yaml', 'cluster.yaml');
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

for (const [what, tamper] of TAMPERS) {
  s(`tampered (${what}), id left as it was: exit 3 "plan file was modified", nothing written`, async () => {
    const plan = await savedPlan('bootcplan.yaml', 'cluster.yaml');
    tamper(plan);
    write('tampered.json', plan);
    const r = await applyAgainstSim('tampered.json');
    assert.is(r.code, 3, r.err);
    assert.match(r.err, /the plan file was modified after it was made/);
    assert.not.ok(r.wrote);
    // show verifies as apply does: nothing rendered under the id the file claims, the same message.
    const errorLines = (text: string) =>
      text
        .split('\n')
        .filter((l) => /^(error| {2})/.test(l))
        .join('\n');
    for (const format of ['text', 'json']) {
      const shown = await cli(['show', 'tampered.json', '-o', format], { cwd: repo });
      assert.is(shown.code, 3, `show -o ${format}: ${shown.err}`);
      assert.is(shown.out, '', 'nothing is rendered');
      assert.is(errorLines(shown.err), errorLines(r.err));
    }
  });
  s(`tampered (${what}), id recomputed: refused before any write`, async () => {
    const plan = await savedPlan('bootcplan.yaml', 'cluster.yaml');
    tamper(plan);
    write('resealed.json', resealed(plan));
    const r = await applyAgainstSim('resealed.json');
    assert.is(r.code, 3, r.err);
    assert.match(r.err, /stale plan: (plan \w+ is not what the spec and the cluster give now|the spec changed since the plan was made)/);
    assert.not.ok(r.wrote);
    const rehearsal = await cli(['rehearse', 'resealed.json'], { cwd: repo });
    assert.is(rehearsal.code, 3, `rehearse: ${rehearsal.err}`);
  });
}

/**
 * Once the cluster has moved on (an apply resumes), the reviewed waves run; every tamper that
 * would change what is written or which node is taken is still refused. Not compared then, by
 * design: how the reviewed nodes are grouped into waves (within the budget) and the reboot kind
 * the plan expected (the applier decides soft or hard from the BootcNode at run time).
 */
const MOVED_EXEMPT = ["a node's reboot kind", 'the waves reordered (node entries renumbered to match)'];
for (const [what, tamper] of TAMPERS.filter(([w]) => !MOVED_EXEMPT.includes(w))) {
  s(`tampered (${what}), id recomputed, cluster moved on: refused before any write`, async () => {
    const later = nodes('w', 6);
    later[1].cordoned = true;
    later[5].current = true;
    writeFileSync(join(repo, 'moved-on.yaml'), new ClusterBuilder().bootcPool('worker', later).yaml());
    const plan = await savedPlan('bootcplan.yaml', 'cluster.yaml');
    tamper(plan);
    write('resealed-moved.json', resealed(plan));
    const r = await applyAgainstSim('resealed-moved.json', 'moved-on.yaml');
    assert.ok(r.code === 3 || r.code === 1, `exit ${r.code}: ${r.err}`);
    assert.not.ok(r.wrote);
  });
}

s('the difference names what was altered: a cordoned node moved into a wave', async () => {
  const plan = await savedPlan('bootcplan.yaml', 'cluster.yaml');
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
  const plan = await savedPlan('bootcplan.yaml', 'cluster.yaml');
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
  const plan = await savedPlan('bootcplan.yaml', 'cluster.yaml');
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
  const plan = await savedPlan('bootcplan.yaml', 'cluster.yaml');
  plan.spec.ref = null;
  plan.spec.commit = null;
  plan.spec.path = 'host-link';
  write('link-spec.json', resealed(plan));
  const a = await applyAgainstSim('link-spec.json');
  assert.is(a.code, 1, a.err);
  assert.match(a.err, /spec path "host-link" is outside the repository/);
  const zero = await savedPlan('bootcplan.yaml', 'cluster.yaml');
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
  const plan = await savedPlan('bootcplan.yaml', 'cluster.yaml');
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
    const plan = await savedPlan('bootcplan.yaml', 'cluster.yaml');
    tamper(plan);
    write('paths.json', resealed(plan));
    const r = await applyAgainstSim('paths.json');
    assert.is(r.code, 1, `${what}: ${r.err}`);
    assert.match(r.err, message, what);
    assert.not.ok(r.wrote, what);
    assert.not.ok(existsSync(marker), `${what}: git wrote a file`);
  }
  const plan = await savedPlan('bootcplan.yaml', 'cluster.yaml');
  plan.cluster.source = 'file:/etc/passwd';
  write('source.json', resealed(plan));
  const r = await cli(['rehearse', 'source.json'], { cwd: repo });
  assert.is(r.code, 1, r.err);
  assert.match(r.err, /cluster source "file:\/etc\/passwd" is outside the working directory/);
});

s.run();
