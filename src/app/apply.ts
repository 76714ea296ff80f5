/**
 * `bootcplan apply` (docs/design.md §2, §7): a plan carried out in waves by the applier
 * (apply/applier.ts) on the cluster the driver factory opens, under its lock, reported through
 * ./apply-report.ts (rollout status, Events, notifications).
 * - `apply PLANFILE` (applySavedPlan): the saved plan is verified before any cluster access
 *   (./saved-plan.ts), then bound to its cluster and confirmed against it
 *   (plan/saved/compare.ts). It was the review, so nothing is asked (as Terraform applies a
 *   saved plan).
 * - `apply -f SPEC` (applySpec): the spec planned against the cluster now, printed, and applied
 *   once a person says yes (or --auto-approve).
 */
import { EXIT, InputError, StalePlanError } from '../base/errors.ts';
import type { Plan } from '../plan/types.ts';
import { checkApplicable, refuseUnapplied } from '../plan/saved/verify.ts';
import { checkClusterBinding, confirmSavedPlan, inFlightOf } from '../plan/saved/compare.ts';
import { apply, type ApplyResult } from '../apply/applier.ts';
import { refusedEvent, type ApplyEvent } from '../apply/ports/events.ts';
import { jsonText } from '../base/json-text.ts';
import type { ClusterDriver } from '../apply/ports/driver.ts';
import { windowPolicy } from '../apply/ports/policy.ts';
import { refuseHeld } from '../apply/gates/holds.ts';
import { formatDuration, useColor } from '../render/format.ts';
import { renderPlan } from '../render/formats.ts';
import { forDisplay } from '../render/secrets.ts';
import type { StatusCore } from '../apply/report/rollout-status.ts';
import type { CliIO, CommandResult, KubeOptions, Ports, SpecForPlan } from './ports.ts';
import { readsStdin, selfNodeFrom, specFromFile } from './inputs.ts';
import { openSavedPlan, readPlanFile } from './saved-plan.ts';
import { ApplyReporting, lockWaitNotice, parseNotifyUrl, reportUnverifiedPlan } from './apply-report.ts';

export interface ApplyOptions {
  kube: KubeOptions;
  /** Advance at most one wave; exit 0 also when nothing may be done now. */
  step?: boolean;
  /** The events as NDJSON on stdout (`-o json`, `--json`) instead of the progress on stderr. */
  json: boolean;
  /** How long to wait for a lock another apply holds (0: exit 4 at once). */
  lockTimeoutSeconds: number;
  /** POST a small JSON document to this URL on wave start, halt, done and stale. */
  notify?: string;
  /** Lift the holds on the plan's images (docs/apply.md "Holds") instead of exiting 5. */
  retry?: boolean;
}

export interface ApplySpecOptions extends ApplyOptions {
  /** The spec (`-` reads stdin). */
  file: string;
  autoApprove?: boolean;
}

/** `apply PLANFILE`. */
export async function applySavedPlan(ports: Ports, planfile: string, opts: ApplyOptions): Promise<CommandResult> {
  return refusalsAsEvents(ports, opts, ports.now(), () => applySavedPlanFile(ports, planfile, opts));
}

async function applySavedPlanFile(ports: Ports, planfile: string, opts: ApplyOptions): Promise<CommandResult> {
  const saved = readPlanFile(ports, planfile);
  // Checked before any cluster access; re-planned with the planner's own phase durations (plan
  // has no flag for them), so a file cannot make waves look shorter to the windows.
  let specs: SpecForPlan;
  try {
    specs = openSavedPlan(ports, saved);
  } catch (err) {
    if (err instanceof StalePlanError) await reportUnverifiedPlan(() => ports.openDriver(opts.kube, ports.io), ports.io, saved, err);
    throw err;
  }
  return runApply(ports, opts, specs, selfNodeFrom(ports.io.env), false, async (driver, report) => {
    const live = await driver.snapshot();
    // A plan made for another cluster leaves this one as it found it: no rollout status either.
    checkClusterBinding(saved, live);
    await report.open(saved);
    const progress = await driver.readProgress();
    if (!opts.retry) refuseHeld(saved, progress.run); // held: say so, not that a rollback made it stale
    return confirmSavedPlan(saved, specs.replan(live), live, { compareDurations: true, inFlight: inFlightOf(saved, live, progress) });
  });
}

/** `apply -f SPEC`: plans and applies at once, which a person confirms (docs/design.md §2). */
export async function applySpec(ports: Ports, opts: ApplySpecOptions): Promise<CommandResult> {
  return refusalsAsEvents(ports, opts, ports.now(), () => applySpecFile(ports, opts));
}

/**
 * Under `--json` every refusal is an event on stdout (docs/apply.md "Apply and rehearse", Events): a tool that reads
 * the NDJSON, not stderr, learns why nothing was done; the error and its exit code stay as they are.
 */
async function refusalsAsEvents(ports: Ports, opts: ApplyOptions, t0: number, body: () => Promise<CommandResult>): Promise<CommandResult> {
  try {
    return await body();
  } catch (err) {
    if (opts.json) writeRefusal(ports, err, t0);
    throw err;
  }
}

/** The refusal `err` stands for, if it is one, as an NDJSON line on stdout; `t` counted from `t0` (ms). */
function writeRefusal(ports: Ports, err: unknown, t0: number, exitCode?: number): void {
  const e = refusedEvent(err, Math.round(ports.now() - t0) / 1000, exitCode);
  if (e) ports.io.stdout(jsonText(e) + '\n');
}

