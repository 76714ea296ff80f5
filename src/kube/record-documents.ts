/**
 * bootcplan's record documents on a real cluster (src/cluster/types.ts RecordDocument): one
 * JSON document under a key of a ConfigMap in `openshift-bootcplan`, one GET to read it and one
 * PUT to write it (POST the first time). Written whole and unconditionally: the cluster's own
 * apply lock orders applies. The fleet record (src/fleet/record.ts) is kept this way;
 * this store knows nothing of what a document holds, its owner decodes it.
 */
import { BOOTCPLAN_NAMESPACE, type KObject, type RecordDocument } from '../cluster/types.ts';
import { NotFoundError, AlreadyExistsError } from '../apply/ports/driver.ts';
import { type KubeClient, KubeRequestError } from './rest.ts';
import { objectPath, collectionPath, CONFIGMAP } from './resources.ts';
import { MANAGED_BY_LABEL, rethrowMissingNamespace } from './bootcplan-namespace.ts';

const what = (doc: RecordDocument<unknown>) => `ConfigMap ${BOOTCPLAN_NAMESPACE}/${doc.name}`;

export class KubeRecordDocuments {
  constructor(private readonly client: KubeClient) {}

  /** The document; null when there is none (no ConfigMap, no key, an empty value). */
  async read<T>(doc: RecordDocument<T>): Promise<T | null> {
    const path = objectPath(CONFIGMAP, doc.name, BOOTCPLAN_NAMESPACE);
    let cm: KObject;
    try {
      cm = await this.client.request('GET', path, { what: what(doc), expect: 'ConfigMap' });
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
    const text = cm.data?.[doc.key];
    if (text === undefined || text === null || text === '') return null;
    const r = doc.decode(String(text));
    if (typeof r === 'string') {
      throw new KubeRequestError(
        `GET ${path}: ${what(doc)}: ${r}`,
        'unexpected-answer',
        `GET ${path}`,
        `bootcplan writes this record; if it was edited by hand, delete it (kubectl -n ${BOOTCPLAN_NAMESPACE} delete configmap ${doc.name}): ${doc.whenDeleted}`,
      );
    }
    return r;
  }

  /** Creates or replaces the ConfigMap: the document's summary values, then the document. */
  async write<T>(doc: RecordDocument<T>, value: T): Promise<void> {
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: doc.name, namespace: BOOTCPLAN_NAMESPACE, labels: { [MANAGED_BY_LABEL]: 'bootcplan' } },
      data: { ...doc.summary(value), [doc.key]: JSON.stringify(value) },
    };
    const request = { body, what: what(doc), expect: 'ConfigMap' };
    const put = () => this.client.request('PUT', objectPath(CONFIGMAP, doc.name, BOOTCPLAN_NAMESPACE), request);
    try {
      await put();
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      try {
        await this.client.request('POST', collectionPath(CONFIGMAP, BOOTCPLAN_NAMESPACE), request);
      } catch (e) {
        if (e instanceof AlreadyExistsError) await put();
        else rethrowMissingNamespace(e);
      }
    }
  }
}
