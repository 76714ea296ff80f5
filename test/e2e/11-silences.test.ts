/**
 * Silences for the nodes in flight on the real API server, a real Alertmanager and a real
 * Prometheus that sends its alerts to it (docs/apply.md "Silences"): `bootcplan apply` as the
 * ServiceAccount of examples/rbac.yaml, the node agent playing the bootc daemons. Six bootc
 * workers, maxUnavailable 2: three waves.
 * - while a node is out of service, its silences exist on the Alertmanager (read back from
 *   /api/v2/silences) and match that node only; each is expired within one interval after its
 *   wave's soak; none is left when the rollout is done;
 * - E2ENodeBroken{node=X} for the node in flight does not fail its afterNode gate (source
 *   prometheus: ignored and counted; source alertmanager: silenced by construction); the same alert
 *   for a node not in flight does (exit 5);
 * - SIGTERM mid-wave: no silence outlives its TTL (every one is expired, or ends within it).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, setupEnv, resetCluster, loadObjects, type TestEnv } from './env.ts';
import { NodeAgent } from './agent.ts';
import { startPrometheus, type PrometheusHandle } from './prometheus.ts';
import { startAlertmanager, type AlertmanagerHandle, type GettableSilence } from './alertmanager.ts';
import { ClusterBuilder, specYaml, NEW } from '../support/cluster.ts';
import { run } from '../../src/cli/main.ts';
import { io as capturedIO } from '../support/cli.ts';
import { ensureBuilt } from '../support/built.ts';

const t = suite('e2e: silences on a real Alertmanager');
const WORKERS = ['w-1', 'w-2', 'w-3', 'w-4', 'w-5', 'w-6'];
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const TEMPLATES = ['node="{node}"', 'instance=~"{node}(:.*)?"'];
const NODE_ALERT = 'E2ENodeBroken';
const SOAK = 3;
const TTL_MINUTES = 2;
let env: TestEnv;
let prom: PrometheusHandle;
let am: AlertmanagerHandle;
let agent: NodeAgent | null = null;
let dir: string;
/** The node whose E2ENodeBroken alert fires (null: none). */
let brokenNode: string | null = null;

type Event = { type: string; t: number; [k: string]: any };

async function scenario(o: { healthChecks?: unknown[]; soak?: number; scale?: number } = {}): Promise<string> {
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
  const text = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: o.soak ?? SOAK, drainTimeoutSeconds: 60 }], {
    silences: { alertmanager: { url: am.url, auth: 'none' }, matchers: TEMPLATES, ttlMinutes: TTL_MINUTES },
    ...(o.healthChecks ? { healthChecks: o.healthChecks } : {}),
  });
  agent = await new NodeAgent(env.admin, { scale: o.scale ?? 1 }).start();
  const file = join(dir, `spec-${Date.now()}.yaml`);
  writeFileSync(file, text);
  return file;
}

/** `bootcplan apply --json` in this process; `onEvent` sees each event as it is written. */
async function apply(file: string, onEvent: (e: Event) => void = () => {}) {
  let out = '';
  let pending = '';
  const evs: Event[] = [];
  const io = capturedIO({
    stdout: (s) => {
      out += s;
      pending += s;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (!line) continue;
        const e = JSON.parse(line) as Event;
        evs.push(e);
        onEvent(e);
      }
    },
  });
  const code = await run(['apply', '-f', file, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io });
  return { code, out, err: io.err, evs };
}

const nodeOf = (s: GettableSilence) => {
  const m = s.matchers.find((x) => x.name === 'node');
  return m?.value ?? null;
};

t.before(async () => {
  env = await setupEnv();
  dir = tempDir('bootcplan-e2e-silences-');
  am = await startAlertmanager();
  prom = await startPrometheus(
    {},
    {
      alertmanagers: [am.hostPort],
      rules: `      - alert: ${NODE_ALERT}\n        expr: e2e_node_broken > 0\n        labels: {severity: critical}\n`,
      samples: () => (brokenNode ? { [`e2e_node_broken{node="${brokenNode}"}`]: 1 } : {}),
    },
  );
});

