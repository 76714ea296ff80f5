/**
 * The kubeconfig reader of the live commands (src/kube/kubeconfig.ts), which replaced
 * @kubernetes/client-node's loader on the start-up path: the same request options as the
 * library's KubeConfig for the same file (TLS material, tokens, basic auth, impersonation),
 * kubectl's merge of KUBECONFIG files, exec credential plugins through the library (loaded
 * for them only), and a bundle in which the library is never a static import.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, readFileSync, readdirSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeConfigFile } from '../../src/kube/kubeconfig.ts';
import { runBin } from '../support/built.ts';

const t = suite('kube: the kubeconfig reader');
const dir = mkdtempSync(join(tmpdir(), 'bootcplan-kubeconfig-'));
writeFileSync(join(dir, 'ca.pem'), 'CA FILE');
writeFileSync(join(dir, 'token'), 'file-token\n');

const CONFIG = `apiVersion: v1
kind: Config
current-context: prod
clusters:
  - name: prod
    cluster:
      server: https://api.prod.example.com:6443
      certificate-authority: ca.pem
      tls-server-name: api.internal
      proxy-url: socks5://127.0.0.1:1080
  - name: lab
    cluster:
      server: https://10.0.0.1:6443
      certificate-authority-data: ${Buffer.from('CA DATA').toString('base64')}
      insecure-skip-tls-verify: true
users:
  - name: token
    user:
      token: sha256~abc
      as: alice
  - name: cert
    user:
      client-certificate-data: ${Buffer.from('CERT').toString('base64')}
      client-key-data: ${Buffer.from('KEY').toString('base64')}
  - name: basic
    user:
      username: admin
      password: pw
contexts:
  - name: prod
    context: { cluster: prod, user: token, namespace: ops }
  - name: lab-cert
    context: { cluster: lab, user: cert }
  - name: lab-basic
    context: { cluster: lab, user: basic }
`;

async function options(kc: { applyToHTTPSOptions(o: https.RequestOptions): Promise<void> }) {
  const o: https.RequestOptions = { headers: { Accept: 'application/json' } };
  await kc.applyToHTTPSOptions(o);
  return {
    ca: o.ca?.toString(),
    cert: o.cert?.toString(),
    key: Buffer.isBuffer(o.key) ? o.key.toString() : o.key,
    servername: o.servername,
    rejectUnauthorized: o.rejectUnauthorized,
    auth: o.auth,
    headers: o.headers as Record<string, string> | undefined,
  };
}

t('the same cluster, user and request options as the library for the same file, context by context', async () => {
  const mine = KubeConfigFile.parse(CONFIG, dir);
  const lib = new KubeConfig();
  lib.loadFromString(CONFIG);
  lib.makePathsAbsolute(dir);
  for (const ctx of ['prod', 'lab-cert', 'lab-basic']) {
    mine.setCurrentContext(ctx);
    lib.setCurrentContext(ctx);
    const [a, b] = [mine.getCurrentCluster()!, lib.getCurrentCluster()!];
    assert.equal([a.name, a.server, a.proxyUrl, a.tlsServerName, !!a.skipTLSVerify], [b.name, b.server, b.proxyUrl, b.tlsServerName, !!b.skipTLSVerify], ctx);
    assert.is(mine.getCurrentUser()!.name, lib.getCurrentUser()!.name);
    assert.equal(await options(mine), await options(lib), ctx);
  }
  mine.setCurrentContext('prod');
  assert.equal((await options(mine)).headers, { Accept: 'application/json', 'Impersonate-User': 'alice', Authorization: 'Bearer sha256~abc' });
  assert.is((await options(mine)).ca, 'CA FILE', 'certificate-authority relative to the kubeconfig');
});

t('token-file is read relative to the kubeconfig (and trimmed); the errors of a bad file name the entry', async () => {
  const kc = KubeConfigFile.parse(
    'current-context: c\nclusters: [{name: k, cluster: {server: "https://k:6443"}}]\nusers: [{name: u, user: {token-file: token}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n',
    dir,
  );
  assert.is((await options(kc)).headers!.Authorization, 'Bearer file-token');
  assert.throws(() => KubeConfigFile.parse('clusters: [{name: k, cluster: {}}]', dir), /clusters\[0\]\.cluster\.server is missing/);
  assert.throws(() => KubeConfigFile.parse('contexts: [{context: {cluster: k}}]', dir), /contexts\[0\]\.name is missing/);
  assert.throws(() => KubeConfigFile.parse('', dir), /empty/);
  assert.throws(() => KubeConfigFile.parse('clusters: [', dir));
});

t('the in-cluster service account: the server from KUBERNETES_SERVICE_HOST/PORT, the CA and token of the pod, as the library loaded them', async () => {
  const sa = mkdtempSync(join(tmpdir(), 'bootcplan-sa-'));
  writeFileSync(join(sa, 'token'), 'pod-token\n');
  writeFileSync(join(sa, 'ca.crt'), 'SA CA');
  writeFileSync(join(sa, 'namespace'), 'argocd');
  const kc = KubeConfigFile.inCluster({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, sa);
  assert.is(kc.getCurrentCluster()!.server, 'https://[fd00::1]:443');
  assert.is(kc.getContextObject('inClusterContext')!.namespace, 'argocd');
  const o = await options(kc);
  assert.equal([o.ca, o.headers!.Authorization], ['SA CA', 'Bearer pod-token']);
  assert.is(
    KubeConfigFile.inCluster({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '8080' }, sa).getCurrentCluster()!.server,
    'http://10.0.0.1:8080',
  );
  assert.throws(() => KubeConfigFile.inCluster({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, join(sa, 'missing')), /ENOENT/);
});

t('KUBECONFIG merge as kubectl: the first file naming an entry wins, and the first current-context (the library threw on a duplicate)', () => {
  const a = KubeConfigFile.parse(
    'current-context: a\nclusters: [{name: k, cluster: {server: "https://first:1"}}]\ncontexts: [{name: a, context: {cluster: k}}]',
    dir,
  );
  const b = KubeConfigFile.parse(
    'current-context: b\nclusters: [{name: k, cluster: {server: "https://second:1"}}, {name: j, cluster: {server: "https://j:1"}}]\ncontexts: [{name: b, context: {cluster: j}}]',
    dir,
  );
  a.merge(b);
  assert.is(a.getCurrentContext(), 'a');
  assert.is(a.getCurrentCluster()!.server, 'https://first:1');
  assert.equal(
    a.getContexts().map((c) => c.name),
    ['a', 'b'],
  );
});

t('an exec credential plugin: through the library, loaded on that path; its token in Authorization', async () => {
  const plugin = join(dir, 'plugin.mjs');
  writeFileSync(
    plugin,
    `#!${process.execPath}\nprocess.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-exec-' + process.argv[2] } }));\n`,
  );
  chmodSync(plugin, 0o755);
  const kc = KubeConfigFile.parse(
    `current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443", certificate-authority: ca.pem}}]
users:
  - name: u
    user:
      exec: { apiVersion: client.authentication.k8s.io/v1, command: ${plugin}, args: [x1], interactiveMode: Never }
contexts: [{name: c, context: {cluster: k, user: u}}]
`,
    dir,
  );
  assert.ok(kc.needsLibrary());
  const o = await options(kc);
  assert.is(o.headers!.Authorization, 'Bearer from-exec-x1');
  assert.is(o.ca, 'CA FILE');
});

t('the bundle: @kubernetes/client-node is imported by one chunk, which every other file imports only dynamically', () => {
  assert.is(runBin(['--version']).code, 0);
  const bundle = join(process.cwd(), 'dist/bundle');
  const text = new Map(
    readdirSync(bundle)
      .filter((f) => f.endsWith('.js'))
      .map((f) => [f, readFileSync(join(bundle, f), 'utf8')]),
  );
  const importers = [...text].filter(([, js]) => /(?:from|import)\s*["']@kubernetes\/client-node["']/.test(js)).map(([f]) => f);
  assert.is(importers.length, 1, importers.join(', '));
  const chunk = importers[0].replace(/[.]/g, '\\.');
  const staticUsers = [...text].filter(([, js]) => new RegExp(`(?:from|import)\\s*["']\\./${chunk}["']`).test(js)).map(([f]) => f);
  assert.equal(staticUsers, [], 'no static import of the chunk');
  const lazyUsers = [...text].filter(([, js]) => new RegExp(`import\\(\\s*["']\\./${chunk}["']\\s*\\)`).test(js)).map(([f]) => f);
  assert.is(lazyUsers.length, 1, lazyUsers.join(', '));
});

t.run();
