/**
 * A Fleet arrives in a pull request, so the kubeconfig files it names are not the operator's
 * machine configuration (review finding 1): `fleet plan`, `fleet rehearse -f` and `fleet apply`
 * read no Fleet-named kubeconfig outside the repository, run no exec plugin and read no
 * token, certificate or key file it names (unless --trust-fleet-kubeconfigs), never list the
 * contexts of such a file, and with --ref read it at that revision. The operator's own
 * --kubeconfig / KUBECONFIG is trusted as before.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { renderFleetJson } from '../../src/fleet/plan-text.ts';
import { untrustedKubeconfigFields } from '../../src/app/fleet-kubeconfig.ts';
import type { DriverFactory } from '../../src/app/ports.ts';
import { cli } from '../support/cli.ts';
import { FleetBuilder, workerCluster } from '../support/fleet.ts';
import { git } from '../support/git.ts';

const s = suite('fleet: kubeconfig files a Fleet names');

/** The CLI's environment and clock: no kubeconfig of the user's, a fixed time. */
const ISOLATED = { io: { env: { KUBECONFIG: '/nonexistent', NO_COLOR: '1' } }, now: () => Date.parse('2026-09-14T08:00:00Z') };

/** A kubeconfig with one context `prod` on an unreachable server; `user` is the user entry's body (YAML flow). */
function kubeconfig(user: string, cluster = '{server: "https://127.0.0.1:1"}'): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: c',
    `  cluster: ${cluster}`,
    'users:',
    '- name: u',
    `  user: ${user}`,
    'contexts:',
    '- name: prod',
    '  context: {cluster: c, user: u}',
    'current-context: prod',
    '',
  ].join('\n');
}

/** An exec plugin that leaves `marker` behind when it runs (and answers with a token). */
function execUser(marker: string): string {
  const credential = '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"x"}}';
  return JSON.stringify({
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      command: 'sh',
      args: ['-c', `touch '${marker}'; echo '${credential}'`],
      interactiveMode: 'Never',
    },
  });
}

/** A Fleet (in `dir`) with a snapshot cluster `local` and a live cluster `east` through context prod of `kc`. */
function fleetNaming(kc: string, dir = mkdtempSync(join(tmpdir(), 'bootcplan-fleet-kc-')), context = 'prod'): { dir: string; file: string; marker: string } {
  const w = new FleetBuilder().cluster('local').cluster('east', { context, kubeconfig: kc }).write(dir);
  return { ...w, marker: join(mkdtempSync(join(tmpdir(), 'bootcplan-marker-')), 'ran') };
}

s("fleet plan: an exec plugin in a Fleet-named kubeconfig never runs; that cluster's error names the field; the others are planned", async () => {
  const w = fleetNaming('kc.yaml');
  writeFileSync(join(w.dir, 'kc.yaml'), kubeconfig(execUser(w.marker)));
  const r = await cli(['fleet', 'plan', '-f', w.file, '-o', 'markdown'], ISOLATED);
  assert.is(r.code, 1, r.err);
  assert.not.ok(existsSync(w.marker), 'the exec plugin ran');
  assert.match(r.out, /east.*`kubeconfig`: .*kc\.yaml.*users\\\[0\\\]\.user\.exec/);
  assert.match(r.out, /--trust-fleet-kubeconfigs/);
  assert.match(r.out, /local/);
});

s('fleet plan: token-file, auth-provider and certificate/key file paths are refused; the files are never read or quoted', async () => {
  const secret = join(mkdtempSync(join(tmpdir(), 'bootcplan-secret-')), 'token');
  writeFileSync(secret, 'sha256~TOPSECRETTOKEN');
  const cases: [string, string, RegExp][] = [
    [JSON.stringify({ 'token-file': secret }), '{server: "https://127.0.0.1:1"}', /users\[0\]\.user\.token-file/],
    [JSON.stringify({ 'auth-provider': { name: 'oidc', config: { 'id-token': 'x' } } }), '{server: "https://127.0.0.1:1"}', /users\[0\]\.user\.auth-provider/],
    [
      JSON.stringify({ 'client-certificate': secret, 'client-key': secret }),
      '{server: "https://127.0.0.1:1"}',
      /users\[0\]\.user\.client-certificate.*users\[0\]\.user\.client-key/,
    ],
    [
      '{token: inline-is-fine}',
      JSON.stringify({ server: 'https://127.0.0.1:1', 'certificate-authority': secret }),
      /clusters\[0\]\.cluster\.certificate-authority\b/,
    ],
  ];
  for (const [user, cluster, field] of cases) {
    const w = fleetNaming('kc.yaml');
    writeFileSync(join(w.dir, 'kc.yaml'), kubeconfig(user, cluster));
    const r = await cli(['fleet', 'plan', '-f', w.file], ISOLATED);
    assert.is(r.code, 1, r.err);
    assert.match(r.out, /east: kubeconfig: /, user);
    assert.match(r.out, field, user);
    assert.not.match(r.out + r.err, /TOPSECRETTOKEN|bootcplan-secret-/, user);
  }
});

