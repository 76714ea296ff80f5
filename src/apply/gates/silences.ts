/**
 * Silences for the nodes in flight (docs/apply.md "Silences"; docs/design.md §11). The port an
 * Alertmanager is reached through (src/kube/alertmanager-silences.ts; src/sim/alertmanager.ts in
 * rehearsals), and the keeper that runs the silences of one apply:
 * - when a node goes out of service (a bootc node as its update starts, an MCO wave's nodes as
 *   the wave starts) one silence per matcher template of its pool's section is created, ending
 *   a TTL from now, its comment naming the Rollout, the plan and the node, `createdBy: bootcplan`;
 * - every third of the TTL, while the node is in flight, each is posted again with its id and a
 *   new endsAt (Alertmanager updates an active silence in place when only endsAt moves, and
 *   otherwise expires it and answers a new id: the id answered is kept);
 * - when the node is back and its wave's soak is over (before the gate after that wave: the gate
 *   judges the nodes as they are once the disruption is over), and when the apply ends in any way
 *   (done, a halt, a stop, an error), each is expired (DELETE /api/v2/silence/{id});
 * - after each of these, what exists is handed to `changed` (the run record lists it: `status`).
 * A process that dies leaves silences that lapse within the TTL: nothing is silenced for longer.
 * Alertmanager's answers never stop a rollout once it started: a silence that cannot be created,
 * extended or expired is an `silence` event with `action: error` (the alerts it would have covered
 * page as they would without bootcplan; gates judge them, since only silences that exist are
 * ignored). Before the first write the Alertmanager must answer (preflight): a missing or
 * unreachable one fails the apply there, exit 5, nothing written.
 */
import type { Plan, PlanHealthEndpoint, PlanHealthCheck, PlanSilences } from '../../plan/types.ts';
import type { Clock } from '../ports/driver.ts';
import { isoOf } from '../ports/driver.ts';
import type { SilenceEvent, UnstampedEvent } from '../ports/events.ts';
import type { HealthSource, GatePosition, Measurement } from '../ports/health.ts';
import { silencesFor, nodeSilences } from '../../plan/silences.ts';
import { alertmanagerMatcher, silenceComment, SILENCE_CREATED_BY, type AlertmanagerMatcher } from '../../domain/silences.ts';
import { matcherText, type Matcher } from '../../domain/alert-matchers.ts';
import { HealthCheckFailedError, messageOf } from '../../base/errors.ts';
import type { ActiveSilence } from '../../cluster/progress.ts';

/** A silence as posted to Alertmanager (api/v2/openapi.yaml postableSilence). */
export interface SilenceRequest {
  /** Present to update the silence of this id. */
  id?: string;
  matchers: AlertmanagerMatcher[];
  startsAt: string;
  endsAt: string;
  createdBy: string;
  comment: string;
}

/** What the keeper needs of an Alertmanager. Failures reject with an Error whose message is shown (no credential in it). */
export interface SilencePort {
  /** POST /api/v2/silences: the id Alertmanager answers (an update may answer a new one). */
  put(am: PlanHealthEndpoint, s: SilenceRequest, timeoutMs: number, signal: AbortSignal): Promise<string>;
  /** DELETE /api/v2/silence/{id}: the silence expires now. */
  expire(am: PlanHealthEndpoint, id: string, timeoutMs: number, signal: AbortSignal): Promise<void>;
  /** GET /api/v2/status: the Alertmanager answers as one (preflight). */
  ping(am: PlanHealthEndpoint, timeoutMs: number, signal: AbortSignal): Promise<void>;
  close?(): void;
}

/** One request's bound (as a health measurement's default). */
const REQUEST_MS = 10_000;

/** A node's silences while it is in flight. */
interface NodeSilences {
  pool: string;
  node: string;
  /** The wave the node went out of service in (its soak ends them). */
  wave: number;
  section: PlanSilences;
  /** One per template, in template order; null where the create failed. */
  ids: (string | null)[];
  matchers: Matcher[][];
  endsAt: number;
}

interface SilenceKeeperOptions {
  plan: Plan;
  port: SilencePort;
  clock: Clock;
  emit: (e: UnstampedEvent) => void;
  /** Told what exists after each create, extend and expire (the applier records it for `status`). */
  changed?: (now: ActiveSilence[]) => Promise<void>;
}

