/**
 * Makespan with per-node duration jitter (docs/spec.md "Slots": slots that never idle): 1,000 nodes, each
 * node's drain, reboot and ready scaled by its own factor in [1 - j, 1 + j] (src/sim/jitter.ts,
 * seeded), maxUnavailable 10% (k = 100) and 1% (k = 10). For each: bootcplan in waves and in
 * slots (the real applier on the simulator), the lower bound stage + sum(node times) / k (no
 * rollout that keeps k nodes out at most can beat it: the work is sum(node times), done k at a
 * time, after staging), and the MCO-style model (bench/strategies.ts) with the same per-node
 * factors (the MCO pulls the image inside each node's window: stage + jittered drain, reboot
 * and ready per node; staging is not jittered, as in the simulator).
 *   npx tsx bench/slots.ts            (BENCH_SLOTS_SEEDS=1,2,3 BENCH_SLOTS_NODES=1000)
 */
import { stringify } from 'yaml';
import { imageRef } from '../src/sim/fake-ids.ts';
import { generateCluster } from '../src/sim/generate.ts';
import { snapshotFromObjects } from '../src/cluster/snapshot.ts';
import { parseRolloutSpec } from '../src/rollout-spec/load.ts';
import { buildPlan } from '../src/plan/planner.ts';
import { SimCluster } from '../src/sim/cluster.ts';
import { jitterFactor, type JitterOptions } from '../src/sim/jitter.ts';
import { apply } from '../src/apply/applier.ts';
import type { ClusterSnapshot, KObject } from '../src/cluster/types.ts';
import type { Plan } from '../src/plan/types.ts';
import { mcoStyleMakespan, type Node, type Durations } from './strategies.ts';

export interface SlotsRow {
  nodes: number;
  maxUnavailable: string;
  k: number;
  jitter: number;
  seed: number;
  waves: number;
  slots: number;
  /** stage + sum(node times) / k */
  bound: number;
  mcoStyle: number;
  wavesEstimate: number;
  slotsEstimate: number;
  replans: { waves: number; slots: number };
  peak: { waves: number; slots: number };
  wallMs: { waves: number; slots: number };
}

const D: Durations = { stage: 300, drain: 60, reboot: 300, softReboot: 60, ready: 30 };

async function run(snap: ClusterSnapshot, pct: number, rollout: 'waves' | 'slots', jitter: JitterOptions) {
  const pool: Record<string, unknown> = { name: 'worker', image: imageRef('os-43.20261115.0'), maxUnavailable: `${pct}%`, rollout };
  const spec = parseRolloutSpec(
    stringify({ apiVersion: 'bootcplan.dev/v1alpha1', kind: 'Rollout', metadata: { name: 'bench' }, spec: { pools: [pool] } }),
    'bench.yaml',
  );
  if (!spec.spec) throw new Error(JSON.stringify(spec.diagnostics));
  let replans = 0;
  const mk = (s: ClusterSnapshot): Plan =>
    buildPlan({
      spec: spec.spec!,
      specMap: spec.map,
      snapshot: s,
      durations: D,
      specInfo: { name: 'bench', path: 'bench.yaml', ref: null, commit: null, sha256: spec.sha256, dirty: null },
    });
  const plan = mk(snap);
  const sim = new SimCluster(snap, { durations: D, jitter });
  const t = performance.now();
  const r = await apply({
    plan,
    replan: (s) => {
      replans++;
      return mk(s);
    },
    driver: sim.driver('bench'),
    holder: 'bench',
  });
  if (sim.reboots.length !== plan.pools[0].waves.flat().length)
    throw new Error(`${rollout}: ${sim.reboots.length} reboots for ${plan.pools[0].waves.flat().length} nodes`);
  return { seconds: r.durationSeconds, plan, replans, peak: sim.peakUnavailable.get('worker') ?? 0, wallMs: performance.now() - t };
}

function workerNodes(objs: KObject[]): Node[] {
  return objs
    .filter((o) => o.kind === 'Node' && o.metadata.name.startsWith('worker-'))
    .map((o) => ({
      name: o.metadata.name,
      zone: o.metadata.labels?.['topology.kubernetes.io/zone'] ?? '',
      createdAt: Date.parse(o.metadata.creationTimestamp ?? '2026-01-01T00:00:00Z'),
      softCapable: false,
    }));
}

