/** placeholder, replaced below */
import type { FleetPlan } from '../plan/fleet-types.ts';
import { renderFleetText } from './fleet-text.ts';

export function renderFleetMarkdown(fp: FleetPlan): string {
  return '```\n' + renderFleetText(fp) + '```\n';
}
