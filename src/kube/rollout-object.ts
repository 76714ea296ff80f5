/**
 * The rollout status and Events on a real cluster (src/apply/report/rollout-status.ts):
 * - the spec's own object, bootcplan.dev/v1alpha1 Rollout in openshift-bootcplan
 *   (deploy/rollout-crd.yaml): read once per run, its status written through
 *   the status subresource with a JSON merge patch (the spec stays the GitOps engine's);
 * - Events through events.k8s.io/v1 (reportingController bootcplan.dev/apply); those about
 *   cluster-scoped objects (Nodes, pools) in namespace `default`, as client-go's recorder
 *   puts them, so `kubectl describe node` and `kubectl get events -A` show them.
 */
import { BOOTCPLAN_NAMESPACE, type KObject } from '../cluster/types.ts';
import { isPlainObject } from '../base/schema.ts';
import { NotFoundError, DriverError, type RolloutObject, type Clock } from '../apply/ports/driver.ts';
import { EVENT_REPORTING_CONTROLLER, type ClusterEventRecord, type RolloutCondition, type RolloutStatus } from '../apply/ports/rollout-object.ts';
import { EVENT_LIMITS, eventProblems, rolloutStatusProblems } from '../apply/ports/api-limits.ts';
import { cutToBytes } from '../base/text-budget.ts';
import { DNS1123_SUBDOMAIN_MAX } from '../domain/kube-names.ts';
import type { KubeClient } from './rest.ts';
import type { LockSighting } from '../domain/lease-expiry.ts';
import type { ResourceType } from './resources.ts';
import { objectPath, collectionPath } from './resources.ts';

const ROLLOUT: ResourceType = { apiVersion: 'bootcplan.dev/v1alpha1', kind: 'Rollout', plural: 'rollouts', namespaced: true };
const EVENT: ResourceType = { apiVersion: 'events.k8s.io/v1', kind: 'Event', plural: 'events', namespaced: true };

const MERGE_PATCH = 'application/merge-patch+json';

/**
 * An Event's name as client-go's recorder makes it: <object>.<unix nanoseconds, hex> (generateName
 * must itself be a DNS subdomain, which "name." is not); `seq` keeps two in one ms apart. The
 * object's name is cut so that the whole stays a DNS subdomain (at most 253, each dot-separated
 * part ending in a letter or digit).
 */
export function eventName(regarding: string, t: number, seq: number): string {
  const suffix = (BigInt(Math.round(t * 1000)) * 1_000_000n + BigInt(seq)).toString(16);
  const head = regarding.slice(0, DNS1123_SUBDOMAIN_MAX - 1 - suffix.length).replace(/[^a-z0-9]+$/, '');
  return head ? `${head}.${suffix}` : suffix;
}

/** status.lockObserved, when every field is a string (anything else is as good as none: the next run starts afresh). */
function lockObservedOf(v: unknown): LockSighting | null {
  if (!isPlainObject(v)) return null;
  const text = (f: keyof LockSighting) => {
    const t = v[f];
    return typeof t === 'string' && t.length <= 512 ? t : null;
  };
  const lockId = text('lockId'),
    holder = text('holder'),
    record = text('record'),
    heldSince = text('heldSince'),
    recordSince = text('recordSince');
  return lockId !== null && holder !== null && record !== null && heldSince !== null && recordSince !== null
    ? { lockId, holder, record, heldSince, recordSince }
    : null;
}

/**
 * status.conditions: the entries that are mappings with a string type. Apply wrote them, and
 * the Rollout CRD's schema (deploy/rollout-crd.yaml) holds their other fields
 * to strings; only `type` decides anything here (rollout-status.ts matches on it).
 */
function conditionsOf(v: unknown): RolloutCondition[] {
  if (!Array.isArray(v)) return [];
  return v.filter((c): c is RolloutCondition => isPlainObject(c) && typeof c.type === 'string');
}

export class RolloutObjects {
  private seq = 0;
  constructor(
    private readonly client: KubeClient,
    private readonly clock: Clock,
    private readonly instance: string,
  ) {}

  async read(name: string): Promise<RolloutObject | null> {
    let o: KObject;
    try {
      o = await this.client.request('GET', objectPath(ROLLOUT, name, BOOTCPLAN_NAMESPACE), {
        what: `Rollout ${BOOTCPLAN_NAMESPACE}/${name}`,
        expect: 'Rollout',
      });
    } catch (err) {
      // No object, or no CRD (the API answers 404 for an unknown resource too).
      if (err instanceof NotFoundError) return null;
      throw err;
    }
    const status = isPlainObject(o.status) ? o.status : {};
    return {
      uid: typeof o.metadata.uid === 'string' ? o.metadata.uid : null,
      generation: Number(o.metadata.generation ?? 0),
      spec: o.spec ?? null,
      conditions: conditionsOf(status.conditions),
      lockObserved: lockObservedOf(status.lockObserved),
    };
  }

  async writeStatus(name: string, status: Partial<RolloutStatus>): Promise<void> {
    const problems = rolloutStatusProblems(status);
    if (problems.length)
      throw new DriverError(`Rollout ${BOOTCPLAN_NAMESPACE}/${name} status not written: the API server would refuse it: ${problems.join('; ')}`);
    await this.client.request('PATCH', `${objectPath(ROLLOUT, name, BOOTCPLAN_NAMESPACE)}/status`, {
      body: { status },
      contentType: MERGE_PATCH,
      what: `Rollout ${BOOTCPLAN_NAMESPACE}/${name} status`,
      expect: 'Rollout',
    });
  }

  async record(e: ClusterEventRecord, uid: string | null): Promise<void> {
    const problems = eventProblems(e);
    if (problems.length)
      throw new DriverError(`Event about ${e.regarding.kind} ${e.regarding.name} not written: the API server would refuse it: ${problems.join('; ')}`);
    const ns = e.regarding.namespace ?? 'default';
    const t = this.clock.now();
    const micro = new Date(Math.round(t * 1000)).toISOString().replace('Z', '000Z');
    const body = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: eventName(e.regarding.name, t, ++this.seq), namespace: ns },
      eventTime: micro,
      reportingController: EVENT_REPORTING_CONTROLLER,
      reportingInstance: cutToBytes(this.instance, EVENT_LIMITS.reportingInstanceBytes, ''),
      action: e.action,
      reason: e.reason,
      type: e.type,
      note: e.note,
      regarding: {
        apiVersion: e.regarding.apiVersion,
        kind: e.regarding.kind,
        name: e.regarding.name,
        ...(e.regarding.namespace ? { namespace: e.regarding.namespace } : {}),
        ...(uid ? { uid } : {}),
      },
    };
    await this.client.request('POST', collectionPath(EVENT, ns), { body, what: `Event about ${e.regarding.kind} ${e.regarding.name}`, expect: 'Event' });
  }
}
