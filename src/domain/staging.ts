/**
 * The staging gate's facts (docs/safety.md rule 8; docs/design.md §7 "Pools and waves"). Pure.
 *
 * bootc-operator (bootc-dev/bootc-operator):
 * - a BootcNodePool's spec.image.ref may be a tag; the controller resolves it and writes the
 *   digest to status.targetDigest (api/v1alpha1/bootcnodepool_types.go BootcNodePoolStatus;
 *   tag resolution goes on while the pool is paused, and `nextTagResolutionTime` says when it
 *   looks again), and every BootcNode's spec.desiredImage is name@status.targetDigest
 *   (internal/controller `desiredImageFromPool`); `syncBootcNodeSpec` resets
 *   desiredImageState to Staged whenever desiredImage changes;
 * - the daemon reports staging through the BootcNode condition Idle: reason Staging while it
 *   pulls and stages, Staged once status.staged holds the image (api/v1alpha1
 *   bootcnode_types.go condition reasons Idle / Staging / Staged / Rebooting).
 * So a node has passed the gate when its BootcNode asks for the target (spec.desiredImage) and
 * has staged it (status.staged.imageDigest, Idle=False/Staged, not Degraded); it is staging
 * from the lastTransitionTime of Idle=False/Staging; and a node whose BootcNode does not ask
 * for the target, or that is not staging, never started staging.
 */
import type { Condition } from '../cluster/types.ts';
import { conditionOf, digestOf } from './nodes.ts';
import type { BootcNodeObject, BootcNodePoolObject } from '../cluster/kinds.ts';

type TagResolution = { resolved: true; digest: string } | { resolved: false; why: string };

/**
 * The digest a BootcNodePool resolved for a tag reference `ref`: status.targetDigest, once the
 * pool's spec.image.ref is that reference and the status is of the current generation.
 */
export function resolvedTag(bnp: BootcNodePoolObject | undefined, ref: string): TagResolution {
  if (!bnp) return { resolved: false, why: 'there is no BootcNodePool to resolve it' };
  const current: unknown = bnp.spec?.image?.ref;
  if (current !== ref)
    return {
      resolved: false,
      why: `the BootcNodePool's spec.image.ref is ${typeof current === 'string' ? current : 'not set'}: the bootc-operator resolves the tag once the pool asks for it`,
    };
  const gen = bnp.metadata.generation;
  const observed = bnp.status?.observedGeneration;
  if (typeof gen === 'number' && typeof observed === 'number' && observed !== gen) {
    return {
      resolved: false,
      why: `the BootcNodePool's status is of generation ${observed}, its spec of generation ${gen}: the bootc-operator has not resolved the tag yet`,
    };
  }
  const digest: unknown = bnp.status?.targetDigest;
  if (typeof digest !== 'string' || !digest.startsWith('sha256:'))
    return { resolved: false, why: 'the BootcNodePool has no status.targetDigest yet: the bootc-operator has not resolved the tag' };
  return { resolved: true, digest };
}

export type StagingProgress = { state: 'passed' } | { state: 'staging'; since: number | null } | { state: 'not-started'; why: string };

/** Where a BootcNode is on the way to staging `target` (a digest). `since`: epoch seconds, from Idle's lastTransitionTime. */
export function stagingProgress(bn: BootcNodeObject | undefined, target: string): StagingProgress {
  if (!bn) return { state: 'not-started', why: 'the node has no BootcNode' };
  const desired: unknown = bn.spec?.desiredImage;
  if (digestOf(typeof desired === 'string' ? desired : null) !== target) {
    return {
      state: 'not-started',
      why: `its BootcNode's spec.desiredImage is ${typeof desired === 'string' ? desired : 'not set'}, not the target ${target} (the bootc-operator has not handed the pool's target to the node)`,
    };
  }
  const idle: Condition | undefined = conditionOf(bn, 'Idle');
  const degraded = conditionOf(bn, 'Degraded')?.status === 'True';
  if (!degraded && bn.status?.staged?.imageDigest === target && idle?.status === 'False' && idle.reason === 'Staged') return { state: 'passed' };
  if (idle?.status === 'False' && idle.reason === 'Staging') {
    const t = idle.lastTransitionTime ? Date.parse(idle.lastTransitionTime) / 1000 : NaN;
    return { state: 'staging', since: Number.isFinite(t) ? t : null };
  }
  const cond = idle ? `Idle=${idle.status}${idle.reason ? `/${idle.reason}` : ''}` : 'no Idle condition';
  return { state: 'not-started', why: `the daemon has not started staging ${target} (BootcNode ${cond})` };
}
