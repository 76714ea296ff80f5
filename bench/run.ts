/**
 * npm run bench: measures, in one run, on this machine
 *   1. plan latency and peak memory for 1k / 10k / 50k-node snapshots, JSON and YAML,
 *      with growth ratios (each measurement in a fresh process; median of N runs);
 *   2. markdown and HTML rendering time of the 10k-node plan;
 *   3. rollout makespan of bootcplan against an MCO-style and a bootc-operator-style
 *      rollout on the same simulated clusters, and against the limit
 *      stage + ceil(N/k) x (drain + reboot);
 *   4. with 30% per-node duration jitter: waves against slots against the bound
 *      stage + sum(node times)/k and the MCO-style model (bench/slots.ts);
 *   5. `fleet rehearse` of 100 clusters x 100 nodes in a fresh process: wall, peak RSS (bench/fleet-rehearse.ts);
 *   6. a live `plan` against the test kube-apiserver against a snapshot `plan` of the same
 *      cluster (bench/live-start.ts; BENCH_LIVE_START=0 skips it where no test API server is built);
 *   7. `plan` against a bare read + JSON.parse of the same file: 10,000 nodes, and 10,000 nodes
 *      with 300,000 pods and 20,000 PDBs, with the bytes of snapshot per pod (bench/plan-floor.ts;
 *      BENCH_FLOOR=0 skips it, BENCH_NODE picks the runtime);
 *   8. a live `snapshot` of BENCH_LIVE_SNAPSHOT=N pods from the test kube-apiserver: time, peak
 *      RSS against the projection's heap (bench/live-snapshot.ts; only when set: it takes minutes).
 * Writes bench/out/results.json and bench/out/results.md (the README table is pasted from it).
 *   BENCH_SIZES=1000,10000 BENCH_RUNS=3 npm run bench
 */
