/**
 * `fleet render argocd` (docs/gitops.md "Fleets from an Argo CD hub"): a sealed fleet plan as files for
 * an Argo CD hub. `applicationset.yaml` is an ApplicationSet (argoproj.io/v1alpha1) whose list
 * generator makes one Application per cluster that rolls in a batch, labelled with its batch,
 * and whose progressive sync (strategy RollingSync) has one step per batch in the fleet's
 * order: a canary's step has maxUpdate 1, the other steps maxUpdate = the fleet's
 * maxConcurrency. Argo CD starts a step only when every Application of the steps before it is
 * Healthy (argoproj/argo-cd applicationset/progressivesync/progressive_sync.go getAppsToSync),
 * and an Application is Healthy only when its Rollout is applied (health/rollout.lua): a
 * Degraded canary stops the rollout. Each cluster's directory (`clusters/<name>/`) is a
 * kustomization with its sealed plan, the Fleet file, its Rollout object and the apply Job and
 * CronJob (argocd-cluster.ts). With --setup-path, `setup/kustomization.yaml` wraps that
 * directory (bootcplan's CRD, namespace and RBAC) and marks every object of it Prune=false,
 * Delete=false, as examples/kustomization.yaml does for the single-cluster Application: deleting
 * an Application (or the ApplicationSet) removes the cluster's Jobs, CronJob, ConfigMaps and
 * Rollout object, never the CRD (every Rollout), the namespace (the lock, the progress record)
 * or the RBAC. Pure: the CLI reads the inputs and writes the files.
 */
import type { FleetPlan, FleetClusterPlan } from './plan-types.ts';
import type { RolloutSpec } from '../rollout-spec/types.ts';
import { isDns1123Label, isDns1123Subdomain, DNS1123_LABEL_MAX } from '../domain/kube-names.ts';
import { hasErrors } from '../base/diagnostics.ts';
import { BOOTCPLAN_NAMESPACE } from '../cluster/types.ts';
import { yamlText } from '../render/yaml.ts';
import { clusterFiles, type ClusterFileInput } from './argocd-cluster.ts';

/** The label the generator puts on each Application: its 1-based batch (a step's matchExpressions select it). */
export const FLEET_BATCH_LABEL = 'bootcplan.dev/fleet-batch';
/** The label naming the cluster (a DNS-1123 label, so a valid label value). */
const FLEET_CLUSTER_LABEL = 'bootcplan.dev/fleet-cluster';
/**
 * The sync options that keep an object when it leaves git or its Application is deleted (Argo CD
 * docs, user-guide/sync-options.md "No Prune Resources", "No Resource Deletion").
 */
export const KEEP_SYNC_OPTIONS = 'Prune=false,Delete=false';
/** Where the render wraps --setup-path, relative to the output directory. */
const SETUP_DIR = 'setup';
/** Annotation on the ApplicationSet: the fleet plan it was rendered from. */
const FLEET_PLAN_ANNOTATION = 'bootcplan.dev/fleet-plan';

export interface ArgoFleetOptions {
  /** The git repository Argo CD reads (spec.sources[].repoURL). */
  repoURL: string;
  /** targetRevision: the branch, tag or commit holding the rendered files. */
  revision: string;
  /** Where the rendered directory sits in that repository (POSIX, relative to its root). */
  path: string;
  /** Optional: a directory of that repository with bootcplan's CRD and RBAC (as examples/), synced first. */
  setupPath: string | null;
  /** The Argo CD namespace the ApplicationSet goes into (OpenShift GitOps: openshift-gitops). */
  namespace: string;
  project: string;
  /** The bootcplan container image of the apply Job and CronJob. */
  image: string;
  /** ApplicationSet name; each Application is `<name>-<cluster>`. */
  name: string;
}

export interface ArgoFleetInput {
  fleetPlan: FleetPlan;
  /** The Fleet file's bytes (each cluster's apply re-plans from it; the CLI checked its sha256). */
  fleetText: string;
  /** Each batched cluster's effective Rollout spec (the Rollout object apply writes the status of). */
  rollouts: Record<string, RolloutSpec>;
}

