/**
 * Fleet progress on a real cluster (src/apply/fleet-runner.ts): ConfigMap
 * `openshift-bootcplan/bootcplan-fleet`, key `fleet.json`, one GET to read it and one PUT to
 * write it (POST the first time). Written whole and unconditionally: the cluster's own apply
 * lock orders applies; this record only says how far the fleet got here.
 */
import { BOOTCPLAN_NAMESPACE, FLEET_PROGRESS_NAME, type KObject } from '../cluster/types.ts';
import { type FleetProgressRecord, NotFoundError, AlreadyExistsError } from '../apply/driver.ts';
import { FLEET_PROGRESS_KEY, fleetProgressOf } from '../apply/fleet-record.ts';
import { type KubeClient, KubeRequestError } from './rest.ts';
import { objectPath, collectionPath, CONFIGMAP } from './resources.ts';
import { MANAGED_BY_LABEL, rethrowMissingNamespace } from './bootcplan-namespace.ts';

const WHAT = `ConfigMap ${BOOTCPLAN_NAMESPACE}/${FLEET_PROGRESS_NAME}`;

export async function readFleetConfigMap(client: KubeClient): Promise<FleetProgressRecord | null> {
  const path = objectPath(CONFIGMAP, FLEET_PROGRESS_NAME, BOOTCPLAN_NAMESPACE);
  let cm: KObject;
  try {
    cm = await client.request('GET', path, { what: WHAT, expect: 'ConfigMap' });
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    throw err;
  }
  const text = cm.data?.[FLEET_PROGRESS_KEY];
  if (text === undefined || text === null || text === '') return null;
  const r = fleetProgressOf(String(text));
  if (typeof r === 'string') {
    throw new KubeRequestError(`GET ${path}: ${WHAT}: ${r}`, 'unexpected-answer', `GET ${path}`,
      `bootcplan writes this record; if it was edited by hand, delete it (kubectl -n ${BOOTCPLAN_NAMESPACE} delete configmap ${FLEET_PROGRESS_NAME}): fleet apply then applies this cluster again, and its apply finds what is done`);
  }
  return r;
}

export async function writeFleetConfigMap(client: KubeClient, r: FleetProgressRecord): Promise<void> {
  const body = {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: FLEET_PROGRESS_NAME, namespace: BOOTCPLAN_NAMESPACE, labels: { [MANAGED_BY_LABEL]: 'bootcplan' } },
    data: { 'fleet-plan-id': r.fleetPlanId, [FLEET_PROGRESS_KEY]: JSON.stringify(r) },
  };
  const put = () => client.request('PUT', objectPath(CONFIGMAP, FLEET_PROGRESS_NAME, BOOTCPLAN_NAMESPACE), { body, what: WHAT, expect: 'ConfigMap' });
  try {
    await put();
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    try {
      await client.request('POST', collectionPath(CONFIGMAP, BOOTCPLAN_NAMESPACE), { body, what: WHAT, expect: 'ConfigMap' });
    } catch (e) {
      if (e instanceof AlreadyExistsError) await put();
      else rethrowMissingNamespace(e);
    }
  }
}
