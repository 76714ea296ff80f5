/**
 * Markdown for a pull-request comment (DESIGN §8). Pure: reads only the plan.
 *
 * - The first line is a hidden marker (`<!-- bootcplan:plan spec=PATH -->`) so a bot finds
 *   and updates one sticky comment per spec file.
 * - The summary comes first (plan line, a summary table, a per-pool table), then errors,
 *   warnings and risks; details (object diffs, boot images, pools) sit in `<details>` blocks.
 * - The result never exceeds `MARKDOWN_LIMIT` characters (GitHub refuses comments over
 *   65,536). Every part is bounded by construction; if the details still do not fit, whole
 *   detail blocks are left out from the middle with a note. The head (marker, summary,
 *   errors) is never cut.
 * - Data is text (docs/safety.md "What is masked in outputs"): read through `forDisplay` (secrets and credentials masked,
 *   invisible characters visible), then escaped where it is written; text outside code spans
 *   and blocks has its `@mentions` and `#123` links broken (`escapeMarkdown`), numbers too,
 *   since a crafted plan file may hold a string where a number belongs.
 */
import type { Plan, PlanChange, PlanPool } from '../plan/types.ts';
import type { Diagnostic } from '../base/diagnostics.ts';
import { changeDiff, type DiffLine } from './diff.ts';
import { scheduleLine, specChangesTitle } from './gitops.ts';
import { forDisplay } from './secrets.ts';
import { formatDuration, formatCount, plural, foldNames, groupNodes, describeGroup, naturalCompare, rebootMix, riskTally, nodesLine } from './format.ts';
import { planLine } from './text.ts';
import { rollbackHeadline, rollbackFacts, poolRollbackRows, FORWARD_WAY_BACK } from './rollback.ts';
import { checkLabel, checkOnFailure, checkSource, checkTiming, checkWhat, checkWhen, gatesPhrase, poolGatesLine } from './health.ts';
import { VERB, SYMBOL, poolKind, withArrows, escapeHtml, escapeMarkdown, neutraliseMentions, clipEnd, selfNodeSentence, wordOf } from './vocabulary.ts';

export const MARKDOWN_LIMIT = 60_000;

export interface MarkdownOptions {
  /** Whole managed fields in the diffs instead of the changed ones with context. */
  full?: boolean;
  /** Character limit (default MARKDOWN_LIMIT). */
  limit?: number;
}

/**
 * The hidden first line a bot searches for to update its sticky comment. Keyed by the spec
 * file's path in the repository (not metadata.name): a pull request that renames the rollout
 * still updates the same comment, and a workflow can compute the marker even when the spec
 * does not parse. Characters that could end the HTML comment are replaced.
 */
