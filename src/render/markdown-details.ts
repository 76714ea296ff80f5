/**
 * The detail blocks of the pull-request comment (src/render/markdown.ts), each in `<details>`:
 * the spec's changes, one diff per changed object, the boot images, one block per pool, the
 * health checks. Built lazily, so a block that cannot fit is never rendered; a block longer
 * than BLOCK_BUDGET is cut in its middle. Pure: reads only the plan, already through `forDisplay`.
 */
import type { Plan, PlanChange, PlanPool } from '../plan/types.ts';
import { changeDiff, type DiffLine } from './diff.ts';
import { specChangesTitle } from './spec-diff.ts';
import { formatDuration, plural, foldNames, groupNodes, describeGroup, naturalCompare } from './format.ts';
import { checkLabel, checkSource, checkTiming, poolGatesLine } from './health.ts';
import { VERB, SYMBOL, poolKind, withArrows, escapeMarkdown, clipEnd, selfNodeSentence, wordOf } from './vocabulary.ts';
import { code, inlineHtml } from './markdown-inline.ts';
import { ICON } from './icons.ts';

/** Largest single details block; longer diffs are cut in their middle. */
const BLOCK_BUDGET = 12_000;

/** Detail blocks, built lazily: blocks that cannot fit are never rendered (no diff computed). */
/** `full`: whole managed fields in the diffs (MarkdownOptions.full of markdown.ts, the one option the blocks read). */
export function renderDetails(plan: Plan, opts: { full?: boolean }): (() => string)[] {
  const blocks: (() => string)[] = [];
  const scTitle = specChangesTitle(plan);
  const unified = plan.specChanges?.unified;
  if (scTitle && unified) {
    blocks.push(
      () =>
        `<details><summary>${escapeMarkdown(scTitle)}</summary>\n\n${fenced('diff', cutMiddle(String(unified).trimEnd().split('\n'), 400)).join('\n')}\n\n</details>\n`,
    );
  } else if (scTitle) blocks.push(() => `<sub>${escapeMarkdown(scTitle)}</sub>\n`);
  const changed = plan.changes.filter((c) => c.action !== 'noop');
  for (const ch of changed) blocks.push(() => changeBlock(ch, opts));
  const unchanged = plan.changes.filter((c) => c.action === 'noop');
  if (unchanged.length)
    blocks.push(
      () =>
        `<sub>${plural(unchanged.length, 'managed object')} already as desired: ${escapeMarkdown(clipEnd(unchanged.map((c) => c.address).join(', '), 2000))}</sub>\n`,
    );
  if (plan.bootImages.machineSets.length || plan.bootImages.controlPlaneMachineSet) blocks.push(() => bootImagesBlock(plan) ?? '');
  for (const p of plan.pools) blocks.push(() => poolBlock(p));
  if (plan.healthChecks?.length) blocks.push(() => healthBlock(plan));
  return blocks;
}

function changeBlock(ch: PlanChange, opts: { full?: boolean }): string {
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
  const lines = [
    '<details>',
    `<summary>Boot images: ${plural(changed, 'MachineSet')} to update${bi.controlPlaneMachineSet ? ', ControlPlaneMachineSet' : ''}</summary>`,
    '',
  ];
  if (bi.machineSets.length) {
    lines.push('| MachineSet | Boot image |', '|---|---|');
    const rows = bi.machineSets.map(
      (m) =>
        `| ${code(m.name)} | ${m.skipped ? `skipped: ${escapeMarkdown(clipEnd(m.skipped, 300))}` : m.from === m.to ? `${code(m.to ?? '(none)')} (current)` : `${code(m.from ?? '(none)')} → ${code(m.to ?? '(none)')}`} |`,
    );
    lines.push(...cutMiddle(rows, BLOCK_BUDGET - 2000, (n) => `| … ${n} more | |`));
    lines.push('');
  }
  const cp = bi.controlPlaneMachineSet;
  if (cp) {
    const change = cp.from === cp.to || !cp.to ? 'no boot image change' : `${code(cp.from ?? '(none)')} → ${code(cp.to)}`;
    lines.push(
      `ControlPlaneMachineSet \`cluster\`: ${change}; ${cp.replacement ? '**replaces control-plane machines**' : 'no machine replaced'}: ${escapeMarkdown(clipEnd(cp.why, 1000))}`,
      '',
    );
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
      (p.rollout === 'slots'
        ? `in slots: each node admitted in the order below as soon as one is back; re-planned every ${md(plural(p.waveSize, 'admission'))}.`
        : `soak ${md(formatDuration(p.soakSeconds))} ${p.gates?.afterWave.length ? 'after each wave (then its health gate)' : 'between waves'}.`),
    '',
    `Target ${code(p.targetImage)}`,
    '',
  ];
  if (!p.nodes.length) {
    lines.push('All nodes run the target image.', '', '</details>', '');
    return lines.join('\n');
  }
  const groups = groupNodes(p.name, p.nodes);
  const groupLines = groups.map(
    (g) =>
      `- ${g.blockedBy ? `${ICON.warning} ` : ''}${escapeMarkdown(withArrows(describeGroup(g, { withPool: false, slots: p.rollout === 'slots' })))}: ${escapeMarkdown(foldNames(g.names, 8))}`,
  );
  lines.push(...cutMiddle(groupLines, 4000, (n) => `- … ${n} more groups`), '');
  if (sched.length && sched.length <= 60) {
    lines.push(`| ${p.rollout === 'slots' ? '#' : 'Wave'} | Node | Zone | Reboot | Staged |`, '|--:|---|---|---|---|');
    for (const [i, n] of sched.entries())
      lines.push(`| ${md(p.rollout === 'slots' ? i + 1 : n.wave)} | ${code(n.name)} | ${md(n.zone ?? '-')} | ${md(n.reboot)} | ${n.staged ? 'yes' : 'no'} |`);
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
      rows.push(
        `| ${j > i ? `${i + 1}-${j + 1}` : i + 1} | ${md(p.waves[i].length)}${j > i ? ' each' : ''} | ${soft} | ${names.length - soft} | ${md(foldNames([...names].sort(naturalCompare), 3))} |`,
      );
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
  const items = checks.map(
    (c) => `- ${code(checkLabel(plan, c))}: ${escapeMarkdown(clipEnd(checkTiming(c), 300))}; reads ${escapeMarkdown(clipEnd(checkSource(c), 600))}`,
  );
  return [
    '<details>',
    `<summary>Health checks: ${plural(checks.length, 'check')}, how they measure</summary>`,
    '',
    ...cutMiddle(items, BLOCK_BUDGET, (n) => `- … ${n} more`),
    '',
    '</details>',
    '',
  ].join('\n');
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
