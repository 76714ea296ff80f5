/**
 * The committed plans of the GitOps examples (examples/argocd, examples/flux), built in-process
 * as the plan workflow would make them in a repository laid out as docs/gitops.md "Repository
 * layout" says: the spec at clusters/prod-east/bootcplan.yaml of that repository, so the plan
 * records that path, the one the example Jobs mount it at. No commit is recorded: the example
 * was not planned at a commit of your repository (a plan made outside git, read from the
 * working directory, which is the mount's root in the Job). The cluster is the demo snapshot.
 */
import { readFileSync } from 'node:fs';
import { parseRolloutSpec } from '../src/rollout-spec/load.ts';
import { parseSnapshot } from '../src/cluster/snapshot-file.ts';
import { buildPlan } from '../src/plan/planner.ts';
import type { Plan } from '../src/plan/types.ts';

const root = new URL('../', import.meta.url);

/** The layout's paths, relative to the repository root (as plan.yml's SPEC and PLAN). */
export const LAYOUT = { spec: 'clusters/prod-east/bootcplan.yaml', plan: 'clusters/prod-east/plans/bootcplan.json' } as const;

/** The trees whose root is a repository laid out as documented. */
export const EXAMPLE_TREES = ['examples/argocd', 'examples/flux'] as const;

export function examplePlans(): { file: string; plan: Plan }[] {
  const clusterPath = 'examples/cluster.yaml';
  const snap = parseSnapshot(readFileSync(new URL(clusterPath, root), 'utf8'), clusterPath);
  if (!snap.snapshot) throw new Error('the example cluster is invalid');
  return EXAMPLE_TREES.map((tree) => {
    const spec = parseRolloutSpec(readFileSync(new URL(`${tree}/${LAYOUT.spec}`, root), 'utf8'), LAYOUT.spec);
    if (!spec.spec) throw new Error(`${tree}/${LAYOUT.spec} is invalid`);
    const plan = buildPlan({
      spec: spec.spec,
      specMap: spec.map,
      snapshot: snap.snapshot!,
      specDiagnostics: spec.diagnostics,
      specInfo: { name: spec.spec.metadata.name, path: LAYOUT.spec, ref: null, commit: null, sha256: spec.sha256, dirty: null },
    });
    return { file: `${tree}/${LAYOUT.plan}`, plan };
  });
}