export function markdownMarker(plan: Pick<Plan, 'spec'>): string {
  const key = String(plan.spec.path).replace(/^\.\//, '').replace(/[^A-Za-z0-9._/-]/g, '_').replace(/-{2,}/g, '-');
  return `<!-- bootcplan:plan spec=${key} -->`;
}

/** Bounds of the parts of the head, so the head itself always fits. */
const HEAD_BUDGET = { pools: 40, errors: 20_000, warnings: 8_000, risks: 6_000, message: 600, health: 8_000 };
/** Largest single details block; longer diffs are cut in their middle. */
const BLOCK_BUDGET = 12_000;

export function renderMarkdown(input: Plan, opts: MarkdownOptions = {}): string {
  const plan = forDisplay(input);
  const limit = opts.limit ?? MARKDOWN_LIMIT;
  // The marker from the path as given, as a workflow computes it (markdownMarker keeps only safe characters).
  const head = renderHead(plan, markdownMarker(input));
  const blocks = renderDetails(plan, opts);
  const tail = renderTail(plan);
  return assemble(head, blocks, tail, limit);
}

// ---------------------------------------------------------------------------- head

function renderHead(plan: Plan, marker: string): string {
  const s = plan.summary;
  const out: string[] = [marker];
  const md = escapeMarkdown;
  const status = s.errors ? ':x:' : s.warnings ? ':warning:' : ':white_check_mark:';
  out.push(`### ${status} bootcplan plan for \`${mdCodeSafe(plan.spec.name)}\``);
  out.push('');
  out.push(`**${escapeMarkdown(planLine(plan))}**`);
  out.push('');
  const sp = plan.spec;
  const cl = plan.cluster;
  out.push(`<sub>spec ${code(sp.path)}${sp.ref ? ` at ${code(sp.ref)}` : ''}${sp.commit ? ` (commit ${code(String(sp.commit).slice(0, 12))})` : ''}${sp.dirty ? ', uncommitted changes' : ''}` +
    ` · cluster ${code(cl.source)}${cl.version ? `, OpenShift ${escapeMarkdown(cl.version)}` : ''}${cl.platform ? `, ${escapeMarkdown(cl.platform)}` : ''}` +
    (cl.identity ? ` · runs only on ${code(cl.identity.kind)} ${code(cl.identity.id)}${cl.server ? ` (${code(cl.server)})` : ''}` : '') +
    ` · plan ${code(plan.id)}</sub>`);
  out.push('');
  const sched = scheduleLine(plan);
  if (sched) out.push(`:clock9: ${escapeMarkdown(sched)}`, '');
  out.push(...rollbackMarkdown(plan));

  const { soft, hard, unknown } = rebootMix(plan.pools);
  const { risky, replacement, disruptive } = riskTally(plan);
  out.push('| Summary | |');
  out.push('|---|---|');
  out.push(`| Objects | ${md(s.create)} to create, ${md(s.update)} to change, ${md(s.delete)} to delete |`);
  out.push(`| Pools | ${plan.pools.length ? `${plan.pools.length}: ${escapeMarkdown(clipEnd(plan.pools.map((p) => p.name).join(', '), 300))}` : 'none'} |`);
  const inSlots = plan.pools.some((p) => p.rollout === 'slots');
  out.push(`| Nodes | ${inSlots ? md(nodesLine(plan).replace(/^\d+ nodes?: /, `${s.nodes} to update: `)) : `${md(s.nodes)} to update in ${md(plural(s.waves, 'wave'))}`}${s.blocked ? `; **${md(s.blocked)} not scheduled**` : ''} |`);
  out.push(`| Reboots | ${soft} soft, ${hard} hard${unknown ? `, ${unknown} not yet known (decided once staged; counted as hard)` : ''} |`);
  out.push(`| Estimated duration | ${md(formatDuration(s.estimatedSeconds))} |`);
  out.push(`| Risks | ${replacement ? `**:rotating_light: ${plural(replacement, 'control-plane replacement')}**` : 'no replacement'}, ${plural(disruptive, 'disruptive change')} |`);
  const gates = gatesPhrase(plan);
  if (gates) out.push(`| Health gates | ${md(gates)}; ${plan.healthChecks!.some((c) => c.onFailure === 'rollback') ? 'a failure halts or rolls back' : 'a failure halts the rollout'} |`);
  out.push(`| Errors / warnings | ${s.errors ? `**${md(s.errors)}**` : '0'} / ${md(s.warnings)} |`);
  out.push('');

  const withNodes = plan.pools;
  if (withNodes.length) {
    out.push('| Pool | Backend | Nodes to update | Waves | Per wave | Soft reboot | Hard reboot | Reboot not yet known | Not scheduled | Est. |');
    out.push('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|');
    const shown = withNodes.slice(0, HEAD_BUDGET.pools);
    for (const p of shown) out.push(poolRow(p));
    if (withNodes.length > shown.length) out.push(`| … ${withNodes.length - shown.length} more pools | | | | | | | | | |`);
    out.push('');
  }

  if (plan.healthChecks?.length) out.push(...healthTable(plan));

  const errs = plan.diagnostics.filter((d) => d.severity === 'error');
  const warns = plan.diagnostics.filter((d) => d.severity === 'warning');
  if (errs.length) {
    out.push(`#### :x: ${plural(errs.length, 'error')}: this plan cannot be applied`);
    out.push('');
    out.push(...boundedList(errs.map(diagnosticItem), HEAD_BUDGET.errors, (n) => `- … and ${plural(n, 'more error')}: run \`bootcplan plan\` to see them all`));
    out.push('');
  }
  if (warns.length) {
    out.push(`#### :warning: ${plural(warns.length, 'warning')}`);
    out.push('');
    out.push(...boundedList(warns.map(diagnosticItem), HEAD_BUDGET.warnings, (n) => `- … and ${plural(n, 'more warning')}`));
    out.push('');
  }
  const riskItems: string[] = [];
  for (const c of risky) {
    riskItems.push(`- ${c.risk === 'replacement' ? ':rotating_light: **replacement**' : '**disruptive**'}: ${code(c.address)} ${md(wordOf(VERB, 'markdown', c.action))} (${escapeMarkdown(c.reason)})${c.description ? `: ${escapeMarkdown(clipEnd(c.description, HEAD_BUDGET.message))}` : ''}`);
  }
  const cp = plan.bootImages.controlPlaneMachineSet;
  if (cp?.replacement) riskItems.push(`- :rotating_light: **replacement**: the ControlPlaneMachineSet replaces control-plane machines: ${escapeMarkdown(clipEnd(cp.why, HEAD_BUDGET.message))}`);
  for (const p of plan.pools) {
    const blocked = p.nodes.filter((n) => n.blockedBy);
    if (blocked.length) riskItems.push(`- **not scheduled**: ${plural(blocked.length, 'node')} of pool ${code(p.name)} (${escapeMarkdown([...new Set(blocked.map((n) => n.blockedBy))].join(', '))}): ${escapeMarkdown(foldNames(blocked.map((n) => n.name).sort(naturalCompare), 6))}`);
  }
  if (riskItems.length) {
    out.push('#### Risks');
    out.push('');
    out.push(...boundedList(riskItems, HEAD_BUDGET.risks, (n) => `- … and ${n} more`));
    out.push('');
  }
  return out.join('\n') + '\n';
}

/** The health gates in the head: one row per check (what, when, on failure, source); the head's budget bounds it. */
function healthTable(plan: Plan): string[] {
  const md = escapeMarkdown;
  const rows = (plan.healthChecks ?? []).map((c) => `| ${code(checkLabel(plan, c))} | ${md(c.kind)} | ${md(clipEnd(checkWhat(c), 300))} | ${md(checkWhen(c))} | ${md(checkOnFailure(c))} | ${md(clipEnd(checkSource(c), 200))} |`);
  return ['| Health check | Kind | Passes when | Gates | On failure | Reads |', '|---|---|---|---|---|---|', ...boundedList(rows, HEAD_BUDGET.health, (n) => `| … ${n} more checks | | | | | |`), ''];
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

// ---------------------------------------------------------------------------- details

/** Detail blocks, built lazily: blocks that cannot fit are never rendered (no diff computed). */
function renderDetails(plan: Plan, opts: MarkdownOptions): (() => string)[] {
  const blocks: (() => string)[] = [];
  const scTitle = specChangesTitle(plan);
  if (scTitle && plan.specChanges?.unified) {
    blocks.push(() => `<details><summary>${escapeMarkdown(scTitle)}</summary>\n\n${fenced('diff', cutMiddle(String(plan.specChanges!.unified).trimEnd().split('\n'), 400)).join('\n')}\n\n</details>\n`);
  } else if (scTitle) blocks.push(() => `<sub>${escapeMarkdown(scTitle)}</sub>\n`);
  const changed = plan.changes.filter((c) => c.action !== 'noop');
  for (const ch of changed) blocks.push(() => changeBlock(ch, opts));
  const unchanged = plan.changes.filter((c) => c.action === 'noop');
  if (unchanged.length) blocks.push(() => `<sub>${plural(unchanged.length, 'managed object')} already as desired: ${escapeMarkdown(clipEnd(unchanged.map((c) => c.address).join(', '), 2000))}</sub>\n`);
  if (plan.bootImages.machineSets.length || plan.bootImages.controlPlaneMachineSet) blocks.push(() => bootImagesBlock(plan) ?? '');
  for (const p of plan.pools) blocks.push(() => poolBlock(p));
  if (plan.healthChecks?.length) blocks.push(() => healthBlock(plan));
  return blocks;
}

function changeBlock(ch: PlanChange, opts: MarkdownOptions): string {
  const diff = changeDiff(ch, { full: opts.full });
  const risk = ch.risk === 'none' ? '' : ch.risk === 'replacement' ? ' · <b>replacement</b>' : ' · <b>disruptive</b>';
  const stats = diff.gaveUp ? 'JSON patch' : `+${diff.added} −${diff.removed}`;
  const lines = [
    '<details>',
    `<summary><code>${inlineHtml(wordOf(SYMBOL, 'markdown', ch.action))} ${inlineHtml(ch.address)}</code> ${inlineHtml(wordOf(VERB, 'markdown', ch.action))} · ${inlineHtml(ch.reason)}${risk} · ${stats}</summary>`,
    '',
  ];
  if (ch.description) lines.push(escapeMarkdown(clipEnd(ch.description, 1000)), '');
  if (ch.waitAfter) lines.push(`then wait: ${escapeMarkdown(clipEnd(ch.waitAfter.description, 600))}`, '');
  lines.push(...fenced('diff', cutMiddle(diff.lines.map(diffText), BLOCK_BUDGET)));
  lines.push('', '</details>', '');
  return lines.join('\n');
}

function diffText(l: DiffLine): string {
  return `${l.kind === '#' ? ' ' : l.kind} ${l.text}`;
}

function bootImagesBlock(plan: Plan): string | null {
  const bi = plan.bootImages;
  if (!bi.machineSets.length && !bi.controlPlaneMachineSet) return null;
  const changed = bi.machineSets.filter((m) => !m.skipped && m.from !== m.to).length;
  const lines = ['<details>', `<summary>Boot images: ${plural(changed, 'MachineSet')} to update${bi.controlPlaneMachineSet ? ', ControlPlaneMachineSet' : ''}</summary>`, ''];
  if (bi.machineSets.length) {
    lines.push('| MachineSet | Boot image |', '|---|---|');
    const rows = bi.machineSets.map((m) => `| ${code(m.name)} | ${m.skipped ? `skipped: ${escapeMarkdown(clipEnd(m.skipped, 300))}` : m.from === m.to ? `${code(m.to ?? '(none)')} (current)` : `${code(m.from ?? '(none)')} → ${code(m.to ?? '(none)')}`} |`);
    lines.push(...cutMiddle(rows, BLOCK_BUDGET - 2000, (n) => `| … ${n} more | |`));
    lines.push('');
  }
  const cp = bi.controlPlaneMachineSet;
  if (cp) {
    const change = cp.from === cp.to || !cp.to ? 'no boot image change' : `${code(cp.from ?? '(none)')} → ${code(cp.to)}`;
    lines.push(`ControlPlaneMachineSet \`cluster\`: ${change}; ${cp.replacement ? '**replaces control-plane machines**' : 'no machine replaced'}: ${escapeMarkdown(clipEnd(cp.why, 1000))}`, '');
  }
  lines.push('</details>', '');
  return lines.join('\n');
}

function poolBlock(p: PlanPool): string {
  const sched = p.nodes.filter((n) => n.wave !== null);
  const mu = p.maxUnavailable;
  const md = escapeMarkdown;
  const lines = [
    '<details>',
    p.rollout === 'slots'
      ? `<summary>Pool <code>${inlineHtml(p.name)}</code>: ${plural(sched.length, 'node')} in slots, at most ${inlineHtml(p.waveSize)} out at once, est. ${inlineHtml(formatDuration(p.estimatedSeconds))} (in waves: ${inlineHtml(formatDuration(p.wavesEstimatedSeconds ?? p.estimatedSeconds))})</summary>`
      : `<summary>Pool <code>${inlineHtml(p.name)}</code>: ${plural(sched.length, 'node')} in ${inlineHtml(plural(p.waves.length, 'wave'))} of up to ${inlineHtml(p.waveSize)}, est. ${inlineHtml(formatDuration(p.estimatedSeconds))}</summary>`,
    '',
    `${poolKind(p.backend)}, priority ${md(p.priority)}${p.controlPlane ? ', control plane' : ''}; ` +
      `${md(p.nodeCount)} nodes, ${md(p.upToDate)} up to date; maxUnavailable ${code(String(mu.value))} → ${md(mu.resolved)} (${md(mu.rule)})` +
      `${p.unavailableNow.length ? `, ${md(p.unavailableNow.length)} already unavailable` : ''}; ` +
      (p.rollout === 'slots' ? `in slots: each node admitted in the order below as soon as one is back; re-planned every ${md(plural(p.waveSize, 'admission'))}.` : `soak ${md(formatDuration(p.soakSeconds))} ${p.gates?.afterWave.length ? 'after each wave (then its health gate)' : 'between waves'}.`),
    '',
    `Target ${code(p.targetImage)}`,
    '',
  ];
  if (!p.nodes.length) {
    lines.push('All nodes run the target image.', '', '</details>', '');
    return lines.join('\n');
  }
  const groups = groupNodes(p.name, p.nodes);
  const groupLines = groups.map((g) => `- ${g.blockedBy ? ':warning: ' : ''}${escapeMarkdown(withArrows(describeGroup(g, { withPool: false, slots: p.rollout === 'slots' })))}: ${escapeMarkdown(foldNames(g.names, 8))}`);
  lines.push(...cutMiddle(groupLines, 4000, (n) => `- … ${n} more groups`), '');
  if (sched.length && sched.length <= 60) {
    lines.push(`| ${p.rollout === 'slots' ? '#' : 'Wave'} | Node | Zone | Reboot | Staged |`, '|--:|---|---|---|---|');
    for (const [i, n] of sched.entries()) lines.push(`| ${md(p.rollout === 'slots' ? i + 1 : n.wave)} | ${code(n.name)} | ${md(n.zone ?? '-')} | ${md(n.reboot)} | ${n.staged ? 'yes' : 'no'} |`);
  } else if (sched.length) {
    const reboots = new Map(p.nodes.map((n) => [n.name, n.reboot]));
    lines.push(`| ${p.rollout === 'slots' ? 'Batches' : 'Waves'} | Nodes | Soft reboot | Hard or not yet known | Names |`, '|---|--:|--:|--:|---|');
    const rows: string[] = [];
    let i = 0;
    while (i < p.waves.length) {
      let j = i;
      while (j + 1 < p.waves.length && p.waves[j + 1].length === p.waves[i].length) j++;
      const names = p.waves.slice(i, j + 1).flat();
      const soft = names.filter((n) => reboots.get(n) === 'soft').length;
      rows.push(`| ${j > i ? `${i + 1}-${j + 1}` : i + 1} | ${md(p.waves[i].length)}${j > i ? ' each' : ''} | ${soft} | ${names.length - soft} | ${md(foldNames([...names].sort(naturalCompare), 3))} |`);
      i = j + 1;
    }
    lines.push(...cutMiddle(rows, 5000, (n) => `| … ${n} more rows | | | | |`));
  }
  const self = selfNodeSentence(p);
  if (self) lines.push('', `Last: ${escapeMarkdown(self)}`);
  const gates = poolGatesLine(p);
  if (gates) lines.push('', `Health gates: ${escapeMarkdown(clipEnd(gates, 2000))}`);
  lines.push('', '</details>', '');
  return lines.join('\n');
}

/** Each check's timing and full source (the head's table has the rest). */
function healthBlock(plan: Plan): string {
  const checks = plan.healthChecks ?? [];
  const items = checks.map((c) => `- ${code(checkLabel(plan, c))}: ${escapeMarkdown(clipEnd(checkTiming(c), 300))}; reads ${escapeMarkdown(clipEnd(checkSource(c), 600))}`);
  return ['<details>', `<summary>Health checks: ${plural(checks.length, 'check')}, how they measure</summary>`, '', ...cutMiddle(items, BLOCK_BUDGET, (n) => `- … ${n} more`), '', '</details>', ''].join('\n');
}

// ---------------------------------------------------------------------------- tail and assembly

function renderTail(plan: Plan): string {
  return `<sub>bootcplan · plan format ${escapeMarkdown(plan.formatVersion)} · ${plan.summary.errors ? 'fix the errors above and push again' : `apply this plan with \`bootcplan apply\` after merge`}</sub>\n`;
}

function assemble(head: string, blocks: (() => string)[], tail: string, limit: number): string {
  // Keep whole blocks from both ends, alternately; what does not fit is the middle.
  let budget = limit - head.length - tail.length - 2;
  const front: string[] = [];
  const back: string[] = [];
  const taken: ('f' | 'b')[] = [];
  let i = 0;
  let j = blocks.length - 1;
  let frontOpen = true;
  let backOpen = true;
  while (i <= j && (frontOpen || backOpen)) {
    const takeFront = frontOpen && (!backOpen || front.length <= back.length);
    const b = takeFront ? blocks[i]() : blocks[j]();
    if (b.length + 1 <= budget) {
      budget -= b.length + 1;
      if (takeFront) {
        front.push(b);
        i++;
      } else {
        back.unshift(b);
        j--;
      }
      taken.push(takeFront ? 'f' : 'b');
    } else if (takeFront) frontOpen = false;
    else backOpen = false;
  }
  if (i > j) return withinLimit([head, ...front, ...back, tail].join('\n'), limit);
  // Make room for the note by giving back the blocks taken last.
  const noteFor = (n: number) =>
    `> :scissors: **${plural(n, 'detail section')} left out here** to keep this comment under ${formatCount(limit)} characters. ` +
    'Run `bootcplan plan` or `bootcplan plan -o html` for everything.\n';
  while (noteFor(blocks.length).length + 1 > budget && taken.length) {
    const side = taken.pop();
    const b = side === 'f' ? front.pop()! : back.shift()!;
    budget += b.length + 1;
    if (side === 'f') i--;
    else j++;
  }
  return withinLimit([head, ...front, noteFor(j - i + 1), ...back, tail].join('\n'), limit);
}

/**
 * The last guard, so the promise holds for any plan: the bounds on the head keep ordinary plans
 * far below the limit, but a crafted plan file can make one name or message as long as it
 * likes. The cut falls at a line end (no code span spans lines here), and what it leaves open
 * is closed: a code fence, whose data would otherwise be read as markdown (and could write
 * markup or mentions), and `<details>` blocks. The marker line stays first.
 */
function withinLimit(out: string, limit: number): string {
  if (out.length <= limit) return out;
  const note = '\n> :scissors: cut at the comment size limit\n';
  const lines = out.slice(0, Math.max(0, out.lastIndexOf('\n', limit - 400))).split('\n');
  let fence: string | null = null;
  let details = 0;
  for (const line of lines) {
    const f = /^`{3,}/.exec(line)?.[0];
    if (fence === null && f) fence = f;
    else if (fence !== null && f && f.length >= fence.length && line.trim() === f) fence = null;
    else if (fence === null && line === '<details>') details++;
    else if (fence === null && line === '</details>') details = Math.max(0, details - 1);
  }
  const closers = [...(fence !== null ? [fence] : []), ...Array<string>(details).fill('</details>')];
  return [...lines, ...closers].join('\n') + '\n' + note;
}

