/**
 * Gates on trial, as an operator sees them (docs/apply.md "Health gates", "Holds"): a check with
 * `mode: observe` that fails lets the rollout finish (exit 0) and every outcome shows the failed
 * verdict it would have given, marked observe (the apply output, --json, the Rollout status, the
 * Events, the notification, the run record and `status`, the rehearsal of the built CLI); a
 * check with `onFailure: pause` halts (exit 5, pool paused, HealthCheckFailed), and
 * `apply PLANFILE --retry` of the same plan alone goes on past the paused gate, where a halt's
 * --retry measures the gate again first and fails again.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { inDir, io } from '../support/cli.ts';
import { runBin } from '../support/built.ts';
import { run } from '../../src/cli/main.ts';
import { gatedPool, webhookReceiver } from '../support/health-cli.ts';

const s = suite('apply: mode observe and onFailure pause, end to end on the simulated cluster');
const dir = mkdtempSync(join(tmpdir(), 'bootcplan-gates-trial-'));
const FAIL = 'rehearsal: --fail-check slo@wave=1';

const setup = (check: Record<string, unknown>, failChecks: string[]) =>
  gatedPool(
    dir,
    [
      { name: 'no-critical-alerts', alerts: { matchers: ['severity="critical"'] }, intervalSeconds: 10 },
      { name: 'slo', prometheus: { query: 'up', condition: 'min == 1' }, when: ['afterWave'], intervalSeconds: 10, ...check },
    ],
    failChecks,
  );
const receiver = webhookReceiver;

const ndjson = (out: string) =>
  out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

s(
  'mode observe, failing after wave 1: exit 0, and the apply output, Events, status, notification, run record and status command show the failed verdict',
  async () => {
    const { file, sim, openDriver } = setup({ mode: 'observe' }, ['slo@wave=1']);
    const rcv = await receiver();
    try {
      const o = io();
      assert.is(await run(['apply', '-f', file, '--auto-approve', '--notify', rcv.url], { io: o, openDriver }), 0, o.err);
      assert.match(
        o.err,
        /observing slo \(mode: observe, not enforced\) after wave 1: would have failed \(condition; on failure once enforced: halt\): rehearsal: --fail-check slo@wave=1/,
      );
      assert.match(o.out, /Apply of plan [0-9a-f]{16}: done in /);
      assert.is(sim.cordons.length, 4, 'every node was updated');

      const ev = sim.rollouts.events.filter((e) => e.reason === 'HealthCheckObserved');
      assert.equal(
        ev.map((e) => [e.type, e.regarding.kind]),
        [
          ['Normal', 'BootcNodePool'],
          ['Normal', 'BootcNodePool'],
        ],
        'one per afterWave gate',
      );
      assert.match(
        ev[0].note,
        /^slo \(mode: observe, not enforced\) would have failed \(condition; on failure once enforced: halt\) after wave 1\/2 of pool worker: rehearsal: /,
      );
      assert.match(ev[1].note, /^slo \(mode: observe, not enforced\) would have passed after wave 2\/2 of pool worker/);
      assert.not.ok(
        sim.rollouts.events.some((e) => e.reason === 'HealthCheckFailed'),
        'no Event says a check failed',
      );

      const st = sim.rollouts.objects.get('test')!.status!;
      assert.equal([st.phase, st.reason, st.lastExitCode], ['Healthy', 'Applied', 0]);
      assert.equal(st.healthCheck?.name, 'no-critical-alerts');
      assert.equal(st.healthCheck?.observing, [{ name: 'slo', mode: 'observe', result: 'passed', observed: st.healthCheck!.observing![0].observed }]);

      assert.equal(
        rcv.docs.filter((d) => d.event === 'health-check-observed').map((d) => [d.check, d.observed, d.mode]),
        [['slo', FAIL, 'observe']],
      );
      assert.not.ok(rcv.docs.some((d) => d.event === 'health-check-failed'));

      const rec = (await sim.driver().readProgress()).run!;
      assert.equal(
        rec.observing?.map((v) => [v.check, v.pool, v.point, v.result]),
        [['slo', 'worker', 'afterWave', 'passed']],
        'the last verdict per check and pool',
      );
      const so = io();
      assert.is(await run(['status'], { io: so, openDriver }), 0);
      assert.match(so.out, /observing slo \(mode: observe, not enforced\) for pool worker: would have passed after wave 2/);
    } finally {
      await rcv.close();
    }
  },
);

s('mode observe failing at the last gate: status and the run record keep the failed verdict; --json marks it observe', async () => {
  const { file, sim, openDriver } = setup({ mode: 'observe' }, ['slo@wave=2']);
  const o = io();
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--json'], { io: o, openDriver }), 0, o.err);
  const events = ndjson(o.out);
  const observed = events.filter((e) => e.type === 'gate-observe');
  assert.equal(
    observed.map((e) => [e.check, e.wave, e.mode, e.result, e.reason ?? null]),
    [
      ['slo', 1, 'observe', 'passed', null],
      ['slo', 2, 'observe', 'failed', 'condition'],
    ],
  );
  assert.equal(observed[1].observed, 'rehearsal: --fail-check slo@wave=2');
  assert.ok(events.filter((e) => e.type === 'gate-measure' && e.check === 'slo').every((e) => e.mode === 'observe'));
  assert.ok(events.filter((e) => e.type === 'gate-measure' && e.check !== 'slo').every((e) => !('mode' in e)));
  assert.equal(
    events.filter((e) => e.type === 'gate-fail'),
    [],
  );
  assert.equal(
    events.filter((e) => e.type === 'gate-pass').map((e) => e.checks),
    [['no-critical-alerts'], ['no-critical-alerts'], ['no-critical-alerts']],
    'only the enforcing check passed a gate (the preflight one and one per wave)',
  );
  assert.equal(events.at(-1).type, 'done');
  const st = sim.rollouts.objects.get('test')!.status!;
  assert.equal(st.reason, 'Applied');
  assert.equal(st.healthCheck?.observing, [{ name: 'slo', mode: 'observe', result: 'failed', observed: 'rehearsal: --fail-check slo@wave=2' }]);
  const so = io();
  assert.is(await run(['status'], { io: so, openDriver }), 0);
  assert.match(
    so.out,
    /observing slo \(mode: observe, not enforced\) for pool worker: WOULD HAVE FAILED after wave 2 at .*: rehearsal: --fail-check slo@wave=2/,
  );
});

s('onFailure pause: exit 5 (paused, HealthCheckFailed, held); apply PLANFILE again is refused; apply PLANFILE --retry alone finishes', async () => {
  const { file, sim, openDriver, snapFile } = setup({ onFailure: 'pause' }, ['slo@wave=1']);
  const work = mkdtempSync(join(tmpdir(), 'bootcplan-gates-pause-'));
  copyFileSync(file, join(work, 'bootcplan.yaml'));
  copyFileSync(snapFile, join(work, 'cluster.yaml'));
  await inDir(work, async () => {
    const p = io();
    assert.is(await run(['plan', '-f', 'bootcplan.yaml', '--cluster', 'cluster.yaml', '--out', 'plans/prod.json'], { io: p }), 0, p.err);
    assert.match(p.out, /on failure: pause \(pool paused, exit 5; apply --retry goes on past the gate\)/);
    const first = io();
    assert.is(await run(['apply', 'plans/prod.json'], { io: first, openDriver }), 5, first.err);
    assert.match(first.err, /error: rollout halted: health check slo failed after wave 1\/2 of pool worker/);
    assert.match(first.err, /apply PLANFILE --retry \(the same plan\) continues past this gate without measuring it again \(onFailure: pause\)/);
    const st = sim.rollouts.objects.get('test')!.status!;
    assert.equal([st.phase, st.reason, st.lastExitCode], ['Degraded', 'HealthCheckFailed', 5]);
    assert.ok(
      sim.writes.some((w) => w.op === 'pause'),
      'the pool was paused',
    );
    const so = io();
    await run(['status'], { io: so, openDriver });
    assert.match(so.out, /paused by health check slo \(onFailure: pause\): apply PLANFILE --retry goes on past its gate without measuring it again/);
    assert.match(so.out, /held: pool worker: .* was paused at /);

    const held = io();
    assert.is(await run(['apply', 'plans/prod.json'], { io: held, openDriver }), 5, held.err);
    assert.match(held.err, /pool worker is held back from this image: nothing was written/);

    // The check still fails at that gate: the --retry is the decision to go on past it.
    const o = io();
    assert.is(await run(['apply', 'plans/prod.json', '--json', '--retry'], { io: o, openDriver }), 0, o.err);
    const events = ndjson(o.out);
    const cleared = events.find((e) => e.type === 'holds-cleared');
    assert.match(cleared.message, /worker goes on past the gate that paused it, not measured again \(onFailure: pause\)/);
    assert.equal(
      events.filter((e) => e.type === 'gate-start').map((e) => e.wave),
      [2],
      'the gate after wave 1 is not measured again',
    );
    assert.equal(events.at(-1).type, 'done');
  });
  assert.is(sim.cordons.length, 4);
  assert.equal(sim.rollouts.objects.get('test')!.status!.reason, 'Applied');
});

s('onFailure halt, for contrast: apply PLANFILE --retry measures the failed gate again first, and fails again while the check fails', async () => {
  const { file, openDriver, snapFile } = setup({}, ['slo@wave=1']);
  const work = mkdtempSync(join(tmpdir(), 'bootcplan-gates-halt-'));
  copyFileSync(file, join(work, 'bootcplan.yaml'));
  copyFileSync(snapFile, join(work, 'cluster.yaml'));
  await inDir(work, async () => {
    assert.is(await run(['plan', '-f', 'bootcplan.yaml', '--cluster', 'cluster.yaml', '--out', 'plans/prod.json'], { io: io() }), 0);
    assert.is(await run(['apply', 'plans/prod.json'], { io: io(), openDriver }), 5);
    const o = io();
    assert.is(await run(['apply', 'plans/prod.json', '--json', '--retry'], { io: o, openDriver }), 5, o.err);
    assert.equal(
      ndjson(o.out)
        .filter((e) => e.type === 'gate-fail')
        .map((e) => [e.check, e.wave]),
      [['slo', 1]],
    );
  });
});

s('the built CLI rehearses an observing check that fails: exit 0, the gate row and the gates line say it would have failed', () => {
  const spec = join(dir, 'rehearse.yaml');
  writeFileSync(
    spec,
    specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 30 }], {
      healthChecks: [{ name: 'slo', prometheus: { url: 'http://prometheus:9090', auth: 'none', query: 'up', condition: 'min == 1' }, mode: 'observe' }],
    }),
  );
  const cluster = join(dir, 'rehearse-cluster.yaml');
  writeFileSync(cluster, new ClusterBuilder().bootcPool('worker', nodes('w', 4, undefined, { staged: true })).yaml());
  const r = runBin(['rehearse', '-f', spec, '--cluster', cluster, '--fail-check', 'slo@wave=1']);
  assert.is(r.code, 0, r.err);
  assert.match(r.out, /gate .* passed; observing slo would have failed/);
  assert.match(r.out, /Health gates: 3 passed \(.*\); observing \(not enforced\): slo would have failed after wave 1 of worker\./);
  const j = runBin(['rehearse', '-f', spec, '--cluster', cluster, '--fail-check', 'slo@wave=1', '-o', 'json']);
  assert.is(j.code, 0, j.err);
  const gates = JSON.parse(j.out).gates as { point: string; wave: number | null; result: string; observing?: { check: string; result: string }[] }[];
  assert.equal(
    gates.map((g) => [g.point, g.wave, g.result, (g.observing ?? []).map((o) => `${o.check} ${o.result}`)]),
    [
      ['preflight', null, 'passed', ['slo passed']],
      ['afterWave', 1, 'passed', ['slo failed']],
      ['afterWave', 2, 'passed', ['slo passed']],
    ],
  );
});

s.run();
