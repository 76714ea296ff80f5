/**
 * The CRDs and the planner agree: what the planner rejects in a spec's managedBootImages
 * or bootImageSkewEnforcement, kube-apiserver rejects when the same value is written to
 * MachineConfiguration/cluster (the upstream CEL rules and schema, in deploy/crds), with
 * the same upstream message; and what the planner accepts, the API server stores.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, setupEnv, resetCluster, loadObjects, driverFor, type TestEnv } from './env.ts';
import { ClusterBuilder, specYaml, OLD } from '../support/cluster.ts';
import { KubeApiError } from '../../src/kube/rest.ts';
import type { KubeDriver } from '../../src/kube/driver.ts';
import { io } from '../support/cli.ts';
import { run } from '../support/built.ts'; // the bundle, as the package ships it
import type { TestObject } from '../support/cluster.ts';

const t = suite('e2e: the API server rejects what the planner rejects');
let env: TestEnv;
let driver: KubeDriver;
let dir: string;

const MS = (mode: string, extra: Record<string, unknown> = {}) => ({
  resource: 'machinesets',
  apiGroup: 'machine.openshift.io',
  selection: { mode, ...extra },
});
const CP = (mode: string, extra: Record<string, unknown> = {}) => ({
  resource: 'controlplanemachinesets',
  apiGroup: 'machine.openshift.io',
  selection: { mode, ...extra },
});
const PARTIAL = { partial: { machineResourceSelector: { matchLabels: { 'machine.openshift.io/cluster-api-machineset': 'prod-east-worker-us-east-1a' } } } };
const MC_REF = { apiVersion: 'operator.openshift.io/v1', kind: 'MachineConfiguration', name: 'cluster' };

interface Case {
  name: string;
  /** spec fields: managedBootImages / bootImageSkewEnforcement */
  spec: Record<string, unknown>;
  /** planner diagnostic code; null: accepted */
  code: string | null;
  /** the API server's message; null: accepted */
  api: RegExp | null;
  /** skew enforcement status Automatic in the cluster */
  automatic?: boolean;
}

