/**
 * `bootcplan rehearse` (docs/design.md §2): the applier run against a simulated cluster built from a
 * snapshot (sim/rehearse.ts), and the timeline reported. A saved plan is verified as `apply`
 * verifies it (./saved-plan.ts, plan/saved/compare.ts) and simulated on the snapshot it was made
 * from unless --cluster names another; else the spec is planned against the snapshot.
 */
import { EXIT, InputError } from '../base/errors.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { Plan } from '../plan/types.ts';
import { confirmSavedPlan } from '../plan/saved/compare.ts';
import { rehearse } from '../sim/rehearse.ts';
import { renderRehearsalText, rehearsalJson, rehearsalReport } from '../render/rehearsal.ts';
import { RehearseProgress } from '../render/events.ts';
import { progressPlan } from '../render/progress.ts';
import { useColor } from '../render/format.ts';
import { yamlOfJson, type RehearsalFormat } from '../render/formats.ts';
import type { CommandResult, Ports } from './ports.ts';
import { simulationFlags, checkFailCheckNames, rehearsalStart, type SimulationOptions } from './flags.ts';
import type { WindowSpec } from '../domain/windows.ts';
import { readSnapshotFile, specFromFile } from './inputs.ts';
import { openSavedPlan, planSnapshotFile, readPlanFile } from './saved-plan.ts';

export interface RehearseOptions extends SimulationOptions {
  /** The spec, when no plan file is given. */
  file: string;
  /** The snapshot to simulate (default for a saved plan: the snapshot it was made from). */
  cluster?: string;
  /** Also list every event (text output). */
  events?: boolean;
  output: RehearsalFormat;
}

export async function rehearseCommand(ports: Ports, planfile: string | undefined, opts: RehearseOptions): Promise<CommandResult> {
  const { io } = ports;
  const saved = planfile ? readPlanFile(ports, planfile) : null;
  const { durations, failRate, seed, jitter, health, start } = simulationFlags(opts);
  // A saved plan is checked before its snapshot is read (the path comes from the file).
  const specs = saved ? openSavedPlan(ports, saved, durations) : null;
  const clusterFile = opts.cluster ?? (saved ? planSnapshotFile(ports, saved) : null);
  if (!clusterFile) throw new InputError('rehearse needs a cluster snapshot', [], 'pass --cluster SNAPSHOT (bootcplan snapshot --out FILE writes one)');
  const snapshot = readSnapshotFile(ports, clusterFile);
  let plan: Plan;
  let replan: (s: ClusterSnapshot) => Plan;
  let windows: readonly WindowSpec[] | undefined;
  if (saved && specs) {
    plan = confirmSavedPlan(saved, specs.replan(snapshot), snapshot, { compareDurations: opts.durations === undefined });
    replan = specs.replan;
    windows = specs.spec.spec.maintenanceWindows;
  } else {
    const s = specFromFile(ports, opts.file, durations);
    plan = s.plan(snapshot);
    replan = s.replan;
    windows = s.spec.spec.maintenanceWindows;
  }
  checkFailCheckNames(health, [plan]);
  // Progress on stderr for long runs (render/events.ts RehearseProgress: nothing within 2 s).
  const progress = new RehearseProgress({
    plan: progressPlan(plan),
    terminal: io.stderrIsTTY,
    color: useColor(io, io.stderrIsTTY),
    clock: ports.now,
    width: (io.stderrColumns || 101) - 1,
  });
  const { rehearsal, error } = await rehearse({
    plan,
    replan,
    snapshot,
    durations,
    faults: failRate > 0 ? { seed, rebootFailRate: failRate } : null,
    onEvent: (e) => {
      const s = progress.update(e);
      if (s) io.stderr(s);
    },
    jitter: jitter > 0 ? { fraction: jitter, seed } : null,
    health,
    // The windows apply keeps (app/apply.ts windowPolicy), from when apply would first act.
    windows,
    start: rehearsalStart(start, windows, ports.now()),
  });
  const erase = progress.finish();
  if (erase) io.stderr(erase);
  const report = rehearsalReport(rehearsal, error);
  if (report.exitCode === EXIT.stale && error) {
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- the caught error, passed on as it came
    throw error;
  }
  io.stdout(
    opts.output === 'json'
      ? rehearsalJson(report)
      : opts.output === 'yaml'
        ? yamlOfJson(rehearsalJson(report))
        : opts.output === 'html'
          ? (await import('../render/html/report.ts')).renderHtml(plan, { rehearsal: report })
          : opts.output === 'markdown'
            ? (await import('../render/rehearsal-markdown.ts')).renderRehearsalMarkdown(plan, report)
            : renderRehearsalText(report, { color: useColor(io, io.stdoutIsTTY), events: !!opts.events, ascii: !useColor(io, io.stdoutIsTTY) }),
  );
  if (error) {
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- the caught error, passed on as it came
    throw error;
  }
  return { exitCode: EXIT.ok };
}
