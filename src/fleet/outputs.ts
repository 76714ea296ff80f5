/**
 * `-o FORMAT` of the fleet commands (docs/design.md §2: `-o` always names a format): their closed
 * lists, and the fleet plan renderers behind one switch, each loaded only when its format is
 * asked for (as render/formats.ts does for one plan).
 */
import type { FleetPlan } from './plan-types.ts';
import { DATA_FORMATS } from '../render/formats.ts';

/** `fleet plan -o`, `fleet show -o`. */
export const FLEET_FORMATS = ['text', ...DATA_FORMATS, 'markdown'] as const;
export type FleetFormat = (typeof FLEET_FORMATS)[number];

/** `fleet apply -o`: json is the fleet events and each cluster's apply events as NDJSON; yaml the same, a YAML document each. */
export const FLEET_APPLY_FORMATS = ['text', ...DATA_FORMATS] as const;

/** `fleet rehearse -o`: markdown for a pull-request comment, html the report with the chart of batches over time. */
export const FLEET_REHEARSAL_FORMATS = ['text', ...DATA_FORMATS, 'markdown', 'html'] as const;

export async function renderFleetPlan(fp: FleetPlan, format: string, color: boolean): Promise<string> {
  switch (format) {
    case 'json':
      return (await import('./plan-text.ts')).renderFleetJson(fp);
    case 'yaml':
      return (await import('../render/formats.ts')).yamlOfJson((await import('./plan-text.ts')).renderFleetJson(fp));
    case 'markdown':
      return (await import('./plan-markdown.ts')).renderFleetMarkdown(fp);
    default:
      return (await import('./plan-text.ts')).renderFleetText(fp, { color });
  }
}
