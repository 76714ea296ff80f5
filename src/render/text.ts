/**
 * Terraform-like text rendering of a Plan (docs/design.md §8). Pure: reads only the plan.
 *
 * The plan's data goes through `forDisplay` first: a node name, condition or message from the
 * cluster (or a crafted plan file) carries no terminal control sequence, bidi override or line
 * break to the terminal (docs/safety.md "What is masked in outputs"); the only escape sequences written are the colours below.
 */
import type { Plan, PlanChange, PlanConcurrency, PlanNode, PlanPool } from '../plan/types.ts';
import { formatDiagnostic } from '../base/diagnostics.ts';
import { changeDiff } from './diff.ts';
import { scheduleLine } from './window-wording.ts';
import { specChangesTitle } from './spec-diff.ts';
import { forDisplay } from './secrets.ts';
import { rollbackTextLines, poolWayBack } from './rollback.ts';
import { VERB, SYMBOL, poolKind, selfNodeSentence, wordOf } from './vocabulary.ts';
import { checkLabel, checkOnFailure, checkSource, checkTiming, checkWhat, checkWhen, gatesPhrase, poolGatesLine } from './health.ts';
import { silenceLines } from './silences.ts';
import { poolDrainLines } from './drain.ts';
import { NODE_WAIT_SECONDS, rebootWait } from '../domain/bootc-daemon.ts';
import {
  colors,
  formatDuration,
  shortDigest,
  padTable,
  plural,
  foldNames,
  foldWaves,
  withFold,
  groupNodes,
  describeGroup,
  toAscii,
  naturalCompare,
  nodesLine,
  type Colors,
  outOfServiceWords,
} from './format.ts';

export interface TextOptions {
  color?: boolean;
  /** Show whole objects' managed fields instead of the changed ones with context. */
  full?: boolean;
  /** ASCII only (no "…" or "→"); the CLI turns it on whenever colour is off. */
  ascii?: boolean;
  /** Pools with at most this many scheduled nodes get a per-node wave table (default 60). */
  maxNodeRows?: number;
}

export function renderText(input: Plan, opts: TextOptions = {}): string {
  const plan = forDisplay(input);
  const c = colors(!!opts.color);
  const out: string[] = [];
  const cl = plan.cluster;
  out.push(
    c.bold(`bootcplan plan ${plan.id}: ${plan.spec.name}`) +
      c.dim(
        ` (${plan.spec.path}${plan.spec.ref ? ` at ${plan.spec.ref}` : ''}${plan.spec.commit ? `, commit ${String(plan.spec.commit).slice(0, 12)}` : ''}${plan.spec.dirty ? ', uncommitted changes' : ''})`,
      ),
  );
  out.push(
    c.dim(
      `cluster ${cl.source}${cl.version ? `, OpenShift ${cl.version}` : ''}${cl.platform ? `, ${cl.platform}` : ''}, ${String(cl.fingerprint).slice(0, 19)}`,
    ),
  );
  if (cl.identity) out.push(c.dim(`runs only on the cluster with ${cl.identity.kind} ${cl.identity.id}${cl.server ? ` (${cl.server})` : ''}`));
  const sched = scheduleLine(plan);
  if (sched) out.push(c.cyan(sched));
  out.push('');
  out.push(...rollbackTextLines(plan, c));
  const scTitle = specChangesTitle(plan);
  if (scTitle) {
    out.push(c.bold(scTitle));
    for (const l of String(plan.specChanges?.unified ?? '')
      .trimEnd()
      .split('\n')
      .filter(Boolean)) {
      out.push(`    ${l.startsWith('+') && !l.startsWith('+++') ? c.green(l) : l.startsWith('-') && !l.startsWith('---') ? c.red(l) : c.dim(l)}`);
    }
    out.push('');
  }

  const changed = plan.changes.filter((x) => x.action !== 'noop');
  const unchanged = plan.changes.filter((x) => x.action === 'noop');
  if (changed.length) {
    out.push('bootcplan will perform these actions, in this order:');
    out.push('');
    for (const ch of changed) out.push(...renderChange(ch, c, opts), '');
  } else {
    out.push('No object changes.');
    out.push('');
  }
  if (unchanged.length) {
    out.push(c.dim(`${plural(unchanged.length, 'managed object')} already as desired: ${unchanged.map((x) => x.address).join(', ')}`));
    out.push('');
  }

  const bi = plan.bootImages;
  if (bi.machineSets.length || bi.controlPlaneMachineSet) {
    out.push(...renderBootImages(plan, c), '');
  }

  if (plan.concurrency) out.push(c.cyan(concurrencyLine(plan, plan.concurrency)), '');
  for (const pool of plan.pools) out.push(...renderPool(plan, pool, c, opts, !plan.rollback), '');
  if (plan.healthChecks?.length) out.push(...renderHealth(plan, c), '');
  if (plan.silences?.length) out.push(c.bold('Silences:'), ...silenceLines(plan).map((l) => `  ${l}`), '');

  out.push(...diagnosticLines(plan, c));
  out.push(planLine(plan, c));
  const text = out.join('\n') + '\n';
  return opts.ascii ? toAscii(text) : text;
}

