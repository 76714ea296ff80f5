/**
 * The title of the spec diff (`plan --base`, docs/design.md §6 `specChanges`): what changed in the Rollout file since the base
 * commit, as the plan's specChanges recorded it. Pure; shared by the text, Markdown and HTML
 * outputs.
 */
import type { Plan } from '../plan/types.ts';

/** One line over the spec diff, or null when the plan has none. */
export function specChangesTitle(plan: Plan): string | null {
  const sc = plan.specChanges;
  if (!sc) return null;
  const commit = String(sc.baseCommit).slice(0, 12);
  if (!sc.unified) return `Spec unchanged since ${sc.base} (${commit}).`;
  return `Spec changes since ${sc.base} (${commit}): ${sc.added} added, ${sc.removed} removed lines in ${sc.path}.`;
}
