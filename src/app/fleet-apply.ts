/**
 * `bootcplan fleet apply FLEETPLAN | -f FLEET` (docs/design.md §10; docs/fleets.md "fleet apply"): the
 * fleet's batches through the fleet runner (src/fleet/runner.ts), each cluster applied as
 * `apply PLANFILE` applies one: through its own driver (its kubeconfig context) and its own lock,
 * its plan confirmed against the cluster as it is now, through the ports (driver factory, clock,
 * stop requests, the confirmation).
 *
 * Before any cluster is reached: the fleet plan must hash to its id and so must every cluster
 * plan in it (exit 3); every cluster plan must name this fleet plan's Fleet file and its own
 * cluster; the Fleet file must still hash to what the plans recorded (exit 3); the fleet plan must
 * be applicable (no error, every canary planned). A cluster is opened only when its batch starts,
 * so a fleet stopped by its canary sends no request to the others.
 */
import { EXIT, InputError, StalePlanError } from '../base/errors.ts';
import type { Plan } from '../plan/types.ts';
import type { FleetClusterPlan, FleetPlan } from '../fleet/plan-types.ts';
import type { FleetEvent } from '../fleet/run-events.ts';
import type { FleetClusterSession } from '../fleet/cluster-run.ts';
import { checkFleetPlanSeal } from '../fleet/plan-verify.ts';
import type { FLEET_APPLY_FORMATS } from '../fleet/outputs.ts';
import type { Clock, ClusterDriver } from '../apply/ports/driver.ts';
import type { ApplyEvent } from '../apply/ports/events.ts';
import type { GateFailure } from '../apply/gates/health-gates.ts';
import { DEFAULT_DURATIONS } from '../domain/timing.ts';
import { forDisplay } from '../render/secrets.ts';
import { useColor } from '../render/format.ts';
import type { CommandResult, KubeOptions, Ports, SpecForPlan } from './ports.ts';
import { planFleetFile, readFleetPlanFile, fleetRevision, type FleetPlanFlags } from './fleet-inputs.ts';
import { fleetKubeconfigSource, requireFleetClusterKubeFlags } from './fleet-kubeconfig.ts';
import { parseDurationFlag } from './flags.ts';

export interface FleetApplyOptions extends FleetPlanFlags {
  /** The Fleet, planned now when no fleet plan file is given. */
  file: string;
  /** Do not ask for confirmation (needed without a terminal). */
  autoApprove?: boolean;
  /** `--lock-timeout`: how long to wait for a cluster's lock another apply holds (0: that cluster fails with exit 4 at once). */
  lockTimeout: string;
  output: (typeof FLEET_APPLY_FORMATS)[number];
}

type OpenSavedFleetPlans = typeof import('./fleet-saved-plan.ts').openSavedFleetPlans;

/** One cluster, checked before any cluster access: its saved plan, the re-planner, how to reach it. */
interface Prepared {
  saved: Plan;
  specs: SpecForPlan;
  flags: KubeOptions;
}

/** `fleet apply [FLEETPLAN]`: the exit code is the worst cluster's. */
export async function fleetApplyCommand(ports: Ports, planfile: string | undefined, opts: FleetApplyOptions): Promise<CommandResult> {
  const { io } = ports;
  const json = opts.output === 'json';
  const interactive = io.stdinIsTTY ?? (io.stdoutIsTTY && io.stderrIsTTY);
  if (!opts.autoApprove && !interactive) {
    throw new InputError(
      'fleet apply needs confirmation, and there is no terminal to ask on',
      [],
      'review the fleet plan (bootcplan fleet plan / fleet show), then run fleet apply with --auto-approve',
    );
  }
  const lockTimeoutSeconds = parseDurationFlag('--lock-timeout', opts.lockTimeout, 24 * 3600);
  const [{ runFleet, checkFleetApplicable }, { openSavedFleetPlans }] = await Promise.all([import('../fleet/runner.ts'), import('./fleet-saved-plan.ts')]);
  const fp = planfile ? readFleetPlanFile(ports, planfile) : await planFleetNow(ports, opts, json);
  checkFleetPlanSeal(fp);
  checkFleetApplicable(fp);
  const prepared = prepareClusters(ports, fp, opts, openSavedFleetPlans);
  await confirmIdleCanaries(ports, fp, prepared);
  if (!opts.autoApprove && !(await confirm(ports, fp))) {
    io.stderr('fleet apply cancelled\n');
    return { exitCode: EXIT.error };
  }
  const { fleetEventLine, fleetEventToNdjson, renderFleetRunText } = await import('../fleet/run-text.ts');
  const onEvent = (e: FleetEvent) => {
    if (json) io.stdout(fleetEventToNdjson(e));
    else {
      const line = fleetEventLine(e);
      if (line) io.stderr(line + '\n');
    }
  };
  const clock = await wallClock(ports);
  const result = await ports.stops.during((signal) =>
    runFleet({ plan: fp, clock, signal, onEvent, open: (c) => openCluster(ports, prepared, c.name, lockTimeoutSeconds) }),
  );
  if (!json) io.stdout(renderFleetRunText(result, { color: useColor(io, io.stdoutIsTTY) }));
  return { exitCode: result.exitCode };
}

