/**
 * The watch cache behind KubeDriver.waitFor: every resource the snapshot reads
 * (src/kube/read.ts, SNAPSHOT_SOURCES), each kept by a Reflector (list, then watch from the
 * list's resourceVersion, resume and reconnect, relist on 410 Gone; src/kube/watch.ts), built
 * into a ClusterSnapshot on demand. Every write's answer goes into it at once.
 */
import type { ClusterSnapshot, KObject } from '../cluster/types.ts';
import { snapshotFromObjects } from '../cluster/snapshot.ts';
import { hasShapeOf, type ViewOf } from '../cluster/kinds.ts';
import type { KubeClient } from './rest.ts';
import { Reflector } from './watch.ts';
import { SNAPSHOT_SOURCES } from './resources.ts';

/** Every resource the snapshot reads, watched; built into a ClusterSnapshot on demand. */
export class WatchCache {
  private reflectors: { source: (typeof SNAPSHOT_SOURCES)[number]; r: Reflector }[];
  private started: Promise<void> | null = null;
  private view: { version: number; snap: ClusterSnapshot } | null = null;
  private listeners = new Set<() => void>();
  private fatalListeners = new Set<(e: Error) => void>();

  constructor(
    client: KubeClient,
    private readonly source: string,
    watchTimeoutSeconds?: number,
    private readonly server: string | null = null,
  ) {
    this.reflectors = SNAPSHOT_SOURCES.map((s) => {
      const r = new Reflector(client, s.type, { namespace: s.namespace, fieldSelector: s.name ? `metadata.name=${s.name}` : undefined, watchTimeoutSeconds });
      r.onChange(() => {
        for (const l of [...this.listeners]) l();
      });
      r.onFatal((e) => {
        for (const l of [...this.fatalListeners]) l(e);
      });
      return { source: s, r };
    });
  }
  start(): Promise<void> {
    this.started ??= Promise.all(this.reflectors.map((x) => x.r.start())).then(() => undefined);
    this.started.catch(() => {
      this.started = null;
    });
    return this.started;
  }
  get isStarted() {
    return this.started !== null;
  }
  stop() {
    for (const x of this.reflectors) x.r.stop();
  }
  subscribe(l: () => void, fatal: (e: Error) => void): () => void {
    this.listeners.add(l);
    this.fatalListeners.add(fatal);
    return () => {
      this.listeners.delete(l);
      this.fatalListeners.delete(fatal);
    };
  }
  private version(): number {
    let v = 0;
    for (const x of this.reflectors) v += x.r.version;
    return v;
  }
  /** Every cached object. */
  *objects(): Iterable<KObject> {
    for (const x of this.reflectors) yield* x.r.items.values();
  }
  snapshot(): ClusterSnapshot {
    const v = this.version();
    if (this.view && this.view.version === v) return this.view.snap;
    const objects: KObject[] = [];
    for (const x of this.reflectors) objects.push(...x.r.items.values());
    const snap = snapshotFromObjects(objects, this.source, this.server);
    this.view = { version: v, snap };
    return snap;
  }
  /**
   * The cached object (the cache must be started), or undefined; as its kind's view (every
   * object came in checked: src/kube/answers.ts; hasShapeOf narrows it again, cheaply).
   */
  get<K extends string>(kind: K, name: string, namespace?: string | null): ViewOf<K> | undefined {
    for (const x of this.reflectors) {
      if (x.source.type.kind !== kind || (x.source.name && x.source.name !== name)) continue;
      const o = x.r.items.get(`${namespace ?? ''}/${name}`);
      if (o && hasShapeOf(o, kind)) return o;
    }
    return undefined;
  }
  /** Every cached object of a kind. */
  *all(kind: string): Iterable<KObject> {
    for (const x of this.reflectors) if (x.source.type.kind === kind) yield* x.r.items.values();
  }
  /** Write-through of an object a write returned. */
  put(o: KObject) {
    for (const x of this.reflectors) if (matches(x.source, o)) x.r.put(o);
  }
  remove(o: { kind: string; name: string; namespace?: string | null; apiVersion?: string }) {
    for (const x of this.reflectors) {
      if (x.source.type.kind === o.kind && (!x.source.name || x.source.name === o.name)) x.r.remove(o.namespace ?? undefined, o.name);
    }
  }
  /**
   * What every write does with the server's answer: fill in apiVersion and kind (a write's
   * answer may lack them) and put it into the cache if the cache is running.
   */
  wrote<T extends KObject>(o: T, apiVersion: string, kind: string): T {
    o.apiVersion ??= apiVersion;
    o.kind ??= kind;
    if (this.isStarted) this.put(o);
    return o;
  }
  /** What a delete does: drop the object from the cache if the cache is running. */
  deleted(o: { kind: string; name: string; namespace?: string | null }) {
    if (this.isStarted) this.remove(o);
  }
  watchStats() {
    let watches = 0,
      relists = 0;
    for (const x of this.reflectors) {
      watches += x.r.watches;
      relists += x.r.relists;
    }
    return { watches, relists };
  }
}

function matches(s: (typeof SNAPSHOT_SOURCES)[number], o: KObject): boolean {
  if (s.type.kind !== o.kind || (o.apiVersion && s.type.apiVersion !== o.apiVersion)) return false;
  if (s.name && s.name !== o.metadata.name) return false;
  if (s.namespace && s.namespace !== o.metadata.namespace) return false;
  return true;
}
