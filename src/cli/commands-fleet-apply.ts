/**
 * `bootcplan fleet apply FLEETPLAN | -f FLEET` (DESIGN §10; README "Fleets: fleet apply"): the
 * fleet's batches through the fleet runner (src/apply/fleet-runner.ts), each cluster applied as
 * `apply PLANFILE` applies one: through its own driver (its kubeconfig context) and its own lock,
 * its plan confirmed against the cluster as it is now. I/O only.
 *
 * Before any cluster is reached: the fleet plan must hash to its id and so must every cluster
 * plan in it (exit 3); every cluster plan must name this fleet plan's Fleet file and its own
 * cluster; the Fleet file must still hash to what the plans recorded (exit 3); the fleet plan must
 * be applicable (no error, every canary planned). A cluster is opened only when its batch starts,
 * so a fleet stopped by its canary sends no request to the others.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { EXIT, InputError, StalePlanError } from '../base/errors.ts';
import type { Plan } from '../plan/types.ts';
import type { FleetClusterPlan, FleetPlan } from '../plan/fleet-types.ts';
import type { FleetEvent } from '../apply/fleet-events.ts';
import type { FleetClusterSession } from '../apply/fleet-runner.ts';
import type { Clock } from '../apply/driver.ts';
import { DEFAULT_DURATIONS } from '../domain/timing.ts';
import { forDisplay } from '../render/secrets.ts';
import type { CommandContext } from './deps.ts';
import { type CliIO, useColor, askOnTerminal } from './io.ts';
import { type KubeOptions, kubeconfigOption, requestTimeoutOption, outputFormatOption, parseIntegerFlag, parseDurationFlag } from './options.ts';
import { processSignals, withStopOnSignal } from './signals.ts';
import type { SpecForPlan } from './planning.ts';
import { planSpecFile } from './provenance.ts';
import { readFleet, requireValidFleet, readFleetClusters, readFleetPlanFile, fleetRevision, DEFAULT_FLEET_FILE, DEFAULT_FLEET_CONCURRENCY } from './fleet-inputs.ts';
import { trustFleetKubeconfigsOption, fleetKubeconfigSource, requireFleetClusterKubeFlags } from './fleet-kubeconfig.ts';
import { checkFleetPlanSeal } from './fleet-sealed.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';

export const FLEET_APPLY_FORMATS = ['text', 'json'] as const;

interface FleetApplyOptions {
  file: string;
  kubeconfig?: string;
  requestTimeout?: string;
  concurrency?: string;
  autoApprove?: boolean;
  lockTimeout: string;
  output: (typeof FLEET_APPLY_FORMATS)[number];
  trustFleetKubeconfigs?: boolean;
}

export function registerFleetApply(fleet: Command, ctx: CommandContext): void {
  fleet
    .command('apply')
    .description('roll the fleet out: canaries first, then batches; each cluster through its own context and lock (exit: the worst cluster\'s)')
    .argument('[fleetplan]', 'a fleet plan saved with fleet plan --out (default: plan -f FLEET now)')
    .addOption(new Option('-f, --file <fleet>', 'Fleet spec, planned now when no fleet plan file is given').default(DEFAULT_FLEET_FILE))
    .addOption(kubeconfigOption())
    .addOption(requestTimeoutOption())
    .addOption(new Option('--concurrency <n>', `clusters read at once while planning with -f (default ${DEFAULT_FLEET_CONCURRENCY})`))
    .addOption(trustFleetKubeconfigsOption())
    .option('--auto-approve', 'do not ask for confirmation (needed without a terminal)')
    .option('--lock-timeout <duration>', 'wait this long for a cluster\'s lock another apply holds, e.g. after a killed fleet apply (0: that cluster fails with exit 4 at once)', '0')
    .addOption(outputFormatOption(FLEET_APPLY_FORMATS, 'output format (json: the fleet events and each cluster\'s apply events as NDJSON on stdout)'))
    .action((planfile: string | undefined, opts: FleetApplyOptions) => fleetApplyAction(ctx, planfile, opts));
}

/** One cluster, checked before any cluster access: its saved plan, the re-planner, how to reach it. */
interface Prepared {
  saved: Plan;
  specs: SpecForPlan;
  flags: KubeOptions;
}