/** Lines, with the middle replaced by a note when they exceed `budget` characters. */
function cutMiddle(lines: string[], budget: number, note: (n: number) => string = (n) => `  # (${n} lines cut to keep the comment short)`): string[] {
  const total = lines.reduce((s, l) => s + l.length + 1, 0);
  if (total <= budget) return lines;
  const half = (budget - 80) / 2;
  const head: string[] = [];
  const tail: string[] = [];
  let used = 0;
  for (const l of lines) {
    if (used + l.length + 1 > half) break;
    head.push(l);
    used += l.length + 1;
  }
  used = 0;
  for (let k = lines.length - 1; k >= head.length; k--) {
    if (used + lines[k].length + 1 > half) break;
    tail.unshift(lines[k]);
    used += lines[k].length + 1;
  }
  return [...head, note(lines.length - head.length - tail.length), ...tail];
}

function fenced(lang: string, lines: string[]): string[] {
  const longest = Math.max(2, ...lines.map((l) => Math.max(0, ...(l.match(/`+/g) ?? []).map((m) => m.length))));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [fence + lang, ...lines, fence];
}

// ---------------------------------------------------------------------------- escaping

/**
 * Data in the comment's inline HTML (`<summary>`, `<code>`): escaped as HTML (element content
 * and double-quoted attributes only); the characters markdown gives a meaning to written as
 * character references, which read the same whether GitHub takes the line as an HTML block or
 * as inline HTML in a paragraph (CommonMark: a character reference never starts a link,
 * emphasis or code span); mentions and issue links broken (GitHub links neither inside a code
 * element, but HTML decodes the entity there too, so it costs nothing).
 */
export function inlineHtml(s: unknown): string {
  return neutraliseMentions(escapeHtml(s, 'double').replace(/[\\`*_[\]|!]/g, (ch) => `&#${ch.charCodeAt(0)};`));
}

/** An inline code span that survives backticks and table pipes in its content. */
export function code(s: string): string {
  const t = String(s).replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
  const longest = Math.max(0, ...(t.match(/`+/g) ?? []).map((m) => m.length));
  const ticks = '`'.repeat(longest + 1);
  const pad = t.startsWith('`') || t.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${t}${pad}${ticks}`;
}

function mdCodeSafe(s: string): string {
  return String(s).replace(/`/g, "'");
}

/** A rollback plan's headline and facts, and each pool's way back as a table (render/rollback.ts). */
function rollbackMarkdown(plan: Plan): string[] {
  const head = rollbackHeadline(plan);
  const rows = poolRollbackRows(plan);
  if (!head && !rows.length) return [];
  const out: string[] = [];
  if (head) {
    out.push(`#### :rewind: ${escapeMarkdown(head).replace(/^Rollback of plan (\S+)/, (_m, id) => `Rollback of plan ${code(id)}`)}`, '');
    for (const f of rollbackFacts(plan)) out.push(`- ${escapeMarkdown(f)}`);
    out.push('');
  } else out.push(`**${escapeMarkdown(FORWARD_WAY_BACK)}**`, '');
  out.push('| Pool | Back to | Via | Download again |', '|---|---|---|---|');
  for (const r of rows.slice(0, HEAD_BUDGET.pools)) {
    const to = r.to === null ? `:warning: none: ${escapeMarkdown(clipEnd(r.refusal ?? '', 600))}` : code(r.to);
    out.push(`| ${escapeMarkdown(r.pool)} | ${to} | ${escapeMarkdown(r.via)} | ${r.download} |`);
  }
  out.push('');
  return out;
}
