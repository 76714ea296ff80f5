/**
 * `-o FORMAT` for plans (DESIGN §2: `-o` always names a format): the renderers behind one
 * switch, each loaded only when its format is asked for (start-up: README "Performance").
 */
import type { Plan } from '../plan/types.ts';

export const OUTPUT_FORMATS = ['text', 'json', 'markdown', 'html'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** `rehearse -o`: html is the plan report with the timeline drawn from the rehearsal. */
export const REHEARSAL_FORMATS = ['text', 'json', 'html'] as const;
export type RehearsalFormat = (typeof REHEARSAL_FORMATS)[number];

export interface RenderOptions {
  color: boolean;
  full?: boolean;
}

export async function renderPlan(plan: Plan, format: string, opts: RenderOptions): Promise<string> {
  switch (format) {
    case 'json': return (await import('../render/json.ts')).renderJson(plan);
    case 'markdown': return (await import('../render/markdown.ts')).renderMarkdown(plan, { full: opts.full });
    case 'html': return (await import('../render/html/report.ts')).renderHtml(plan, { full: opts.full });
    // Plain ASCII symbols whenever colour is off (pipes, CI logs, NO_COLOR).
    default: return (await import('../render/text.ts')).renderText(plan, { color: opts.color, full: opts.full, ascii: !opts.color });
  }
}
