/**
 * One measured plan in a fresh process (so peak memory is this plan's): reads the snapshot
 * file, plans the bench spec against it, prints one JSON line with the timings.
 *   node --import tsx bench/plan-once.ts SNAPSHOT SPEC
 */
import { readFileSync } from 'node:fs';
import { parseRolloutSpec } from '../src/rollout-spec/load.ts';
import { parseSnapshot } from '../src/cluster/snapshot-file.ts';
import { buildPlan } from '../src/plan/planner.ts';

const [snapshotFile, specFile] = process.argv.slice(2);
const t0 = performance.now();
const text = readFileSync(snapshotFile, 'utf8');
const spec = parseRolloutSpec(readFileSync(specFile, 'utf8'), specFile);
const snap = parseSnapshot(text, snapshotFile);
if (!snap.snapshot || !spec.spec) throw new Error('bench inputs invalid');
const t1 = performance.now();
const plan = buildPlan({
  spec: spec.spec,
  specMap: spec.map,
  snapshot: snap.snapshot,
  specInfo: { name: 'bench', path: specFile, ref: null, commit: null, sha256: spec.sha256, dirty: null },
});
const t2 = performance.now();
console.log(
  JSON.stringify({
    readParseMs: t1 - t0,
    planMs: t2 - t1,
    totalMs: t2 - t0,
    peakRssMB: process.resourceUsage().maxRSS / 1024,
    nodes: plan.summary.nodes,
    waves: plan.summary.waves,
  }),
);
