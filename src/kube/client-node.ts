/**
 * The one module of src/ that imports @kubernetes/client-node at run time: src/kube/kubeconfig.ts
 * imports it dynamically for a user with an `exec` credential plugin or an `auth-provider`, so
 * the library (about a second of start-up: BENCHMARKS.md "Live start") loads on that path only.
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { Cluster, Context, KubeAccess, User } from './kubeconfig-types.ts';

/** The library's KubeConfig for one context, from entries of its own shapes (config_types.ts). */
export function libraryKubeConfig(cluster: Cluster, user: User, context: Context): KubeAccess {
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [cluster], users: [user], contexts: [context], currentContext: context.name });
  return kc;
}
