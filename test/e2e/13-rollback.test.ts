/**
 * A rollback on the real API server (docs/apply.md "Rollback"), as the ServiceAccount of
 * examples/rbac.yaml, with the node agent playing the bootc-operator and its daemons:
 * - a run stopped after its first wave (apply --step); `plan --rollback` from the cluster's run
 *   record; `apply` of that plan returns exactly the wave-1 nodes to the image each booted
 *   before (bootc keeps the run's image as the rollback deployment), never more than
 *   maxUnavailable unschedulable, no other node rebooted, no node rebooted more than twice;
 * - the forward plan applied again is held (exit 5) and writes nothing; `status` lists the hold;
 *   `apply --retry` lifts it and rolls forward.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inDir, io as capturedIO } from '../support/cli.ts';
import { tempDir, setupEnv, resetCluster, loadObjects, type TestEnv } from './env.ts';
import { NodeAgent } from './agent.ts';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, OLD } from '../support/cluster.ts';
import { run } from '../support/built.ts';
import { readLiveSnapshot } from '../../src/kube/read.ts';
import { Reflector } from '../../src/kube/watch.ts';
import { NODE } from '../../src/kube/resources.ts';
import { requestStats, resetRequestStats } from '../../src/kube/rest.ts';

const SA_CONTEXT = 'bootcplan@testenv';
const t = suite('e2e: rollback');
let env: TestEnv;
let agent: NodeAgent | null = null;
let dir: string;
const WORKERS = ['w-1', 'w-2', 'w-3', 'w-4', 'w-5', 'w-6'];
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];

t.before(async () => {
  env = await setupEnv();
  dir = tempDir('bootcplan-e2e-rollback-');
});
t.after(() => agent?.stop());

const events = (ndjson: string) =>
  ndjson
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

/** The most worker nodes unschedulable at once, from every Node event. */
async function unschedulableWatch() {
  let max = 0;
  const r = new Reflector(env.admin, NODE);
  r.onChange(() => {
    const n = [...r.items.values()].filter(
      (x) => x.metadata.name.startsWith('w-') && (x.spec as { unschedulable?: boolean } | undefined)?.unschedulable,
    ).length;
    max = Math.max(max, n);
  });
  await r.start();
  return {
    stop: () => r.stop(),
    get max() {
      return max;
    },
  };
}