/** The errors, then the warnings, each under its heading. */
/** Plan.concurrency in one line (docs/apply.md "Pools in parallel"). */
function concurrencyLine(plan: Plan, cc: PlanConcurrency): string {
  const together = cc.groups.filter((g) => g.length > 1).map((g) => g.join('+'));
  const touched = plan.pools.reduce((n, p) => n + p.nodeCount, 0);
  return [
    `pools in parallel: ${together.length ? together.join(', ') : 'none (no two pools share a priority)'}`,
    cc.maxUnavailable ? `cluster budget ${cc.maxUnavailable.resolved} of ${touched}` : 'no cluster budget',
    ...(cc.spread ? [`spread ${cc.spread.key} ≤${cc.spread.maxPerValue}`] : []),
    `on pool failure ${cc.onPoolFailure}`,
  ].join(', ');
}

function diagnosticLines(plan: Plan, c: Colors): string[] {
  const out: string[] = [];
  const errs = plan.diagnostics.filter((d) => d.severity === 'error');
  const warns = plan.diagnostics.filter((d) => d.severity === 'warning');
  for (const [title, list, paint] of [
    ['Errors', errs, c.red],
    ['Warnings', warns, c.yellow],
  ] as const) {
    if (!list.length) continue;
    out.push(paint(c.bold(`${title}:`)));
    for (const d of list)
      out.push(
        ...formatDiagnostic(d)
          .split('\n')
          .map((l) => `  ${l}`),
      );
    out.push('');
  }
  return out;
}

export function planLine(plan: Plan, c: Colors = colors(false)): string {
  const s = plan.summary;
  const gates = gatesPhrase(plan);
  const line = `Plan: ${s.create} to create, ${s.update} to change, ${s.delete} to delete; ${nodesLine(plan)}${gates ? `, ${gates}` : ''} (est. ${formatDuration(s.estimatedSeconds)}).`;
  if (s.errors) return c.red(c.bold(`${line} ${plural(s.errors, 'error')}: this plan cannot be applied.`));
  return c.bold(line);
}

function renderChange(ch: PlanChange, c: Colors, opts: TextOptions): string[] {
  const paint = ch.action === 'create' ? c.green : ch.action === 'delete' ? c.red : c.yellow;
  const risk = ch.risk === 'none' ? '' : ch.risk === 'replacement' ? c.red(c.bold(' [replacement]')) : c.magenta(' [disruptive]');
  const lines = [
    c.bold(`  # ${ch.address} will be ${wordOf(VERB, 'text', ch.action)}`) + c.dim(` (${ch.reason})`) + risk,
    paint(`  ${wordOf(SYMBOL, 'text', ch.action)} ${ch.kind} ${ch.namespace ? `${ch.namespace}/` : ''}${ch.name}`),
  ];
  if (ch.description) lines.push(c.dim(`      ${ch.description}`));
  if (ch.waitAfter) lines.push(c.cyan(`      then wait: ${ch.waitAfter.description}`));
  for (const l of changeDiff(ch, { full: opts.full }).lines) {
    const text = `      ${l.kind === '#' ? ' ' : l.kind} ${l.text}`;
    lines.push(l.kind === '+' ? c.green(text) : l.kind === '-' ? c.red(text) : l.kind === '#' ? c.dim(text) : text);
  }
  return lines;
}

function renderBootImages(plan: Plan, c: Colors): string[] {
  const out = [c.bold('Boot images (written by the Machine Config Operator once the settings above apply):')];
  const rows = plan.bootImages.machineSets.map((m) => [
    `  ${m.skipped ? '-' : m.from === m.to ? '=' : '~'}`,
    m.name,
    m.skipped ? c.dim(`${m.from ?? '(none)'} kept: ${m.skipped}`) : m.from === m.to ? c.dim(`${m.to} (current)`) : `${m.from ?? '(none)'} -> ${m.to}`,
  ]);
  out.push(...padTable(rows, 1));
  const cp = plan.bootImages.controlPlaneMachineSet;
  if (cp) {
    const change = !cp.to ? c.dim(`${cp.from ?? '(none)'} kept`) : cp.from === cp.to ? c.dim(`${cp.to} (current)`) : `${cp.from ?? '(none)'} -> ${cp.to}`;
    out.push(`  ControlPlaneMachineSet/cluster: ${change}; ${cp.replacement ? c.red(c.bold('REPLACES control-plane machines')) : 'no machine replaced'}`);
    out.push(c.dim(`    ${cp.why}`));
  }
  return out;
}

