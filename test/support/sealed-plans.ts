/**
 * A git repository with a spec and a cluster snapshot for the sealed-plan suites
 * (test/cli/sealed-plans*.test.ts, docs/safety.md): the plan saved from them with `plan --out`,
 * applied against a simulator of the cluster, and the tampers a saved plan is put through. The
 * suites are split so the test runner's workers run them side by side (docs/development.md
 * "Tests in parallel").
 */
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { DriverFactory } from '../../src/app/ports.ts';
import type { Plan } from '../../src/plan/types.ts';
import { planIdOf } from '../../src/plan/planner.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from './cluster.ts';
import { clusterObjects, MS, CP } from './bootimages.ts';
import { newSim } from './apply.ts';
import { readSnapshotFile, nodeInputs } from '../../src/app/inputs.ts';
import { cli } from './cli.ts';
import { gitIn } from './git.ts';

/**
 * A fresh repository (one per suite file): a pool of 6 workers, w-01 cordoned by an administrator
 * (the plan blocks it), the spec rolling them out, and a control-plane replacement the spec does
 * not allow, committed.
 */
export function sealedRepo() {
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

  /** `plan --out ./plan.json` through the CLI; the plan it saved. */
  async function savedPlan(spec: string, cluster: string, extra: string[] = []): Promise<Plan> {
    const r = await cli(['plan', '-f', spec, '--ref', 'HEAD', '--cluster', cluster, '--out', './plan.json', ...extra], { cwd: repo });
    assert.ok(existsSync(join(repo, 'plan.json')), r.err);
    return JSON.parse(readFileSync(join(repo, 'plan.json'), 'utf8'));
  }

  let reviewed: string | undefined;
  /**
   * The plan of bootcplan.yaml and cluster.yaml saved through the CLI, a copy of it for each call:
   * the same inputs give the same plan, so a suite that tampers with it in many tests saves it
   * once.
   */
  async function reviewedPlan(): Promise<Plan> {
    reviewed ??= JSON.stringify(await savedPlan('bootcplan.yaml', 'cluster.yaml'));
    return JSON.parse(reviewed) as Plan;
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
  return { repo, savedPlan, reviewedPlan, applyAgainstSim, write };
}

export const resealed = (p: Plan): Plan => ({ ...p, id: planIdOf(p) });

export type Tamper = [string, (p: Plan) => void];
export const worker = (p: Plan) => p.pools.find((x) => x.name === 'worker')!;
export const TAMPERS: Tamper[] = [
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

/**
 * Once the cluster has moved on (an apply resumes), the reviewed waves run; every tamper that
 * would change what is written or which node is taken is still refused. Not compared then, by
 * design: how the reviewed nodes are grouped into waves (within the budget) and the reboot kind
 * the plan expected (the applier decides soft or hard from the BootcNode at run time).
 */
export const MOVED_EXEMPT = ["a node's reboot kind", 'the waves reordered (node entries renumbered to match)'];
