/**
 * A saved plan against the cluster as it is now (docs/design.md §6 "Sealed plans"), steps 5 and 6 after
 * ./verify.ts: the cluster must be the one the plan was made for (checkClusterBinding), and
 * what was reviewed is what runs, so apply never takes a decision from the file alone. It plans
 * again from the verified spec and the cluster, and the fresh plan's decisions must be the saved
 * ones (decisionDifference), or, once the cluster moved on, its settings and pending changes,
 * with only less work left (./remaining-work.ts); confirmSavedPlan says what runs then. Pure.
 */
import type { Plan, PlanChange, PlanPool, PlanNode } from '../types.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import { clusterIdentityOf, sameIdentity, describeCluster } from '../../cluster/identity.ts';
import { rollsTarget } from '../../domain/mco-rollout.ts';
import { MCO_DESIRED_CONFIG } from '../../domain/labels.ts';
import { changeKey } from '../changes.ts';
import { deepEqual } from '../../base/equal.ts';
import { StalePlanError } from '../../base/errors.ts';
import { checkApplicable } from './verify.ts';
import { remainingWorkDifference } from './remaining-work.ts';
import { healthDifference } from '../health.ts';

/**
 * Why `saved` must not run on the cluster `target` is a snapshot of (docs/design.md §6: a plan made
 * for another cluster is refused, whatever its state looks like), or null when it may: the
 * identity the plan recorded must be the target's. A plan that recorded none (planned from a
 * snapshot file without ClusterVersion or kube-system Namespace) runs only where none is found
 * either, which a live cluster never is (it always has a kube-system Namespace); a plan that
 * recorded one never runs where none is found. The server is shown, never compared: one
 * cluster has many addresses (src/cluster/identity.ts).
 */
export function clusterMismatch(saved: Plan, target: ClusterSnapshot): { message: string; lines: string[] } | null {
  const want = saved.cluster.identity ?? null;
  const found = clusterIdentityOf(target);
  if (sameIdentity(want, found)) return null;
  const planned = `the plan is for: ${describeCluster(want, saved.cluster.server)}, planned from ${saved.cluster.source}`;
  const here = `this cluster is:  ${describeCluster(found, target.server)}, read from ${target.source}`;
  if (!want) {
    return {
      message: `plan ${saved.id} records no cluster identity, so it cannot be shown to be this cluster's`,
      lines: [
        `it was made by a bootcplan that recorded none, or from a snapshot that holds neither ClusterVersion/version spec.clusterID nor the kube-system Namespace (${saved.cluster.source})`,
        here,
        'nothing was changed; plan against this cluster (bootcplan plan --kubeconfig ..., or --cluster with a snapshot `bootcplan snapshot` wrote) and apply that plan',
      ],
    };
  }
  if (!found) {
    return {
      message: `plan ${saved.id} was made for ${describeCluster(want, null)}, and ${target.source} records no cluster identity`,
      lines: [
        planned,
        `${target.source} holds neither ClusterVersion/version spec.clusterID nor the kube-system Namespace, so it cannot be shown to be that cluster`,
        'rehearse against the snapshot the plan was made from (the default), or one `bootcplan snapshot` wrote of that cluster',
      ],
    };
  }
  if (want.kind !== found.kind) {
    // A snapshot that lacked the ClusterVersion of an OpenShift cluster, say: not provably another cluster, nor this one.
    return {
      message: `plan ${saved.id} knows its cluster by ${want.kind}, this cluster is known by ${found.kind}: it cannot be shown to be the same cluster`,
      lines: [planned, here, 'nothing was changed; plan against this cluster and apply that plan'],
    };
  }
  return {
    message: `plan ${saved.id} was made for another cluster`,
    lines: [planned, here, 'nothing was changed; plan against this cluster and apply that plan'],
  };
}

/**
 * Step 5 begins here: the cluster (`target`, a live read or the snapshot a rehearsal
 * simulates) must be the one the plan was made for (clusterMismatch), else
 * exit 3. `apply` and `fleet apply` call it right after the first read of the cluster, before
 * anything is written to it (the rollout status included); confirmSavedPlan calls it again.
 */
export function checkClusterBinding(saved: Plan, target: ClusterSnapshot): void {
  const mismatch = clusterMismatch(saved, target);
  if (mismatch) throw new StalePlanError(mismatch.message, mismatch.lines);
}

/** Which object a change writes: a plan file must not point a reviewed change at another one. */
function changeTarget(c: PlanChange) {
  return { address: c.address, apiVersion: c.apiVersion, kind: c.kind, namespace: c.namespace, name: c.name };
}

