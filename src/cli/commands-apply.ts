/**
 * `apply` and `rehearse` (DESIGN §2): carry a plan out in waves through the applier
 * (src/apply), against the live cluster or the simulated one built from a snapshot
 * (src/sim). I/O only; the engine is elsewhere.
 */
import type { Command } from 'commander';
import { InputError, EXIT, StalePlanError } from '../base/errors.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { parseDurations } from '../domain/timing.ts';
import type { Plan } from '../plan/types.ts';
import { apply, checkApplicable } from '../apply/applier.ts';
import type { ApplyEvent } from '../apply/events.ts';
import { windowPolicy } from '../apply/policy.ts';
import { rehearse } from '../sim/rehearse.ts';
import { eventToNdjson, formatEventLine, TtyProgress } from '../render/events.ts';
import { formatDuration } from '../render/format.ts';
import { renderHtml } from '../render/html/report.ts';
import { forDisplay } from '../render/secrets.ts';
import { renderRehearsalText, rehearsalJson, rehearsalReport } from '../render/rehearsal.ts';
import type { CommandContext } from './deps.ts';
import { renderPlan, REHEARSAL_FORMATS, type RehearsalFormat } from './formats.ts';
import { readSnapshotFile, readPlanFile } from './inputs.ts';
import { type CliIO, useColor, askOnTerminal } from './io.ts';
import { type KubeOptions, kubeconfigOption, contextOption, requestTimeoutOption, kubeFlags, specFileOption, clusterOption, outputFormatOption, parseIntegerFlag, parseFractionFlag } from './options.ts';
import { specFromFile, type SpecForPlan } from './planning.ts';
import { openSavedPlan, confirmSavedPlan } from './sealed.ts';
import { ApplyReporting, reportUnverifiedPlan } from './apply-report.ts';
import { parseNotifyUrl } from './notify.ts';
import { planSnapshotFile } from './provenance.ts';
import { DEFAULT_DURATIONS } from '../domain/timing.ts';

export function registerApplyCommands(program: Command, ctx: CommandContext): void {
  registerApply(program, ctx);
  registerRehearse(program, ctx);
}

// ---- apply ----

interface ApplyOptions extends KubeOptions {
  file: string;
  autoApprove?: boolean;
  step?: boolean;
  json?: boolean;
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
    .option('--auto-approve', 'do not ask for confirmation (needed without a terminal)')
    .option('--step', 'advance at most one wave; exit 0 also when nothing may be done now (outside the window, staging, another apply running)')
    .option('--json', 'print events as NDJSON on stdout')
    .option('--notify <url>', 'POST a small JSON document to this URL on wave start, halt, done and stale (failures are warnings)')
    .action((planfile: string | undefined, opts: ApplyOptions) => applyAction(ctx, planfile, opts));
}

