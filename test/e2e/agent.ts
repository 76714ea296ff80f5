/**
 * A node agent for the e2e tests: plays, through the real API, the parts of a cluster that
 * have no process in the test environment (no kubelet, no bootc-operator, no MCO):
 *
 * - bootc-operator controller: when a BootcNodePool's `spec.image.ref` changes, every owned
 *   BootcNode gets that `desiredImage` and `desiredImageState: Staged` (bootc-operator
 *   rollout.go); staging is not limited by `paused`.
 * - bootc daemon (per BootcNode, status subresource): Idle=False/Staging, then a `staged`
 *   entry and Idle=False/Staged; on `desiredImageState: Booted` with a matching staged
 *   digest: Idle=False/Rebooting and the Node NotReady, then `booted` = the target, Idle=True,
 *   and the Node Ready again (bootc-operator internal/daemon/reconciler.go).
 * - MCO for MachineConfigPools: a MachineConfig with the pool's role and `osImageURL` renders
 *   a new config (the same content under the same name; without such a MachineConfig, the image
 *   the pool ran at the start: the release's); while the pool is not paused, up to maxUnavailable nodes get it
 *   (desiredConfig, state Working, cordon, NotReady, currentConfig, Done, uncordon, Ready).
 * - kubelet: a pod with a deletionTimestamp on one of its nodes is deleted for good.
 *
 * It is the simulator's node model (src/sim/cluster.ts), with the same phase durations
 * (DEFAULT_DURATIONS) scaled down to milliseconds: `scale` ms per simulated second.
 */
import { createHash } from 'node:crypto';
import type { Condition } from '../../src/cluster/types.ts';
import { type KubeClient } from '../../src/kube/rest.ts';
import { Reflector } from '../../src/kube/watch.ts';
import { RESOURCES, objectPath } from '../../src/kube/resources.ts';
import { digestOf } from '../../src/domain/nodes.ts';
import { DEFAULT_DURATIONS } from '../../src/domain/timing.ts';
import { parseMaxUnavailable, resolveMaxUnavailable } from '../../src/domain/budget.ts';
import { selectorMatches } from '../../src/domain/nodes.ts';
import { MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG, MCO_STATE } from '../../src/domain/labels.ts';
import { mergedOsImage } from '../../src/domain/mco-render.ts';
import type { PhaseDurations } from '../../src/plan/types.ts';
import { NotFoundError } from '../../src/apply/ports/driver.ts';
import { skippedByDrain } from '../../src/kube/node-ops.ts';
import type { TestObject } from '../support/cluster.ts';

const R = (kind: string) => RESOURCES.find((r) => r.kind === kind)!;
const MERGE = 'application/merge-patch+json';

export interface AgentOptions {
  /** Milliseconds per simulated second of DEFAULT_DURATIONS (default 1: stage 600 ms, reboot 300 ms). */
  scale?: number;
  durations?: PhaseDurations;
  /** Nodes whose reboot fails (Degraded=True, old image). */
  failReboot?: (node: string) => boolean;
  /** How long a node takes to stage, ms (default: the scaled `stage` duration). */
  stageMs?: (node: string) => number | undefined;
}

export interface AgentRecord {
  t: number;
  node: string;
  what: string;
}

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

function withCondition(conds: Condition[] | undefined, c: Condition): Condition[] {
  const list = [...(conds ?? [])];
  const i = list.findIndex((x) => x.type === c.type);
  if (i >= 0) {
    const old = list[i];
    list[i] = { ...old, ...c, lastTransitionTime: old.status !== c.status ? c.lastTransitionTime : (old.lastTransitionTime ?? c.lastTransitionTime) };
  } else list.push(c);
  return list;
}
const cond = (o: TestObject | undefined, type: string) => (o?.status?.conditions ?? []).find((c: Condition) => c.type === type);
/** A reflector's objects, as the agent reads and writes them (any field). */
const itemsOf = (r: Reflector) => r.items as Map<string, TestObject>;

export class NodeAgent {
  readonly log: AgentRecord[] = [];
  private pools: Reflector;
  private bns: Reflector;
  private nodes: Reflector;
  private pods: Reflector;
  private mcps: Reflector;
  private mcs: Reflector;
  private busy = new Set<string>();
  /** Per MachineConfigPool, the image of the release (the MCO's ControllerConfig osImageURL). */
  private baseImage = new Map<string, string>();
  private timers = new Set<NodeJS.Timeout>();
  private scheduled = false;
  private stopped = false;
  private readonly ms: (phase: keyof PhaseDurations) => number;
  private readonly t0 = Date.now();
  errors: string[] = [];

