/**
 * A node's progress entry as it lives on the Node (DESIGN §7 "Apply is resumable"): the
 * annotation `bootcplan.dev/progress`, compact JSON of a few fixed fields, so that the bytes
 * written per node step do not depend on the size of the pool. Pure: the drivers write and
 * read it (src/kube/node-ops.ts, src/sim/cluster.ts), `readProgress` collects it from the nodes.
 */
import type { KObject } from '../cluster/types.ts';
import { BOOTCPLAN_PROGRESS } from '../domain/labels.ts';
import { isPlainObject } from '../base/schema.ts';
import type { NodeProgress, NodeStep } from './driver.ts';

export { BOOTCPLAN_PROGRESS };

const STEPS_LIST: readonly NodeStep[] = ['cordon', 'drain', 'reboot', 'booted', 'done', 'failed'];

/** The annotation's value: the entry's fields in a fixed order, absent optional fields left out. */
export function encodeNodeProgress(p: NodeProgress): string {
  const o: NodeProgress = { planId: p.planId, pool: p.pool, wave: p.wave, step: p.step, wasCordoned: p.wasCordoned };
  if (p.rebootAt !== undefined) o.rebootAt = p.rebootAt;
  if (p.rebootKind !== undefined) o.rebootKind = p.rebootKind;
  return JSON.stringify(o);
}

/**
 * The entry an annotation value holds, or null when it is not one bootcplan wrote (not JSON,
 * a field missing or of another type). A node without a usable entry is treated as one
 * bootcplan has not touched; its cordon is still recognised by `bootcplan.dev/cordoned-by`.
 */
export function decodeNodeProgress(text: unknown): NodeProgress | null {
  if (typeof text !== 'string' || text.length > 4096) return null;
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isPlainObject(o)) return null;
  const step = STEPS_LIST.find((s) => s === o.step);
  if (typeof o.planId !== 'string' || typeof o.pool !== 'string' || typeof o.wave !== 'number' || !Number.isSafeInteger(o.wave) || !step || typeof o.wasCordoned !== 'boolean') return null;
  if (o.rebootAt !== undefined && typeof o.rebootAt !== 'string') return null;
  if (o.rebootKind !== undefined && o.rebootKind !== 'soft' && o.rebootKind !== 'hard') return null;
  const p: NodeProgress = { planId: o.planId, pool: o.pool, wave: o.wave, step, wasCordoned: o.wasCordoned };
  if (typeof o.rebootAt === 'string') p.rebootAt = o.rebootAt;
  if (o.rebootKind === 'soft' || o.rebootKind === 'hard') p.rebootKind = o.rebootKind;
  return p;
}

/** The entry on a Node object, or null. */
export function nodeProgressOf(node: KObject | undefined): NodeProgress | null {
  return decodeNodeProgress(node?.metadata.annotations?.[BOOTCPLAN_PROGRESS]);
}

/** Every node's entry, by node name. */
export function nodeProgressOfAll(nodes: Iterable<KObject>): Record<string, NodeProgress> {
  const out: Record<string, NodeProgress> = {};
  for (const n of nodes) {
    const p = nodeProgressOf(n);
    if (p) out[n.metadata.name] = p;
  }
  return out;
}
