/**
 * `bootcplan status` (docs/design.md §2: "`status` tells what is left"): the apply lock and the
 * progress record of the last apply, as text. Pure: the CLI reads the records and writes
 * the string.
 */
import type { ProgressState, LockRecord, NodeProgress } from '../apply/ports/driver.ts';
import { forDisplay } from './secrets.ts';
import { describeHold } from '../apply/gates/holds.ts';
import type { ObservingVerdict } from '../cluster/progress.ts';
import { outOfServiceFigure } from '../domain/budget.ts';
import { plural } from './format.ts';

/** Where a run stands: finished, stopped by a halt (a human decides; the next apply does not go on by itself), or neither. */
type RunState = 'done' | 'halted' | 'in progress';

/** A pool of the run that halted, and what halted it: a health check, or a node (its name), or neither (the budget, a drain). */
interface HaltedBy {
  pool: string;
  check: string | null;
  node: string | null;
}

/**
 * What `status` shows of the progress: the run record, the nodes in flight, per pool the nodes
 * done by this plan, and where the run stands (`state`; `haltedBy` names each halted pool and
 * what halted it), so the headline of a halted run says so, not "in progress". `running`: an
 * apply of this plan holds the lock now (an `apply --retry` going on after the halt): in progress.
 * `silences`: the Alertmanager silences for the nodes in flight (docs/apply.md "Silences"), those
 * not lapsed at `now` (epoch seconds; a killed apply's lapse within their TTL, and stay recorded).
 */
export function progressSummary(st: ProgressState, running = false, now = -Infinity) {
  if (!st.run) return null;
  const inFlight: Record<string, NodeProgress> = {};
  const nodesDone: Record<string, number> = {};
  for (const [name, e] of Object.entries(st.nodes)) {
    if (e.step !== 'done') inFlight[name] = e;
    else if (e.planId === st.run.planId) nodesDone[e.pool] = (nodesDone[e.pool] ?? 0) + 1;
  }
  const haltedBy: HaltedBy[] = Object.entries(st.run.pools).flatMap(([pool, p]) =>
    p.halted && !p.done ? [{ pool, check: p.halted.check ?? null, node: p.halted.node ?? null }] : [],
  );
  const state: RunState = st.run.done ? 'done' : haltedBy.length && !running ? 'halted' : 'in progress';
  const silences = (st.run.silences ?? []).filter((x) => Date.parse(x.endsAt) / 1000 > now);
  return { ...st.run, state, haltedBy, nodesInFlight: inFlight, nodesDone, silences };
}

/** An apply of the recorded plan holds the lock, not expired: the run goes on right now. */
export function runningNow(lock: LockRecord | null, expired: boolean, state: ProgressState): boolean {
  return !!lock && !expired && !!state.run && lock.planId === state.run.planId;
}

/** "HALTED by health check alerts in pool worker", "HALTED at node w-03 in pool worker"; several pools joined with "; ". */
function haltedHeadline(by: readonly HaltedBy[]): string {
  return `HALTED ${by.map((h) => `${h.check ? `by health check ${h.check} ` : h.node ? `at node ${h.node} ` : ''}in pool ${h.pool}`).join('; ')}`;
}

