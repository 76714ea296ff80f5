/**
 * `apply` and `rehearse` (DESIGN §2): carry a plan out in waves through the applier
 * (src/apply), against the live cluster or the simulated one built from a snapshot
 * (src/sim). I/O only; the engine is elsewhere, loaded when a command runs (the applier, the
 * simulator and their renderers stay out of the start-up of the other commands).
 */
import type { Command } from 'commander';
import { InputError, EXIT, StalePlanError } from '../base/errors.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { parseDurations } from '../domain/timing.ts';
import type { Plan, PhaseDurations } from '../plan/types.ts';
import type { ApplyEvent } from '../apply/events.ts';
import { formatDuration, useColor } from '../render/format.ts';
import { forDisplay } from '../render/secrets.ts';
import { kubeconfigOption, contextOption, requestTimeoutOption, kubeFlags, specFileOption, clusterOption, outputFormatOption, type CommandContext } from './options.ts';
import { ApplyReporting, reportUnverifiedPlan } from './apply-report.ts';
import { DEFAULT_DURATIONS } from '../domain/timing.ts';
import type { CliIO, KubeOptions } from '../app/ports.ts';
import { askOnTerminal } from '../app/io.ts';
import { lockWaitNotice, processSignals, withStopOnSignal } from '../app/signals.ts';
import { parseNotifyUrl } from '../app/notify.ts';
import { readSnapshotFile, selfNodeFrom, specFromFile, type SpecForPlan } from '../app/inputs.ts';
import { planSnapshotFile, readPlanFile } from '../app/saved-plan.ts';
import { renderPlan, yamlOfJson, APPLY_FORMATS, REHEARSAL_FORMATS, type RehearsalFormat } from '../render/formats.ts';
import { parseDurationFlag, simulationFlags, type SimulationOptions } from '../app/flags.ts';
import { STDIN_PATH } from '../app/stdin.ts';

export function registerApplyCommands(program: Command, ctx: CommandContext): void {
  registerApply(program, ctx);
  registerRehearse(program, ctx);
}

// ---- apply ----

interface ApplyOptions extends KubeOptions {
  file: string;
  autoApprove?: boolean;
  step?: boolean;
  output: (typeof APPLY_FORMATS)[number];
  /** The older spelling of -o json. */
  json?: boolean;
  lockTimeout: string;
  notify?: string;
}

function registerApply(program: Command, ctx: CommandContext): void {
  program
    .command('apply')
    .description('carry a plan out in waves (a saved plan, or plan the spec now and apply it)')
    .argument('[planfile]', 'a plan saved with plan --out')
    .addOption(specFileOption('rollout spec (plans it against the cluster first)'))
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .addOption(requestTimeoutOption())
    .option('--auto-approve', 'with -f: do not ask for confirmation (needed without a terminal); a saved plan file is never asked about')
    .option('--step', 'advance at most one wave; exit 0 also when nothing may be done now (outside the window, staging, another apply running)')
    .addOption(outputFormatOption(APPLY_FORMATS, 'output format (json: the events as NDJSON on stdout)'))
    .option('--json', 'the same as -o json')
    .option('--lock-timeout <duration>', 'wait this long for a lock another apply holds (e.g. 5m; 0: exit 4 at once)', '0')
    .option('--notify <url>', 'POST a small JSON document to this URL on wave start, halt, done and stale (failures are warnings)')
    .action((planfile: string | undefined, opts: ApplyOptions) => applyAction(ctx, planfile, opts));
}

