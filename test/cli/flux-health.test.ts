/**
 * Flux's health of a rollout follows the Rollout's status at every reconciliation, not only the
 * first Job (docs/gitops.md "Flux"): the exact healthCheckExprs of examples/flux/kustomizations.yaml,
 * evaluated by Flux's own evaluator (fluxcd/pkg runtime/cel StatusEvaluator, built from
 * test/tools/flux-health by .ci/run), on Rollout objects whose status `bootcplan apply --step`
 * really wrote run after run (the simulated cluster stores what apply's reporter writes):
 * progressing after wave 1, halted in wave 2 by a later run (the CronJob's), done, the status
 * of an older spec, a stale plan.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir, homedir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { parse, parseAllDocuments } from 'yaml';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { newSim } from '../support/apply.ts';
import { run } from '../../src/cli/main.ts';
import type { SimCluster } from '../../src/sim/cluster.ts';
import type { DriverFactory } from '../../src/app/ports.ts';
import { inDir, io } from '../support/cli.ts';
import { skipLocally } from '../support/skips.ts';

const s = suite('Flux health of the Rollout (healthCheckExprs)');
const D = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 };
const TOOL_DIR = 'test/tools/flux-health';

/** The evaluator .ci/run builds (test/tools/flux-health/build.sh), found by the hash of its sources. */
function evaluator(): string | null {
  const hash = createHash('sha256')
    .update(Buffer.concat(['go.mod', 'go.sum', 'main.go'].map((f) => readFileSync(join(TOOL_DIR, f)))))
    .digest('hex')
    .slice(0, 12);
  const bin = join(process.env.BOOTCPLAN_TOOLS ?? join(homedir(), '.cache/bootcplan-tools/bin'), `flux-health-${hash}`);
  return existsSync(bin) ? bin : null;
}

/** The Rollout entry of the example's healthCheckExprs, and the Kustomization it sits in. */
function example() {
  const docs = parseAllDocuments(readFileSync('examples/flux/kustomizations.yaml', 'utf8')).map((d) => d.toJS());
  const ks = docs.find((d) => d.metadata.name === 'bootcplan-rollout');
  const check = ks.spec.healthCheckExprs.find((h: any) => h.apiVersion.startsWith('bootcplan.dev/') && h.kind === 'Rollout');
  return { ks, check };
}

/**
 * The object as the API server holds it after apply's JSON merge patch of the status (RFC 7386:
 * a null removes the field) and as Flux reads it.
 */
function stored(sim: SimCluster, name = 'test') {
  const o = sim.rollouts.objects.get(name)!;
  const status = JSON.parse(JSON.stringify(o.status, (_k, v) => (v === null ? undefined : v)));
  return {
    apiVersion: 'bootcplan.dev/v1alpha1',
    kind: 'Rollout',
    metadata: { name, namespace: 'openshift-bootcplan', generation: o.generation },
    spec: o.spec,
    status,
  };
}

/** Runs `apply PLANFILE --auto-approve --step` in the work tree, as the Job and the CronJob do, until `until` says stop. */
async function steps(t: Tree, until: (code: number) => boolean, max = 12) {
  const codes: number[] = [];
  for (let i = 0; i < max; i++) {
    const o = io();
    const code = await inDir(t.work, () => run(['apply', 'plans/bootcplan.json', '--auto-approve', '--step'], { io: o, openDriver: t.openDriver }));
    codes.push(code);
    t.sim.advance(700);
    if (until(code)) return codes;
  }
  throw new Error(`no end after ${max} runs: exits ${codes.join(', ')}`);
}

interface Tree {
  work: string;
  sim: SimCluster;
  openDriver: DriverFactory;
}

/** A work tree with the spec, the cluster's snapshot and the reviewed plan; the cluster with the spec's Rollout object synced. */
async function setup(count: number): Promise<Tree> {
  const work = mkdtempSync(join(tmpdir(), 'bootcplan-flux-health-'));
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', count));
  const text = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0 }]);
  writeFileSync(join(work, 'bootcplan.yaml'), text);
  writeFileSync(join(work, 'cluster.yaml'), b.yaml());
  const p = io();
  assert.is(await inDir(work, () => run(['plan', '-f', 'bootcplan.yaml', '--cluster', 'cluster.yaml', '--out', 'plans/bootcplan.json'], { io: p })), 0, p.err);
  const sim = newSim(b.snapshot(), { durations: D });
  sim.rollouts.put('test', parse(text).spec);
  let n = 0;
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: `job-${++n}@test` });
  return { work, sim, openDriver };
}

