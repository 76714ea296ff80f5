import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import jsonpatch from 'fast-json-patch';
import { ClusterBuilder, specYaml, planFor, NEW, OLD, nodes } from '../support/cluster.ts';
import { osImageMachineConfigName } from '../../src/plan/pool.ts';
import { pickPaths, leafPaths } from '../../src/plan/patch.ts';

const s = suite('planner');

s('bootc pool: BootcNodePool gets image, resolved budget, kept paused; the patch applies and guards old values', () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 9)).snapshot();
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: '25%', drainTimeoutSeconds: 300, rebootPolicy: 'AllowSoftReboot' }]), snap);
  const ch = plan.changes.find((c) => c.kind === 'BootcNodePool')!;
  assert.is(ch.action, 'update');
  assert.is(ch.reason, 'pool-image');
  assert.is(ch.risk, 'disruptive');
  assert.equal(ch.after, {
    spec: { image: { ref: NEW }, rollout: { maxUnavailable: 2, paused: true, drainTimeoutSeconds: 300 }, disruption: { rebootPolicy: 'AllowSoftReboot' } },
  });
  assert.equal(ch.patch[0], { op: 'test', path: '/spec/image/ref', value: OLD });
  const live = structuredClone(snap.bootcNodePools[0]);
  const patched = jsonpatch.applyPatch(live, ch.patch as any, true, false).newDocument;
  assert.equal(pickPaths(patched, leafPaths(ch.after)), ch.after);
  // A cluster that moved since the plan: the test op fails instead of overwriting.
  const moved = structuredClone(snap.bootcNodePools[0]);
  moved.spec!.image!.ref = 'quay.io/someone/else@sha256:' + 'f'.repeat(64);
  assert.throws(() => jsonpatch.applyPatch(moved, ch.patch as any, true, false));
  const mcp = plan.changes.find((c) => c.kind === 'MachineConfigPool');
  assert.is(mcp, undefined, 'no MachineConfigPool of that name in this cluster');
});

s('the resolved integer is written to both pools when both exist', () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 10));
  b.mcoPool('worker', []);
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: '30%' }]), b.snapshot());
  const bnp = plan.changes.find((c) => c.kind === 'BootcNodePool')!;
  const mcp = plan.changes.find((c) => c.kind === 'MachineConfigPool')!;
  assert.is((bnp.after as any).spec.rollout.maxUnavailable, 3);
  assert.equal(mcp.after, { spec: { maxUnavailable: 3 } });
  assert.is(mcp.reason, 'pool-max-unavailable');
  assert.is(mcp.risk, 'none');
  assert.is(plan.pools[0].backend, 'bootc');
});

s('MCO-only pool: a MachineConfig carries osImageURL for the role (create), the pool gets budget and pause state', () => {
  // Paused by bootcplan (a halted apply: its bootcplan.dev/paused-by mark); an administrator's
  // pause stays (docs/safety.md rule 6, test/apply/pools/admin-pauses.test.ts).
  const b = new ClusterBuilder().mcoPool('worker', nodes('w', 6), { maxUnavailable: 1, paused: true });
  b.object('MachineConfigPool', 'worker').metadata.annotations = { 'bootcplan.dev/paused-by': '0123456789abcdef' };
  const snap = b.snapshot();
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), snap);
  assert.is(plan.pools[0].backend, 'mco');
  const mc = plan.changes.find((c) => c.kind === 'MachineConfig')!;
  assert.is(mc.action, 'create');
  assert.is(mc.name, osImageMachineConfigName('worker'));
  assert.equal((mc.object as any).metadata.labels['machineconfiguration.openshift.io/role'], 'worker');
  assert.equal((mc.object as any).spec, { osImageURL: NEW });
  const mcp = plan.changes.find((c) => c.kind === 'MachineConfigPool')!;
  assert.equal(mcp.after, { spec: { maxUnavailable: 2, paused: false } });
  assert.is(plan.summary.create, 1);
  assert.is(plan.summary.update, 1);
  assert.is(plan.pools[0].waves.length, 3);
  assert.ok(
    plan.pools[0].nodes.every((n) => n.from === OLD.slice(OLD.indexOf('@') + 1)),
    'booted image read from the rendered config of currentConfig',
  );
});

s('MCO-only pool with the MachineConfig present: update, then noop when everything matches', () => {
  const b = new ClusterBuilder().mcoPool('worker', nodes('w', 3));
  b.add({
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfig',
    metadata: { name: osImageMachineConfigName('worker'), labels: { 'machineconfiguration.openshift.io/role': 'worker' } },
    spec: { osImageURL: OLD },
  });
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), b.snapshot());
  const mc = plan.changes.find((c) => c.kind === 'MachineConfig')!;
  assert.is(mc.action, 'update');
  assert.equal(mc.patch, [
    { op: 'test', path: '/spec/osImageURL', value: OLD },
    { op: 'replace', path: '/spec/osImageURL', value: NEW },
  ]);

  const done = new ClusterBuilder().mcoPool('worker', nodes('w', 3, undefined, { current: true }));
  done.add({
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfig',
    metadata: { name: osImageMachineConfigName('worker') },
    spec: { osImageURL: NEW },
  });
  const same = planFor(specYaml([{ name: 'worker', image: NEW }]), done.snapshot());
  assert.ok(same.changes.every((c) => c.action === 'noop'));
  assert.is(same.summary.nodes, 0);
  assert.is(same.pools[0].upToDate, 3);
});