async function applyAction(ctx: CommandContext, planfile: string | undefined, given: ApplyOptions): Promise<void> {
  const { io, setExit, openDriver, now, signals, exitNow } = ctx;
  const opts = { ...given, json: given.json || given.output === 'json' };
  const lockTimeoutSeconds = parseDurationFlag('--lock-timeout', opts.lockTimeout, 24 * 3600);
  // A saved plan was the review: once its seal and spec are verified it runs without a second
  // approval (DESIGN §2, as Terraform applies a saved plan). Planning and applying at once asks.
  const confirming = !planfile && !opts.autoApprove;
  const interactive = io.stdinIsTTY ?? (io.stdoutIsTTY && io.stderrIsTTY);
  if (confirming && !interactive) {
    throw new InputError('apply -f plans and applies at once, which needs confirmation, and there is no terminal to ask on', [], 'save the plan (bootcplan plan --out FILE), review it, then run bootcplan apply FILE; or add --auto-approve');
  }
  if (confirming && opts.file === STDIN_PATH) {
    throw new InputError('apply -f - reads the spec from stdin, so no answer to the confirmation can come from there', [], 'review the plan (bootcplan plan -f -), then run apply -f - with --auto-approve');
  }
  const [{ apply }, { windowPolicy }, { openSavedPlan }, { confirmSavedPlan, inFlightOf, checkClusterBinding }, { checkApplicable }] = await Promise.all([
    import('../apply/applier.ts'), import('../apply/policy.ts'), import('../app/saved-plan.ts'), import('../plan/saved/compare.ts'), import('../plan/saved/verify.ts'),
  ]);
  const saved = planfile ? readPlanFile(ctx, planfile) : null;
  const selfNode = selfNodeFrom(io.env);
  // A saved plan is checked before any cluster access; its phase durations are the planner's
  // own (plan has no flag for them), so a file cannot make waves look shorter to the windows.
  let specs: SpecForPlan;
  try {
    specs = saved ? openSavedPlan(ctx, saved, DEFAULT_DURATIONS) : specFromFile(ctx, opts.file, undefined, selfNode);
  } catch (err) {
    if (saved && err instanceof StalePlanError) await reportUnverifiedPlan(() => openDriver(kubeFlags(opts), io), io, saved, err);
    throw err;
  }
  const notifyUrl = opts.notify === undefined ? undefined : parseNotifyUrl(opts.notify);
  const { driver, holder, close } = await openDriver(kubeFlags(opts), io);
  let w: EventWriter | null = null;
  const report = new ApplyReporting(driver, io, specs.spec, !!opts.step, notifyUrl);
  try {
    let plan: Plan;
    if (saved) {
      const live = await driver.snapshot();
      // A plan made for another cluster leaves this one as it found it: no rollout status either.
      checkClusterBinding(saved, live);
      await report.open(saved);
      const progress = await driver.readProgress();
      plan = confirmSavedPlan(saved, specs.replan(live), live, { compareDurations: true, inFlight: inFlightOf(saved, live, progress) });
    } else {
      plan = specs.replan(await driver.snapshot());
      if (!opts.json) io.stdout(await renderPlan(plan, 'text', { color: useColor(io, io.stdoutIsTTY) }));
      await report.open(plan);
      checkApplicable(plan);
    }
    if (confirming && !(await confirm(io, plan))) {
      io.stderr('apply cancelled\n');
      setExit(EXIT.error);
      return;
    }
    const writer = await eventWriter(io, !!opts.json, plan, now);
    w = writer;
    const onLockWait = lockWaitNotice((line) => io.stderr(forDisplay(line) + '\n'), lockTimeoutSeconds);
    const r = await withStopOnSignal(io, signals ?? processSignals, exitNow ?? ((c) => process.exit(c)), (signal) =>
      apply({ plan, replan: specs.replan, driver, holder, step: !!opts.step, onEvent: (e) => { writer.write(e); report.onEvent(e); }, policy: windowPolicy(specs.spec.spec.maintenanceWindows, plan), lockTimeoutSeconds, onLockWait, signal, selfNode }));
    const status = await report.finished(r);
    if (!opts.json) {
      const what = r.outcome === 'stepped' ? `advanced ${r.wavesRun} wave; run apply again to continue` : r.outcome === 'nothing-to-do' ? 'nothing to do, the plan was applied already'
        : r.outcome === 'waiting' ? `nothing to do now: ${status?.message ?? r.wait?.message}` : `done in ${formatDuration(r.durationSeconds)}`;
      const blocked = r.blocked.length ? ` ${r.blocked.length} blocked node(s) were not updated: ${r.blocked.join(', ')}; plan again once they are back.` : '';
      io.stdout(forDisplay(`Apply of plan ${r.planId}: ${what}.${blocked}`) + '\n');
    }
  } catch (err) {
    const end = await report.failed(err);
    if (end === null) return;
    throw end;
  } finally {
    w?.stop();
    close?.();
  }
}

interface EventWriter { write: (e: ApplyEvent) => void; stop: () => void }

/**
 * Where the events go: NDJSON on stdout (--json), the live block on a terminal (redrawn every
 * second between events, so elapsed and ETA move), else the CI lines (render/events.ts).
 */
async function eventWriter(io: CliIO, json: boolean, plan: Plan, now: () => number): Promise<EventWriter> {
  const [{ eventToNdjson, CiProgress, TtyProgress }, { progressPlan }] = await Promise.all([import('../render/events.ts'), import('../render/progress.ts')]);
  if (json) return { write: (e) => io.stdout(eventToNdjson(e)), stop: () => {} };
  if (io.stderrIsTTY) {
    const tty = new TtyProgress({ color: useColor(io, true), plan: progressPlan(plan), width: (io.stderrColumns || 101) - 1 });
    let last: { t: number; at: number } | null = null;
    const timer = setInterval(() => { if (last) io.stderr(tty.tick(last.t + (now() - last.at) / 1000)); }, 1000);
    timer.unref();
    return { write: (e) => { last = { t: e.t, at: now() }; io.stderr(tty.update(e)); }, stop: () => clearInterval(timer) };
  }
  const ci = new CiProgress({ plan: progressPlan(plan) });
  return { write: (e) => { const s = ci.update(e); if (s) io.stderr(s); }, stop: () => {} };
}

