/**
 * The plan as JSON (DESIGN §6): the plan itself, with secrets masked. Everything else stays
 * exact (image references with their credentials too: apply writes them); `jsonText` only
 * writes as JSON escapes the characters a terminal or viewer would act on. Pure.
 */
import type { Plan } from '../plan/types.ts';
import { maskSecrets } from '../base/secret-mask.ts';
import { jsonText } from '../base/json-text.ts';

export function renderJson(plan: Plan): string {
  return jsonText(maskSecrets(plan), 2) + '\n';
}
