/**
 * KubeDriver's writes to objects of the plan: JSON patch (`application/json-patch+json`)
 * with the plan's `test` ops, which works the same on built-in kinds and custom resources;
 * a failed test is PreconditionFailedError, never an overwrite. Small idempotent switches
 * (cordon, pause) use a JSON merge patch. Every write's answer goes into the watch cache
 * at once.
 */
import fjp from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import type { KObject } from '../cluster/types.ts';
import { type ObjectRef, type PoolKind, type DesiredImageState, ConflictError, PreconditionFailedError, DriverError } from '../apply/ports/driver.ts';
import { type KubeClient, PatchNotApplicableError } from './rest.ts';
import { pausePatch } from '../domain/cordons.ts';
import type { ViewOf } from '../cluster/kinds.ts';
import type { WatchCache } from './watch-cache.ts';
import { resourceOf, objectPath, collectionPath, BOOTC_NODE, BOOTC_NODE_POOL, MACHINE_CONFIG_POOL } from './resources.ts';
import { messageOf } from '../base/errors.ts';

const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';

/** "Kind namespace/name", as errors and request logs name an object. */
function describeObject(ref: { kind: string; name: string; namespace?: string | null }) {
  return `${ref.kind} ${ref.namespace ? ref.namespace + '/' : ''}${ref.name}`;
}

export class ObjectWriter {
  constructor(
    private readonly client: KubeClient,
    private readonly cache: WatchCache,
  ) {}

  private refPath(ref: ObjectRef): string {
    const r = resourceOf(ref.apiVersion, ref.kind);
    if (!r) throw new DriverError(`bootcplan does not know the resource of ${ref.apiVersion} ${ref.kind}`);
    return objectPath(r, ref.name, ref.namespace);
  }

  async patch(ref: ObjectRef, ops: Operation[]): Promise<KObject> {
    let o: KObject;
    try {
      o = await this.client.request('PATCH', this.refPath(ref), { body: ops, contentType: JSON_PATCH, what: describeObject(ref), expect: ref.kind });
    } catch (err) {
      if (err instanceof PatchNotApplicableError) throw await this.whyNotApplicable(ref, ops);
      throw err;
    }
    return this.cache.wrote(o, ref.apiVersion, ref.kind);
  }

  /** The server does not say which operation failed: apply the patch to a fresh copy here. */
  private async whyNotApplicable(ref: ObjectRef, ops: Operation[]): Promise<unknown> {
    let current: KObject;
    try {
      current = await this.client.request('GET', this.refPath(ref), { what: describeObject(ref), expect: ref.kind });
    } catch (err) {
      return err;
    }
    for (let i = 0; i < ops.length; i++) {
      try {
        fjp.applyOperation(current, structuredClone(ops[i]), true, true, false);
      } catch (err) {
        const op = ops[i];
        if (op.op === 'test') {
          const actual: unknown = fjp.getValueByPointer(current, op.path);
          return new PreconditionFailedError(
            `${describeObject(ref)}: ${op.path} is ${JSON.stringify(actual) ?? 'absent'}, the plan expected ${JSON.stringify(op.value)}`,
            op.path,
          );
        }
        return new DriverError(`${describeObject(ref)}: operation ${i + 1} (${op.op} ${op.path}) cannot be applied: ${messageOf(err).split('\n')[0]}`);
      }
    }
    // It applies now: the object changed between the write and the read.
    return new ConflictError(`${describeObject(ref)}: changed while patching; retry`);
  }

  async mergePatch(ref: ObjectRef, body: unknown): Promise<KObject> {
    const o = await this.client.request('PATCH', this.refPath(ref), { body, contentType: MERGE_PATCH, what: describeObject(ref), expect: ref.kind });
    return this.cache.wrote(o, ref.apiVersion, ref.kind);
  }

  async create(obj: KObject): Promise<KObject> {
    const r = resourceOf(obj.apiVersion, obj.kind);
    if (!r) throw new DriverError(`bootcplan does not know the resource of ${obj.apiVersion} ${obj.kind}`);
    const o = await this.client.request('POST', collectionPath(r, obj.metadata.namespace), {
      body: obj,
      what: describeObject({ kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace }),
      expect: obj.kind,
    });
    return this.cache.wrote(o, obj.apiVersion, obj.kind);
  }

  /** DELETE with a resourceVersion precondition; the API server answers a moved object with 409. */
  async delete(ref: ObjectRef, opts: { resourceVersion: string | null }): Promise<void> {
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', ...(opts.resourceVersion ? { preconditions: { resourceVersion: opts.resourceVersion } } : {}) };
    try {
      await this.client.request('DELETE', this.refPath(ref), { body, what: describeObject(ref) });
    } catch (err) {
      if (err instanceof ConflictError)
        throw new PreconditionFailedError(
          `${describeObject(ref)}: changed since it was read (resourceVersion ${opts.resourceVersion ?? 'none'}): not deleted`,
          '/metadata/resourceVersion',
        );
      throw err;
    }
    this.cache.deleted({ kind: ref.kind, name: ref.name, namespace: ref.namespace ?? undefined });
  }

  async setDesiredImageState(node: string, state: DesiredImageState): Promise<void> {
    await this.patch({ apiVersion: BOOTC_NODE.apiVersion, kind: 'BootcNode', name: node }, [{ op: 'add', path: '/spec/desiredImageState', value: state }]);
  }

  /**
   * The pause switch and bootcplan's `bootcplan.dev/paused-by` mark, in one merge patch
   * (src/domain/cordons.ts), decided on the pool as the watch cache has it; a GET only when the
   * cache does not run or lacks it, or when the write was refused because the pool moved (409).
   */
  async setPoolPaused(kind: PoolKind, name: string, paused: boolean, by: string): Promise<void> {
    const r = kind === 'MachineConfigPool' ? MACHINE_CONFIG_POOL : BOOTC_NODE_POOL;
    const read = () => this.client.request('GET', objectPath(r, name), { what: `${kind} ${name}`, expect: kind });
    const write = async (pool: ViewOf<PoolKind>) => {
      const body = pausePatch(pool, paused, by);
      if (body) await this.mergePatch({ apiVersion: r.apiVersion, kind, name }, body);
    };
    const cached = this.cache.isStarted ? this.cache.get(kind, name) : undefined;
    if (cached) {
      try {
        return await write(cached);
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
      }
    }
    await write(await read());
  }
}