async function confirm(io: CliIO, plan: Plan): Promise<boolean> {
  const ask = io.ask ?? askOnTerminal;
  const answer = await ask(`Apply plan ${plan.id} (${plan.summary.nodes} nodes in ${plan.summary.waves} waves)? Only 'yes' is accepted: `);
  return answer.trim() === 'yes';
}

// ---- rehearse ----

interface RehearseOptions extends SimulationOptions {
  file: string;
  cluster?: string;
  events?: boolean;
  output: RehearsalFormat;
}

/** Adds --durations, --fail-rate, --jitter and --seed. */
export function simulationOptions(cmd: Command): Command {
  return cmd
    .option('--durations <list>', 'phase durations in seconds: stage=600,drain=60,reboot=300,soft-reboot=60,ready=30')
    .option('--fail-rate <r>', 'probability that a reboot fails (0..1)')
    .option('--jitter <fraction>', 'per-node duration jitter: each node\'s durations scaled by a factor in [1 - fraction, 1 + fraction] (0..0.9)')
    .option('--seed <n>', 'seed for the faults and the jitter', '1');
}

function registerRehearse(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('rehearse')
    .description('run the apply against a simulated cluster built from a snapshot and report the timeline')
    .argument('[planfile]', 'a plan saved with plan --out')
    .addOption(specFileOption())
    .addOption(clusterOption('the snapshot to simulate (default for a saved plan: the snapshot it was made from)'));
  simulationOptions(cmd)
    .option('--events', 'also list every event (text output)')
    .addOption(outputFormatOption(REHEARSAL_FORMATS, 'output format (html: the plan report with the timeline drawn from the rehearsal)'))
    .action((planfile: string | undefined, opts: RehearseOptions) => rehearseAction(ctx, planfile, opts));
}

async function rehearseAction(ctx: CommandContext, planfile: string | undefined, opts: RehearseOptions): Promise<void> {
  const { io, setExit, now } = ctx;
  const [{ rehearse }, { renderRehearsalText, rehearsalJson, rehearsalReport }, { openSavedPlan }, { confirmSavedPlan }, { RehearseProgress }, { progressPlan }] = await Promise.all([
    import('../sim/rehearse.ts'), import('../render/rehearsal.ts'), import('../app/saved-plan.ts'), import('../plan/saved/compare.ts'), import('../render/events.ts'), import('../render/progress.ts'),
  ]);
  const saved = planfile ? readPlanFile(ctx, planfile) : null;
  const { durations, failRate, seed, jitter } = simulationFlags(opts);
  // A saved plan is checked before its snapshot is read (the path comes from the file).
  const specs = saved ? openSavedPlan(ctx, saved, durations) : null;
  const clusterFile = opts.cluster ?? (saved ? planSnapshotFile(ctx, saved) : null);
  if (!clusterFile) throw new InputError('rehearse needs a cluster snapshot', [], 'pass --cluster SNAPSHOT (bootcplan snapshot --out FILE writes one)');
  const snapshot = readSnapshotFile(ctx, clusterFile);
  let plan: Plan;
  let replan: (s: ClusterSnapshot) => Plan;
  if (saved && specs) {
    plan = confirmSavedPlan(saved, specs.replan(snapshot), snapshot, { compareDurations: opts.durations === undefined });
    replan = specs.replan;
  } else {
    const s = specFromFile(ctx, opts.file, durations);
    plan = s.plan(snapshot);
    replan = s.replan;
  }
  // Progress on stderr for long runs (render/events.ts RehearseProgress: nothing within 2 s).
  const progress = new RehearseProgress({ plan: progressPlan(plan), terminal: io.stderrIsTTY, color: useColor(io, io.stderrIsTTY), clock: now, width: (io.stderrColumns || 101) - 1 });
  const { rehearsal, error } = await rehearse({
    plan, replan, snapshot, durations,
    faults: failRate > 0 ? { seed, rebootFailRate: failRate } : null,
    onEvent: (e) => { const s = progress.update(e); if (s) io.stderr(s); },
    jitter: jitter > 0 ? { fraction: jitter, seed } : null,
  });
  const erase = progress.finish();
  if (erase) io.stderr(erase);
  const report = rehearsalReport(rehearsal, error);
  if (report.exitCode === EXIT.stale && error) throw error;
  io.stdout(opts.output === 'json' ? rehearsalJson(report)
    : opts.output === 'yaml' ? yamlOfJson(rehearsalJson(report))
    : opts.output === 'html' ? (await import('../render/html/report.ts')).renderHtml(plan, { rehearsal: report })
    : renderRehearsalText(report, { color: useColor(io, io.stdoutIsTTY), events: !!opts.events, ascii: !useColor(io, io.stdoutIsTTY) }));
  if (error) throw error;
  setExit(EXIT.ok);
}