const objects = new Map<string, unknown>();

s("the statuses: progressing after wave 1, then a later run halts wave 2 (exit 5), a rollout done, an older spec's status", async () => {
  const a = await setup(6);
  await steps(a, () => a.sim.rollouts.objects.get('test')!.status?.reason === 'Stepped');
  const progressing = stored(a.sim);
  assert.equal([progressing.status.phase, progressing.status.wave, progressing.status.waves], ['Progressing', 1, 3]);
  objects.set('progressing', progressing);
  // Every reboot from now on fails: the next run (the CronJob's, at night) halts wave 2.
  a.sim.rebootFails = () => true;
  const codes = await steps(a, (code) => code !== 0);
  assert.is(codes[codes.length - 1], 5, `exits ${codes.join(', ')}`);
  const halted = stored(a.sim);
  assert.equal([halted.status.phase, halted.status.reason, halted.status.lastExitCode], ['Degraded', 'Halted', 5]);
  assert.ok(halted.status.conditions.some((c: any) => c.type === 'Stalled' && c.status === 'True'));
  assert.match(halted.status.message, /^halted: w-\d\d Degraded after the reboot \(pool worker\)$/);
  assert.ok(
    a.sim.rollouts.events.some((e) => e.reason === 'WaveStarted' && /^wave 2\/3:/.test(e.note)),
    'it halted in wave 2',
  );
  assert.is(a.sim.reboots.filter((r) => !r.failed).length, 2, 'wave 1 went through before');
  objects.set('halted', halted);

  const b = await setup(4);
  await steps(b, () => b.sim.rollouts.objects.get('test')!.status?.phase === 'Healthy');
  objects.set('done', stored(b.sim));
  // A new spec synced (generation 2) before its Job has run: the status is the old spec's.
  b.sim.rollouts.put('test', { pools: [] });
  objects.set('older spec', stored(b.sim));
  // A Rollout no apply has run for: the CRD defaults its status to {} (deploy/rollout-crd.yaml;
  // test/e2e/09-gitops reads one back from the real API server).
  objects.set('no status yet', { apiVersion: 'bootcplan.dev/v1alpha1', kind: 'Rollout', metadata: { name: 'test', generation: 1 }, spec: {}, status: {} });
});

s("the example's expressions, run by Flux's evaluator: Current while it advances or is done; Failed once a later wave halts", () => {
  const tool = evaluator();
  if (!tool) {
    skipLocally('flux-health', 'test/tools/flux-health/build.sh builds the evaluator');
    return;
  }
  const { ks, check } = example();
  // The Kustomization checks the Rollout the spec names, where apply writes its status.
  const spec = parse(readFileSync('examples/flux/clusters/prod-east/bootcplan.yaml', 'utf8'));
  assert.ok(
    ks.spec.healthChecks.some(
      (h: any) => h.kind === 'Rollout' && h.apiVersion === 'bootcplan.dev/v1alpha1' && h.name === spec.metadata.name && h.namespace === 'openshift-bootcplan',
    ),
    'the Rollout is health-checked',
  );
  const names = [...objects.keys()];
  const r = spawnSync(tool, [], { input: JSON.stringify({ check, objects: names.map((n) => objects.get(n)) }), encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  const got = Object.fromEntries(
    r.stdout
      .trim()
      .split('\n')
      .map((l, i) => [names[i], l.startsWith('Error:') ? 'Error' : l]),
  );
  assert.equal(got, {
    progressing: 'Current',
    halted: 'Failed',
    done: 'Current',
    // Flux's own rule: observedGeneration behind metadata.generation is InProgress.
    'older spec': 'InProgress',
    // No status yet (the first Job has not run): InProgress through the has() guards (Flux's CEL
    // cheatsheet), not an evaluation error.
    'no status yet': 'InProgress',
  });
  // The check can fail the other way too: the same expressions with Degraded counted as current say Current.
  const lax = spawnSync(tool, [], {
    input: JSON.stringify({ check: { ...check, failed: '', current: "status.phase != ''" }, objects: [objects.get('halted')] }),
    encoding: 'utf8',
  });
  assert.is(lax.stdout.trim(), 'Current');
});

s.run();
