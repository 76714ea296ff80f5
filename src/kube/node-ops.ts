/**
 * KubeDriver's node operations: cordon and uncordon (a JSON merge patch on
 * `spec.unschedulable` and bootcplan's `bootcplan.dev/cordoned-by` mark, conditional on the
 * resourceVersion read: src/domain/cordons.ts), carrying the node's progress entry
 * (`bootcplan.dev/progress`, src/apply/ports/node-progress.ts) in the same write; the entry alone,
 * conditional the same way; and drain through the Eviction API (policy/v1):
 * PodDisruptionBudget refusals (429) retried until the timeout; DaemonSet-owned and mirror
 * pods are skipped; waits until the evicted pods are gone (one watch on the node's pods that
 * streams them first where the server can: src/kube/watch.ts `startStreaming`).
 *
 * Requests: the Node is read from the watch cache, not with a GET; only a write refused
 * with 409 (the cache was behind) reads the Node again, once, and writes again.
 */
import type { KObject } from '../cluster/types.ts';
import {
  type DrainOptions,
  type CordonResult,
  type UncordonResult,
  type NodeProgress,
  NotFoundError,
  DrainTimeoutError,
  DriverError,
  ConflictError,
  AbortedError,
} from '../apply/ports/driver.ts';
import { cordonPatch, uncordonDecision, uncordonPatch } from '../domain/cordons.ts';
import { BOOTCPLAN_PROGRESS, encodeNodeProgress } from '../apply/ports/node-progress.ts';
import { type KubeClient, KubeApiError } from './rest.ts';
import { Reflector } from './watch.ts';
import type { ObjectWriter } from './object-writes.ts';
import type { WatchCache } from './watch-cache.ts';
import { objectPath, NODE, POD } from './resources.ts';
import { setLongTimeout } from './long-timer.ts';
import { isPlainObject } from '../base/schema.ts';
import type { NodeObject } from '../cluster/kinds.ts';

/** DaemonSet-owned pods (kubectl drain --ignore-daemonsets) and static (mirror) pods stay. */
export function skippedByDrain(p: KObject): boolean {
  if (p.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined) return true;
  return (p.metadata.ownerReferences ?? []).some((r) => r.kind === 'DaemonSet' && r.controller !== false);
}

/** A merge patch with the node's progress entry added (or the entry alone, conditional on the resourceVersion). */
function withProgress(body: Record<string, unknown> | null, n: NodeObject, progress: NodeProgress | undefined): Record<string, unknown> | null {
  if (!progress) return body;
  const out: Record<string, unknown> = body ? structuredClone(body) : { metadata: {} };
  const metadata: Record<string, unknown> = isPlainObject(out.metadata) ? out.metadata : {};
  out.metadata = metadata;
  const annotations = isPlainObject(metadata.annotations) ? metadata.annotations : {};
  metadata.annotations = { ...annotations, [BOOTCPLAN_PROGRESS]: encodeNodeProgress(progress) };
  if (n.metadata.resourceVersion) metadata.resourceVersion = n.metadata.resourceVersion;
  return out;
}

/** The error of a drain past its timeout: how many pods are left, the first five, and why each is still there. */
function drainTimeout(node: string, left: readonly KObject[], refusals: ReadonlyMap<string, string>, timeoutSeconds: number | null): DrainTimeoutError {
  const names = left.map(
    (p) =>
      `${p.metadata.namespace}/${p.metadata.name}${refusals.has(p.metadata.uid ?? '') ? ` (${refusals.get(p.metadata.uid ?? '')})` : p.metadata.deletionTimestamp ? ' (terminating)' : ''}`,
  );
  return new DrainTimeoutError(
    `drain ${node}: ${left.length} pod${left.length === 1 ? '' : 's'} still on the node after ${timeoutSeconds}s: ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', ...' : ''}`,
  );
}

export class NodeOps {
  constructor(
    private readonly client: KubeClient,
    private readonly writer: ObjectWriter,
    private readonly cache: WatchCache,
    /** Pause between eviction attempts a PodDisruptionBudget refused (kubectl drain: 5 s). */
    private readonly evictionRetrySeconds: number,
  ) {}