/** What apply does with a change: everything but the explanation (description). */
function changeDecision(c: PlanChange) {
  return {
    ...changeTarget(c),
    action: c.action,
    reason: c.reason,
    patch: c.patch,
    object: c.object ?? null,
    after: c.after ?? null,
    risk: c.risk,
    order: c.order,
    pool: c.pool ?? null,
    waitAfter: c.waitAfter ?? null,
  };
}

/** The settings apply reads from a pool; they come from the spec and never from progress. */
function poolSettings(p: PlanPool) {
  return {
    backend: p.backend,
    targetImage: p.targetImage,
    targetDigest: p.targetDigest,
    controlPlane: p.controlPlane,
    priority: p.priority,
    paused: p.paused,
    rebootPolicy: p.rebootPolicy,
    drainTimeoutSeconds: p.drainTimeoutSeconds,
    soakSeconds: p.soakSeconds,
    maxUnavailable: p.maxUnavailable.resolved,
    rollout: p.rollout ?? 'waves',
    ...(p.stagingTimeoutSeconds !== undefined ? { stagingTimeoutSeconds: p.stagingTimeoutSeconds } : {}),
  };
}

function nodeDecision(n: PlanNode, wave = true) {
  return { from: n.from, to: n.to, reboot: n.reboot, ...(wave ? { wave: n.wave } : {}), staged: n.staged, blockedBy: n.blockedBy };
}

/**
 * Waves drawn around the PodDisruptionBudgets (docs/apply.md "Drain forecast", its waves that do
 * not wait): they follow where the pods run, which the fingerprint leaves out (a pod restarting
 * elsewhere does not make a plan stale). Such a plan's reviewed
 * waves run as reviewed; a drain that the moved pods make wait is the applier's to meet
 * (its drain timeout and `drain.onBlocked`), not a reason to refuse the plan.
 */
function wavesFollowWorkloads(p: Plan): boolean {
  return p.pools.some((pool) => pool.nodes.some((n) => n.drainForecast !== undefined));
}

const show = (v: unknown) => (v === undefined ? 'nothing' : JSON.stringify(v));

function fieldLines(what: string, saved: Record<string, unknown>, fresh: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const k of Object.keys({ ...saved, ...fresh })) {
    if (!deepEqual(saved[k], fresh[k])) out.push(`~ ${what}: ${k} is ${show(saved[k])} in the plan file, ${show(fresh[k])} from the spec and the cluster`);
  }
  return out;
}

/**
 * The settings of every pool and the set of changes, which do not depend on how far a
 * rollout got: they must be equal whatever the cluster did since the plan was made.
 */
export function settingsDifference(saved: Plan, fresh: Plan): string[] {
  const out: string[] = [];
  const freshPools = new Map(fresh.pools.map((p) => [p.name, p]));
  for (const sp of saved.pools) {
    const fp = freshPools.get(sp.name);
    if (fp) out.push(...fieldLines(`pool ${sp.name}`, poolSettings(sp), poolSettings(fp)));
  }
  out.push(...healthDifference(saved, fresh));
  const errors = (p: Plan) =>
    p.diagnostics
      .filter((d) => d.severity === 'error')
      .map((d) => `${d.code} at ${d.path ?? '(file)'}`)
      .sort();
  if (!deepEqual(errors(saved), errors(fresh)))
    out.push(`~ errors: ${show(errors(saved))} in the plan file, ${show(errors(fresh))} from the spec and the cluster`);
  return out;
}

/**
 * Changes that still have work to do (the fresh plan has a patch or a create for them) must
 * be the reviewed ones in everything but progress: the object, action, reason, risk, order,
 * the pool they belong to and the wait that follows them (a removed `waitAfter` would write the managers
 * before the skew-enforcement status left Automatic).
 */
export function pendingChangeDifference(saved: Plan, fresh: Plan): string[] {
  const out: string[] = [];
  const savedByKey = new Map(saved.changes.map((c) => [changeKey(c), c]));
  for (const f of fresh.changes) {
    if (f.action === 'noop' || (f.action === 'update' && f.patch.length === 0)) continue;
    // Only the MachineConfigPool pause bootcplan itself toggles between waves (an apply that
    // stopped or halted left it paused with its mark): not a change the review must have seen.
    if (f.kind === 'MachineConfigPool' && f.action === 'update' && f.patch.every((op) => op.path === '/spec/paused')) continue;
    const c = savedByKey.get(changeKey(f));
    if (!c) continue; // a change the plan file lacks: the remaining-work comparison names it
    const pick = (x: PlanChange) => ({
      ...changeTarget(x),
      action: x.action,
      reason: x.reason,
      after: x.after ?? null,
      risk: x.risk,
      order: x.order,
      pool: x.pool ?? null,
      waitAfter: x.waitAfter ?? null,
    });
    out.push(...fieldLines(c.address, pick(c), pick(f)));
  }
  return out;
}

