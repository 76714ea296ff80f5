/**
 * The fleet record (ConfigMap `bootcplan-fleet`, key `fleet.json`; src/fleet/record.ts)
 * through both drivers' record-document stores: the simulated one, and the Kubernetes one against
 * a fake API server, whose requests must be byte for byte what bootcplan has always sent (a
 * record written by an earlier version still reads); and the record parser both read it with.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type http from 'node:http';
import { ClusterBuilder } from '../support/cluster.ts';
import { newSim } from '../support/apply.ts';
import { fakeApi, closeFakes, clientOf, closeClients, sendJson } from '../support/fake-api.ts';
import { type FleetProgressRecord, FLEET_RECORD, fleetProgressOf, readFleetRecord, writeFleetRecord } from '../../src/fleet/record.ts';
import { BOOTCPLAN_NAMESPACE } from '../../src/cluster/types.ts';
import { KubeRecordDocuments } from '../../src/kube/record-documents.ts';
import { KubeRequestError } from '../../src/kube/rest.ts';

const s = suite('fleet-progress');
s.after(async () => {
  closeClients();
  await closeFakes();
});

const record: FleetProgressRecord = {
  fleetPlanId: 'f1',
  fleet: 'edge',
  cluster: 'east',
  batch: 2,
  planId: 'p1',
  outcome: 'done',
  exitCode: 0,
  message: null,
  startedAt: '2026-03-02T10:00:00Z',
  updatedAt: '2026-03-02T10:30:00Z',
  finishedAt: '2026-03-02T10:30:00Z',
};

s('the simulated driver keeps the record in ConfigMap bootcplan-fleet, key fleet.json, and reads it back', async () => {
  const sim = newSim(new ClusterBuilder().bootcPool('worker', [{ name: 'w-1' }]).snapshot());
  const d = sim.driver('fleet');
  assert.is(await readFleetRecord(d.records), null);
  await writeFleetRecord(d.records, { ...record, outcome: 'running', finishedAt: null, exitCode: null });
  await writeFleetRecord(d.records, record);
  assert.equal(await readFleetRecord(d.records), record);
  const cm = sim.get('ConfigMap', FLEET_RECORD.name, BOOTCPLAN_NAMESPACE)!;
  assert.is(FLEET_RECORD.name, 'bootcplan-fleet');
  assert.equal(Object.keys(cm.data!), ['fleet-plan-id', 'fleet.json']);
  assert.is(cm.data!['fleet-plan-id'], 'f1');
  assert.equal(JSON.parse(cm.data!['fleet.json']), record);
  cm.data!['fleet.json'] = JSON.stringify({ ...record, batch: 0 });
  const refused = await readFleetRecord(d.records).then(
    () => null,
    (e: Error) => e.message,
  );
  assert.is(refused, 'ConfigMap openshift-bootcplan/bootcplan-fleet: fleet.json has no batch number');
  d.kill();
  const killed = await writeFleetRecord(d.records, record).then(
    () => null,
    (e: Error) => e.message,
  );
  assert.is(killed, 'the apply process was killed', 'a killed process writes no record');
});

/** A fake API server keeping one ConfigMap; every request as "METHOD path body". */
async function configMapApi() {
  const seen: string[] = [];
  const st: { cm: any } = { cm: null };
  const notFound = (res: http.ServerResponse) => sendJson(res, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }, 404);
  const f = await fakeApi((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${body}`.trimEnd());
      if (req.method === 'GET') return st.cm ? sendJson(res, st.cm) : notFound(res);
      if (req.method === 'PUT' && !st.cm) return notFound(res);
      st.cm = JSON.parse(body);
      sendJson(res, st.cm, req.method === 'POST' ? 201 : 200);
    });
  });
  return { seen, st, store: new KubeRecordDocuments(clientOf(f.url)) };
}

const PATH = '/api/v1/namespaces/openshift-bootcplan/configmaps/bootcplan-fleet';
/** The ConfigMap as bootcplan has always written it (before the fleet record had a port of its own). */
const wire = (batch: number) =>
  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bootcplan-fleet","namespace":"openshift-bootcplan","labels":{"app.kubernetes.io/managed-by":"bootcplan"}},"data":{"fleet-plan-id":"f1","fleet.json":"{\\"fleetPlanId\\":\\"f1\\",\\"fleet\\":\\"edge\\",\\"cluster\\":\\"east\\",\\"batch\\":${batch},\\"planId\\":\\"p1\\",\\"outcome\\":\\"done\\",\\"exitCode\\":0,\\"message\\":null,\\"startedAt\\":\\"2026-03-02T10:00:00Z\\",\\"updatedAt\\":\\"2026-03-02T10:30:00Z\\",\\"finishedAt\\":\\"2026-03-02T10:30:00Z\\"}"}}`;

s('the Kubernetes driver: one GET to read, PUT (POST the first time) to write, the same bytes on the wire as ever', async () => {
  const { seen, store } = await configMapApi();
  assert.is(await readFleetRecord(store), null, 'no ConfigMap: no record');
  await writeFleetRecord(store, record);
  await writeFleetRecord(store, { ...record, batch: 3 });
  assert.equal(await readFleetRecord(store), { ...record, batch: 3 });
  assert.equal(seen, [
    `GET ${PATH}`,
    `PUT ${PATH} ${wire(2)}`,
    `POST /api/v1/namespaces/openshift-bootcplan/configmaps ${wire(2)}`,
    `PUT ${PATH} ${wire(3)}`,
    `GET ${PATH}`,
  ]);
});

s('the Kubernetes driver refuses a record of another shape, naming the ConfigMap, the field and how to recover', async () => {
  const { st, store } = await configMapApi();
  st.cm = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'bootcplan-fleet', namespace: 'openshift-bootcplan' },
    data: { 'fleet.json': JSON.stringify({ ...record, batch: 0 }) },
  };
  const err = await readFleetRecord(store).then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(err, KubeRequestError);
  const e = err as KubeRequestError & { hint?: string };
  assert.is(e.message, `GET ${PATH}: ConfigMap openshift-bootcplan/bootcplan-fleet: fleet.json has no batch number`);
  assert.is(
    e.hint,
    'bootcplan writes this record; if it was edited by hand, delete it (kubectl -n openshift-bootcplan delete configmap bootcplan-fleet): fleet apply then applies this cluster again, and its apply finds what is done',
  );
  st.cm.data['fleet.json'] = '';
  assert.is(await readFleetRecord(store), null, 'an empty key: no record');
});

s('a record of another shape is refused with the field that is wrong', () => {
  assert.equal(fleetProgressOf(JSON.stringify(record)), record);
  assert.is(fleetProgressOf('{'), 'fleet.json is not valid JSON');
  assert.is(fleetProgressOf('[]'), 'fleet.json is not a JSON object');
  assert.is(fleetProgressOf(JSON.stringify({ ...record, fleetPlanId: 7 })), 'fleet.json has no string fleetPlanId');
  assert.is(fleetProgressOf(JSON.stringify({ ...record, batch: 0 })), 'fleet.json has no batch number');
  assert.is(fleetProgressOf(JSON.stringify({ ...record, outcome: 'finished' })), 'fleet.json has an unknown outcome');
  assert.is(fleetProgressOf(JSON.stringify({ ...record, exitCode: '0' })), 'fleet.json has an exitCode that is not an integer');
});

s.run();