const endpointKey = (am: PlanHealthEndpoint) => JSON.stringify(am);

export class SilenceKeeper {
  private readonly active = new Map<string, NodeSilences>();
  private readonly plan: Plan;
  private readonly port: SilencePort;
  private readonly clock: Clock;
  private readonly emit: (e: UnstampedEvent) => void;
  private readonly changed: (now: ActiveSilence[]) => Promise<void>;
  /** Requests in flight are not given the apply's stop signal: a stop must still expire what exists. */
  private readonly own = new AbortController();

  constructor(o: SilenceKeeperOptions) {
    this.plan = o.plan;
    this.port = o.port;
    this.clock = o.clock;
    this.emit = o.emit;
    this.changed = o.changed ?? (() => Promise.resolve());
  }

  /** The plan has silences for `pool`. */
  covers(pool: string): boolean {
    return silencesFor(this.plan, pool) !== null;
  }

  /** Every Alertmanager of the plan answers; else the apply fails here (exit 5), before its first write. */
  async preflight(): Promise<void> {
    const seen = new Set<string>();
    for (const s of this.plan.silences ?? []) {
      if (seen.has(endpointKey(s.alertmanager))) continue;
      seen.add(endpointKey(s.alertmanager));
      try {
        await this.port.ping(s.alertmanager, REQUEST_MS, this.own.signal);
      } catch (err) {
        const why = `the Alertmanager for the silences of pool${s.pools.length === 1 ? '' : 's'} ${s.pools.join(', ')} (${new URL(s.alertmanager.url).origin}) did not answer: ${messageOf(err)}`;
        this.emit({ type: 'silence', action: 'error', pool: s.pools[0], ids: [], message: why });
        throw new HealthCheckFailedError(
          `preflight: ${why}`,
          [
            'nothing was written: bootcplan silences the nodes it takes out of service, and could not reach the Alertmanager to do so',
            'fix the URL, the auth or the CA in spec.silences.alertmanager (docs/spec.md "Silences"), or grant the identity what it needs (OpenShift: the monitoring-alertmanager-edit Role in openshift-monitoring), then run apply again',
          ],
          'silences',
          why,
        );
      }
    }
  }

  /** The node goes out of service: its silences are created (a node silenced already keeps its). */
  async begin(pool: string, node: string, wave: number): Promise<void> {
    const section = silencesFor(this.plan, pool);
    if (!section || this.active.has(node)) return;
    const matchers = nodeSilences(section, { node, pool });
    const entry: NodeSilences = { pool, node, wave, section, ids: matchers.map(() => null), matchers, endsAt: this.endsAt(section) };
    this.active.set(node, entry);
    await this.post(entry, 'create');
  }

  /** The pool's waves up to `wave` are over, soak included: their nodes' silences expire. */
  async soakOver(pool: string, wave: number): Promise<void> {
    for (const e of [...this.active.values()]) if (e.pool === pool && e.wave <= wave) await this.end(e);
  }

  /** The pool is done: every silence of its nodes expires. */
  async poolDone(pool: string): Promise<void> {
    await this.soakOver(pool, Infinity);
  }

  /** The apply ends (done, halt, stop, error): every silence expires. */
  async endAll(): Promise<void> {
    for (const e of [...this.active.values()]) await this.end(e);
  }

  /** Extends every silence whose end is less than two thirds of its TTL away. */
  async extendDue(): Promise<void> {
    const now = this.clock.now();
    for (const e of [...this.active.values()]) {
      const ttl = e.section.ttlMinutes * 60;
      if (e.endsAt - now < (ttl * 2) / 3) {
        e.endsAt = this.endsAt(e.section);
        await this.post(e, 'extend');
      }
    }
  }

  /** Extends the silences every third of the shortest TTL until `signal` aborts. */
  async keepExtended(signal: AbortSignal): Promise<void> {
    const ttl = Math.min(...(this.plan.silences ?? []).map((s) => s.ttlMinutes * 60));
    if (!Number.isFinite(ttl)) return;
    for (;;) {
      try {
        await this.clock.sleep(ttl / 3, signal);
      } catch {
        return;
      }
      if (signal.aborted) return;
      await this.extendDue();
    }
  }

