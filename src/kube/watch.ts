/**
 * List-then-watch of one resource (a "reflector"): keeps a local copy of the matching
 * objects up to date from a watch that resumes at the last seen resourceVersion after the
 * server ends it (kube-apiserver closes watches after `timeoutSeconds`) or the connection
 * breaks (reconnect with backoff); on 410 Gone (the resourceVersion was compacted) it lists
 * again. Bookmarks keep the resume point fresh on quiet resources.
 *
 * `startStreaming` gets the initial state from the watch itself where the server streams
 * lists (WatchList, KEP-3157: `sendInitialEvents=true`, `resourceVersionMatch=NotOlderThan`
 * and no resourceVersion, a consistent read like a LIST; the initial objects arrive as ADDED
 * events, then a BOOKMARK annotated `k8s.io/initial-events-end: "true"` carries their
 * resourceVersion): one request instead of a LIST and a watch. A server that refuses it
 * (the WatchList feature gate is off: Kubernetes 1.27-1.31 and 1.33 answer 422 or 400) is
 * listed and watched as before, and not asked again; a stream that ends before its bookmark
 * is listed again (client-go's reflector does the same).
 */
import type { KObject } from '../cluster/types.ts';
import { type KubeClient, KubeApiError, type ListAnswer, type WatchEvent } from './rest.ts';
import { type ResourceType, collectionPath } from './resources.ts';
import { NotFoundError } from '../apply/ports/driver.ts';
import { setLongTimeout } from './long-timer.ts';
import { printable } from './answers.ts';
import { NamedError } from '../base/errors.ts';
import { valueText } from '../base/json-text.ts';

interface ReflectorOptions {
  namespace?: string;
  fieldSelector?: string;
  labelSelector?: string;
  /** Ask the server to end each watch after about this long (it is resumed at once). */
  watchTimeoutSeconds?: number;
  /** A streamed list (startStreaming) is given up after this long without an event before its end (default 10 s). */
  streamSilenceMs?: number;
}

type ChangeListener = () => void;
type FatalListener = (err: Error) => void;

