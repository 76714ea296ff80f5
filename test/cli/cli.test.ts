import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { ensureBuilt, runBin, ROOT } from '../support/built.ts';
import { cli } from '../support/cli.ts';

const s = suite('cli');

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-cli-'));
const clusterFile = join(dir, 'cluster.yaml');
writeFileSync(clusterFile, new ClusterBuilder().bootcPool('worker', nodes('w', 6)).yaml());
const specFile = join(dir, 'bootcplan.yaml');
writeFileSync(specFile, specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]));

s('plan prints the plan and the Plan: line; exit 0', async () => {
  const r = await cli(['plan', '-f', specFile, '--cluster', clusterFile]);
  assert.is(r.code, 0, r.err);
  const last = r.out.trimEnd().split('\n').pop()!;
  assert.match(last, /^Plan: 0 to create, 1 to change, 0 to delete; 6 nodes in 3 waves \(est\. \d+m(\d+s)?\)\.$/);
  assert.not.match(r.out, /\x1b\[/, 'no colour when stdout is not a TTY');
});

s('colour only on a TTY, and NO_COLOR wins', async () => {
  assert.match((await cli(['plan', '-f', specFile, '--cluster', clusterFile], { io: { env: {}, stdoutIsTTY: true, stderrIsTTY: true } })).out, /\x1b\[/);
  assert.not.match(
    (await cli(['plan', '-f', specFile, '--cluster', clusterFile], { io: { env: { NO_COLOR: '1' }, stdoutIsTTY: true, stderrIsTTY: true } })).out,
    /\x1b\[/,
  );
});

s('--detailed-exitcode: 2 with changes, 0 without', async () => {
  assert.is((await cli(['plan', '-f', specFile, '--cluster', clusterFile, '--detailed-exitcode'])).code, 2);
  const doneCluster = join(dir, 'done.yaml');
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 3, undefined, { current: true }), { image: NEW, maxUnavailable: 2 });
  writeFileSync(doneCluster, b.yaml());
  const r = await cli(['plan', '-f', specFile, '--cluster', doneCluster, '--detailed-exitcode']);
  assert.is(r.code, 0, r.out + r.err);
  assert.match(r.out, /Plan: 0 to create, 0 to change, 0 to delete; 0 nodes in 0 waves/);
});

s('-o json is the plan; --out saves it; show renders the saved plan identically', async () => {
  const j = await cli(['plan', '-f', specFile, '--cluster', clusterFile, '-o', 'json']);
  const plan = JSON.parse(j.out);
  assert.is(plan.formatVersion, '1.0');
  assert.is(plan.summary.waves, 3);
  const out = join(dir, 'saved.json');
  const saved = await cli(['plan', '-f', specFile, '--cluster', clusterFile, '--out', out]);
  assert.match(saved.err, /saved plan [0-9a-f]{16} to /);
  assert.equal(JSON.parse(readFileSync(out, 'utf8')), plan);
  const shown = await cli(['show', out]);
  assert.is(shown.code, 0);
  assert.is(shown.out, saved.out);
});

s('show verifies the seal as apply does (installed command): soak times edited by hand, exit 3, nothing rendered', async () => {
  const out = join(dir, 'edited.json');
  assert.is((await cli(['plan', '-f', specFile, '--cluster', clusterFile, '--out', out])).code, 0);
  const plan = JSON.parse(readFileSync(out, 'utf8'));
  assert.is(runBin(['show', out]).code, 0);
  plan.pools[0].soakSeconds += 600;
  writeFileSync(out, JSON.stringify(plan, null, 2));
  const r = runBin(['show', out]);
  assert.is(r.code, 3, r.err);
  assert.is(r.out, '');
  assert.match(
    r.err,
    new RegExp(`^error: stale plan: the plan file was modified after it was made\n  its content hashes to [0-9a-f]{16}, but it says it is plan ${plan.id}\n`),
  );
});

s('--out writes where it is told: a bare name in the working directory; --out alone: plans/NAME-ID.json', async () => {
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const r = await cli(['plan', '-f', specFile, '--cluster', clusterFile, '--out', 'pr-42.json']);
    assert.is(r.code, 0);
    assert.match(r.err, /^saved plan [0-9a-f]{16} to pr-42\.json\n/);
    assert.ok(existsSync(join(dir, 'pr-42.json')));
    assert.not.ok(existsSync(join(dir, 'plans', 'pr-42.json')));
    const fp = await cli(['fleet', 'plan', '-f', join(ROOT, 'examples/fleet/fleet.yaml'), '--out', 'fleet-42.json']);
    assert.is(fp.code, 0, fp.err);
    assert.ok(existsSync(join(dir, 'fleet-42.json')));
    const alone = await cli(['plan', '-f', specFile, '--cluster', clusterFile, '--out']);
    const id = JSON.parse(readFileSync(join(dir, 'pr-42.json'), 'utf8')).id;
    assert.ok(existsSync(join(dir, 'plans', `${JSON.parse(readFileSync(join(dir, 'pr-42.json'), 'utf8')).spec.name}-${id}.json`)), alone.err);
  } finally {
    process.chdir(cwd);
  }
});

