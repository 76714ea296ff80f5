/**
 * The HTML dry-run report (docs/design.md §8): one self-contained file. Inline CSS and SVG only:
 * no script, no network, no external fonts (a Content-Security-Policy meta tag forbids
 * any fetch). Summary, risks, per-object diffs, boot images, pools, and a wave timeline
 * chart (./chart.ts: pools x time, one bar per node from drain to back in service; rows
 * aggregate per wave or per run of waves on large plans); the stylesheet is ./style.ts.
 * Pure: reads only the plan.
 *
 * With a rehearsal (`bootcplan rehearse -o html`): the same report, plus a section that
 * compares the rehearsal with the plan (duration against the estimate, peak unavailable
 * against maxUnavailable per pool, failed nodes), and the timeline drawn from the
 * rehearsal's events (src/render/rehearsal-timeline.ts) instead of the estimate. Pure:
 * reads only the plan and the rehearsal.
 */
import { drainItems, drainItemWords, hasDrainForecast } from '../drain.ts';
import type { Plan, PlanChange, PlanPool } from '../../plan/types.ts';
import type { Diagnostic } from '../../base/diagnostics.ts';
import { changeDiff } from '../diff.ts';
import { scheduleLine } from '../window-wording.ts';
import { specChangesTitle } from '../spec-diff.ts';
import { forDisplay } from '../secrets.ts';
import { formatDuration, formatCount, foldNames, groupNodes, describeGroup, naturalCompare, shortDigest, rebootMix, riskTally } from '../format.ts';
import { planLine } from '../text.ts';
import { outOfServiceFigure } from '../../domain/budget.ts';
import { waitText, windowsSummary } from '../rehearsal-windows.ts';
import { healthSection, silencesSection, poolGatesHtml, GATE_CSS } from './health.ts';
import { buildTimeline } from '../timeline.ts';
import { buildRehearsalTimeline } from '../rehearsal-timeline.ts';
import type { Rehearsal } from '../../sim/rehearse.ts';
import type { RehearsalReport } from '../rehearsal.ts';
import { VERB, SYMBOL, poolKind, withArrows, escapeHtml, selfNodeSentence, wordOf } from '../vocabulary.ts';
import { durationHtml, countHtml, pluralHtml, classHtml } from './text.ts';
import { timelineChart } from './chart.ts';
import { REPORT_CSS } from './style.ts';
import { rollbackSection, ROLLBACK_CSS } from './rollback.ts';

export interface HtmlOptions {
  /** Whole managed fields in the diffs instead of the changed ones with context. */
  full?: boolean;
  /** Most rows in the timeline chart before rows aggregate (default 60). */
  maxChartRows?: number;
  /** A rehearsal of this plan (`rehearse -o html`): its figures, and a timeline from its events. */
  rehearsal?: RehearsalReport;
}

/**
 * No fetch of any kind (`default-src 'none'`: no script, image, font or frame from anywhere),
 * inline styles only; and, since the CSP's fetch directives do not cover navigation, no base
 * URL (a `<base>` would retarget every link) and no form target (a form could post what a
 * reviewer types): escaping keeps data from writing either, this is the second line.
 */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/** Pools with at most this many scheduled nodes get a per-node table. */
const NODE_TABLE_MAX = 200;

export function renderHtml(input: Plan, opts: HtmlOptions = {}): string {
  // Data, as a human output shows it (secrets and credentials masked, invisible characters
  // visible); then every interpolation below is escaped, numbers included: a crafted plan file
  // may hold markup in any field, and a string where a number belongs (docs/safety.md "What is masked in outputs").
  const plan = forDisplay(input);
  const r = opts.rehearsal ? forDisplay(opts.rehearsal) : null;
  const timeline = r ? buildRehearsalTimeline(plan, r, { maxRows: opts.maxChartRows ?? 60 }) : buildTimeline(plan, { maxRows: opts.maxChartRows ?? 60 });
  const title = `bootcplan ${r ? 'rehearsal of plan' : 'plan'} ${plan.spec.name} (${plan.id})`;
  const body = [
    header(plan, r),
    rollbackSection(plan),
    r ? rehearsalSection(plan, r) : '',
    summary(plan),
    gitopsSection(plan),
    diagnostics(plan),
    risks(plan),
    drainSection(plan),
    timelineChart(plan, timeline, r),
    changes(plan, opts),
    bootImages(plan),
    pools(plan),
    healthSection(plan),
    silencesSection(plan, r),
    footer(plan),
  ]
    .filter(Boolean)
    .join('\n');
  return htmlDocument(title, body, `${plan.healthChecks?.length ? GATE_CSS : ''}${r?.rollback ? ROLLBACK_CSS : ''}`);
}