t.after(async () => {
  agent?.stop();
  await prom?.stop();
  await am?.stop();
});

t('3 waves: a silence for exactly the nodes in flight, each expired within one interval after its soak, none left', async () => {
  const file = await scenario();
  const checks: Promise<void>[] = [];
  const problems: string[] = [];
  /**
   * The nodes whose silences ended (their expire event written). A read answers a moment after
   * its event, so it may see the silences of a node that started meanwhile; it must never see an
   * active silence of a node that is back.
   */
  const back = new Set<string>();
  const r = await apply(file, (e) => {
    if (e.type !== 'silence') return;
    const node: string = e.node;
    const ids: string[] = e.ids;
    if (e.action === 'expire') back.add(node);
    const backNow = new Set(back);
    // Read back from the Alertmanager API as the event is written.
    checks.push(
      am.silences().then((all) => {
        const mine = all.filter((s) => ids.includes(s.id));
        if (mine.length !== (e.action === 'error' ? 0 : 2)) problems.push(`${e.action} ${node}: ${mine.length} silences of ids ${ids.join(',')}`);
        for (const s of mine) {
          const want = e.action === 'expire' ? 'expired' : 'active';
          if (s.status.state !== want) problems.push(`${e.action} ${node}: silence ${s.id} is ${s.status.state}`);
          if (s.createdBy !== 'bootcplan' || !s.comment.includes(`node ${node}`)) problems.push(`${s.id}: createdBy ${s.createdBy}, comment ${s.comment}`);
        }
        const byNode = mine.map(
          (s) =>
            nodeOf(s) ??
            s.matchers
              .find((x) => x.name === 'instance')
              ?.value.replace(/\(:\.\*\)\?$/, '')
              .replace(/\\\./g, '.'),
        );
        if (byNode.some((n) => n !== node)) problems.push(`${node}: its silences name ${byNode.join(', ')}`);
        for (const s of all.filter((x) => x.status.state === 'active')) {
          const n = nodeOf(s) ?? s.matchers[0].value.replace(/\(:\.\*\)\?$/, '');
          if (backNow.has(n)) problems.push(`at ${e.action} ${node}: active silence ${s.id} for ${n}, which is back`);
        }
      }),
    );
  });
  assert.is(r.code, 0, r.err);
  await Promise.all(checks);
  assert.equal(problems, []);
  const created = r.evs.filter((e) => e.type === 'silence' && e.action === 'create').map((e) => e.node);
  assert.equal([...created].sort(), WORKERS, 'every node was silenced once');
  // Expired within one interval (1 s) after the soak of its wave.
  for (const soak of r.evs.filter((e) => e.type === 'soak')) {
    const wave = r.evs.find((e) => e.type === 'wave-start' && e.wave === soak.wave);
    for (const n of wave!.nodes as string[]) {
      const ex = r.evs.find((e) => e.type === 'silence' && e.action === 'expire' && e.node === n);
      assert.ok(ex, `${n} expired`);
      const late = ex!.t - (soak.t + soak.seconds);
      assert.ok(late >= -0.5 && late <= 1, `${n}: expired ${late.toFixed(2)} s after its soak`);
    }
  }
  const left = (await am.silences()).filter((s) => s.status.state !== 'expired');
  assert.equal(left, [], 'no silence left');
});

const nodeGate = (name: string, alerts: Record<string, unknown>) => ({
  name,
  alerts: { auth: 'none', matchers: [`alertname="${NODE_ALERT}"`], ignore: [], ...alerts },
  when: ['afterNode'],
  intervalSeconds: 1,
  successes: 4,
  timeoutSeconds: 30,
});

