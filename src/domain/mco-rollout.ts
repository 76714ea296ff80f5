/**
 * A MachineConfigPool that has rendered a config it has not rolled out yet (docs/safety.md rule 5;
 * docs/design.md §7 "Sharing the cluster"). Pure.
 *
 * Upstream (openshift/machine-config-operator):
 * - the render controller writes the new rendered MachineConfig's name to
 *   spec.configuration.name (pkg/controller/render/render_controller.go,
 *   syncGeneratedMachineConfig), also while the pool is paused;
 * - the node controller copies spec.configuration to status.configuration only once every
 *   node is updated, ready and available (pkg/controller/node/status.go, calculateStatus,
 *   the allUpdated branch), and sets Updating=True ("All nodes are updating to …") while
 *   it rolls (condition types: openshift/api machineconfiguration/v1/types.go).
 * So spec.configuration.name != status.configuration.name, or Updating=True, means the MCO
 * is rolling (or, paused, is about to roll) a config onto the pool's nodes: it will cordon,
 * drain and reboot them with its own budget, and bootcplan must not reboot them meanwhile.
 */

import { conditionOf, digestOf } from './nodes.ts';
import type { MachineConfigObject, MachineConfigPoolObject } from '../cluster/kinds.ts';

export interface McoRollout {
  /** The MachineConfigPool. */
  pool: string;
  /** spec.configuration.name: the rendered config the MCO rolls out. */
  rendered: string | null;
  /** status.configuration.name: the config every node had when the pool was last all updated. */
  rolledOut: string | null;
  /** The Updating condition is True. */
  updating: boolean;
  /** spec.osImageURL of the rendered config, when the snapshot has it. */
  osImageURL: string | null;
}

/** The pool's rollout in progress, or null when its rendered config is rolled out. */
export function pendingMcoRollout(mcp: MachineConfigPoolObject, machineConfigs: ReadonlyMap<string, MachineConfigObject>): McoRollout | null {
  const rendered: string | null = typeof mcp.spec?.configuration?.name === 'string' ? mcp.spec.configuration.name : null;
  const rolledOut: string | null = typeof mcp.status?.configuration?.name === 'string' ? mcp.status.configuration.name : null;
  const updating = conditionOf(mcp, 'Updating')?.status === 'True';
  const moving = !!rendered && !!rolledOut && rendered !== rolledOut;
  if (!moving && !updating) return null;
  const osImageURL = rendered ? machineConfigs.get(rendered)?.spec?.osImageURL : undefined;
  return { pool: mcp.metadata.name, rendered, rolledOut, updating, osImageURL: typeof osImageURL === 'string' && osImageURL ? osImageURL : null };
}

/**
 * bootcplan's own MCO rollout: for an MCO-only pool bootcplan makes the MCO render the spec's
 * image (its osImage MachineConfig) and lets it roll the pool wave by wave. A rendered config
 * whose osImageURL is the pool's target image is that rollout (or one identical to it), not
 * another controller's work.
 */
export function rollsTarget(r: McoRollout, targetImage: string): boolean {
  if (!r.osImageURL) return false;
  const target = digestOf(targetImage);
  return target ? digestOf(r.osImageURL) === target : r.osImageURL === targetImage;
}
