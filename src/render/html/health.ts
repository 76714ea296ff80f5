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

/** The silences for the nodes in flight (docs/spec.md "Silences"); '' without. */
export function silencesSection(plan: Plan): string {
  const lines = silenceLines(plan);
  if (!lines.length) return '';
  return `<section id="silences">
<h2>Silences</h2>
<ul>${lines.map((l) => `<li>${escapeHtml(l)}</li>`).join('\n')}</ul>
</section>`;
}

export function poolGatesHtml(p: PlanPool): string {
  const line = poolGatesLine(p);
  return line ? `\n<p class="gates">Health gates: ${escapeHtml(line)}</p>` : '';
}
