/**
 * `apply`, `rehearse`, `status`, `unlock`: commander wiring for the applier (src/apply),
 * the simulated cluster (src/sim) and their renderers. I/O only; the engine is elsewhere.
 */
import { Command, Option } from 'commander';
import { createInterface } from 'node:readline/promises';
import type { CliIO } from './main.ts';
import { useColor, renderPlan } from './main.ts';
import { readSpec, requireValidSpec, readSnapshotFile, readPlanFile } from './inputs.ts';
import { InputError, StalePlanError, ClusterApiError, EXIT } from '../base/errors.ts';
import { buildPlan } from '../plan/planner.ts';
import type { Plan, PhaseDurations } from '../plan/types.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { RolloutSpec } from '../spec/types.ts';
import { parseDurations } from '../domain/timing.ts';
import { windowPolicy } from '../apply/policy.ts';
import { verifyPlanSpec, planSpecFile } from './provenance.ts';
import { apply, checkApplicable } from '../apply/applier.ts';
import type { ClusterDriver, ProgressRecord, LockRecord } from '../apply/driver.ts';
import type { ApplyEvent } from '../apply/events.ts';
import { rehearse } from '../sim/rehearse.ts';
import { eventToNdjson, formatEventLine, TtyProgress } from '../render/events.ts';
import { renderRehearsalText, rehearsalJson, rehearsalReport } from '../render/rehearsal.ts';
import { renderHtml } from '../render/html.ts';
import { formatDuration } from '../render/format.ts';

export interface DriverFlags {
  kubeconfig?: string;
  context?: string;
}

export type DriverFactory = (flags: DriverFlags, io: CliIO) => Promise<{ driver: ClusterDriver; holder: string; close?: () => void }>;

const liveDriver: DriverFactory = async (flags, io) => {
  let mod: typeof import('../kube/index.ts');
  try {
    mod = await import('../kube/index.ts');
  } catch (err) {
    throw new ClusterApiError(`the Kubernetes driver cannot be loaded: ${(err as Error).message}`, 'rehearse against a snapshot instead: bootcplan rehearse -f SPEC --cluster SNAPSHOT');
  }
  const { asClusterApiError } = await import('./live.ts');
  try {
    const driver = mod.openKubeDriver(flags, io.env);
    return { driver, holder: mod.defaultHolder(io.env), close: () => (driver as unknown as { close?: () => void }).close?.() };
  } catch (err) {
    throw asClusterApiError(err);
  }
};

let driverFactory: DriverFactory = liveDriver;

/** Tests (and embedders) run apply/status/unlock against another driver, e.g. the simulator. */
export function setDriverFactory(f: DriverFactory | null): void {
  driverFactory = f ?? liveDriver;
}

interface SpecForPlan {
  spec: RolloutSpec;
  replan: (s: ClusterSnapshot) => Plan;
}

/** The spec a saved plan was made from, checked by hash (a changed spec makes the plan stale). */
function specOfSavedPlan(plan: Plan, durations?: PhaseDurations): SpecForPlan {
  // What was reviewed is what runs: the spec must still hash to what the plan recorded.
  verifyPlanSpec(plan);
  const read = readSpec(planSpecFile(plan), plan.spec.ref ? plan.spec.commit ?? plan.spec.ref : undefined);
  requireValidSpec(read);
  const spec = read.loaded.spec!;
  return { spec, replan: (s) => buildPlan({ spec, specMap: read.loaded.map, specInfo: read.info, snapshot: s, specDiagnostics: read.loaded.diagnostics, durations: durations ?? plan.durations }) };
}

function specFromFile(file: string, durations?: PhaseDurations): SpecForPlan & { plan: (s: ClusterSnapshot) => Plan } {
  const read = readSpec(file);
  requireValidSpec(read);
  const spec = read.loaded.spec!;
  const mk = (s: ClusterSnapshot) => buildPlan({ spec, specMap: read.loaded.map, specInfo: read.info, snapshot: s, specDiagnostics: read.loaded.diagnostics, durations });
  return { spec, replan: mk, plan: mk };
}

function eventWriter(io: CliIO, json: boolean): { write: (e: ApplyEvent) => void } {
  if (json) return { write: (e) => io.stdout(eventToNdjson(e)) };
  if (io.stderrIsTTY) {
    const tty = new TtyProgress({ color: useColor(io, true) });
    return { write: (e) => io.stderr(tty.update(e)) };
  }
  return { write: (e) => io.stderr(formatEventLine(e) + '\n') };
}

async function confirm(io: CliIO, plan: Plan): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`Apply plan ${plan.id} (${plan.summary.nodes} nodes in ${plan.summary.waves} waves)? Only 'yes' is accepted: `);
    return answer.trim() === 'yes';
  } finally {
    rl.close();
  }
}

