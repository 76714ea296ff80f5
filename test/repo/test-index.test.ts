/**
 * A module's tests are findable from its name (docs/development.md "Test layout"): the index of
 * test/support/test-index.ts, which `npx tsx test/run.ts --for src/FILE.ts` runs, must reach
 * every module of src/ (a module no suite reaches is tested by nothing), and the modules no
 * suite imports directly (tested only through their callers) must not grow in number: a new
 * module comes with a suite that imports it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildIndex, suitesFor } from '../support/test-index.ts';

/**
 * Modules no suite reaches through a run-time import, each with why: they hold types, and the
 * few constants beside them that only spell those types, so every importer imports them as
 * types (which run nothing).
 */
const UNREACHED: Record<string, string> = {
  'src/app/ports.ts': 'interfaces only: the ports app/ is handed (driver, clock, health, policy)',
  'src/apply/engine/context.ts': 'interfaces only: what an apply run is given and the engine keeps',
  'src/apply/gates/context.ts': 'interfaces only: what the gates receive and keep',
  'src/apply/pools/context.ts': 'interfaces only: what the pool runners receive and keep',
  'src/apply/engine/result.ts': 'types only: what an apply returns',
  'src/apply/ports/health.ts': 'the HealthSource port and GatePosition types; GATE_POSITION_POINTS only spells the GatePositionPoint union',
  'src/base/api-types.ts': 'interfaces only: the Kubernetes object shapes',
  'src/cluster/objects.ts': 'interfaces only: a Kubernetes object, its metadata, a condition',
  'src/cluster/workloads.ts': 'interfaces only: the workloads a snapshot carries for the drain forecast',
  'src/fleet/run-events.ts': 'the FleetEvent union; FLEET_CLUSTER_OUTCOMES and FLEET_HALT_REASONS only spell its members',
  'src/kube/kubeconfig-types.ts': 'interfaces only: the kubeconfig entries and KubeAccess',
};

/**
 * Modules of src/ that no suite imports (they are tested through the modules that import them:
 * `--for` runs those suites). Lower it when a suite starts importing one; it must not grow.
 */
const INDIRECT_BUDGET = 125;

const index = buildIndex();

test('the index reads every module of src/ and every suite', () => {
  assert.ok(index.sources.length > 200, `${index.sources.length} modules`);
  assert.ok(index.suites.length > 150, `${index.suites.length} suites`);
  // Its own reading, checked on known imports: the planner's suite imports the planner, and
  // the applier's modules are reached through the applier.
  assert.ok(index.direct.get('src/plan/planner.ts')?.includes('test/plan/planner.test.ts'));
  const wave = suitesFor(index, 'src/apply/pools/bootc-wave.ts');
  assert.ok(wave && wave.distance > 0 && wave.suites.includes('test/apply/apply.test.ts'), JSON.stringify(wave?.via));
});

test('every module of src/ is reached by a suite, except the type-only ones listed', () => {
  const unreached = index.sources.filter((f) => !suitesFor(index, f));
  assert.equal(
    unreached.filter((f) => !(f in UNREACHED)),
    [],
    'modules no suite reaches: write a suite that imports the module (or remove it if nothing uses it)',
  );
  assert.equal(
    Object.keys(UNREACHED).filter((f) => !unreached.includes(f)),
    [],
    'listed in UNREACHED but reached by a suite now (or gone): remove the entry',
  );
});

test('the modules no suite imports stay within their budget', () => {
  const indirect = index.sources.filter((f) => !index.direct.has(f) && !(f in UNREACHED));
  assert.ok(
    indirect.length <= INDIRECT_BUDGET,
    `${indirect.length} modules of src/ no suite imports (budget ${INDIRECT_BUDGET}): give a new module a suite that imports it`,
  );
});

test.run();
