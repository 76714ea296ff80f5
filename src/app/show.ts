/**
 * `bootcplan show PLANFILE` (docs/design.md §2): a saved plan rendered. It is shown only under the id it
 * hashes to, as apply verifies it (plan/saved/seal.ts): an edited file would otherwise be
 * reviewed under the id of the plan it no longer is (exit 3).
 */
import { EXIT } from '../base/errors.ts';
import { checkPlanSeal } from '../plan/saved/seal.ts';
import { useColor } from '../render/format.ts';
import { renderPlan, type OutputFormat } from '../render/formats.ts';
import type { CommandResult, Ports } from './ports.ts';
import { readPlanFile } from './saved-plan.ts';

export interface ShowOptions {
  output: OutputFormat;
  full?: boolean;
}

export async function showCommand(ports: Ports, file: string, opts: ShowOptions): Promise<CommandResult> {
  const { io } = ports;
  const plan = readPlanFile(ports, file);
  checkPlanSeal(plan);
  io.stdout(await renderPlan(plan, opts.output, { color: useColor(io, io.stdoutIsTTY), full: opts.full }));
  return { exitCode: EXIT.ok };
}
