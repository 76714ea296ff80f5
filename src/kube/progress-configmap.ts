/**
 * The progress record on a real cluster: ConfigMap `openshift-bootcplan/bootcplan-progress`,
 * keys `plan-id` and `progress.json`.
 */
import { BOOTCPLAN_NAMESPACE, PROGRESS_NAME } from '../cluster/types.ts';
import { type ProgressRecord, NotFoundError, AlreadyExistsError, DriverError } from '../apply/driver.ts';
import type { KubeClient } from './rest.ts';
import type { WatchCache } from './watch-cache.ts';
import { objectPath, collectionPath, CONFIGMAP } from './resources.ts';
import { MANAGED_BY_LABEL, rethrowMissingNamespace } from './bootcplan-namespace.ts';

export class ProgressConfigMap {
  constructor(private readonly client: KubeClient, private readonly cache: WatchCache) {}

  private progressPath() {
    return objectPath(CONFIGMAP, PROGRESS_NAME, BOOTCPLAN_NAMESPACE);
  }

  async read(): Promise<ProgressRecord | null> {
    try {
      const cm = await this.client.request('GET', this.progressPath(), { what: `ConfigMap ${BOOTCPLAN_NAMESPACE}/${PROGRESS_NAME}` });
      const text = cm?.data?.['progress.json'];
      if (!text) return null;
      try {
        return JSON.parse(text) as ProgressRecord;
      } catch {
        throw new DriverError(`ConfigMap ${BOOTCPLAN_NAMESPACE}/${PROGRESS_NAME}: progress.json is not valid JSON`);
      }
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }

  async write(p: ProgressRecord): Promise<void> {
    const body = {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: PROGRESS_NAME, namespace: BOOTCPLAN_NAMESPACE, labels: { [MANAGED_BY_LABEL]: 'bootcplan' } },
      data: { 'plan-id': p.planId, 'progress.json': JSON.stringify(p) },
    };
    const what = `ConfigMap ${BOOTCPLAN_NAMESPACE}/${PROGRESS_NAME}`;
    let cm: any;
    try {
      // The lock serialises writers, so an unconditional replace is safe.
      cm = await this.client.request('PUT', this.progressPath(), { body, what });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      try {
        cm = await this.client.request('POST', collectionPath(CONFIGMAP, BOOTCPLAN_NAMESPACE), { body, what });
      } catch (e) {
        if (e instanceof AlreadyExistsError) cm = await this.client.request('PUT', this.progressPath(), { body, what });
        else rethrowMissingNamespace(e);
      }
    }
    this.cache.wrote(cm, 'v1', 'ConfigMap');
  }
}