/** `wayBack`: a forward plan's pool says where a rollback of the run would take it (a rollback plan says so in its head). */
function renderPool(plan: Plan, pool: PlanPool, c: Colors, opts: TextOptions, wayBack: boolean): string[] {
  const mu = pool.maxUnavailable;
  const head =
    `Pool ${pool.name} (${poolKind(pool.backend)}, priority ${pool.priority}${pool.controlPlane ? ', control plane' : ''}): ` +
    `${pool.nodeCount} nodes, ${pool.upToDate} up to date; maxUnavailable ${mu.value} -> ${mu.resolved} (${mu.rule})` +
    (pool.unavailableNow.length ? `, ${pool.unavailableNow.length} already unavailable` : '') +
    (pool.rollout === 'slots'
      ? `; in slots: at most ${plural(pool.waveSize, 'node')} out at once, the next admitted as one is back`
      : `; ${plural(pool.waveSize, 'node')} per wave`);
  const out = [c.bold(head)];
  out.push(c.dim(`  target ${pool.targetImage}`));
  // Its MachineConfig reboots those pools too (docs/spec.md "Inherited pools and the merge order").
  if (pool.inheritedBy?.length)
    out.push(c.dim(`  its MachineConfig is rendered by pool(s) ${pool.inheritedBy.join(', ')} too: paused until their own turn below`));
  const scheduled = pool.nodes.filter((n) => n.wave !== null);
  if (!pool.nodes.length) {
    out.push('  all nodes run the target image');
    return out;
  }
  // Identical node changes, grouped, names folded: readable at 10 nodes and at 10,000.
  for (const g of groupNodes(pool.name, pool.nodes)) {
    const line = `  ${g.blockedBy ? '!' : '~'} ${describeGroup(g, { withPool: false, slots: pool.rollout === 'slots' })}: ${foldNames(g.names, 6)}`;
    out.push(g.blockedBy ? c.yellow(line) : line);
  }
  out.push(...waveLines(pool, scheduled, c, opts));
  const self = selfNodeSentence(pool);
  if (self) out.push(`  last: ${self}`);
  out.push(...notScheduled(pool, c));
  for (const l of poolDrainLines(plan, pool)) out.push(l.level === 'dim' ? c.dim(l.text) : l.level === 'bad' ? c.red(l.text) : c.yellow(l.text));
  if (pool.waves.length && pool.rollout === 'slots') {
    out.push(
      c.dim(
        `  in slots, in this order (re-planned every ${plural(pool.waveSize, 'admission')}: ${plural(pool.waves.length, 'batch', 'batches')}), est. ${formatDuration(pool.estimatedSeconds)} (in waves: ${formatDuration(pool.wavesEstimatedSeconds ?? pool.estimatedSeconds)}); ${outOfServiceWords([pool])}`,
      ),
    );
  } else if (pool.waves.length)
    out.push(c.dim(`  ${plural(pool.waves.length, 'wave')}, est. ${formatDuration(pool.estimatedSeconds)}${soakWords(pool)}; ${outOfServiceWords([pool])}`));
  // Only when the cluster sets it, so plans without it read as before (docs/apply.md "Reboot timeout").
  if (pool.rebootTimeoutSeconds !== undefined) out.push(c.dim(`  reboot wait: ${rebootWait(NODE_WAIT_SECONDS, pool.rebootTimeoutSeconds).words}`));
  const gates = poolGatesLine(pool);
  if (gates) out.push(c.cyan(`  health gates: ${gates}`));
  const way = wayBack ? poolWayBack(pool) : null;
  if (way) out.push(pool.rollback?.available ? c.dim(`  rollback: ${way}`) : c.yellow(`  rollback: ${way}`));
  return out;
}