/** `fleet apply -f FLEET`: plans the fleet now (live contexts or snapshots), prints it, and applies that. */
async function planFleetNow(ports: Ports, opts: FleetApplyOptions, json: boolean): Promise<FleetPlan> {
  const { renderFleetText } = await import('../fleet/plan-text.ts');
  const { fleetPlan: fp } = await planFleetFile(ports, opts.file, undefined, opts, ports.io.env, { now: ports.now() });
  if (!json) ports.io.stdout(renderFleetText(fp, { color: useColor(ports.io, ports.io.stdoutIsTTY) }) + '\n');
  return fp;
}

/**
 * Every cluster of a batch, checked without reaching any cluster (fleet-saved-plan.ts openSavedFleetPlans:
 * each plan is this fleet's, passes the checks of one saved plan, and the Fleet is read once for
 * all), then reached through its context and kubeconfig as the Fleet names them.
 */
function prepareClusters(ports: Ports, fp: FleetPlan, opts: FleetApplyOptions, openFleet: OpenSavedFleetPlans): Map<string, Prepared> {
  const { read, clusters: specs } = openFleet(ports, fp, DEFAULT_DURATIONS);
  const out = new Map<string, Prepared>();
  const snapshots: string[] = [];
  const kubeconfigs = read ? fleetKubeconfigSource(ports.git, read.dir, fleetRevision(read), opts.trustFleetKubeconfigs) : null;
  for (const c of fp.clusters) {
    const s = specs.get(c.name);
    // A canary in no batch is prepared too: it is confirmed live before batch 1 (confirmIdleCanaries).
    if ((c.batch === null && !c.canary) || !c.plan || !s || !kubeconfigs) continue;
    const e = s.entry;
    if (e.context === undefined) snapshots.push(c.name);
    const flags = requireFleetClusterKubeFlags(c.name, e, kubeconfigs, opts);
    out.set(c.name, { saved: c.plan, specs: s, flags });
  }
  if (snapshots.length) {
    throw new InputError(
      `fleet apply reaches clusters through their kubeconfig contexts; ${snapshots.slice(0, 10).join(', ')} ${snapshots.length === 1 ? 'is a snapshot file' : 'are snapshot files'} in ${fp.fleet.path}`,
      [],
      'rehearse a Fleet of snapshot files instead: bootcplan fleet rehearse',
    );
  }
  return out;
}

/**
 * Every canary is confirmed against its live cluster before batch 1 (docs/fleets.md "fleet
 * apply"). One in a batch is, by its own apply; one in no batch (its saved plan changes nothing)
 * is read here: a canary that has something to change now means the fleet plan is stale (exit 3),
 * so the others never roll behind a canary planned against a cluster that is not what it was.
 */
async function confirmIdleCanaries(ports: Ports, fp: FleetPlan, prepared: ReadonlyMap<string, Prepared>): Promise<void> {
  const [{ planHasWork }, { checkClusterBinding }] = await Promise.all([import('../fleet/plan.ts'), import('../plan/saved/compare.ts')]);
  for (const c of fp.clusters) {
    const p = prepared.get(c.name);
    if (!c.canary || c.batch !== null || !p) continue;
    const { driver, close } = await ports.openDriver(p.flags, ports.io);
    try {
      const live = await driver.snapshot();
      checkClusterBinding(p.saved, live);
      const now = p.specs.replan(live);
      if (planHasWork(now)) {
        throw new StalePlanError(`canary ${c.name} has something to change now, but its plan in fleet plan ${fp.id} changes nothing`, [
          `re-planned against the cluster as it is now: ${now.summary.nodes} node${now.summary.nodes === 1 ? '' : 's'} to roll, ${now.changes.filter((x) => x.action !== 'noop').length} object change(s)`,
          'no cluster was changed; plan the fleet again (bootcplan fleet plan) and apply the new fleet plan',
        ]);
      }
    } finally {
      close?.();
    }
  }
}

