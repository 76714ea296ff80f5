/**
 * The fields bootcplan reads of each kind are checked where objects come in (src/cluster/kinds.ts;
 * docs/safety.md "Input limits"): a snapshot file, an API answer, a list item, a watch event, a
 * write to the simulated cluster and the coreos-bootimages stream with a field of the wrong type
 * are refused with the field named, never read as they came.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import fc from 'fast-check';
import { objectShapeProblem, shapeSchema, type KindViews } from '../../src/cluster/kinds.ts';
import { collect, validate } from '../../src/base/schema.ts';
import { seeded } from '../support/seeds.ts';
import { readStream } from '../../src/domain/stream.ts';
import { DriverError } from '../../src/apply/ports/driver.ts';
import { bootImagesStream } from '../../src/sim/cluster-objects.ts';
import { ClusterBuilder, nodes, type TestObject } from '../support/cluster.ts';
import { newSim } from '../support/apply.ts';
import { fakeApi, closeFakes, clientOf, closeClients, cleanFailure, sendJson, nodeObject } from '../support/fake-api.ts';

const s = suite('kind shapes: checked where objects come in');
s.after(async () => {
  closeClients();
  await closeFakes();
});

const cluster = () => new ClusterBuilder().bootcPool('worker', nodes('w', 3)).machineConfigPool('worker').mcoPool('infra', nodes('i', 2));

/** The snapshot of `b` read as a file; the one diagnostic it must end in. */
function refused(b: ClusterBuilder) {
  const read = parseSnapshot(b.yaml(), 'c.yaml');
  assert.is(read.snapshot, null, 'the snapshot was read');
  assert.is(read.diagnostics.length, 1, JSON.stringify(read.diagnostics));
  const d = read.diagnostics[0];
  assert.is(d.code, 'snapshot-invalid');
  assert.ok(d.line !== null && d.line > 1, `no line: ${JSON.stringify(d)}`);
  return d;
}

s('a snapshot file with a field of the wrong type: snapshot-invalid naming the object, the field and its line', () => {
  const b = cluster();
  b.object('MachineConfigPool', 'worker').spec.paused = 'true';
  const d = refused(b);
  assert.match(d.path ?? '', /^items\[\d+\]\.spec\.paused$/);
  assert.match(d.message, /^object MachineConfigPool\/worker: spec\.paused: expected true or false, got the string "true"/);
  assert.match(d.expected ?? '', /true or false, as the API server stores it/);

  const c = cluster();
  c.object('BootcNode', 'w-01').status.staged = { image: 'quay.io/x/os@sha256:' + 'a'.repeat(64), imageDigest: 5 };
  assert.match(refused(c).message, /^object BootcNode\/w-01: status\.staged\.imageDigest: expected a string/);

  const e = cluster();
  const ready = e.object('Node', 'w-02').status.conditions.find((x: { type: string }) => x.type === 'Ready');
  delete ready.status;
  assert.match(refused(e).message, /^object Node\/w-02: status\.conditions\[\d+\]\.status: required field "status" is missing/);

  // The same snapshot with the right types plans as before.
  assert.ok(parseSnapshot(cluster().yaml(), 'c.yaml').snapshot);
});

s("an API answer, a list item and a watch event with a field of the wrong type are refused as not the API server's", async () => {
  let answer: unknown = null;
  const f = await fakeApi((_req, res) => sendJson(res, answer));
  const c = clientOf(f.url);
  answer = { kind: 'Node', apiVersion: 'v1', ...nodeObject('w-1', { spec: { unschedulable: 'yes' } }) };
  await cleanFailure(
    c.request('GET', '/api/v1/nodes/w-1', { expect: 'Node' }),
    /GET \/api\/v1\/nodes\/w-1: the Node \(Node w-1\) is malformed: spec\.unschedulable: expected true or false/,
  );
  answer = { kind: 'NodeList', apiVersion: 'v1', metadata: {}, items: [nodeObject('a', { status: { conditions: [{ type: 'Ready' }] } })] };
  await cleanFailure(
    c.list('/api/v1/nodes', { kind: 'Node' }),
    /item 1 of the NodeList \(Node a\) is malformed: status\.conditions\[0\]\.status: required field "status" is missing/,
  );
  const event = JSON.stringify({ type: 'MODIFIED', object: { kind: 'BootcNodePool', metadata: { name: 'worker' }, spec: { rollout: { paused: 1 } } } });
  const w = await fakeApi((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(event + '\n');
  });
  await cleanFailure(
    clientOf(w.url).watch('/apis/node.bootc.dev/v1alpha1/bootcnodepools', {}, () => {}, new AbortController().signal, { kind: 'BootcNodePool' }),
    /the object of a MODIFIED watch event \(BootcNodePool worker\) is malformed: spec\.rollout\.paused: expected true or false/,
  );
});