s('validate: ok, spec errors with file:line:column, cluster errors with --cluster', async () => {
  const ok = await cli(['validate', '-f', specFile]);
  assert.is(ok.code, 0);
  assert.match(ok.out, /valid \(1 pool\)/);
  const bad = join(dir, 'bad.yaml');
  writeFileSync(
    bad,
    'apiVersion: bootcplan.dev/v1alpha1\nkind: Rollout\nmetadata:\n  name: x\nspec:\n  pools:\n    - name: worker\n      image: q/x:latest\n      maxUnavailable: 0\n',
  );
  const r = await cli(['validate', '-f', bad]);
  assert.is(r.code, 1);
  assert.match(r.err, /bad\.yaml:8:14: spec\.pools\[0\]\.image: .* is not pinned/);
  assert.match(r.err, /bad\.yaml:9:23: spec\.pools\[0\]\.maxUnavailable: 0 would never/);
  assert.match(r.err, /hint: to hold this pool back, set `paused: true`/);
  const missingPool = join(dir, 'missing.yaml');
  writeFileSync(missingPool, specYaml([{ name: 'infra', image: NEW }]));
  const c = await cli(['validate', '-f', missingPool, '--cluster', clusterFile]);
  assert.is(c.code, 1);
  assert.match(c.err, /missing\.yaml:7:\d+: spec\.pools\[0\]\.name: no BootcNodePool or MachineConfigPool named "infra"/);
});

s('a plan with an error diagnostic exits 1 even with --detailed-exitcode', async () => {
  const missingPool = join(dir, 'missing2.yaml');
  writeFileSync(missingPool, specYaml([{ name: 'infra', image: NEW }]));
  const r = await cli(['plan', '-f', missingPool, '--cluster', clusterFile, '--detailed-exitcode']);
  assert.is(r.code, 1);
  assert.match(r.out, /this plan cannot be applied/);
});

s('bad input never shows a stack trace: missing files, garbage, bad flags, bad plan files', async () => {
  const cases: string[][] = [
    ['plan', '-f', join(dir, 'nope.yaml'), '--cluster', clusterFile],
    ['plan', '-f', specFile, '--cluster', join(dir, 'nope.yaml')],
    ['plan', '-f', specFile, '--cluster', dir],
    ['plan', '-f', specFile, '--cluster', clusterFile, '-o', 'pdf'],
    ['show', specFile],
    ['frobnicate'],
  ];
  const garbage = join(dir, 'garbage.bin');
  writeFileSync(garbage, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 0xff, 0xfe]));
  cases.push(['plan', '-f', garbage, '--cluster', clusterFile], ['plan', '-f', specFile, '--cluster', garbage]);
  for (const args of cases) {
    const r = await cli(args);
    assert.is(r.code, 1, args.join(' '));
    assert.not.match(r.err, /\n\s+at .*\(.*:\d+:\d+\)/, `stack trace for ${args.join(' ')}:\n${r.err}`);
    assert.ok(r.err.trim().split('\n').length <= 24, 'fits on one screen');
    assert.match(r.err, /error/);
  }
});

