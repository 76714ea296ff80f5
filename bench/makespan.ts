/**
 * Rollout makespan on simulated clusters: bootcplan (the real applier on the simulator)
 * against an MCO-style and a bootc-operator-style rollout (bench/strategies.ts) and the
 * limit stage + ceil(N/k) x (drain + reboot).
 */
import { stringify } from 'yaml';
import { imageRef } from '../src/sim/fake-ids.ts';
import { generateCluster } from '../src/sim/generate.ts';
import { snapshotFromObjects } from '../src/cluster/snapshot.ts';
import { parseRolloutSpec } from '../src/rollout-spec/load.ts';
import { buildPlan } from '../src/plan/planner.ts';
import { SimCluster } from '../src/sim/cluster.ts';
import { apply } from '../src/apply/applier.ts';
import type { ClusterSnapshot, KObject } from '../src/cluster/types.ts';
import { mcoStyleMakespan, bootcOperatorStyleMakespan, limitMakespan, type Node } from './strategies.ts';

export interface MakespanRow {
  nodes: number;
  maxUnavailable: string;
  k: number;
  stage: number;
  reboot: number;
  softFraction: number;
  bootcplan: number;
  softReboots: number;
  limit: number;
  mcoStyle: number;
  bootcOperatorStyle: number;
}

async function bootcplanMakespan(
  snap: ClusterSnapshot,
  pct: number,
  d: { stage: number; drain: number; reboot: number; softReboot: number; ready: number },
  softFraction: number,
) {
  const spec = parseRolloutSpec(
    stringify({
      apiVersion: 'bootcplan.dev/v1alpha1',
      kind: 'Rollout',
      metadata: { name: 'bench' },
      spec: {
        pools: [
          { name: 'worker', image: imageRef('os-43.20261115.0'), maxUnavailable: `${pct}%`, rebootPolicy: softFraction > 0 ? 'AllowSoftReboot' : 'RebootOnly' },
        ],
      },
    }),
    'bench.yaml',
  );
  const mk = (s: ClusterSnapshot) =>
    buildPlan({
      spec: spec.spec!,
      specMap: spec.map,
      snapshot: s,
      durations: d,
      specInfo: { name: 'bench', path: 'bench.yaml', ref: null, commit: null, sha256: spec.sha256, dirty: null },
    });
  const plan = mk(snap);
  // Soft-reboot capability is a property of the staged deployment; a stable hash of the
  // node name decides it, so every strategy sees the same nodes as capable.
  const capable = (name: string) => hashFraction(name) < softFraction;
  const sim = new SimCluster(snap, { durations: d, softRebootCapable: capable });
  const r = await apply({ plan, replan: mk, driver: sim.driver('bench'), holder: 'bench' });
  return { seconds: r.durationSeconds, k: plan.pools[0].maxUnavailable.resolved, soft: sim.reboots.filter((x) => x.kind === 'soft').length };
}

function hashFraction(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h / 2 ** 32;
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

export async function benchMakespanAsync(): Promise<MakespanRow[]> {
  const rows: MakespanRow[] = [];
  const sizes = (process.env.BENCH_MAKESPAN_NODES ?? '60,300,1000').split(',').map(Number);
  for (const n of sizes) {
    const objs = generateCluster({ workers: n, stagedFraction: 0, bootc: true });
    const snap = snapshotFromObjects(objs, 'bench');
    const nodes = workerNodes(objs);
    for (const [pct, stage, softFraction] of [
      [10, 150, 0],
      [10, 300, 0],
      [10, 600, 0],
      [10, 300, 0.5],
      [1, 150, 0],
      [1, 300, 0],
      [1, 600, 0],
      [1, 300, 0.5],
    ] as const) {
      const d = { stage, drain: 60, reboot: 300, softReboot: 60, ready: 0 };
      const b = await bootcplanMakespan(snap, pct, d, softFraction);
      rows.push({
        nodes: n,
        maxUnavailable: `${pct}%`,
        k: b.k,
        stage,
        reboot: d.reboot,
        softFraction,
        bootcplan: b.seconds,
        softReboots: b.soft,
        limit: limitMakespan(n, b.k, d),
        mcoStyle: mcoStyleMakespan(nodes, pct, d),
        bootcOperatorStyle: bootcOperatorStyleMakespan(nodes, pct, d),
      });
      console.error(
        `makespan N=${n} stage=${stage} soft=${softFraction}: bootcplan ${b.seconds}s, limit ${rows.at(-1)!.limit}s, MCO-style ${rows.at(-1)!.mcoStyle}s`,
      );
    }
  }
  return rows;
}

const fmt = (s: number) => `${Math.round(s).toLocaleString('en-US')} s`;

export function makespanTable(rows: MakespanRow[]): string {
  const out = [
    'Makespan (drain 60 s, reboot 300 s, soft reboot 60 s, ready 0):',
    '',
    '| nodes | maxUnavailable (k) | stage | soft-capable | bootcplan | limit | bootcplan / limit | MCO-style | MCO-style / bootcplan | bootc-operator-style | bootc-op / bootcplan |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    out.push(
      `| ${r.nodes} | ${r.maxUnavailable} (${r.k}) | ${r.stage} s | ${Math.round(r.softFraction * 100)}% (${r.softReboots} soft) | **${fmt(r.bootcplan)}** | ${fmt(r.limit)} | ${(r.bootcplan / r.limit).toFixed(3)} | ${fmt(r.mcoStyle)} | **${(r.mcoStyle / r.bootcplan).toFixed(2)}x** | ${fmt(r.bootcOperatorStyle)} | ${(r.bootcOperatorStyle / r.bootcplan).toFixed(2)}x |`,
    );
  }
  return out.join('\n');
}
