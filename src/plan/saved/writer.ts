/**
 * The saved-plan module's writer: the text of a plan file (`plan --out`; `-o json` prints the
 * same): the plan itself as JSON (docs/design.md §6), with secret payloads masked (base/secret-mask.ts).
 * Everything else stays exact (image references with their credentials too: apply writes
 * them); `jsonText` only writes as JSON escapes the characters a terminal or viewer would act
 * on, so ./reader.ts reads back the same value. Pure.
 */
import type { Plan } from '../types.ts';
import { maskSecrets } from '../../base/secret-mask.ts';
import { jsonText } from '../../base/json-text.ts';

export function planFileText(plan: Plan): string {
  return jsonText(maskSecrets(plan), 2) + '\n';
}