import { mkdirSync, writeFileSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { snapshotFile } from './snapshots.ts';
import { benchStartup, startupTable } from './startup.ts';
import { benchRendering } from './render.ts';
import { benchMakespanAsync, makespanTable } from './makespan.ts';
import { benchRehearsal } from './rehearse.ts';
import { progressOnSim } from './progress-sim.ts';
import { benchSlots, slotsTable } from './slots.ts';
import { benchFleetRehearsal, fleetRehearsalLine } from './fleet-rehearse.ts';

const sizes = (process.env.BENCH_SIZES ?? '1000,10000,50000').split(',').map(Number);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const outDir = new URL('./out/', import.meta.url);
mkdirSync(outDir, { recursive: true });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const startupRuns = Number(process.env.BENCH_STARTUP_RUNS ?? 11);
const startup = benchStartup(startupRuns, process.env.BENCH_NODE_BINARIES ? process.env.BENCH_NODE_BINARIES.split(',') : [process.execPath]);

interface PlanRow {
  nodes: number;
  format: string;
  sizeMB: number;
  readParseMs: number;
  planMs: number;
  totalMs: number;
  peakRssMB: number;
}
const planRows: PlanRow[] = [];
for (const format of ['json', 'yaml'] as const) {
  for (const n of sizes) {
    const file = snapshotFile(n, format);
    const samples = [];
    for (let i = 0; i < runs; i++) {
      const out = execFileSync(
        process.execPath,
        ['--import', 'tsx', new URL('./plan-once.ts', import.meta.url).pathname, file, new URL('./spec.yaml', import.meta.url).pathname],
        { encoding: 'utf8', maxBuffer: 1 << 20 },
      );
      samples.push(JSON.parse(out.trim().split('\n').pop()!));
    }
    const row: PlanRow = {
      nodes: n,
      format,
      sizeMB: statSync(file).size / 1e6,
      readParseMs: median(samples.map((x) => x.readParseMs)),
      planMs: median(samples.map((x) => x.planMs)),
      totalMs: median(samples.map((x) => x.totalMs)),
      peakRssMB: median(samples.map((x) => x.peakRssMB)),
    };
    planRows.push(row);
    console.error(
      `plan ${format} ${n}: ${row.totalMs.toFixed(0)} ms (read+parse ${row.readParseMs.toFixed(0)}, plan ${row.planMs.toFixed(0)}), peak ${row.peakRssMB.toFixed(0)} MB`,
    );
  }
}

const render = sizes.includes(10000) || sizes.length ? await benchRendering(Math.min(10000, Math.max(...sizes)), runs) : null;
const makespan = await benchMakespanAsync();
const slots = await benchSlots();
const rehearsals = await benchRehearsal((process.env.BENCH_REHEARSE ?? '1000,10000').split(',').map(Number));
const fleetRehearsal = benchFleetRehearsal(100, 100);

/** API requests per node of a live apply, from the e2e apply suite on the real test API server. */
function apiRequestsPerNode(): { requests: number; nodes: number; perNode: number } | null {
  if (process.env.BENCH_E2E === '0') return null;
  try {
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', new URL('../test/run.ts', import.meta.url).pathname, new URL('../test/e2e/05-apply.test.ts', import.meta.url).pathname],
      { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const m = /full apply of (\d+) nodes .*?: (\d+) API requests by bootcplan \(([\d.]+) per node\)/.exec(out);
    return m ? { nodes: Number(m[1]), requests: Number(m[2]), perNode: Number(m[3]) } : null;
  } catch (err) {
    console.error(`e2e apply could not run (${(err as Error).message.split('\n')[0]}); API requests per node not measured`);
    return null;
  }
}
const api = apiRequestsPerNode();

/** Progress written by simulated applies (docs/apply.md "Resume"): the largest progress object and the bytes written. */
const progress = [];
for (const n of (process.env.BENCH_PROGRESS ?? '10000,50000').split(',').filter(Boolean).map(Number)) {
  progress.push(await progressOnSim(n));
  console.error(`progress ${n}: ${JSON.stringify(progress.at(-1))}`);
}
/** Start-up of a live `plan` against the test API server, within 1.3x of a snapshot `plan` (bench/live-start.ts); needs the test kube-apiserver. */
const liveStart = process.env.BENCH_LIVE_START === '0' ? null : await (await import('./live-start.ts')).liveStart(Number(process.env.BENCH_STARTUP_RUNS ?? 11));
const floorRuns = Number(process.env.BENCH_FLOOR_RUNS ?? 7);
const floor = process.env.BENCH_FLOOR === '0' ? null : (await import('./plan-floor.ts')).planAgainstFloor(floorRuns);
const liveSnapshot = process.env.BENCH_LIVE_SNAPSHOT ? await (await import('./live-snapshot.ts')).liveSnapshot(Number(process.env.BENCH_LIVE_SNAPSHOT)) : null;
/** The live scale run (bench/live-scale.ts) takes minutes: only with BENCH_LIVE=N (nodes). */
const live = process.env.BENCH_LIVE ? await (await import('./live-scale.ts')).liveScale(Number(process.env.BENCH_LIVE)) : null;

const growth = (format: string, a: number, b: number) => {
  const ra = planRows.find((r) => r.format === format && r.nodes === a);
  const rb = planRows.find((r) => r.format === format && r.nodes === b);
  return ra && rb ? rb.totalMs / ra.totalMs : null;
};

const machine = `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node.js ${process.version}`;
const md: string[] = [];
md.push(`Measured ${new Date().toISOString().slice(0, 10)} on ${machine}; median of ${runs} runs, each plan in a fresh process.`, '');
md.push(startupTable(startup, startupRuns), '');
md.push('Plan latency inside one process (after start-up):', '');
md.push('| snapshot | size | read + parse | plan | total | peak RSS |', '|---|---:|---:|---:|---:|---:|');
for (const r of planRows)
  md.push(
    `| ${r.nodes.toLocaleString('en-US')} nodes, ${r.format.toUpperCase()} | ${r.sizeMB.toFixed(1)} MB | ${r.readParseMs.toFixed(0)} ms | ${r.planMs.toFixed(0)} ms | **${r.totalMs.toFixed(0)} ms** | ${r.peakRssMB.toFixed(0)} MB |`,
  );
md.push('');
for (const f of ['json', 'yaml']) {
  const g1 = growth(f, 1000, 10000);
  const g2 = growth(f, 10000, 50000);
  if (g1 || g2)
    md.push(
      `Growth (${f.toUpperCase()}): ${g1 ? `10k/1k = ${g1.toFixed(1)}x` : ''}${g1 && g2 ? ', ' : ''}${g2 ? `50k/10k = ${g2.toFixed(1)}x` : ''} (linear would be 10x and 5x).`,
    );
}
if (render)
  md.push(
    '',
    `Rendering the ${render.nodes.toLocaleString('en-US')}-node plan: text ${render.textMs.toFixed(0)} ms, markdown ${render.markdownMs.toFixed(0)} ms (${render.markdownChars.toLocaleString('en-US')} characters), HTML ${render.htmlMs.toFixed(0)} ms (${(render.htmlBytes / 1e6).toFixed(2)} MB).`,
  );
md.push(
  '',
  `Rehearsal (the real applier on the simulated cluster, in-process): ${rehearsals.map((r) => `${r.nodes.toLocaleString('en-US')} nodes ${(r.wallMs / 1000).toFixed(1)} s (${r.events.toLocaleString('en-US')} events)`).join(', ')}.`,
);
md.push('', fleetRehearsalLine(fleetRehearsal));
md.push('', makespanTable(makespan));
md.push('', slotsTable(slots));
if (api)
  md.push(
    '',
    `Live apply on the e2e API server (kube-apiserver v1.35.4): ${api.requests} API requests by bootcplan for ${api.nodes} nodes, ${api.perNode} per node (reads, watches, JSON patches, evictions, lock and progress writes).`,
  );
for (const p of progress)
  md.push(
    '',
    `Progress of a simulated apply of ${p.nodes.toLocaleString('en-US')} nodes (${p.waves} waves): run record at most ${p.largestRunBytes} bytes (${p.runWrites} writes), node entry at most ${p.largestNodeEntryBytes} bytes (${p.nodeEntryWrites.toLocaleString('en-US')} writes), ${(p.totalBytes / 1e6).toFixed(2)} MB of progress written in all (${p.bytesPerNode.toFixed(0)} bytes per node).`,
  );
if (liveStart) md.push('', (await import('./live-start.ts')).liveStartLine(liveStart));
if (floor) md.push('', (await import('./plan-floor.ts')).floorTable(floor, floorRuns));
if (liveSnapshot) md.push('', (await import('./live-snapshot.ts')).liveSnapshotLine(liveSnapshot));
if (live)
  md.push(
    '',
    `Live apply of ${live.nodes.toLocaleString('en-US')} nodes on the test kube-apiserver: ${live.requestsPerNode.toFixed(2)} API requests per node (${live.requests}), ${live.bytesSentPerNode.toFixed(0)} bytes sent per node, largest object written ${live.largestWritten.bytes} bytes (${live.largestWritten.resource}), run record ${live.largestBootcplanObject} bytes, ${live.wallSeconds.toFixed(0)} s, peak RSS ${live.peakRssMB.toFixed(0)} MB.`,
  );
const results = {
  machine,
  runs,
  startup,
  plan: planRows,
  render,
  rehearsals,
  fleetRehearsal,
  makespan,
  slots,
  api,
  progress,
  liveStart,
  floor,
  liveSnapshot,
  live,
};
writeFileSync(new URL('results.json', outDir), JSON.stringify(results, null, 2));
writeFileSync(new URL('results.md', outDir), md.join('\n') + '\n');
console.log(md.join('\n'));
