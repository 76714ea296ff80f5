/**
 * Start-up of the command as installed: each case in fresh processes, the compiled CLI
 * (bin/bootcplan.mjs, dist/bundle/) and the TypeScript sources through tsx (bin/bootcplan-dev.mjs)
 * measured alternately, every case on every runtime in turn (round-robin), median wall and CPU
 * time; `node -e 0` is the runtime's own floor.
 *   npm run bench:startup            (BENCH_STARTUP_RUNS=11, BENCH_NODE_BINARIES=/path/node,...)
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { snapshotFile } from './snapshots.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface StartupRow {
  runtime: string;
  case: string;
  targetMs: number | null;
  compiledMs: number;
  compiledCpuMs: number | null;
  tsxMs: number | null;
  tsxCpuMs: number | null;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** GNU time gives the child's CPU time (user + sys): what the process costs, even on a busy machine. */
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

function measure(node: string, args: string[]): { wallMs: number; cpuMs: number | null } {
  const [cmd, argv] = TIME ? [TIME, ['-f', 'cpu %U %S', node, ...args]] : [node, args];
  const t = performance.now();
  const r = spawnSync(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const wallMs = performance.now() - t;
  if (r.status !== 0 && r.status !== 2) throw new Error(`${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  return { wallMs, cpuMs: m ? (Number(m[1]) + Number(m[2])) * 1000 : null };
}

export function benchStartup(runs: number, nodes: string[] = [process.execPath]): StartupRow[] {
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
  const big = snapshotFile(10000, 'json');
  const cases: { name: string; args: string[]; targetMs: number | null }[] = [
    { name: 'node -e 0 (the runtime alone)', args: [], targetMs: null },
    { name: 'bootcplan --version', args: ['--version'], targetMs: 150 },
    { name: 'bootcplan plan, the demo (text)', args: ['plan', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml'], targetMs: 400 },
    { name: 'bootcplan plan, 10,000-node JSON snapshot (-o json)', args: ['plan', '-f', 'bench/spec.yaml', '--cluster', big, '-o', 'json'], targetMs: 1000 },
  ];
  // Round-robin: each round runs every case on every runtime once, so a burst of load on this
  // shared machine falls on all of them alike instead of on whichever was being measured.
  const versions = nodes.map((node) => spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim());
  const samples = nodes.map(() => cases.map(() => ({ compiled: [] as number[], cpu: [] as number[], tsx: [] as number[], tsxCpu: [] as number[] })));
  for (let i = 0; i < runs; i++) {
    nodes.forEach((node, ni) =>
      cases.forEach((c, ci) => {
        const s = samples[ni][ci];
        const bare = c.args.length === 0;
        const m = measure(node, bare ? ['-e', '0'] : ['bin/bootcplan.mjs', ...c.args]);
        s.compiled.push(m.wallMs);
        if (m.cpuMs !== null) s.cpu.push(m.cpuMs);
        if (bare) return;
        const t = measure(node, ['bin/bootcplan-dev.mjs', ...c.args]);
        s.tsx.push(t.wallMs);
        if (t.cpuMs !== null) s.tsxCpu.push(t.cpuMs);
      }),
    );
  }
  const rows: StartupRow[] = [];
  nodes.forEach((_, ni) =>
    cases.forEach((c, ci) => {
      const s = samples[ni][ci];
      const row = {
        runtime: `Node.js ${versions[ni]}`,
        case: c.name,
        targetMs: c.targetMs,
        compiledMs: median(s.compiled),
        compiledCpuMs: s.cpu.length ? median(s.cpu) : null,
        tsxMs: s.tsx.length ? median(s.tsx) : null,
        tsxCpuMs: s.tsxCpu.length ? median(s.tsxCpu) : null,
      };
      rows.push(row);
      console.error(
        `startup ${row.runtime} ${c.name}: ${row.compiledMs.toFixed(0)} ms (CPU ${row.compiledCpuMs?.toFixed(0) ?? '?'} ms)${row.tsxMs === null ? '' : ` (tsx ${row.tsxMs.toFixed(0)} ms, CPU ${row.tsxCpuMs?.toFixed(0) ?? '?'} ms)`}`,
      );
    }),
  );
  return rows;
}

export function startupTable(rows: StartupRow[], runs: number): string {
  const ms = (x: number | null) => (x === null ? '' : `${x.toFixed(0)} ms`);
  const lines = [
    `Start-up, median of ${runs} fresh processes each (compiled and tsx measured alternately, round-robin over cases and runtimes; wall time, and CPU: user + sys of the process and its children):`,
    '',
    '| runtime | command | compiled (dist/bundle/) wall | CPU | tsx (sources) wall | CPU | target (wall) |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const ok = r.targetMs === null ? '' : `${r.compiledMs <= r.targetMs ? '≤' : '>'} ${r.targetMs} ms`;
    lines.push(`| ${r.runtime} | ${r.case} | **${ms(r.compiledMs)}** | ${ms(r.compiledCpuMs)} | ${ms(r.tsxMs)} | ${ms(r.tsxCpuMs)} | ${ok} |`);
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const runs = Number(process.env.BENCH_STARTUP_RUNS ?? 11);
  const nodes = process.env.BENCH_NODE_BINARIES ? process.env.BENCH_NODE_BINARIES.split(',') : [process.execPath];
  console.log(startupTable(benchStartup(runs, nodes), runs));
}
