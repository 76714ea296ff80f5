/**
 * Sealed plans (DESIGN §6 "Sealed plans"): what was reviewed is what runs. A saved plan
 * travels from a pull request to an apply job as a file anyone on the way could edit, so
 * apply never takes a decision from the file alone:
 * - the plan `id` is the content hash of the plan (planIdOf); a file whose content no longer
 *   hashes to its id was edited after it was made;
 * - apply re-plans from the verified spec and the live cluster, and the fresh plan's
 *   decisions must equal the saved ones (decisionDifference); the fresh plan is what runs.
 * Pure: no I/O.
 */
import type { Plan, PlanChange, PlanPool, PlanNode } from '../types.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import { clusterIdentityOf, sameIdentity, describeCluster } from '../../cluster/identity.ts';
import { planIdOf } from '../planner.ts';
import { changeKey } from '../changes.ts';
import { deepEqual } from '../../base/equal.ts';

/** A plan with errors saved for review (`plan --out --for-review`): marked, and sealed again. */
export function markForReview(plan: Plan): Plan {
  const marked: Plan = { ...plan, reviewOnly: true };
  return { ...marked, id: planIdOf(marked) };
}

/** The id the content of `plan` hashes to, when it is not the id the plan carries. */
export function tamperedId(plan: Plan): string | null {
  const actual = planIdOf(plan);
  return actual === plan.id ? null : actual;
}

/**
 * Why `saved` must not run on the cluster `target` is a snapshot of (DESIGN §6: a plan made
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

/** Which object a change writes: a plan file must not point a reviewed change at another one. */
function changeTarget(c: PlanChange) {
  return { address: c.address, apiVersion: c.apiVersion, kind: c.kind, namespace: c.namespace, name: c.name };
}

/** What apply does with a change: everything but the explanation (description). */
function changeDecision(c: PlanChange) {
  return { ...changeTarget(c), action: c.action, reason: c.reason, patch: c.patch, object: c.object ?? null, after: c.after ?? null, risk: c.risk, order: c.order, pool: c.pool ?? null, waitAfter: c.waitAfter ?? null };
}

/** The settings apply reads from a pool; they come from the spec and never from progress. */
function poolSettings(p: PlanPool) {
  return {
    backend: p.backend, targetImage: p.targetImage, targetDigest: p.targetDigest, controlPlane: p.controlPlane,
    priority: p.priority, paused: p.paused, rebootPolicy: p.rebootPolicy, drainTimeoutSeconds: p.drainTimeoutSeconds,
    soakSeconds: p.soakSeconds, maxUnavailable: p.maxUnavailable.resolved, rollout: p.rollout ?? 'waves',
    ...(p.stagingTimeoutSeconds !== undefined ? { stagingTimeoutSeconds: p.stagingTimeoutSeconds } : {}),
  };
}

function nodeDecision(n: PlanNode) {
  return { from: n.from, to: n.to, reboot: n.reboot, wave: n.wave, staged: n.staged, blockedBy: n.blockedBy };
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
  const errors = (p: Plan) => p.diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.code} at ${d.path ?? '(file)'}`).sort();
  if (!deepEqual(errors(saved), errors(fresh))) out.push(`~ errors: ${show(errors(saved))} in the plan file, ${show(errors(fresh))} from the spec and the cluster`);
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
    const pick = (x: PlanChange) => ({ ...changeTarget(x), action: x.action, reason: x.reason, after: x.after ?? null, risk: x.risk, order: x.order, pool: x.pool ?? null, waitAfter: x.waitAfter ?? null });
    out.push(...fieldLines(c.address, pick(c), pick(f)));
  }
  return out;
}

/**
 * A plan's waves and its node entries must tell the same story: every name in a wave is a
 * node entry of that pool with that wave number, once; every scheduled entry is in its wave.
 * (The runner reads the waves; the checks read the entries: a node smuggled into the waves
 * only must not get past them.)
 */
export function waveEntryDifference(plan: Plan): string[] {
  const out: string[] = [];
  for (const p of plan.pools) {
    const entries = new Map(p.nodes.map((n) => [n.name, n]));
    const seen = new Set<string>();
    p.waves.forEach((wave, i) => {
      for (const name of wave) {
        const n = entries.get(name);
        if (seen.has(name)) out.push(`pool ${p.name}: ${name} is in more than one wave`);
        seen.add(name);
        if (!n) out.push(`pool ${p.name}: ${name} is in wave ${i + 1} of waves but is not a node of the pool`);
        else if (n.wave !== i + 1) out.push(`pool ${p.name}: ${name} is in wave ${i + 1} of waves but its node entry says wave ${n.wave}`);
      }
    });
    for (const n of p.nodes) if (n.wave !== null && !seen.has(n.name)) out.push(`pool ${p.name}: ${n.name} has wave ${n.wave} but is in no wave`);
  }
  return out;
}

/** Waves that hold more nodes than the pool's budget (the reviewed plan never has one). */
export function oversizedWaves(saved: Plan): string[] {
  const out: string[] = [];
  for (const p of saved.pools) {
    p.waves.forEach((w, i) => {
      if (w.length > p.maxUnavailable.resolved) out.push(`~ pool ${p.name}: wave ${i + 1} has ${w.length} nodes, more than maxUnavailable ${p.maxUnavailable.resolved}`);
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
      else if (was.wave === null) out.push(`~ ${fp.name}/${n.name}: blocked (${was.blockedBy ?? 'unknown'}) in the reviewed plan, scheduled in wave ${n.wave} now`);
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
      if (f && f.wave === null && f.blockedBy !== 'no-budget') out.push(`~ ${sp.name}/${n.name}: in wave ${n.wave} of the reviewed plan, blocked (${f.blockedBy ?? 'unknown'}) now`);
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
  for (const f of fresh.changes) if (!savedKeys.has(changeKey(f))) out.push(`+ ${f.address}: planned from the spec and the cluster, missing from the plan file`);

  const freshPools = new Map(fresh.pools.map((p) => [p.name, p]));
  for (const sp of saved.pools) {
    const fp = freshPools.get(sp.name);
    if (!fp) {
      out.push(`- pool ${sp.name}: in the plan file, not planned from the spec and the cluster`);
      continue;
    }
    if (!deepEqual(sp.waves, fp.waves)) out.push(`~ pool ${sp.name}: waves ${show(sp.waves)} in the plan file, ${show(fp.waves)} from the spec and the cluster`);
    const freshNodes = new Map(fp.nodes.map((n) => [n.name, n]));
    for (const n of sp.nodes) {
      const f = freshNodes.get(n.name);
      if (!f) out.push(`- ${sp.name}/${n.name}: in the plan file, not planned from the spec and the cluster`);
      else out.push(...fieldLines(`${sp.name}/${n.name}`, nodeDecision(n), nodeDecision(f)));
    }
    for (const f of fp.nodes) if (!sp.nodes.some((n) => n.name === f.name)) out.push(`+ ${sp.name}/${f.name}: planned from the spec and the cluster, missing from the plan file`);
  }
  for (const fp of fresh.pools) if (!saved.pools.some((p) => p.name === fp.name)) out.push(`+ pool ${fp.name}: planned from the spec and the cluster, missing from the plan file`);
  return out;
}