t(
  'an alert for the node in flight does not fail its gate (ignored and counted; silenced in Alertmanager); the same alert for a node not in flight does',
  async () => {
    const checks = [nodeGate('nodes-prometheus', { url: prom.url }), nodeGate('nodes-alertmanager', { url: am.url, source: 'alertmanager' })];
    {
      const file = await scenario({ healthChecks: checks, scale: 3 });
      // The first node silenced breaks while it is in flight, and is fixed once its own gate passed:
      // by the end of its soak (3 s) Prometheus has resolved the alert (a scrape and an evaluation).
      let first: string | null = null;
      const inAlertmanager: Promise<string>[] = [];
      const r = await apply(file, (e) => {
        if (e.type === 'silence' && e.action === 'create' && !first) brokenNode = first = e.node;
        if (e.type === 'gate-pass' && e.node === first) brokenNode = null;
        // While the gate ignores it, Alertmanager has it suppressed by bootcplan's silence.
        if (e.type === 'gate-measure' && e.node === first && /ignored 1 alert/.test(e.observed))
          inAlertmanager.push(
            am.alerts().then((all) => {
              const a = all.find((x) => x.labels.alertname === NODE_ALERT && x.labels.node === first);
              return a ? `${a.status.state} by ${a.status.silencedBy.length}` : 'absent';
            }),
          );
      });
      brokenNode = null;
      assert.is(r.code, 0, r.err);
      const states = await Promise.all(inAlertmanager);
      assert.ok(
        states.some((x) => /^suppressed by [12]$/.test(x)),
        `Alertmanager had the alert suppressed by bootcplan's silences: ${states.join(', ')}`,
      );
      const measured = r.evs.filter((e) => e.type === 'gate-measure' && e.node === first && e.check === 'nodes-prometheus').map((e) => e.observed);
      assert.ok(
        measured.some((m) => /ignored 1 alert covered by bootcplan's \d+ silences/.test(m)),
        `the alert of ${first} was seen and ignored:\n${measured.join('\n')}`,
      );
    }
    await prom.waitForAlert(NODE_ALERT, false, 30_000);
    {
      const file = await scenario({ healthChecks: checks });
      brokenNode = 'w-6';
      try {
        await prom.waitForAlert(NODE_ALERT, true);
        const r = await apply(file);
        assert.is(r.code, 5, r.err);
        const fail = r.evs.find((e) => e.type === 'gate-fail');
        assert.ok(fail, r.err);
        assert.match(fail.observed, /E2ENodeBroken\{.*node="w-6"/);
        assert.not.ok(
          r.evs.some((e) => e.type === 'silence' && e.action === 'create' && e.node === 'w-6'),
          'w-6 was never in flight',
        );
        const left = (await am.silences()).filter((s) => s.status.state !== 'expired');
        assert.equal(left, [], 'the halt expired every silence');
      } finally {
        brokenNode = null;
      }
    }
  },
);

t('SIGTERM mid-wave: every silence is expired, or ends within its TTL', async () => {
  const file = await scenario({ scale: 5 });
  const planFile = join(dir, 'stop-plan.json');
  const p = capturedIO();
  assert.is(await run(['plan', '-f', file, '--kubeconfig', env.saKubeconfig, '--out', planFile], { io: p }), 0, p.err);
  const before = new Set((await am.silences()).map((s) => s.id));
  const child = spawn(process.execPath, [ensureBuilt(), 'apply', planFile, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let sent = false;
  child.stderr.on('data', (d) => (err += d));
  child.stdout.on('data', (d) => {
    out += d;
    if (!sent && /"type":"silence","action":"create"/.test(out)) {
      sent = true;
      child.kill('SIGTERM');
    }
  });
  const limit = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  clearTimeout(limit);
  assert.ok(sent, `no silence was created:\n${out}\n${err}`);
  assert.is(code, 143, err);
  const now = Date.now();
  const mine = (await am.silences()).filter((s) => !before.has(s.id));
  assert.ok(mine.length >= 2, 'the silences of the stopped run are there to read');
  for (const s of mine) {
    const endsIn = (Date.parse(s.endsAt) - now) / 1000;
    assert.ok(s.status.state === 'expired' || endsIn <= TTL_MINUTES * 60, `${s.id} ${s.status.state}, ends in ${endsIn} s`);
  }
  assert.ok(
    mine.every((s) => s.status.state === 'expired'),
    `a stop expires them: ${mine.map((s) => s.status.state).join(', ')}`,
  );
});

t.run();
