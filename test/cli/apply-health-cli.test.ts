/**
 * `apply` with health gates, as an operator sees it (docs/apply.md "Health gates"): exit 5 and a
 * one-screen error naming the check and the value it saw; the Rollout status (reason
 * HealthCheckFailed, status.healthCheck), an Event for every gate verdict, a notification with
 * the check; `apply --json` carries the gate events; the next apply runs the due gate first and
 * goes on when it passes; `status` shows the gates passed.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { specYaml, NEW } from '../support/cluster.ts';
import { inDir, io } from '../support/cli.ts';
import { run } from '../../src/cli/main.ts';
import type { DriverFactory } from '../../src/app/ports.ts';
import { gatedPool, webhookReceiver } from '../support/health-cli.ts';

const s = suite('apply: health gates in the status, Events, notifications and --json');
const dir = mkdtempSync(join(tmpdir(), 'bootcplan-apply-health-'));

const setup = (failChecks: string[] = []) =>
  gatedPool(dir, [{ name: 'no-critical-alerts', alerts: { matchers: ['severity="critical"'] }, intervalSeconds: 10, successes: 2 }], failChecks);
const receiver = webhookReceiver;

s('a failed gate: exit 5 naming the check and what it saw; status HealthCheckFailed; Events; a notification with the check', async () => {
  const { file, sim, openDriver } = setup(['no-critical-alerts@wave=1']);
  const rcv = await receiver();
  try {
    const o = io();
    assert.is(await run(['apply', '-f', file, '--auto-approve', '--notify', rcv.url], { io: o, openDriver }), 5);
    assert.match(
      o.err,
      /error: rollout halted: health check no-critical-alerts failed after wave 1\/2 of pool worker: rehearsal: --fail-check no-critical-alerts@wave=1\n {2}no further node was started/,
    );
    const st = sim.rollouts.objects.get('test')!.status!;
    assert.equal([st.phase, st.reason, st.lastExitCode], ['Degraded', 'HealthCheckFailed', 5]);
    assert.match(st.message ?? '', /^halted: health check no-critical-alerts failed after wave 1\/2 of pool worker: rehearsal: /);
    assert.equal(st.healthCheck, {
      name: 'no-critical-alerts',
      point: 'afterWave',
      pool: 'worker',
      wave: 1,
      node: null,
      result: 'failed',
      observed: 'rehearsal: --fail-check no-critical-alerts@wave=1',
      at: st.healthCheck!.at,
    });
    const ev = sim.rollouts.events.map((e) => `${e.type} ${e.reason} ${e.regarding.kind}/${e.regarding.name}`);
    assert.ok(ev.includes('Normal HealthCheckPassed Rollout/test'), ev.join('\n'));
    assert.ok(ev.includes('Warning HealthCheckFailed BootcNodePool/worker'), ev.join('\n'));
    assert.ok(ev.includes('Warning HealthCheckFailed Rollout/test'), "the run's final Event on the Rollout");
    const failed = sim.rollouts.events.find((e) => e.reason === 'HealthCheckFailed' && e.regarding.kind === 'BootcNodePool')!;
    assert.match(
      failed.note,
      /^no-critical-alerts failed after wave 1\/2 of pool worker \(condition; on failure: halt\): rehearsal: --fail-check no-critical-alerts@wave=1 \(plan [0-9a-f]{16}\)$/,
    );
    const docs = rcv.docs.map((d) => d.event);
    assert.equal(docs, ['wave-start', 'health-check-failed']);
    assert.equal(
      [rcv.docs[1].check, rcv.docs[1].observed, rcv.docs[1].phase],
      ['no-critical-alerts', 'rehearsal: --fail-check no-critical-alerts@wave=1', 'Degraded'],
    );
  } finally {
    await rcv.close();
  }
});

s('apply PLANFILE again runs the due gate first and goes on once it passes; status shows the gates passed; --json has the gate events', async () => {
  const { file, sim, openDriver, fail, snapFile } = setup(['no-critical-alerts@wave=1']);
  const work = mkdtempSync(join(tmpdir(), 'bootcplan-apply-health-plan-'));
  copyFileSync(file, join(work, 'bootcplan.yaml'));
  copyFileSync(snapFile, join(work, 'cluster.yaml'));
  const o = io();
  await inDir(work, async () => {
    const p = io();
    assert.is(await run(['plan', '-f', 'bootcplan.yaml', '--cluster', 'cluster.yaml', '--out', 'plans/prod.json'], { io: p }), 0, p.err);
    const first = io();
    assert.is(await run(['apply', 'plans/prod.json'], { io: first, openDriver }), 5, first.err);
    fail.rules = [];
    // The halt held the pool for this image (docs/apply.md "Holds"): a human lifts it.
    const held = io();
    assert.is(await run(['apply', 'plans/prod.json'], { io: held, openDriver }), 5, held.err);
    assert.match(held.err, /pool worker is held back from this image: nothing was written/);
    assert.is(await run(['apply', 'plans/prod.json', '--json', '--retry'], { io: o, openDriver }), 0, o.err);
  });
  const events = o.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const gates = events.filter((e) => e.type.startsWith('gate-') && e.type !== 'gate-measure').map((e) => `${e.type} ${e.point} ${e.wave}`);
  assert.equal(gates, ['gate-start afterWave 1', 'gate-pass afterWave 1', 'gate-start afterWave 2', 'gate-pass afterWave 2']);
  assert.ok(events.some((e) => e.type === 'gate-measure' && e.outcome === 'pass' && e.observed === 'rehearsal: healthy'));
  const st = sim.rollouts.objects.get('test')!.status!;
  assert.equal([st.reason, st.healthCheck?.result, st.healthCheck?.wave], ['Applied', 'passed', 2]);
  const so = io();
  assert.is(await run(['status'], { io: so, openDriver }), 0);
  assert.match(so.out, /preflight health gate: passed/);
  assert.match(so.out, /health gates passed after waves 1-2/);
});

s('without a health source for the cluster, a plan with checks is refused before anything is written', async () => {
  const { file, sim } = setup();
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'job@test' });
  const o = io();
  assert.is(await run(['apply', '-f', file, '--auto-approve'], { io: o, openDriver }), 1);
  assert.match(o.err, /has health checks and no health source/);
  assert.equal(
    sim.writes.filter((w) => !['lock', 'unlock', 'status', 'event'].includes(w.op)),
    [],
    "only the run's status and Event",
  );
  assert.is(sim.lock.leaseOf(), null);
});

s('apply -f after a halt plans afresh (a new run record): the check that halted runs at the preflight gate, whatever its when', async () => {
  const { sim, openDriver, fail } = setup(['slo@wave=1', 'slo@preflight']);
  const text = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 30 }], {
    healthChecks: [{ name: 'slo', prometheus: { query: 'up', condition: 'min == 1' }, when: ['afterWave'], intervalSeconds: 10 }],
  });
  const file = join(dir, 'slo.yaml');
  writeFileSync(file, text);
  assert.is(await run(['apply', '-f', file, '--auto-approve'], { io: io(), openDriver }), 5);
  const o = io();
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--json', '--retry'], { io: o, openDriver }), 5, o.err);
  const events = o.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(
    events.filter((e) => e.type === 'gate-fail').map((e) => [e.point, e.check]),
    [['preflight', 'slo']],
  );
  assert.equal(
    events.filter((e) => e.type === 'cordon'),
    [],
    'no node started',
  );
  fail.rules = [];
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--retry'], { io: io(), openDriver }), 0);
  assert.equal(sim.cordons.length, 4);
});

/** A plan file of the setup's spec, applied once: halted by the check after wave 1 (exit 5), the pool held. */
async function haltedPlan(work: string, file: string, snapFile: string, openDriver: DriverFactory): Promise<void> {
  copyFileSync(file, join(work, 'bootcplan.yaml'));
  copyFileSync(snapFile, join(work, 'cluster.yaml'));
  const p = io();
  assert.is(await run(['plan', '-f', 'bootcplan.yaml', '--cluster', 'cluster.yaml', '--out', 'plans/prod.json'], { io: p }), 0, p.err);
  assert.is(await run(['apply', 'plans/prod.json'], { io: io(), openDriver }), 5);
}

