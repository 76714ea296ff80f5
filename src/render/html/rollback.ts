/**
 * The HTML report's rollback section (docs/apply.md "Rollback"): a rollback plan's headline and
 * facts, and each pool's way back (render/rollback.ts says what; this escapes it). Pure.
 */
import type { Plan } from '../../plan/types.ts';
import { escapeHtml } from '../vocabulary.ts';
import { rollbackHeadline, rollbackFacts, poolRollbackRows, FORWARD_WAY_BACK } from '../rollback.ts';

export function rollbackSection(plan: Plan): string {
  const head = rollbackHeadline(plan);
  const rows = poolRollbackRows(plan);
  if (!head && !rows.length) return '';
  const parts = ['<section id="rollback">'];
  parts.push(`<h2>${escapeHtml(head ?? FORWARD_WAY_BACK)}</h2>`);
  const facts = rollbackFacts(plan);
  if (facts.length) parts.push(`<ul>${facts.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul>`);
  parts.push('<table><thead><tr><th>Pool</th><th>Back to</th><th>Via</th><th>Download again</th></tr></thead><tbody>');
  for (const r of rows) {
    const to = r.to === null ? `<b>none</b>: ${escapeHtml(r.refusal ?? '')}` : `<span class="mono">${escapeHtml(r.to)}</span>`;
    parts.push(`<tr><td>${escapeHtml(r.pool)}</td><td>${to}</td><td>${escapeHtml(r.via)}</td><td>${escapeHtml(r.download)}</td></tr>`);
  }
  parts.push('</tbody></table></section>');
  return parts.join('\n');
}

/** The chart's rollback lanes and rule (a rehearsal with a rollback): only in reports that draw one. */
export const ROLLBACK_CSS =
  'svg .lane.rollback{fill:#fbe9e7}svg .rollback-rule{stroke:#c62828;stroke-width:2;stroke-dasharray:6 3}svg .rollback-label{font-size:11px;fill:#c62828}.sw.rollback{background:#fbe9e7;border:2px dashed #c62828}';
