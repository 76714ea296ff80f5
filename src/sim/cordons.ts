/**
 * bootcplan's cordons and pauses as the simulated cluster takes them (src/domain/cordons.ts:
 * a cordon flips a schedulable node and marks it, an uncordon touches only a node with its
 * exact mark, a pause carries its mark and leaves a pool paused by someone else as it is).
 * Every write of spec.unschedulable is recorded with the pool's unavailability and budget at
 * that instant (the rehearsal's peak reads them).
 */
import type { NodeObject } from '../cluster/kinds.ts';
import { cordonPatch, pausePatch, uncordonDecision } from '../domain/cordons.ts';
import { BOOTCPLAN_CORDONED_BY, BOOTCPLAN_PAUSED_BY } from '../domain/labels.ts';
import { NotFoundError, type CordonResult, type NodeProgress, type PoolKind, type UncordonResult } from '../apply/ports/driver.ts';
import { poolNameOfKey } from './membership.ts';
import type { SimClusterPort, SimSession } from './session-port.ts';

/** bootcplan's cordon (src/domain/cordons.ts): flips and marks a schedulable node; leaves a cordoned one. */
export function cordonNode(sim: SimClusterPort, session: SimSession, node: string, by: string, progress?: NodeProgress): CordonResult {
  const n = sim.nodes.get(node);
  if (!n) throw new NotFoundError(`Node ${node} not found`);
  if (!cordonPatch(n, by)) return 'already-cordoned';
  if (progress) sim.progress.annotate(n, progress);
  setUnschedulable(sim, session, n, true, by);
  return 'cordoned';
}

/** bootcplan's uncordon: only a node with its exact mark (src/domain/cordons.ts). */
export function uncordonNode(sim: SimClusterPort, session: SimSession, node: string, by: string, progress?: NodeProgress): UncordonResult {
  const n = sim.nodes.get(node);
  if (!n) throw new NotFoundError(`Node ${node} not found`);
  const d = uncordonDecision(n, by);
  if (d === 'not-ours') return 'not-ours';
  if (progress) sim.progress.annotate(n, progress);
  if (d === 'clear-mark') {
    const annotations = n.metadata.annotations;
    if (annotations) delete annotations[BOOTCPLAN_CORDONED_BY];
    sim.touch(node);
    return 'mark-cleared';
  }
  setUnschedulable(sim, session, n, false, null);
  return 'uncordoned';
}

/** Writes spec.unschedulable; `mark`: the cordoned-by annotation to set (string), remove (null) or leave (undefined). */
export function setUnschedulable(sim: SimClusterPort, session: Pick<SimSession, 'name'>, n: NodeObject, value: boolean, mark: string | null | undefined) {
  const node = n.metadata.name;
  sim.record(session, value ? 'cordon' : 'uncordon', node);
  const wasUnavailable = sim.isUnavailable(node);
  const spec = (n.spec ??= {});
  if (value) spec.unschedulable = true;
  else delete spec.unschedulable;
  if (typeof mark === 'string') (n.metadata.annotations ??= {})[BOOTCPLAN_CORDONED_BY] = mark;
  else if (mark === null && n.metadata.annotations) delete n.metadata.annotations[BOOTCPLAN_CORDONED_BY];
  sim.touch(node);
  if (value) {
    const key = sim.poolKeyOf(node);
    sim.cordons.push({
      t: sim.now - sim.start,
      node,
      pool: key ? poolNameOfKey(key) : null,
      session: session.name,
      unavailableAfter: key ? sim.countUnavailable(key) : 0,
      budget: key ? sim.budgetOf(key) : null,
      wasUnavailable,
    });
  }
}

/**
 * bootcplan's pause or unpause of a pool: spec.paused (MachineConfigPool) or
 * spec.rollout.paused (BootcNodePool), with its paused-by mark. True when a paused
 * MachineConfigPool was unpaused, which the MCO acts on.
 */
export function setPoolPausedField(sim: SimClusterPort, session: SimSession, kind: PoolKind, name: string, paused: boolean, by: string): boolean {
  const mcp = kind === 'MachineConfigPool' ? sim.get('MachineConfigPool', name) : undefined;
  const bnp = kind === 'BootcNodePool' ? sim.get('BootcNodePool', name) : undefined;
  const p = mcp ?? bnp;
  if (!p) throw new NotFoundError(`${kind} ${name} not found`);
  sim.record(session, paused ? 'pause' : 'unpause', `${kind}/${name}`);
  // bootcplan's pause carries its mark; its unpause removes it; a pool paused already keeps
  // its pause as it is (src/domain/cordons.ts pausePatch).
  if (!pausePatch(p, paused, by)) return false;
  if (paused) (p.metadata.annotations ??= {})[BOOTCPLAN_PAUSED_BY] = by;
  else if (p.metadata.annotations) delete p.metadata.annotations[BOOTCPLAN_PAUSED_BY];
  if (mcp) {
    const spec = (mcp.spec ??= {});
    const was = spec.paused === true;
    spec.paused = paused;
    sim.changed(mcp);
    return was && !paused;
  } else if (bnp) {
    ((bnp.spec ??= {}).rollout ??= {}).paused = paused;
    sim.changed(bnp);
  }
  return false;
}