async function fleetApplyAction(ctx: CommandContext, planfile: string | undefined, opts: FleetApplyOptions): Promise<void> {
  const { io, setExit } = ctx;
  const json = opts.output === 'json';
  const interactive = io.stdinIsTTY ?? (io.stdoutIsTTY && io.stderrIsTTY);
  if (!opts.autoApprove && !interactive) {
    throw new InputError('fleet apply needs confirmation, and there is no terminal to ask on', [], 'review the fleet plan (bootcplan fleet plan / fleet show), then run fleet apply with --auto-approve');
  }
  const lockTimeoutSeconds = parseDurationFlag('--lock-timeout', opts.lockTimeout, 24 * 3600);
  const [{ runFleet, checkFleetApplicable }, { openSavedPlan }] = await Promise.all([import('../apply/fleet-runner.ts'), import('./sealed.ts')]);
  const fp = planfile ? readFleetPlanFile(planfile) : await planFleetNow(ctx, opts, json);
  checkFleetPlanSeal(fp);
  checkFleetApplicable(fp);
  const prepared = await prepareClusters(fp, opts, (p) => openSavedPlan(p, DEFAULT_DURATIONS));
  if (!opts.autoApprove && !(await confirm(io, fp))) {
    io.stderr('fleet apply cancelled\n');
    setExit(EXIT.error);
    return;
  }
  const { fleetEventLine, fleetEventToNdjson, renderFleetRunText } = await import('../render/fleet-run.ts');
  const onEvent = (e: FleetEvent) => {
    if (json) io.stdout(fleetEventToNdjson(e));
    else {
      const line = fleetEventLine(e);
      if (line) io.stderr(line + '\n');
    }
  };
  const clock = await wallClock(ctx);
  const result = await withStopOnSignal(io, ctx.signals ?? processSignals, ctx.exitNow ?? ((c) => process.exit(c)), (signal) =>
    runFleet({ plan: fp, clock, signal, onEvent, open: (c) => openCluster(ctx, prepared.get(c.name)!, lockTimeoutSeconds) }));
  if (!json) io.stdout(renderFleetRunText(result, { color: useColor(io, io.stdoutIsTTY) }));
  setExit(result.exitCode);
}

/** `fleet apply -f FLEET`: plans the fleet now (live contexts or snapshots), prints it, and applies that. */
async function planFleetNow(ctx: CommandContext, opts: FleetApplyOptions, json: boolean): Promise<FleetPlan> {
  const concurrency = opts.concurrency === undefined ? DEFAULT_FLEET_CONCURRENCY : parseIntegerFlag('--concurrency', opts.concurrency, { min: 1, max: 256 });
  const read = readFleet(opts.file);
  requireValidFleet(read);
  const [{ planFleet }, { renderFleetText }] = await Promise.all([import('../plan/fleet.ts'), import('../render/fleet-text.ts')]);
  const clusters = await readFleetClusters(read.loaded.fleet!.spec.clusters, read.dir, { kubeconfig: opts.kubeconfig, requestTimeout: opts.requestTimeout, concurrency, trustFleetKubeconfigs: opts.trustFleetKubeconfigs }, ctx.io.env);
  const fp = planFleet({ fleet: read.loaded.fleet!, map: read.loaded.map, info: read.info, diagnostics: read.loaded.diagnostics, clusters, now: ctx.now() });
  if (!json) ctx.io.stdout(renderFleetText(fp, { color: useColor(ctx.io, ctx.io.stdoutIsTTY) }) + '\n');
  return fp;
}

/**
 * Every cluster of a batch, checked without reaching any cluster: its plan is this fleet's (the
 * same Fleet file, commit and hash; its own cluster name); the first goes through openSavedPlan
 * (the Fleet still hashes to what it recorded: exit 3; provenance), and every one through the
 * plan checks openSavedPlan makes (review-only, errors, waves and node entries agreeing). The
 * Fleet is then read once for all (specOfSavedPlan would read and validate the whole Fleet again
 * per cluster: 74 s for 300 clusters), each cluster re-planned from its effective spec as
 * specOfSavedPlan does, and reached through its context and kubeconfig as the Fleet names them.
 */
