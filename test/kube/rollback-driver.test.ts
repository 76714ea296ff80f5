/**
 * ClusterDriver.delete, which a rollback uses to remove the osImage MachineConfig its run
 * created (docs/apply.md "Rollback"): only while the object is at the resourceVersion read
 * (DeleteOptions preconditions), as both drivers do it; and the simulated MCO renders the pool's
 * pre-run config again, under its old name.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fakeApi, closeFakes, clientOf, closeClients, sendJson } from '../support/fake-api.ts';
import { KubeDriver } from '../../src/kube/driver.ts';
import { NotFoundError, PreconditionFailedError } from '../../src/apply/driver.ts';
import { ClusterBuilder, specYaml, NEW, OLD, nodes } from '../support/cluster.ts';
import { planWith, runApply, newSim } from '../support/apply.ts';

const t = suite('rollback: deleting with a precondition');
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

t.run();