export interface RenderedFile {
  /** Relative to the output directory, POSIX. */
  path: string;
  content: string;
}

export interface ArgoFleetRender {
  files: RenderedFile[];
  /** One per generated Application, in step order. */
  applications: { cluster: string; application: string; batch: number; step: number }[];
  /** Clusters with no Application: in no batch (nothing to change, or no plan it could roll). */
  skipped: { cluster: string; reason: string }[];
  /** Strategy fields Argo CD's RollingSync has no counterpart for. */
  notes: string[];
}

/** Control characters, DEL, C1 and format characters: never in a name or path bootcplan writes for another tool. */
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/u;

/** A relative POSIX path inside a repository: no leading '/', no '..' or empty segment, no backslash. */
function isRepoPath(p: unknown): p is string {
  if (typeof p !== 'string' || p === '' || INVISIBLE.test(p) || p.includes('\\') || p.startsWith('/')) return false;
  return p.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

const show = (v: unknown) => JSON.stringify(v)?.slice(0, 80) ?? String(v);

/** Problems that make the render refuse (user input: the fleet plan, the flags). Empty when it may render. */
export function argoRenderProblems(input: ArgoFleetInput, o: ArgoFleetOptions): string[] {
  const fp = input.fleetPlan;
  const out: string[] = [];
  if (!isDns1123Subdomain(o.name) || o.name.length > DNS1123_LABEL_MAX - 2)
    out.push(`ApplicationSet name ${show(o.name)} is not a DNS-1123 name of at most ${DNS1123_LABEL_MAX - 2} characters`);
  if (!isDns1123Label(o.namespace)) out.push(`namespace ${show(o.namespace)} is not a DNS-1123 label`);
  if (!isDns1123Subdomain(o.project)) out.push(`project ${show(o.project)} is not a DNS-1123 name`);
  for (const [flag, v] of [
    ['--repo-url', o.repoURL],
    ['--revision', o.revision],
    ['--image', o.image],
  ] as const) {
    if (!v || INVISIBLE.test(v) || /\s/.test(v)) out.push(`${flag} ${show(v)} is empty or holds white space or control characters`);
  }
  if (!isRepoPath(o.path)) out.push(`--path ${show(o.path)} is not a relative path inside the repository`);
  if (o.setupPath !== null && !isRepoPath(o.setupPath)) out.push(`--setup-path ${show(o.setupPath)} is not a relative path inside the repository`);
  if (!isRepoPath(fp.fleet.path)) out.push(`the Fleet file's path ${show(fp.fleet.path)} is not a relative path inside the repository`);
  if (hasErrors(fp.diagnostics)) out.push('the Fleet spec has errors: fix them and plan again');
  const byName = new Map(fp.clusters.map((c) => [c.name, c]));
  for (const b of fp.batches) {
    for (const name of b.clusters) {
      const c = byName.get(name);
      if (!c) {
        out.push(`batch ${b.index} names cluster ${show(name)}, which the fleet plan does not hold`);
        continue;
      }
      out.push(...clusterProblems(c, b.index, input, o));
    }
  }
  for (const c of fp.clusters) {
    if (c.canary && (c.error || !c.plan || hasErrors(c.plan.diagnostics)))
      out.push(`canary ${show(c.name)} has no plan without errors: the fleet cannot roll out`);
  }
  return out;
}

function clusterProblems(c: FleetClusterPlan, batch: number, input: ArgoFleetInput, o: ArgoFleetOptions): string[] {
  const out: string[] = [];
  const name = show(c.name);
  if (!isDns1123Label(c.name))
    out.push(
      `cluster ${name} is not a DNS-1123 label (lower-case letters, digits and '-', at most 63): it names a directory, a label value and an Application`,
    );
  else if (!isDns1123Subdomain(`${o.name}-${c.name}`)) out.push(`Application name ${show(`${o.name}-${c.name}`)} is longer than ${253} characters`);
  if (c.batch !== batch) out.push(`cluster ${name} sits in batch ${batch} but says batch ${show(c.batch)}`);
  if (!c.plan || c.error || hasErrors(c.plan.diagnostics) || c.plan.reviewOnly)
    out.push(`cluster ${name} is in batch ${batch} without a plan that can be applied`);
  else if (c.plan.spec.path !== input.fleetPlan.fleet.path || c.plan.spec.sha256 !== input.fleetPlan.fleet.sha256)
    out.push(`cluster ${name}: its plan was not made from the fleet plan's Fleet file`);
  // In the cluster, apply reads the Fleet file mounted from the ConfigMap: there is no git.
  else if (c.plan.spec.ref !== null)
    out.push(
      `cluster ${name}: its plan was made from git ref ${show(c.plan.spec.ref)}; the in-cluster apply reads the Fleet file from the working tree (plan it with bootcplan fleet plan without --ref)`,
    );
  const d = c.destination ?? { name: null, server: null };
  if (d.name && d.server) out.push(`cluster ${name}: destination has both name and server (Argo CD takes one)`);
  for (const v of [d.name, d.server])
    if (v !== null && (typeof v !== 'string' || INVISIBLE.test(v))) out.push(`cluster ${name}: destination ${show(v)} holds control characters`);
  const r = input.rollouts[c.name];
  if (!r || !isDns1123Subdomain(r.metadata?.name)) out.push(`cluster ${name}: no effective Rollout spec with a DNS-1123 name`);
  return out;
}

/** The list generator's element of one cluster (every value a string: goTemplate fields). */
function elementOf(c: FleetClusterPlan, batch: number, o: ArgoFleetOptions) {
  const d = c.destination ?? { name: null, server: null };
  return {
    cluster: c.name,
    application: `${o.name}-${c.name}`,
    batch: String(batch),
    path: `${o.path}/clusters/${c.name}`,
    // Argo CD takes one of name and server; an empty string is "not set" (util/argo GetDestinationServer).
    destinationName: d.server ? (d.name ?? '') : (d.name ?? c.name),
    destinationServer: d.server ?? '',
  };
}

function sourcesOf(o: ArgoFleetOptions) {
  const src = (path: string) => ({ repoURL: o.repoURL, targetRevision: o.revision, path });
  return [...(o.setupPath !== null ? [src(`${o.path}/${SETUP_DIR}`)] : []), src('{{.path}}')];
}

/** setup/kustomization.yaml: --setup-path (a path in the repository), every object kept (see the header). */
function setupKustomization(o: ArgoFleetOptions, setupPath: string) {
  const up = `${o.path}/${SETUP_DIR}`
    .split('/')
    .map(() => '..')
    .join('/');
  return {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: [`${up}/${setupPath}`],
    commonAnnotations: { 'argocd.argoproj.io/sync-wave': '-1', 'argocd.argoproj.io/sync-options': KEEP_SYNC_OPTIONS },
  };
}

function applicationSet(input: ArgoFleetInput, o: ArgoFleetOptions, elements: ReturnType<typeof elementOf>[]) {
  const fp = input.fleetPlan;
  const steps = fp.batches.map((b) => ({
    matchExpressions: [{ key: FLEET_BATCH_LABEL, operator: 'In', values: [String(b.index)] }],
    maxUpdate: b.kind === 'canary' ? 1 : fp.strategy.maxConcurrency.resolved,
  }));
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: {
      name: o.name,
      namespace: o.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'bootcplan' },
      annotations: { [FLEET_PLAN_ANNOTATION]: fp.id, 'bootcplan.dev/fleet-file': fp.fleet.path },
    },
    spec: {
      goTemplate: true,
      goTemplateOptions: ['missingkey=error'],
      generators: [{ list: { elements } }],
      strategy: { type: 'RollingSync', rollingSync: { steps } },
      // Argo CD's default, stated: each generated Application carries resources-finalizer, as
      // examples/argocd/application.yaml does; what must outlive it is marked Delete=false.
      syncPolicy: { preserveResourcesOnDeletion: false },
      template: {
        metadata: {
          name: '{{.application}}',
          labels: { [FLEET_BATCH_LABEL]: '{{.batch}}', [FLEET_CLUSTER_LABEL]: '{{.cluster}}', 'app.kubernetes.io/managed-by': 'bootcplan' },
        },
        spec: {
          project: o.project,
          destination: { name: '{{.destinationName}}', server: '{{.destinationServer}}', namespace: BOOTCPLAN_NAMESPACE },
          sources: sourcesOf(o),
          // No `automated`: RollingSync syncs each step itself (and turns automated sync off).
          syncPolicy: {
            syncOptions: ['CreateNamespace=false'],
            retry: { limit: 3, backoff: { duration: '30s', factor: 2, maxDuration: '5m' } },
          },
        },
      },
    },
  };
}