async function prepareClusters(fp: FleetPlan, opts: FleetApplyOptions, open: (p: Plan) => SpecForPlan): Promise<Map<string, Prepared>> {
  const [{ effectiveSpecs }, { buildPlan }, { waveEntryDifference }, { checkApplicable }] = await Promise.all([
    import('../spec/fleet-load.ts'), import('../plan/planner.ts'), import('../plan/seal.ts'), import('../apply/applier.ts'),
  ]);
  const out = new Map<string, Prepared>();
  const rolled = fp.clusters.filter((c) => c.batch !== null && c.plan);
  if (!rolled.length) return out;
  for (const c of rolled) {
    const p = c.plan!;
    const mismatch = p.spec.path !== fp.fleet.path || p.spec.sha256 !== fp.fleet.sha256 || p.spec.commit !== fp.fleet.commit || p.spec.ref !== fp.fleet.ref || p.spec.fleetCluster !== c.name;
    if (mismatch) {
      throw new StalePlanError(`the plan of cluster ${c.name} was not made from this fleet plan's Fleet`, [
        `it names ${p.spec.path} (sha256 ${String(p.spec.sha256).slice(0, 16)}…) for cluster ${JSON.stringify(p.spec.fleetCluster ?? null)}; the fleet plan was made from ${fp.fleet.path} (sha256 ${fp.fleet.sha256.slice(0, 16)}…)`,
        'plan the fleet again instead of editing the file',
      ]);
    }
    checkSavedClusterPlan(p, checkApplicable, waveEntryDifference);
  }
  const first = rolled[0].plan!;
  open(first);
  const read = readFleet(planSpecFile(first), first.spec.ref ? first.spec.commit ?? first.spec.ref : undefined);
  requireValidFleet(read);
  if (read.info.sha256 !== fp.fleet.sha256) throw new StalePlanError('the Fleet file changed while fleet apply read it', [`${read.info.path} now has sha256 ${read.info.sha256.slice(0, 16)}…`]);
  const fleet = read.loaded.fleet!;
  const effective = effectiveSpecs(fleet, read.loaded.map);
  const snapshots: string[] = [];
  const kubeconfigs = fleetKubeconfigSource(read.dir, fleetRevision(read), opts.trustFleetKubeconfigs);
  for (const c of rolled) {
    const index = fleet.spec.clusters.findIndex((e) => e.name === c.name);
    if (index < 0) throw new InputError(`fleet plan ${fp.id} rolls cluster ${c.name}, which the Fleet ${read.info.path} does not list`, [], 'plan the fleet again instead of editing the file');
    const e = fleet.spec.clusters[index];
    if (e.context === undefined) snapshots.push(c.name);
    const eff = effective[index];
    const specInfo = { ...read.info, fleetCluster: c.name };
    const replan = (snapshot: ClusterSnapshot) => buildPlan({ spec: eff.spec, specMap: eff.map, specInfo, snapshot, durations: DEFAULT_DURATIONS });
    const flags = requireFleetClusterKubeFlags(c.name, e, kubeconfigs, opts);
    out.set(c.name, { saved: c.plan!, specs: { spec: eff.spec, replan }, flags });
  }
  if (snapshots.length) {
    throw new InputError(`fleet apply reaches clusters through their kubeconfig contexts; ${snapshots.slice(0, 10).join(', ')} ${snapshots.length === 1 ? 'is a snapshot file' : 'are snapshot files'} in ${read.info.path}`, [], 'rehearse a Fleet of snapshot files instead: bootcplan fleet rehearse');
  }
  return out;
}

/** What openSavedPlan checks of a plan itself (its seal was checked with the fleet plan's). */
function checkSavedClusterPlan(p: Plan, checkApplicable: (p: Plan) => void, waveEntryDifference: (p: Plan) => string[]): void {
  if (p.reviewOnly) throw new InputError(`plan ${p.id} was saved for review only: it has errors and is never applied`, p.diagnostics.filter((d) => d.severity === 'error'), 'fix the Fleet, plan the fleet again, and apply the new fleet plan');
  checkApplicable(p);
  const inconsistent = waveEntryDifference(p);
  if (inconsistent.length) throw new InputError(`plan ${p.id}: its waves and its node entries disagree (${inconsistent.slice(0, 5).join('; ')})`, [], 'bootcplan never writes such a plan: plan the fleet again instead of editing the file');
}

/** One cluster's session for the runner: its driver, its fleet record, its apply as `apply PLANFILE` runs it. */
async function openCluster(ctx: CommandContext, p: Prepared, lockTimeoutSeconds: number): Promise<FleetClusterSession> {
  const [{ apply }, { windowPolicy }, { confirmSavedPlan, inFlightOf }] = await Promise.all([import('../apply/applier.ts'), import('../apply/policy.ts'), import('./sealed.ts')]);
  const { driver, holder, close } = await ctx.openDriver(p.flags, ctx.io);
  return {
    readRecord: () => driver.readFleetProgress(),
    writeRecord: (r) => driver.writeFleetProgress(r),
    apply: async (signal, onEvent) => {
      const live = await driver.snapshot();
      const progress = await driver.readProgress();
      const plan = confirmSavedPlan(p.saved, p.specs.replan(live), live, { compareDurations: true, inFlight: inFlightOf(p.saved, live, progress) });
      const r = await apply({ plan, replan: p.specs.replan, driver, holder, onEvent, policy: windowPolicy(p.specs.spec.spec.maintenanceWindows, plan), lockTimeoutSeconds, signal });
      return r.outcome === 'nothing-to-do' ? 'nothing-to-do' : 'done';
    },
    close,
  };
}

/** The fleet's clock: the process's time (`now`), and waits that may last longer than Node's timers allow. */
async function wallClock(ctx: CommandContext): Promise<Clock> {
  const { sleepFor } = await import('../kube/long-timer.ts');
  return { now: () => ctx.now() / 1000, sleep: (s, signal) => sleepFor(s, signal) };
}

async function confirm(io: CliIO, fp: FleetPlan): Promise<boolean> {
  const ask = io.ask ?? askOnTerminal;
  const rolled = fp.clusters.filter((c: FleetClusterPlan) => c.batch !== null).length;
  const canaries = fp.strategy.canaries.length ? `, canaries first: ${fp.strategy.canaries.join(', ')}` : '';
  const answer = await ask(forDisplay(`Apply fleet plan ${fp.id} (${rolled} cluster${rolled === 1 ? '' : 's'} in ${fp.batches.length} batch${fp.batches.length === 1 ? '' : 'es'}${canaries})? Only 'yes' is accepted: `));
  return answer.trim() === 'yes';
}
