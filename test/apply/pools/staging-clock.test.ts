/**
 * The staging limit across `apply --step` runs (docs/design.md §7 "Pools and waves"): the pool's
 * stagingTimeoutSeconds (default 600), counted from the BootcNode's Staging transition when that
 * time is credible (src/domain/clock-skew.ts), else from when bootcplan first saw the node
 * staging, kept in the run record (src/apply/pools/staging-clock.ts).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterBuilder, specYaml, planFor, NEW, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { parseRolloutSpec } from '../../../src/rollout-spec/load.ts';
import { progressOf } from '../../../src/kube/progress-configmap.ts';
import { credibleTime, CLOCK_SKEW_ALLOWANCE_SECONDS } from '../../../src/domain/clock-skew.ts';
import { run } from '../../../src/cli/main.ts';
import type { SimCluster } from '../../../src/sim/cluster.ts';
import { io } from '../../support/cli.ts';

const s = suite('staging-clock');
const FOREVER = { stage: 1e7, drain: 60, reboot: 300, softReboot: 60, ready: 30 };
const FUTURE = '2099-01-01T00:00:00Z';

/** Every staging BootcNode's Idle=False/Staging transition moved to 2099 (a node clock gone wrong). */
function stagingTimesInFuture(sim: SimCluster) {
  sim.mutate((o) => {
    for (const bn of o.bootcNodes.values()) {
      const idle = bn.status?.conditions?.find((c: any) => c.type === 'Idle');
      if (idle?.reason === 'Staging') idle.lastTransitionTime = FUTURE;
    }
  });
}

s('credibleTime: a time ahead of now by more than the allowance counts as now and reports the skew; within it, as itself (at most now)', () => {
  assert.equal(credibleTime(1000 + CLOCK_SKEW_ALLOWANCE_SECONDS + 1, 1000), { at: 1000, aheadSeconds: CLOCK_SKEW_ALLOWANCE_SECONDS + 1 });
  assert.equal(credibleTime(1000 + CLOCK_SKEW_ALLOWANCE_SECONDS, 1000), { at: 1000, aheadSeconds: 0 });
  assert.equal(credibleTime(900, 1000), { at: 900, aheadSeconds: 0 });
});

s('apply --step: a Staging time in 2099 does not keep the pool waiting forever; the run record keeps the first sight, the limit fires, exit 5', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]), snap, FOREVER);
  const sim = newSim(snap, { durations: FOREVER });
  const first = await runApply(sim, plan, replan, { step: true });
  assert.is(first.result?.outcome, 'waiting', String(first.error));
  stagingTimesInFuture(sim);
  const codes: number[] = [];
  let last = first;
  for (let i = 0; i < 12 && !codes.includes(5); i++) {
    sim.advance(120);
    last = await runApply(sim, plan, replan, { step: true });
    codes.push(last.code);
    if (i === 0) {
      // The first run that sees the future time: exit 0 saying so, with the skew in the message.
      assert.is(last.result?.outcome, 'waiting', String(last.error));
      assert.match(last.result!.wait!.message, /clock skew: BootcNode w-0\d's Staging time 2099-01-01T00:00:00Z is 7\dy ahead of this clock/);
      assert.ok(
        last.events.some((e) => e.type === 'wait' && /clock skew/.test(e.message)),
        'a skew event',
      );
      assert.ok(sim.progress.read(sim.nodes.values()).run!.pools.worker.stagingSeen?.['w-00'], 'first sight kept in the run record');
    }
  }
  assert.is(codes[codes.length - 1], 5, `codes ${codes.join(',')}: ${String(last.error)}`);
  assert.ok(codes.length <= 7, `halted within the limit plus one run interval (${codes.length} runs of 120 s)`);
  assert.match(String((last.error as Error).message), /staging active for more than 10 minutes/);
});

