/**
 * The health gates of a plan in words (docs/apply.md "Health gates"), shared by the text, Markdown
 * and HTML renderers: per check what it judges, where it reads from, when it gates and what a
 * failure does; per pool where its gates fall and the least time they add. Plain strings of the
 * plan's data: each renderer escapes them its way. Pure: reads only the plan.
 */
import type { Plan, PlanHealthCheck, PlanPool, PlanHealthAuth, PlanHealthCa } from '../plan/types.ts';
import { formatDuration, plural } from './format.ts';
import { valueText } from '../base/json-text.ts';

const str = valueText;
const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(str) : []);

/** What the check judges, in one phrase. */
export function checkWhat(c: PlanHealthCheck): string {
  if (c.prometheus) {
    const p = c.prometheus;
    const query = str(p.query).replace(/\s+/g, ' ').trim();
    return `${str(p.condition)} on ${query.length > 80 ? `${query.slice(0, 77)}...` : query}${p.onEmpty === 'pass' ? ' (an empty result passes)' : ''}`;
  }
  if (c.alerts) {
    const a = c.alerts;
    const states = list(a.states).join('/') || 'firing';
    const matchers = list(a.matchers);
    const ignore = list(a.ignore);
    return [
      `no ${a.source === 'alertmanager' ? 'active, unsilenced' : states} alert${matchers.length ? ` matching ${matchers.join(', ')}` : ''}`,
      ignore.length ? `ignoring ${ignore.join(', ')}` : '',
      a.heartbeat ? `${str(a.heartbeat)} must be firing` : '',
    ]
      .filter(Boolean)
      .join('; ');
  }
  if (c.clusterOperators) {
    const names = list(c.clusterOperators.names);
    const ignore = list(c.clusterOperators.ignore);
    return `${names.length ? `ClusterOperators ${names.join(', ')}` : 'every ClusterOperator'} Available=True, Degraded=False${ignore.length ? ` (except ${ignore.join(', ')})` : ''}`;
  }
  if (c.condition) {
    const o = c.condition;
    return `${str(o.kind)} ${o.namespace ? `${str(o.namespace)}/` : ''}${str(o.name)} ${str(o.type)}=${str(o.status)}${o.reason ? ` (reason ${str(o.reason)})` : ''}`;
  }
  return str(c.kind);
}

function authText(a: PlanHealthAuth): string {
  if (a === 'none') return 'no authentication';
  if (a === 'ServiceAccount') return "bootcplan's ServiceAccount token";
  const s = a?.bearerTokenSecret;
  return s ? `token from Secret ${str(s.namespace)}/${str(s.name)} key ${str(s.key)}` : 'unknown authentication';
}

function caText(c: PlanHealthCa): string {
  if (c === 'system') return 'system CAs';
  const ref = (c as { configMap?: { namespace: string; name: string; key: string } }).configMap;
  if (ref) return `CA from ConfigMap ${str(ref.namespace)}/${str(ref.name)}`;
  const sec = (c as { secret?: { namespace: string; name: string } }).secret;
  return sec ? `CA from Secret ${str(sec.namespace)}/${str(sec.name)}` : 'unknown CA';
}

/** Where the check reads from: the URL, who bootcplan is to it, which CA; the API server for the others. */
export function checkSource(c: PlanHealthCheck): string {
  const e = c.prometheus ?? c.alerts;
  if (!e) return "the API server (bootcplan's own identity)";
  const url = str(e.url);
  const tls = url.startsWith('https:') ? `, ${caText(e.ca)}` : '';
  return `${url}${c.alerts?.source === 'alertmanager' ? ' (Alertmanager)' : ''}, ${authText(e.auth)}${tls}`;
}

const POINT_WORDS: Record<string, string> = { preflight: 'before the first write', afterWave: 'after each wave', afterNode: 'after each node' };

/** When the check gates: "before the first write, after each wave". */
export function checkWhen(c: PlanHealthCheck): string {
  return list(c.when)
    .map((p) => POINT_WORDS[p] ?? p)
    .join(', ');
}

/** How it measures: "2 passes in a row 30s apart, no failure tolerated, gives up after 10m". */
export function checkTiming(c: PlanHealthCheck): string {
  const passes = c.successes === 1 ? '1 pass' : `${c.successes} passes in a row ${formatDuration(c.intervalSeconds)} apart`;
  const failures = c.failureLimit ? `${plural(c.failureLimit, 'failure')} tolerated` : 'no failure tolerated';
  return `${passes}, ${failures}, fails after ${formatDuration(c.timeoutSeconds)} without a verdict`;
}

/** What a failure does; for a check on trial (mode: observe), nothing but the record, and what it will do once enforced. */
export function checkOnFailure(c: PlanHealthCheck): string {
  const enforced =
    c.onFailure === 'rollback'
      ? `roll back (${c.scope === 'wave' ? 'the failed wave' : 'every node this run updated'})`
      : c.onFailure === 'pause'
        ? 'pause (pool paused, exit 5; apply --retry goes on past the gate)'
        : 'halt (pool paused, exit 5)';
  return c.mode === 'observe' ? `none: observing, the verdict is recorded and never acted on (once enforced: ${enforced})` : enforced;
}

/** The check's kind, marked "observing" when it is on trial (mode: observe). */
export function checkKind(c: PlanHealthCheck): string {
  return c.mode === 'observe' ? `${str(c.kind)}, observing` : str(c.kind);
}

/** The check's name, with its pool when a pool replaced a check of that name (two entries of one name). */
export function checkLabel(plan: Pick<Plan, 'healthChecks'>, c: PlanHealthCheck): string {
  const twins = (plan.healthChecks ?? []).filter((x) => x.name === c.name).length;
  return twins > 1 ? `${str(c.name)} (${list(c.pools).join(', ')})` : str(c.name);
}

/** A pool's gates in one line: "before the first write: a, b; after each of 4 waves (after the 2m soak): a, c; after each node: d; at least 7m30s". */
export function poolGatesLine(pool: PlanPool): string | null {
  const g = pool.gates;
  if (!g) return null;
  const parts: string[] = [];
  if (g.preflight.length) parts.push(`before the first write: ${g.preflight.join(', ')}`);
  if (g.afterWave.length) {
    const where = pool.rollout === 'slots' ? 'once the pool is done' : pool.waves.length === 1 ? 'after its wave' : `after each of ${pool.waves.length} waves`;
    parts.push(
      `${where}${pool.soakSeconds && pool.rollout !== 'slots' ? ` (after the ${formatDuration(pool.soakSeconds)} soak)` : ''}: ${g.afterWave.join(', ')}`,
    );
  }
  if (g.afterNode.length) parts.push(`after each node: ${g.afterNode.join(', ')}`);
  if (!parts.length) return null;
  return `${parts.join('; ')}${g.minSeconds ? `; at least ${formatDuration(g.minSeconds)} in all` : ''}`;
}

/** "4 health checks at 11 gates": the summary's phrase, or null without checks. */
export function gatesPhrase(plan: Pick<Plan, 'summary' | 'healthChecks'>): string | null {
  const n = plan.summary.healthChecks ?? plan.healthChecks?.length ?? 0;
  if (!n) return null;
  return `${plural(n, 'health check')} at ${plural(plan.summary.gates ?? 0, 'gate')}`;
}
