/**
 * `rollout: slots` against the real API server, as the ServiceAccount of examples/rbac.yaml,
 * with the node agent playing the daemons: a full apply of a bootc pool in slots, while a watch
 * records that the pool never had more than maxUnavailable nodes unschedulable (or NotReady) at
 * once; every node rebooted once, uncordoned, on the target; the lock released.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, setupEnv, resetCluster, loadObjects, type TestEnv } from './env.ts';
import { NodeAgent } from './agent.ts';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST } from '../support/cluster.ts';
import { Reflector } from '../../src/kube/watch.ts';
import { NODE } from '../../src/kube/resources.ts';
import { io } from '../support/cli.ts';
import { run } from '../support/built.ts'; // the bundle, as the package ships it
import type { TestObject } from '../support/cluster.ts';

const t = suite('e2e: slots');
let env: TestEnv;
let agent: NodeAgent | null = null;
let dir: string;

const WORKERS = ['w-1', 'w-2', 'w-3', 'w-4', 'w-5', 'w-6', 'w-7'];
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];

t.before(async () => {
  env = await setupEnv();
  dir = tempDir('bootcplan-e2e-slots-');
});
t.after(() => agent?.stop());

t('full apply of a pool in slots: never more than maxUnavailable out, every node once, on the target', async () => {
  agent?.stop();
  await resetCluster(env.admin);
  await loadObjects(
    env.admin,
    new ClusterBuilder().bootcPool(
      'worker',
      WORKERS.map((name, i) => ({ name, zone: ZONES[i % 3] })),
      { maxUnavailable: 1 },
    ).objects,
  );
  agent = await new NodeAgent(env.admin, { scale: 1 }).start();
  const spec = join(dir, 'slots.yaml');
  writeFileSync(spec, specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, rollout: 'slots', drainTimeoutSeconds: 60 }]));

  let maxOut = 0;
  const r = new Reflector(env.admin, NODE);
  r.onChange(() => {
    let out = 0;
    for (const n of r.items.values() as Iterable<TestObject>) {
      const ready = (n.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
      if (n.spec?.unschedulable || !ready) out++;
    }
    maxOut = Math.max(maxOut, out);
  });
  await r.start();
  const cap = io();
  const code = await run(['apply', '-f', spec, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io: cap });
  r.stop();
  assert.is(code, 0, cap.err);
  assert.equal(agent!.errors, []);
  const evs = cap.out
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  assert.match(evs.find((e) => e.type === 'pool-start').message, /in slots/);
  assert.is(evs.at(-1).type, 'done');
  assert.ok(maxOut >= 1 && maxOut <= 2, `${maxOut} worker nodes out at once, maxUnavailable 2`);
  const snap = await (await import('../../src/kube/read.ts')).readLiveSnapshot(env.admin);
  for (const bn of snap.bootcNodes) assert.is(bn.status?.booted?.imageDigest, NEW_DIGEST, `${bn.metadata.name} runs the target`);
  for (const n of snap.nodes) assert.not.ok(n.spec?.unschedulable, `${n.metadata.name} is schedulable again`);
  for (const n of WORKERS) assert.is(agent!.log.filter((x) => x.node === n && x.what === 'reboot').length, 1, `${n} rebooted once`);
  assert.is(snap.lock, null, 'lock released');
});

t.run();