s('the installed binary runs (bin/bootcplan.mjs through node), with exit codes', () => {
  ensureBuilt();
  const r = spawnSync('node', ['bin/bootcplan.mjs', 'plan', '-f', specFile, '--cluster', clusterFile, '--detailed-exitcode'], { encoding: 'utf8' });
  assert.is(r.status, 2, r.stderr);
  assert.match(r.stdout, /Plan: 0 to create, 1 to change/);
  const v = execFileSync('node', ['bin/bootcplan.mjs', '--version'], { encoding: 'utf8' });
  assert.match(v, /^\d+\.\d+\.\d+/);
});

s('plan evaluates maintenance windows at the injected clock (deps.now)', async () => {
  const windowed = join(dir, 'windowed.yaml');
  writeFileSync(
    windowed,
    specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }], {
      maintenanceWindows: [{ schedule: '0 22 * * 1-5', duration: '1h', timezone: 'Europe/Berlin' }],
    }),
  );
  const planAt = async (iso: string) => {
    const { code, out } = await cli(['plan', '-f', windowed, '--cluster', clusterFile], { io: { env: {} }, now: () => Date.parse(iso) });
    assert.is(code, 0);
    return out;
  };
  assert.match(await planAt('2026-12-02T21:30:00Z'), /Maintenance window open now, until Wed 2026-12-02 23:00 Europe\/Berlin/);
  assert.match(await planAt('2026-12-02T12:00:00Z'), /Outside the maintenance windows .* Next window Wed 2026-12-02 22:00 Europe\/Berlin/);
});

s('a cluster failure from the driver is one error line with a hint, exit 1, never "internal error"', async () => {
  const { DriverError } = await import('../../src/apply/ports/driver.ts');
  const { newSim } = await import('../support/apply.ts');
  const { readSnapshotFile, nodeInputs } = await import('../../src/app/inputs.ts');
  const sim = newSim(readSnapshotFile(nodeInputs, clusterFile));
  const driver = Object.create(sim.driver());
  driver.readLock = async () => {
    throw new DriverError('Lease openshift-bootcplan/bootcplan-lock: conflict after 8 tries');
  };
  const { code, err } = await cli(['status'], { io: { env: {} }, openDriver: async () => ({ driver, holder: 't' }) });
  assert.is(code, 1);
  assert.match(err, /^error: Lease openshift-bootcplan\/bootcplan-lock: conflict after 8 tries\n {2}hint: /);
  assert.not.match(err, /internal error/);
});

s('--request-timeout is a flag of every command that talks to the API; a bad value is a clean error', async () => {
  for (const cmd of ['plan', 'apply', 'snapshot', 'status', 'unlock']) {
    const help = await cli([cmd, '--help']);
    assert.match(help.out, /--request-timeout <duration>/, cmd);
  }
  const bad = await cli(['snapshot', '--request-timeout', 'soon', '--kubeconfig', join(dir, 'missing')]);
  assert.is(bad.code, 1);
  assert.match(bad.err, /--request-timeout/);
  assert.not.match(bad.err, /internal error|\n\s+at /);
});

s('terminal control sequences from input reach stderr escaped (a node name that clears the screen)', async () => {
  const evil = join(dir, 'evil.yaml');
  writeFileSync(
    evil,
    'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {labels: {a: b}}\n  spec: {providerID: "\\e[2J\\e]8;;http://x\\a"}\n- kind: "Node\\e[2J\\u202e"\n  metadata: {name: "n\\e[31m"}\n',
  );
  const r = await cli(['plan', '-f', specFile, '--cluster', evil]);
  assert.is(r.code, 1);
  assert.match(r.err, /Node\\u001b\[2J\\u202e/);
  assert.not.match(r.err, /[\u001b\u0007\u202e]/);
});

s.run();