const keyOf = (o: KObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
/** What the cache keeps of an object: managedFields (often half of a Node) are never read. */
const kept = (o: KObject) => {
  if (o.metadata) delete o.metadata.managedFields;
  return o;
};

/** resourceVersions are opaque; etcd-backed servers use increasing integers, which we compare when we can. */
function newerOrEqual(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return true;
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return BigInt(a) >= BigInt(b);
  return true;
}

class GoneError extends NamedError {}
class StreamingUnsupported extends NamedError {}

/** Clients of servers that refused a streaming list: they are listed, and not asked again. */
const noStreaming = new WeakSet<KubeClient>();
/** The annotation on the bookmark that ends a streamed list (k8s.io/apimachinery metav1.InitialEventsAnnotationKey). */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';
/** Before the initial-events-end bookmark, this long without an event gives the streamed list up. */
const STREAM_SILENCE_MS = 10_000;

export class Reflector {
  readonly items = new Map<string, KObject>();
  /** False when the resource type does not exist on the server (CRD not installed). */
  installed = true;
  resourceVersion = '';
  /** Bumped on every change. */
  version = 0;
  private abort = new AbortController();
  private started: Promise<void> | null = null;
  private stopped = false;
  /** The watch a streamed list opened, still running: the loop waits for its end first. */
  private tail: Promise<void> | null = null;
  private listeners = new Set<ChangeListener>();
  private fatal = new Set<FatalListener>();
  /** Watch connections opened (the first one and every reconnect). */
  watches = 0;
  relists = 0;

  constructor(
    readonly client: KubeClient,
    readonly type: ResourceType,
    readonly opts: ReflectorOptions = {},
  ) {}

  onChange(l: ChangeListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  onFatal(l: FatalListener): () => void {
    this.fatal.add(l);
    return () => this.fatal.delete(l);
  }
  private changed() {
    this.version++;
    for (const l of [...this.listeners]) l();
  }

  /** Lists (once) and starts watching in the background; resolves after the first list. */
  start(): Promise<void> {
    this.started ??= this.list().then(() => {
      if (this.installed) void this.loop();
    });
    return this.started;
  }

  /**
   * Like `start`, with the initial state streamed by the watch where the server can (one
   * request); resolves once the state is complete, and keeps watching. Where it lists, the
   * watch opens a turn of the event loop later: a caller that stops at once, having read all
   * it needed from the list (a drain with nothing to evict), costs no watch.
   */
  startStreaming(): Promise<void> {
    this.started ??= (noStreaming.has(this.client) ? this.list() : this.stream()).then(() => {
      if (this.installed)
        setImmediate(() => {
          if (!this.stopped) void this.loop();
        });
    });
    return this.started;
  }

  /**
   * One watch with sendInitialEvents until its initial-events-end bookmark; the watch goes on
   * in the background and, once it ends, the loop resumes from the bookmark's resourceVersion.
   * Anything else before the bookmark (a refusal, a broken or ended stream, a change event, or
   * STREAM_SILENCE_MS without a word: a server older than 1.27 ignores sendInitialEvents and
   * never sends the bookmark) makes it a list, and this client is not asked to stream again.
   */
  private async stream(): Promise<void> {
    const ac = new AbortController();
    const stopStream = () => ac.abort();
    this.abort.signal.addEventListener('abort', stopStream, { once: true });
    let synced = false;
    const silence = this.opts.streamSilenceMs ?? STREAM_SILENCE_MS;
    let timer = setLongTimeout(() => ac.abort(), silence);
    const quiet = () => {
      timer.clear();
      timer = setLongTimeout(() => ac.abort(), silence);
    };
    let ready!: () => void;
    const isReady = new Promise<void>((r) => {
      ready = r;
    });
    this.items.clear();
    this.watches++;
    const ended = this.client
      .watch(
        this.path,
        {
          ...this.selectors(),
          sendInitialEvents: true,
          resourceVersionMatch: 'NotOlderThan',
          allowWatchBookmarks: true,
          timeoutSeconds: this.opts.watchTimeoutSeconds ?? 240 + Math.floor(Math.random() * 60),
        },
        (ev) => {
          if (synced) return this.handle(ev);
          quiet();
          if (ev.type === 'ADDED') return this.initial(ev.object);
          if (ev.type === 'BOOKMARK' && ev.object.metadata.annotations?.[INITIAL_EVENTS_END] === 'true') {
            synced = true;
            timer.clear();
            this.resourceVersion = ev.object.metadata.resourceVersion ?? '';
            this.relists++;
            this.changed();
            return ready();
          }
          if (ev.type !== 'BOOKMARK') throw new StreamingUnsupported(`watch ${this.type.plural}: ${ev.type} before the initial events ended`);
        },
        ac.signal,
        this.type,
      )
      .then(
        () => null,
        (err: unknown) => err,
      );
    const first = await Promise.race([isReady.then(() => 'synced' as const), ended]);
    timer.clear();
    if (first === 'synced') {
      // The rest of this watch is the loop's first watch (an error ends it: the loop resumes or lists).
      this.tail = ended.then(() => {
        this.abort.signal.removeEventListener('abort', stopStream);
      });
      return;
    }
    this.abort.signal.removeEventListener('abort', stopStream);
    if (this.stopped) return;
    ac.abort();
    noStreaming.add(this.client);
    await this.list();
  }

  private initial(o: KObject) {
    o.apiVersion ??= this.type.apiVersion;
    o.kind ??= this.type.kind;
    this.items.set(keyOf(o), kept(o));
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
  }

  private get path() {
    return collectionPath(this.type, this.opts.namespace);
  }
  private selectors() {
    return { fieldSelector: this.opts.fieldSelector, labelSelector: this.opts.labelSelector };
  }

  private async list(): Promise<void> {
    let list: ListAnswer<KObject>;
    try {
      // Page by page (limit/continue); the watch resumes from the list's resourceVersion.
      list = await this.client.list(this.path, this.type, { query: this.selectors(), signal: this.abort.signal, what: `list ${this.type.plural}` });
    } catch (err) {
      if (err instanceof NotFoundError) {
        this.installed = false;
        return;
      }
      throw err;
    }
    this.fill(list);
  }

  private fill(list: ListAnswer<KObject>) {
    this.items.clear();
    for (const o of list.items) {
      o.apiVersion ??= this.type.apiVersion;
      o.kind ??= this.type.kind;
      this.items.set(keyOf(o), kept(o));
    }
    this.resourceVersion = list.resourceVersion;
    this.relists++;
    this.changed();
  }

  private async loop(): Promise<void> {
    let backoff = 0.2;
    if (this.tail) {
      // The streamed list's watch goes on; its end is this loop's first watch end.
      await this.tail;
      this.tail = null;
    }
    while (!this.stopped) {
      const began = Date.now();
      try {
        this.watches++;
        await this.client.watch(
          this.path,
          {
            ...this.selectors(),
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds: this.opts.watchTimeoutSeconds ?? 240 + Math.floor(Math.random() * 60),
          },
          (ev) => this.handle(ev),
          this.abort.signal,
          this.type,
        );
        if (this.stopped) return;
        if (Date.now() - began > 1000) backoff = 0.2;
        else await this.pause(backoff);
      } catch (caught) {
        if (this.stopped) return;
        let err = caught;
        if (err instanceof GoneError || (err instanceof KubeApiError && err.status === 410)) {
          try {
            await this.list();
            backoff = 0.2;
            continue;
          } catch (e) {
            err = e;
          }
        }
        if (err instanceof KubeApiError && (err.status === 401 || err.status === 403)) {
          for (const l of [...this.fatal]) l(err);
          return;
        }
        await this.pause(backoff);
        backoff = Math.min(backoff * 2, 5);
      }
    }
  }

  private pause(seconds: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setLongTimeout(resolve, seconds * 1000).unref();
      this.abort.signal.addEventListener(
        'abort',
        () => {
          t.clear();
          resolve();
        },
        { once: true },
      );
    });
  }

  private handle(ev: WatchEvent<KObject>) {
    switch (ev.type) {
      case 'ADDED':
      case 'MODIFIED': {
        // apiVersion and kind were filled in where the event was read (src/kube/answers.ts).
        const o = ev.object;
        this.resourceVersion = o.metadata.resourceVersion ?? this.resourceVersion;
        // A write-through copy of our own write may be newer than this event.
        const cur = this.items.get(keyOf(o));
        if (cur && cur.metadata.resourceVersion !== o.metadata.resourceVersion && newerOrEqual(cur.metadata.resourceVersion, o.metadata.resourceVersion)) break;
        this.items.set(keyOf(o), kept(o));
        this.changed();
        break;
      }
      case 'DELETED':
        this.items.delete(keyOf(ev.object));
        this.resourceVersion = ev.object.metadata.resourceVersion ?? this.resourceVersion;
        this.changed();
        break;
      case 'BOOKMARK':
        this.resourceVersion = ev.object.metadata.resourceVersion ?? this.resourceVersion;
        break;
      case 'ERROR': {
        const o = ev.object;
        if (o.code === 410) throw new GoneError(typeof o.message === 'string' ? o.message : 'resourceVersion too old');
        throw new KubeApiError(
          `watch ${this.type.plural}: ${printable(o.message === undefined || o.message === null ? 'error' : valueText(o.message), 500)}`,
          typeof o.code === 'number' ? o.code : null,
          typeof o.reason === 'string' ? printable(o.reason, 100) : null,
        );
      }
    }
  }

  /** Write-through: an object our own write returned, so readers see it before its watch event. */
  put(o: KObject): void {
    const k = keyOf(o);
    const cur = this.items.get(k);
    if (cur && !newerOrEqual(o.metadata.resourceVersion, cur.metadata.resourceVersion)) return;
    if (cur && cur.metadata.resourceVersion === o.metadata.resourceVersion) return;
    o.apiVersion ??= this.type.apiVersion;
    o.kind ??= this.type.kind;
    this.items.set(k, kept(o));
    this.changed();
  }
  remove(namespace: string | undefined, name: string): void {
    if (this.items.delete(`${namespace ?? ''}/${name}`)) this.changed();
  }
}
