/**
 * `bootcplan fleet render argocd FLEETPLAN --out-dir DIR` (docs/gitops.md "Fleets from an Argo CD hub"):
 * the sealed fleet plan (refused when modified: exit 3), the Fleet file it was made from (must
 * still hash to what it recorded: exit 3; the fleet plan's clusters, destinations, strategy and
 * batches must be what that Fleet re-derives: exit 3), each batched cluster's effective spec; then
 * fleet/argocd.ts makes the files and render-dir.ts writes them: DIR/applicationset.yaml
 * and DIR/clusters/<cluster>/, with the record of what it wrote (DIR/.bootcplan-render); a
 * previous render is replaced only where unchanged, and a file it did not write is never touched.
 */
import { existsSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { EXIT, InputError } from '../base/errors.ts';
import type { RolloutSpec } from '../rollout-spec/types.ts';
import { effectiveSpecs } from '../fleet/spec-load.ts';
import type { FleetPlan } from '../fleet/plan-types.ts';
import { renderFleetArgo, argoRenderProblems, type ArgoFleetOptions, type ArgoFleetInput } from '../fleet/argocd.ts';
import { checkFleetPlanSeal, checkFleetPlanAgainstFleet } from '../fleet/plan-verify.ts';
import { forDisplay } from '../render/secrets.ts';
import type { CommandResult, InputPorts, Ports } from './ports.ts';
import { verifyPlanSpec, planSpecFile } from './saved-plan.ts';
import { readFleet, requireValidFleet, readFleetPlanFile } from './fleet-inputs.ts';
import { writeRender } from './render-dir.ts';

export interface RenderArgoOptions {
  /** Where to write applicationset.yaml and clusters/<name>/. */
  outDir: string;
  /** The git repository Argo CD reads the rendered files from. */
  repoUrl: string;
  /** The branch, tag or commit Argo CD syncs (targetRevision). */
  revision: string;
  /** The output directory's path in that repository (default: `outDir` relative to the repository root). */
  path?: string;
  /** A directory of that repository with bootcplan's CRD and RBAC, synced first. */
  setupPath?: string;
  /** The Argo CD namespace of the ApplicationSet. */
  namespace: string;
  /** The Argo CD project of the Applications. */
  project: string;
  /** The bootcplan container image the apply Job and CronJob run. */
  image: string;
  /** The ApplicationSet name (default: bootcplan-<fleet name>). */
  name?: string;
}

/** The Fleet file of the fleet plan, verified by hash, and each cluster's effective spec. */
function fleetInputs(ports: InputPorts, fp: FleetPlan): ArgoFleetInput {
  const sample = fp.clusters.find((c) => c.batch !== null && c.plan)?.plan;
  if (!sample) return { fleetPlan: fp, fleetText: '', rollouts: {} };
  // Each cluster plan records the Fleet file (path, commit, sha256): it must still be what was planned.
  verifyPlanSpec(ports, sample);
  const read = readFleet(ports, planSpecFile(ports, sample), sample.spec.ref ? (sample.spec.commit ?? sample.spec.ref) : undefined);
  requireValidFleet(read);
  const fleet = read.loaded.fleet;
  checkFleetPlanAgainstFleet(fp, fleet, read.info.path);
  const specs = effectiveSpecs(fleet, read.loaded.map);
  const rollouts: Record<string, RolloutSpec> = {};
  fleet.spec.clusters.forEach((c, i) => {
    rollouts[c.name] = specs[i].spec;
  });
  return { fleetPlan: fp, fleetText: read.text, rollouts };
}

/** The output directory's path in the repository, when --path is not given. */
function repoPathOf({ git }: InputPorts, outDir: string): string {
  const abs = resolve(outDir);
  let probe = abs;
  while (!existsSync(probe)) probe = dirname(probe);
  const top = git.run(['rev-parse', '--show-toplevel'], probe)?.trim();
  const rel = top ? relative(top, abs) : '';
  if (!top || rel === '' || rel.startsWith('..'))
    throw new InputError(
      `--out-dir ${outDir} is not a directory inside a git repository`,
      [],
      'pass --path: where the directory sits in the repository Argo CD reads',
    );
  return rel.split(sep).join('/');
}

/** `fleet render argocd FLEETPLAN`. */
export async function fleetRenderArgoCommand(ports: Ports, file: string, opts: RenderArgoOptions): Promise<CommandResult> {
  const { io } = ports;
  const fp = readFleetPlanFile(ports, file);
  checkFleetPlanSeal(fp);
  if (!fp.batches.length) {
    io.stderr(`fleet plan ${fp.id}: no cluster has anything to roll out; nothing written\n`);
    return { exitCode: EXIT.ok };
  }
  const o: ArgoFleetOptions = {
    repoURL: opts.repoUrl,
    revision: opts.revision,
    path: opts.path ?? repoPathOf(ports, opts.outDir),
    setupPath: opts.setupPath ?? null,
    namespace: opts.namespace,
    project: opts.project,
    image: opts.image,
    name: opts.name ?? `bootcplan-${fp.fleet.name}`,
  };
  const input = fleetInputs(ports, fp);
  const problems = argoRenderProblems(input, o);
  if (problems.length) {
    throw new InputError(
      `fleet plan ${fp.id} cannot be rendered for Argo CD: ${problems.slice(0, 20).join('; ')}${problems.length > 20 ? `; and ${problems.length - 20} more` : ''}`,
      [],
      'fix the Fleet (cluster names are DNS-1123 labels) or the flags, and plan again',
    );
  }
  const r = renderFleetArgo(input, o);
  writeRender(ports.files, opts.outDir, r.files);
  const steps = fp.batches.map(
    (b, i) => `  step ${i + 1} (${b.kind === 'canary' ? 'canary, maxUpdate 1' : `maxUpdate ${fp.strategy.maxConcurrency.resolved}`}): ${b.clusters.join(', ')}`,
  );
  const n = r.applications.length;
  const head = `wrote ApplicationSet ${o.name} (${n} Application${n === 1 ? '' : 's'}, ${steps.length} RollingSync step${steps.length === 1 ? '' : 's'}) and ${n} cluster director${n === 1 ? 'y' : 'ies'} to ${opts.outDir}`;
  io.stdout([head, ...steps].map((l) => forDisplay(l) + '\n').join(''));
  // The line break after forDisplay: it escapes one inside the text (as \u000a), which is the point.
  for (const s of r.skipped) io.stderr(forDisplay(`note: cluster ${s.cluster} has no Application: ${s.reason}`) + '\n');
  for (const n of r.notes) io.stderr(forDisplay(`note: ${n}`) + '\n');
  io.stderr('note: progressive syncs must be enabled on the ApplicationSet controller (--enable-progressive-syncs)\n');
  return { exitCode: EXIT.ok };
}
