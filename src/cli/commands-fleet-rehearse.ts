/**
 * `fleet rehearse FLEETPLAN | -f FLEET` (DESIGN §10): the whole fleet on simulated clusters,
 * each built from its snapshot, composed by the fleet runner's batch rules (src/sim/fleet-rehearse.ts).
 * A saved fleet plan is checked (its seal) before anything is read, and each cluster's plan is
 * checked and re-planned against its snapshot in its turn, as `rehearse PLANFILE` does (a stale
 * cluster plan fails that cluster, exit 3); with -f the Fleet is planned now. I/O only.
 */
import { Option, type Command } from 'commander';
import { InputError } from '../base/errors.ts';
import { formatDiagnostic } from '../base/diagnostics.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { FleetPlan } from '../plan/fleet-types.ts';
import type { Plan, PhaseDurations } from '../plan/types.ts';
import type { FleetRehearsalClusterInput } from '../sim/fleet-rehearse.ts';
import { forDisplay } from '../render/secrets.ts';
import type { CommandContext } from './deps.ts';
import { useColor } from './io.ts';
import { readSnapshotFile } from './inputs.ts';
import { kubeconfigOption, requestTimeoutOption, outputFormatOption, parseIntegerFlag, type KubeOptions } from './options.ts';
import { simulationOptions, simulationFlags, type SimulationOptions } from './commands-apply.ts';
import { readFleet, requireValidFleet, readFleetClusters, readFleetPlanFile, DEFAULT_FLEET_CONCURRENCY, DEFAULT_FLEET_FILE } from './fleet-inputs.ts';
import { checkFleetPlanSeal } from './fleet-sealed.ts';
import { planSnapshotFile } from './provenance.ts';
import { trustFleetKubeconfigsOption } from './fleet-kubeconfig.ts';

export const FLEET_REHEARSAL_FORMATS = ['text', 'json', 'html'] as const;

interface FleetRehearseOptions extends SimulationOptions, KubeOptions {
  file: string;
  concurrency?: string;
  output: (typeof FLEET_REHEARSAL_FORMATS)[number];
  trustFleetKubeconfigs?: boolean;
}

export function registerFleetRehearse(fleet: Command, ctx: CommandContext): void {
  const cmd = fleet
    .command('rehearse')
    .description('rehearse the whole fleet on simulated clusters (each from its snapshot), batch by batch, and report the fleet makespan')
    .argument('[fleetplan]', 'a fleet plan saved with fleet plan --out')
    // As commands-fleet.ts fleetFileOption / concurrencyOption (which registers this file: no import back).
    .addOption(new Option('-f, --file <fleet>', 'Fleet spec (planned now)').default(DEFAULT_FLEET_FILE))
    .addOption(kubeconfigOption())
    .addOption(requestTimeoutOption())
    .addOption(new Option('--concurrency <n>', `clusters read at once with -f (default ${DEFAULT_FLEET_CONCURRENCY})`))
    .addOption(trustFleetKubeconfigsOption());
  simulationOptions(cmd)
    .addOption(outputFormatOption(FLEET_REHEARSAL_FORMATS, 'output format (html: the report with the chart of batches over time)'))
    .action((fleetplan: string | undefined, opts: FleetRehearseOptions) => fleetRehearseAction(ctx, fleetplan, opts));
}

type ClusterLoads = Map<string, () => FleetRehearsalClusterInput>;

async function fleetRehearseAction(ctx: CommandContext, fleetplan: string | undefined, opts: FleetRehearseOptions): Promise<void> {
  const { io, setExit } = ctx;
  const { durations, failRate, seed, jitter } = simulationFlags(opts);
  const [{ rehearseFleet }, { runFleet }] = await Promise.all([import('../sim/fleet-rehearse.ts'), import('../apply/fleet-runner.ts')]);
  const { fleetPlan, clusters } = fleetplan ? await savedFleet(fleetplan, durations, opts.durations !== undefined) : await plannedFleet(ctx, opts, durations);
  const r = await rehearseFleet({ fleetPlan, clusters, options: { durations, failRate, jitter, seed }, runner: runFleet });
  const color = useColor(io, io.stdoutIsTTY);
  if (opts.output === 'json') io.stdout((await import('../render/fleet-rehearsal.ts')).fleetRehearsalJson(r));
  else if (opts.output === 'html') io.stdout((await import('../render/html/fleet-report.ts')).renderFleetRehearsalHtml(r));
  else io.stdout((await import('../render/fleet-rehearsal.ts')).renderFleetRehearsalText(r, { color, ascii: !color }));
  setExit(r.exitCode);
}

