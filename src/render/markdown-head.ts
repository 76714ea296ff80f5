/**
 * The head of the pull-request comment (src/render/markdown.ts): the marker, the title and the
 * plan line, where the plan comes from, the summary and per-pool tables, the health gates, then
 * errors, warnings and risks. Every part is bounded (HEAD_BUDGET), so the head always fits
 * and is never cut. Pure: reads only the plan, already through `forDisplay`.
 */
import { drainItems, drainItemWords, type DrainItem } from './drain.ts';
import type { Plan, PlanHealthCheck, PlanPool } from '../plan/types.ts';
import type { Diagnostic } from '../base/diagnostics.ts';
import { scheduleLine } from './window-wording.ts';
import { formatDuration, plural, foldNames, naturalCompare, rebootMix, riskTally, nodesLine, outOfServiceWords } from './format.ts';
import { planLine } from './text.ts';
import { rollbackHeadline, rollbackFacts, poolRollbackRows, FORWARD_WAY_BACK } from './rollback.ts';
import { checkKind, checkLabel, checkOnFailure, checkSource, checkWhat, checkWhen, gatesPhrase } from './health.ts';
import { silenceLines } from './silences.ts';
import { VERB, poolKind, escapeMarkdown, clipEnd, wordOf } from './vocabulary.ts';
import { code, mdCodeSafe } from './markdown-inline.ts';
import { ICON } from './icons.ts';

/** Bounds of the parts of the head, so the head itself always fits. */
const HEAD_BUDGET = { pools: 40, errors: 20_000, warnings: 8_000, risks: 6_000, message: 600, health: 8_000 };

export function renderHead(plan: Plan, marker: string): string {
  const out = headIntro(plan, marker);
  out.push(...summaryTable(plan));
  out.push(...poolTable(plan.pools));
  if (plan.healthChecks?.length) out.push(...healthTable(plan));
  if (plan.silences?.length) out.push('', '**Silences**', '', ...silenceLines(plan).map((l) => `- ${escapeMarkdown(clipEnd(l, 600))}`));
  out.push(...findings(plan));
  return out.join('\n') + '\n';
}

/** The marker, the title and the plan line, where the plan comes from, its schedule, and a rollback's way back. */
function headIntro(plan: Plan, marker: string): string[] {
  const s = plan.summary;
  const out: string[] = [marker];
  const status = s.errors ? ICON.error : s.warnings ? ICON.warning : ICON.ok;
  out.push(`### ${status} bootcplan plan for \`${mdCodeSafe(plan.spec.name)}\``);
  out.push('');
  out.push(`**${escapeMarkdown(planLine(plan))}**`);
  out.push('');
  const sp = plan.spec;
  const cl = plan.cluster;
  out.push(
    `<sub>spec ${code(sp.path)}${sp.ref ? ` at ${code(sp.ref)}` : ''}${sp.commit ? ` (commit ${code(String(sp.commit).slice(0, 12))})` : ''}${sp.dirty ? ', uncommitted changes' : ''}` +
      ` · cluster ${code(cl.source)}${cl.version ? `, OpenShift ${escapeMarkdown(cl.version)}` : ''}${cl.platform ? `, ${escapeMarkdown(cl.platform)}` : ''}` +
      (cl.identity ? ` · runs only on ${code(cl.identity.kind)} ${code(cl.identity.id)}${cl.server ? ` (${code(cl.server)})` : ''}` : '') +
      ` · plan ${code(plan.id)}</sub>`,
  );
  out.push('');
  const sched = scheduleLine(plan);
  if (sched) out.push(`${ICON.schedule} ${escapeMarkdown(sched)}`, '');
  out.push(...rollbackMarkdown(plan));
  return out;
}

/** The summary table: objects, pools, nodes, reboots, duration, risks, health gates, findings. */
function summaryTable(plan: Plan): string[] {
  const s = plan.summary;
  const md = escapeMarkdown;
  const out: string[] = [];
  const { soft, hard, unknown } = rebootMix(plan.pools);
  const { replacement, disruptive } = riskTally(plan);
  out.push('| Summary | |');
  out.push('|---|---|');
  out.push(`| Objects | ${md(s.create)} to create, ${md(s.update)} to change, ${md(s.delete)} to delete |`);
  out.push(`| Pools | ${plan.pools.length ? `${plan.pools.length}: ${escapeMarkdown(clipEnd(plan.pools.map((p) => p.name).join(', '), 300))}` : 'none'} |`);
  const inSlots = plan.pools.some((p) => p.rollout === 'slots');
  out.push(
    `| Nodes | ${inSlots ? md(nodesLine(plan).replace(/^\d+ nodes?: /, `${s.nodes} to update: `)) : `${md(s.nodes)} to update in ${md(plural(s.waves, 'wave'))}`}${s.blocked ? `; **${md(s.blocked)} not scheduled**` : ''}${s.nodes ? `; ${md(outOfServiceWords(plan.pools))}` : ''} |`,
  );
  out.push(`| Reboots | ${soft} soft, ${hard} hard${unknown ? `, ${unknown} not yet known (decided once staged; counted as hard)` : ''} |`);
  out.push(`| Estimated duration | ${md(formatDuration(s.estimatedSeconds))} |`);
  out.push(
    `| Risks | ${replacement ? `**${ICON.replacement} ${plural(replacement, 'control-plane replacement')}**` : 'no replacement'}, ${plural(disruptive, 'disruptive change')} |`,
  );
  const gates = gatesPhrase(plan);
  if (gates) out.push(`| Health gates | ${md(gates)}; ${gateFailurePhrase(plan.healthChecks ?? [])} |`);
  out.push(`| Errors / warnings | ${s.errors ? `**${md(s.errors)}**` : '0'} / ${md(s.warnings)} |`);
  out.push('');
  return out;
}