/** Waves that hold more nodes than the pool's budget (the reviewed plan never has one). */
export function oversizedWaves(saved: Plan): string[] {
  const out: string[] = [];
  for (const p of saved.pools) {
    p.waves.forEach((w, i) => {
      if (w.length > p.maxUnavailable.resolved)
        out.push(`~ pool ${p.name}: wave ${i + 1} has ${w.length} nodes, more than maxUnavailable ${p.maxUnavailable.resolved}`);
    });
  }
  return out;
}

/**
 * Nodes the reviewed plan left alone (blocked, or not in it) that the fresh plan would
 * update: a reviewer never approved rebooting them, whatever else moved in the cluster.
 */
export function newlyScheduled(saved: Plan, fresh: Plan): string[] {
  const out: string[] = [];
  for (const fp of fresh.pools) {
    const sp = saved.pools.find((p) => p.name === fp.name);
    for (const n of fp.nodes) {
      if (n.wave === null) continue;
      const was = sp?.nodes.find((x) => x.name === n.name);
      if (!was) out.push(`+ ${fp.name}/${n.name}: not in the reviewed plan, scheduled in wave ${n.wave} now`);
      else if (was.wave === null)
        out.push(`~ ${fp.name}/${n.name}: blocked (${was.blockedBy ?? 'unknown'}) in the reviewed plan, scheduled in wave ${n.wave} now`);
    }
  }
  return out;
}

/**
 * Nodes the reviewed plan schedules that the fresh plan blocks now (an administrator cordoned
 * one, it went NotReady), other than those bootcplan itself has in flight (an interrupted
 * apply cordoned or rebooted them): the reviewed waves must not take them.
 */
export function nowBlocked(saved: Plan, fresh: Plan, inFlight: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const sp of saved.pools) {
    const fp = fresh.pools.find((p) => p.name === sp.name);
    for (const n of sp.nodes) {
      if (n.wave === null || inFlight.has(n.name)) continue;
      const f = fp?.nodes.find((x) => x.name === n.name);
      // 'no-budget' is not the node's state: the budget is in use now, and the applier admits
      // a node only when it has room.
      if (f && f.wave === null && f.blockedBy !== 'no-budget')
        out.push(`~ ${sp.name}/${n.name}: in wave ${n.wave} of the reviewed plan, blocked (${f.blockedBy ?? 'unknown'}) now`);
    }
  }
  return out;
}

/**
 * The phase durations the estimates use: apply sizes the waves that fit a maintenance window
 * with them (a rehearsal sets its own, so it does not compare them).
 */
export function durationsDifference(saved: Plan, fresh: Plan): string[] {
  return fieldLines('plan', { durations: saved.durations }, { durations: fresh.durations });
}

/**
 * Every decision of the two plans, field by field: changes (by object and managed fields),
 * pools' settings, waves and each node's wave, reboot and block reason, the spec and the
 * cluster they were made from. For a cluster that has not changed since the plan was made
 * (same fingerprint) a deterministic planner gives exactly the saved decisions.
 */
export function decisionDifference(saved: Plan, fresh: Plan): string[] {
  const waves = !wavesFollowWorkloads(saved) && !wavesFollowWorkloads(fresh);
  const out = settingsDifference(saved, fresh);
  // The spec by its content (where it was read from is checked before: provenance).
  out.push(...fieldLines('spec', { sha256: saved.spec.sha256 }, { sha256: fresh.spec.sha256 }));
  out.push(...fieldLines('cluster', { fingerprint: saved.cluster.fingerprint }, { fingerprint: fresh.cluster.fingerprint }));

  const freshChanges = new Map(fresh.changes.map((c) => [changeKey(c), c]));
  const savedKeys = new Set(saved.changes.map(changeKey));
  for (const c of saved.changes) {
    const f = freshChanges.get(changeKey(c));
    if (!f) out.push(`- ${c.address}: in the plan file, not planned from the spec and the cluster`);
    else out.push(...fieldLines(c.address, changeDecision(c), changeDecision(f)));
  }
  for (const f of fresh.changes)
    if (!savedKeys.has(changeKey(f))) out.push(`+ ${f.address}: planned from the spec and the cluster, missing from the plan file`);

  const freshPools = new Map(fresh.pools.map((p) => [p.name, p]));
  for (const sp of saved.pools) {
    const fp = freshPools.get(sp.name);
    if (!fp) {
      out.push(`- pool ${sp.name}: in the plan file, not planned from the spec and the cluster`);
      continue;
    }
    if (waves && !deepEqual(sp.waves, fp.waves))
      out.push(`~ pool ${sp.name}: waves ${show(sp.waves)} in the plan file, ${show(fp.waves)} from the spec and the cluster`);
    const freshNodes = new Map(fp.nodes.map((n) => [n.name, n]));
    for (const n of sp.nodes) {
      const f = freshNodes.get(n.name);
      if (!f) out.push(`- ${sp.name}/${n.name}: in the plan file, not planned from the spec and the cluster`);
      else out.push(...fieldLines(`${sp.name}/${n.name}`, nodeDecision(n, waves), nodeDecision(f, waves)));
    }
    for (const f of fp.nodes)
      if (!sp.nodes.some((n) => n.name === f.name)) out.push(`+ ${sp.name}/${f.name}: planned from the spec and the cluster, missing from the plan file`);
  }
  for (const fp of fresh.pools)
    if (!saved.pools.some((p) => p.name === fp.name)) out.push(`+ pool ${fp.name}: planned from the spec and the cluster, missing from the plan file`);
  return out;
}

