/**
 * A simulated Alertmanager for rehearsals and properties (src/apply/gates/silences.ts SilencePort):
 * silences kept in memory on the simulation's clock, with Alertmanager's API v2 semantics as far
 * as bootcplan relies on them (silence/silences.go Set and Expire): a POST without an id creates
 * a silence with a new id; with the id of an active silence whose matchers are unchanged it
 * moves endsAt in place and keeps the id; an expired or unknown id gets a new silence and a new
 * id; DELETE expires it now (endsAt = now); an expired silence cannot be expired again (an error,
 * as Alertmanager answers "silence ... already expired"). `down` makes every request fail as an
 * unreachable Alertmanager does.
 */
import type { PlanHealthEndpoint } from '../plan/types.ts';
import type { SilencePort, SilenceRequest } from '../apply/gates/silences.ts';
import type { AlertmanagerMatcher } from '../domain/silences.ts';
import { MatcherSet, type Matcher } from '../domain/alert-matchers.ts';

interface SimSilence {
  id: string;
  matchers: AlertmanagerMatcher[];
  startsAt: number;
  endsAt: number;
  createdBy: string;
  comment: string;
  /** How often it was posted (1: created, more: extended). */
  posts: number;
}

export class SimAlertmanager implements SilencePort {
  readonly silences: SimSilence[] = [];
  /** Every request fails (an Alertmanager that is down). */
  down = false;
  private next = 1;

  constructor(private readonly now: () => number) {}

  put(_am: PlanHealthEndpoint, s: SilenceRequest): Promise<string> {
    if (this.down) return Promise.reject(new Error('connect ECONNREFUSED (simulated Alertmanager down)'));
    const startsAt = Date.parse(s.startsAt) / 1000;
    const endsAt = Date.parse(s.endsAt) / 1000;
    if (!(endsAt > startsAt)) return Promise.reject(new Error('400: end time must not be before start time'));
    const old = s.id ? this.silences.find((x) => x.id === s.id) : undefined;
    if (old && this.isActive(old) && JSON.stringify(old.matchers) === JSON.stringify(s.matchers)) {
      old.endsAt = endsAt;
      old.posts++;
      return Promise.resolve(old.id);
    }
    const id = `sim-silence-${this.next++}`;
    this.silences.push({ id, matchers: s.matchers, startsAt: Math.max(startsAt, this.now()), endsAt, createdBy: s.createdBy, comment: s.comment, posts: 1 });
    return Promise.resolve(id);
  }

  expire(_am: PlanHealthEndpoint, id: string): Promise<void> {
    if (this.down) return Promise.reject(new Error('connect ECONNREFUSED (simulated Alertmanager down)'));
    const s = this.silences.find((x) => x.id === id);
    if (!s) return Promise.reject(new Error(`404: silence ${id} not found`));
    if (!this.isActive(s)) return Promise.reject(new Error(`500: silence ${id} already expired`));
    s.endsAt = this.now();
    return Promise.resolve();
  }

  ping(): Promise<void> {
    return this.down ? Promise.reject(new Error('connect ECONNREFUSED (simulated Alertmanager down)')) : Promise.resolve();
  }

  isActive(s: SimSilence): boolean {
    const now = this.now();
    return s.startsAt <= now && now < s.endsAt;
  }

  /** The silences active now. */
  active(): SimSilence[] {
    return this.silences.filter((s) => this.isActive(s));
  }

  /** Whether an alert with these labels is silenced now (any active silence matches all its matchers). */
  silenced(labels: Readonly<Record<string, string>>): boolean {
    return this.active().some((s) => new MatcherSet(s.matchers.map(toMatcher)).test(labels));
  }
}

function toMatcher(m: AlertmanagerMatcher): Matcher {
  return { label: m.name, op: m.isRegex ? (m.isEqual ? '=~' : '!~') : m.isEqual ? '=' : '!=', value: m.value };
}