/** One row per pool, the first HEAD_BUDGET.pools of them. */
function poolTable(pools: readonly PlanPool[]): string[] {
  if (!pools.length) return [];
  const shown = pools.slice(0, HEAD_BUDGET.pools);
  return [
    '| Pool | Backend | Nodes to update | Waves | Per wave | Soft reboot | Hard reboot | Reboot not yet known | Not scheduled | Est. |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...shown.map(poolRow),
    ...(pools.length > shown.length ? [`| … ${pools.length - shown.length} more pools | | | | | | | | | |`] : []),
    '',
  ];
}

/** Errors, warnings and risks, each list bounded by its part of the head's budget. */
function findings(plan: Plan): string[] {
  const md = escapeMarkdown;
  const out: string[] = [];
  const errs = plan.diagnostics.filter((d) => d.severity === 'error');
  const warns = plan.diagnostics.filter((d) => d.severity === 'warning');
  if (errs.length) {
    out.push(`#### ${ICON.error} ${plural(errs.length, 'error')}: this plan cannot be applied`);
    out.push('');
    out.push(...boundedList(errs.map(diagnosticItem), HEAD_BUDGET.errors, (n) => `- … and ${plural(n, 'more error')}: run \`bootcplan plan\` to see them all`));
    out.push('');
  }
  if (warns.length) {
    out.push(`#### ${ICON.warning} ${plural(warns.length, 'warning')}`);
    out.push('');
    out.push(...boundedList(warns.map(diagnosticItem), HEAD_BUDGET.warnings, (n) => `- … and ${plural(n, 'more warning')}`));
    out.push('');
  }
  // Blocked drains and outages first (docs/apply.md "Drain forecast"): they stop a wave or a service.
  const drains = drainItems(plan);
  const drainItem = (i: DrainItem) =>
    `- **${i.finding.class === 'blocked' ? `blocked drain${i.outcome ? `, ${i.outcome}` : ''}` : i.finding.class}**: ${escapeMarkdown(clipEnd(drainItemWords(i), HEAD_BUDGET.message))}; ${escapeMarkdown(clipEnd(i.finding.hint, HEAD_BUDGET.message))}`;
  const riskItems: string[] = drains.filter((i) => i.finding.class === 'blocked' || i.finding.class === 'outage').map(drainItem);
  for (const c of riskTally(plan).risky) {
    riskItems.push(
      `- ${c.risk === 'replacement' ? `${ICON.replacement} **replacement**` : '**disruptive**'}: ${code(c.address)} ${md(wordOf(VERB, 'markdown', c.action))} (${escapeMarkdown(c.reason)})${c.description ? `: ${escapeMarkdown(clipEnd(c.description, HEAD_BUDGET.message))}` : ''}`,
    );
  }
  const cp = plan.bootImages.controlPlaneMachineSet;
  if (cp?.replacement)
    riskItems.push(
      `- ${ICON.replacement} **replacement**: the ControlPlaneMachineSet replaces control-plane machines: ${escapeMarkdown(clipEnd(cp.why, HEAD_BUDGET.message))}`,
    );
  for (const p of plan.pools) {
    const blocked = p.nodes.filter((n) => n.blockedBy);
    if (blocked.length)
      riskItems.push(
        `- **not scheduled**: ${plural(blocked.length, 'node')} of pool ${code(p.name)} (${escapeMarkdown([...new Set(blocked.map((n) => n.blockedBy))].join(', '))}): ${escapeMarkdown(foldNames(blocked.map((n) => n.name).sort(naturalCompare), 6))}`,
      );
  }
  riskItems.push(...drains.filter((i) => i.finding.class === 'no-room' || i.finding.class === 'serialized').map(drainItem));
  if (riskItems.length) {
    out.push('#### Risks');
    out.push('');
    out.push(...boundedList(riskItems, HEAD_BUDGET.risks, (n) => `- … and ${n} more`));
    out.push('');
  }
  return out;
}

