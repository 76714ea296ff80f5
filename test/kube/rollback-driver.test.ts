/**
 * The two writes a rollback makes to bootcplan's osImage MachineConfig (docs/apply.md
 * "Rollback"): ClusterDriver.delete when its run created it, only while the object is at the
 * resourceVersion read (DeleteOptions preconditions); ClusterDriver.patch of its osImageURL
 * back when it existed before the run, only while it still carries the run's image (the
 * JSON-patch `test`). Both drivers do it so, and the simulated MCO renders the pool's pre-run
 * config again, under its old name.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fakeApi, closeFakes, clientOf, closeClients, sendJson } from '../support/fake-api.ts';
import { KubeDriver } from '../../src/kube/driver.ts';
import { NotFoundError, PreconditionFailedError } from '../../src/apply/ports/driver.ts';
import { ClusterBuilder, specYaml, NEW, OLD, nodes } from '../support/cluster.ts';
import { imageRef } from '../../src/sim/fake-ids.ts';
import { planWith, runApply, newSim } from '../support/apply.ts';

const t = suite('rollback: deleting or patching back the osImage MachineConfig, with a precondition');
const drivers: KubeDriver[] = [];
t.after(async () => {
  for (const d of drivers) d.close();
  closeClients();
  await closeFakes();
});

const MC = { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', name: '99-infra-zz-bootcplan-os-image' };

t('kube: DELETE carries the resourceVersion precondition; 409 is PreconditionFailedError, 404 NotFoundError', async () => {
  const seen: { url: string; body: string }[] = [];
  let answer: [number, unknown] = [200, { kind: 'Status', apiVersion: 'v1', status: 'Success' }];
  const f = await fakeApi((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ url: `${req.method} ${req.url}`, body });
      sendJson(res, answer[1], answer[0]);
    });
  });
  const d = new KubeDriver(clientOf(f.url));
  drivers.push(d);
  await d.delete(MC, { resourceVersion: '4711' });
  assert.is(seen[0].url, 'DELETE /apis/machineconfiguration.openshift.io/v1/machineconfigs/99-infra-zz-bootcplan-os-image');
  assert.equal(JSON.parse(seen[0].body), { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: '4711' } });
  answer = [
    409,
    {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
      message:
        'Operation cannot be fulfilled on machineconfigs.machineconfiguration.openshift.io "99-infra-zz-bootcplan-os-image": the ResourceVersion in the precondition (4711) does not match the ResourceVersion in record (4712). The object might have been modified',
    },
  ];
  const moved = await d.delete(MC, { resourceVersion: '4711' }).then(
    () => null,
    (e) => e,
  );
  assert.instance(moved, PreconditionFailedError);
  assert.match(moved.message, /MachineConfig 99-infra-zz-bootcplan-os-image: changed since it was read \(resourceVersion 4711\): not deleted/);
  answer = [404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' }];
  assert.instance(
    await d.delete(MC, { resourceVersion: '4711' }).then(
      () => null,
      (e) => e,
    ),
    NotFoundError,
  );
});

t('sim: a delete at another resourceVersion is refused and changes nothing; the pool renders its pre-run config again, same name', async () => {
  const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 2)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'infra', image: NEW }]), snap);
  const sim = newSim(snap);
  assert.is((await runApply(sim, plan, replan)).error, null);
  const mcp = () => sim.get('MachineConfigPool', 'infra')!;
  const afterRun = mcp().spec?.configuration?.name;
  assert.is.not(afterRun, 'rendered-infra-0001');
  const d = sim.driver();
  const rv = sim.get('MachineConfig', MC.name)!.metadata.resourceVersion!;
  assert.ok(rv, 'a created object has a resourceVersion');
  assert.instance(
    await d.delete(MC, { resourceVersion: `${rv}0` }).then(
      () => null,
      (e) => e,
    ),
    PreconditionFailedError,
  );
  assert.ok(sim.get('MachineConfig', MC.name));
  await d.delete(MC, { resourceVersion: rv });
  sim.advance(1);
  assert.is(sim.get('MachineConfig', MC.name), undefined);
  assert.is(mcp().spec?.configuration?.name, 'rendered-infra-0001', 'the base image renders the pre-run config, under its name');
  assert.is(sim.get('MachineConfig', 'rendered-infra-0001')!.spec?.osImageURL, OLD);
  assert.instance(
    await d.delete(MC, { resourceVersion: null }).then(
      () => null,
      (e) => e,
    ),
    NotFoundError,
  );
});

/** The rollback's patch of an osImage MachineConfig that existed before the run: its osImageURL from the run's image back to the pre-run one. */
const backOps = (from: string, to: string) => [
  { op: 'test' as const, path: '/spec/osImageURL', value: from },
  { op: 'replace' as const, path: '/spec/osImageURL', value: to },
];
const THIRD = imageRef('test-third');

