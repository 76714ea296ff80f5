/** The plan as JSON (DESIGN §6): the plan itself, with secrets masked. Pure. */
import type { Plan } from '../plan/types.ts';
import { maskSecrets } from './secrets.ts';

export function renderJson(plan: Plan): string {
  return JSON.stringify(maskSecrets(plan), null, 2) + '\n';
}
