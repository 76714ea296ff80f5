/**
 * `-o FORMAT` (docs/design.md §2: `-o` always names a format, `--out` always a file): the plan
 * renderers behind one switch, each loaded only when its format is asked for (start-up:
 * docs/performance.md), and the YAML form of every JSON document a command prints.
 */
import type { Plan } from '../plan/types.ts';
import { yamlText } from './yaml.ts';

/**
 * The data formats every command that prints data offers, in this order (docs/cli.md
 * "Conventions"): the JSON document, and the same value as YAML. The event streams of apply and
 * fleet apply are NDJSON with json, one event a line, and a YAML stream with yaml, one document
 * (`---`) an event (ndjsonAsYaml).
 */
export const DATA_FORMATS = ['json', 'yaml'] as const;

export const OUTPUT_FORMATS = ['text', ...DATA_FORMATS, 'markdown', 'html'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * `rehearse -o`: markdown is the rehearsal for a pull-request comment (its waits for windows in
 * the timeline), html the plan report with the timeline drawn from the rehearsal.
 */
export const REHEARSAL_FORMATS = ['text', ...DATA_FORMATS, 'markdown', 'html'] as const;
export type RehearsalFormat = (typeof REHEARSAL_FORMATS)[number];

/** `status -o`: the lock and the progress of the last apply. */
export const STATUS_FORMATS = ['text', ...DATA_FORMATS] as const;
/** `apply -o`: json is the event stream, one JSON object a line (NDJSON); yaml the same events, a YAML document each. */
export const APPLY_FORMATS = ['text', ...DATA_FORMATS] as const;
/** `snapshot -o`: the snapshot file's format. */
export const SNAPSHOT_FORMATS = ['yaml', 'json'] as const; // a snapshot file is YAML first (kubectl get -o yaml)

interface RenderOptions {
  color: boolean;
  full?: boolean;
}

export async function renderPlan(plan: Plan, format: string, opts: RenderOptions): Promise<string> {
  switch (format) {
    case 'json':
      return (await import('../plan/saved/writer.ts')).planFileText(plan);
    case 'yaml':
      return yamlOfJson((await import('../plan/saved/writer.ts')).planFileText(plan));
    case 'markdown':
      return (await import('./markdown.ts')).renderMarkdown(plan, { full: opts.full });
    case 'html':
      return (await import('./html/report.ts')).renderHtml(plan, { full: opts.full });
    // Plain ASCII symbols whenever colour is off (pipes, CI logs, NO_COLOR).
    default:
      return (await import('./text.ts')).renderText(plan, { color: opts.color, full: opts.full, ascii: !opts.color });
  }
}

/** The YAML of a JSON document a renderer made (so both formats carry the same, masked, value). */
export function yamlOfJson(json: string): string {
  return yamlText(JSON.parse(json));
}

/** NDJSON lines (an event stream) as a YAML stream: each line one document, after `---`, as `kubectl get -w -o yaml` prints. */
export function ndjsonAsYaml(text: string): string {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => `---\n${yamlOfJson(line)}`)
    .join('');
}
