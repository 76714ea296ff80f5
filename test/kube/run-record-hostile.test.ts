/**
 * The run record's rollback fields as an attacker with write access to the namespace (or a
 * hand edit) could leave them (docs/safety.md "Rollback"): a pool origin that names an image no
 * node booted, a hold list that grows without bound, a rollbackOf of the wrong shape, a node's
 * `from` that is a tag or carries a line break. Both drivers refuse such a record with the field
 * that is wrong (never half-read), and ignore such a node entry (the node counts as one
 * bootcplan did not update, so no rollback ever takes it).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fakeApi, closeFakes, clientOf, closeClients, cleanFailure, sendJson, nodeObject } from '../support/fake-api.ts';
import { KubeDriver } from '../../src/kube/driver.ts';
import { ClusterBuilder, OLD, NEW } from '../support/cluster.ts';
import { newSim } from '../support/apply.ts';
import { BOOTCPLAN_NAMESPACE, PROGRESS_NAME } from '../../src/cluster/types.ts';
import { BOOTCPLAN_PROGRESS } from '../../src/domain/labels.ts';

const t = suite('run record: hostile rollback fields');
const drivers: KubeDriver[] = [];
t.after(async () => {
  for (const d of drivers) d.close();
  closeClients();
  await closeFakes();
});

const D = (c: string) => `sha256:${c.repeat(64)}`;
const PLAN = 'a1b2c3d4e5f60718';
const base = () => ({
  planId: PLAN,
  startedAt: '2026-09-14T08:00:00Z',
  updatedAt: '2026-09-14T08:00:00Z',
  changesApplied: true,
  done: false,
  pools: {
    worker: { wavesDone: 1, done: false, halted: null, origin: { kind: 'bootc', ref: OLD, image: OLD, digest: OLD.slice(OLD.indexOf('@') + 1), mixed: null } },
  },
  run: { id: PLAN, planIds: [PLAN], targets: { worker: NEW.slice(NEW.indexOf('@') + 1) } },
  spec: { name: 'prod', path: 'bootcplan.yaml', sha256: 'a'.repeat(64), commit: null },
  holds: [] as unknown[],
  rollbackOf: null as unknown,
});
type Rec = ReturnType<typeof base> & Record<string, any>;
const hold = (pool: string, extra: Record<string, unknown> = {}) => ({
  pool,
  target: D('b'),
  action: 'halted',
  check: 'alerts',
  observed: '1 firing alert',
  at: '2026-09-14T09:00:00Z',
  planId: PLAN,
  ...extra,
});

/** Each hostile edit, and the words the refusal must contain. */
const CASES: [string, (r: Rec) => void, RegExp][] = [
  [
    'an origin image given as a tag',
    (r) => {
      r.pools.worker.origin.image = 'quay.io/example/os:latest';
    },
    /pool "worker" has an origin whose image is not a digest reference/,
  ],
  [
    'an origin image and digest that differ',
    (r) => {
      r.pools.worker.origin.digest = D('c');
    },
    /origin whose image and digest differ/,
  ],
  [
    'an origin of no known kind',
    (r) => {
      (r.pools.worker as any).origin = { kind: 'ansible' };
    },
    /origin of no known kind/,
  ],
  [
    'nine mixed origins',
    (r) => {
      Object.assign(r.pools.worker.origin, { image: null, digest: null, mixed: [...'123456789'].map(D) });
    },
    /mixed is not a list of 2 to 8 digests/,
  ],
  [
    'an MCO origin with a line break in its image',
    (r) => {
      (r.pools.worker as any).origin = {
        kind: 'mco',
        machineConfig: '99-worker-zz-bootcplan-os-image',
        osImageURL: null,
        rendered: 'rendered-worker-1',
        renderedTarget: null,
        image: 'quay.io/x@sha256:1\nEvil',
      };
    },
    /images are not image references/,
  ],
  [
    'an MCO origin read at a time that is not one',
    (r) => {
      (r.pools.worker as any).origin = {
        kind: 'mco',
        machineConfig: '99-worker-zz-bootcplan-os-image',
        osImageURL: null,
        rendered: 'rendered-worker-1',
        renderedTarget: null,
        image: 'quay.io/x@sha256:' + 'a'.repeat(64),
        readAt: 'yesterday',
      };
    },
    /readAt is not a time/,
  ],
  [
    'a run chain of 65 plan ids',
    (r) => {
      r.run.planIds = Array.from({ length: 65 }, () => PLAN);
    },
    /malformed run/,
  ],
  [
    'a run id that is not a plan id',
    (r) => {
      r.run.id = '../../etc';
    },
    /malformed run/,
  ],
  [
    'a run target with a space',
    (r) => {
      r.run.targets.worker = 'quay.io/x y';
    },
    /run targets that are not pool names to images/,
  ],
  [
    'seventeen holds',
    (r) => {
      r.holds = Array.from({ length: 17 }, (_, i) => hold(`p${i}`));
    },
    /holds that are not a list of at most 16/,
  ],
  [
    'two holds of one pool',
    (r) => {
      r.holds = [hold('worker'), hold('worker', { target: D('c') })];
    },
    /two holds of pool "worker"/,
  ],
  [
    'a hold of an unknown action',
    (r) => {
      r.holds = [hold('worker', { action: 'ignored' })];
    },
    /hold whose action is not halted, paused or rolled-back/,
  ],
  [
    'a hold whose observed text is 2 KiB',
    (r) => {
      r.holds = [hold('worker', { observed: 'x'.repeat(2048) })];
    },
    /hold with a malformed check, observed/,
  ],
  [
    'a rollbackOf of an unknown scope',
    (r) => {
      r.rollbackOf = {
        planId: PLAN,
        scope: 'cluster',
        pool: null,
        wave: null,
        trigger: { kind: 'manual', check: null, observed: null, at: '2026-09-14T09:00:00Z' },
        origins: {},
      };
    },
    /rollbackOf without a plan id and a scope/,
  ],
  [
    'a rollbackOf whose origin names a tag',
    (r) => {
      r.rollbackOf = {
        planId: PLAN,
        scope: 'run',
        pool: null,
        wave: null,
        trigger: { kind: 'manual', check: null, observed: null, at: '2026-09-14T09:00:00Z' },
        origins: { worker: { kind: 'bootc', ref: OLD, image: 'quay.io/x:1', digest: null, mixed: null } },
      };
    },
    /rollbackOf whose origin of pool "worker" is whose image is not a digest reference/,
  ],
  [
    'a rollbackOf with half of what continues it',
    (r) => {
      r.rollbackOf = {
        planId: PLAN,
        scope: 'run',
        pool: null,
        wave: null,
        trigger: { kind: 'manual', check: null, observed: null, at: '2026-09-14T09:00:00Z' },
        origins: {},
        run: { id: PLAN, planIds: [PLAN] },
      };
    },
    /rollbackOf with only some of startedAt, run, targets, order, scopeWave/,
  ],
  [
    'a rollbackOf continuing a run of plan ids that are not ids',
    (r) => {
      r.rollbackOf = {
        planId: PLAN,
        scope: 'run',
        pool: null,
        wave: null,
        trigger: { kind: 'manual', check: null, observed: null, at: '2026-09-14T09:00:00Z' },
        origins: {},
        startedAt: '2026-09-14T09:00:00Z',
        run: { id: PLAN, planIds: ['../../etc'] },
        targets: {},
        order: [],
        scopeWave: null,
      };
    },
    /rollbackOf with a malformed run/,
  ],
  [
    'a rollbackOf triggered by a cron',
    (r) => {
      r.rollbackOf = { planId: PLAN, scope: 'run', pool: null, wave: null, trigger: { kind: 'cron', check: null, observed: null, at: 'x' }, origins: {} };
    },
    /rollbackOf with a malformed trigger/,
  ],
  [
    'a spec sha256 that is not hex',
    (r) => {
      r.spec.sha256 = 'zz';
    },
    /malformed spec entry/,
  ],
];