s('fleet plan: inline credentials and certificate data are fine: the cluster is reached (here: unreachable, not refused)', async () => {
  const w = fleetNaming('kc.yaml');
  writeFileSync(
    join(w.dir, 'kc.yaml'),
    kubeconfig('{token: t, client-certificate-data: "", client-key-data: ""}', '{server: "https://127.0.0.1:1", certificate-authority-data: ""}'),
  );
  const r = await cli(['fleet', 'plan', '-f', w.file, '--request-timeout', '5s'], ISOLATED);
  assert.is(r.code, 1, r.err);
  assert.match(r.out, /east: unreachable: /);
});

s('fleet plan --trust-fleet-kubeconfigs: the operator opts in, and the exec plugin runs as kubectl would run it', async () => {
  const w = fleetNaming('kc.yaml');
  writeFileSync(join(w.dir, 'kc.yaml'), kubeconfig(execUser(w.marker)));
  const r = await cli(['fleet', 'plan', '-f', w.file, '--trust-fleet-kubeconfigs', '--request-timeout', '5s'], ISOLATED);
  assert.is(r.code, 1, r.err);
  assert.ok(existsSync(w.marker), 'the exec plugin did not run');
  assert.match(r.out, /east: unreachable: /);
});

s("the operator's own --kubeconfig is trusted as before: its exec plugin runs", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-fleet-kc-'));
  const w = new FleetBuilder().cluster('east', { context: 'prod' }).write(dir);
  const marker = join(mkdtempSync(join(tmpdir(), 'bootcplan-marker-')), 'ran');
  const own = join(mkdtempSync(join(tmpdir(), 'bootcplan-own-')), 'config');
  writeFileSync(own, kubeconfig(execUser(marker)));
  const r = await cli(['fleet', 'plan', '-f', w.file, '--kubeconfig', own, '--request-timeout', '5s'], ISOLATED);
  assert.is(r.code, 1, r.err);
  assert.ok(existsSync(marker), "the exec plugin of the operator's kubeconfig did not run");
  assert.match(r.out, /east: unreachable: /);
});

s('fleet plan: a Fleet-named kubeconfig outside the repository is never read; its contexts never appear', async () => {
  const top = mkdtempSync(join(tmpdir(), 'bootcplan-fleet-kc-'));
  mkdirSync(join(top, 'repo'));
  mkdirSync(join(top, 'outside'));
  git(join(top, 'repo'), 'init', '-q');
  const admin = kubeconfig('{token: "sha256~SECRET"}').replace(/\bprod\b/g, 'prod-admin');
  writeFileSync(join(top, 'outside', 'kc'), admin);
  for (const context of ['nope', 'prod-admin']) {
    const w = fleetNaming('../outside/kc', join(top, 'repo'), context);
    writeFileSync(join(w.dir, 'kc.yaml'), admin);
    const r = await cli(['fleet', 'plan', '-f', w.file, '-o', 'markdown', '--request-timeout', '5s'], ISOLATED);
    assert.is(r.code, 1, r.err);
    assert.match(r.out, /`kubeconfig`: kubeconfig "\.\.\/outside\/kc" named by the Fleet is outside the repository/, context);
    assert.not.match(r.out + r.err, /contexts there|prod-admin-?|SECRET|127\.0\.0\.1/, context);
  }
  // Through a symbolic link in the repository: the same.
  execFileSync('ln', ['-s', '../outside/kc', join(top, 'repo', 'link.yaml')]);
  const w = fleetNaming('link.yaml', join(top, 'repo'), 'prod-admin');
  const r = await cli(['fleet', 'plan', '-f', w.file], ISOLATED);
  assert.match(r.out, /east: kubeconfig: kubeconfig "link\.yaml" named by the Fleet is outside the repository/);
});

s("fleet plan: a context missing from a Fleet-named kubeconfig is that cluster's error without listing the file's contexts", async () => {
  const w = fleetNaming('kc.yaml', undefined, 'staging');
  writeFileSync(join(w.dir, 'kc.yaml'), kubeconfig('{token: t}').replace(/\bprod\b/g, 'prod-secret-name'));
  const r = await cli(['fleet', 'plan', '-f', w.file, '-o', 'markdown'], ISOLATED);
  assert.is(r.code, 1, r.err);
  assert.match(r.out, /context "staging" is not in kubeconfig .*kc\.yaml/);
  assert.not.match(r.out + r.err, /prod-secret-name|contexts there/);
});

