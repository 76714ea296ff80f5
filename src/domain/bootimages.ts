import type { RolloutSpec } from '../spec/types.ts';
import type { Diagnostic, SourceMap } from '../spec/diagnostics.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { BootImagesPlan } from '../plan/types.ts';
import type { DraftChange } from '../plan/planner.ts';

export interface BootImagesInput { spec: RolloutSpec; specMap: SourceMap | null; snapshot: ClusterSnapshot }
export interface BootImagesResult { changes: DraftChange[]; bootImages: BootImagesPlan; diagnostics: Diagnostic[] }

export function planBootImages(_input: BootImagesInput): BootImagesResult {
  return { changes: [], bootImages: { machineSets: [], controlPlaneMachineSet: null }, diagnostics: [] };
}
