/**
 * The HTML dry-run report (DESIGN §8): one self-contained file. Inline CSS and SVG only:
 * no script, no network, no external fonts (a Content-Security-Policy meta tag forbids
 * any fetch). Summary, risks, per-object diffs, boot images, pools, and a wave timeline
 * chart (pools x time, one bar per node from drain to back in service; rows aggregate per
 * wave or per run of waves on large plans). Pure: reads only the plan.
 *
 * With a rehearsal (`bootcplan rehearse -o html`): the same report, plus a section that
 * compares the rehearsal with the plan (duration against the estimate, peak unavailable
 * against maxUnavailable per pool, failed nodes), and the timeline drawn from the
 * rehearsal's events (src/render/rehearsal-timeline.ts) instead of the estimate. Pure:
 * reads only the plan and the rehearsal.
 */
import type { Plan, PlanChange, PlanPool, PhaseDurations, Backend } from '../plan/types.ts';
import type { Diagnostic } from '../base/diagnostics.ts';
import { changeDiff } from './diff.ts';
import { scheduleLine, specChangesTitle } from './gitops.ts';
import { maskSecrets } from './secrets.ts';
import { formatDuration, plural, foldNames, groupNodes, describeGroup, naturalCompare, shortDigest, rebootMix, riskTally } from './format.ts';
import { planLine } from './text.ts';
import { buildTimeline, nodePhases, type Timeline, type TimelineRow, type RowSpan, type PhaseKind } from './timeline.ts';
import { buildRehearsalTimeline } from './rehearsal-timeline.ts';
import type { Rehearsal } from '../sim/rehearse.ts';
import type { RehearsalReport } from './rehearsal.ts';

export interface HtmlOptions {
  /** Whole managed fields in the diffs instead of the changed ones with context. */
  full?: boolean;
  /** Most rows in the timeline chart before rows aggregate (default 60). */
  maxChartRows?: number;
  /** A rehearsal of this plan (`rehearse -o html`): its figures, and a timeline from its events. */
  rehearsal?: RehearsalReport;
}

const VERB = { create: 'created', update: 'updated in place', delete: 'deleted', noop: 'unchanged' } as const;
const SYMBOL = { create: '+', update: '~', delete: '−', noop: '=' } as const;
/** Pools with at most this many scheduled nodes get a per-node table. */
const NODE_TABLE_MAX = 200;

