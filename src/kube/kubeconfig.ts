/**
 * A kubeconfig read without @kubernetes/client-node: loading that library costs about a
 * second of every live command's start (BENCHMARKS.md "Live start"), and reading a kubeconfig
 * needs none of it. The entries have the library's shapes (its config_types.ts), so a test's
 * KubeConfig and this class are interchangeable where the REST layer takes a KubeAccess.
 *
 * Handled here: the cluster (server, certificate-authority(-data), insecure-skip-tls-verify,
 * tls-server-name, proxy-url), tokens (token, token-file, re-read as client-go re-reads it),
 * client certificates ((client-certificate|client-key)(-data)), basic auth, `as`
 * (Impersonate-User), and the in-cluster service account. Users with an `exec` credential
 * plugin or an `auth-provider` (OIDC, Azure, GCP) are handed to the library, loaded on that
 * path only: src/kube/client-node.ts, a chunk of its own that the bundle imports dynamically,
 * with the package left external (scripts/bundle-options.mjs).
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { isIPv6 } from 'node:net';
import type https from 'node:https';
import yaml from 'js-yaml';

import type { Cluster, Context, KubeAccess, User } from './kubeconfig-types.ts';

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v)) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** A required string field, or the library's message for it. */
const need = (v: unknown, what: string): string => {
  const s = str(v);
  if (s === undefined) throw new Error(`${what} is missing`);
  return s;
};
const absolute = (dir: string, file: string | undefined) => (file && dir && !isAbsolute(file) ? join(dir, file) : file);

/** How long a token file is trusted before it is read again (client-go's cachingTokenSource: a minute). */
const TOKEN_FILE_SECONDS = 60;

export class KubeConfigFile implements KubeAccess {
  clusters: Cluster[] = [];
  users: User[] = [];
  contexts: Context[] = [];
  currentContext = '';
  private tokenCache = new Map<string, { token: string; at: number }>();
  private delegate: Promise<KubeAccess> | null = null;

  /**
   * Parses kubeconfig text as the library's loadFromString did (js-yaml; entries without a name,
   * a cluster without a server, a context without a cluster are errors); relative file paths
   * are made relative to `dir`. Throws Error with the first problem.
   */
  static parse(text: string, dir: string): KubeConfigFile {
    const doc = yaml.load(text);
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('the file is empty or not a YAML mapping');
    const root = obj(doc);
    const kc = new KubeConfigFile();
    kc.clusters = list(root.clusters).map((e, i) => {
      const o = obj(e);
      const c = obj(o.cluster);
      const name = need(o.name, `clusters[${i}].name`);
      if (!o.cluster) throw new Error(`clusters[${i}].cluster is missing`);
      return {
        name,
        server: need(c.server, `clusters[${i}].cluster.server`),
        caData: str(c['certificate-authority-data']),
        caFile: absolute(dir, str(c['certificate-authority'])),
        skipTLSVerify: c['insecure-skip-tls-verify'] === true,
        tlsServerName: str(c['tls-server-name']),
        proxyUrl: str(c['proxy-url']),
      };
    });
    kc.users = list(root.users).map((e, i) => {
      const o = obj(e);
      const u = obj(o.user);
      return {
        name: need(o.name, `users[${i}].name`),
        token: str(u.token),
        tokenFile: absolute(dir, str(u['token-file'])),
        certData: str(u['client-certificate-data']),
        certFile: absolute(dir, str(u['client-certificate'])),
        keyData: str(u['client-key-data']),
        keyFile: absolute(dir, str(u['client-key'])),
        username: str(u.username),
        password: str(u.password),
        impersonateUser: str(u.as),
        exec: u.exec ?? undefined,
        authProvider: u['auth-provider'] ?? undefined,
      };
    });
    kc.contexts = list(root.contexts).map((e, i) => {
      const o = obj(e);
      const c = obj(o.context);
      const name = need(o.name, `contexts[${i}].name`);
      if (!o.context) throw new Error(`contexts[${i}].context is missing`);
      return { name, cluster: need(c.cluster, `contexts[${i}].context.cluster`), user: str(c.user) ?? '', namespace: str(c.namespace) };
    });
    kc.currentContext = str(root['current-context']) ?? '';
    return kc;
  }

