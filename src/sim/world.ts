/**
 * What the simulated controllers (the bootc-operator, the MCO, the fault injector) may see and
 * do in the simulated cluster: read and change the live objects, schedule on the virtual
 * clock, and report reboots. SimCluster implements it; the actors get nothing else.
 */
import type { KObject, Condition } from '../cluster/types.ts';
import type { BootcNodeObject, MachineConfigObject, MachineConfigPoolObject, NodeObject, ObjectWithConditions, ViewOf } from '../cluster/kinds.ts';
import type { PhaseDurations } from '../plan/types.ts';
import type { SimEvent } from './clock.ts';

/** What the simulator knows of a node beyond its objects: the machine and its daemons. */
export interface NodeRuntime {
  initiallyNotReady: boolean;
  /** Rebooting: the kubelet does not post status. */
  down: boolean;
  /** NotReady on its own for a while (a fault). */
  flapping: boolean;
  /** Bumped when the daemon starts a new pull or the MCD a new update: older steps are dropped. */
  stageToken: number;
  mcoToken: number;
  stagingImage?: string | null;
}

export type RebootKind = 'soft' | 'hard';

export interface SimWorld {
  /** Virtual seconds since the epoch. */
  readonly now: number;
  readonly durations: PhaseDurations;
  /** A node's own phase durations (the base ones under per-node jitter: jitter.ts). */
  durationsOf(node: string): PhaseDurations;
  /** Runs `fn` `dt` virtual seconds from now. */
  after(dt: number, fn: () => void): SimEvent;

  get<K extends string>(kind: K, name: string, namespace?: string | null): ViewOf<K> | undefined;
  readonly nodes: ReadonlyMap<string, NodeObject>;
  readonly bootcNodes: ReadonlyMap<string, BootcNodeObject>;
  readonly machineConfigs: ReadonlyMap<string, MachineConfigObject>;
  /** The live MachineConfigPools (the MCO renders each from the configs its selector selects). */
  machineConfigPools(): readonly MachineConfigPoolObject[];
  /** Adds a live object (a controller creating one). */
  put(o: KObject): void;
  /** Reports an in-place change of a live object. */
  changed(o: KObject | undefined): void;

  runtime(node: string): NodeRuntime | undefined;
  /** Recomputes a node's availability after a change to its Node or BootcNode. */
  touch(node: string): void;
  /** The kubelet: posts Ready (or stops posting) from the node's runtime state. */
  refreshReady(node: string): void;
  recordReboot(node: string, kind: RebootKind, failed: boolean): void;
  /** Whether the reboot starting now will fail (a draw from the fault seed). */
  rebootFails(): boolean;

  /** The members of a pool, by key (`mco/NAME` or `bootc/NAME`). */
  membersOf(poolKey: string): readonly string[];
  /** Every node that belongs to a pool. */
  pooledNodes(): string[];
  isUnavailable(node: string): boolean;
  countUnavailable(poolKey: string): number;
  /** The resolved budget written to the pool (MCO arithmetic), or null. */
  budgetOf(poolKey: string): number | null;
}

/** Sets a status condition; its lastTransitionTime moves only when its status changes. */
export function setCondition(obj: ObjectWithConditions, c: Condition) {
  const status = (obj.status ??= {});
  const list = (status.conditions ??= []);
  const i = list.findIndex((x) => x.type === c.type);
  if (i >= 0) {
    const old = list[i];
    const changed = old.status !== c.status;
    list[i] = { ...old, ...c, lastTransitionTime: changed ? c.lastTransitionTime : (old.lastTransitionTime ?? c.lastTransitionTime) };
  } else list.push(c);
}