t(
  "kube: the patch back is a JSON patch with the `test` of the run's image; a failed test (422, no causes) is PreconditionFailedError naming the field",
  async () => {
    const seen: { url: string; type: string | undefined; body: string }[] = [];
    let osImageURL = THIRD;
    let failTest = false;
    const mc = () => ({ ...MC, metadata: { name: MC.name, resourceVersion: '7' }, spec: { osImageURL } });
    const f = await fakeApi((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        seen.push({ url: `${req.method} ${req.url}`, type: req.headers['content-type'], body });
        if (req.method === 'PATCH' && failTest)
          // kube-apiserver's answer to a JSON patch it cannot apply (a failed `test`): a generic 422.
          return sendJson(
            res,
            {
              kind: 'Status',
              apiVersion: 'v1',
              status: 'Failure',
              reason: 'Invalid',
              code: 422,
              message: 'the server rejected our request due to an error in our request',
              details: {},
            },
            422,
          );
        if (req.method === 'PATCH') osImageURL = (JSON.parse(body) as { value: string }[])[1].value;
        sendJson(res, mc());
      });
    });
    const d = new KubeDriver(clientOf(f.url));
    drivers.push(d);
    const written = await d.patch(MC, backOps(THIRD, NEW));
    assert.is(seen[0].url, 'PATCH /apis/machineconfiguration.openshift.io/v1/machineconfigs/99-infra-zz-bootcplan-os-image');
    assert.is(seen[0].type, 'application/json-patch+json');
    assert.equal(JSON.parse(seen[0].body), backOps(THIRD, NEW));
    assert.is((written as { spec?: { osImageURL?: string } }).spec?.osImageURL, NEW);
    // Someone pointed it elsewhere since the plan: the test fails, nothing is overwritten.
    osImageURL = OLD;
    failTest = true;
    const moved = await d.patch(MC, backOps(THIRD, NEW)).then(
      () => null,
      (e) => e,
    );
    assert.instance(moved, PreconditionFailedError);
    const says = `MachineConfig ${MC.name}: /spec/osImageURL is ${JSON.stringify(OLD)}, the plan expected ${JSON.stringify(THIRD)}`;
    assert.ok(moved.message.includes(says), moved.message);
    assert.is(osImageURL, OLD);
  },
);

t('sim: a patch back whose test fails changes nothing; the patch back renders the pre-run config again, same name, and keeps the MachineConfig', async () => {
  // A first run created the MachineConfig (NEW); the second run moved it to THIRD.
  const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 2)).snapshot();
  const sim = newSim(snap);
  const first = planWith(specYaml([{ name: 'infra', image: NEW }]), snap);
  assert.is((await runApply(sim, first.plan, first.replan)).error, null);
  const mcp = () => sim.get('MachineConfigPool', 'infra')!;
  const onNew = mcp().spec?.configuration?.name;
  const second = planWith(specYaml([{ name: 'infra', image: THIRD }]), sim.snapshotCopy());
  assert.is((await runApply(sim, second.plan, second.replan)).error, null);
  assert.is.not(mcp().spec?.configuration?.name, onNew);
  const d = sim.driver();
  assert.instance(
    await d.patch(MC, backOps(OLD, NEW)).then(
      () => null,
      (e) => e,
    ),
    PreconditionFailedError,
  );
  assert.is(sim.get('MachineConfig', MC.name)!.spec?.osImageURL, THIRD, 'unchanged');
  await d.patch(MC, backOps(THIRD, NEW));
  sim.advance(1);
  assert.is(sim.get('MachineConfig', MC.name)!.spec?.osImageURL, NEW);
  assert.is(mcp().spec?.configuration?.name, onNew, "the first run's image renders the config the pool ran before, under its name");
  assert.is(sim.get('MachineConfig', onNew!)!.spec?.osImageURL, NEW);
});

t.run();