s('fleet plan --ref: the Fleet-named kubeconfig is read at that revision, not from the working tree', async () => {
  const repo = mkdtempSync(join(tmpdir(), 'bootcplan-fleet-kc-'));
  git(repo, 'init', '-q');
  const w = fleetNaming('kc.yaml', repo);
  writeFileSync(join(repo, 'kc.yaml'), kubeconfig('{token: t}'));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'fleet');
  // The working tree (a pull request's checkout) now has an exec plugin; the reviewed ref does not.
  writeFileSync(join(repo, 'kc.yaml'), kubeconfig(execUser(w.marker)));
  const r = await cli(['fleet', 'plan', '-f', 'fleet.yaml', '--ref', 'HEAD', '--request-timeout', '5s'], { ...ISOLATED, cwd: repo });
  assert.is(r.code, 1, r.err);
  assert.not.ok(existsSync(w.marker), "the working tree's kubeconfig was used");
  assert.match(r.out, /east: unreachable: /);
  // And the other way round: refused at the ref although the working tree's file is harmless.
  writeFileSync(join(repo, 'kc.yaml'), kubeconfig(execUser(w.marker)));
  git(repo, 'commit', '-q', '-am', 'exec');
  writeFileSync(join(repo, 'kc.yaml'), kubeconfig('{token: t}'));
  const r2 = await cli(['fleet', 'plan', '-f', 'fleet.yaml', '--ref', 'HEAD'], { ...ISOLATED, cwd: repo });
  assert.match(r2.out, /east: kubeconfig: .*users\[0\]\.user\.exec/);
  assert.not.ok(existsSync(w.marker));
  // Not in the revision: refused, not taken from the working tree.
  git(repo, 'rm', '-q', '--cached', 'kc.yaml');
  git(repo, 'commit', '-q', '-m', 'rm');
  const r3 = await cli(['fleet', 'plan', '-f', 'fleet.yaml', '--ref', 'HEAD'], { ...ISOLATED, cwd: repo });
  assert.match(r3.out, /east: kubeconfig: kubeconfig "kc\.yaml" named by the Fleet is not in HEAD/);
});

s('fleet rehearse -f: an exec plugin in a Fleet-named kubeconfig never runs', async () => {
  const w = fleetNaming('kc.yaml');
  writeFileSync(join(w.dir, 'kc.yaml'), kubeconfig(execUser(w.marker)));
  const r = await cli(['fleet', 'rehearse', '-f', w.file], ISOLATED);
  assert.not.ok(existsSync(w.marker), 'the exec plugin ran');
  assert.match(r.out + r.err, /east.*users\[0\]\.user\.exec/);
});

s(
  'fleet apply: a Fleet-named kubeconfig with an exec plugin is refused before any cluster is reached; with --trust-fleet-kubeconfigs it is handed on',
  async () => {
    const b = new FleetBuilder();
    for (const n of ['east', 'west']) b.cluster(n, { context: `ctx-${n}`, kubeconfig: 'kc.yaml', cluster: workerCluster(3, n) });
    b.strategy({ canaries: ['east'] });
    const dir = mkdtempSync(join(tmpdir(), 'bootcplan-fleet-kc-'));
    b.write(dir);
    const marker = join(dir, 'ran');
    writeFileSync(join(dir, 'kc.yaml'), kubeconfig(execUser(marker)).replace(/\bprod\b/g, 'ctx-east'));
    writeFileSync(join(dir, 'fleet-plan.json'), renderFleetJson(b.plan()));
    const opened: string[] = [];
    const openDriver: DriverFactory = async (flags) => {
      opened.push(flags.context ?? '?');
      throw new Error('not in this test');
    };
    const r = await cli(['fleet', 'apply', 'fleet-plan.json', '--auto-approve'], { ...ISOLATED, cwd: dir, openDriver });
    assert.is(r.code, 1, r.out + r.err);
    assert.match(r.err, /cluster east: kubeconfig .*kc\.yaml.*users\[0\]\.user\.exec/);
    assert.match(r.err, /--trust-fleet-kubeconfigs/);
    assert.equal(opened, []);
    assert.not.ok(existsSync(marker));
    const r2 = await cli(['fleet', 'apply', 'fleet-plan.json', '--auto-approve', '--trust-fleet-kubeconfigs'], { ...ISOLATED, cwd: dir, openDriver });
    assert.equal(opened[0], 'ctx-east', r2.out + r2.err);
    assert.ok(readFileSync(join(dir, 'fleet.yaml'), 'utf8').includes('kubeconfig: kc.yaml'));
  },
);

s('untrustedKubeconfigFields: every field that runs a command or names a file, and nothing inline', () => {
  const fields = untrustedKubeconfigFields({
    clusters: [{ name: 'c', cluster: { server: 'https://x', 'certificate-authority': '/ca', 'certificate-authority-data': 'AA' } }],
    users: [
      { name: 'a', user: { exec: { command: 'sh' } } },
      {
        name: 'b',
        user: { 'auth-provider': { name: 'gcp' }, 'token-file': '/t', 'client-certificate': 'c', 'client-key': 'k', token: 'x', 'client-key-data': 'AA' },
      },
    ],
  });
  assert.equal(fields, [
    'clusters[0].cluster.certificate-authority',
    'users[0].user.exec',
    'users[1].user.auth-provider',
    'users[1].user.token-file',
    'users[1].user.client-certificate',
    'users[1].user.client-key',
  ]);
  assert.equal(untrustedKubeconfigFields({ clusters: [{ cluster: { server: 'https://x' } }], users: [{ user: { token: 'x' } }] }), []);
});

s.run();
