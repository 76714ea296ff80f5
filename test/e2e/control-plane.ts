/**
 * A control plane with the controllers a drain meets, for the e2e suites that need workloads
 * to behave as on a real cluster: a kube-apiserver of its own (never the shared one of env.ts,
 * whose suites write objects the garbage collector would delete), kube-controller-manager with
 * the disruption, ReplicaSet, Deployment, StatefulSet and garbage-collector controllers, and
 * kube-scheduler (scripts/testenv/start.sh, TESTENV_CONTROLLERS). No node lifecycle controller:
 * it would taint the kubelet-less nodes unreachable. `PodKubelet` plays the kubelet of every
 * node: a bound pod becomes Running and Ready after a delay, a terminating pod is removed, so
 * evictions are refused by real PodDisruptionBudgets whose status the real disruption
 * controller computes, and evicted pods come back through the real ReplicaSet controller and
 * scheduler (scripts/testenv/README.md "Controllers").
 */
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { NotFoundError } from '../../src/apply/ports/driver.ts';
import type { TestKubeClient as KubeClient } from '../support/fake-api.ts';
import { clientFor, parseEnvFile } from './env.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

export interface ControlPlane {
  dir: string;
  server: string;
  kubeconfig: string;
  admin: KubeClient;
  /** The PIDs of the two controllers (to check they are still running at the end). */
  controllerManagerPid: number;
  schedulerPid: number;
  startSeconds: number;
}

const started: string[] = [];
process.on('exit', () => {
  for (const d of started.splice(0)) spawnSync(join(ROOT, 'scripts/testenv/stop.sh'), [d], { stdio: 'ignore' });
});

/** Starts kube-apiserver, etcd, kube-controller-manager and kube-scheduler; stopped at process exit. */
export async function startControlPlane(): Promise<ControlPlane> {
  const t0 = Date.now();
  let stdout: string;
  try {
    ({ stdout } = await run(join(ROOT, 'scripts/testenv/start.sh'), {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      env: { ...process.env, TESTENV_CONTROLLERS: 'kube-controller-manager kube-scheduler' },
    }));
  } catch (err) {
    const e = err as { stderr?: string };
    throw new Error(`scripts/testenv/start.sh with controllers failed:\n${(e.stderr ?? '').split('\n').slice(-40).join('\n')}`, { cause: err });
  }
  const dir = stdout.trim().split('\n').pop() ?? '';
  started.push(dir);
  const env = parseEnvFile(readFileSync(join(dir, 'env'), 'utf8'));
  return {
    dir,
    server: env.TESTENV_SERVER,
    kubeconfig: env.KUBECONFIG,
    admin: clientFor(env.KUBECONFIG),
    controllerManagerPid: Number(env.CONTROLLER_MANAGER_PID),
    schedulerPid: Number(env.SCHEDULER_PID),
    startSeconds: (Date.now() - t0) / 1000,
  };
}

/** Is the process still running? */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Registers a schedulable node with room for `pods` pods, as a kubelet and the node lifecycle
 * controller would leave it: status with allocatable (the scheduler's resource fit) and Ready,
 * and without the `node.kubernetes.io/not-ready:NoSchedule` taint that the API server's
 * TaintNodesByCondition admission puts on every new node (the lifecycle controller, not run
 * here, removes it once the node reports Ready).
 */
export async function registerNode(admin: KubeClient, name: string, labels: Record<string, string> = {}, pods = 20): Promise<void> {
  const capacity = { cpu: '4', memory: '16Gi', pods: String(pods) };
  const stamp = new Date().toISOString();
  await admin.request('POST', '/api/v1/nodes', {
    body: { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', ...labels } } },
  });
  await admin.request('PATCH', `/api/v1/nodes/${name}/status`, {
    contentType: 'application/merge-patch+json',
    body: {
      status: {
        capacity,
        allocatable: capacity,
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: stamp, lastTransitionTime: stamp }],
      },
    },
  });
  await admin.request('PATCH', `/api/v1/nodes/${name}`, { contentType: 'application/merge-patch+json', body: { spec: { taints: null } } });
}

export interface PodKubeletOptions {
  /** Milliseconds from a pod being bound to it being Running and Ready. */
  readyDelayMs?: number;
  /** Up to this many milliseconds more, at random, per pod. */
  jitterMs?: number;
  pollMs?: number;
}

interface PodView {
  metadata: { name: string; namespace: string; uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string; containers: { name: string; image: string }[] };
  status?: { phase?: string };
}

/**
 * The kubelet of every node, as far as the API sees it: a pod bound to a node (spec.nodeName)
 * turns Running with Ready, ContainersReady, Initialized and PodScheduled true (what the
 * disruption controller counts as healthy: the Ready condition), and a pod marked for deletion
 * (an eviction sets its deletionTimestamp with the grace period) is deleted with grace period 0,
 * as the kubelet does once the containers stopped. Polls the pods of all namespaces.
 */
export class PodKubelet {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly due = new Map<string, number>();
  private stopped = false;
  /** Pods this kubelet made Ready and removed, for the test's assertions. */
  readonly started: string[] = [];
  readonly removed: string[] = [];
  constructor(
    private readonly admin: KubeClient,
    private readonly opts: PodKubeletOptions = {},
  ) {}

  start(): this {
    const tick = () => {
      if (this.stopped) return;
      this.sync()
        .catch((e) => console.error('PodKubelet:', (e as Error).message))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.opts.pollMs ?? 100);
        });
    };
    tick();
    return this;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private async sync(): Promise<void> {
    const list = (await this.admin.request('GET', '/api/v1/pods')) as { items: PodView[] };
    const now = Date.now();
    for (const pod of list.items) {
      const { name, namespace, uid } = pod.metadata;
      const ref = `${namespace}/${name}`;
      if (!pod.spec.nodeName) continue;
      if (pod.metadata.deletionTimestamp) {
        await this.admin
          .request('DELETE', `/api/v1/namespaces/${namespace}/pods/${name}`, {
            body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid } },
          })
          .then(() => this.removed.push(ref))
          .catch((e) => {
            if (!(e instanceof NotFoundError)) throw e;
          });
        continue;
      }
      if (pod.status?.phase === 'Running') continue;
      const key = `${ref}/${uid}`;
      const at = this.due.get(key) ?? now + (this.opts.readyDelayMs ?? 200) + Math.floor(Math.random() * (this.opts.jitterMs ?? 0));
      this.due.set(key, at);
      if (now < at) continue;
      const stamp = new Date().toISOString();
      const condition = (type: string) => ({ type, status: 'True', lastTransitionTime: stamp });
      await this.admin
        .request('PATCH', `/api/v1/namespaces/${namespace}/pods/${name}/status`, {
          contentType: 'application/merge-patch+json',
          body: {
            status: {
              phase: 'Running',
              startTime: stamp,
              conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map(condition),
              containerStatuses: pod.spec.containers.map((c) => ({
                name: c.name,
                image: c.image,
                imageID: '',
                ready: true,
                started: true,
                restartCount: 0,
                state: { running: { startedAt: stamp } },
              })),
            },
          },
        })
        .then(() => {
          this.due.delete(key);
          this.started.push(ref);
        })
        .catch((e) => {
          if (!(e instanceof NotFoundError)) throw e;
        });
    }
  }
}

/** Polls `read` until `done` holds (or throws after `timeoutMs`, with the last value read). */
export async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (done(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last read: ${JSON.stringify(last).slice(0, 800)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
