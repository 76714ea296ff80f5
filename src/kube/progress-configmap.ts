/**
 * The progress record on a real cluster: ConfigMap `openshift-bootcplan/bootcplan-progress`,
 * keys `plan-id` and `progress.json`.
 */
import { BOOTCPLAN_NAMESPACE, PROGRESS_NAME } from '../cluster/types.ts';
import { type ProgressRecord, NotFoundError, AlreadyExistsError } from '../apply/driver.ts';
import { type KubeClient, KubeRequestError } from './rest.ts';
import { printable } from './answers.ts';
import type { WatchCache } from './watch-cache.ts';
import { objectPath, collectionPath, CONFIGMAP } from './resources.ts';
import { MANAGED_BY_LABEL, rethrowMissingNamespace } from './bootcplan-namespace.ts';

const WHAT = `ConfigMap ${BOOTCPLAN_NAMESPACE}/${PROGRESS_NAME}`;
const NODE_STEPS = new Set(['cordon', 'drain', 'reboot', 'booted', 'done', 'failed']);

const isMap = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The progress record of `progress.json`, checked field by field (src/apply/driver.ts
 * ProgressRecord): apply resumes from it and `status` prints it, so a record of another
 * shape is refused with the field that is wrong, never read half-way.
 */
export function progressOf(text: unknown, endpoint: string): ProgressRecord {
  const bad = (what: string) => new KubeRequestError(`${endpoint}: ${WHAT}: progress.json ${what}`, 'unexpected-answer', endpoint,
    `bootcplan writes this record; if it was edited by hand, delete the ConfigMap (the next apply re-plans from the cluster: kubectl -n ${BOOTCPLAN_NAMESPACE} delete configmap ${PROGRESS_NAME})`);
  let p: any;
  try {
    p = JSON.parse(String(text));
  } catch {
    throw bad('is not valid JSON');
  }
  if (!isMap(p)) throw bad('is not a JSON object');
  for (const f of ['planId', 'startedAt', 'updatedAt']) if (typeof p[f] !== 'string') throw bad(`has no string ${f}`);
  for (const f of ['changesApplied', 'done']) if (typeof p[f] !== 'boolean') throw bad(`has no boolean ${f}`);
  if (!isMap(p.pools) || !isMap(p.nodes)) throw bad('has no pools or nodes map');
  for (const [name, pool] of Object.entries<any>(p.pools)) {
    if (!isMap(pool) || !Array.isArray(pool.finishedWaves) || !pool.finishedWaves.every(Number.isSafeInteger) || typeof pool.done !== 'boolean') throw bad(`pool "${printable(name, 100)}" is malformed`);
    if (pool.mcoUnpaused !== undefined && typeof pool.mcoUnpaused !== 'boolean') throw bad(`pool "${printable(name, 100)}" has a mcoUnpaused that is not a boolean`);
    const i = pool.interrupted;
    if (i !== undefined && i !== null && (!isMap(i) || typeof i.at !== 'string' || typeof i.reason !== 'string' || !(i.wave === null || Number.isSafeInteger(i.wave)))) throw bad(`pool "${printable(name, 100)}" has a malformed interrupted entry`);
  }
  for (const [name, n] of Object.entries<any>(p.nodes)) {
    if (!isMap(n) || typeof n.pool !== 'string' || !Number.isSafeInteger(n.wave) || !NODE_STEPS.has(n.step) || typeof n.wasCordoned !== 'boolean') throw bad(`node "${printable(name, 100)}" is malformed`);
  }
  return p as ProgressRecord;
}

export class ProgressConfigMap {
  constructor(private readonly client: KubeClient, private readonly cache: WatchCache) {}

  private progressPath() {
    return objectPath(CONFIGMAP, PROGRESS_NAME, BOOTCPLAN_NAMESPACE);
  }

  async read(): Promise<ProgressRecord | null> {
    const path = this.progressPath();
    let cm: any;
    try {
      cm = await this.client.request('GET', path, { what: WHAT, expect: 'ConfigMap' });
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
    const text = cm.data?.['progress.json'];
    if (text === undefined || text === null || text === '') return null;
    return progressOf(text, `GET ${path}`);
  }

  async write(p: ProgressRecord): Promise<void> {
    const body = {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: PROGRESS_NAME, namespace: BOOTCPLAN_NAMESPACE, labels: { [MANAGED_BY_LABEL]: 'bootcplan' } },
      data: { 'plan-id': p.planId, 'progress.json': JSON.stringify(p) },
    };
    const what = WHAT;
    let cm: any;
    try {
      // The lock serialises writers, so an unconditional replace is safe.
      cm = await this.client.request('PUT', this.progressPath(), { body, what, expect: 'ConfigMap' });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      try {
        cm = await this.client.request('POST', collectionPath(CONFIGMAP, BOOTCPLAN_NAMESPACE), { body, what, expect: 'ConfigMap' });
      } catch (e) {
        if (e instanceof AlreadyExistsError) cm = await this.client.request('PUT', this.progressPath(), { body, what, expect: 'ConfigMap' });
        else rethrowMissingNamespace(e);
      }
    }
    this.cache.wrote(cm, 'v1', 'ConfigMap');
  }
}
