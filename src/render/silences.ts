/**
 * The silences of a plan in words (docs/spec.md "Silences"), shared by text, Markdown and HTML:
 * per section the Alertmanager, the TTL and the matchers each node of its pools gets, with the
 * first node's as an example of what is sent. Pure; a plan file that does not parse as
 * bootcplan writes it (a template the reader let through but that fills in badly) is shown as
 * written.
 */
import type { Plan, PlanSilences } from '../plan/types.ts';
import { nodeSilenceMatchers } from '../domain/silences.ts';
import { matcherText } from '../domain/alert-matchers.ts';
import { messageOf } from '../base/errors.ts';

/** "https://am:9094, TTL 10m (extended while in flight): node="{node}", instance=~"{node}(:.*)?"". */
function silenceHead(s: PlanSilences): string {
  return `Alertmanager ${new URL(s.alertmanager.url).origin}${new URL(s.alertmanager.url).pathname.replace(/\/$/, '')}, TTL ${s.ttlMinutes}m (extended while a node is in flight): ${s.matchers.join(', ')}`;
}

/** The silences of the first node of the section's pools, as they will be created: "w-1: node="w-1", instance=~"w-1(:.*)?"". */
function silenceExample(plan: Pick<Plan, 'pools'>, s: PlanSilences): string | null {
  const pool = plan.pools.find((p) => s.pools.includes(p.name) && p.waves.some((w) => w.length));
  const node = pool?.waves.find((w) => w.length)?.[0];
  if (!pool || !node) return null;
  try {
    return `${node}: ${nodeSilenceMatchers(s.matchers, { node, pool: pool.name }).map(matcherText).join(', ')}`;
  } catch (err) {
    return `${node}: ${messageOf(err)}`;
  }
}

/** One line per section: what is silenced, for which pools, and an example. */
export function silenceLines(plan: Pick<Plan, 'pools' | 'silences'>): string[] {
  return (plan.silences ?? []).map((s) => {
    const ex = silenceExample(plan, s);
    return `pool${s.pools.length === 1 ? '' : 's'} ${s.pools.join(', ')}: one silence per matcher for each node while it is out of service, expired after its soak; ${silenceHead(s)}${ex ? `; e.g. ${ex}` : ''}`;
  });
}
