/**
 * The bootc-operator (bootc-dev/bootc-operator) as the simulator plays it: when a
 * BootcNodePool's `spec.image.ref` changes the controller sets every owned BootcNode's
 * `desiredImage` and resets `desiredImageState` to Staged; each daemon stages in parallel
 * (Idle=False/Staging, then Staged with `status.staged`). Staging is not limited by `paused`.
 * `desiredImageState: Booted` makes the daemon reboot (Idle=False/Rebooting, Node NotReady),
 * come back with the staged image booted (Idle=True) and the Node Ready after `ready`
 * seconds. Soft reboot when the pool's rebootPolicy is AllowSoftReboot, the staged entry
 * is softRebootCapable and the simulated operator performs soft reboots (the installed one
 * does not: src/domain/bootc-daemon.ts).
 */
import { createHash } from 'node:crypto';
import type { KObject } from '../cluster/types.ts';
import { hasShapeOf, type BootcNodeObject, type BootcNodePoolObject } from '../cluster/kinds.ts';
import { digestOf } from '../domain/nodes.ts';
import { isoOf } from '../apply/ports/driver.ts';
import { setCondition, type SimWorld } from './world.ts';
import type { BootcOperatorAbilities } from '../domain/bootc-daemon.ts';
import { STORED_STAGE_SECONDS } from '../plan/rollback-planner.ts';

export class BootcOperator {
  constructor(
    private readonly world: SimWorld,
    /** Whether a freshly staged image can be soft-rebooted into. */
    private readonly softCapable: (node: string) => boolean,
    /** Whether the daemon performs soft reboots at all (src/domain/bootc-daemon.ts). */
    private readonly abilities: BootcOperatorAbilities,
  ) {}

  /** Daemons whose BootcNode already asks for an image they have not staged start pulling it. */
  start() {
    for (const bn of this.world.bootcNodes.values()) {
      const d = digestOf(bn.spec?.desiredImage);
      if (d && bn.status?.booted?.imageDigest !== d && bn.status?.staged?.imageDigest !== d) this.daemonReconcile(bn.metadata.name);
    }
  }

  /**
   * The controller reacting to a write: it observes the pool's generation and resolves its
   * image (status.targetDigest, observedGeneration); a new pool image is every owned node's
   * new target.
   */
  onWrite(before: KObject | null, after: KObject) {
    if (!hasShapeOf(after, 'BootcNodePool')) return;
    const ref = after.spec?.image?.ref;
    const status = (after.status ??= {});
    if (typeof ref === 'string' && ref) status.targetDigest = simResolve(ref);
    if (after.metadata.generation !== undefined) status.observedGeneration = after.metadata.generation;
    this.world.changed(after);
    const refBefore = before && hasShapeOf(before, 'BootcNodePool') ? before.spec?.image?.ref : undefined;
    if (refBefore !== ref) this.controllerSetTarget(after);
  }

  private controllerSetTarget(pool: BootcNodePoolObject) {
    const ref = pool.spec?.image?.ref;
    if (!ref) return;
    const digest = simResolve(ref);
    const desired = digestOf(ref) ? ref : `${ref.replace(/:[^/:]+$/, '')}@${digest}`;
    for (const bn of this.world.bootcNodes.values()) {
      const owner = bn.metadata.ownerReferences?.find((r) => r.kind === 'BootcNodePool');
      if (owner?.name !== pool.metadata.name) continue;
      const spec = (bn.spec ??= {});
      if (spec.desiredImage !== desired) {
        spec.desiredImage = desired;
        spec.desiredImageState = 'Staged';
        this.world.changed(bn);
      }
      this.daemonReconcile(bn.metadata.name);
    }
  }