export function registerApplyCommands(program: Command, io: CliIO, setExit: (n: number) => void): void {
  program
    .command('apply')
    .description('carry a plan out in waves (a saved plan, or plan the spec now and apply it)')
    .argument('[planfile]', 'a plan saved with plan --out')
    .option('-f, --file <spec>', 'rollout spec (plans it against the cluster first)', 'bootcplan.yaml')
    .option('--kubeconfig <path>', 'kubeconfig for the cluster')
    .option('--context <name>', 'kubeconfig context')
    .option('--auto-approve', 'do not ask for confirmation (needed without a terminal)')
    .option('--step', 'advance at most one wave, then exit 0')
    .option('--json', 'print events as NDJSON on stdout')
    .action(async (planfile: string | undefined, opts) => {
      const interactive = (io as CliIO & { stdinIsTTY?: boolean }).stdinIsTTY ?? (io.stdoutIsTTY && io.stderrIsTTY);
      if (!opts.autoApprove && !interactive) {
        throw new InputError('apply needs confirmation, and there is no terminal to ask on', [], 'review the plan (bootcplan plan / show), then run apply with --auto-approve');
      }
      const saved = planfile ? readPlanFile(planfile) : null;
      if (saved) checkApplicable(saved);
      const specs = saved ? specOfSavedPlan(saved) : specFromFile(opts.file);
      const { driver, holder, close } = await driverFactory({ kubeconfig: opts.kubeconfig, context: opts.context }, io);
      try {
        let plan = saved;
        if (!plan) {
          plan = (specs as ReturnType<typeof specFromFile>).plan(await driver.snapshot());
          if (!opts.json) io.stdout(renderPlan(plan, 'text', { color: useColor(io, io.stdoutIsTTY) }));
          checkApplicable(plan);
        }
        if (!opts.autoApprove && !(await confirm(io, plan))) {
          io.stderr('apply cancelled\n');
          setExit(EXIT.error);
          return;
        }
        const w = eventWriter(io, !!opts.json);
        const r = await apply({ plan, replan: specs.replan, driver, holder, step: !!opts.step, onEvent: w.write, policy: windowPolicy(specs.spec.spec.maintenanceWindows, plan) });
        if (!opts.json) {
          const what = r.outcome === 'stepped' ? `advanced ${r.wavesRun} wave; run apply again to continue` : r.outcome === 'nothing-to-do' ? 'nothing to do, the plan was applied already' : `done in ${formatDuration(r.durationSeconds)}`;
          io.stdout(`Apply of plan ${r.planId}: ${what}.${r.blocked.length ? ` ${r.blocked.length} blocked node(s) were not updated: ${r.blocked.join(', ')}; plan again once they are back.` : ''}\n`);
        }
      } finally {
        close?.();
      }
    });

  program
    .command('rehearse')
    .description('run the apply against a simulated cluster built from a snapshot and report the timeline')
    .argument('[planfile]', 'a plan saved with plan --out')
    .option('-f, --file <spec>', 'rollout spec', 'bootcplan.yaml')
    .option('--cluster <snapshot>', 'the snapshot to simulate (default for a saved plan: the snapshot it was made from)')
    .option('--durations <list>', 'phase durations in seconds: stage=600,drain=60,reboot=300,soft-reboot=60,ready=30')
    .option('--fail-rate <r>', 'probability that a reboot fails (0..1)')
    .option('--seed <n>', 'seed for the faults', '1')
    .option('--events', 'also list every event (text output)')
    .addOption(new Option('-o, --output <format>', 'output format (html: the plan report with the timeline drawn from the rehearsal)').choices(['text', 'json', 'html']).default('text'))
    .action(async (planfile: string | undefined, opts) => {
      const saved = planfile ? readPlanFile(planfile) : null;
      const base = saved?.durations;
      const durations = parseDurations(opts.durations, base);
      if (typeof durations === 'string') throw new InputError(`--durations: ${durations}`, [], 'e.g. --durations stage=600,drain=60,reboot=300,soft-reboot=60,ready=30');
      let failRate = 0;
      if (opts.failRate !== undefined) {
        failRate = Number(opts.failRate);
        if (!Number.isFinite(failRate) || failRate < 0 || failRate > 1) throw new InputError(`--fail-rate ${opts.failRate}: expected a number from 0 to 1`);
      }
      const seed = Number(opts.seed);
      if (!Number.isInteger(seed)) throw new InputError(`--seed ${opts.seed}: expected an integer`);
      let clusterFile: string | undefined = opts.cluster;
      if (!clusterFile && saved?.cluster.source.startsWith('file:')) clusterFile = saved.cluster.source.slice('file:'.length);
      if (!clusterFile) throw new InputError('rehearse needs a cluster snapshot', [], 'pass --cluster SNAPSHOT (bootcplan snapshot -o FILE writes one)');
      const snapshot = readSnapshotFile(clusterFile);
      let plan: Plan;
      let replan: (s: ClusterSnapshot) => Plan;
      if (saved) {
        checkApplicable(saved);
        plan = saved;
        replan = specOfSavedPlan(saved, durations).replan;
      } else {
        const s = specFromFile(opts.file, durations);
        plan = s.plan(snapshot);
        replan = s.replan;
      }
      const { rehearsal, error } = await rehearse({
        plan, replan, snapshot, durations,
        faults: failRate > 0 ? { seed, rebootFailRate: failRate } : null,
      });
      const report = rehearsalReport(rehearsal, error);
      if (report.exitCode === EXIT.stale && error) throw error;
      io.stdout(opts.output === 'json' ? rehearsalJson(report)
        : opts.output === 'html' ? renderHtml(plan, { rehearsal: report })
        : renderRehearsalText(report, { color: useColor(io, io.stdoutIsTTY), events: !!opts.events }));
      if (error) throw error;
      setExit(EXIT.ok);
    });

  program
    .command('status')
    .description('show the apply lock and the progress of the last apply')
    .option('--kubeconfig <path>', 'kubeconfig for the cluster')
    .option('--context <name>', 'kubeconfig context')
    .option('--json', 'print {lock, progress} as JSON')
    .action(async (opts) => {
      const { driver, close } = await driverFactory({ kubeconfig: opts.kubeconfig, context: opts.context }, io);
      try {
        const [lock, progress] = [await driver.readLock(), await driver.readProgress()];
        const expired = lock ? Date.parse(lock.renewedAt) / 1000 + lock.ttlSeconds < driver.clock.now() : false;
        if (opts.json) {
          io.stdout(JSON.stringify({ lock: lock ? { ...lock, expired } : null, progress }, null, 2) + '\n');
          return;
        }
        io.stdout(renderStatus(lock, expired, progress));
      } finally {
        close?.();
      }
    });

  program
    .command('unlock')
    .description('release the apply lock of an apply that died (needs its lock id, see status)')
    .argument('<lockId>', 'the lock id printed by status or by the apply that holds it')
    .option('--kubeconfig <path>', 'kubeconfig for the cluster')
    .option('--context <name>', 'kubeconfig context')
    .action(async (lockId: string, opts) => {
      const { driver, close } = await driverFactory({ kubeconfig: opts.kubeconfig, context: opts.context }, io);
      try {
        const lock = await driver.readLock();
        if (!lock) {
          io.stdout('no apply lock is held\n');
          return;
        }
        if (lock.lockId !== lockId) {
          throw new InputError(`lock id ${lockId} does not match the lock held by ${lock.holder} since ${lock.since}`, [], `the current lock id is ${lock.lockId}; check that this apply is really dead before releasing it`);
        }
        await driver.releaseLock(lockId);
        io.stdout(`released lock ${lockId} (held by ${lock.holder} since ${lock.since}, plan ${lock.planId}); apply again to resume\n`);
      } finally {
        close?.();
      }
    });
}