const HEADER = (fp: FleetPlan) =>
  `# Rendered by \`bootcplan fleet render argocd\` from fleet plan ${fp.id} (Fleet ${fp.fleet.path}).\n` +
  '# Progressive syncs must be enabled on the ApplicationSet controller (--enable-progressive-syncs,\n' +
  '# or applicationsetcontroller.enable.progressive.syncs: "true" in argocd-cmd-params-cm).\n';

function notesOf(fp: FleetPlan): string[] {
  const s = fp.strategy;
  const out: string[] = [];
  if (s.batchSoakSeconds > 0)
    out.push(`batchSoakSeconds ${s.batchSoakSeconds} is not enforced by Argo CD: a RollingSync step starts as soon as the one before is Healthy`);
  if (s.batchTimeoutSeconds !== null)
    out.push(
      `batchTimeoutSeconds ${s.batchTimeoutSeconds} (${s.batchTimeoutAction}) is not enforced by Argo CD: a step that never turns Healthy holds the rest (as "abort"); watch the ApplicationSet's status`,
    );
  return out;
}

export function renderFleetArgo(input: ArgoFleetInput, o: ArgoFleetOptions): ArgoFleetRender {
  const problems = argoRenderProblems(input, o);
  if (problems.length) throw new Error(`fleet render argocd: ${problems.join('; ')}`);
  const fp = input.fleetPlan;
  const byName = new Map(fp.clusters.map((c) => [c.name, c]));
  const elements: ReturnType<typeof elementOf>[] = [];
  const applications: ArgoFleetRender['applications'] = [];
  const files: RenderedFile[] = [];
  fp.batches.forEach((b, step) => {
    for (const name of b.clusters) {
      const c = byName.get(name);
      if (!c?.plan) throw new Error(`internal: cluster ${name} of batch ${b.index} has no plan`); // a batch holds planned clusters only
      const el = elementOf(c, b.index, o);
      elements.push(el);
      applications.push({ cluster: name, application: el.application, batch: b.index, step: step + 1 });
      const ci: ClusterFileInput = {
        cluster: name,
        plan: c.plan,
        fleetPath: fp.fleet.path,
        fleetText: input.fleetText,
        rollout: input.rollouts[name],
        dir: el.path,
        image: o.image,
      };
      for (const f of clusterFiles(ci)) files.push({ path: `clusters/${name}/${f.path}`, content: f.content });
    }
  });
  if (o.setupPath !== null) {
    const head = `# bootcplan's setup (${o.setupPath}), synced first by every Application; its objects are never pruned\n# or deleted with an Application (bootcplan fleet render argocd, fleet plan ${fp.id}).\n`;
    files.unshift({ path: `${SETUP_DIR}/kustomization.yaml`, content: head + yamlText(setupKustomization(o, o.setupPath)) });
  }
  files.unshift({ path: 'applicationset.yaml', content: HEADER(fp) + yamlText(applicationSet(input, o, elements)) });
  const skipped = fp.clusters
    .filter((c) => c.batch === null)
    .map((c) => ({
      cluster: c.name,
      reason: c.error ? `no plan (${c.error.code}): ${c.error.message}` : c.plan && hasErrors(c.plan.diagnostics) ? 'its plan has errors' : 'nothing to change',
    }));
  return { files, applications, skipped, notes: notesOf(fp) };
}
