/**
 * `fleet rehearse FLEETPLAN | -f FLEET` (docs/design.md §10): the whole fleet on simulated clusters,
 * each built from its snapshot, composed by the fleet runner's batch rules (src/fleet/rehearsal-sim.ts).
 * A saved fleet plan is checked (its seal; its structure against the Fleet it was made from,
 * fleet/plan-verify.ts checkFleetPlanAgainstFleet) before anything is read, and each cluster's plan is
 * checked and re-planned against its snapshot in its turn, as `rehearse PLANFILE` does (a stale
 * cluster plan fails that cluster, exit 3); with -f the Fleet is planned now.
 */
import { InputError } from '../base/errors.ts';
import { formatDiagnostic } from '../base/diagnostics.ts';
import type { FleetPlan } from '../fleet/plan-types.ts';
import type { FleetEvent } from '../fleet/run-events.ts';
import type { PhaseDurations } from '../plan/types.ts';
import type { FleetRehearsalClusterInput } from '../fleet/rehearsal-sim.ts';
import { fleetClusterSpecs } from '../fleet/cluster-plans.ts';
import { checkFleetPlanSeal } from '../fleet/plan-verify.ts';
import type { FLEET_REHEARSAL_FORMATS } from '../fleet/outputs.ts';
import { forDisplay } from '../render/secrets.ts';
import { useColor } from '../render/format.ts';
import type { CommandResult, Ports } from './ports.ts';
import { simulationFlags, checkFailCheckNames, rehearsalStart, type SimulationOptions } from './flags.ts';
import type { WindowSpec } from '../domain/windows.ts';
import { planFleetFile, readFleetPlanFile, readFleetSnapshot, fleetRevision, type FleetPlanFlags } from './fleet-inputs.ts';
import { fleetRoot } from './fleet-kubeconfig.ts';

export interface FleetRehearseOptions extends SimulationOptions, FleetPlanFlags {
  /** The Fleet, planned now when no fleet plan file is given. */
  file: string;
  output: (typeof FLEET_REHEARSAL_FORMATS)[number];
}

type ClusterLoads = Map<string, () => FleetRehearsalClusterInput>;
/** Each cluster's effective maintenance windows, by name. */
type ClusterWindows = Map<string, readonly WindowSpec[] | undefined>;

/**
 * Where a fleet rehearsal starts: --start, else now when any cluster has windows (each then
 * waits for its own, in its time zone: app/flags.ts rehearsalStart), else the simulator's own.
 */
function fleetStart(start: number | undefined, fp: FleetPlan, windows: ClusterWindows, nowMs: number): number | undefined {
  if (start !== undefined) return start;
  return fp.clusters.some((c) => windows.get(c.name)?.length)
    ? rehearsalStart(
        undefined,
        [...windows.values()].flatMap((w) => w ?? []),
        nowMs,
      )
    : undefined;
}

/** `fleet rehearse [FLEETPLAN]`: the exit code the rehearsal stands for. */
export async function fleetRehearseCommand(ports: Ports, fleetplan: string | undefined, opts: FleetRehearseOptions): Promise<CommandResult> {
  const { io } = ports;
  const { durations, failRate, seed, jitter, health, start } = simulationFlags(opts);
  const [{ rehearseFleet }, { runFleet }, { FleetRehearseProgress }] = await Promise.all([
    import('../fleet/rehearsal-sim.ts'),
    import('../fleet/runner.ts'),
    import('../fleet/run-text.ts'),
  ]);
  const { fleetPlan, clusters, windows } = fleetplan
    ? await savedFleet(ports, fleetplan, durations, opts.durations !== undefined)
    : await plannedFleet(ports, opts, durations);
  // Progress on stderr (a fleet of 100 clusters of 100 nodes rehearses for some 45 s).
  const progress = new FleetRehearseProgress({
    terminal: !!io.stderrIsTTY,
    clusters: fleetPlan.batches.reduce((n, b) => n + b.clusters.length, 0),
    batches: fleetPlan.batches.length,
    color: useColor(io, !!io.stderrIsTTY),
    width: (io.stderrColumns || 101) - 1,
    clock: ports.now,
  });
  const onEvent = (e: FleetEvent) => {
    const s = progress.update(e);
    if (s) io.stderr(s);
  };
  checkFailCheckNames(
    health,
    fleetPlan.clusters.flatMap((c) => (c.plan ? [c.plan] : [])),
  );
  const r = await rehearseFleet({
    fleetPlan,
    clusters,
    options: { durations, failRate, jitter, seed, health },
    runner: runFleet,
    onEvent,
    start: fleetStart(start, fleetPlan, windows, ports.now()),
  });
  const erase = progress.finish();
  if (erase) io.stderr(erase);
  const color = useColor(io, io.stdoutIsTTY);
  if (opts.output === 'json') io.stdout((await import('../fleet/rehearsal-text.ts')).fleetRehearsalJson(r));
  else if (opts.output === 'yaml')
    io.stdout((await import('../render/formats.ts')).yamlOfJson((await import('../fleet/rehearsal-text.ts')).fleetRehearsalJson(r)));
  else if (opts.output === 'html') io.stdout((await import('../fleet/rehearsal-html.ts')).renderFleetRehearsalHtml(r));
  else if (opts.output === 'markdown') io.stdout((await import('../fleet/rehearsal-markdown.ts')).renderFleetRehearsalMarkdown(r));
  else io.stdout((await import('../fleet/rehearsal-text.ts')).renderFleetRehearsalText(r, { color, ascii: !color }));
  return { exitCode: r.exitCode };
}