  /** bootcplan's cordon: a merge patch of spec.unschedulable, its mark and the progress entry, conditional on the resourceVersion read (src/domain/cordons.ts). */
  cordon(node: string, by: string, progress?: NodeProgress): Promise<CordonResult> {
    return this.onFreshNode(node, async (n) => {
      const body = cordonPatch(n, by);
      if (!body) return 'already-cordoned';
      await this.writer.mergePatch({ apiVersion: 'v1', kind: 'Node', name: node }, withProgress(body, n, progress));
      return 'cordoned';
    });
  }
  /** bootcplan's uncordon: only a node with its exact mark; spec.unschedulable, the mark and the progress entry go in one merge patch. */
  uncordon(node: string, by: string, progress?: NodeProgress): Promise<UncordonResult> {
    return this.onFreshNode(node, async (n) => {
      const d = uncordonDecision(n, by);
      if (d === 'not-ours') return 'not-ours';
      await this.writer.mergePatch({ apiVersion: 'v1', kind: 'Node', name: node }, withProgress(uncordonPatch(n, d), n, progress));
      return d === 'uncordon' ? 'uncordoned' : 'mark-cleared';
    });
  }
  /** The node's progress entry alone, conditional on the resourceVersion read. */
  writeProgress(node: string, progress: NodeProgress): Promise<void> {
    return this.onFreshNode(node, async (n) => {
      await this.writer.mergePatch({ apiVersion: 'v1', kind: 'Node', name: node }, withProgress(null, n, progress));
    });
  }

  /**
   * Runs a conditional write on the Node as the watch cache has it; when the server refuses it
   * because the Node moved (409: the cache was behind), reads the Node and runs it once more.
   */
  private async onFreshNode<T>(node: string, write: (n: NodeObject) => Promise<T>): Promise<T> {
    await this.cache.start();
    const cached = this.cache.get('Node', node);
    if (cached) {
      try {
        return await write(cached);
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
      }
    }
    return write(await this.readNode(node));
  }

  private async readNode(node: string): Promise<NodeObject> {
    const n: NodeObject = await this.client.request('GET', objectPath(NODE, node), { what: `Node ${node}`, expect: 'Node' });
    return this.cache.wrote(n, 'v1', 'Node');
  }

  async drain(node: string, opts: DrainOptions): Promise<void> {
    await this.cache.start();
    let n = this.cache.get('Node', node);
    if (n?.spec?.unschedulable !== true) n = await this.readNode(node); // the cache may be behind our own cordon
    if (n?.spec?.unschedulable !== true) throw new DriverError(`drain ${node}: the node is not cordoned`);
    const { signal } = opts;
    const stopped = () => {
      if (signal?.aborted) throw new AbortedError();
    };
    stopped();
    const deadline = opts.timeoutSeconds === null || opts.timeoutSeconds <= 0 ? Infinity : Date.now() + opts.timeoutSeconds * 1000;
    // The node's pods, and then their changes, from one watch (a streamed list: one request;
    // a list and a watch where the server does not stream lists).
    const pods = new Reflector(this.client, POD, { fieldSelector: `spec.nodeName=${node}` });
    const refusals = new Map<string, string>();
    const evicted = new Set<string>();
    let wake: (() => void) | null = null;
    const off = pods.onChange(() => wake?.());
    // A stop ends the drain at its next step: no eviction is sent after it (src/apply/engine/interrupt.ts).
    const onAbort = () => {
      wake?.();
      pods.stop();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await pods.startStreaming();
      for (;;) {
        stopped();
        const left = [...pods.items.values()].filter((p) => !skippedByDrain(p));
        if (!left.length) return;
        if (Date.now() >= deadline) {
          throw drainTimeout(node, left, refusals, opts.timeoutSeconds);
        }
        const refused = await this.evictRound(left, evicted, refusals, stopped);
        // Wait for a change on the node's pods, or the retry interval of a refused eviction.
        const waitMs = Math.min(refused ? this.evictionRetrySeconds * 1000 : 5000, Math.max(0, deadline - Date.now()));
        await new Promise<void>((resolve) => {
          const t = setLongTimeout(() => {
            wake = null;
            resolve();
          }, waitMs);
          wake = () => {
            t.clear();
            wake = null;
            resolve();
          };
        });
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      off();
      pods.stop();
    }
  }

  /**
   * One round of evictions: every pod in `left` not yet evicted nor terminating. Returns
   * whether a PodDisruptionBudget refused one (the drain then waits the retry interval).
   */
  private async evictRound(left: readonly KObject[], evicted: Set<string>, refusals: Map<string, string>, stopped: () => void): Promise<boolean> {
    let refused = false;
    for (const p of left) {
      const uid = p.metadata.uid ?? `${p.metadata.namespace}/${p.metadata.name}`;
      if (p.metadata.deletionTimestamp || evicted.has(uid)) continue;
      stopped();
      try {
        await this.client.request('POST', `${objectPath(POD, p.metadata.name, p.metadata.namespace)}/eviction`, {
          body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: p.metadata.name, namespace: p.metadata.namespace } },
          what: `evict pod ${p.metadata.namespace}/${p.metadata.name}`,
        });
        evicted.add(uid);
        refusals.delete(uid);
      } catch (err) {
        if (err instanceof NotFoundError) {
          evicted.add(uid);
          continue;
        }
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
    return refused;
  }
}