export function renderHtml(input: Plan, opts: HtmlOptions = {}): string {
  const plan = maskSecrets(input);
  const r = opts.rehearsal ?? null;
  const timeline = r ? buildRehearsalTimeline(plan, r, { maxRows: opts.maxChartRows ?? 60 }) : buildTimeline(plan, { maxRows: opts.maxChartRows ?? 60 });
  const title = `bootcplan ${r ? 'rehearsal of plan' : 'plan'} ${plan.spec.name} (${plan.id})`;
  const body = [
    header(plan, r),
    r ? rehearsalSection(plan, r) : '',
    summary(plan),
    gitopsSection(plan),
    diagnostics(plan),
    risks(plan),
    chart(plan, timeline, r),
    changes(plan, opts),
    bootImages(plan),
    pools(plan),
    `<footer>bootcplan · plan ${esc(plan.id)} · format ${esc(plan.formatVersion)} · durations: stage ${formatDuration(plan.durations.stage)}, drain ${formatDuration(plan.durations.drain)}, reboot ${formatDuration(plan.durations.reboot)}, soft reboot ${formatDuration(plan.durations.softReboot)}, ready ${formatDuration(plan.durations.ready)}</footer>`,
  ].filter(Boolean).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="bootcplan">
<title>${esc(title)}</title>
<style>${CSS}</style>
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

function gitopsSection(plan: Plan): string {
  const sched = scheduleLine(plan);
  const scTitle = specChangesTitle(plan);
  if (!sched && !scTitle) return '';
  const parts = ['<section id="gitops">'];
  if (sched) parts.push(`<p class="schedule">${esc(sched)}</p>`);
  if (scTitle) {
    parts.push(`<h2>Spec changes</h2><p>${esc(scTitle)}</p>`);
    if (plan.specChanges?.unified) {
      const lines = plan.specChanges.unified.trimEnd().split('\n').map((l) => {
        const cls = l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : 'ctx';
        return `<span class="${cls}">${esc(l)}</span>`;
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
<h1>bootcplan ${r ? 'rehearsal of plan' : 'plan'} <span class="mono">${esc(sp.name)}</span></h1>
<p class="meta">spec <span class="mono">${esc(sp.path)}</span>${sp.ref ? ` at <span class="mono">${esc(sp.ref)}</span>` : ''}${sp.commit ? `, commit <span class="mono">${esc(sp.commit.slice(0, 12))}</span>` : ''}${sp.dirty ? ', uncommitted changes' : ''}
 · cluster <span class="mono">${esc(cl.source)}</span>${cl.version ? `, OpenShift ${esc(cl.version)}` : ''}${cl.platform ? `, ${esc(cl.platform)}` : ''}
 · plan <span class="mono">${esc(plan.id)}</span></p>
<p class="planline ${status}" id="planline">${esc(planLine(plan))}</p>
</header>`;
}

function rehearsalSection(plan: Plan, r: RehearsalReport): string {
  const d = r.durations;
  const diff = r.durationSeconds - r.estimatedSeconds;
  const pct = r.estimatedSeconds > 0 ? Math.round((diff / r.estimatedSeconds) * 1000) / 10 : 0;
  const vs = r.estimatedSeconds > 0
    ? `${diff === 0 ? 'the same as' : `${formatDuration(Math.abs(diff))} (${Math.abs(pct)}%) ${diff < 0 ? 'shorter than' : 'longer than'}`} the plan's estimate of ${formatDuration(r.estimatedSeconds)} (${num(r.estimatedSeconds)} s)`
    : 'the plan estimated no node work';
  const outcome = r.exitCode === 0
    ? `Rehearsal done in ${formatDuration(r.durationSeconds)} (${num(r.durationSeconds)} s): ${vs}.`
    : `Rehearsal ${r.halted ? 'halted' : 'stopped'} after ${formatDuration(r.durationSeconds)} (exit ${r.exitCode}): ${r.stopped ?? ''}. The plan estimated ${formatDuration(r.estimatedSeconds)} for the whole rollout.`;
  const failed = r.pools.flatMap((p) => p.failedNodes.map((n) => `${p.name}/${n}`));
  const rows = r.pools.map((p) => {
    const pp = plan.pools.find((x) => x.name === p.name);
    const over = p.peakUnavailable > p.maxUnavailable;
    const done = p.waves.filter((w) => w.end !== null).length;
    const took = p.waves.length ? Math.max(...p.waves.map((w) => w.end ?? r.durationSeconds)) - Math.min(...p.waves.map((w) => w.start)) : 0;
    return `<tr><td class="mono">${esc(p.name)}</td><td>${p.backend === 'bootc' ? 'BootcNodePool' : 'MachineConfigPool'}</td>` +
      `<td class="n">${num(done)} / ${num(pp?.waves.length ?? p.waves.length)}</td>` +
      `<td class="n${over ? ' fail' : ''}" data-peak="${p.peakUnavailable}">${num(p.peakUnavailable)} / ${num(p.maxUnavailable)}${over ? ' <b>over budget</b>' : ''}</td>` +
      `<td class="n">${p.waves.length ? formatDuration(took) : '-'}</td><td class="n">${pp ? formatDuration(pp.estimatedSeconds) : '-'}</td>` +
      `<td class="${p.failedNodes.length ? 'fail' : ''}">${p.failedNodes.length ? `<span class="mono">${esc(foldNames([...p.failedNodes].sort(naturalCompare), 8))}</span>` : '<span class="dim">none</span>'}</td></tr>`;
  });
  return `<section id="rehearsal">
<h2>Rehearsal on a simulated cluster</h2>
<p class="planline ${r.exitCode === 0 ? 'ok' : 'bad'}" id="rehearsal-line">${esc(outcome)}</p>
<p class="dim">Phase durations: stage ${formatDuration(d.stage)}, drain ${formatDuration(d.drain)}, reboot ${formatDuration(d.reboot)}, soft reboot ${formatDuration(d.softReboot)}, ready ${formatDuration(d.ready)}${r.faults ? `; faults: reboot fail rate ${r.faults.rebootFailRate ?? 0}, seed ${r.faults.seed ?? 1}` : ''}. Reboots: ${num(r.reboots.hard)} hard, ${num(r.reboots.soft)} soft${r.reboots.failed ? `, <b class="fail">${num(r.reboots.failed)} failed</b>` : ''}.</p>
${failed.length ? `<p class="fail" id="rehearsal-failed">Failed ${failed.length === 1 ? 'node' : 'nodes'}: <span class="mono">${esc(foldNames(failed, 12))}</span></p>` : ''}
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
  const card = (label: string, value: string, sub: string, cls = '') =>
    `<div class="card ${cls}"><div class="label">${label}</div><div class="value">${value}</div><div class="sub">${sub}</div></div>`;
  const cards = [
    card('Objects', String(s.create + s.update + s.delete), `${s.create} create · ${s.update} change · ${s.delete} delete`),
    card('Nodes', num(s.nodes), `in ${plural(plan.pools.filter((p) => p.waves.length).length, 'pool')}${s.blocked ? ` · <b>${num(s.blocked)} not scheduled</b>` : ''}`, s.blocked ? 'warn' : ''),
    card('Waves', num(s.waves), `at most ${plural(Math.max(0, ...plan.pools.map((p) => p.waves.length ? p.waveSize : 0)), 'node')} out of service at once`),
    card('Reboots soft / hard', `${num(soft)} / ${num(hard + unknown)}`, unknown ? `hard includes ${num(unknown)} not yet known (decided once staged)` : 'all known'),
    card('Estimated duration', formatDuration(s.estimatedSeconds), 'pools one after another'),
    card('Risks', replacement ? `${replacement} <small>replacement</small>` : String(risky.length), replacement ? 'control-plane machines replaced' : `${plural(risky.length, 'disruptive change')}`, replacement ? 'bad' : risky.length ? 'warn' : ''),
    card('Errors', String(s.errors), s.errors ? 'this plan cannot be applied' : 'none', s.errors ? 'bad' : ''),
    card('Warnings', String(s.warnings), s.warnings ? 'see below' : 'none', s.warnings ? 'warn' : ''),
  ];
  const rows = plan.pools.map((p) => {
    const sc = p.nodes.filter((n) => n.wave !== null);
    const so = sc.filter((n) => n.reboot === 'soft').length;
    const ha = sc.filter((n) => n.reboot === 'hard').length;
    const bl = p.nodes.filter((n) => n.blockedBy).length;
    return `<tr><td class="mono">${esc(p.name)}${p.controlPlane ? ' <span class="tag">control plane</span>' : ''}${p.paused ? ' <span class="tag">paused</span>' : ''}</td><td>${p.backend === 'bootc' ? 'BootcNodePool' : 'MachineConfigPool'}</td>` +
      `<td class="n">${num(sc.length)} / ${num(p.nodeCount)}</td><td class="n">${num(p.waves.length)}</td><td class="n">${num(p.waveSize)}</td>` +
      `<td class="n">${esc(String(p.maxUnavailable.value))} → ${num(p.maxUnavailable.resolved)}</td>` +
      `<td class="n">${num(so)}</td><td class="n">${num(ha)}</td><td class="n">${num(sc.length - so - ha)}</td><td class="n${bl ? ' warn' : ''}">${num(bl)}</td><td class="n">${formatDuration(p.estimatedSeconds)}</td></tr>`;
  });
  return `<section id="summary">
<h2>Summary</h2>
<div class="cards">${cards.join('')}</div>
${plan.pools.length ? `<div class="scroll"><table class="pools">
<thead><tr><th>Pool</th><th>Backend</th><th class="n">Nodes to update</th><th class="n">Waves</th><th class="n">Per wave</th><th class="n">maxUnavailable</th><th class="n">Soft</th><th class="n">Hard</th><th class="n">Not yet known</th><th class="n">Not scheduled</th><th class="n">Est.</th></tr></thead>
<tbody>${rows.join('\n')}</tbody>
</table></div>` : ''}
</section>`;
}

function diagnostics(plan: Plan): string {
  if (!plan.diagnostics.length) return '';
  const item = (d: Diagnostic) => {
    const where = d.file ? `${d.file}${d.line ? `:${d.line}${d.column ? `:${d.column}` : ''}` : ''}` : '';
    return `<li class="${d.severity}"><span class="sev">${d.severity}</span> <span class="mono">${esc(d.code)}</span>${where ? ` <span class="mono dim">${esc(where)}</span>` : ''}${d.path ? ` <span class="mono dim">${esc(d.path)}</span>` : ''}<div>${esc(d.message)}</div>` +
      `${d.expected ? `<div class="dim">expected: ${esc(d.expected)}</div>` : ''}${d.hint ? `<div class="hint">hint: ${esc(d.hint)}</div>` : ''}</li>`;
  };
  const errs = plan.diagnostics.filter((d) => d.severity === 'error');
  const warns = plan.diagnostics.filter((d) => d.severity === 'warning');
  return `<section id="diagnostics">
<h2>${errs.length ? `${plural(errs.length, 'error')}` : ''}${errs.length && warns.length ? ' and ' : ''}${warns.length ? plural(warns.length, 'warning') : ''}</h2>
<ul class="diags">${[...errs, ...warns].map(item).join('\n')}</ul>
</section>`;
}

function risks(plan: Plan): string {
  const items: string[] = [];
  for (const c of plan.changes.filter((x) => x.action !== 'noop' && x.risk !== 'none')) {
    items.push(`<li class="${c.risk === 'replacement' ? 'error' : 'warning'}"><span class="sev">${c.risk}</span> <a href="#change-${c.order}" class="mono">${esc(c.address)}</a> ${VERB[c.action]} (${esc(c.reason)})${c.description ? `<div>${esc(c.description)}</div>` : ''}</li>`);
  }
  const cp = plan.bootImages.controlPlaneMachineSet;
  if (cp?.replacement) items.push(`<li class="error"><span class="sev">replacement</span> ControlPlaneMachineSet <span class="mono">cluster</span> replaces control-plane machines<div>${esc(cp.why)}</div></li>`);
  for (const p of plan.pools) {
    const blocked = p.nodes.filter((n) => n.blockedBy);
    if (blocked.length) {
      items.push(`<li class="warning"><span class="sev">not scheduled</span> ${plural(blocked.length, 'node')} of pool <span class="mono">${esc(p.name)}</span> (${esc([...new Set(blocked.map((n) => n.blockedBy))].join(', '))}): <span class="mono">${esc(foldNames(blocked.map((n) => n.name).sort(naturalCompare), 8))}</span></li>`);
    }
  }
  if (!items.length) return `<section id="risks"><h2>Risks</h2><p class="dim">No disruptive change, no replacement, every node scheduled.</p></section>`;
  return `<section id="risks"><h2>Risks</h2><ul class="diags">${items.join('\n')}</ul></section>`;
}

function changes(plan: Plan, opts: HtmlOptions): string {
  const changed = plan.changes.filter((c) => c.action !== 'noop');
  const unchanged = plan.changes.filter((c) => c.action === 'noop');
  const open = changed.length <= 12;
  const blocks = changed.map((c) => changeBlock(c, opts, open));
  return `<section id="changes">
<h2>Object changes <span class="count">${changed.length}</span></h2>
${changed.length ? '' : '<p class="dim">No object changes.</p>'}
${blocks.join('\n')}
${unchanged.length ? `<p class="dim">${plural(unchanged.length, 'managed object')} already as desired: <span class="mono">${esc(unchanged.map((c) => c.address).join(', '))}</span></p>` : ''}
</section>`;
}

function changeBlock(ch: PlanChange, opts: HtmlOptions, open: boolean): string {
  const d = changeDiff(ch, { full: opts.full });
  const lines = d.lines.map((l) => {
    const cls = l.kind === '+' ? 'add' : l.kind === '-' ? 'del' : l.kind === '#' ? 'note' : 'ctx';
    return `<span class="${cls}">${l.kind === '#' ? ' ' : esc(l.kind)} ${esc(l.text)}</span>`;
  });
  return `<details class="change" id="change-${ch.order}"${open ? ' open' : ''}>
<summary><span class="sym ${ch.action}">${SYMBOL[ch.action]}</span> <span class="mono">${esc(ch.address)}</span> <span class="dim">${VERB[ch.action]} · ${esc(ch.reason)} · step ${ch.order}</span>${ch.risk !== 'none' ? ` <span class="tag ${ch.risk === 'replacement' ? 'bad' : 'warn'}">${ch.risk}</span>` : ''} <span class="stat">${d.gaveUp ? 'JSON patch' : `<span class="add">+${d.added}</span> <span class="del">−${d.removed}</span>`}</span></summary>
${ch.description ? `<p>${esc(ch.description)}</p>` : ''}${ch.waitAfter ? `<p class="hint">then wait: ${esc(ch.waitAfter.description)}</p>` : ''}
<pre class="diff">${lines.join('\n')}</pre>
</details>`;
}

function bootImages(plan: Plan): string {
  const bi = plan.bootImages;
  if (!bi.machineSets.length && !bi.controlPlaneMachineSet) return '';
  const rows = bi.machineSets.map((m) => `<tr><td class="mono">${esc(m.name)}</td><td>${m.skipped ? `<span class="dim">skipped: ${esc(m.skipped)}</span>` : m.from === m.to ? `<span class="mono">${esc(m.to ?? '(none)')}</span> <span class="dim">(current)</span>` : `<span class="mono">${esc(m.from ?? '(none)')}</span> → <span class="mono">${esc(m.to ?? '(none)')}</span>`}</td></tr>`);
  const cp = bi.controlPlaneMachineSet;
  return `<section id="bootimages">
<h2>Boot images</h2>
${rows.length ? `<div class="scroll"><table><thead><tr><th>MachineSet</th><th>Boot image</th></tr></thead><tbody>${rows.join('\n')}</tbody></table></div>` : ''}
${cp ? `<p>ControlPlaneMachineSet <span class="mono">cluster</span>: ${cp.from === cp.to || !cp.to ? 'no boot image change' : `<span class="mono">${esc(cp.from ?? '(none)')}</span> → <span class="mono">${esc(cp.to)}</span>`}; ${cp.replacement ? '<b class="bad">replaces control-plane machines</b>' : 'no machine replaced'}: ${esc(cp.why)}</p>` : ''}
</section>`;
}

function pools(plan: Plan): string {
  if (!plan.pools.length) return '';
  return `<section id="pools"><h2>Pools</h2>\n${plan.pools.map(poolBlock).join('\n')}\n</section>`;
}

function poolBlock(p: PlanPool): string {
  const sched = p.nodes.filter((n) => n.wave !== null);
  const mu = p.maxUnavailable;
  const groups = groupNodes(p.name, p.nodes).map((g) =>
    `<li class="${g.blockedBy ? 'warning' : ''}">${esc(describeGroup(g, { withPool: false }).replace(/ -> /g, ' → '))}: <span class="mono">${esc(foldNames(g.names, 10))}</span></li>`);
  let table = '';
  if (sched.length && sched.length <= NODE_TABLE_MAX) {
    table = `<div class="scroll"><table class="nodes"><thead><tr><th class="n">Wave</th><th>Node</th><th>Zone</th><th>Reboot</th><th>Staged</th><th>From → to</th></tr></thead><tbody>${sched.map((n) =>
      `<tr><td class="n">${n.wave}</td><td class="mono">${esc(n.name)}</td><td>${esc(n.zone ?? '-')}</td><td>${n.reboot}</td><td>${n.staged ? 'yes' : 'no'}</td><td class="mono">${esc(shortDigest(n.from))} → ${esc(shortDigest(n.to))}</td></tr>`).join('\n')}</tbody></table></div>`;
  } else if (sched.length) {
    table = `<details><summary>All ${num(sched.length)} nodes by wave</summary><pre class="waves">${p.waves.map((w, i) => `wave ${i + 1} (${w.length}): ${esc(w.join(', '))}`).join('\n')}</pre></details>`;
  }
  return `<div class="pool" id="pool-${esc(p.name)}">
<h3><span class="mono">${esc(p.name)}</span> <span class="dim">${p.backend === 'bootc' ? 'BootcNodePool' : 'MachineConfigPool'}, priority ${p.priority}${p.controlPlane ? ', control plane' : ''}</span></h3>
<p>${num(p.nodeCount)} nodes, ${num(p.upToDate)} up to date; maxUnavailable <span class="mono">${esc(String(mu.value))}</span> → ${num(mu.resolved)} (${esc(mu.rule)})${p.unavailableNow.length ? `, ${num(p.unavailableNow.length)} already unavailable` : ''}; ${plural(p.waveSize, 'node')} per wave; ${plural(p.waves.length, 'wave')}, est. ${formatDuration(p.estimatedSeconds)}${p.soakSeconds && p.waves.length > 1 ? ` including ${formatDuration(p.soakSeconds)} soak between waves` : ''}.</p>
<p class="dim">target <span class="mono">${esc(p.targetImage)}</span></p>
${p.nodes.length ? `<ul class="groups">${groups.join('\n')}</ul>` : '<p>All nodes run the target image.</p>'}
${table}
</div>`;
}

// ---------------------------------------------------------------------------- chart

const W = 1120;
const LABEL_W = 190;
const X0 = LABEL_W + 10;
const X1 = W - 56;
const AXIS_H = 26;
const LANE_H = 26;

function chart(plan: Plan, tl: Timeline, r: Rehearsal | null = null): string {
  if (!tl.rows.length || tl.totalSeconds <= 0) {
    return `<section id="timeline"><h2>Wave timeline</h2><p class="dim">No node changes: nothing to draw.</p></section>`;
  }
  const rowH = tl.granularity === 'node' ? 20 : 24;
  const barH = rowH - 6;
  // A rehearsal's chart also marks the plan's estimate, so the axis covers both.
  const estimate = r && r.estimatedSeconds > 0 ? r.estimatedSeconds : null;
  const domain = Math.max(tl.totalSeconds, estimate ?? 0);
  const scale = (X1 - X0) / domain;
  const x = (t: number) => X0 + t * scale;
  const ticks = niceTicks(domain);
  const parts: string[] = [];
  let y = AXIS_H;
  for (const lane of tl.pools) {
    if (!lane.rows.length) continue;
    const laneTop = y;
    const laneRows = lane.rows.length;
    const laneH = LANE_H + laneRows * rowH;
    parts.push(`<rect class="lane" x="0" y="${laneTop}" width="${W}" height="${laneH}"/>`);
    if (lane.waves.length) parts.push(`<rect class="lane-span" x="${f(x(lane.start))}" y="${laneTop + 3}" width="${f(Math.max(1, x(lane.end) - x(lane.start)))}" height="${LANE_H - 8}" rx="3"><title>pool ${esc(lane.name)}: ${formatDuration(lane.start)} to ${formatDuration(lane.end)}</title></rect>`);
    parts.push(`<text class="pool-label" x="8" y="${laneTop + 17}">${esc(truncate(`pool ${lane.name}`, 26))}</text>`);
    const laneSummary = lane.waves.length
      ? `${plural(lane.waves.reduce((s, w) => s + w.nodes, 0), 'node')}, ${plural(lane.waves.length, 'wave')}, ${formatDuration(lane.end - lane.start)}`
      : 'no wave started';
    // The lane summary goes right of the pool's span when there is room, else inside it
    // (left-aligned), else left of it; never over the label column.
    const textW = laneSummary.length * 6.2;
    const sumX = x(lane.end) + 6;
    const inside = x(lane.end) - x(lane.start) >= textW + 12;
    parts.push(sumX + textW < W - 4
      ? `<text class="lane-sum" x="${f(sumX)}" y="${laneTop + 17}">${esc(laneSummary)}</text>`
      : inside || x(lane.start) - textW - 6 < X0
        ? `<text class="lane-sum" x="${f(x(lane.start) + 6)}" y="${laneTop + 17}">${esc(laneSummary)}</text>`
        : `<text class="lane-sum" x="${f(x(lane.start) - 6)}" y="${laneTop + 17}" text-anchor="end">${esc(laneSummary)}</text>`);
    y += LANE_H;
    for (const row of lane.rows) {
      parts.push(rowSvg(row, y, rowH, barH, x, plan.durations, lane.backend));
      y += rowH;
    }
    y += 0;
  }
  const height = y + AXIS_H;
  const grid = ticks.map((t) => `<line class="grid" x1="${f(x(t))}" y1="${AXIS_H - 4}" x2="${f(x(t))}" y2="${y}"/>` +
    `<text class="tick" x="${f(x(t))}" y="${AXIS_H - 9}" text-anchor="middle">${formatDuration(t)}</text>` +
    `<text class="tick" x="${f(x(t))}" y="${y + 16}" text-anchor="middle">${formatDuration(t)}</text>`).join('');
  const end = `<line class="end" x1="${f(x(tl.totalSeconds))}" y1="${AXIS_H - 4}" x2="${f(x(tl.totalSeconds))}" y2="${y}"><title>${r ? 'rehearsal' : 'estimate'}: ${formatDuration(tl.totalSeconds)}</title></line>` +
    (estimate !== null ? `<line class="estimate" x1="${f(x(estimate))}" y1="${AXIS_H - 4}" x2="${f(x(estimate))}" y2="${y}"><title>plan estimate: ${formatDuration(estimate)}</title></line>` : '');
  const gran = tl.granularity === 'node' ? 'one row per node' : tl.granularity === 'wave' ? `one row per wave (bar: ${r ? 'wave-start to wave-end, phases of its slowest node' : 'first drain to the slowest node back in service'})` : 'one row per run of waves';
  const svg = `<svg id="timeline-chart" class="chart${r ? ' rehearsal' : ''}" viewBox="0 0 ${W} ${height}" width="${W}" height="${height}" role="img" aria-label="${r ? 'Rehearsal' : 'Wave'} timeline: ${esc(plural(tl.nodes, 'node'))} in ${esc(plural(tl.waves, 'wave'))}, ${formatDuration(tl.totalSeconds)}" xmlns="http://www.w3.org/2000/svg">
${grid}
${parts.join('\n')}
${end}
</svg>`;
  const legend = [
    ['drain', 'cordon + drain'],
    ...(plan.pools.some((p) => p.backend === 'mco' && p.waves.length) ? [['stage', 'pull image (MCO)']] : []),
    ['reboot', 'reboot'],
    ['soft-reboot', 'soft reboot'],
    ['ready', 'until Ready'],
    ...(tl.rows.some((row) => row.kind === 'staging') ? [['staging', r ? 'bootc staging (stage-start to staged)' : 'bootc staging, all nodes in parallel']] : []),
    ...(r ? [['end', `rehearsal end`], ['estimate', 'plan estimate']] : []),
    ...(r && tl.rows.some((row) => row.spans.some((s) => s.failed))) ? [['failed', 'failed node']] : [],
  ].map(([k, label]) => `<span class="key"><span class="sw ${k}"></span>${label}</span>`).join('');
  const intro = r
    ? `From the rehearsal's events: ${esc(plural(tl.nodes, 'node'))} in ${esc(plural(tl.waves, 'wave'))}, ${formatDuration(tl.totalSeconds)} against the plan's estimate of ${formatDuration(r.estimatedSeconds)} (dashed line); at most ${num(tl.peakUnavailable)} out of service at once; ${gran}. A node's bar runs from its cordon to its uncordon. Hover a bar for details.`
    : `Estimated from the plan's phase durations: ${esc(plural(tl.nodes, 'node'))} in ${esc(plural(tl.waves, 'wave'))}, at most ${num(tl.peakUnavailable)} out of service at once; ${gran}. Hover a bar for details.`;
  return `<section id="timeline">
<h2>Wave timeline${r ? ' (rehearsal)' : ''} <span class="count">${formatDuration(tl.totalSeconds)}</span></h2>
<p class="dim">${intro}</p>
<div class="legend">${legend}</div>
<div class="chart-wrap">${svg}</div>
</section>`;
}

function rowSvg(row: TimelineRow, y: number, rowH: number, barH: number, x: (t: number) => number, d: PhaseDurations, backend: Backend): string {
  const out: string[] = [];
  const top = y + (rowH - barH) / 2;
  out.push(`<g class="row ${row.kind}" data-nodes="${row.nodes}">`);
  out.push(`<text class="row-label" x="${LABEL_W}" y="${f(y + rowH / 2 + 4)}" text-anchor="end">${esc(truncate(row.label, 28))}<title>${esc(row.title)}</title></text>`);
  if (row.kind === 'staging') {
    const s = row.spans[0];
    out.push(`<rect class="bar staging" x="${f(x(s.start))}" y="${f(top)}" width="${f(Math.max(1.5, x(s.end) - x(s.start)))}" height="${barH}" rx="2"><title>${esc(row.title)} (${formatDuration(s.end - s.start)})</title></rect>`);
  } else if (row.kind === 'node') {
    const s = row.spans[0];
    if (s.staging) out.push(`<rect class="bar staging" x="${f(x(s.staging.start))}" y="${f(top + barH / 4)}" width="${f(Math.max(0.8, x(s.staging.end) - x(s.staging.start)))}" height="${f(barH / 2)}" rx="2"><title>${esc(row.label)}: staging ${formatDuration(s.staging.start)}–${formatDuration(s.staging.end)}</title></rect>`);
    for (const p of s.phases ?? []) {
      out.push(`<rect class="bar ${p.kind}" x="${f(x(p.start))}" y="${f(top)}" width="${f(Math.max(0.8, x(p.end) - x(p.start)))}" height="${barH}"><title>${esc(row.label)}: ${phaseName(p.kind)} ${formatDuration(p.start)}–${formatDuration(p.end)}</title></rect>`);
    }
    out.push(`<rect class="bar-outline${s.failed ? ' failed' : ''}" x="${f(x(s.start))}" y="${f(top)}" width="${f(Math.max(1, x(s.end) - x(s.start)))}" height="${barH}" rx="2"><title>${esc(row.title)}: ${formatDuration(s.start)} to ${formatDuration(s.end)}</title></rect>`);
    if (s.failed) out.push(`<text class="failed-label" x="${f(x(s.end) + 5)}" y="${f(y + rowH / 2 + 4)}">failed</text>`);
  } else {
    for (const s of mergeSpans(row.spans, x)) {
      const x0 = x(s.start);
      const w = Math.max(1.5, x(s.end) - x0);
      const waves = s.waveFrom === s.waveTo ? `wave ${s.waveFrom}` : `waves ${s.waveFrom}-${s.waveTo}`;
      const tip = `${waves}: ${plural(s.nodes, 'node')} (${s.soft} soft, ${s.hard} hard, ${s.unknown} ${s.phases ? 'not rebooted' : 'not yet known'}${s.failed ? `, ${s.failed} failed` : ''}), ${formatDuration(s.start)} to ${formatDuration(s.end)}`;
      const allSoft = s.soft === s.nodes;
      if (s.waveFrom !== s.waveTo || w < 12) {
        // Several waves in one band, or too narrow for phases: one shape.
        out.push(`<rect class="bar ${allSoft ? 'soft-reboot' : 'reboot'}${s.waveFrom !== s.waveTo ? ' merged' : ''}${s.failed ? ' failed' : ''}" x="${f(x0)}" y="${f(top)}" width="${f(w)}" height="${barH}" rx="2"><title>${esc(tip)}</title></rect>`);
      } else {
        // One wave: the phases of its slowest node; the soft-rebooted share (back earlier) as a band on top.
        const slow = s.phases ?? nodePhases(d, backend, allSoft ? 'soft' : 'hard', s.start);
        for (const p of slow) out.push(`<rect class="bar ${p.kind}" x="${f(x(p.start))}" y="${f(top)}" width="${f(Math.max(0.8, x(p.end) - x(p.start)))}" height="${barH}"><title>${esc(`${tip}; slowest node: ${phaseName(p.kind)} ${formatDuration(p.start)}–${formatDuration(p.end)}`)}</title></rect>`);
        if (s.softEnd !== null) {
          const sh = Math.max(3, Math.round((barH * s.soft) / s.nodes));
          for (const p of s.softPhases ?? nodePhases(d, backend, 'soft', s.start)) {
            out.push(`<rect class="bar ${p.kind} softband" x="${f(x(p.start))}" y="${f(top)}" width="${f(Math.max(0.8, x(p.end) - x(p.start)))}" height="${sh}"><title>${esc(`${waves}: ${s.soft} soft-rebooted nodes back at ${formatDuration(s.softEnd)}`)}</title></rect>`);
          }
        }
        out.push(`<rect class="bar-outline${s.failed ? ' failed' : ''}" x="${f(x0)}" y="${f(top)}" width="${f(w)}" height="${barH}" rx="2"><title>${esc(tip)}</title></rect>`);
      }
      const label = num(s.nodes);
      if (w > label.length * 6.5 + 8) out.push(`<text class="bar-label" x="${f(x0 + w / 2)}" y="${f(top + barH / 2 + 4)}" text-anchor="middle">${label}</text>`);
    }
    const last = row.spans[row.spans.length - 1];
    out.push(`<text class="row-count" x="${f(x(last.end) + 5)}" y="${f(y + rowH / 2 + 4)}">${esc(num(row.nodes))}</text>`);
  }
  out.push('</g>');
  return out.join('');
}

/** Spans closer than ~2px on screen merge into one band, so 10,000 waves stay a few hundred shapes. */
function mergeSpans(spans: RowSpan[], x: (t: number) => number): RowSpan[] {
  const out: RowSpan[] = [];
  for (const s of spans) {
    const prev = out[out.length - 1];
    if (prev && x(s.start) - x(prev.end) < 2 && (x(prev.end) - x(prev.start) < 4 || x(s.end) - x(s.start) < 4)) {
      out[out.length - 1] = {
        start: prev.start, end: Math.max(prev.end, s.end), softEnd: null,
        nodes: prev.nodes + s.nodes, soft: prev.soft + s.soft, hard: prev.hard + s.hard, unknown: prev.unknown + s.unknown,
        waveFrom: prev.waveFrom, waveTo: s.waveTo,
      };
    } else out.push({ ...s });
  }
  return out;
}

function niceTicks(total: number): number[] {
  const steps = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];
  const step = steps.find((s) => total / s <= 10) ?? Math.ceil(total / 10);
  const out: number[] = [];
  for (let t = 0; t <= total; t += step) out.push(t);
  return out;
}

function phaseName(k: PhaseKind): string {
  return { drain: 'drain', stage: 'pull image', reboot: 'reboot', 'soft-reboot': 'soft reboot', ready: 'until Ready', staging: 'staging' }[k];
}

// ---------------------------------------------------------------------------- helpers

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function num(n: number): string {
  return n.toLocaleString('en-US');
}

function f(n: number): string {
  return (Math.round(n * 10) / 10).toString();
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

const CSS = `
:root{--bg:#fff;--fg:#1f2328;--dim:#656d76;--line:#d0d7de;--panel:#f6f8fa;--lane:#f6f8fa;--lane2:#eef1f4;
--add-bg:#dafbe1;--add:#116329;--del-bg:#ffebe9;--del:#a40e26;--ok:#1a7f37;--warn:#9a6700;--warn-bg:#fff8c5;--bad:#cf222e;--bad-bg:#ffebe9;
--drain:#d4a72c;--stage:#8250df;--reboot:#cf4a2e;--soft:#2da44e;--ready:#57a6ff;--staging:#c8b5f5;--accent:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--dim:#8d96a0;--line:#30363d;--panel:#161b22;--lane:#161b22;--lane2:#1c2128;
--add-bg:#12261e;--add:#7ee787;--del-bg:#25171c;--del:#ffa198;--warn-bg:#2e2610;--bad-bg:#2d1517;--staging:#5b4a8a;--accent:#4493f8}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:32px 0 10px;padding-bottom:6px;border-bottom:1px solid var(--line)}h3{font-size:15px;margin:18px 0 4px}
.mono,pre,code{font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
.dim{color:var(--dim)}.meta{color:var(--dim);margin:0 0 10px}
.planline{font-weight:600;padding:10px 14px;border-radius:6px;border:1px solid var(--line);background:var(--panel);margin:8px 0}
.planline.ok{border-left:4px solid var(--ok)}.planline.warn{border-left:4px solid var(--warn)}.planline.bad{border-left:4px solid var(--bad);background:var(--bad-bg)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 12px;background:var(--panel)}
.card .label{color:var(--dim);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card .value{font-size:21px;font-weight:650;line-height:1.3;white-space:nowrap}.card .value small{font-size:12px;font-weight:500;color:var(--dim)}
.card .sub{color:var(--dim);font-size:12px}
.card.warn{border-color:var(--warn);background:var(--warn-bg)}.card.bad{border-color:var(--bad);background:var(--bad-bg)}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:12px 0;width:100%}th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--panel);font-weight:600;font-size:13px}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.warn{color:var(--warn);font-weight:600}
.tag{display:inline-block;font-size:11px;padding:0 6px;border-radius:10px;border:1px solid var(--line);color:var(--dim)}
.tag.warn{border-color:var(--warn);color:var(--warn)}.tag.bad,.bad{border-color:var(--bad);color:var(--bad)}
ul.diags{list-style:none;padding:0;margin:0}ul.diags li{border:1px solid var(--line);border-left-width:4px;border-radius:6px;padding:8px 12px;margin:6px 0}
ul.diags li.error{border-left-color:var(--bad)}ul.diags li.warning{border-left-color:var(--warn)}
.sev{font-weight:700;text-transform:uppercase;font-size:11px;letter-spacing:.05em}li.error .sev{color:var(--bad)}li.warning .sev{color:var(--warn)}
.hint{color:var(--accent)}
.count{font-weight:500;color:var(--dim);font-size:14px}
details.change{border:1px solid var(--line);border-radius:6px;margin:8px 0;background:var(--bg)}
details.change>summary{cursor:pointer;padding:8px 12px;background:var(--panel);border-radius:6px}
details.change[open]>summary{border-bottom:1px solid var(--line);border-radius:6px 6px 0 0}
details.change>p{margin:8px 12px}
.sym{display:inline-block;width:1.2em;text-align:center;font-weight:700}.sym.create{color:var(--ok)}.sym.update{color:var(--warn)}.sym.delete{color:var(--bad)}
.stat{float:right}.stat .add{color:var(--add)}.stat .del{color:var(--del)}
pre.diff{margin:0;padding:8px 0;overflow-x:auto}pre.diff span{display:inline-block;min-width:100%;padding:0 12px;white-space:pre}
pre.diff .add{background:var(--add-bg);color:var(--add)}pre.diff .del{background:var(--del-bg);color:var(--del)}pre.diff .note{color:var(--dim);font-style:italic}
pre.waves{white-space:pre-wrap;word-break:break-all;max-height:420px;overflow:auto;background:var(--panel);padding:8px;border-radius:6px}
ul.groups{padding-left:20px}ul.groups li.warning{color:var(--warn)}
.legend{display:flex;flex-wrap:wrap;gap:14px;margin:6px 0 8px;font-size:12px;color:var(--dim)}
.key{display:inline-flex;align-items:center;gap:5px}.sw{display:inline-block;width:14px;height:10px;border-radius:2px}
.sw.drain{background:var(--drain)}.sw.stage{background:var(--stage)}.sw.reboot{background:var(--reboot)}.sw.soft-reboot{background:var(--soft)}.sw.ready{background:var(--ready)}.sw.staging{background:var(--staging)}
.chart-wrap{overflow-x:auto;border:1px solid var(--line);border-radius:8px;background:var(--bg)}
svg.chart{display:block;width:100%;min-width:760px;height:auto;font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
svg .lane{fill:var(--lane)}svg g.row:nth-child(even){}
svg .lane-span{fill:var(--lane2);stroke:var(--line)}
svg .pool-label{font-size:13px;font-weight:700;fill:var(--fg)}svg .lane-sum{font-size:11px;fill:var(--dim)}
svg .row-label{font-size:11px;fill:var(--fg);font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
svg .row-count{font-size:10px;fill:var(--dim)}svg .bar-label{font-size:10px;fill:#fff;font-weight:700;pointer-events:none;paint-order:stroke;stroke:rgba(0,0,0,.35);stroke-width:2px}
svg .softband{stroke:var(--bg);stroke-width:.6}
svg .tick{font-size:10px;fill:var(--dim)}svg .grid{stroke:var(--line);stroke-dasharray:2 3}svg .end{stroke:var(--fg);stroke-width:1.5}
svg .bar.drain{fill:var(--drain)}svg .bar.stage{fill:var(--stage)}svg .bar.reboot{fill:var(--reboot)}svg .bar.soft-reboot{fill:var(--soft)}svg .bar.ready{fill:var(--ready)}
svg .bar.staging{fill:var(--staging)}svg .bar.merged{opacity:.85}
svg .bar-outline{fill:none;stroke:rgba(0,0,0,.25)}svg .bar-outline.failed,svg .bar.failed{stroke:var(--bad);stroke-width:2}
svg .estimate{stroke:var(--accent);stroke-width:1.5;stroke-dasharray:5 4}
.sw.end{background:var(--fg);width:3px}.sw.estimate{background:var(--accent);width:3px}.sw.failed{border:2px solid var(--bad);background:transparent}
.fail{color:var(--bad)}svg .failed-label{font-size:10px;font-weight:700;fill:var(--bad)}
footer{margin-top:40px;color:var(--dim);font-size:12px;border-top:1px solid var(--line);padding-top:10px}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
`;