export function renderStatus(lock: LockRecord | null, expired: boolean, progress: ProgressRecord | null): string {
  const out: string[] = [];
  out.push(lock
    ? `lock: held by ${lock.holder} since ${lock.since} (plan ${lock.planId}, lock id ${lock.lockId}${expired ? ', expired: the next apply takes it over' : ''})`
    : 'lock: free');
  if (!progress) {
    out.push('progress: no apply has run on this cluster');
    return out.join('\n') + '\n';
  }
  out.push(`plan ${progress.planId}: ${progress.done ? 'done' : 'in progress'} (started ${progress.startedAt}, last update ${progress.updatedAt})`);
  for (const [name, p] of Object.entries(progress.pools)) {
    const finished = [...p.finishedWaves].sort((a, b) => a - b);
    out.push(`  ${name}: ${p.done ? 'done' : p.halted ? `HALTED: ${p.halted.reason}` : `${finished.length} wave(s) finished${finished.length ? ` (${finished.join(', ')})` : ''}`}`);
  }
  const nodes = Object.entries(progress.nodes);
  if (nodes.length) {
    out.push('  nodes in flight:');
    for (const [n, r] of nodes) out.push(`    ${n} (${r.pool}, wave ${r.wave}): ${r.step}${r.wasCordoned ? ', cordoned by an administrator before' : ''}`);
  }
  return out.join('\n') + '\n';
}