  /** The in-cluster service account (client-go rest.InClusterConfig), as the library's loadFromCluster. */
  static inCluster(env: Record<string, string | undefined>, dir: string): KubeConfigFile {
    const host = env.KUBERNETES_SERVICE_HOST ?? '';
    const port = env.KUBERNETES_SERVICE_PORT ?? '';
    if (!host || !port) throw new Error('KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set');
    const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
    const kc = new KubeConfigFile();
    kc.clusters = [
      { name: 'inCluster', server: `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`, caFile: join(dir, 'ca.crt'), skipTLSVerify: false },
    ];
    const tokenFile = join(dir, 'token');
    kc.users = [{ name: 'inClusterUser', tokenFile }];
    let namespace: string | undefined;
    try {
      namespace = readFileSync(join(dir, 'namespace'), 'utf8');
    } catch {
      /* no namespace file: none */
    }
    kc.contexts = [{ name: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser', namespace }];
    kc.currentContext = 'inClusterContext';
    // Read the token now: a pod without a readable token fails here, as the library's loader did.
    kc.tokenOf(tokenFile);
    return kc;
  }

  /** kubectl's merge of KUBECONFIG files: the first file that names a cluster, user or context wins; the first current-context wins. */
  merge(other: KubeConfigFile): void {
    const add = <T extends { name: string }>(mine: T[], theirs: T[]) => {
      for (const e of theirs) if (!mine.some((m) => m.name === e.name)) mine.push(e);
    };
    add(this.clusters, other.clusters);
    add(this.users, other.users);
    add(this.contexts, other.contexts);
    this.currentContext ||= other.currentContext;
  }

  getContexts(): Context[] {
    return this.contexts;
  }
  getContextObject(name: string): Context | null {
    return this.contexts.find((c) => c.name === name) ?? null;
  }
  setCurrentContext(name: string): void {
    this.currentContext = name;
  }
  getCurrentContext(): string {
    return this.currentContext;
  }
  getCurrentCluster(): Cluster | null {
    const ctx = this.getContextObject(this.currentContext);
    return (ctx && this.clusters.find((c) => c.name === ctx.cluster)) ?? null;
  }
  getCurrentUser(): User | null {
    const ctx = this.getContextObject(this.currentContext);
    return (ctx && this.users.find((u) => u.name === ctx.user)) ?? null;
  }

  /** Whether this context's credentials need the library (an exec plugin or an auth provider). */
  needsLibrary(): boolean {
    const u = this.getCurrentUser();
    return !!(u && (u.exec || u.authProvider));
  }

  private tokenOf(file: string): string {
    const hit = this.tokenCache.get(file);
    if (hit && Date.now() - hit.at < TOKEN_FILE_SECONDS * 1000) return hit.token;
    const token = readFileSync(file, 'utf8').trim();
    this.tokenCache.set(file, { token, at: Date.now() });
    return token;
  }

  /** TLS material and credentials of the current context into request options (the library's applyToHTTPSOptions, same fields). */
  async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    if (this.needsLibrary()) return (this.delegate ??= this.library()).then((kc) => kc.applyToHTTPSOptions(opts));
    const cluster = this.getCurrentCluster();
    const user = this.getCurrentUser();
    if (!user) return;
    if (cluster?.skipTLSVerify) opts.rejectUnauthorized = false;
    if (cluster?.tlsServerName) opts.servername = cluster.tlsServerName;
    const ca = cluster && bytes(cluster.caFile, cluster.caData);
    if (ca) opts.ca = ca;
    const cert = bytes(user.certFile, user.certData);
    if (cert) opts.cert = cert;
    const key = bytes(user.keyFile, user.keyData);
    if (key) opts.key = key;
    const token = user.token ?? (user.tokenFile ? this.tokenOf(user.tokenFile) : undefined);
    opts.headers = {
      ...(Array.isArray(opts.headers) ? {} : opts.headers),
      ...(user.impersonateUser ? { 'Impersonate-User': user.impersonateUser } : {}),
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    };
    if (user.username) opts.auth = `${user.username}:${user.password ?? ''}`;
  }

  /** The library's KubeConfig for this context alone: loaded here, on the exec and auth-provider path only. */
  private async library(): Promise<KubeAccess> {
    const ctx = this.getContextObject(this.currentContext);
    const cluster = this.getCurrentCluster();
    const user = this.getCurrentUser();
    if (!ctx || !cluster || !user) throw new Error(`context "${this.currentContext}" names no cluster or user`);
    const { libraryKubeConfig } = await import('./client-node.ts');
    return libraryKubeConfig(cluster, { ...user, token: user.token ?? (user.tokenFile ? this.tokenOf(user.tokenFile) : undefined) }, ctx);
  }
}

const bytes = (file: string | undefined, data: string | undefined): Buffer | null => (file ? readFileSync(file) : data ? Buffer.from(data, 'base64') : null);
