/**
 * A pool's change drafts: the MachineConfigPool's budget and pause switch, the BootcNodePool's
 * image, budget and reboot policy (kept paused: bootcplan drives the waves), or for an MCO-only
 * pool the MachineConfig that carries the OS image. The third step of src/plan/pool.ts. Pure.
 */
import { drainTimeoutOf } from './drain.ts';
import type { PoolSpec } from '../rollout-spec/types.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { MCO_ROLE_LABEL, BOOTCPLAN_MANAGED_BY } from '../domain/labels.ts';
import { type DraftChange, updateChange } from './changes.ts';
import type { Risk } from './types.ts';
import type { PoolMembers } from './pool-members.ts';

/** The MachineConfig that carries a pool's OS image for MCO-only pools. */
export function osImageMachineConfigName(pool: string): string {
  // MCO merges MachineConfigs sorted by name and the last osImageURL wins
  // (pkg/controller/common MergeMachineConfigs), so the name sorts after the
  // generated 99-<pool>-* configs.
  return `99-${pool}-zz-bootcplan-os-image`;
}

export function poolChanges(pool: PoolMembers, snapshot: ClusterSnapshot): DraftChange[] {
  const { spec: p, bnp, mcp, budget, paused, rebootPolicy, pending, ownedBy, administratorPause } = pool;
  const drafts: DraftChange[] = [];
  const risk: Risk = pending.length ? 'disruptive' : 'none';
  if (mcp) {
    const spec: Record<string, unknown> = { maxUnavailable: budget.resolved };
    // For MCO-only pools bootcplan drives the MCO through the pool's pause switch; for
    // bootc pools the MCP (if any) only gets the same budget. An administrator's pause is
    // left alone, unless the spec lifts it (rule 6, pool-sharing.ts): a disruptive change.
    if (administratorPause === 'lifted') spec.paused = false;
    else if (!bnp && administratorPause !== 'kept') spec.paused = paused;
    drafts.push(
      updateChange(
        mcp,
        { spec },
        p.name,
        administratorPause === 'lifted' ? 'disruptive' : 'none',
        (changed) => (changed.length === 1 && changed[0] === 'spec.maxUnavailable' ? 'pool-max-unavailable' : 'pool-rollout-settings'),
        `MachineConfigPool ${p.name}: maxUnavailable resolved to ${budget.resolved}`,
      ),
    );
  }
  // A BootcNodePool a MachineConfigPool owns is the MCO's to write (rule 4, pool-sharing.ts).
  if (bnp && ownedBy) return drafts;
  if (bnp) {
    const rollout: Record<string, unknown> = { maxUnavailable: budget.resolved, paused: true };
    const drainTimeout = drainTimeoutOf(p);
    if (drainTimeout !== undefined) rollout.drainTimeoutSeconds = drainTimeout;
    // A paused pool (the spec's paused: true, or an administrator's pause kept) gets no new image:
    // the bootc-operator's pause only stops reboot approvals, while every BootcNode's
    // spec.desiredImage follows spec.image.ref and each daemon stages it (bootc-dev/bootc-operator
    // docs/ARCHITECTURE.md "Rollback, Pause, Cancel": "Nodes already mid-staging complete their
    // staging. Tag resolution continues"; internal/controller syncBootcNodeSpec).
    const held = paused || administratorPause === 'kept';
    const after = { spec: { ...(held ? {} : { image: { ref: p.image } }), rollout, disruption: { rebootPolicy } } };
    drafts.push(
      updateChange(
        bnp,
        after,
        p.name,
        held ? 'none' : risk,
        (changed) =>
          changed.includes('spec.image.ref')
            ? 'pool-image'
            : changed.length === 1 && changed[0] === 'spec.rollout.maxUnavailable'
              ? 'pool-max-unavailable'
              : 'pool-rollout-settings',
        // bootc-operator hands out reboot slots only while the pool is not paused; bootcplan
        // keeps it paused and takes the nodes through cordon, drain and reboot itself.
        `BootcNodePool ${p.name}: target image, resolved budget; kept paused so bootcplan drives the waves`,
      ),
    );
  } else if (administratorPause !== 'kept' && !paused) {
    // Not while a pause holds the pool (an administrator's, or the spec's paused: true): the MCO
    // would roll the new image on every node at once when the pool is unpaused, outside
    // bootcplan's waves and windows.
    drafts.push(osImageMachineConfigChange(p, snapshot, risk));
  }
  return drafts;
}

/** MCO-only pools: the MachineConfig that carries the OS image, updated or created. */
function osImageMachineConfigChange(p: PoolSpec, snapshot: ClusterSnapshot, risk: Risk): DraftChange {
  const name = osImageMachineConfigName(p.name);
  const mc = snapshot.machineConfigs.find((m) => m.metadata.name === name);
  if (mc) {
    return updateChange(
      mc,
      { spec: { osImageURL: p.image } },
      p.name,
      risk,
      () => 'pool-os-image-machineconfig',
      `MachineConfig ${name} carries the OS image for pool ${p.name}`,
    );
  }
  const object = {
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfig',
    metadata: { name, labels: { [MCO_ROLE_LABEL]: p.name, [BOOTCPLAN_MANAGED_BY]: 'bootcplan' } },
    spec: { osImageURL: p.image },
  };
  return {
    address: `MachineConfig/${name}`,
    apiVersion: object.apiVersion,
    kind: 'MachineConfig',
    namespace: null,
    name,
    action: 'create',
    reason: 'pool-os-image-machineconfig',
    patch: [],
    before: null,
    after: { metadata: { labels: object.metadata.labels }, spec: object.spec },
    object,
    risk,
    pool: p.name,
    description: `MachineConfig ${name} carries the OS image for pool ${p.name}`,
  };
}