  /** The matchers of the silences that exist now (one list per silence), for an alert gate. */
  silenced(): Matcher[][] {
    const out: Matcher[][] = [];
    for (const e of this.active.values()) e.ids.forEach((id, i) => id !== null && out.push(e.matchers[i]));
    return out;
  }

  /** The silences that exist now, for the status: per node its silences' ids and matchers (a create that failed is not listed). */
  snapshot(): ActiveSilence[] {
    return [...this.active.values()].flatMap((e) => {
      const made = e.ids.flatMap((id, i) => (id === null ? [] : [{ id, matchers: e.matchers[i].map(matcherText).join(',') }]));
      return made.length ? [{ pool: e.pool, node: e.node, ids: made.map((m) => m.id), matchers: made.map((m) => m.matchers), endsAt: isoOf(e.endsAt) }] : [];
    });
  }

  /** A health source whose alert checks are told which silences exist (src/domain/health-observe.ts leaves their alerts out). */
  aware(source: HealthSource): HealthSource {
    return {
      measure: (check: PlanHealthCheck, position: GatePosition, signal: AbortSignal): Promise<Measurement> => {
        const silenced = check.alerts ? this.silenced() : [];
        return source.measure(silenced.length && check.alerts ? { ...check, alerts: { ...check.alerts, silenced } } : check, position, signal);
      },
      close: () => source.close?.(),
    };
  }

  close(): void {
    this.own.abort();
    this.port.close?.();
  }

  /**
   * Hands what exists to `changed`. Its failure is not the keeper's: the silences went on (and the
   * other nodes' must still expire); a moved record stops the apply at its next own save.
   */
  private async record(): Promise<void> {
    await this.changed(this.snapshot()).catch(() => undefined);
  }

  private endsAt(section: PlanSilences): number {
    return this.clock.now() + section.ttlMinutes * 60;
  }

  private async post(e: NodeSilences, action: 'create' | 'extend'): Promise<void> {
    const errors: string[] = [];
    for (let i = 0; i < e.matchers.length; i++) {
      const id = e.ids[i];
      if (action === 'extend' && id === null) continue;
      const body: SilenceRequest = {
        ...(id ? { id } : {}),
        matchers: e.matchers[i].map(alertmanagerMatcher),
        startsAt: isoOf(this.clock.now()),
        endsAt: isoOf(e.endsAt),
        createdBy: SILENCE_CREATED_BY,
        comment: silenceComment(this.plan.spec.name, this.plan.id, e.pool, e.node),
      };
      try {
        e.ids[i] = await this.port.put(e.section.alertmanager, body, REQUEST_MS, this.own.signal);
      } catch (err) {
        errors.push(`${e.matchers[i].map(matcherText).join(',')}: ${messageOf(err)}`);
      }
    }
    const ids = e.ids.filter((x): x is string => x !== null);
    if (ids.length) this.emitFor(e, action, ids, `until ${isoOf(e.endsAt)}: ${e.matchers.map((ms) => ms.map(matcherText).join(',')).join('; ')}`);
    if (errors.length) this.emitFor(e, 'error', [], `could not ${action === 'create' ? 'create' : 'extend'} ${errors.join('; ')}`);
    await this.record();
  }

  /** The `silence` event of one node's silences. */
  private emitFor(e: NodeSilences, action: SilenceEvent['action'], ids: string[], message: string): void {
    this.emit({ type: 'silence', action, pool: e.pool, node: e.node, ids, message });
  }

  private async end(e: NodeSilences): Promise<void> {
    this.active.delete(e.node);
    const ids = e.ids.filter((x): x is string => x !== null);
    const errors: string[] = [];
    for (const id of ids) {
      try {
        await this.port.expire(e.section.alertmanager, id, REQUEST_MS, this.own.signal);
      } catch (err) {
        errors.push(`${id}: ${messageOf(err)}`);
      }
    }
    const done = ids.filter((id) => !errors.some((x) => x.startsWith(`${id}:`)));
    if (done.length) this.emitFor(e, 'expire', done, 'the node is back and its soak is over, or the apply ended');
    if (errors.length) this.emitFor(e, 'error', [], `could not expire ${errors.join('; ')} (it lapses at ${isoOf(e.endsAt)})`);
    await this.record();
  }
}
