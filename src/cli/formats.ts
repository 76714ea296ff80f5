/** `-o FORMAT` for plans (DESIGN §2: `-o` always names a format): the renderers behind one switch. */
import type { Plan } from '../plan/types.ts';
import { renderText } from '../render/text.ts';
import { renderJson } from '../render/json.ts';
import { renderMarkdown } from '../render/markdown.ts';
import { renderHtml } from '../render/html/report.ts';

export const OUTPUT_FORMATS = ['text', 'json', 'markdown', 'html'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** `rehearse -o`: html is the plan report with the timeline drawn from the rehearsal. */
export const REHEARSAL_FORMATS = ['text', 'json', 'html'] as const;
export type RehearsalFormat = (typeof REHEARSAL_FORMATS)[number];

export interface RenderOptions {
  color: boolean;
  full?: boolean;
}

export function renderPlan(plan: Plan, format: string, opts: RenderOptions): string {
  switch (format) {
    case 'json': return renderJson(plan);
    case 'markdown': return renderMarkdown(plan, { full: opts.full });
    case 'html': return renderHtml(plan, { full: opts.full });
    // Plain ASCII symbols whenever colour is off (pipes, CI logs, NO_COLOR).
    default: return renderText(plan, { color: opts.color, full: opts.full, ascii: !opts.color });
  }
}
