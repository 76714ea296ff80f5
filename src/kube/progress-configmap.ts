/**
 * Progress on a real cluster (src/apply/progress-book.ts): the run record in ConfigMap
 * `openshift-bootcplan/bootcplan-progress` (keys `plan-id` and `run.json`), written with its
 * resourceVersion as a precondition, and the nodes' entries in their Node annotations
 * (src/apply/node-progress.ts; written by src/kube/node-ops.ts). Reads come from the watch
 * cache when it runs (an apply), else one GET and one paged LIST of the nodes (`status`).
 */
import { BOOTCPLAN_NAMESPACE, PROGRESS_NAME, type KObject } from '../cluster/types.ts';
import { type ProgressRecord, type ProgressState, NotFoundError, AlreadyExistsError, ConflictError, ProgressMovedError } from '../apply/driver.ts';
import { nodeProgressOfAll } from '../apply/node-progress.ts';
import { type KubeClient, KubeRequestError } from './rest.ts';
import { printable } from './answers.ts';
import type { WatchCache } from './watch-cache.ts';
import { objectPath, collectionPath, CONFIGMAP, NODE } from './resources.ts';
import { MANAGED_BY_LABEL, rethrowMissingNamespace } from './bootcplan-namespace.ts';

const WHAT = `ConfigMap ${BOOTCPLAN_NAMESPACE}/${PROGRESS_NAME}`;
const KEY = 'run.json';

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The run record of `run.json`, checked field by field (src/apply/driver.ts ProgressRecord):
 * apply resumes from it and `status` prints it, so a record of another shape is refused
 * with the field that is wrong, never read half-way.
 */
export function progressOf(text: unknown, endpoint: string): ProgressRecord {
  const bad = (what: string) => new KubeRequestError(`${endpoint}: ${WHAT}: ${KEY} ${what}`, 'unexpected-answer', endpoint,
    `bootcplan writes this record; if it was edited by hand, delete the ConfigMap (the next apply re-plans from the cluster: kubectl -n ${BOOTCPLAN_NAMESPACE} delete configmap ${PROGRESS_NAME})`);
  let p: unknown;
  try {
    p = JSON.parse(String(text));
  } catch {
    throw bad('is not valid JSON');
  }
  checkProgressRecord(p, bad);
  return p;
}

/** The fields ProgressRecord names, each of its type; `bad` makes the error that names the first that is not. */
function checkProgressRecord(p: unknown, bad: (what: string) => Error): asserts p is ProgressRecord {
  if (!isMap(p)) throw bad('is not a JSON object');
  for (const f of ['planId', 'startedAt', 'updatedAt']) if (typeof p[f] !== 'string') throw bad(`has no string ${f}`);
  for (const f of ['changesApplied', 'done']) if (typeof p[f] !== 'boolean') throw bad(`has no boolean ${f}`);
  if (!isMap(p.pools)) throw bad('has no pools map');
  if (p.preflightPassed !== undefined && typeof p.preflightPassed !== 'boolean') throw bad('has a preflightPassed that is not a boolean');
  for (const [name, pool] of Object.entries(p.pools)) {
    if (!isMap(pool) || typeof pool.wavesDone !== 'number' || !Number.isSafeInteger(pool.wavesDone) || pool.wavesDone < 0 || typeof pool.done !== 'boolean') throw bad(`pool "${printable(name, 100)}" is malformed`);
    if (pool.mcoUnpaused !== undefined && typeof pool.mcoUnpaused !== 'boolean') throw bad(`pool "${printable(name, 100)}" has a mcoUnpaused that is not a boolean`);
    const seen = pool.stagingSeen;
    if (seen !== undefined && (!isMap(seen) || Object.values(seen).some((t) => typeof t !== 'string' || !Number.isFinite(Date.parse(t))))) throw bad(`pool "${printable(name, 100)}" has a stagingSeen that is not a map of node names to times`);
    if (pool.gatesPassed !== undefined && (typeof pool.gatesPassed !== 'number' || !Number.isSafeInteger(pool.gatesPassed) || pool.gatesPassed < 0)) throw bad(`pool "${printable(name, 100)}" has a gatesPassed that is not a count`);
    const h = pool.halted;
    if (h !== undefined && h !== null && (!isMap(h) || typeof h.reason !== 'string' || (h.check !== undefined && typeof h.check !== 'string'))) throw bad(`pool "${printable(name, 100)}" has a malformed halted entry`);
    const i = pool.interrupted;
    if (i !== undefined && i !== null && (!isMap(i) || typeof i.at !== 'string' || typeof i.reason !== 'string' || !(i.wave === null || Number.isSafeInteger(i.wave)))) throw bad(`pool "${printable(name, 100)}" has a malformed interrupted entry`);
  }
}

export class ProgressConfigMap {
  constructor(private readonly client: KubeClient, private readonly cache: WatchCache) {}

  private progressPath() {
    return objectPath(CONFIGMAP, PROGRESS_NAME, BOOTCPLAN_NAMESPACE);
  }

  async read(): Promise<ProgressState> {
    const path = this.progressPath();
    let cm: KObject | undefined;
    let nodes: Iterable<KObject> | undefined;
    if (this.cache.isStarted) {
      await this.cache.start();
      cm = this.cache.get('ConfigMap', PROGRESS_NAME, BOOTCPLAN_NAMESPACE);
      nodes = this.cache.all('Node');
    } else {
      try {
        cm = await this.client.request('GET', path, { what: WHAT, expect: 'ConfigMap' });
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    const text = cm?.data?.[KEY];
    const run = text === undefined || text === null || text === '' ? null : progressOf(text, `GET ${path}`);
    nodes ??= (await this.client.list(collectionPath(NODE), NODE, { what: 'list nodes' })).items;
    return { run, version: cm?.metadata.resourceVersion ?? null, nodes: nodeProgressOfAll(nodes) };
  }

  /** Writes the run record against `version` (null: create it); resolves with the new version. */
  async write(p: ProgressRecord, version: string | null): Promise<string> {
    const body = {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: PROGRESS_NAME, namespace: BOOTCPLAN_NAMESPACE, labels: { [MANAGED_BY_LABEL]: 'bootcplan' }, ...(version ? { resourceVersion: version } : {}) },
      data: { 'plan-id': p.planId, [KEY]: JSON.stringify(p) },
    };
    const moved = () => new ProgressMovedError(`${WHAT} was written by someone else since this apply read it (resourceVersion ${version ?? 'none'}): another apply runs`);
    let cm: KObject;
    try {
      // The resourceVersion makes the replace conditional: two applies never overwrite each other.
      if (version) cm = await this.client.request('PUT', this.progressPath(), { body, what: WHAT, expect: 'ConfigMap' });
      else cm = await this.client.request('POST', collectionPath(CONFIGMAP, BOOTCPLAN_NAMESPACE), { body, what: WHAT, expect: 'ConfigMap' });
    } catch (err) {
      if (err instanceof ConflictError || err instanceof AlreadyExistsError || (version && err instanceof NotFoundError)) throw moved();
      if (!version) rethrowMissingNamespace(err);
      throw err;
    }
    this.cache.wrote(cm, 'v1', 'ConfigMap');
    return String(cm.metadata.resourceVersion ?? '');
  }
}