export async function benchSlots(): Promise<SlotsRow[]> {
  const n = Number(process.env.BENCH_SLOTS_NODES ?? 1000);
  const seeds = (process.env.BENCH_SLOTS_SEEDS ?? '1,2,3').split(',').map(Number);
  const fraction = Number(process.env.BENCH_SLOTS_JITTER ?? 0.3);
  const objs = generateCluster({ workers: n, stagedFraction: 0, bootc: true });
  const snap = snapshotFromObjects(objs, 'bench');
  const nodes = workerNodes(objs);
  const rows: SlotsRow[] = [];
  for (const pct of [10, 1]) {
    for (const seed of seeds) {
      const jitter = { fraction, seed };
      const w = await run(snap, pct, 'waves', jitter);
      const s = await run(snap, pct, 'slots', jitter);
      const k = s.plan.pools[0].waveSize;
      const f = (name: string) => jitterFactor(jitter, name);
      const work = nodes.reduce((sum, x) => sum + (D.drain + D.reboot + D.ready) * f(x.name), 0);
      const longest = Math.max(...nodes.map((x) => (D.drain + D.reboot + D.ready) * f(x.name)));
      rows.push({
        nodes: n,
        maxUnavailable: `${pct}%`,
        k,
        jitter: fraction,
        seed,
        waves: w.seconds,
        slots: s.seconds,
        bound: D.stage + Math.max(work / k, longest),
        mcoStyle: mcoStyleMakespan(nodes, pct, D, (x) => D.stage + (D.drain + D.reboot + D.ready) * f(x.name)),
        wavesEstimate: w.plan.summary.estimatedSeconds,
        slotsEstimate: s.plan.summary.estimatedSeconds,
        replans: { waves: w.replans, slots: s.replans },
        peak: { waves: w.peak, slots: s.peak },
        wallMs: { waves: w.wallMs, slots: s.wallMs },
      });
      const r = rows.at(-1)!;
      console.error(
        `slots N=${n} k=${k} seed=${seed}: waves ${Math.round(r.waves)} s, slots ${Math.round(r.slots)} s, bound ${Math.round(r.bound)} s, MCO-style ${Math.round(r.mcoStyle)} s (re-plans ${r.replans.waves}/${r.replans.slots}, wall ${(r.wallMs.waves / 1000).toFixed(1)}/${(r.wallMs.slots / 1000).toFixed(1)} s)`,
      );
    }
  }
  return rows;
}

const fmt = (s: number) => `${Math.round(s).toLocaleString('en-US')} s`;

export function slotsTable(rows: SlotsRow[]): string {
  const d = D;
  const out = [
    `Makespan with per-node jitter ±${Math.round((rows[0]?.jitter ?? 0) * 100)}% (drain ${d.drain} s, reboot ${d.reboot} s, ready ${d.ready} s, each scaled by the node's own factor; stage ${d.stage} s, not scaled; nothing staged before):`,
    '',
    '| nodes | maxUnavailable (k) | seed | waves | slots | bound stage + Σ/k | slots / bound | waves / slots | MCO-style | MCO-style / slots | plan estimate waves / slots | re-plans waves / slots | peak out (waves / slots) |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    out.push(
      `| ${r.nodes.toLocaleString('en-US')} | ${r.maxUnavailable} (${r.k}) | ${r.seed} | ${fmt(r.waves)} | **${fmt(r.slots)}** | ${fmt(r.bound)} | ${(r.slots / r.bound).toFixed(3)} | **${(r.waves / r.slots).toFixed(3)}x** | ${fmt(r.mcoStyle)} | ${(r.mcoStyle / r.slots).toFixed(2)}x | ${fmt(r.wavesEstimate)} / ${fmt(r.slotsEstimate)} | ${r.replans.waves} / ${r.replans.slots} | ${r.peak.waves} / ${r.peak.slots} |`,
    );
  }
  return out.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await benchSlots();
  console.log(slotsTable(rows));
}