s('status headlines a halted run as HALTED with the check that halted it, in text and in -o json', async () => {
  const { file, openDriver, snapFile } = setup(['no-critical-alerts@wave=1']);
  const work = mkdtempSync(join(tmpdir(), 'bootcplan-apply-health-status-'));
  await inDir(work, async () => {
    await haltedPlan(work, file, snapFile, openDriver);
    const so = io();
    assert.is(await run(['status'], { io: so, openDriver }), 0);
    const head = so.out.split('\n')[1];
    assert.match(head, /^plan [0-9a-f]{16}: HALTED by health check no-critical-alerts in pool worker \(started [^,]+, last update [^)]+\)$/, so.out);
    assert.not.match(so.out, /in progress/);
    const sj = io();
    assert.is(await run(['status', '-o', 'json'], { io: sj, openDriver }), 0);
    const progress = JSON.parse(sj.out).progress;
    assert.equal([progress.state, progress.haltedBy], ['halted', [{ pool: 'worker', check: 'no-critical-alerts', node: null }]]);
  });
});

s('a held apply under --json prints its refusal as an event on stdout (exit 5), from a plan file and from apply -f', async () => {
  const { file, openDriver, snapFile } = setup(['no-critical-alerts@wave=1']);
  const work = mkdtempSync(join(tmpdir(), 'bootcplan-apply-health-refused-'));
  await inDir(work, async () => {
    await haltedPlan(work, file, snapFile, openDriver);
    // The CronJob's next run of the held plan, read by a tool: the refusal is an event on stdout.
    const held = io();
    assert.is(await run(['apply', 'plans/prod.json', '--json'], { io: held, openDriver }), 5, held.err);
    const lines = held.out.trim().split('\n').filter(Boolean);
    assert.is(lines.length, 1, held.out);
    const e = JSON.parse(lines[0] ?? '{}');
    assert.equal([e.type, e.reason, e.exitCode], ['refused', 'held', 5]);
    assert.match(e.message, /^pool worker is held back from this image: nothing was written$/);
    assert.ok(
      e.details.some((d: string) => /^pool worker: sha256:[0-9a-f]{12}… was halted at .* because health check no-critical-alerts failed/.test(d)),
      JSON.stringify(e.details),
    );
    assert.match(held.err, /pool worker is held back from this image/, 'stderr keeps the one-screen error');
  });
  // apply -f of the same image, whose hold the applier finds after taking the lock: the same event.
  const again = io();
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--json'], { io: again, openDriver }), 5, again.err);
  const last = JSON.parse(again.out.trim().split('\n').pop() ?? '{}');
  assert.equal([last.type, last.reason, last.exitCode], ['refused', 'held', 5]);
});

s.run();
