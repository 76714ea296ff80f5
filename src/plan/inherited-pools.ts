/**
 * Pools that inherit bootcplan's OS-image MachineConfig, and the osImageURL each affected pool
 * renders (docs/spec.md "Inherited pools and the merge order"; docs/design.md §14). Pure.
 *
 * The MachineConfig `99-<pool>-zz-bootcplan-os-image` carries the role label of its pool; every
 * MachineConfigPool whose machineConfigSelector selects that label renders it and the MCO reboots
 * its nodes (custom pools select `role In [worker, <pool>]`: MCO docs/custom-pools.md). So:
 * - an inheriting pool the spec names is planned as any pool is (its own nodes, waves, budget and
 *   priority); the source pool records it (`PlanPool.inheritedBy`) so that the applier keeps it
 *   paused until its turn;
 * - an inheriting pool the spec does not name would reboot outside the plan: an error that names
 *   it, its nodes, and the spec lines to add.
 * Then, with every MachineConfig the plan writes in place, each pool that gets one renders the
 * merged osImageURL in the MCO's order (src/domain/mco-render.ts); another MachineConfig that wins
 * over the target is an error naming it and where it sorts.
 */
import type { RolloutSpec } from '../rollout-spec/types.ts';
import { type DiagnosticInput, joinPath } from '../base/diagnostics.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { MachineConfigObject } from '../cluster/kinds.ts';
import type { Membership } from '../domain/pools.ts';
import { MCO_ROLE_LABEL, BOOTCPLAN_MANAGED_BY } from '../domain/labels.ts';
import { mergedOsImage, overrideExplanation, poolsRendering, sameImage } from '../domain/mco-render.ts';
import { osImageMachineConfigName } from './pool-changes.ts';
import type { PlannedPool } from './pool.ts';

/** The labels of a pool's OS-image MachineConfig: the live one's, or those bootcplan creates it with. */
function osImageConfigLabels(snapshot: ClusterSnapshot, pool: string): Record<string, string> {
  const live = snapshot.machineConfigs.find((m) => m.metadata.name === osImageMachineConfigName(pool));
  return live?.metadata.labels ?? { [MCO_ROLE_LABEL]: pool, [BOOTCPLAN_MANAGED_BY]: 'bootcplan' };
}

/** The other MachineConfigPools that render a pool's OS-image MachineConfig. */
export function inheritingPools(snapshot: ClusterSnapshot, pool: string): string[] {
  return poolsRendering(snapshot.machineConfigPools, osImageConfigLabels(snapshot, pool)).filter((p) => p !== pool);
}

export function planInheritance(
  spec: RolloutSpec,
  snapshot: ClusterSnapshot,
  membership: Membership,
  planned: readonly PlannedPool[],
  report: (d: DiagnosticInput) => void,
): void {
  const specPools = spec.spec.pools ?? [];
  const pathOf = (name: string) =>
    joinPath(
      'spec.pools',
      specPools.findIndex((p) => p.name === name),
    );
  const named = new Set(specPools.map((p) => p.name));
  // The OS-image MachineConfig each MCO-only pool of the plan writes (or keeps), as it will be.
  const writes = planned.flatMap((p) => {
    const d = p.drafts.find((c) => c.kind === 'MachineConfig' && c.name === osImageMachineConfigName(p.plan.name));
    return d ? [{ pool: p, name: d.name }] : [];
  });
  if (!writes.length) return;
  const after: MachineConfigObject[] = snapshot.machineConfigs.filter((m) => !writes.some((w) => w.name === m.metadata.name));
  for (const w of writes) {
    after.push({
      apiVersion: 'machineconfiguration.openshift.io/v1',
      kind: 'MachineConfig',
      metadata: { name: w.name, labels: osImageConfigLabels(snapshot, w.pool.plan.name) },
      spec: { osImageURL: w.pool.plan.targetImage },
    });
  }

  for (const w of writes) {
    const pool = w.pool.plan;
    const inheritors = inheritingPools(snapshot, pool.name);
    const inPlan = inheritors.filter((i) => named.has(i));
    if (inPlan.length) pool.inheritedBy = inPlan;
    const missing = inheritors.filter((i) => !named.has(i));
    if (missing.length) reportMissing(pool.name, pool.targetImage, w.name, missing, membership, pathOf(pool.name), report);
  }

  for (const w of writes) {
    const pool = w.pool.plan;
    const mcp = snapshot.machineConfigPools.find((p) => p.metadata.name === pool.name);
    if (!mcp) continue;
    const merged = mergedOsImage(mcp, after);
    if (merged.osImageURL === null || sameImage(merged.osImageURL, pool.targetImage)) continue;
    report({
      code: 'os-image-overridden',
      path: joinPath(pathOf(pool.name), 'image'),
      message: `pool ${pool.name}: MachineConfig ${merged.winner} sets osImageURL ${merged.osImageURL} and the MCO merges it after ${w.name}, so the nodes would get ${merged.osImageURL}, not the target: ${overrideExplanation(pool.name, merged, w.name)}`,
      expected: `${w.name} last among the MachineConfigs that set osImageURL for pool ${pool.name}`,
      hint: `remove spec.osImageURL from MachineConfig ${merged.winner} (or delete it: \`oc delete machineconfig ${merged.winner}\`) if bootcplan is to set the OS image of pool ${pool.name}; or set this pool's image to ${merged.osImageURL}; then plan again`,
    });
  }
}

function reportMissing(
  pool: string,
  image: string,
  config: string,
  missing: string[],
  membership: Membership,
  path: string,
  report: (d: DiagnosticInput) => void,
) {
  const nodesOf = (p: string) => membership.mco.get(p) ?? [];
  const listed = missing.map((p) => `${p} (${nodesOf(p).length ? nodesOf(p).join(', ') : 'no nodes'})`).join('; ');
  const lines = missing.map((p) => `- name: ${p}\n  image: ${image}\n  maxUnavailable: 1`).join('\n');
  const rebooting = missing.some((p) => nodesOf(p).length);
  report({
    severity: rebooting ? 'error' : 'warning',
    code: 'inherited-pool-not-in-spec',
    path: joinPath(path, 'name'),
    message: `MachineConfig ${config} for pool ${pool} is rendered by MachineConfigPool(s) whose machineConfigSelector selects its role ${pool} too, and the MCO would reboot their nodes outside the plan: ${listed}`,
    expected: `every MachineConfigPool that renders ${config} named in spec.pools`,
    hint: `add to spec.pools (each pool then rolls in its own waves, under its own maxUnavailable and priority):\n${lines}`,
  });
}
