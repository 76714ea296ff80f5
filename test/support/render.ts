/**
 * Plans for the renderer tests, built in-process so they are deterministic (no git, no
 * clock): the bundled demo (examples/) and generated 10,000-node clusters. Golden-file
 * helpers live here too.
 */
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as assert from 'uvu/assert';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import { snapshotFromObjects } from '../../src/cluster/snapshot.ts';
import { buildPlan } from '../../src/plan/planner.ts';
import type { BootcOperatorAbilities } from '../../src/domain/bootc-daemon.ts';
import { imageRef } from '../../src/sim/fake-ids.ts';
import { generateCluster } from '../../src/sim/generate.ts';
import type { Plan } from '../../src/plan/types.ts';

export const ROOT = resolve(import.meta.dirname, '../..');
export const GOLDEN_DIR = join(ROOT, 'test/support/golden');

/** The demo plan (`npm run demo`), with spec provenance fixed instead of read from git. */
/**
 * The example plan. `bootcOperator`: what the bootc-operator can do (PlanInput.bootcOperator);
 * default the installed one, whose daemon performs no soft reboots.
 */
export function demoPlan(editSpec: (text: string) => string = (t) => t, bootcOperator?: BootcOperatorAbilities): Plan {
  const specPath = 'examples/rollout.yaml';
  const clusterPath = 'examples/cluster.yaml';
  const loaded = parseRolloutSpec(editSpec(readFileSync(join(ROOT, specPath), 'utf8')), specPath);
  const snap = parseSnapshot(readFileSync(join(ROOT, clusterPath), 'utf8'), clusterPath);
  if (!loaded.spec || !snap.snapshot) throw new Error('the demo spec or snapshot does not load');
  return buildPlan({
    spec: loaded.spec,
    specMap: loaded.map,
    specInfo: { name: loaded.spec.metadata.name, path: specPath, ref: null, commit: null, sha256: loaded.sha256, dirty: null },
    snapshot: snap.snapshot,
    specDiagnostics: loaded.diagnostics,
    bootcOperator,
  });
}

const bigCache = new Map<string, Plan>();

/** A generated cluster of `workers` nodes (30% staged, half of those soft-reboot capable, 5 cordoned). */
export function bigPlan(workers = 10_000, maxUnavailable: string | number = '10%', bootc = true): Plan {
  const key = `${workers}/${maxUnavailable}/${bootc}`;
  const hit = bigCache.get(key);
  if (hit) return hit;
  const objs = generateCluster({ workers, stagedFraction: 0.3, softRebootCapableFraction: 0.5, cordoned: 5, bootc });
  const snapshot = snapshotFromObjects(objs, 'gen');
  const mu = typeof maxUnavailable === 'number' ? String(maxUnavailable) : `"${maxUnavailable}"`;
  const text = `apiVersion: bootcplan.dev/v1alpha1\nkind: Rollout\nmetadata:\n  name: big\nspec:\n  pools:\n    - name: worker\n      image: ${imageRef('os-43.20261115.0')}\n      maxUnavailable: ${mu}\n      rebootPolicy: AllowSoftReboot\n      soakSeconds: 60\n`;
  const loaded = parseRolloutSpec(text, 'big.yaml');
  if (!loaded.spec) throw new Error(JSON.stringify(loaded.diagnostics));
  const plan = buildPlan({
    spec: loaded.spec,
    specMap: loaded.map,
    snapshot,
    specInfo: { name: 'big', path: 'big.yaml', ref: null, commit: null, sha256: 'x', dirty: null },
    // An operator that performs soft reboots (the installed one does not: src/domain/bootc-daemon.ts),
    // so that the renderers meet soft and hard waves side by side at scale.
    bootcOperator: { softReboot: true },
  });
  bigCache.set(key, plan);
  return plan;
}

/** The suite that called golden(), from the stack: the file to rerun with UPDATE_GOLDEN=1. */
function callingSuite(): string {
  for (const m of (new Error().stack ?? '').matchAll(/(\/[^\s:()]+\.test\.ts)/g)) return relative(ROOT, resolve(m[1]));
  return 'the suite';
}

/**
 * Compares `actual` with test/support/golden/NAME (`dir` for the helper's own suite). A missing
 * file fails like a differing one: written only with UPDATE_GOLDEN=1, never by a run that would
 * then compare the output with itself. UPDATE_GOLDEN=1 rewrites the file. A mismatch names the
 * first differing line.
 */
export function golden(name: string, actual: string, dir = GOLDEN_DIR): void {
  const file = join(dir, name);
  const shown = relative(ROOT, file);
  const update = `UPDATE_GOLDEN=1 npx tsx test/run.ts ${callingSuite()}`;
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  if (!existsSync(file)) assert.unreachable(`golden file ${shown} is missing; write it with ${update}, review it and commit it`);
  const expected = readFileSync(file, 'utf8');
  if (expected === actual) return;
  const a = actual.split('\n');
  const e = expected.split('\n');
  let i = 0;
  while (i < a.length && i < e.length && a[i] === e[i]) i++;
  assert.unreachable(
    `output differs from ${shown} at line ${i + 1}:\n  expected: ${JSON.stringify(e[i] ?? '(end of file)')}\n  actual:   ${JSON.stringify(a[i] ?? '(end of output)')}\n` +
      `if the change is intended: ${update}, then review the diff of test/support/golden/`,
  );
}