/** One cluster's session for the runner: its driver, its fleet record, its apply as `apply PLANFILE` runs it. */
async function openCluster(ports: Ports, prepared: ReadonlyMap<string, Prepared>, name: string, lockTimeoutSeconds: number): Promise<FleetClusterSession> {
  // The runner opens only clusters of the plan's batches and canaries, each prepared above.
  const p = prepared.get(name);
  if (!p) throw new Error(`internal: cluster ${name} was not prepared for fleet apply`);
  const [{ apply }, { windowPolicy }, { confirmSavedPlan, inFlightOf, checkClusterBinding }, { readFleetRecord, writeFleetRecord }] = await Promise.all([
    import('../apply/applier.ts'),
    import('../apply/ports/policy.ts'),
    import('../plan/saved/compare.ts'),
    import('../fleet/record.ts'),
  ]);
  const { driver, holder, records, close, health, silences } = await ports.openDriver(p.flags, ports.io);
  if (!records) {
    close?.();
    throw new Error('the driver factory keeps no record documents: fleet apply has nowhere to keep its fleet record');
  }
  // The context must reach the cluster this plan was made for before the runner reads or writes
  // its fleet record there (two identical sites, a kubeconfig whose contexts were swapped): the
  // rejection is this cluster's failure, exit 3.
  try {
    checkClusterBinding(p.saved, await driver.snapshot());
  } catch (err) {
    close?.();
    throw err;
  }
  return {
    readRecord: () => readFleetRecord(records),
    writeRecord: (r) => writeFleetRecord(records, r),
    apply: async (signal, onEvent) => {
      const live = await driver.snapshot();
      const progress = await driver.readProgress();
      const plan = confirmSavedPlan(p.saved, p.specs.replan(live), live, { compareDurations: true, inFlight: inFlightOf(p.saved, live, progress) });
      const r = await apply({
        plan,
        replan: p.specs.replan,
        driver,
        holder,
        onEvent,
        policy: windowPolicy(p.specs.spec.spec.maintenanceWindows, plan),
        lockTimeoutSeconds,
        signal,
        health: health?.(),
        silences: plan.silences?.length ? silences?.() : undefined,
      });
      return r.outcome === 'nothing-to-do' ? 'nothing-to-do' : 'done';
    },
    ...(health ? { verify: (await import('../fleet/gates.ts')).sessionVerifier(driver.clock, health) } : {}),
    onGateFailure: (failure, signal, onEvent) => actOnGateFailure(ports, p, { driver, holder, lockTimeoutSeconds }, failure, signal, onEvent),
    close,
  };
}

/**
 * A canary's failed batch gate, carried out on it (docs/fleets.md "Health gates"): its onFailure
 * run by the canary's own applier under its lock, and reported where its single-cluster apply
 * reports (the Rollout status and Events, src/app/apply-report.ts), the gate's verdict first.
 */
async function actOnGateFailure(
  ports: Ports,
  p: Prepared,
  on: { driver: ClusterDriver; holder: string; lockTimeoutSeconds: number },
  failure: GateFailure,
  signal: AbortSignal,
  onEvent: (e: ApplyEvent) => void,
): Promise<never> {
  const [{ applyBatchGateFailure }, { gateFailEvent }, { ApplyReporting }] = await Promise.all([
    import('../apply/applier.ts'),
    import('../apply/gates/health-gates.ts'),
    import('./apply-report.ts'),
  ]);
  const reporting = new ApplyReporting(on.driver, ports.io, p.specs.spec, false, undefined);
  await reporting.open(p.saved);
  reporting.onEvent({ t: failure.seconds, ...gateFailEvent(failure) });
  try {
    return await applyBatchGateFailure(
      {
        plan: p.saved,
        replan: p.specs.replan,
        driver: on.driver,
        holder: on.holder,
        lockTimeoutSeconds: on.lockTimeoutSeconds,
        signal,
        onEvent: (e) => {
          reporting.onEvent(e);
          onEvent(e);
        },
      },
      failure,
    );
  } catch (err) {
    throw (await reporting.failed(err)) ?? err;
  }
}

/** The fleet's clock: the process's time (`now`), and waits that may last longer than Node's timers allow. */
async function wallClock(ports: Ports): Promise<Clock> {
  const { sleepFor } = await import('../kube/long-timer.ts');
  return { now: () => ports.now() / 1000, sleep: (s, signal) => sleepFor(s, signal) };
}

async function confirm(ports: Ports, fp: FleetPlan): Promise<boolean> {
  const rolled = fp.clusters.filter((c: FleetClusterPlan) => c.batch !== null).length;
  const canaries = fp.strategy.canaries.length ? `, canaries first: ${fp.strategy.canaries.join(', ')}` : '';
  const answer = await ports.ask(
    forDisplay(
      `Apply fleet plan ${fp.id} (${rolled} cluster${rolled === 1 ? '' : 's'} in ${fp.batches.length} batch${fp.batches.length === 1 ? '' : 'es'}${canaries})? Only 'yes' is accepted: `,
    ),
  );
  return answer.trim() === 'yes';
}