const record = (edit?: (r: Rec) => void) => {
  const r = base() as Rec;
  edit?.(r);
  return JSON.stringify(r);
};

t('kube: every hostile rollback field of the run record is refused, naming it; the well-formed record reads back whole', async () => {
  let text = record();
  const f = await fakeApi((req, res) => {
    if (req.url!.startsWith('/api/v1/nodes')) return sendJson(res, { kind: 'NodeList', apiVersion: 'v1', metadata: {}, items: [] });
    sendJson(res, {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: PROGRESS_NAME, namespace: BOOTCPLAN_NAMESPACE, resourceVersion: '7' },
      data: { 'run.json': text },
    });
  });
  const d = new KubeDriver(clientOf(f.url));
  drivers.push(d);
  const ok = await d.readProgress();
  assert.equal(ok.run, JSON.parse(text));
  for (const [what, edit, words] of CASES) {
    text = record(edit);
    const e = await cleanFailure(d.readProgress(), words);
    assert.match(e.message, /ConfigMap openshift-bootcplan\/bootcplan-progress: run\.json/, what);
    assert.match(e.hint ?? '', /delete configmap bootcplan-progress/, what);
  }
});

t('sim: the same records are refused by the simulated driver with the same words', async () => {
  const sim = newSim(new ClusterBuilder().bootcPool('worker', [{ name: 'w-1' }]).snapshot());
  const d = sim.driver();
  const plant = (text: string) =>
    sim.mutate(({ get, add, remove }) => {
      if (get('ConfigMap', PROGRESS_NAME, BOOTCPLAN_NAMESPACE)) remove('ConfigMap', PROGRESS_NAME, BOOTCPLAN_NAMESPACE);
      add({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: PROGRESS_NAME, namespace: BOOTCPLAN_NAMESPACE, resourceVersion: '1' },
        data: { 'run.json': text },
      });
    });
  plant(record());
  assert.equal((await d.readProgress()).run, JSON.parse(record()));
  for (const [what, edit, words] of CASES) {
    plant(record(edit));
    let err: unknown = null;
    await d.readProgress().catch((e) => {
      err = e;
    });
    assert.instance(err, Error, what);
    assert.match((err as Error).message, words, what);
  }
});

