/**
 * `-o FORMAT` (DESIGN §2: `-o` always names a format, `--out` always a file): the plan
 * renderers behind one switch, and the YAML form of every JSON document a command prints.
 */
import type { Plan } from '../plan/types.ts';
import { renderText } from '../render/text.ts';
import { renderJson } from '../render/json.ts';
import { renderMarkdown } from '../render/markdown.ts';
import { renderHtml } from '../render/html/report.ts';
import { yamlText } from '../render/yaml.ts';

export const OUTPUT_FORMATS = ['text', 'json', 'yaml', 'markdown', 'html'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** `rehearse -o`: html is the plan report with the timeline drawn from the rehearsal. */
export const REHEARSAL_FORMATS = ['text', 'json', 'yaml', 'html'] as const;
export type RehearsalFormat = (typeof REHEARSAL_FORMATS)[number];

/** `status -o`: the lock and the progress of the last apply. */
export const STATUS_FORMATS = ['text', 'json', 'yaml'] as const;
/** `apply -o`: json is the event stream, one JSON object a line (NDJSON). */
export const APPLY_FORMATS = ['text', 'json'] as const;
/** `snapshot -o`: the snapshot file's format. */
export const SNAPSHOT_FORMATS = ['yaml', 'json'] as const;

export interface RenderOptions {
  color: boolean;
  full?: boolean;
}

export function renderPlan(plan: Plan, format: string, opts: RenderOptions): string {
  switch (format) {
    case 'json': return renderJson(plan);
    case 'yaml': return yamlOfJson(renderJson(plan));
    case 'markdown': return renderMarkdown(plan, { full: opts.full });
    case 'html': return renderHtml(plan, { full: opts.full });
    // Plain ASCII symbols whenever colour is off (pipes, CI logs, NO_COLOR).
    default: return renderText(plan, { color: opts.color, full: opts.full, ascii: !opts.color });
  }
}

/** The YAML of a JSON document a renderer made (so both formats carry the same, masked, value). */
export function yamlOfJson(json: string): string {
  return yamlText(JSON.parse(json));
}
