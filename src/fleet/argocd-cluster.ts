/**
 * One cluster's directory of `fleet render argocd` (docs/gitops.md "Fleets from an Argo CD hub"), the
 * single-cluster example (examples/argocd) made for a fleet cluster:
 * - `plan.json`: the cluster's sealed plan, as `plan --out` writes it; `fleet.yaml`: the Fleet
 *   file, byte for byte (apply checks its sha256 and re-plans from it for this cluster);
 * - `kustomization.yaml`: both files in ConfigMap `bootcplan-rollout-<hash>` (sync wave 1);
 * - `rollout.yaml`: the cluster's effective spec as a bootcplan.dev Rollout object, whose status
 *   apply writes and health/rollout.lua reads (wave 2);
 * - `apply-job.yaml` / `apply-cronjob.yaml`: `bootcplan apply PLAN --auto-approve --step --lock-timeout 6m` with the
 *   ConfigMap mounted as the repository's files (wave 2), as examples/argocd/clusters/prod-east/apply-job.yaml.
 * Pure.
 */
import type { Plan } from '../plan/types.ts';
import type { RolloutSpec } from '../rollout-spec/types.ts';
import { BOOTCPLAN_NAMESPACE } from '../cluster/types.ts';
import { planFileText } from '../plan/saved/writer.ts';
import { yamlText } from '../render/yaml.ts';

export interface ClusterFileInput {
  cluster: string;
  plan: Plan;
  fleetPath: string;
  fleetText: string;
  rollout: RolloutSpec;
  /** The cluster's directory in the repository (where the plan is mounted from, for the Job's args). */
  dir: string;
  image: string;
}

const CONFIGMAP = 'bootcplan-rollout';
const WAVE = 'argocd.argoproj.io/sync-wave';

/** The apply container of the Job and the CronJob (examples/argocd/clusters/prod-east/apply-job.yaml). */
function podSpec(ci: ClusterFileInput, component: string) {
  const planPath = `${ci.dir}/plan.json`;
  return {
    metadata: { labels: { 'app.kubernetes.io/name': 'bootcplan', 'app.kubernetes.io/component': component } },
    spec: {
      serviceAccountName: 'bootcplan',
      restartPolicy: 'Never',
      containers: [
        {
          name: 'bootcplan',
          image: ci.image,
          workingDir: '/work',
          // Longer than the lock's 300 s lease: a run that meets a dead apply's lock takes it over
          // (docs/apply.md "Clocks and skew"), as examples/argocd/clusters/prod-east/apply-job.yaml.
          args: ['apply', planPath, '--auto-approve', '--step', '--lock-timeout', '6m'],
          env: [
            { name: 'BOOTCPLAN_HOLDER', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            // Its own node goes last in its pool (docs/design.md §7 "Stopping"; examples/argocd/clusters/prod-east/apply-job.yaml).
            { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
          ],
          resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } },
          securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
          volumeMounts: [{ name: 'rollout', mountPath: '/work', readOnly: true }],
        },
      ],
      volumes: [
        {
          name: 'rollout',
          configMap: {
            name: CONFIGMAP,
            items: [
              { key: 'fleet.yaml', path: ci.fleetPath },
              { key: 'plan.json', path: planPath },
            ],
          },
        },
      ],
    },
  };
}

function applyJob(ci: ClusterFileInput) {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: 'bootcplan-apply',
      namespace: BOOTCPLAN_NAMESPACE,
      labels: { 'app.kubernetes.io/name': 'bootcplan', 'app.kubernetes.io/component': 'apply' },
      annotations: { [WAVE]: '2', 'argocd.argoproj.io/sync-options': 'Force=true,Replace=true' },
    },
    spec: { backoffLimit: 0, activeDeadlineSeconds: 7200, template: podSpec(ci, 'apply') },
  };
}

function applyCronJob(ci: ClusterFileInput) {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'bootcplan-apply-step', namespace: BOOTCPLAN_NAMESPACE, labels: { 'app.kubernetes.io/name': 'bootcplan' }, annotations: { [WAVE]: '2' } },
    spec: {
      schedule: '*/15 * * * *',
      concurrencyPolicy: 'Forbid',
      startingDeadlineSeconds: 600,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 5,
      jobTemplate: { spec: { backoffLimit: 0, activeDeadlineSeconds: 7200, ttlSecondsAfterFinished: 86400, template: podSpec(ci, 'apply-step') } },
    },
  };
}

function rolloutObject(ci: ClusterFileInput) {
  const r = ci.rollout;
  return {
    apiVersion: r.apiVersion,
    kind: r.kind,
    metadata: { name: r.metadata.name, namespace: BOOTCPLAN_NAMESPACE, labels: { 'bootcplan.dev/fleet-cluster': ci.cluster }, annotations: { [WAVE]: '2' } },
    // Exactly the spec apply plans this cluster with: apply records observedGeneration only
    // when the object's spec is that spec (apply/report/rollout-report.ts), and the health check
    // waits for it.
    spec: r.spec,
  };
}

function kustomization() {
  return {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: ['rollout.yaml', 'apply-job.yaml', 'apply-cronjob.yaml'],
    configMapGenerator: [
      {
        name: CONFIGMAP,
        namespace: BOOTCPLAN_NAMESPACE,
        files: ['fleet.yaml', 'plan.json'],
        options: { annotations: { [WAVE]: '1' } },
      },
    ],
  };
}

const comment = (ci: ClusterFileInput, what: string) => `# ${what} of cluster ${ci.cluster}, plan ${ci.plan.id} (bootcplan fleet render argocd).\n`;

export function clusterFiles(ci: ClusterFileInput): { path: string; content: string }[] {
  return [
    { path: 'kustomization.yaml', content: comment(ci, 'The rollout') + yamlText(kustomization()) },
    { path: 'rollout.yaml', content: comment(ci, 'The effective Rollout spec') + yamlText(rolloutObject(ci)) },
    { path: 'apply-job.yaml', content: comment(ci, 'The apply Job') + yamlText(applyJob(ci)) },
    { path: 'apply-cronjob.yaml', content: comment(ci, 'The apply CronJob (every 15 minutes, one wave when it may)') + yamlText(applyCronJob(ci)) },
    { path: 'plan.json', content: planFileText(ci.plan) },
    { path: 'fleet.yaml', content: ci.fleetText },
  ];
}
