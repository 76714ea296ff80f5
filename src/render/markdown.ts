/**
 * Markdown for a pull-request comment (docs/design.md §8). Pure: reads only the plan.
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
 *
 * This module assembles the comment within the limit; the head is src/render/markdown-head.ts,
 * the detail blocks src/render/markdown-details.ts, the escaping of data src/render/markdown-inline.ts.
 */
import type { Plan } from '../plan/types.ts';
import { forDisplay } from './secrets.ts';
import { formatCount, plural } from './format.ts';
import { escapeMarkdown } from './vocabulary.ts';
import { renderHead } from './markdown-head.ts';
import { renderDetails } from './markdown-details.ts';
import { ICON } from './icons.ts';

export { code, inlineHtml, tableHead, tableRow } from './markdown-inline.ts';
export { diagnosticItem } from './markdown-head.ts';

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
  return `<!-- bootcplan:plan spec=${markerKey(plan.spec.path)} -->`;
}

/** A marker's key (a path or a name): only characters that cannot end the HTML comment, no leading `./`. */
export function markerKey(s: string): string {
  return String(s)
    .replace(/^\.\//, '')
    .replace(/[^A-Za-z0-9._/-]/g, '_')
    .replace(/-{2,}/g, '-');
}

export function renderMarkdown(input: Plan, opts: MarkdownOptions = {}): string {
  const plan = forDisplay(input);
  const limit = opts.limit ?? MARKDOWN_LIMIT;
  // The marker from the path as given, as a workflow computes it (markdownMarker keeps only safe characters).
  const head = renderHead(plan, markdownMarker(input));
  const blocks = renderDetails(plan, opts);
  const tail = renderTail(plan);
  return assemble(head, blocks, tail, limit);
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
  const taken: { side: 'f' | 'b'; size: number }[] = [];
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
      taken.push({ side: takeFront ? 'f' : 'b', size: b.length });
    } else if (takeFront) frontOpen = false;
    else backOpen = false;
  }
  if (i > j) return withinLimit([head, ...front, ...back, tail].join('\n'), limit);
  // Make room for the note by giving back the blocks taken last.
  const noteFor = (n: number) =>
    `> ${ICON.cut} **${plural(n, 'detail section')} left out here** to keep this comment under ${formatCount(limit)} characters. ` +
    'Run `bootcplan plan` or `bootcplan plan -o html` for everything.\n';
  while (noteFor(blocks.length).length + 1 > budget) {
    const last = taken.pop();
    if (!last) break;
    budget += last.size + 1;
    if (last.side === 'f') {
      front.pop();
      i--;
    } else {
      back.shift();
      j++;
    }
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
  const note = `\n> ${ICON.cut} cut at the comment size limit\n`;
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
