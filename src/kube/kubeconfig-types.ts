/**
 * The shapes of a kubeconfig's entries (those of @kubernetes/client-node's config_types.ts) and
 * what the REST layer needs of a kubeconfig, in a file of their own: src/kube/kubeconfig.ts
 * reads them and src/kube/client-node.ts, which it loads dynamically, builds them from the
 * library, so neither imports the other's types (test/repo/layers.test.ts: no import circle).
 */
import type https from 'node:https';

export interface Cluster {
  name: string;
  server: string;
  caData?: string;
  caFile?: string;
  skipTLSVerify?: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
}

export interface User {
  name: string;
  token?: string;
  tokenFile?: string;
  certData?: string;
  certFile?: string;
  keyData?: string;
  keyFile?: string;
  username?: string;
  password?: string;
  impersonateUser?: string;
  exec?: unknown;
  authProvider?: unknown;
}

export interface Context {
  name: string;
  cluster: string;
  user: string;
  namespace?: string;
}

/** What the REST layer and the health credentials need of a kubeconfig (the library's KubeConfig has it too). */
export interface KubeAccess {
  getCurrentContext(): string;
  getCurrentCluster(): Cluster | null;
  /** The user; its written token and password are read by the health checks' credential mask. */
  getCurrentUser(): { name: string; token?: string; password?: string } | null;
  applyToHTTPSOptions(opts: https.RequestOptions): Promise<void>;
}
