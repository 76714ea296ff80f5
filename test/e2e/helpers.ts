/** Small helpers shared by the e2e suites. */
import * as assert from 'uvu/assert';
import { io } from '../support/cli.ts';
import { run } from '../support/built.ts';
import { ClusterBuilder, type TestObject } from '../support/cluster.ts';
import type { KObject } from '../../src/cluster/types.ts';
import { Reflector } from '../../src/kube/watch.ts';
import { NODE } from '../../src/kube/resources.ts';
import { resetCluster, loadObjects, type TestEnv } from './env.ts';
import { NodeAgent } from './agent.ts';

/** Asserts that `fn` rejects, and that the error passes `check`; returns the error. */
export async function rejects(fn: () => Promise<unknown>, check: (e: any) => boolean, what = 'the expected error'): Promise<any> {
  try {
    await fn();
  } catch (e) {
    assert.ok(check(e), `unexpected error: ${(e as Error)?.name}: ${(e as Error)?.message}`);
    return e;
  }
  assert.unreachable(`expected ${what}`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How often `runJobToHealthy` runs the Job at most, and the pause between runs (a CronJob's, shortened). */
const JOB_RUNS = 40;
const JOB_PAUSE_MS = 300;

/** One run of an apply Job's command: its exit code and what it wrote. */
export interface JobRun {
  code: number;
  out: string;
  err: string;
}

/**
 * The GitOps loop's Job run after run, as its CronJob (or Argo CD's next sync) runs it, until the
 * Rollout object's status says Healthy: every run exits 0 (`check` may ask more of it). Returns
 * each run's "phase: message"; the caller asserts where it ended.
 */
export async function runJobToHealthy(
  runOnce: () => Promise<JobRun>,
  status: () => Promise<{ phase: string; message: string }>,
  check: (r: JobRun) => void = () => undefined,
): Promise<string[]> {
  const phases: string[] = [];
  for (let i = 0; i < JOB_RUNS; i++) {
    const r = await runOnce();
    assert.is(r.code, 0, r.err);
    check(r);
    const st = await status();
    phases.push(`${st.phase}: ${st.message}`);
    if (st.phase === 'Healthy') break;
    await sleep(JOB_PAUSE_MS);
  }
  return phases;
}

/** A bootc pool `worker` of `names` in two zones, maxUnavailable 1: the cluster of the GitOps loops. */
export const twoZoneWorkers = (names: readonly string[]): KObject[] =>
  new ClusterBuilder().bootcPool(
    'worker',
    names.map((name, i) => ({ name, zone: `zone-${i % 2}` })),
    { maxUnavailable: 1 },
  ).objects;

/** A fresh cluster of `objects` on the API server, and a new node agent playing the daemons (`before`, the last one, stopped). */
export async function freshCluster(env: TestEnv, objects: KObject[], before: NodeAgent | null): Promise<NodeAgent> {
  before?.stop();
  await resetCluster(env.admin);
  await loadObjects(env.admin, objects);
  return new NodeAgent(env.admin, { scale: 1 }).start();
}

/**
 * `apply -f SPEC --auto-approve --json` as the ServiceAccount, while a watch of the Nodes hands
 * every state it sees to `sample` (a pool's most nodes out of service at once). The exit code,
 * output, seconds taken and node events seen.
 */
export async function applyWatchingNodes(
  env: TestEnv,
  spec: string,
  sample: (nodes: Iterable<TestObject>) => void,
): Promise<JobRun & { seconds: number; events: number }> {
  const watch = new Reflector(env.admin, NODE);
  let events = 0;
  watch.onChange(() => {
    events++;
    sample(watch.items.values() as Iterable<TestObject>);
  });
  await watch.start();
  const cap = io();
  const t0 = Date.now();
  try {
    const code = await run(['apply', '-f', spec, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io: cap });
    return { code, out: cap.out, err: cap.err, seconds: (Date.now() - t0) / 1000, events };
  } finally {
    watch.stop();
  }
}