  private daemonReconcile(node: string) {
    const w = this.world;
    const bn = w.bootcNodes.get(node);
    const rt = w.runtime(node);
    if (!bn || !rt) return;
    const digest = digestOf(bn.spec?.desiredImage);
    const degraded = (bn.status?.conditions ?? []).some((c) => c.type === 'Degraded' && c.status === 'True');
    if (!digest || degraded) return;
    const now = isoOf(w.now);
    if (bn.status?.booted?.imageDigest === digest) {
      setCondition(bn, { type: 'Idle', status: 'True', reason: 'Idle', message: '', lastTransitionTime: now });
      w.touch(node);
      return;
    }
    if (bn.status?.staged?.imageDigest === digest) {
      setCondition(bn, { type: 'Idle', status: 'False', reason: 'Staged', message: `staged ${digest}`, lastTransitionTime: now });
      w.touch(node);
      return;
    }
    const image = bn.spec?.desiredImage;
    if (rt.stagingImage === image) return; // already pulling it
    setCondition(bn, { type: 'Idle', status: 'False', reason: 'Staging', message: `staging ${image}`, lastTransitionTime: now });
    w.touch(node);
    const token = ++rt.stageToken;
    rt.stagingImage = image;
    // bootc finds the image of its rollback deployment stored and fetches nothing (ostree-ext
    // store.rs prepare_internal: AlreadyPresent): staging it takes seconds.
    const stage = bn.status?.rollback?.imageDigest === digest ? Math.min(w.durationsOf(node).stage, STORED_STAGE_SECONDS) : w.durationsOf(node).stage;
    w.after(stage, () => {
      if (rt.stageToken !== token) return;
      rt.stagingImage = null;
      if (bn.spec?.desiredImage !== image) return;
      (bn.status ??= {}).staged = {
        image,
        imageDigest: digest,
        version: 'sim',
        timestamp: isoOf(w.now),
        architecture: 'amd64',
        softRebootCapable: this.softCapable(node),
        incompatible: false,
      };
      setCondition(bn, { type: 'Idle', status: 'False', reason: 'Staged', message: `staged ${digest}`, lastTransitionTime: isoOf(w.now) });
      w.touch(node);
    });
  }

  /** The daemon after `desiredImageState: Booted` was written to a node's BootcNode. */
  daemonBoot(bn: BootcNodeObject) {
    const w = this.world;
    const node = bn.metadata.name;
    const rt = w.runtime(node);
    if (!rt) return; // a BootcNode without a Node: no machine to reboot
    const digest = digestOf(bn.spec?.desiredImage);
    const conds = bn.status?.conditions ?? [];
    const idle = conds.find((c) => c.type === 'Idle');
    const degraded = conds.some((c) => c.type === 'Degraded' && c.status === 'True');
    // The daemon reboots only into a staged image that matches, once (bootc-operator daemon).
    if (degraded || idle?.reason === 'Rebooting' || bn.status?.booted?.imageDigest === digest || bn.status?.staged?.imageDigest !== digest) return;
    const pool = w.get('BootcNodePool', bn.metadata.ownerReferences?.find((r) => r.kind === 'BootcNodePool')?.name ?? '');
    const soft = this.abilities.softReboot && pool?.spec?.disruption?.rebootPolicy === 'AllowSoftReboot' && bn.status?.staged?.softRebootCapable === true;
    const failed = w.rebootFails();
    w.recordReboot(node, soft ? 'soft' : 'hard', failed);
    setCondition(bn, { type: 'Idle', status: 'False', reason: 'Rebooting', message: soft ? 'soft-rebooting' : 'rebooting', lastTransitionTime: isoOf(w.now) });
    rt.down = true;
    w.refreshReady(node);
    const d = w.durationsOf(node);
    const rebootSeconds = soft ? d.softReboot : d.reboot;
    w.after(rebootSeconds, () => {
      const at = isoOf(w.now);
      if (failed) {
        setCondition(bn, {
          type: 'Degraded',
          status: 'True',
          reason: 'Error',
          message: 'bootc switch --apply: the new deployment failed to boot; rolled back to the previous deployment',
          lastTransitionTime: at,
        });
      } else {
        const status = (bn.status ??= {});
        status.rollback = status.booted;
        status.booted = status.staged;
        delete status.staged;
      }
      setCondition(bn, { type: 'Idle', status: 'True', reason: 'Idle', message: '', lastTransitionTime: at });
      w.touch(node);
    });
    w.after(rebootSeconds + d.ready, () => {
      rt.down = false;
      w.refreshReady(node);
    });
  }
}

/**
 * The digest of an image reference as the simulated registry answers: the digest of a digest
 * reference; for a tag, a digest made up from the reference (stable, so a snapshot can carry the
 * pool's resolved status.targetDigest: test/support/cluster.ts).
 */
export function simResolve(ref: string): string {
  return digestOf(ref) ?? `sha256:${createHash('sha256').update(ref).digest('hex')}`;
}
