/**
 * bootcplan's own objects (the lock Lease and the progress ConfigMap) live in namespace
 * `openshift-bootcplan`: the label they carry, and the error when that namespace is missing.
 */
import { BOOTCPLAN_NAMESPACE } from '../cluster/types.ts';
import { NotFoundError } from '../apply/ports/driver.ts';
import { KubeApiError } from './rest.ts';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';

/** A create in the namespace answered 404: the namespace itself is missing; say so. */
export function rethrowMissingNamespace(err: unknown): never {
  if (err instanceof NotFoundError) {
    throw new KubeApiError(
      `namespace ${BOOTCPLAN_NAMESPACE} does not exist; bootcplan keeps its lock and progress there`,
      404,
      'NotFound',
      'create it (examples/rbac.yaml does, with the service account and role apply needs)',
    );
  }
  throw err;
}