/** The health gates in the head: one row per check (what, when, on failure, source); the head's budget bounds it. */
function healthTable(plan: Plan): string[] {
  const md = escapeMarkdown;
  const rows = (plan.healthChecks ?? []).map(
    (c) =>
      `| ${code(checkLabel(plan, c))} | ${md(checkKind(c))} | ${md(clipEnd(checkWhat(c), 300))} | ${md(checkWhen(c))} | ${md(checkOnFailure(c))} | ${md(clipEnd(checkSource(c), 200))} |`,
  );
  return [
    '| Health check | Kind | Passes when | Gates | On failure | Reads |',
    '|---|---|---|---|---|---|',
    ...boundedList(rows, HEAD_BUDGET.health, (n) => `| … ${n} more checks | | | | | |`),
    '',
  ];
}

function poolRow(p: PlanPool): string {
  const sched = p.nodes.filter((n) => n.wave !== null);
  const soft = sched.filter((n) => n.reboot === 'soft').length;
  const hard = sched.filter((n) => n.reboot === 'hard').length;
  const blocked = p.nodes.filter((n) => n.blockedBy).length;
  const md = escapeMarkdown;
  return `| ${code(p.name)}${p.controlPlane ? ' (control plane)' : ''}${p.paused ? ' (paused)' : ''} | ${poolKind(p.backend)} | ${sched.length} of ${md(p.nodeCount)} | ${p.rollout === 'slots' ? 'slots' : md(p.waves.length)} | ${md(p.waveSize)} | ${soft} | ${hard} | ${sched.length - soft - hard} | ${blocked ? `**${blocked}**` : 0} | ${md(formatDuration(p.estimatedSeconds))} |`;
}

export function diagnosticItem(d: Diagnostic): string {
  const where = d.file ? `${d.file}${d.line ? `:${d.line}${d.column ? `:${d.column}` : ''}` : ''}` : null;
  const parts = [`- ${code(d.code)}`];
  if (where) parts.push(` ${code(where)}`);
  if (d.path) parts.push(` ${code(d.path)}`);
  parts.push(`: ${escapeMarkdown(clipEnd(d.message, HEAD_BUDGET.message))}`);
  if (d.expected) parts.push(`<br>expected: ${escapeMarkdown(clipEnd(d.expected, 300))}`);
  if (d.hint) parts.push(`<br>hint: ${escapeMarkdown(clipEnd(d.hint, 300))}`);
  return parts.join('');
}

/** Items until the budget is used, then a "… and N more" line. */
function boundedList(items: string[], budget: number, more: (n: number) => string): string[] {
  const out: string[] = [];
  let used = 0;
  for (let i = 0; i < items.length; i++) {
    if (used + items[i].length + 1 > budget && out.length) {
      out.push(more(items.length - i));
      break;
    }
    out.push(items[i]);
    used += items[i].length + 1;
  }
  return out;
}

/** A rollback plan's headline and facts, and each pool's way back as a table (render/rollback.ts). */
function rollbackMarkdown(plan: Plan): string[] {
  const head = rollbackHeadline(plan);
  const rows = poolRollbackRows(plan);
  if (!head && !rows.length) return [];
  const out: string[] = [];
  if (head) {
    out.push(`#### ${ICON.rollback} ${escapeMarkdown(head).replace(/^Rollback of plan (\S+)/, (_m, id: string) => `Rollback of plan ${code(id)}`)}`, '');
    for (const f of rollbackFacts(plan)) out.push(`- ${escapeMarkdown(f)}`);
    out.push('');
  } else out.push(`**${escapeMarkdown(FORWARD_WAY_BACK)}**`, '');
  out.push('| Pool | Back to | Via | Download again |', '|---|---|---|---|');
  for (const r of rows.slice(0, HEAD_BUDGET.pools)) {
    const to = r.to === null ? `${ICON.warning} none: ${escapeMarkdown(clipEnd(r.refusal ?? '', 600))}` : code(r.to);
    out.push(`| ${escapeMarkdown(r.pool)} | ${to} | ${escapeMarkdown(r.via)} | ${r.download} |`);
  }
  out.push('');
  return out;
}

/** What a failed gate does, for the summary table: observing checks (mode: observe) never act. */
function gateFailurePhrase(checks: readonly PlanHealthCheck[]): string {
  const enforced = checks.filter((c) => c.mode !== 'observe');
  const trial = checks.length - enforced.length;
  const acts = !enforced.length
    ? 'no failure halts (every check is observing)'
    : enforced.some((c) => c.onFailure === 'rollback')
      ? 'a failure halts or rolls back'
      : 'a failure halts the rollout';
  return trial && enforced.length ? `${acts}; ${trial} observing (recorded, never acted on)` : acts;
}
