/**
 * Which MachineConfigPools render a MachineConfig, and the osImageURL their rendered config gets,
 * computed as the MCO computes it (docs/spec.md "Inherited pools and the merge order";
 * docs/design.md §14). Pure; the planner, the applier, the simulator and the e2e agent all use it.
 *
 * Upstream (openshift/machine-config-operator):
 * - pkg/controller/render/render_controller.go `getMachineConfigsForPool`: a pool renders every
 *   MachineConfig its spec.machineConfigSelector matches (metav1.LabelSelectorAsSelector); a nil
 *   or empty selector matches nothing ("If a pool with a nil or empty selector creeps in, it
 *   should match nothing"). A custom pool selects `machineconfiguration.openshift.io/role In
 *   [worker, <pool>]` (docs/custom-pools.md), so it renders every worker MachineConfig too.
 * - pkg/controller/common/helpers.go `MergeMachineConfigs`: the configs whose role label is
 *   `worker` come first, sorted by name, then all the others, sorted by name ("custom pool
 *   configuration should take priority"); the osImageURL is the ControllerConfig's (the
 *   release's) unless a config sets one, and the last non-empty one in that order wins.
 *
 * A snapshot that does not carry a pool's machineConfigSelector (a hand-written one) is read as a
 * pool that selects its own role label, as every pool the MCO creates does.
 */
import { digestOf, selectorMatches } from './nodes.ts';
import { MCO_ROLE_LABEL } from './labels.ts';
import type { MachineConfigObject, MachineConfigPoolObject } from '../cluster/kinds.ts';

/** The MCO's pool of worker MachineConfigs that custom pools inherit (MachineConfigPoolWorker). */
const WORKER_ROLE = 'worker';

/** Does the pool render a MachineConfig with these labels (getMachineConfigsForPool)? */
export function poolSelectsLabels(mcp: MachineConfigPoolObject, labels: Record<string, string>): boolean {
  const sel = mcp.spec?.machineConfigSelector;
  if (sel === undefined || sel === null) return labels[MCO_ROLE_LABEL] === mcp.metadata.name;
  // selector.Empty(): no matchLabels and no matchExpressions selects nothing here.
  if (!Object.keys(sel.matchLabels ?? {}).length && !(sel.matchExpressions ?? []).length) return false;
  return selectorMatches(sel, labels);
}

/** A MachineConfig the render controller generated (controlled by its pool): an output, not a source. */
export function isRenderedConfig(mc: MachineConfigObject): boolean {
  return (mc.metadata.ownerReferences ?? []).some((r) => r.kind === 'MachineConfigPool' && r.controller === true);
}

/** The MachineConfigPools that render a MachineConfig with these labels, by name. */
export function poolsRendering(pools: readonly MachineConfigPoolObject[], labels: Record<string, string>): string[] {
  return [...new Set(pools.filter((p) => poolSelectsLabels(p, labels)).map((p) => p.metadata.name))].sort();
}

/** MergeMachineConfigs's order: worker-role configs by name, then the others by name. */
export function mergeOrder<T extends MachineConfigObject>(configs: readonly T[]): T[] {
  const byName = (a: T, b: T) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0);
  const worker = configs.filter((c) => c.metadata.labels?.[MCO_ROLE_LABEL] === WORKER_ROLE).sort(byName);
  const others = configs.filter((c) => c.metadata.labels?.[MCO_ROLE_LABEL] !== WORKER_ROLE).sort(byName);
  return [...worker, ...others];
}

interface MergedOsImage {
  /** The MachineConfig whose osImageURL wins, or null: the release's image (ControllerConfig). */
  winner: string | null;
  osImageURL: string | null;
  /** The pool's source MachineConfigs that set an osImageURL, in merge order (the winner last). */
  setters: { name: string; osImageURL: string }[];
  /** How many source MachineConfigs the pool merges. */
  sources: number;
}

/** The osImageURL the MCO renders for a pool from these MachineConfigs (rendered ones are skipped). */
export function mergedOsImage(mcp: MachineConfigPoolObject, configs: readonly MachineConfigObject[]): MergedOsImage {
  const sources = mergeOrder(configs.filter((mc) => !isRenderedConfig(mc) && poolSelectsLabels(mcp, mc.metadata.labels ?? {})));
  const setters = sources.flatMap((mc) =>
    typeof mc.spec?.osImageURL === 'string' && mc.spec.osImageURL !== '' ? [{ name: mc.metadata.name, osImageURL: mc.spec.osImageURL }] : [],
  );
  const last = setters[setters.length - 1];
  return { winner: last?.name ?? null, osImageURL: last?.osImageURL ?? null, setters, sources: sources.length };
}

/**
 * Why another MachineConfig wins over `ours` for a pool, in words (the plan error and the apply
 * halt say the same): where each sorts, and what the merge order is.
 */
export function overrideExplanation(pool: string, merged: MergedOsImage, ours: string): string {
  const pos = (name: string) => merged.setters.findIndex((s) => s.name === name) + 1;
  const winner = merged.winner ?? 'none';
  const where = pos(ours)
    ? `${ours} is number ${pos(ours)} and ${winner} number ${pos(winner)} of the ${merged.setters.length} MachineConfigs that set osImageURL for pool ${pool}`
    : `${ours} is not among the MachineConfigs pool ${pool} renders; ${winner} is the last of the ${merged.setters.length} that set osImageURL`;
  return `${where} (the MCO merges the configs with role ${WORKER_ROLE} first, then the others, each group by name, and the last osImageURL wins)`;
}

/** Same image: by digest when the target has one, else by reference. */
export function sameImage(image: string, target: string): boolean {
  const d = digestOf(target);
  return d ? digestOf(image) === d : image === target;
}

/**
 * During apply: once `ours` carries the target, the pool's merged osImageURL is another
 * MachineConfig's (one written after the plan): the rendered config will not be the target, so
 * waiting for it is pointless. The reason, in words, or null.
 */
export function overriddenTarget(mcp: MachineConfigPoolObject, configs: readonly MachineConfigObject[], ours: string, target: string): string | null {
  const mine = configs.find((m) => m.metadata.name === ours);
  const url = mine?.spec?.osImageURL;
  if (typeof url !== 'string' || !sameImage(url, target)) return null;
  const merged = mergedOsImage(mcp, configs);
  if (merged.osImageURL === null || sameImage(merged.osImageURL, target)) return null;
  return `MachineConfig ${merged.winner} sets osImageURL ${merged.osImageURL} and the MCO merges it after ${ours}, so pool ${mcp.metadata.name} renders ${merged.osImageURL}, not the target: ${overrideExplanation(mcp.metadata.name, merged, ours)}; remove spec.osImageURL from ${merged.winner} (or delete it), then apply again`;
}
