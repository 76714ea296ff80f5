/**
 * Progress on a real cluster (src/apply/engine/progress-book.ts): the run record in ConfigMap
 * `openshift-bootcplan/bootcplan-progress` (keys `plan-id` and `run.json`), written with its
 * resourceVersion as a precondition, and the nodes' entries in their Node annotations
 * (src/apply/ports/node-progress.ts; written by src/kube/node-ops.ts). Reads come from the watch
 * cache when it runs (an apply), else one GET and one paged LIST of the nodes (`status`).
 */
import { BOOTCPLAN_NAMESPACE, PROGRESS_NAME, type KObject } from '../cluster/types.ts';
import type { ConfigMapObject } from '../cluster/kinds.ts';
import { type ProgressRecord, type ProgressState, NotFoundError, AlreadyExistsError, ConflictError, ProgressMovedError } from '../apply/ports/driver.ts';
import { nodeProgressOfAll } from '../cluster/progress.ts';
import { decodeRunRecord } from '../cluster/run-record.ts';
import { type KubeClient, KubeRequestError } from './rest.ts';
import { printable } from './answers.ts';
import type { WatchCache } from './watch-cache.ts';
import { objectPath, collectionPath, CONFIGMAP, NODE } from './resources.ts';
import { MANAGED_BY_LABEL, rethrowMissingNamespace } from './bootcplan-namespace.ts';

const WHAT = `ConfigMap ${BOOTCPLAN_NAMESPACE}/${PROGRESS_NAME}`;
const KEY = 'run.json';

/**
 * The run record of `run.json`, checked field by field (src/cluster/run-record.ts): apply
 * resumes from it, `status` prints it and `plan --rollback` plans from it, so a record of
 * another shape is refused with the field that is wrong, never read half-way.
 */
export function progressOf(text: unknown, endpoint: string): ProgressRecord {
  const r = decodeRunRecord(text, (s) => `"${printable(s, 100)}"`);
  if (typeof r !== 'string') return r;
  throw new KubeRequestError(
    `${endpoint}: ${WHAT}: ${KEY} ${r}`,
    'unexpected-answer',
    endpoint,
    `bootcplan writes this record; if it was edited by hand, delete the ConfigMap (the next apply re-plans from the cluster: kubectl -n ${BOOTCPLAN_NAMESPACE} delete configmap ${PROGRESS_NAME})`,
  );
}

export class ProgressConfigMap {
  constructor(
    private readonly client: KubeClient,
    private readonly cache: WatchCache,
  ) {}

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
    nodes ??= (await this.client.list(collectionPath(NODE), { kind: 'Node' }, { what: 'list nodes' })).items;
    return { run, version: cm?.metadata.resourceVersion ?? null, nodes: nodeProgressOfAll(nodes) };
  }

  /** Writes the run record against `version` (null: create it); resolves with the new version. */
  async write(p: ProgressRecord, version: string | null): Promise<string> {
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: PROGRESS_NAME,
        namespace: BOOTCPLAN_NAMESPACE,
        labels: { [MANAGED_BY_LABEL]: 'bootcplan' },
        ...(version ? { resourceVersion: version } : {}),
      },
      data: { 'plan-id': p.planId, [KEY]: JSON.stringify(p) },
    };
    const moved = () =>
      new ProgressMovedError(`${WHAT} was written by someone else since this apply read it (resourceVersion ${version ?? 'none'}): another apply runs`);
    let cm: ConfigMapObject;
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
    return String(cm.metadata?.resourceVersion ?? '');
  }
}