/**
 * A saved fleet plan: its seal, every cluster plan in a batch and the Fleet checked now
 * (fleet-saved-plan.ts openSavedFleetPlans: the Fleet read once); each cluster's plan confirmed against
 * its snapshot in its turn.
 */
async function savedFleet(
  ports: Ports,
  file: string,
  durations: PhaseDurations,
  durationsGiven: boolean,
): Promise<{ fleetPlan: FleetPlan; clusters: ClusterLoads; windows: ClusterWindows }> {
  const [{ openSavedFleetPlans }, { confirmSavedPlan }] = await Promise.all([import('./fleet-saved-plan.ts'), import('../plan/saved/compare.ts')]);
  const fleetPlan = readFleetPlanFile(ports, file);
  checkFleetPlanSeal(fleetPlan);
  const { read, clusters: specs } = openSavedFleetPlans(ports, fleetPlan, durations);
  const clusters: ClusterLoads = new Map();
  const windows: ClusterWindows = new Map();
  // The snapshot files the verified Fleet names, where it was read: at its commit for a fleet plan made with --ref.
  const root = read ? fleetRoot(ports.git, read.dir) : '';
  for (const c of fleetPlan.clusters) {
    const saved = c.plan;
    const s = specs.get(c.name);
    if (c.batch === null || !saved || !s || !read) continue;
    const own = s.spec.spec.maintenanceWindows;
    windows.set(c.name, own);
    clusters.set(c.name, () => {
      if (s.entry.snapshot === undefined)
        throw new InputError(
          `cluster ${c.name}: its plan was not made from a snapshot file, and a rehearsal needs one`,
          [],
          'rehearse a fleet whose clusters name snapshot files (or run fleet rehearse -f FLEET)',
        );
      const input = readFleetSnapshot(ports, s.entry.snapshot, read.dir, root, fleetRevision(read));
      if (!input.snapshot) throw new InputError(`cluster ${c.name}: ${input.error?.message}`, [], input.error?.hint);
      const snapshot = input.snapshot;
      const plan = confirmSavedPlan(saved, s.replan(snapshot), snapshot, { compareDurations: !durationsGiven });
      return { plan, snapshot, replan: s.replan, windows: own };
    });
  }
  return { fleetPlan, clusters, windows };
}

/** `-f FLEET`: read every cluster (snapshot files, or live contexts read-only) and plan the fleet now. */
async function plannedFleet(
  ports: Ports,
  opts: FleetRehearseOptions,
  durations: PhaseDurations,
): Promise<{ fleetPlan: FleetPlan; clusters: ClusterLoads; windows: ClusterWindows }> {
  const { io } = ports;
  const at = ports.now();
  const { read, inputs, fleetPlan } = await planFleetFile(ports, opts.file, undefined, opts, io.env, { now: at, durations });
  for (const d of read.loaded.diagnostics) io.stderr(formatDiagnostic(forDisplay(d)) + '\n');
  const specs = fleetClusterSpecs(read, { durations: () => durations, now: at });
  const clusters: ClusterLoads = new Map();
  const windows: ClusterWindows = new Map();
  for (const c of fleetPlan.clusters) {
    const snapshot = inputs.get(c.name)?.snapshot;
    const replan = specs.get(c.name)?.replan;
    const own = specs.get(c.name)?.spec.spec.maintenanceWindows;
    const plan = c.plan;
    if (c.batch === null || !plan || !snapshot || !replan) continue;
    windows.set(c.name, own);
    clusters.set(c.name, () => ({ plan, snapshot, replan, windows: own }));
  }
  return { fleetPlan, clusters, windows };
}
