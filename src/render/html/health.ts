/**
 * The health gates in the HTML report (docs/apply.md "Health gates"): a section with one row per
 * check (what it judges, when, how it measures, what a failure does, where it reads from) and a
 * line in each gated pool's block. Every value escaped (a crafted plan file may hold markup in
 * any field). Pure: reads only the plan.
 */
import type { Plan, PlanPool } from '../../plan/types.ts';
import { escapeHtml } from '../vocabulary.ts';
import { checkKind, checkLabel, checkOnFailure, checkSource, checkTiming, checkWhat, checkWhen, gatesPhrase, poolGatesLine } from '../health.ts';
import { silenceLines } from '../silences.ts';
import { silencesSummary } from '../rehearsal.ts';
import type { ApplyEvent } from '../../apply/ports/events.ts';
import { durationHtml } from './text.ts';

/** The gates' styles: added only to reports of plans with health checks (the others stay as they were, byte for byte). */
export const GATE_CSS =
  '\nsvg .gate.passed{fill:var(--ok)}svg .gate.failed{fill:var(--bad)}svg .gate.stopped{fill:var(--dim)}svg .gate-rule{stroke:var(--bad);stroke-width:1.5;stroke-dasharray:4 3}\n' +
  '.sw.gate{transform:rotate(45deg);width:9px;height:9px}.sw.gate.passed{background:var(--ok)}.sw.gate.failed{background:var(--bad)}\n';

export function healthSection(plan: Plan): string {
  const checks = plan.healthChecks ?? [];
  if (!checks.length) return '';
  const rows = checks.map(
    (c) =>
      `<tr><td class="mono">${escapeHtml(checkLabel(plan, c))}</td><td>${escapeHtml(checkKind(c))}</td><td>${escapeHtml(checkWhat(c))}</td><td>${escapeHtml(checkWhen(c))}</td><td>${escapeHtml(checkTiming(c))}</td><td${c.onFailure === 'rollback' && c.mode !== 'observe' ? ' class="warn"' : ''}>${escapeHtml(checkOnFailure(c))}</td><td class="dim">${escapeHtml(checkSource(c))}</td></tr>`,
  );
  return `<section id="health">
<h2>Health gates</h2>
<p>${escapeHtml(gatesPhrase(plan) ?? '')}. A gate passes when every check passes; an unreachable source fails a check, never passes it.</p>
<div class="scroll"><table class="health">
<thead><tr><th>Check</th><th>Kind</th><th>Passes when</th><th>Gates</th><th>Measures</th><th>On failure</th><th>Reads</th></tr></thead>
<tbody>${rows.join('\n')}</tbody>
</table></div>
</section>`;
}

/**
 * The silences for the nodes in flight (docs/spec.md "Silences"); '' without. With a rehearsal's
 * events: what it did (src/render/rehearsal.ts silencesLine) and per node when its silences were
 * created and expired, in rehearsal time.
 */
export function silencesSection(plan: Plan, rehearsal?: { events: ApplyEvent[] } | null): string {
  const lines = silenceLines(plan);
  if (!lines.length) return '';
  const did = rehearsal ? silencesSummary(rehearsal) : null;
  const spans: { pool: string; node: string; from: number; to: number | null }[] = [];
  for (const e of rehearsal?.events ?? []) {
    if (e.type !== 'silence' || !e.node) continue;
    if (e.action === 'create') spans.push({ pool: e.pool, node: e.node, from: e.t, to: null });
    else if (e.action === 'expire') {
      const open = spans.find((x) => x.node === e.node && x.to === null);
      if (open) open.to = e.t;
    }
  }
  const table = spans.length
    ? `\n<table class="silences"><thead><tr><th>node</th><th>pool</th><th>silenced at</th><th>expired at</th></tr></thead><tbody>\n${spans
        .map(
          (x) =>
            `<tr><td>${escapeHtml(x.node)}</td><td>${escapeHtml(x.pool)}</td><td>${durationHtml(x.from)}</td><td>${x.to === null ? 'not expired (lapses within the TTL)' : durationHtml(x.to)}</td></tr>`,
        )
        .join('\n')}\n</tbody></table>`
    : '';
  return `<section id="silences">
<h2>Silences</h2>
<ul>${lines.map((l) => `<li>${escapeHtml(l)}</li>`).join('\n')}</ul>${did ? `\n<p>In the rehearsal: ${escapeHtml(did)}</p>` : ''}${table}
</section>`;
}

export function poolGatesHtml(p: PlanPool): string {
  const line = poolGatesLine(p);
  return line ? `\n<p class="gates">Health gates: ${escapeHtml(line)}</p>` : '';
}