export function renderStatus(lockRecord: LockRecord | null, expired: boolean, state: ProgressState, now = -Infinity): string {
  // Holders, pool and node names come from the cluster: shown escaped and masked.
  const lock = forDisplay(lockRecord);
  const progress = forDisplay(progressSummary(state, runningNow(lockRecord, expired, state), now));
  const out: string[] = [];
  out.push(
    lock
      ? `lock: held by ${lock.holder} since ${lock.since} (plan ${lock.planId}, lock id ${lock.lockId}${expired ? `, not renewed within its ${lock.ttlSeconds}s by its holder's clock: an apply with --lock-timeout longer than that takes it over once it has seen it unchanged that long` : ''})`
      : 'lock: free',
  );
  if (!progress) {
    out.push('progress: no apply has run on this cluster');
    return out.join('\n') + '\n';
  }
  const rb = progress.rollbackOf;
  out.push(
    `${rb ? `rollback plan ${progress.planId} of plan ${rb.planId} (scope ${rb.scope})` : `plan ${progress.planId}`}: ${progress.state === 'halted' ? haltedHeadline(progress.haltedBy) : progress.state} (started ${progress.startedAt}, last update ${progress.updatedAt})`,
  );
  if (progress.run && progress.run.planIds.length > 1) out.push(`  run ${progress.run.id}: plans ${progress.run.planIds.join(', ')}`);
  // An unfinished rollback (docs/apply.md "Continuing a rollback"): not while it runs (its lock).
  if (rb && !progress.done && !runningNow(lockRecord, expired, state)) {
    out.push('  rollback INCOMPLETE: nodes of the run may still boot its image; the pools stay held for it.');
    out.push('    continue it: bootcplan plan --rollback --out rollback.json, then bootcplan apply rollback.json (or apply its plan file again)');
  }
  if (progress.preflightPassed) out.push('  preflight health gate: passed');
  for (const [name, p] of Object.entries(progress.pools)) {
    const done = progress.nodesDone[name] ? `; ${progress.nodesDone[name]} node(s) updated` : '';
    out.push(
      `  ${name}: ${p.done ? 'done' : p.halted ? `HALTED: ${p.halted.reason}` : `${p.wavesDone} wave(s) finished${p.wavesDone ? ` (${p.wavesDone === 1 ? '1' : `1-${p.wavesDone}`})` : ''}`}${done}`,
    );
    if (p.interrupted)
      out.push(
        `    stopped by ${p.interrupted.reason === 'batch-timeout' ? "the fleet's batch timeout (batchTimeoutSeconds)" : p.interrupted.reason} at ${p.interrupted.at}${p.interrupted.wave !== null ? ` in wave ${p.interrupted.wave}` : ''}; ${rb ? 'plan --rollback (or its plan file applied again) continues it' : 'apply again to continue'}`,
      );
    if (p.mcoUnpaused) out.push('    left unpaused by bootcplan mid-wave: the next apply pauses it again first');
    if (p.gatesPassed)
      out.push(
        `    health gates passed after wave${p.gatesPassed === 1 ? ' 1' : `s 1-${p.gatesPassed}`}${!p.done && p.gatesPassed < p.wavesDone ? `; the gate after wave ${p.wavesDone} is due: the next apply runs it first` : ''}`,
      );
    const paused = (progress.holds ?? []).some((h) => h.pool === name && h.action === 'paused');
    if (p.halted?.check)
      out.push(
        paused
          ? `    paused by health check ${p.halted.check} (onFailure: pause): apply PLANFILE --retry goes on past its gate without measuring it again`
          : `    halted by health check ${p.halted.check}: fix what it reports, then apply --retry (the gate runs again first)`,
      );
  }
  // Checks on trial (docs/apply.md "Health gates"): what each would have said, never acted on.
  for (const v of progress.observing ?? [])
    out.push(
      `  observing ${v.check} (mode: observe, not enforced)${v.pool ? ` for pool ${v.pool}` : ''}: ${v.result === 'failed' ? 'WOULD HAVE FAILED' : 'would have passed'} ${observedWhere(v)} at ${v.at}${v.observed ? `: ${v.observed}` : ''}`,
    );
  // Holds (docs/apply.md "Holds"): a later apply of these images exits 5 until apply --retry.
  for (const h of progress.holds ?? []) out.push(`  held: ${describeHold(h)}; apply --retry to try it again`);
  const oos = outOfServiceNow(Object.keys(progress.pools), progress.nodesInFlight);
  if (oos) out.push(`  out of service now: ${oos}`);
  const nodes = Object.entries(progress.nodesInFlight);
  if (nodes.length) {
    out.push('  nodes in flight:');
    for (const [n, r] of nodes) out.push(`    ${n} (${r.pool}, wave ${r.wave}): ${r.step}${r.wasCordoned ? ', cordoned by an administrator before' : ''}`);
  }
  if (progress.silences.length) {
    out.push('  silences (Alertmanager):');
    for (const x of progress.silences) out.push(`    ${x.node} (${x.pool}): ${x.matchers.join('; ')} until ${x.endsAt}`);
  }
  return out.join('\n') + '\n';
}

/**
 * The nodes of the run out of service now, per pool, with the plan's one figure
 * (domain/budget.ts outOfServiceFigure, docs/apply.md "Nodes out of service at once"): the
 * nodes bootcplan has in flight as the wave, those an administrator had cordoned before it took
 * them as already out of service. Nodes the run never took are not in its record. "" when none.
 */
function outOfServiceNow(poolOrder: readonly string[], inFlight: Readonly<Record<string, NodeProgress>>): string {
  const byPool = new Map<string, { ours: string[]; already: string[] }>();
  for (const [name, r] of Object.entries(inFlight)) {
    let p = byPool.get(r.pool);
    if (!p) byPool.set(r.pool, (p = { ours: [], already: [] }));
    (r.wasCordoned ? p.already : p.ours).push(name);
  }
  const pools = [...byPool.entries()].sort(([a], [b]) => rank(poolOrder, a) - rank(poolOrder, b) || a.localeCompare(b));
  return pools
    .map(([pool, { ours, already }]) => {
      const fig = outOfServiceFigure([{ waves: [ours], unavailableNow: already }]);
      return `${plural(fig.atOnce, 'node')} of pool ${pool}${fig.already ? ` (${fig.already} already out of service included)` : ''}`;
    })
    .join('; ');
}

/** A pool's place in the run record (unknown pools last). */
const rank = (order: readonly string[], pool: string) => (order.includes(pool) ? order.indexOf(pool) : order.length);

/** "before the first write", "after wave 2", "after node w-1", "after the canary's batch". */
function observedWhere(v: ObservingVerdict): string {
  if (v.point === 'preflight') return 'before the first write';
  if (v.point === 'afterNode') return `after node ${v.node ?? '?'}`;
  if (v.point === 'batch') return "after the canary's batch";
  return `after wave ${v.wave ?? '?'}`;
}
