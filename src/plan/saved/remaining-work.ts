/**
 * Staleness (docs/design.md §7), part of the saved-plan module: before any write and before each wave
 * the applier plans again from the cluster as it is now and compares the *remaining work* with
 * the saved plan (and `apply PLANFILE` does once before it starts: ./compare.ts).
 * Allowed differences: nodes that reached their target, changes already in the cluster
 * (they plan as noop), budget and wave composition (recomputed from what is unavailable
 * now), and the MachineConfigPool `spec.paused` switch the applier itself toggles.
 * Anything else — a node added, removed or running another image, a pool whose budget
 * resolves differently, an object someone else edited — is a difference, listed one per
 * line for the StalePlanError (exit 3).
 */
import type { Operation } from 'fast-json-patch';
import type { Plan, PlanChange } from '../types.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import { indexSnapshot, viewNode } from '../../domain/nodes.ts';
import { deepEqual } from '../../base/equal.ts';
import { changeKey } from '../changes.ts';

const short = (d: string | null) => (d && d.startsWith('sha256:') ? d.slice(0, 19) : (d ?? 'unknown'));

function effectiveOps(c: PlanChange): Operation[] {
  if (c.action === 'noop') return [];
  // The applier pauses and unpauses MCO pools between waves; that is not a change of plan.
  if (c.kind === 'MachineConfigPool') return c.patch.filter((op) => op.path !== '/spec/paused');
  return c.patch;
}

function describeMoved(saved: PlanChange, fresh: PlanChange): string[] {
  const savedTests = new Map<string, unknown>();
  for (const o of saved.patch) if (o.op === 'test') savedTests.set(o.path, o.value);
  const lines: string[] = [];
  for (const op of fresh.patch) {
    if (op.op !== 'test') continue;
    const was = savedTests.get(op.path);
    const now: unknown = op.value;
    if (!savedTests.has(op.path)) lines.push(`~ ${fresh.address}: ${op.path} is now ${JSON.stringify(now)} (the saved plan did not change it)`);
    else if (!deepEqual(was, now)) lines.push(`~ ${fresh.address}: ${op.path} was ${JSON.stringify(was)} when planned, is now ${JSON.stringify(now)}`);
  }
  return lines.length ? lines : [`~ ${fresh.address}: changed since the plan was made`];
}

export function remainingWorkDifference(saved: Plan, fresh: Plan, snapshot: ClusterSnapshot): string[] {
  const out: string[] = [];
  // Matched by object and managed fields: several ordered changes to one object stay apart.
  const freshChanges = new Map(fresh.changes.map((c) => [changeKey(c), c]));
  const savedKeys = new Set(saved.changes.map(changeKey));
  for (const c of saved.changes) {
    const f = freshChanges.get(changeKey(c));
    const savedOps = effectiveOps(c);
    // Planned no more: nothing left to do for it (the planner drafts no change once the
    // desired state holds, e.g. a legacy opt-out that was migrated).
    if (!f) continue;
    const freshOps = effectiveOps(f);
    if (freshOps.length === 0) continue; // in the cluster already (applied by us, or by someone, identically)
    if (c.action === 'create' || f.action === 'create') {
      if (c.action !== f.action || !deepEqual(c.object, f.object)) out.push(`~ ${c.address}: ${f.action} now (saved plan: ${c.action})`);
      continue;
    }
    if (savedOps.length === 0) {
      out.push(...describeMoved(c, f));
      continue;
    }
    if (!deepEqual(savedOps, freshOps)) out.push(...describeMoved(c, f));
  }
  for (const f of fresh.changes) {
    if (!savedKeys.has(changeKey(f)) && effectiveOps(f).length) out.push(`+ ${f.address}: a change the saved plan does not have (${f.reason})`);
  }

  const idx = indexSnapshot(snapshot);
  const freshPools = new Map(fresh.pools.map((p) => [p.name, p]));
  for (const sp of saved.pools) {
    const fp = freshPools.get(sp.name);
    if (!fp) {
      out.push(`- pool ${sp.name}: no longer in the cluster`);
      continue;
    }
    if (fp.backend !== sp.backend) out.push(`~ pool ${sp.name}: now driven by ${fp.backend} (saved plan: ${sp.backend})`);
    if (fp.maxUnavailable.resolved !== sp.maxUnavailable.resolved) {
      out.push(
        `~ pool ${sp.name}: maxUnavailable ${JSON.stringify(sp.maxUnavailable.value)} resolves to ${fp.maxUnavailable.resolved} (saved plan: ${sp.maxUnavailable.resolved}; ${fp.nodeCount} nodes now, ${sp.nodeCount} then)`,
      );
    }
    const savedNodes = new Map(sp.nodes.map((n) => [n.name, n]));
    const freshNodes = new Map(fp.nodes.map((n) => [n.name, n]));
    for (const [name, n] of freshNodes) {
      const s = savedNodes.get(name);
      if (!s) out.push(`+ ${sp.name}/${name}: needs ${short(n.to)} and is not in the saved plan (runs ${short(n.from)})`);
      else if (s.from !== n.from) out.push(`~ ${sp.name}/${name}: runs ${short(n.from)} (saved plan: ${short(s.from)})`);
      // A tag the saved plan found unresolved (docs/safety.md rule 8) resolves once the apply sets the
      // pool's image: not a difference; those nodes wait for the next plan.
      else if (s.to !== n.to && !(s.blockedBy === 'tag-unresolved' && s.to === sp.targetImage))
        out.push(`~ ${sp.name}/${name}: target ${short(n.to)} (saved plan: ${short(s.to)})`);
      // Someone paused the pool since (docs/safety.md rule 6): its nodes are held back now.
      else if (s.wave !== null && n.blockedBy === 'pool-paused' && !fp.paused)
        out.push(`~ ${sp.name}/${name}: held back now, the pool was paused by someone else (saved plan: wave ${s.wave})`);
    }
    for (const [name, s] of savedNodes) {
      if (freshNodes.has(name)) continue;
      const node = idx.nodes.get(name);
      if (!node) {
        out.push(`- ${sp.name}/${name}: the node no longer exists`);
        continue;
      }
      const v = viewNode(node, idx);
      const atTarget = s.to.startsWith('sha256:') ? v.bootedDigest === s.to : v.bootedImage === s.to;
      if (!atTarget) out.push(`- ${sp.name}/${name}: no longer in pool ${sp.name}`);
    }
  }
  for (const fp of fresh.pools) {
    if (!saved.pools.some((p) => p.name === fp.name) && fp.nodes.length) out.push(`+ pool ${fp.name}: not in the saved plan`);
  }
  return out;
}