  constructor(
    readonly client: KubeClient,
    private readonly opts: AgentOptions = {},
  ) {
    const d = opts.durations ?? DEFAULT_DURATIONS;
    const scale = opts.scale ?? 1;
    this.ms = (p) => Math.max(20, d[p] * scale);
    this.pools = new Reflector(client, R('BootcNodePool'));
    this.bns = new Reflector(client, R('BootcNode'));
    this.nodes = new Reflector(client, R('Node'));
    this.pods = new Reflector(client, R('Pod'));
    this.mcps = new Reflector(client, R('MachineConfigPool'));
    this.mcs = new Reflector(client, R('MachineConfig'));
    for (const r of this.all()) r.onChange(() => this.kick());
  }
  private all() {
    return [this.pools, this.bns, this.nodes, this.pods, this.mcps, this.mcs];
  }

  async start(): Promise<this> {
    await Promise.all(this.all().map((r) => r.start()));
    this.kick();
    return this;
  }
  stop(): void {
    this.stopped = true;
    for (const r of this.all()) r.stop();
    for (const t of this.timers) clearTimeout(t);
  }

  private record(node: string, what: string) {
    this.log.push({ t: Date.now() - this.t0, node, what });
  }
  private after(ms: number, fn: () => Promise<void> | void) {
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopped) Promise.resolve(fn()).catch((e) => this.fail(e));
    }, ms);
    this.timers.add(t);
  }
  private fail(e: unknown) {
    if (this.stopped) return;
    if (e instanceof NotFoundError) return; // the scenario was reset under us
    this.errors.push(String((e as Error)?.message ?? e));
    // A write that failed (an API server under load answers late) is tried again on the next round.
    setTimeout(() => this.kick(), 200).unref();
  }
  private kick() {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setTimeout(() => {
      this.scheduled = false;
      this.reconcile().catch((e) => this.fail(e));
    }, 5);
  }

  private async status(kind: string, name: string, status: Record<string, unknown>, namespace?: string) {
    const o = await this.client.request('PATCH', `${objectPath(R(kind), name, namespace)}/status`, { body: { status }, contentType: MERGE, expect: kind });
    (kind === 'Node' ? this.nodes : kind === 'BootcNode' ? this.bns : this.mcps).put(o);
  }
  private async spec(kind: string, name: string, body: Record<string, unknown>) {
    const o = await this.client.request('PATCH', objectPath(R(kind), name), { body, contentType: MERGE, expect: kind });
    (kind === 'Node' ? this.nodes : kind === 'BootcNode' ? this.bns : kind === 'MachineConfigPool' ? this.mcps : this.mcs).put(o);
  }
  private setReady(node: string, ready: boolean) {
    const n = itemsOf(this.nodes).get(`/${node}`);
    return this.status('Node', node, {
      conditions: withCondition(
        n?.status?.conditions,
        ready
          ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastTransitionTime: now() }
          : { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: now() },
      ),
    });
  }

  private async reconcile() {
    const jobs: Promise<unknown>[] = [];
    // kubelet: finish graceful deletions
    for (const p of itemsOf(this.pods).values()) {
      if (p.metadata.deletionTimestamp && !this.busy.has(`pod/${p.metadata.uid}`)) {
        this.busy.add(`pod/${p.metadata.uid}`);
        jobs.push(
          this.client
            .request('DELETE', objectPath(R('Pod'), p.metadata.name, p.metadata.namespace), {
              body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: p.metadata.uid } },
            })
            .catch((e) => this.fail(e)),
        );
      }
    }
    // bootc-operator controller: pool target -> BootcNode desiredImage
    for (const pool of itemsOf(this.pools).values()) {
      const ref: string | undefined = pool.spec?.image?.ref;
      if (!ref || !digestOf(ref)) continue;
      for (const bn of itemsOf(this.bns).values()) {
        if (bn.metadata.ownerReferences?.find((r) => r.kind === 'BootcNodePool')?.name !== pool.metadata.name) continue;
        if (bn.spec?.desiredImage === ref) continue;
        this.record(bn.metadata.name, `desiredImage ${digestOf(ref)!.slice(0, 19)}`);
        jobs.push(this.spec('BootcNode', bn.metadata.name, { spec: { desiredImage: ref, desiredImageState: 'Staged' } }));
      }
    }
    for (const bn of itemsOf(this.bns).values()) jobs.push(this.daemon(bn));
    for (const mcp of itemsOf(this.mcps).values()) jobs.push(this.mco(mcp));
    await Promise.all(jobs.map((j) => j.catch((e) => this.fail(e))));
  }

  // ---------------------------------------------------------------- bootc daemon

  private async daemon(bn: TestObject) {
    const name = bn.metadata.name;
    if (this.busy.has(name)) return;
    const image: string = bn.spec?.desiredImage;
    const digest = digestOf(image);
    if (!digest || cond(bn, 'Degraded')?.status === 'True') return;
    const idle = cond(bn, 'Idle');
    if (bn.status?.booted?.imageDigest === digest) {
      if (idle?.status !== 'True')
        await this.status('BootcNode', name, {
          conditions: withCondition(bn.status?.conditions, { type: 'Idle', status: 'True', reason: 'Idle', message: '', lastTransitionTime: now() }),
        });
      return;
    }
    if (bn.status?.staged?.imageDigest === digest) {
      if (bn.spec.desiredImageState === 'Booted') return this.reboot(bn);
      if (idle?.reason !== 'Staged')
        await this.status('BootcNode', name, {
          conditions: withCondition(bn.status?.conditions, {
            type: 'Idle',
            status: 'False',
            reason: 'Staged',
            message: `staged ${digest}`,
            lastTransitionTime: now(),
          }),
        });
      return;
    }
    // stage
    this.busy.add(name);
    this.record(name, 'staging');
    try {
      await this.status('BootcNode', name, {
        conditions: withCondition(bn.status?.conditions, {
          type: 'Idle',
          status: 'False',
          reason: 'Staging',
          message: `staging ${image}`,
          lastTransitionTime: now(),
        }),
      });
    } catch (e) {
      this.busy.delete(name);
      throw e;
    }
    this.after(this.opts.stageMs?.(name) ?? this.ms('stage'), async () => {
      const cur = itemsOf(this.bns).get(`/${name}`);
      try {
        if (!cur || cur.spec?.desiredImage !== image) return;
        await this.status('BootcNode', name, {
          staged: { image, imageDigest: digest, version: 'e2e', timestamp: now(), architecture: 'amd64', softRebootCapable: false, incompatible: false },
          conditions: withCondition(cur.status?.conditions, {
            type: 'Idle',
            status: 'False',
            reason: 'Staged',
            message: `staged ${digest}`,
            lastTransitionTime: now(),
          }),
        });
        this.record(name, 'staged');
      } finally {
        this.busy.delete(name);
        this.kick();
      }
    });
  }

  private async reboot(bn: TestObject) {
    const name = bn.metadata.name;
    this.busy.add(name);
    const failed = this.opts.failReboot?.(name) ?? false;
    this.record(name, 'reboot');
    try {
      await this.status('BootcNode', name, {
        conditions: withCondition(bn.status?.conditions, {
          type: 'Idle',
          status: 'False',
          reason: 'Rebooting',
          message: 'rebooting',
          lastTransitionTime: now(),
        }),
      });
      await this.setReady(name, false);
    } catch (e) {
      this.busy.delete(name);
      throw e;
    }
    this.after(this.ms('reboot'), async () => {
      const cur = itemsOf(this.bns).get(`/${name}`);
      if (!cur) return void this.busy.delete(name);
      try {
        await this.finishReboot(name, cur, failed);
      } catch (e) {
        this.busy.delete(name);
        throw e;
      }
    });
  }

  private async finishReboot(name: string, cur: TestObject, failed: boolean) {
    {
      let conds = withCondition(cur.status?.conditions, { type: 'Idle', status: 'True', reason: 'Idle', message: '', lastTransitionTime: now() });
      if (failed) {
        conds = withCondition(conds, {
          type: 'Degraded',
          status: 'True',
          reason: 'Error',
          message: 'bootc switch --apply: the new deployment failed to boot; rolled back',
          lastTransitionTime: now(),
        });
        await this.status('BootcNode', name, { conditions: conds });
      } else {
        await this.status('BootcNode', name, { booted: cur.status.staged, rollback: cur.status.booted ?? null, staged: null, conditions: conds });
      }
      this.record(name, failed ? 'reboot failed' : 'booted');
      this.after(this.ms('ready'), async () => {
        try {
          await this.setReady(name, true);
          this.record(name, 'ready');
        } finally {
          this.busy.delete(name);
          this.kick();
        }
      });
    }
  }

  // ---------------------------------------------------------------- MCO

  private async mco(mcp: TestObject) {
    const pool = mcp.metadata.name;
    // render: the MachineConfigs the pool's machineConfigSelector selects (a custom pool inherits
    // worker's), merged in the MCO's order: the last osImageURL wins (src/domain/mco-render.ts).
    const merged = mergedOsImage(
      mcp,
      [...itemsOf(this.mcs).values()].filter((m) => !m.metadata.name.startsWith('rendered-')),
    );
    const current = itemsOf(this.mcs).get(`/${mcp.spec?.configuration?.name ?? ''}`);
    // Without a MachineConfig that sets it, the image is the release's (ControllerConfig
    // spec.osImageURL): the one the pool ran before any source set one.
    if (!merged.setters.length && !this.baseImage.has(pool) && current?.spec?.osImageURL) this.baseImage.set(pool, current.spec.osImageURL);
    const osImageURL = merged.osImageURL ?? this.baseImage.get(pool) ?? current?.spec?.osImageURL;
    if (osImageURL && current?.spec?.osImageURL !== osImageURL && !this.busy.has(`render/${pool}`)) {
      this.busy.add(`render/${pool}`);
      try {
        // The MCO names a rendered config by a hash of its content: the same content comes back
        // under the same name (a deleted source MachineConfig renders the previous config again).
        const same = [...itemsOf(this.mcs).values()].find((m) => m.metadata.name.startsWith(`rendered-${pool}-`) && m.spec?.osImageURL === osImageURL);
        const name = same?.metadata.name ?? `rendered-${pool}-${createHash('md5').update(`${pool}/${osImageURL}`).digest('hex').slice(0, 12)}`;
        if (!itemsOf(this.mcs).has(`/${name}`)) {
          const o = await this.client
            .request('POST', '/apis/machineconfiguration.openshift.io/v1/machineconfigs', {
              expect: 'MachineConfig',
              body: {
                apiVersion: 'machineconfiguration.openshift.io/v1',
                kind: 'MachineConfig',
                metadata: {
                  name,
                  ownerReferences: [
                    { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: pool, uid: mcp.metadata.uid, controller: true },
                  ],
                },
                spec: { ...(current?.spec ?? {}), osImageURL },
              },
            })
            .catch((e) => {
              if (e?.name === 'AlreadyExistsError') return null;
              throw e;
            });
          if (o) this.mcs.put(o);
        }
        await this.spec('MachineConfigPool', pool, { spec: { configuration: { name } } });
        await this.status('MachineConfigPool', pool, { configuration: { name } });
        this.record(pool, `rendered ${name}`);
      } finally {
        this.busy.delete(`render/${pool}`);
      }
      return;
    }
    if (mcp.spec?.paused) return;
    const target: string | undefined = mcp.spec?.configuration?.name;
    if (!target) return;
    // MCO GetPoolsForNode: a node a custom pool selects is that pool's, not worker's.
    const mcps = [...itemsOf(this.mcps).values()];
    const members = [...itemsOf(this.nodes).values()].filter((n) => {
      const labels = n.metadata.labels ?? {};
      if (!selectorMatches(mcp.spec?.nodeSelector, labels)) return false;
      return pool !== 'worker' || !mcps.some((o) => o.metadata.name !== 'worker' && selectorMatches(o.spec?.nodeSelector, labels));
    });
    const parsed = parseMaxUnavailable(mcp.spec?.maxUnavailable ?? 1);
    const budget = parsed.ok ? resolveMaxUnavailable(parsed.value, members.length).resolved : 1;
    const unavailable = members.filter((n) => n.spec?.unschedulable || cond(n, 'Ready')?.status !== 'True' || this.busy.has(n.metadata.name)).length;
    let free = budget - unavailable;
    const candidates = members
      .filter(
        (n) =>
          (n.metadata.annotations?.[MCO_DESIRED_CONFIG] ?? '') !== target &&
          !this.busy.has(n.metadata.name) &&
          !n.spec?.unschedulable &&
          cond(n, 'Ready')?.status === 'True',
      )
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
    for (const n of candidates) {
      if (free-- <= 0) break;
      void this.mcd(n.metadata.name, target).catch((e) => this.fail(e));
    }
  }

  private async mcd(node: string, target: string) {
    this.busy.add(node);
    this.record(node, `mcd ${target}`);
    await this.spec('Node', node, { metadata: { annotations: { [MCO_DESIRED_CONFIG]: target, [MCO_STATE]: 'Working' } }, spec: { unschedulable: true } });
    // The MCD drains the node itself (DaemonSet and mirror pods stay).
    for (const p of [...itemsOf(this.pods).values()].filter((p) => p.spec?.nodeName === node && !skippedByDrain(p))) {
      await this.client
        .request('POST', `${objectPath(R('Pod'), p.metadata.name, p.metadata.namespace)}/eviction`, {
          body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: p.metadata.name, namespace: p.metadata.namespace } },
        })
        .catch((e) => this.fail(e));
    }
    this.after(this.ms('drain'), async () => {
      await this.setReady(node, false);
      this.after(this.ms('reboot'), async () => {
        await this.spec('Node', node, { metadata: { annotations: { [MCO_CURRENT_CONFIG]: target, [MCO_STATE]: 'Done' } } });
        this.after(this.ms('ready'), async () => {
          try {
            await this.setReady(node, true);
            await this.spec('Node', node, { spec: { unschedulable: null } });
            this.record(node, 'mcd done');
          } finally {
            this.busy.delete(node);
            this.kick();
          }
        });
      });
    });
  }
}
