/**
 * Applying or rehearsing a saved plan (DESIGN §6 "Sealed plans"; README "Security model"):
 * 1. the file's content must hash to its id (else it was modified: exit 3);
 * 2. a plan saved for review only, or with errors, is never carried out;
 * 3. the files and commit it names must be inside the repository and well formed;
 * 4. the spec it was made from must still hash to what it recorded (exit 3);
 * 5. the cluster must be the one the plan was made for (its recorded identity: exit 3); the
 *    plan is made again from that spec and the cluster; the fresh plan's errors stop it
 *    (exit 6 for a control-plane replacement, 1 otherwise), and its decisions must be the saved
 *    ones (exit 3 with the difference);
 * 6. what runs is the fresh plan, under the saved plan's id (the id the reviewer saw).
 * A sealed fleet plan's cluster plans go through 1 to 4 together (openSavedFleetPlans), the
 * Fleet read once for all, then 5 and 6 each in its cluster's turn.
 */
import type { Plan, PhaseDurations } from '../plan/types.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { ProgressState } from '../apply/driver.ts';
import { rollsTarget } from '../domain/mco-rollout.ts';
import { MCO_DESIRED_CONFIG } from '../domain/labels.ts';
import { clusterMismatch, decisionDifference, settingsDifference, durationsDifference, newlyScheduled, nowBlocked, pendingChangeDifference, oversizedWaves, waveEntryDifference } from '../plan/saved/compare.ts';
import { checkApplicable } from '../apply/applier.ts';
import { remainingWorkDifference } from '../plan/saved/remaining-work.ts';
import { InputError, StalePlanError } from '../base/errors.ts';
import { checkPlanProvenance } from './provenance.ts';
import { specOfSavedPlan, specsOfFleetPlans, type SpecForPlan } from './planning.ts';
import { requirePlanOfThisFleet, type FleetClusterSpec } from '../fleet/cluster-plans.ts';
import type { readFleet, FleetRead } from './fleet-inputs.ts';
import type { FleetPlan } from '../fleet/plan-types.ts';
import { checkFleetPlanAgainstFleet } from './fleet-sealed.ts';
import { checkPlanSeal } from './inputs.ts';

/** Steps 1 to 4: before any cluster access. Returns the verified spec and its re-planner. */
export function openSavedPlan(saved: Plan, durations?: PhaseDurations): SpecForPlan {
  checkSavedPlan(saved);
  checkPlanProvenance(saved);
  return specOfSavedPlan(saved, durations);
}

/** Steps 1 and 2, and the plan's own consistency: what can be checked of the file alone. */
function checkSavedPlan(saved: Plan): void {
  checkPlanSeal(saved);
  if (saved.reviewOnly) {
    throw new InputError(`plan ${saved.id} was saved for review only (plan --for-review): it has errors and is never applied`, saved.diagnostics.filter((d) => d.severity === 'error'), 'fix the spec, plan again, and apply the new plan');
  }
  checkApplicable(saved);
  const inconsistent = waveEntryDifference(saved);
  if (inconsistent.length) {
    throw new InputError(`plan ${saved.id}: its waves and its node entries disagree (${inconsistent.slice(0, 5).join('; ')})`, [], 'bootcplan never writes such a plan: plan again instead of editing the file');
  }
}

/**
 * Steps 1 to 4 for the cluster plans of a sealed fleet plan that sit in a batch (`fleet apply`,
 * `fleet rehearse`), before any cluster access: each plan names this fleet plan's Fleet file
 * (path, ref, commit, sha256) and its own cluster (exit 3), and passes the checks of one plan;
 * the provenance of the Fleet file is checked, then the Fleet read and validated once for all
 * (planning.ts specsOfFleetPlans). Returns each cluster's entry, effective spec and re-planner.
 */
export function openSavedFleetPlans(fp: FleetPlan, durations?: PhaseDurations, readFleetFile?: typeof readFleet): { read: FleetRead | null; clusters: Map<string, FleetClusterSpec> } {
  // A canary in no batch too: fleet apply confirms it live before batch 1.
  const rolled = fp.clusters.filter((c) => (c.batch !== null || c.canary) && c.plan);
  if (!rolled.length) return { read: null, clusters: new Map() };
  for (const c of rolled) {
    requirePlanOfThisFleet(fp, c);
    checkSavedPlan(c.plan!);
  }
  const plans = rolled.map((c) => c.plan!);
  checkPlanProvenance(plans[0]);
  const opened = specsOfFleetPlans(plans, durations, readFleetFile);
  // The file is trusted only for what the verified Fleet re-derives: batches, strategy, canaries,
  // each cluster's labels, source and destination (exit 3 otherwise).
  checkFleetPlanAgainstFleet(fp, opened.read.loaded.fleet!, opened.read.info.path);
  return opened;
}