/** A saved fleet plan: its seal now; each cluster's plan confirmed against its snapshot in its turn. */
async function savedFleet(file: string, durations: PhaseDurations, durationsGiven: boolean): Promise<{ fleetPlan: FleetPlan; clusters: ClusterLoads }> {
  const { openSavedPlan, confirmSavedPlan } = await import('./sealed.ts');
  const fleetPlan = readFleetPlanFile(file);
  checkFleetPlanSeal(fleetPlan);
  const clusters: ClusterLoads = new Map();
  for (const c of fleetPlan.clusters) {
    const saved = c.plan;
    if (c.batch === null || !saved) continue;
    clusters.set(c.name, () => {
      const specs = openSavedPlan(saved, durations);
      const snapshotFile = planSnapshotFile(saved);
      if (!snapshotFile) throw new InputError(`cluster ${c.name}: its plan was not made from a snapshot file, and a rehearsal needs one`, [], 'rehearse a fleet whose clusters name snapshot files (or run fleet rehearse -f FLEET)');
      const snapshot = readSnapshotFile(snapshotFile);
      const plan = confirmSavedPlan(saved, specs.replan(snapshot), snapshot, { compareDurations: !durationsGiven });
      return { plan, snapshot, replan: specs.replan };
    });
  }
  return { fleetPlan, clusters };
}

/** `-f FLEET`: read every cluster (snapshot files, or live contexts read-only) and plan the fleet now. */
async function plannedFleet({ io, now }: CommandContext, opts: FleetRehearseOptions, durations: PhaseDurations): Promise<{ fleetPlan: FleetPlan; clusters: ClusterLoads }> {
  const concurrency = opts.concurrency === undefined ? DEFAULT_FLEET_CONCURRENCY : parseIntegerFlag('--concurrency', opts.concurrency, { min: 1, max: 256 });
  const [{ planFleet }, { effectiveSpecs }, { buildPlan }] = await Promise.all([import('../plan/fleet.ts'), import('../spec/fleet-load.ts'), import('../plan/planner.ts')]);
  const read = readFleet(opts.file);
  requireValidFleet(read);
  const fleet = read.loaded.fleet!;
  for (const d of read.loaded.diagnostics) io.stderr(formatDiagnostic(forDisplay(d)) + '\n');
  const inputs = await readFleetClusters(fleet.spec.clusters, read.dir, { kubeconfig: opts.kubeconfig, requestTimeout: opts.requestTimeout, concurrency, trustFleetKubeconfigs: opts.trustFleetKubeconfigs }, io.env);
  const at = now();
  const fleetPlan = planFleet({ fleet, map: read.loaded.map, info: read.info, diagnostics: read.loaded.diagnostics, clusters: inputs, durations, now: at });
  const specs = effectiveSpecs(fleet, read.loaded.map);
  const clusters: ClusterLoads = new Map();
  fleet.spec.clusters.forEach((fc, i) => {
    const c = fleetPlan.clusters.find((x) => x.name === fc.name);
    const snapshot = inputs.get(fc.name)?.snapshot;
    if (!c || c.batch === null || !c.plan || !snapshot) return;
    const plan: Plan = c.plan;
    const replan = (s: ClusterSnapshot) => buildPlan({ spec: specs[i].spec, specMap: specs[i].map, specInfo: { ...read.info, fleetCluster: fc.name }, snapshot: s, durations, now: at });
    clusters.set(fc.name, () => ({ plan, snapshot, replan }));
  });
  return { fleetPlan, clusters };
}