const CASES: Case[] = [
  {
    name: 'CPMS with a Partial selection',
    spec: { managedBootImages: { machineManagers: [MS('All'), CP('Partial', PARTIAL)] } },
    code: 'cpms-partial-selection',
    api: /Only All or None selection mode is permitted for ControlPlaneMachineSets/,
  },
  {
    name: 'Partial without partial',
    spec: { managedBootImages: { machineManagers: [MS('Partial')] } },
    code: 'partial-selection-invalid',
    api: /Partial is required when type is partial, and forbidden otherwise/,
  },
  {
    name: 'partial with mode All',
    spec: { managedBootImages: { machineManagers: [MS('All', PARTIAL)] } },
    code: 'partial-selection-invalid',
    api: /Partial is required when type is partial, and forbidden otherwise/,
  },
  {
    name: 'a duplicate manager',
    spec: { managedBootImages: { machineManagers: [MS('All'), MS('None')] } },
    code: 'duplicate-machine-manager',
    api: /Duplicate value/,
  },
  { name: 'an unknown selection mode', spec: { managedBootImages: { machineManagers: [MS('Some')] } }, code: 'invalid-enum', api: /Unsupported value: "Some"/ },
  {
    name: 'skew mode Manual without manual',
    spec: { bootImageSkewEnforcement: { mode: 'Manual' } },
    code: 'skew-manual-invalid',
    api: /manual is required when mode is Manual, and forbidden otherwise/,
  },
  {
    name: 'a malformed ocpVersion',
    spec: { bootImageSkewEnforcement: { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.22.x1' } } },
    code: 'invalid-format',
    api: /ocpVersion must match the OCP semver compatible format of x\.y\.z/,
  },
  {
    name: 'an rhcosVersion with mode OCPVersion',
    spec: { bootImageSkewEnforcement: { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.22.0', rhcosVersion: '9.6.20250523-1' } } },
    code: 'skew-manual-invalid',
    api: /rhcosVersion is required when mode is RHCOSVersion, and forbidden otherwise/,
  },
  {
    name: 'MachineSets opted out while skew enforcement is Automatic',
    automatic: true,
    spec: { managedBootImages: { machineManagers: [MS('None')] } },
    code: 'skew-enforcement-choice-required',
    api: /when skew enforcement is in Automatic mode, any MachineAPI MachineSet MachineManager must use selection mode 'All'/,
  },
  {
    name: 'the legacy empty list while skew enforcement is Automatic',
    automatic: true,
    spec: { managedBootImages: { machineManagers: [] } },
    code: 'skew-enforcement-choice-required',
    api: /when skew enforcement is in Automatic mode, managedBootImages\.machineManagers must not be an empty list/,
  },
  {
    name: 'a valid opt-out with a skew choice',
    spec: {
      managedBootImages: { machineManagers: [MS('None'), CP('None')] },
      bootImageSkewEnforcement: { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.22.0' } },
    },
    code: null,
    api: null,
  },
  { name: 'a valid Partial selection', spec: { managedBootImages: { machineManagers: [MS('Partial', PARTIAL), CP('All')] } }, code: null, api: null },
];

async function setSkewStatus(automatic: boolean) {
  const status = automatic
    ? {
        bootImageSkewEnforcementStatus: { mode: 'Automatic', automatic: { ocpVersion: '4.22.0' }, manual: null },
        managedBootImagesStatus: { machineManagers: [MS('All')] },
      }
    : {
        bootImageSkewEnforcementStatus: { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.22.0' }, automatic: null },
        managedBootImagesStatus: null,
      };
  await env.admin.request('PATCH', '/apis/operator.openshift.io/v1/machineconfigurations/cluster/status', {
    body: { status },
    contentType: 'application/merge-patch+json',
  });
  // Automatic needs a boot image configuration in the spec or status (rule 1): the status has one.
}

t.before(async () => {
  env = await setupEnv();
  await resetCluster(env.admin);
  await loadObjects(env.admin, new ClusterBuilder().bootcPool('worker', [{ name: 'w-1' }]).objects);
  driver = driverFor(env.saKubeconfig);
  dir = tempDir('bootcplan-e2e-cel-');
});
t.after(() => driver.close());

for (const c of CASES) {
  t(`${c.api ? 'rejected by both' : 'accepted by both'}: ${c.name}`, async () => {
    await setSkewStatus(!!c.automatic);
    // The planner, on the live cluster.
    const spec = join(dir, 'spec.yaml');
    writeFileSync(spec, specYaml([{ name: 'worker', image: OLD, maxUnavailable: 1 }], c.spec));
    const cap = io();
    const code = await run(['plan', '-f', spec, '--kubeconfig', env.saKubeconfig, '-o', 'json'], { io: cap });
    const errText = cap.err;
    // A spec error stops before planning (diagnostics on stderr); a cluster-dependent one is in the plan.
    const codes = cap.out ? (JSON.parse(cap.out).diagnostics as any[]).filter((d) => d.severity === 'error').map((d) => d.code) : [];
    if (c.code) {
      assert.is(code, 1, `the planner rejects it (exit ${code})`);
      // Spec errors are printed with the upstream message (file:line:col path: message).
      assert.ok(codes.includes(c.code) || (c.api !== null && c.api.test(errText)), `planner error ${c.code} / ${c.api}: got ${codes.join(', ')} ${errText}`);
    } else {
      assert.is(code, 0, `the planner accepts it: ${codes.join(', ')} ${errText}`);
    }
    // The API server, with the same value.
    const ops = Object.entries(c.spec).map(([k, v]) => ({ op: 'add' as const, path: `/spec/${k}`, value: v }));
    const cleanup = [
      { op: 'remove' as const, path: '/spec/managedBootImages' },
      { op: 'remove' as const, path: '/spec/bootImageSkewEnforcement' },
    ];
    try {
      const out = await driver.patch(MC_REF, ops);
      assert.is(c.api, null, `the API server accepted ${c.name}`);
      for (const [k, v] of Object.entries(c.spec)) assert.equal((out as TestObject).spec[k], v, `${k} stored as written`);
    } catch (e) {
      if (!c.api) throw e;
      assert.instance(e, KubeApiError);
      assert.is((e as KubeApiError).status, 422);
      assert.match((e as Error).message, c.api);
    }
    for (const op of cleanup) await driver.patch(MC_REF, [op]).catch(() => {});
  });
}

t.run();
