/**
 * The simulated cluster's Rollout objects (bootcplan.dev/v1alpha1, the spec's own object) and
 * Events (src/apply/report/rollout-status.ts), kept as they are written so tests and rehearsals can
 * read what an operator would see. A Rollout exists only once a test puts it (as a GitOps
 * engine would sync it); without one, status writes are refused as on a real cluster, and so
 * is a status or an Event the API server would refuse (src/apply/ports/api-limits.ts).
 */
import type { RolloutObject } from '../apply/ports/driver.ts';
import { NotFoundError, DriverError } from '../apply/ports/driver.ts';
import type { ClusterEventRecord, RolloutStatus } from '../apply/ports/rollout-object.ts';
import { eventProblems, rolloutStatusProblems } from '../apply/ports/api-limits.ts';

/** A Rollout object as written: its status, whole or (after a write of lockObserved alone) in part. */
interface SimRollout {
  uid: string;
  generation: number;
  spec: unknown;
  status: Partial<RolloutStatus> | null;
}
interface SimEventRecord extends ClusterEventRecord {
  t: number;
  uid: string | null;
}

export class SimRollouts {
  readonly objects = new Map<string, SimRollout>();
  readonly events: SimEventRecord[] = [];

  /** A GitOps engine syncs the spec: creates the object, or bumps its generation when the spec changed. */
  put(name: string, spec: unknown): SimRollout {
    const cur = this.objects.get(name);
    if (cur) {
      if (JSON.stringify(cur.spec) !== JSON.stringify(spec)) {
        cur.spec = structuredClone(spec);
        cur.generation++;
      }
      return cur;
    }
    const o: SimRollout = { uid: `rollout-${name}`, generation: 1, spec: structuredClone(spec), status: null };
    this.objects.set(name, o);
    return o;
  }

  read(name: string): RolloutObject | null {
    const o = this.objects.get(name);
    if (!o) return null;
    return {
      uid: o.uid,
      generation: o.generation,
      spec: structuredClone(o.spec),
      conditions: structuredClone(o.status?.conditions ?? []),
      lockObserved: structuredClone(o.status?.lockObserved ?? null),
    };
  }

  /**
   * The reporter's status replaces the one there, except lockObserved, which the API server's
   * merge patch keeps unless the patch names it (null removes it); a patch of lockObserved alone
   * (writeRolloutLockObserved) changes only that field.
   */
  writeStatus(name: string, status: Partial<RolloutStatus>): void {
    const o = this.objects.get(name);
    if (!o) throw new NotFoundError(`Rollout ${name} not found`);
    const problems = rolloutStatusProblems(status);
    if (problems.length) throw new DriverError(`Rollout.bootcplan.dev "${name}" is invalid: ${problems.join('; ')}`);
    const kept = o.status?.lockObserved;
    const next: Partial<RolloutStatus> =
      Object.keys(status).length === 1 && 'lockObserved' in status ? { ...(o.status ?? {}), ...structuredClone(status) } : structuredClone(status);
    if (!('lockObserved' in status) && kept) next.lockObserved = kept;
    if (next.lockObserved === null) delete next.lockObserved;
    o.status = next;
  }

  record(t: number, e: ClusterEventRecord, uid: string | null): void {
    const problems = eventProblems(e);
    if (problems.length) throw new DriverError(`Event about ${e.regarding.kind} ${e.regarding.name} is invalid: ${problems.join('; ')}`);
    this.events.push({ ...structuredClone(e), t, uid });
  }
}