s("apply --step: the pool's stagingTimeoutSeconds is the limit (a 2-minute limit halts on the second run)", async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, stagingTimeoutSeconds: 120 }]), snap, FOREVER);
  assert.is(plan.pools[0].stagingTimeoutSeconds, 120);
  const sim = newSim(snap, { durations: FOREVER });
  assert.is((await runApply(sim, plan, replan, { step: true })).code, 0);
  sim.advance(150);
  const r = await runApply(sim, plan, replan, { step: true });
  assert.is(r.code, 5, String(r.error));
  assert.match(String((r.error as Error).message), /staging active for more than 2 minutes/);
});

s('spec: stagingTimeoutSeconds is an integer >= 1; absent, the plan pool has no such field (plans of older specs unchanged)', () => {
  const bad = parseRolloutSpec(specYaml([{ name: 'worker', image: NEW, stagingTimeoutSeconds: 0 }]), 'spec.yaml');
  const d = bad.diagnostics.find((x) => x.path === 'spec.pools[0].stagingTimeoutSeconds');
  assert.ok(d && d.severity === 'error', JSON.stringify(bad.diagnostics));
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot());
  assert.not.ok('stagingTimeoutSeconds' in plan.pools[0]);
});

s('run record: a stagingSeen that is not a map of node names to times is refused, naming the pool', () => {
  const rec = (seen: unknown) =>
    JSON.stringify({
      planId: '0123456789abcdef',
      startedAt: '2026-09-14T08:00:00Z',
      updatedAt: '2026-09-14T08:00:00Z',
      changesApplied: true,
      done: false,
      pools: { worker: { wavesDone: 0, done: false, stagingSeen: seen } },
    });
  assert.ok(progressOf(rec({ 'w-00': '2026-09-14T08:00:00Z' }), 'GET x').pools.worker.stagingSeen);
  assert.throws(() => progressOf(rec({ 'w-00': 'yesterday' }), 'GET x'), /pool "worker" has a stagingSeen/);
  assert.throws(() => progressOf(rec(['w-00']), 'GET x'), /pool "worker" has a stagingSeen/);
});

s('rehearse: stage=900 halts with the default 10-minute limit (exit 5); with stagingTimeoutSeconds: 1200 the same rehearsal completes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-stagelimit-'));
  const cluster = join(dir, 'cluster.yaml');
  writeFileSync(cluster, new ClusterBuilder().bootcPool('worker', nodes('w', 3)).yaml());
  const rehearse = async (extra: Record<string, unknown>) => {
    const file = join(dir, `spec-${Object.keys(extra).length}.yaml`);
    writeFileSync(file, specYaml([{ name: 'worker', image: NEW, ...extra }]));
    const o = io();
    const code = await run(['rehearse', '-f', file, '--cluster', cluster, '--durations', 'stage=900,reboot=420', '--seed', '7', '-o', 'json'], { io: o });
    return { code, o };
  };
  const dflt = await rehearse({});
  assert.is(dflt.code, 5, dflt.o.err);
  const longer = await rehearse({ stagingTimeoutSeconds: 1200 });
  assert.is(longer.code, 0, longer.o.err);
  const report = JSON.parse(longer.o.out);
  assert.equal([report.exitCode, report.halted], [0, false]);
  assert.equal([JSON.parse(dflt.o.out).halted], [true]);
});

s("docs/apply.md's rehearse example, on the plan of the examples, completes: its staging fits the default limit", async () => {
  const line = readFileSync('docs/apply.md', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('bootcplan rehearse PLANFILE --durations'))!;
  assert.ok(line, 'the example is there');
  const args = line
    .replace(/\s+#.*$/, '')
    .split(/\s+/)
    .slice(1);
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-docs-rehearse-'));
  const planFile = join(dir, 'plan.json');
  const o = io();
  assert.is(await run(['plan', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml', '--out', planFile], { io: o }), 0, o.err);
  o.out = '';
  assert.is(
    await run(
      args.map((a) => (a === 'PLANFILE' ? planFile : a)),
      { io: o },
    ),
    0,
    `${line}\n${o.err}`,
  );
  assert.is(JSON.parse(o.out).halted, false);
});

s.run();