s('a pool that does not exist is an error at the pool name, listing the pools that do', () => {
  const plan = planFor(specYaml([{ name: 'wrker', image: NEW }]), new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot());
  const d = plan.diagnostics.find((x) => x.code === 'pool-not-found')!;
  assert.is(d.severity, 'error');
  assert.equal([d.file, d.line, d.column, d.path], ['spec.yaml', 7, 13, 'spec.pools[0].name']);
  assert.match(d.expected!, /worker/);
  assert.is(plan.summary.errors, 1);
});

s('nodes already on the target are not in the node plan; missing kinds mean not installed', () => {
  const ns = nodes('w', 4);
  ns[0].current = true;
  ns[1].current = true;
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), new ClusterBuilder(false).bootcPool('worker', ns).snapshot());
  assert.equal(plan.pools[0].nodes.map((n) => n.name).sort(), ['w-02', 'w-03']);
  assert.is(plan.pools[0].upToDate, 2);
  assert.is(plan.cluster.platform, null);
  assert.is(plan.cluster.version, null);
});

s('a tag target of an MCO-only pool warns that the plan is judged by name; a bootc pool waits for the pool to resolve it (issue 12 rule 8)', () => {
  const tag = 'quay.io/example/fedora-bootc-node:43';
  const mco = planFor(specYaml([{ name: 'worker', image: tag, allowTags: true }]), new ClusterBuilder().mcoPool('worker', nodes('w', 2)).snapshot());
  assert.ok(mco.diagnostics.some((d) => d.code === 'image-tag' && d.severity === 'warning'));
  assert.is(mco.pools[0].targetDigest, null);
  // bootc: the BootcNodePool resolves tags (status.targetDigest); test/apply/pools/staging-gate.test.ts.
  const plan = planFor(specYaml([{ name: 'worker', image: tag, allowTags: true }]), new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot());
  assert.ok(plan.diagnostics.some((d) => d.code === 'image-tag-unresolved' && d.severity === 'warning'));
  assert.is(plan.pools[0].targetDigest, null);
});

s('the plan is deterministic: same inputs, same id and bytes', () => {
  const mk = () => planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), new ClusterBuilder().bootcPool('worker', nodes('w', 7)).snapshot());
  const a = mk();
  const b = mk();
  assert.is(a.id, b.id);
  assert.is(JSON.stringify(a), JSON.stringify(b));
  const c = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3 }]), new ClusterBuilder().bootcPool('worker', nodes('w', 7)).snapshot());
  assert.is.not(a.id, c.id);
});

s('summary counts and estimate', () => {
  const plan = planFor(
    specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3, soakSeconds: 60 }]),
    new ClusterBuilder().bootcPool('worker', nodes('w', 9)).snapshot(),
  );
  assert.is(plan.summary.nodes, 9);
  assert.is(plan.summary.waves, 3);
  // stage 600 once, then 3 waves of drain 60 + reboot 300 + ready 30, 2 soaks of 60
  assert.is(plan.summary.estimatedSeconds, 600 + 3 * 390 + 2 * 60);
});

s('a field missing on the live object is added below its existing parent, never by replacing the parent', () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 4));
  b.mcoPool('worker', []);
  const mcp = b.objects.find((o) => o.kind === 'MachineConfigPool')!;
  delete mcp.spec.maxUnavailable; // the MCO's default (1) is often left unset
  const bnp = b.objects.find((o) => o.kind === 'BootcNodePool')!;
  delete bnp.spec.rollout; // and so is a BootcNodePool's rollout block
  const snap = b.snapshot();
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), snap);
  const mcpChange = plan.changes.find((c) => c.kind === 'MachineConfigPool')!;
  assert.equal(mcpChange.patch, [{ op: 'add', path: '/spec/maxUnavailable', value: 2 }]);
  const patched = jsonpatch.applyPatch(structuredClone(snap.machineConfigPools[0]), mcpChange.patch as any, true, false).newDocument;
  assert.equal(patched.spec!.nodeSelector, snap.machineConfigPools[0].spec!.nodeSelector, 'selectors survive');
  const bnpChange = plan.changes.find((c) => c.kind === 'BootcNodePool')!;
  assert.ok(bnpChange.patch.some((op) => op.op === 'add' && op.path === '/spec/rollout'));
  const bnpPatched = jsonpatch.applyPatch(structuredClone(snap.bootcNodePools[0]), bnpChange.patch as any, true, false).newDocument;
  assert.equal(bnpPatched.spec!.nodeSelector, snap.bootcNodePools[0].spec!.nodeSelector);
  assert.is(bnpPatched.spec!.rollout!.maxUnavailable, 2);
});

s.run();