async function applySpecFile(ports: Ports, opts: ApplySpecOptions): Promise<CommandResult> {
  const { io } = ports;
  const confirming = !opts.autoApprove;
  const interactive = io.stdinIsTTY ?? (io.stdoutIsTTY && io.stderrIsTTY);
  if (confirming && !interactive) {
    throw new InputError(
      'apply -f plans and applies at once, which needs confirmation, and there is no terminal to ask on',
      [],
      'save the plan (bootcplan plan --out FILE), review it, then run bootcplan apply FILE; or add --auto-approve',
    );
  }
  if (confirming && readsStdin(opts.file)) {
    throw new InputError(
      'apply -f - reads the spec from stdin, so no answer to the confirmation can come from there',
      [],
      'review the plan (bootcplan plan -f -), then run apply -f - with --auto-approve',
    );
  }
  const selfNode = selfNodeFrom(io.env);
  const specs = specFromFile(ports, opts.file, undefined, selfNode);
  return runApply(ports, opts, specs, selfNode, confirming, async (driver, report) => {
    const plan = specs.replan(await driver.snapshot());
    if (!opts.json) io.stdout(await renderPlan(plan, 'text', { color: useColor(io, io.stdoutIsTTY) }));
    // Before the rollout status is opened: checkApplicable below would refuse it there too.
    refuseUnapplied(plan);
    await report.open(plan);
    checkApplicable(plan);
    return plan;
  });
}

/** The plan to run, made once the driver is open: `report` is opened on it. */
type PlanOnCluster = (driver: ClusterDriver, report: ApplyReporting) => Promise<Plan>;

/**
 * Either apply from here on: the driver opened, the plan made on the cluster, confirmed when
 * `confirming`, then the applier run with the events shown and reported, until it ends or a
 * stop request ends it at a safe point.
 */
async function runApply(
  ports: Ports,
  opts: ApplyOptions,
  specs: SpecForPlan,
  selfNode: string | null,
  confirming: boolean,
  planOn: PlanOnCluster,
): Promise<CommandResult> {
  const { io } = ports;
  const t0 = ports.now();
  const notifyUrl = opts.notify === undefined ? undefined : parseNotifyUrl(opts.notify);
  const { driver, holder, close, health, silences } = await ports.openDriver(opts.kube, io);
  let w: EventWriter | null = null;
  const report = new ApplyReporting(driver, io, specs.spec, !!opts.step, notifyUrl);
  try {
    const plan = await planOn(driver, report);
    if (confirming && !(await confirm(ports, plan))) {
      io.stderr('apply cancelled\n');
      return { exitCode: EXIT.error };
    }
    const writer = await eventWriter(io, opts.json, plan, ports.now);
    w = writer;
    const onLockWait = lockWaitNotice((line) => io.stderr(forDisplay(line) + '\n'), opts.lockTimeoutSeconds);
    const r = await ports.stops.during((signal) =>
      apply({
        plan,
        replan: specs.replan,
        driver,
        holder,
        step: !!opts.step,
        onEvent: (e) => {
          writer.write(e);
          report.onEvent(e);
        },
        policy: windowPolicy(specs.spec.spec.maintenanceWindows, plan),
        lockTimeoutSeconds: opts.lockTimeoutSeconds,
        onLockWait,
        signal,
        selfNode,
        retry: !!opts.retry,
        health: health?.(),
        silences: plan.silences?.length ? silences?.() : undefined,
      }),
    );
    const status = await report.finished(r);
    if (!opts.json) io.stdout(forDisplay(summaryLine(r, status)) + '\n');
    return { exitCode: EXIT.ok };
  } catch (err) {
    const end = await report.failed(err);
    // apply --step leaves the lock to an apply that is alive (exit 0): still a refusal to say.
    if (end === null) {
      if (opts.json) writeRefusal(ports, err, t0, EXIT.ok);
      return { exitCode: EXIT.ok };
    }
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- the caught error, passed on as it came
    throw end;
  } finally {
    w?.stop();
    close?.();
  }
}

/** The last line of a text apply: what it did. */
function summaryLine(r: ApplyResult, status: StatusCore | null): string {
  const what =
    r.outcome === 'stepped'
      ? `advanced ${r.wavesRun} wave; run apply again to continue`
      : r.outcome === 'nothing-to-do'
        ? 'nothing to do, the plan was applied already'
        : r.outcome === 'waiting'
          ? `nothing to do now: ${status?.message ?? r.wait?.message}`
          : `done in ${formatDuration(r.durationSeconds)}`;
  const blocked = r.blocked.length ? ` ${r.blocked.length} blocked node(s) were not updated: ${r.blocked.join(', ')}; plan again once they are back.` : '';
  return `Apply of plan ${r.planId}: ${what}.${blocked}`;
}

interface EventWriter {
  write: (e: ApplyEvent) => void;
  stop: () => void;
}

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
    const timer = setInterval(() => {
      if (last) io.stderr(tty.tick(last.t + (now() - last.at) / 1000));
    }, 1000);
    timer.unref();
    return {
      write: (e) => {
        last = { t: e.t, at: now() };
        io.stderr(tty.update(e));
      },
      stop: () => clearInterval(timer),
    };
  }
  const ci = new CiProgress({ plan: progressPlan(plan) });
  return {
    write: (e) => {
      const s = ci.update(e);
      if (s) io.stderr(s);
    },
    stop: () => {},
  };
}

async function confirm(ports: Ports, plan: Plan): Promise<boolean> {
  const answer = await ports.ask(`Apply plan ${plan.id} (${plan.summary.nodes} nodes in ${plan.summary.waves} waves)? Only 'yes' is accepted: `);
  return answer.trim() === 'yes';
}