async function applyAction({ io, setExit, openDriver }: CommandContext, planfile: string | undefined, opts: ApplyOptions): Promise<void> {
  const interactive = io.stdinIsTTY ?? (io.stdoutIsTTY && io.stderrIsTTY);
  if (!opts.autoApprove && !interactive) {
    throw new InputError('apply needs confirmation, and there is no terminal to ask on', [], 'review the plan (bootcplan plan / show), then run apply with --auto-approve');
  }
  const saved = planfile ? readPlanFile(planfile) : null;
  // A saved plan is checked before any cluster access; its phase durations are the planner's
  // own (plan has no flag for them), so a file cannot make waves look shorter to the windows.
  let specs: SpecForPlan;
  try {
    specs = saved ? openSavedPlan(saved, DEFAULT_DURATIONS) : specFromFile(opts.file);
  } catch (err) {
    if (saved && err instanceof StalePlanError) await reportUnverifiedPlan(() => openDriver(kubeFlags(opts), io), io, saved, err);
    throw err;
  }
  const notifyUrl = opts.notify === undefined ? undefined : parseNotifyUrl(opts.notify);
  const { driver, holder, close } = await openDriver(kubeFlags(opts), io);
  const report = new ApplyReporting(driver, io, specs.spec, !!opts.step, notifyUrl);
  try {
    let plan: Plan;
    if (saved) {
      await report.open(saved);
      const live = await driver.snapshot();
      const progress = await driver.readProgress();
      const inFlight = new Set(progress?.planId === saved.id ? Object.keys(progress.nodes) : []);
      plan = confirmSavedPlan(saved, specs.replan(live), live, { compareDurations: true, inFlight });
    } else {
      plan = specs.replan(await driver.snapshot());
      if (!opts.json) io.stdout(renderPlan(plan, 'text', { color: useColor(io, io.stdoutIsTTY) }));
      await report.open(plan);
      checkApplicable(plan);
    }
    if (!opts.autoApprove && !(await confirm(io, plan))) {
      io.stderr('apply cancelled\n');
      setExit(EXIT.error);
      return;
    }
    const w = eventWriter(io, !!opts.json);
    const r = await apply({ plan, replan: specs.replan, driver, holder, step: !!opts.step, onEvent: (e) => { w.write(e); report.onEvent(e); }, policy: windowPolicy(specs.spec.spec.maintenanceWindows, plan) });
    const status = await report.finished(r);
    if (!opts.json) {
      const what = r.outcome === 'stepped' ? `advanced ${r.wavesRun} wave; run apply again to continue` : r.outcome === 'nothing-to-do' ? 'nothing to do, the plan was applied already'
        : r.outcome === 'waiting' ? `nothing to do now: ${status?.message ?? r.wait?.message}` : `done in ${formatDuration(r.durationSeconds)}`;
      const blocked = r.blocked.length ? ` ${r.blocked.length} blocked node(s) were not updated: ${r.blocked.join(', ')}; plan again once they are back.` : '';
      io.stdout(forDisplay(`Apply of plan ${r.planId}: ${what}.${blocked}`) + '\n');
    }
  } catch (err) {
    if (await report.failed(err)) return;
    throw err;
  } finally {
    close?.();
  }
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
  const ask = io.ask ?? askOnTerminal;
  const answer = await ask(`Apply plan ${plan.id} (${plan.summary.nodes} nodes in ${plan.summary.waves} waves)? Only 'yes' is accepted: `);
  return answer.trim() === 'yes';
}

// ---- rehearse ----

interface RehearseOptions {
  file: string;
  cluster?: string;
  durations?: string;
  failRate?: string;
  seed: string;
  events?: boolean;
  output: RehearsalFormat;
}

function registerRehearse(program: Command, ctx: CommandContext): void {
  program
    .command('rehearse')
    .description('run the apply against a simulated cluster built from a snapshot and report the timeline')
    .argument('[planfile]', 'a plan saved with plan --out')
    .addOption(specFileOption())
    .addOption(clusterOption('the snapshot to simulate (default for a saved plan: the snapshot it was made from)'))
    .option('--durations <list>', 'phase durations in seconds: stage=600,drain=60,reboot=300,soft-reboot=60,ready=30')
    .option('--fail-rate <r>', 'probability that a reboot fails (0..1)')
    .option('--seed <n>', 'seed for the faults', '1')
    .option('--events', 'also list every event (text output)')
    .addOption(outputFormatOption(REHEARSAL_FORMATS, 'output format (html: the plan report with the timeline drawn from the rehearsal)'))
    .action((planfile: string | undefined, opts: RehearseOptions) => rehearseAction(ctx, planfile, opts));
}

async function rehearseAction({ io, setExit }: CommandContext, planfile: string | undefined, opts: RehearseOptions): Promise<void> {
  const saved = planfile ? readPlanFile(planfile) : null;
  // The simulated phase durations: --durations over the planner's defaults (never the file's alone).
  const durations = parseDurations(opts.durations, DEFAULT_DURATIONS);
  if (typeof durations === 'string') throw new InputError(`--durations: ${durations}`, [], 'e.g. --durations stage=600,drain=60,reboot=300,soft-reboot=60,ready=30');
  const failRate = opts.failRate === undefined ? 0 : parseFractionFlag('--fail-rate', opts.failRate);
  const seed = parseIntegerFlag('--seed', opts.seed, { min: 0, max: 2 ** 32 - 1 });
  // A saved plan is checked before its snapshot is read (the path comes from the file).
  const specs = saved ? openSavedPlan(saved, durations) : null;
  const clusterFile = opts.cluster ?? (saved ? planSnapshotFile(saved) : null);
  if (!clusterFile) throw new InputError('rehearse needs a cluster snapshot', [], 'pass --cluster SNAPSHOT (bootcplan snapshot -o FILE writes one)');
  const snapshot = readSnapshotFile(clusterFile);
  let plan: Plan;
  let replan: (s: ClusterSnapshot) => Plan;
  if (saved && specs) {
    plan = confirmSavedPlan(saved, specs.replan(snapshot), snapshot, { compareDurations: opts.durations === undefined });
    replan = specs.replan;
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
}