/** The pool's waves: one row per node in a small pool (its wave, or its place in the slots order); else one line per run of waves of the same size. */
function waveLines(pool: PlanPool, scheduled: readonly PlanNode[], c: Colors, opts: TextOptions): string[] {
  if (!scheduled.length) return [];
  if (scheduled.length <= (opts.maxNodeRows ?? 60)) {
    // Slots: the admission order (1 = first admitted) instead of the wave.
    const rows = [[pool.rollout === 'slots' ? '  #' : '  wave', 'node', 'zone', 'reboot', 'staged', 'from -> to']];
    for (const [i, n] of scheduled.entries())
      rows.push([
        `  ${pool.rollout === 'slots' ? i + 1 : n.wave}`,
        n.name,
        n.zone ?? '-',
        n.reboot,
        n.staged ? 'yes' : 'no',
        `${shortDigest(n.from)} -> ${shortDigest(n.to)}`,
      ]);
    const [h, ...body] = padTable(rows);
    return [c.dim(h), ...body];
  }
  // Large pools: one line per run of waves of the same size, names folded.
  const reboots = new Map(pool.nodes.map((n) => [n.name, n.reboot]));
  let i = 0;
  const lines: { cells: string[]; waves: number }[] = [];
  while (i < pool.waves.length) {
    let j = i;
    while (j + 1 < pool.waves.length && pool.waves[j + 1].length === pool.waves[i].length) j++;
    const names = pool.waves.slice(i, j + 1).flat();
    const soft = names.filter((n) => reboots.get(n) === 'soft').length;
    lines.push({
      waves: j - i + 1,
      cells: [
        `  ${pool.rollout === 'slots' ? (j > i ? `batches ${i + 1}-${j + 1}` : `batch ${i + 1}`) : j > i ? `waves ${i + 1}-${j + 1}` : `wave ${i + 1}`}`,
        `${plural(pool.waves[i].length, 'node')}${j > i ? ' each' : ''}`,
        `${soft} soft, ${names.length - soft} hard or not yet known`,
        `(${foldNames([...names].sort(naturalCompare), 3)})`,
      ],
    });
    i = j + 1;
  }
  // More than 12 lines: the first 5, "… N more waves …", the last (-o json has them all).
  const fold = foldWaves(lines, { count: (l) => l.waves });
  return withFold(padTable(fold.items.map((l) => l.cells)), fold, '  ', c.dim);
}

/** The nodes not scheduled, with why (blockedBy) and their conditions other than Ready=True: the first 20, then the names folded. */
function notScheduled(pool: PlanPool, c: Colors): string[] {
  const blocked = pool.nodes.filter((n) => n.blockedBy);
  if (!blocked.length) return [];
  const out = [c.yellow(`  not scheduled (${blocked.length}):`)];
  for (const n of blocked.slice(0, 20)) {
    const conds = (n.conditions ?? [])
      .filter((x) => x.status !== 'True' || x.type !== 'Ready')
      .map((x) => `${x.type}=${x.status}${x.reason ? `/${x.reason}` : ''}`)
      .join(', ');
    out.push(c.yellow(`    ${n.name} (${n.blockedBy})${conds ? ` ${conds}` : ''}`));
  }
  if (blocked.length > 20)
    out.push(
      c.yellow(
        `    and ${blocked.length - 20} more: ${foldNames(
          blocked
            .slice(20)
            .map((n) => n.name)
            .sort(naturalCompare),
          6,
        )}`,
      ),
    );
  return out;
}

/** " including 2m soak between waves", or "after each wave" when afterWave gates follow the last wave too. */
function soakWords(pool: PlanPool): string {
  const gated = !!pool.gates?.afterWave.length;
  if (!pool.soakSeconds || (pool.waves.length < 2 && !gated)) return '';
  return ` including ${formatDuration(pool.soakSeconds)} soak ${gated ? 'after each wave' : 'between waves'}`;
}

/** The "Health gates" block: per check what it judges, when, how it measures, what a failure does, where it reads from. */
function renderHealth(plan: Plan, c: Colors): string[] {
  const checks = plan.healthChecks ?? [];
  const out = [c.bold(`Health gates (${plural(checks.length, 'check')}; an unreachable source fails a check, never passes it):`)];
  for (const h of checks) {
    out.push(`  ${c.bold(checkLabel(plan, h))} (${h.mode === 'observe' ? `${h.kind}, ${c.yellow('observing')}` : h.kind}): ${checkWhat(h)}`);
    out.push(
      `      ${checkWhen(h)}; ${checkTiming(h)}; on failure: ${h.onFailure === 'rollback' && h.mode !== 'observe' ? c.magenta(checkOnFailure(h)) : checkOnFailure(h)}`,
    );
    out.push(c.dim(`      reads ${checkSource(h)}`));
  }
  return out;
}
