/**
 * KubeDriver's node operations: cordon and uncordon (a JSON merge patch on
 * `spec.unschedulable` and bootcplan's `bootcplan.dev/cordoned-by` mark, conditional on the
 * resourceVersion read: src/domain/cordons.ts), and drain through the Eviction API (policy/v1): PodDisruptionBudget
 * refusals (429) retried until the timeout; DaemonSet-owned and mirror pods are skipped;
 * waits until the evicted pods are gone (watch on the node's pods).
 */
import type { KObject } from '../cluster/types.ts';
import { type DrainOptions, type CordonResult, type UncordonResult, NotFoundError, DrainTimeoutError, DriverError } from '../apply/driver.ts';
import { cordonPatch, uncordonDecision, uncordonPatch } from '../domain/cordons.ts';
import { type KubeClient, KubeApiError } from './rest.ts';
import { Reflector } from './watch.ts';
import type { ObjectWriter } from './object-writes.ts';
import { objectPath, NODE, POD } from './resources.ts';
import { setLongTimeout } from './long-timer.ts';

/** DaemonSet-owned pods (kubectl drain --ignore-daemonsets) and static (mirror) pods stay. */
export function skippedByDrain(p: KObject): boolean {
  if (p.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined) return true;
  return (p.metadata.ownerReferences ?? []).some((r) => r.kind === 'DaemonSet' && r.controller !== false);
}

export class NodeOps {
  constructor(
    private readonly client: KubeClient,
    private readonly writer: ObjectWriter,
    /** Pause between eviction attempts a PodDisruptionBudget refused (kubectl drain: 5 s). */
    private readonly evictionRetrySeconds: number,
  ) {}

  /** bootcplan's cordon: a merge patch of spec.unschedulable and its mark, conditional on the resourceVersion read (src/domain/cordons.ts). */
  async cordon(node: string, by: string): Promise<CordonResult> {
    const n = await this.readNode(node);
    const body = cordonPatch(n, by);
    if (!body) return 'already-cordoned';
    await this.writer.mergePatch({ apiVersion: 'v1', kind: 'Node', name: node }, body);
    return 'cordoned';
  }
  /** bootcplan's uncordon: only a node with its exact mark; spec.unschedulable and the mark go in one merge patch. */
  async uncordon(node: string, by: string): Promise<UncordonResult> {
    const n = await this.readNode(node);
    const d = uncordonDecision(n, by);
    if (d === 'not-ours') return 'not-ours';
    await this.writer.mergePatch({ apiVersion: 'v1', kind: 'Node', name: node }, uncordonPatch(n, d));
    return d === 'uncordon' ? 'uncordoned' : 'mark-cleared';
  }

  private readNode(node: string): Promise<KObject> {
    return this.client.request('GET', objectPath(NODE, node), { what: `Node ${node}`, expect: 'Node' });
  }

  async drain(node: string, opts: DrainOptions): Promise<void> {
    const n = await this.client.request('GET', objectPath(NODE, node), { what: `Node ${node}`, expect: 'Node' });
    if (n?.spec?.unschedulable !== true) throw new DriverError(`drain ${node}: the node is not cordoned`);
    const deadline = opts.timeoutSeconds === null || opts.timeoutSeconds <= 0 ? Infinity : Date.now() + opts.timeoutSeconds * 1000;
    const pods = new Reflector(this.client, POD, { fieldSelector: `spec.nodeName=${node}` });
    const refusals = new Map<string, string>();
    const evicted = new Set<string>();
    let wake: (() => void) | null = null;
    const off = pods.onChange(() => wake?.());
    try {
      await pods.start();
      for (;;) {
        const left = [...pods.items.values()].filter((p) => !skippedByDrain(p));
        if (!left.length) return;
        if (Date.now() >= deadline) {
          const names = left.map((p) => `${p.metadata.namespace}/${p.metadata.name}${refusals.has(p.metadata.uid ?? '') ? ` (${refusals.get(p.metadata.uid ?? '')})` : p.metadata.deletionTimestamp ? ' (terminating)' : ''}`);
          throw new DrainTimeoutError(`drain ${node}: ${left.length} pod${left.length === 1 ? '' : 's'} still on the node after ${opts.timeoutSeconds}s: ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', ...' : ''}`);
        }
        let refused = false;
        for (const p of left) {
          const uid = p.metadata.uid ?? `${p.metadata.namespace}/${p.metadata.name}`;
          if (p.metadata.deletionTimestamp || evicted.has(uid)) continue;
          try {
            await this.client.request('POST', `${objectPath(POD, p.metadata.name, p.metadata.namespace)}/eviction`, {
              body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: p.metadata.name, namespace: p.metadata.namespace } },
              what: `evict pod ${p.metadata.namespace}/${p.metadata.name}`,
            });
            evicted.add(uid);
            refusals.delete(uid);
          } catch (err) {
            if (err instanceof NotFoundError) { evicted.add(uid); continue; }
            // 429: a PodDisruptionBudget does not allow the disruption now; 500 with
            // "more than one PodDisruptionBudget" is also retried, as kubectl drain does.
            if (err instanceof KubeApiError && (err.status === 429 || (err.status === 500 && /PodDisruptionBudget/i.test(err.message)))) {
              refusals.set(uid, err.message.replace(/^[^:]*:\s*/, ''));
              refused = true;
              continue;
            }
            throw err;
          }
        }
        // Wait for a change on the node's pods, or the retry interval of a refused eviction.
        const waitMs = Math.min(refused ? this.evictionRetrySeconds * 1000 : 5000, Math.max(0, deadline - Date.now()));
        await new Promise<void>((resolve) => {
          const t = setLongTimeout(() => { wake = null; resolve(); }, waitMs);
          wake = () => { t.clear(); wake = null; resolve(); };
        });
      }
    } finally {
      off();
      pods.stop();
    }
  }
}