/**
 * Steps 5 and 6, with the cluster as it is now.
 * - The cluster has not changed since the plan was made (same fingerprint): every decision
 *   must be the same, and the fresh plan runs under the reviewed id (with the reviewed pools
 *   when its waves follow the pods: wavesFollowWorkloads).
 * - It has (nodes finished, an interrupted apply resumes): the pools' settings and the
 *   changes still to write must be the same, no wave may exceed the budget, no node the
 *   review saw blocked may be scheduled, no node the review scheduled may
 *   be blocked now unless bootcplan has it in flight (`inFlight`, from the progress record of
 *   this plan), and the remaining work may only have shrunk (./remaining-work.ts). Then the
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
        ...settingsDifference(saved, fresh),
        ...pendingChangeDifference(saved, fresh),
        ...oversizedWaves(saved),
        ...newlyScheduled(saved, fresh),
        ...nowBlocked(saved, fresh, o.inFlight ?? new Set()),
        ...remainingWorkDifference(saved, fresh, snapshot),
      ];
  if (o.compareDurations) difference.push(...durationsDifference(saved, fresh));
  if (difference.length) throw new StalePlanError(`plan ${saved.id} is not what the spec and the cluster give now`, difference);
  // Moved on: the reviewed waves run (the progress record counts them), but every object
  // write is the fresh plan's, so no change is ever taken from the file alone.
  if (!unchanged) return { ...saved, changes: fresh.changes };
  // Waves that follow the pods: the reviewed ones (decisionDifference compared all else).
  return wavesFollowWorkloads(saved) || wavesFollowWorkloads(fresh) ? { ...fresh, id: saved.id, pools: saved.pools } : { ...fresh, id: saved.id };
}

/**
 * What inFlightOf reads of the progress record (apply/ports/driver.ts ProgressState: the applier's
 * record of its run and of each node, as the driver returns it).
 */
export interface ProgressSeen {
  run: { planId: string; pools: Record<string, { done: boolean } | undefined> } | null;
  nodes: Record<string, { planId: string; step: string }>;
}

/**
 * What bootcplan has in flight for a resume of `saved` (`progress` is its record): the nodes of
 * its record, and, in MCO pools it was rolling and has not finished, the nodes the MCO has
 * started on the rendered config of bootcplan's rollout (Node desiredConfig = the pool's
 * rendered config, which carries the target image: src/domain/mco-rollout.ts rollsTarget).
 * An apply stopped mid-wave paused the pool again, and the MCO finishes what it started; until
 * then such a node is cordoned, NotReady or updating, and still counts as in flight.
 */
export function inFlightOf(saved: Plan, live: ClusterSnapshot, progress: ProgressSeen): Set<string> {
  const out = new Set(
    Object.entries(progress.nodes)
      .filter(([, e]) => e.planId === saved.id && e.step !== 'done')
      .map(([n]) => n),
  );
  const run = progress.run;
  if (!run || run.planId !== saved.id) return out;
  for (const sp of saved.pools) {
    const pp = run.pools[sp.name];
    if (sp.backend !== 'mco' || !pp || pp.done) continue;
    const rendered = live.machineConfigPools.find((m) => m.metadata.name === sp.name)?.spec?.configuration?.name ?? undefined;
    const osImageURL = live.machineConfigs.find((m) => m.metadata.name === rendered)?.spec?.osImageURL;
    if (!rendered || typeof osImageURL !== 'string' || !rollsTarget({ pool: sp.name, rendered, rolledOut: null, updating: false, osImageURL }, sp.targetImage))
      continue;
    for (const n of sp.nodes) {
      if (n.wave !== null && live.nodes.find((x) => x.metadata.name === n.name)?.metadata.annotations?.[MCO_DESIRED_CONFIG] === rendered) out.add(n.name);
    }
  }
  return out;
}