/** The report's page around `body`: the CSP, the stylesheet (and `css` after it), nothing fetched. Pure. */
export function htmlDocument(title: string, body: string, css = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="bootcplan">
<title>${escapeHtml(title)}</title>
<style>${REPORT_CSS}${css}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

// ---------------------------------------------------------------------------- sections

function footer(plan: Plan): string {
  const d = plan.durations;
  return `<footer>bootcplan · plan ${escapeHtml(plan.id)} · format ${escapeHtml(plan.formatVersion)} · durations: stage ${durationHtml(d.stage)}, drain ${durationHtml(d.drain)}, reboot ${durationHtml(d.reboot)}, soft reboot ${durationHtml(d.softReboot)}, ready ${durationHtml(d.ready)}</footer>`;
}

function gitopsSection(plan: Plan): string {
  const sched = scheduleLine(plan);
  const scTitle = specChangesTitle(plan);
  if (!sched && !scTitle) return '';
  const parts = ['<section id="gitops">'];
  if (sched) parts.push(`<p class="schedule">${escapeHtml(sched)}</p>`);
  if (scTitle) {
    parts.push(`<h2>Spec changes</h2><p>${escapeHtml(scTitle)}</p>`);
    if (plan.specChanges?.unified) {
      const lines = String(plan.specChanges.unified)
        .trimEnd()
        .split('\n')
        .map((l) => {
          const cls = l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : 'ctx';
          return `<span class="${cls}">${escapeHtml(l)}</span>`;
        });
      parts.push(`<pre class="diff">${lines.join('\n')}</pre>`);
    }
  }
  parts.push('</section>');
  return parts.join('\n');
}

function header(plan: Plan, r: Rehearsal | null): string {
  const sp = plan.spec;
  const cl = plan.cluster;
  const s = plan.summary;
  const status = s.errors ? 'bad' : s.warnings ? 'warn' : 'ok';
  return `<header>
<h1>bootcplan ${r ? 'rehearsal of plan' : 'plan'} <span class="mono">${escapeHtml(sp.name)}</span></h1>
<p class="meta">spec <span class="mono">${escapeHtml(sp.path)}</span>${sp.ref ? ` at <span class="mono">${escapeHtml(sp.ref)}</span>` : ''}${sp.commit ? `, commit <span class="mono">${escapeHtml(String(sp.commit).slice(0, 12))}</span>` : ''}${sp.dirty ? ', uncommitted changes' : ''}
 · cluster <span class="mono">${escapeHtml(cl.source)}</span>${cl.version ? `, OpenShift ${escapeHtml(cl.version)}` : ''}${cl.platform ? `, ${escapeHtml(cl.platform)}` : ''}${
   cl.identity
     ? `
 · runs only on <span class="mono">${escapeHtml(cl.identity.kind)} ${escapeHtml(cl.identity.id)}</span>${cl.server ? ` (<span class="mono">${escapeHtml(cl.server)}</span>)` : ''}`
     : ''
 }
 · plan <span class="mono">${escapeHtml(plan.id)}</span></p>
<p class="planline ${status}" id="planline">${escapeHtml(planLine(plan))}</p>
</header>`;
}

/** The rehearsal's outcome in one sentence (plain text: the caller escapes it). */
function rehearsalOutcome(r: RehearsalReport): string {
  const diff = r.durationSeconds - r.estimatedSeconds;
  const pct = r.estimatedSeconds > 0 ? Math.round((diff / r.estimatedSeconds) * 1000) / 10 : 0;
  const vs =
    r.estimatedSeconds > 0
      ? `${diff === 0 ? 'the same as' : `${formatDuration(Math.abs(diff))} (${Math.abs(pct)}%) ${diff < 0 ? 'shorter than' : 'longer than'}`} the plan's estimate of ${formatDuration(r.estimatedSeconds)} (${formatCount(r.estimatedSeconds)} s)`
      : 'the plan estimated no node work';
  return r.exitCode === 0
    ? `Rehearsal done in ${formatDuration(r.durationSeconds)} (${formatCount(r.durationSeconds)} s): ${vs}.`
    : `Rehearsal ${r.halted ? 'halted' : 'stopped'} after ${formatDuration(r.durationSeconds)} (exit ${r.exitCode}): ${r.stopped ?? ''}. The plan estimated ${formatDuration(r.estimatedSeconds)} for the whole rollout.`;
}

function rehearsalSection(plan: Plan, r: RehearsalReport): string {
  const d = r.durations;
  const failed = r.pools.flatMap((p) => p.failedNodes.map((n) => `${p.name}/${n}`));
  const rows = r.pools.map((p) => {
    const pp = plan.pools.find((x) => x.name === p.name);
    const over = p.peakUnavailable > p.maxUnavailable;
    const done = p.waves.filter((w) => w.end !== null).length;
    const took = p.waves.length ? Math.max(...p.waves.map((w) => w.end ?? r.durationSeconds)) - Math.min(...p.waves.map((w) => w.start)) : 0;
    return (
      `<tr><td class="mono">${escapeHtml(p.name)}</td><td>${poolKind(p.backend)}</td>` +
      `<td class="n">${countHtml(done)} / ${countHtml(pp?.waves.length ?? p.waves.length)}</td>` +
      `<td class="n${over ? ' fail' : ''}" data-peak="${escapeHtml(p.peakUnavailable)}">${countHtml(p.peakUnavailable)} / ${countHtml(p.maxUnavailable)}${over ? ' <b>over budget</b>' : ''}</td>` +
      `<td class="n">${p.waves.length ? durationHtml(took) : '-'}</td><td class="n">${pp ? durationHtml(pp.estimatedSeconds) : '-'}</td>` +
      `<td class="${p.failedNodes.length ? 'fail' : ''}">${p.failedNodes.length ? `<span class="mono">${escapeHtml(foldNames([...p.failedNodes].sort(naturalCompare), 8))}</span>` : '<span class="dim">none</span>'}</td></tr>`
    );
  });
  const faults = r.faults ? `; faults: reboot fail rate ${escapeHtml(r.faults.rebootFailRate ?? 0)}, seed ${escapeHtml(r.faults.seed ?? 1)}` : '';
  return `<section id="rehearsal">
<h2>Rehearsal on a simulated cluster</h2>
<p class="planline ${r.exitCode === 0 ? 'ok' : 'bad'}" id="rehearsal-line">${escapeHtml(rehearsalOutcome(r))}</p>
<p class="dim">Phase durations: stage ${durationHtml(d.stage)}, drain ${durationHtml(d.drain)}, reboot ${durationHtml(d.reboot)}, soft reboot ${durationHtml(d.softReboot)}, ready ${durationHtml(d.ready)}${faults}. Reboots: ${countHtml(r.reboots.hard)} hard, ${countHtml(r.reboots.soft)} soft${r.reboots.failed ? `, <b class="fail">${countHtml(r.reboots.failed)} failed</b>` : ''}.</p>
${r.windows ? `<p id="rehearsal-windows">${escapeHtml(windowsSummary(r.windows))}</p>${r.windows.waits.length ? `<ul id="rehearsal-waits">${r.windows.waits.map((w) => `<li>${escapeHtml(`${formatDuration(w.start)} to ${formatDuration(w.end)}: ${waitText(w)}`)}</li>`).join('')}</ul>` : ''}` : ''}
${failed.length ? `<p class="fail" id="rehearsal-failed">Failed ${failed.length === 1 ? 'node' : 'nodes'}: <span class="mono">${escapeHtml(foldNames(failed, 12))}</span></p>` : ''}
<div class="scroll"><table class="pools" id="rehearsal-pools">
<thead><tr><th>Pool</th><th>Backend</th><th class="n">Waves done</th><th class="n">Peak unavailable / maxUnavailable</th><th class="n">Took</th><th class="n">Est.</th><th>Failed nodes</th></tr></thead>
<tbody>${rows.join('\n')}</tbody>
</table></div>
</section>`;
}

function summary(plan: Plan): string {
  const s = plan.summary;
  const { soft, hard, unknown } = rebootMix(plan.pools);
  const { risky, replacement } = riskTally(plan);
  // Labels and classes are the report's own words; values and sub-lines are escaped where they are built.
  const card = (label: string, value: string, sub: string, cls = '') =>
    `<div class="card ${cls}"><div class="label">${label}</div><div class="value">${value}</div><div class="sub">${sub}</div></div>`;
  const cards = [
    card(
      'Objects',
      escapeHtml(s.create + s.update + s.delete),
      `${escapeHtml(s.create)} create · ${escapeHtml(s.update)} change · ${escapeHtml(s.delete)} delete`,
    ),
    card(
      'Nodes',
      countHtml(s.nodes),
      `in ${pluralHtml(plan.pools.filter((p) => p.waves.length).length, 'pool')}${s.blocked ? ` · <b>${countHtml(s.blocked)} not scheduled</b>` : ''}`,
      s.blocked ? 'warn' : '',
    ),
    card('Waves', countHtml(s.waves), outOfServiceSub(plan)),
    card(
      'Reboots soft / hard',
      `${countHtml(soft)} / ${countHtml(hard + unknown)}`,
      unknown ? `hard includes ${countHtml(unknown)} not yet known (decided once staged)` : 'all known',
    ),
    card('Estimated duration', durationHtml(s.estimatedSeconds), 'pools one after another'),
    card(
      'Risks',
      replacement ? `${escapeHtml(replacement)} <small>replacement</small>` : escapeHtml(risky.length),
      replacement ? 'control-plane machines replaced' : pluralHtml(risky.length, 'disruptive change'),
      replacement ? 'bad' : risky.length ? 'warn' : '',
    ),
    card('Errors', escapeHtml(s.errors), s.errors ? 'this plan cannot be applied' : 'none', s.errors ? 'bad' : ''),
    card('Warnings', escapeHtml(s.warnings), s.warnings ? 'see below' : 'none', s.warnings ? 'warn' : ''),
  ];
  return `<section id="summary">
<h2>Summary</h2>
<div class="cards">${cards.join('')}</div>
${
  plan.pools.length
    ? `<div class="scroll"><table class="pools">
<thead><tr><th>Pool</th><th>Backend</th><th class="n">Nodes to update</th><th class="n">Waves</th><th class="n">Per wave</th><th class="n">maxUnavailable</th><th class="n">Soft</th><th class="n">Hard</th><th class="n">Not yet known</th><th class="n">Not scheduled</th><th class="n">Est.</th></tr></thead>
<tbody>${plan.pools.map(summaryRow).join('\n')}</tbody>
</table></div>`
    : ''
}
</section>`;
}

function summaryRow(p: PlanPool): string {
  const sc = p.nodes.filter((n) => n.wave !== null);
  const so = sc.filter((n) => n.reboot === 'soft').length;
  const ha = sc.filter((n) => n.reboot === 'hard').length;
  const bl = p.nodes.filter((n) => n.blockedBy).length;
  return (
    `<tr><td class="mono">${escapeHtml(p.name)}${p.controlPlane ? ' <span class="tag">control plane</span>' : ''}${p.paused ? ' <span class="tag">paused</span>' : ''}</td><td>${poolKind(p.backend)}</td>` +
    `<td class="n">${countHtml(sc.length)} / ${countHtml(p.nodeCount)}</td><td class="n">${p.rollout === 'slots' ? 'slots' : countHtml(p.waves.length)}</td><td class="n">${countHtml(p.waveSize)}</td>` +
    `<td class="n">${escapeHtml(p.maxUnavailable.value)} → ${countHtml(p.maxUnavailable.resolved)}</td>` +
    `<td class="n">${countHtml(so)}</td><td class="n">${countHtml(ha)}</td><td class="n">${countHtml(sc.length - so - ha)}</td><td class="n${bl ? ' warn' : ''}">${countHtml(bl)}</td><td class="n">${durationHtml(p.estimatedSeconds)}</td></tr>`
  );
}

function diagnostics(plan: Plan): string {
  if (!plan.diagnostics.length) return '';
  const item = (d: Diagnostic) => {
    const where = d.file ? `${d.file}${d.line ? `:${d.line}${d.column ? `:${d.column}` : ''}` : ''}` : '';
    const severity = classHtml(d.severity, ['error', 'warning'] as const);
    return (
      `<li class="${severity}"><span class="sev">${severity}</span> <span class="mono">${escapeHtml(d.code)}</span>${where ? ` <span class="mono dim">${escapeHtml(where)}</span>` : ''}${d.path ? ` <span class="mono dim">${escapeHtml(d.path)}</span>` : ''}<div>${escapeHtml(d.message)}</div>` +
      `${d.expected ? `<div class="dim">expected: ${escapeHtml(d.expected)}</div>` : ''}${d.hint ? `<div class="hint">hint: ${escapeHtml(d.hint)}</div>` : ''}</li>`
    );
  };
  const errs = plan.diagnostics.filter((d) => d.severity === 'error');
  const warns = plan.diagnostics.filter((d) => d.severity === 'warning');
  return `<section id="diagnostics">
<h2>${errs.length ? `${pluralHtml(errs.length, 'error')}` : ''}${errs.length && warns.length ? ' and ' : ''}${warns.length ? pluralHtml(warns.length, 'warning') : ''}</h2>
<ul class="diags">${[...errs, ...warns].map(item).join('\n')}</ul>
</section>`;
}

function risks(plan: Plan): string {
  const items: string[] = [];
  for (const c of plan.changes.filter((x) => x.action !== 'noop' && x.risk !== 'none')) {
    items.push(
      `<li class="${c.risk === 'replacement' ? 'error' : 'warning'}"><span class="sev">${escapeHtml(c.risk)}</span> <a href="#change-${escapeHtml(c.order)}" class="mono">${escapeHtml(c.address)}</a> ${escapeHtml(wordOf(VERB, 'html', c.action))} (${escapeHtml(c.reason)})${c.description ? `<div>${escapeHtml(c.description)}</div>` : ''}</li>`,
    );
  }
  const cp = plan.bootImages.controlPlaneMachineSet;
  if (cp?.replacement)
    items.push(
      `<li class="error"><span class="sev">replacement</span> ControlPlaneMachineSet <span class="mono">cluster</span> replaces control-plane machines<div>${escapeHtml(cp.why)}</div></li>`,
    );
  for (const p of plan.pools) {
    const blocked = p.nodes.filter((n) => n.blockedBy);
    if (blocked.length) {
      items.push(
        `<li class="warning"><span class="sev">not scheduled</span> ${pluralHtml(blocked.length, 'node')} of pool <span class="mono">${escapeHtml(p.name)}</span> (${escapeHtml([...new Set(blocked.map((n) => n.blockedBy))].join(', '))}): <span class="mono">${escapeHtml(foldNames(blocked.map((n) => n.name).sort(naturalCompare), 8))}</span></li>`,
      );
    }
  }
  if (!items.length) return `<section id="risks"><h2>Risks</h2><p class="dim">No disruptive change, no replacement, every node scheduled.</p></section>`;
  return `<section id="risks"><h2>Risks</h2><ul class="diags">${items.join('\n')}</ul></section>`;
}

/** The drain forecast's findings, worst first (docs/apply.md "Drain forecast"); nothing without a forecast. */
function drainSection(plan: Plan): string {
  if (!hasDrainForecast(plan)) return '';
  const items = drainItems(plan);
  if (!items.length)
    return `<section id="drain"><h2>Drain forecast</h2><p class="dim">Every drain is forecast ok: no PodDisruptionBudget waits, no workload goes down.</p></section>`;
  const li = items.map(
    (i) =>
      `<li class="${i.finding.class === 'serialized' ? 'warning' : 'error'}"><span class="sev">${escapeHtml(i.finding.class)}${i.outcome ? `, ${escapeHtml(i.outcome)}` : ''}</span> ${escapeHtml(drainItemWords(i, 8))}<div>${escapeHtml(i.finding.hint)}</div></li>`,
  );
  return `<section id="drain"><h2>Drain forecast</h2><ul class="diags">${li.join('\n')}</ul></section>`;
}

function changes(plan: Plan, opts: HtmlOptions): string {
  const changed = plan.changes.filter((c) => c.action !== 'noop');
  const unchanged = plan.changes.filter((c) => c.action === 'noop');
  const open = changed.length <= 12;
  const blocks = changed.map((c) => changeBlock(c, opts, open));
  return `<section id="changes">
<h2>Object changes <span class="count">${escapeHtml(changed.length)}</span></h2>
${changed.length ? '' : '<p class="dim">No object changes.</p>'}
${blocks.join('\n')}
${unchanged.length ? `<p class="dim">${pluralHtml(unchanged.length, 'managed object')} already as desired: <span class="mono">${escapeHtml(unchanged.map((c) => c.address).join(', '))}</span></p>` : ''}
</section>`;
}

function changeBlock(ch: PlanChange, opts: HtmlOptions, open: boolean): string {
  const d = changeDiff(ch, { full: opts.full });
  const lines = d.lines.map((l) => {
    const cls = l.kind === '+' ? 'add' : l.kind === '-' ? 'del' : l.kind === '#' ? 'note' : 'ctx';
    return `<span class="${cls}">${l.kind === '#' ? ' ' : escapeHtml(l.kind)} ${escapeHtml(l.text)}</span>`;
  });
  const action = classHtml(ch.action, ['create', 'update', 'delete', 'noop'] as const);
  const risk = ch.risk !== 'none' ? ` <span class="tag ${ch.risk === 'replacement' ? 'bad' : 'warn'}">${escapeHtml(ch.risk)}</span>` : '';
  const stat = d.gaveUp ? 'JSON patch' : `<span class="add">+${escapeHtml(d.added)}</span> <span class="del">−${escapeHtml(d.removed)}</span>`;
  return `<details class="change" id="change-${escapeHtml(ch.order)}"${open ? ' open' : ''}>
<summary><span class="sym ${action}">${escapeHtml(wordOf(SYMBOL, 'html', ch.action))}</span> <span class="mono">${escapeHtml(ch.address)}</span> <span class="dim">${escapeHtml(wordOf(VERB, 'html', ch.action))} · ${escapeHtml(ch.reason)} · step ${escapeHtml(ch.order)}</span>${risk} <span class="stat">${stat}</span></summary>
${ch.description ? `<p>${escapeHtml(ch.description)}</p>` : ''}${ch.waitAfter ? `<p class="hint">then wait: ${escapeHtml(ch.waitAfter.description)}</p>` : ''}
<pre class="diff">${lines.join('\n')}</pre>
</details>`;
}

function bootImages(plan: Plan): string {
  const bi = plan.bootImages;
  if (!bi.machineSets.length && !bi.controlPlaneMachineSet) return '';
  const rows = bi.machineSets.map(
    (m) =>
      `<tr><td class="mono">${escapeHtml(m.name)}</td><td>${m.skipped ? `<span class="dim">skipped: ${escapeHtml(m.skipped)}</span>` : m.from === m.to ? `<span class="mono">${escapeHtml(m.to ?? '(none)')}</span> <span class="dim">(current)</span>` : `<span class="mono">${escapeHtml(m.from ?? '(none)')}</span> → <span class="mono">${escapeHtml(m.to ?? '(none)')}</span>`}</td></tr>`,
  );
  const cp = bi.controlPlaneMachineSet;
  return `<section id="bootimages">
<h2>Boot images</h2>
${rows.length ? `<div class="scroll"><table><thead><tr><th>MachineSet</th><th>Boot image</th></tr></thead><tbody>${rows.join('\n')}</tbody></table></div>` : ''}
${cp ? `<p>ControlPlaneMachineSet <span class="mono">cluster</span>: ${cp.from === cp.to || !cp.to ? 'no boot image change' : `<span class="mono">${escapeHtml(cp.from ?? '(none)')}</span> → <span class="mono">${escapeHtml(cp.to)}</span>`}; ${cp.replacement ? '<b class="bad">replaces control-plane machines</b>' : 'no machine replaced'}: ${escapeHtml(cp.why)}</p>` : ''}
</section>`;
}

function pools(plan: Plan): string {
  if (!plan.pools.length) return '';
  return `<section id="pools"><h2>Pools</h2>\n${plan.pools.map(poolBlock).join('\n')}\n</section>`;
}

function nodeTable(p: PlanPool, sched: PlanPool['nodes']): string {
  if (sched.length && sched.length <= NODE_TABLE_MAX) {
    return `<div class="scroll"><table class="nodes"><thead><tr><th class="n">${p.rollout === 'slots' ? '#' : 'Wave'}</th><th>Node</th><th>Zone</th><th>Reboot</th><th>Staged</th><th>From → to</th></tr></thead><tbody>${sched
      .map(
        (n, i) =>
          `<tr><td class="n">${escapeHtml(p.rollout === 'slots' ? i + 1 : n.wave)}</td><td class="mono">${escapeHtml(n.name)}</td><td>${escapeHtml(n.zone ?? '-')}</td><td>${escapeHtml(n.reboot)}</td><td>${n.staged ? 'yes' : 'no'}</td><td class="mono">${escapeHtml(shortDigest(n.from))} → ${escapeHtml(shortDigest(n.to))}</td></tr>`,
      )
      .join('\n')}</tbody></table></div>`;
  }
  if (!sched.length) return '';
  if (p.rollout === 'slots')
    return `<details><summary>All ${countHtml(sched.length)} nodes in admission order</summary><pre class="waves">${escapeHtml(p.waves.flat().join(', '))}</pre></details>`;
  return `<details><summary>All ${countHtml(sched.length)} nodes by wave</summary><pre class="waves">${p.waves.map((w, i) => `wave ${i + 1} (${escapeHtml(w.length)}): ${escapeHtml(w.join(', '))}`).join('\n')}</pre></details>`;
}

/** A slots pool: each node admitted in order as soon as one is back (spec rollout: slots). */
function slotsText(p: PlanPool): string {
  return `in slots: at most ${pluralHtml(p.waveSize, 'node')} out at once, each admitted in the order below as soon as one is back (re-planned every ${pluralHtml(p.waveSize, 'admission')}); est. ${durationHtml(p.estimatedSeconds)} (in waves: ${durationHtml(p.wavesEstimatedSeconds ?? p.estimatedSeconds)})`;
}

function poolBlock(p: PlanPool): string {
  const sched = p.nodes.filter((n) => n.wave !== null);
  const mu = p.maxUnavailable;
  const groups = groupNodes(p.name, p.nodes).map(
    (g) =>
      `<li class="${g.blockedBy ? 'warning' : ''}">${escapeHtml(withArrows(describeGroup(g, { withPool: false, slots: p.rollout === 'slots' })))}: <span class="mono">${escapeHtml(foldNames(g.names, 10))}</span></li>`,
  );
  return `<div class="pool" id="pool-${escapeHtml(p.name)}">
<h3><span class="mono">${escapeHtml(p.name)}</span> <span class="dim">${poolKind(p.backend)}, priority ${escapeHtml(p.priority)}${p.controlPlane ? ', control plane' : ''}</span></h3>
<p>${countHtml(p.nodeCount)} nodes, ${countHtml(p.upToDate)} up to date; maxUnavailable <span class="mono">${escapeHtml(mu.value)}</span> → ${countHtml(mu.resolved)} (${escapeHtml(mu.rule)})${p.unavailableNow.length ? `, ${countHtml(p.unavailableNow.length)} already unavailable` : ''}; ${p.rollout === 'slots' ? slotsText(p) : `${pluralHtml(p.waveSize, 'node')} per wave; ${pluralHtml(p.waves.length, 'wave')}, est. ${durationHtml(p.estimatedSeconds)}${p.soakSeconds && (p.waves.length > 1 || p.gates?.afterWave.length) ? ` including ${durationHtml(p.soakSeconds)} soak ${p.gates?.afterWave.length ? 'after each wave' : 'between waves'}` : ''}`}.</p>
<p class="dim">target <span class="mono">${escapeHtml(p.targetImage)}</span></p>
${p.nodes.length ? `<ul class="groups">${groups.join('\n')}</ul>` : '<p>All nodes run the target image.</p>'}
${nodeTable(p, sched)}${selfNodeSentence(p) ? `\n<p>Last: ${escapeHtml(selfNodeSentence(p))}</p>` : ''}${poolGatesHtml(p)}
</div>`;
}

/** The Waves card's figure: the most nodes out of service at once, those already out included (domain/budget.ts). */
function outOfServiceSub(plan: Plan): string {
  const { atOnce: peak, already } = outOfServiceFigure(plan.pools);
  return `at most <span data-out-of-service="${escapeHtml(peak)}">${pluralHtml(peak, 'node')}</span> out of service at once${already ? ` (${countHtml(already)} already out of service included)` : ''}`;
}