t('a node entry whose `from` is a tag, carries a line break or is 600 characters long is no entry at all (kube and sim)', async () => {
  const entry = (from: unknown) => JSON.stringify({ planId: PLAN, pool: 'worker', wave: 1, step: 'done', wasCordoned: false, from });
  const bad = ['quay.io/example/os:latest', `quay.io/x\n@${D('a')}`, `quay.io/${'x'.repeat(600)}@${D('a')}`, 42];
  const nodes = [entry(OLD), ...bad.map(entry)].map((v, i) =>
    nodeObject(`w-${i}`, { metadata: { name: `w-${i}`, resourceVersion: '1', annotations: { [BOOTCPLAN_PROGRESS]: v } } }),
  );
  const f = await fakeApi((req, res) => {
    if (req.url!.startsWith('/api/v1/nodes')) return sendJson(res, { kind: 'NodeList', apiVersion: 'v1', metadata: {}, items: nodes });
    sendJson(res, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }, 404);
  });
  const d = new KubeDriver(clientOf(f.url));
  drivers.push(d);
  const st = await d.readProgress();
  assert.equal(Object.keys(st.nodes), ['w-0']);
  assert.is(st.nodes['w-0'].from, OLD);

  const sim = newSim(
    new ClusterBuilder()
      .bootcPool(
        'worker',
        bad.map((_, i) => ({ name: `n-${i}` })),
      )
      .snapshot(),
  );
  sim.mutate(({ nodes: all }) =>
    bad.forEach((b, i) => {
      (all.get(`n-${i}`)!.metadata.annotations ??= {})[BOOTCPLAN_PROGRESS] = entry(b);
    }),
  );
  assert.equal((await sim.driver().readProgress()).nodes, {});
});

t.run();