s("the simulated cluster refuses a patch that breaks a view, as the API server's schema validation does", async () => {
  const sim = newSim(cluster().snapshot());
  const d = sim.driver();
  const ref = { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: 'worker' };
  const err = await d.patch(ref, [{ op: 'replace', path: '/spec/paused', value: 'false' }]).then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(err, DriverError);
  assert.match((err as Error).message, /MachineConfigPool "worker" is invalid: spec\.paused: expected true or false/);
  assert.is(sim.get('MachineConfigPool', 'worker')?.spec?.paused, false, 'the pool is as it was');
  await d.patch(ref, [{ op: 'replace', path: '/spec/paused', value: true }]);
  assert.is(sim.get('MachineConfigPool', 'worker')?.spec?.paused, true);
});

s('a coreos-bootimages stream with a field of the wrong type: the boot-image prediction says which, never reads it', () => {
  const stream = bootImagesStream('us-east-1', ['us-east-1a'], 'ami-0123');
  const bad = structuredClone(stream) as unknown as { architectures: { x86_64: { images: { aws: { regions: Record<string, { image: unknown }> } } } } };
  bad.architectures.x86_64.images.aws.regions['us-east-1'].image = 5;
  const cm = (s: unknown): TestObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'coreos-bootimages' },
    data: { stream: JSON.stringify(s) },
  });
  const r = readStream(cm(bad));
  assert.equal(
    r.ok ? 'read' : r.reason,
    'coreos-bootimages "stream" is malformed: architectures.x86_64.images.aws.regions.us-east-1.image: expected a string, got number 5',
  );
  assert.ok(readStream(cm(stream)).ok);
});

s('the check itself: absent and null pass, a wrong type does not; kinds without a view are not checked', () => {
  assert.is(objectShapeProblem({ spec: { unschedulable: null } }, 'Node'), null);
  assert.is(objectShapeProblem({}, 'Node'), null);
  assert.equal(objectShapeProblem({ spec: 'x' }, 'Node')?.path, 'spec');
  assert.is(objectShapeProblem({ spec: 'x' }, 'PodDisruptionBudget'), null);
});

s('the fast check and the validator agree: an object passes one exactly when it passes the other', () => {
  const odd = fc.oneof(fc.string({ maxLength: 3 }), fc.boolean(), fc.integer(), fc.double(), fc.constant(null), fc.jsonValue({ maxDepth: 1 }));
  const some = <T>(a: fc.Arbitrary<T>) => fc.oneof(a, odd);
  const cond = fc.record(
    { type: some(fc.string({ maxLength: 3 })), status: some(fc.constantFrom('True', 'False')), reason: some(fc.string()) },
    { requiredKeys: [] },
  );
  const selector = fc.record(
    {
      matchLabels: some(fc.dictionary(fc.string({ maxLength: 2 }), some(fc.string()))),
      matchExpressions: some(
        fc.array(fc.record({ key: some(fc.string()), operator: some(fc.string()), values: some(fc.array(some(fc.string()))) }, { requiredKeys: [] })),
      ),
    },
    { requiredKeys: [] },
  );
  const cases: [keyof KindViews, fc.Arbitrary<unknown>][] = [
    [
      'Node',
      fc.record(
        {
          spec: some(fc.record({ unschedulable: some(fc.boolean()) }, { requiredKeys: [] })),
          status: some(fc.record({ conditions: some(fc.array(some(cond))) }, { requiredKeys: [] })),
        },
        { requiredKeys: [] },
      ),
    ],
    [
      'BootcNodePool',
      fc.record(
        {
          spec: some(
            fc.record(
              {
                nodeSelector: some(selector),
                rollout: some(fc.record({ paused: some(fc.boolean()), maxUnavailable: some(fc.oneof(fc.integer(), fc.string())) }, { requiredKeys: [] })),
              },
              { requiredKeys: [] },
            ),
          ),
        },
        { requiredKeys: [] },
      ),
    ],
    [
      'MachineConfiguration',
      fc.record(
        {
          spec: some(
            fc.record(
              {
                managedBootImages: some(
                  fc.record(
                    {
                      machineManagers: some(
                        fc.array(
                          some(
                            fc.record(
                              {
                                resource: some(fc.string()),
                                apiGroup: some(fc.string()),
                                selection: some(
                                  fc.record(
                                    { mode: some(fc.string()), partial: some(fc.record({ machineResourceSelector: some(selector) }, { requiredKeys: [] })) },
                                    { requiredKeys: [] },
                                  ),
                                ),
                              },
                              { requiredKeys: [] },
                            ),
                          ),
                        ),
                      ),
                    },
                    { requiredKeys: [] },
                  ),
                ),
              },
              { requiredKeys: [] },
            ),
          ),
        },
        { requiredKeys: [] },
      ),
    ],
  ];
  for (const [kind, arb] of cases) {
    fc.assert(
      fc.property(arb, (o) => {
        const { ctx, diagnostics } = collect(null);
        validate(shapeSchema(kind), o, '', ctx);
        assert.is(objectShapeProblem(o as Record<string, unknown>, kind) === null, diagnostics.length === 0, `${kind}: ${JSON.stringify(o)}`);
      }),
      seeded(2512, 300),
    );
  }
});

s.run();