/**
 * Step 5 begins here: the cluster (`target`, a live read or the snapshot a rehearsal
 * simulates) must be the one the plan was made for (plan/saved/compare.ts clusterMismatch), else
 * exit 3. `apply` and `fleet apply` call it right after the first read of the cluster, before
 * anything is written to it (the rollout status included); confirmSavedPlan calls it again.
 */
export function checkClusterBinding(saved: Plan, target: ClusterSnapshot): void {
  const mismatch = clusterMismatch(saved, target);
  if (mismatch) throw new StalePlanError(mismatch.message, mismatch.lines);
}

/**
 * Steps 5 and 6, with the cluster as it is now.
 * - The cluster has not changed since the plan was made (same fingerprint): every decision
 *   must be the same, and the fresh plan runs under the reviewed id.
 * - It has (nodes finished, an interrupted apply resumes): the pools' settings and the
 *   changes still to write must be the same, no wave may exceed the budget, no node the
 *   review saw blocked may be scheduled, no node the review scheduled may
 *   be blocked now unless bootcplan has it in flight (`inFlight`, from the progress record of
 *   this plan), and the remaining work may only have shrunk (plan/saved/remaining-work.ts). Then the
 *   reviewed waves run (they are what the progress record counts; the applier re-checks each
 *   against a fresh plan before it starts) with the fresh plan's changes.
 */
export function confirmSavedPlan(saved: Plan, fresh: Plan, snapshot: ClusterSnapshot, o: { compareDurations: boolean; inFlight?: ReadonlySet<string> }): Plan {
  checkClusterBinding(saved, snapshot);
  checkApplicable(fresh);
  const unchanged = fresh.cluster.fingerprint === saved.cluster.fingerprint;
  const difference = unchanged
    ? decisionDifference(saved, fresh)
    : [
      ...settingsDifference(saved, fresh), ...pendingChangeDifference(saved, fresh), ...oversizedWaves(saved),
      ...newlyScheduled(saved, fresh), ...nowBlocked(saved, fresh, o.inFlight ?? new Set()),
      ...remainingWorkDifference(saved, fresh, snapshot),
    ];
  if (o.compareDurations) difference.push(...durationsDifference(saved, fresh));
  if (difference.length) throw new StalePlanError(`plan ${saved.id} is not what the spec and the cluster give now`, difference);
  // Moved on: the reviewed waves run (the progress record counts them), but every object
  // write is the fresh plan's, so no change is ever taken from the file alone.
  return unchanged ? { ...fresh, id: saved.id } : { ...saved, changes: fresh.changes };
}

/**
 * What bootcplan has in flight for a resume of `saved` (`progress` is its record): the nodes of
 * its record, and, in MCO pools it was rolling and has not finished, the nodes the MCO has
 * started on the rendered config of bootcplan's rollout (Node desiredConfig = the pool's
 * rendered config, which carries the target image: src/domain/mco-rollout.ts rollsTarget).
 * An apply stopped mid-wave paused the pool again, and the MCO finishes what it started; until
 * then such a node is cordoned, NotReady or updating, and still counts as in flight.
 */
export function inFlightOf(saved: Plan, live: ClusterSnapshot, progress: ProgressState): Set<string> {
  const out = new Set(Object.entries(progress.nodes).filter(([, e]) => e.planId === saved.id && e.step !== 'done').map(([n]) => n));
  const run = progress.run;
  if (!run || run.planId !== saved.id) return out;
  for (const sp of saved.pools) {
    const pp = run.pools[sp.name];
    if (sp.backend !== 'mco' || !pp || pp.done) continue;
    const rendered: string | undefined = live.machineConfigPools.find((m) => m.metadata.name === sp.name)?.spec?.configuration?.name;
    const osImageURL = live.machineConfigs.find((m) => m.metadata.name === rendered)?.spec?.osImageURL;
    if (!rendered || typeof osImageURL !== 'string' || !rollsTarget({ pool: sp.name, rendered, rolledOut: null, updating: false, osImageURL }, sp.targetImage)) continue;
    for (const n of sp.nodes) {
      if (n.wave !== null && live.nodes.find((x) => x.metadata.name === n.name)?.metadata.annotations?.[MCO_DESIRED_CONFIG] === rendered) out.add(n.name);
    }
  }
  return out;
}
