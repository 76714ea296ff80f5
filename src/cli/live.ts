/** Live cluster access for the CLI; the Kubernetes driver is loaded only when needed. */
import type { ClusterSnapshot } from '../cluster/types.ts';
import { ClusterApiError } from './errors.ts';

export interface LiveFlags {
  kubeconfig?: string;
  context?: string;
}

export async function readLiveSnapshot(_flags: LiveFlags): Promise<ClusterSnapshot> {
  throw new ClusterApiError('reading a live cluster needs the Kubernetes driver, which this build does not have yet', 'plan against a snapshot file with --cluster FILE');
}