/** apply PLAN --step until one wave ran (the first runs wait for staging); returns the nodes of that wave. */
async function stepOneWave(planFile: string): Promise<string[]> {
  for (let i = 0; i < 40; i++) {
    const io = capturedIO();
    const code = await run(['apply', planFile, '--kubeconfig', env.saKubeconfig, '--step', '--json'], { io: io });
    assert.is(code, 0, io.err);
    const evs = events(io.out);
    const wave = evs.find((e) => e.type === 'wave-start');
    if (evs.some((e) => e.type === 'wave-end')) return wave.nodes;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('no wave ran');
}

t('plan --rollback after a run, and its apply: the wave-1 nodes boot their previous image again; the forward plan is held', async () => {
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
  await inDir(dir, async () => {
    writeFileSync(join(dir, 'bootcplan.yaml'), specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0, drainTimeoutSeconds: 60 }]));
    const p = capturedIO();
    assert.is(await run(['plan', '--kubeconfig', env.saKubeconfig, '--out', 'plans/forward.json'], { io: p }), 0, p.err);
    const wave1 = await stepOneWave('plans/forward.json');
    assert.is(wave1.length, 2);

    const rb = capturedIO();
    assert.is(await run(['plan', '--rollback', '--kubeconfig', env.saKubeconfig, '--out', 'plans/rollback.json'], { io: rb }), 0, rb.err);
    assert.match(rb.out, /Rollback of plan [0-9a-f]{16} \(scope run\): 2 nodes back to .* in 1 wave/);
    assert.match(rb.out, /pool worker: back to .* via BootcNodePool\/worker spec\.image\.ref/);

    const watch = await unschedulableWatch();
    const reboots = agent!.log.filter((r) => r.what === 'reboot').length;
    const a = capturedIO();
    const code = await run(['apply', 'plans/rollback.json', '--kubeconfig', env.saKubeconfig, '--json'], { io: a });
    watch.stop();
    assert.is(code, 0, a.err);
    assert.equal(agent!.errors, []);
    const evs = events(a.out);
    assert.ok(evs.some((e) => e.type === 'rollback-start') && evs.some((e) => e.type === 'rollback-done'));
    assert.equal(
      evs
        .filter((e) => e.type === 'cordon')
        .map((e) => e.node)
        .sort(),
      [...wave1].sort(),
    );
    assert.ok(watch.max <= 2, `${watch.max} workers unschedulable at once, maxUnavailable 2`);
    const snap = await readLiveSnapshot(env.admin);
    assert.is(snap.bootcNodePools[0].spec?.image?.ref, OLD);
    for (const bn of snap.bootcNodes) {
      if (wave1.includes(bn.metadata.name)) {
        assert.is(bn.status?.booted?.image, OLD, `${bn.metadata.name} boots its previous image`);
        assert.is(bn.status?.rollback?.imageDigest, NEW_DIGEST, `${bn.metadata.name} keeps the run's image as its rollback deployment`);
      } else assert.is(bn.status?.booted?.image, OLD, `${bn.metadata.name} was never updated`);
    }
    const rebootsOf = (n: string) => agent!.log.filter((r) => r.node === n && r.what === 'reboot').length;
    assert.is(agent!.log.filter((r) => r.what === 'reboot').length - reboots, 2, 'the rollback rebooted two nodes');
    for (const n of WORKERS) assert.is(rebootsOf(n), wave1.includes(n) ? 2 : 0, `${n}: ${rebootsOf(n)} reboots`);
    for (const n of snap.nodes) assert.not.ok(n.spec?.unschedulable, `${n.metadata.name} schedulable again`);

    // The forward plan again (the GitOps CronJob): held, exit 5, nothing written but the lock.
    resetRequestStats();
    const again = capturedIO();
    assert.is(await run(['apply', 'plans/forward.json', '--kubeconfig', env.saKubeconfig, '--step'], { io: again }), 5, again.err);
    assert.match(again.err, /pool worker is held back from this image: nothing was written/);
    assert.match(again.err, /apply --retry/);
    const writes = Object.entries(requestStats(SA_CONTEXT).byVerbResource).filter(
      ([k]) => /^(PATCH|POST|PUT|DELETE) /.test(k) && !/leases|events|rollouts/.test(k),
    );
    assert.ok(requestStats(SA_CONTEXT).total > 0, 'the held apply was counted: it read the cluster and took the lock');
    assert.equal(writes, [], `writes of a held apply: ${JSON.stringify(writes)}`);
    const st = capturedIO();
    assert.is(await run(['status', '--kubeconfig', env.saKubeconfig], { io: st }), 0, st.err);
    assert.match(st.out, /held: pool worker: sha256:[0-9a-f]{12}… was rolled back at .*apply --retry/);

    // apply --retry lifts the hold; the plan is stale by now (the cluster moved back), so plan again.
    const fresh = capturedIO();
    assert.is(
      await run(['apply', '-f', 'bootcplan.yaml', '--kubeconfig', env.saKubeconfig, '--auto-approve', '--retry', '--json'], { io: fresh }),
      0,
      fresh.err,
    );
    assert.ok(events(fresh.out).some((e) => e.type === 'holds-cleared'));
    const done = await readLiveSnapshot(env.admin);
    for (const bn of done.bootcNodes) assert.is(bn.status?.booted?.imageDigest, NEW_DIGEST, `${bn.metadata.name} rolled forward`);
    for (const n of WORKERS) assert.ok(rebootsOf(n) <= 3, `${n}: ${rebootsOf(n)} reboots over run, rollback, run`);
  });
});

t.run();
