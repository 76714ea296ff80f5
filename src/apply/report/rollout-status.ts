/**
 * The rollout status (docs/gitops.md "The rollout status"): what `apply` writes to the status subresource of the
 * spec's own object (bootcplan.dev/v1alpha1 Rollout, deploy/crds/bootcplan.dev_rollouts.yaml),
 * so that Argo CD (examples/argocd/health/rollout.lua), Flux (kstatus conditions Ready /
 * Reconciling / Stalled) and `kubectl get rollouts.bootcplan.dev` show where a rollout is; and
 * the Kubernetes Events on the pools and nodes bootcplan acts on. Pure: the apply events and
 * the outcome of a run go in, the status and the events come out (rollout-report.ts writes them).
 *
 * Phases (Argo CD's health vocabulary): Progressing (a wave runs, or the next run continues),
 * Suspended (nothing may be done now: outside the maintenance window), Degraded (a human is
 * needed: stale plan, halted pool, blocked by policy, an error), Healthy (the plan is applied).
 */
import type { ApplyEvent } from '../ports/events.ts';
import type { ObjectRef } from '../../cluster/objects.ts';
import type { RolloutPhase, RolloutReason, RolloutCondition, EventReason, ClusterEventRecord } from '../ports/rollout-object.ts';
import type { Plan } from '../../plan/types.ts';
import { BOOTCPLAN_NAMESPACE } from '../../cluster/types.ts';

/** Where a Rollout object lives: namespace openshift-bootcplan, named as the spec's metadata.name. */
function rolloutRef(name: string): ObjectRef {
  return { apiVersion: 'bootcplan.dev/v1alpha1', kind: 'Rollout', name, namespace: BOOTCPLAN_NAMESPACE };
}

/** What the status says, before the conditions and the bookkeeping fields are added. */
export interface StatusCore {
  phase: RolloutPhase;
  reason: RolloutReason;
  message: string;
  pool?: string | null;
  wave?: number | null;
  waves?: number | null;
  nextWindow?: string | null;
}

/**
 * The kstatus conditions of a phase (sigs.k8s.io/cli-utils pkg/kstatus/status, "generic"
 * rules, as Flux's health checks read them): Stalled=True is Failed, Reconciling=True is
 * InProgress, Ready=True is Current. Suspended is in progress for kstatus (it will continue on
 * its own); Degraded is stalled (it will not).
 */
export function conditionsOf(core: StatusCore, now: string, generation: number | undefined, previous: readonly RolloutCondition[] = []): RolloutCondition[] {
  const healthy = core.phase === 'Healthy';
  const degraded = core.phase === 'Degraded';
  const want: [RolloutCondition['type'], boolean][] = [
    ['Ready', healthy],
    ['Reconciling', !healthy && !degraded],
    ['Stalled', degraded],
  ];
  return want.map(([type, on]) => {
    const before = previous.find((c) => c.type === type);
    const status = on ? 'True' : 'False';
    const lastTransitionTime = before && before.status === status && before.lastTransitionTime ? before.lastTransitionTime : now;
    return {
      type,
      status,
      reason: core.reason,
      message: core.message,
      lastTransitionTime,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    };
  });
}

/** "22:00 Europe/Berlin" (within a day) or "Mon 2026-09-14 22:00 Europe/Berlin". */
export function windowTime(startIso: string, timezone: string, nowIso: string): string {
  try {
    const at = new Date(startIso);
    const hm = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, hour: '2-digit', minute: '2-digit', hour12: false }).format(at);
    if (at.getTime() - Date.parse(nowIso) < 24 * 3600 * 1000) return `${hm} ${timezone}`;
    const parts = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, weekday: 'short', year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(
      at,
    );
    const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
    return `${get('weekday')} ${get('year')}-${get('month')}-${get('day')} ${hm} ${timezone}`;
  } catch {
    return `${startIso} ${timezone}`;
  }
}

/**
 * The status an apply event moves the rollout to, or null when it does not change it (see
 * rollout-report.ts for what is written). A run's start is not written: a CronJob run that
 * finds nothing to do would flip an applied rollout to Progressing and back every time.
 */
export function statusOfEvent(e: ApplyEvent, plan: Plan, lastFailure: { node: string; message: string } | null): StatusCore | null {
  switch (e.type) {
    case 'wave-start':
      return {
        phase: 'Progressing',
        reason: 'WaveStarted',
        message: `wave ${e.wave}/${e.waves} of pool ${e.pool}`,
        pool: e.pool,
        wave: e.wave,
        waves: e.waves,
      };
    case 'halt':
      if (e.check) return { phase: 'Degraded', reason: 'HealthCheckFailed', message: `halted: ${e.message}`, pool: e.pool };
      return { phase: 'Degraded', reason: 'Halted', message: haltMessage(e.pool, e.node ?? null, e.message, lastFailure), pool: e.pool };
    case 'rollback-start':
      return {
        phase: 'Degraded',
        reason: 'RollingBack',
        message: `rolling back ${e.nodes} node(s) of ${e.pools.join(', ')} (plan ${e.planId}): ${e.message}`,
        pool: e.pools[0] ?? null,
      };
    case 'gate-fail':
      return {
        phase: 'Degraded',
        reason: 'HealthCheckFailed',
        message: `health check ${e.check} failed ${gatePlace(e, plan)}: ${e.observed}`,
        pool: e.pool,
        wave: e.wave,
      };
    default:
      return null;
  }
}

/** "after wave 2/4 of pool worker", as the gate events place a gate. */
function gatePlace(e: { point: string; pool: string | null; wave: number | null; node?: string }, plan: Plan): string {
  if (e.point === 'preflight') return 'before the first write (nothing was written)';
  if (e.point === 'afterNode') return `after node ${e.node} of pool ${e.pool}`;
  // A fleet canary's batch gate (docs/fleets.md "Health gates"): after its whole run soaked.
  if (e.point === 'batch') return "at the fleet's batch gate, after the canary's run soaked";
  const waves = plan.pools.find((p) => p.name === e.pool)?.waves.length;
  return `after wave ${e.wave}${waves ? `/${waves}` : ''} of pool ${e.pool}`;
}

/** "halted: worker-c-1 Degraded after the reboot" (the node's own failure when known). */
export function haltMessage(pool: string, node: string | null, message: string, lastFailure: { node: string; message: string } | null): string {
  if (node && lastFailure?.node === node) return `halted: ${node} ${lastFailure.message} (pool ${pool})`;
  return `halted: pool ${pool}: ${message}`;
}

// ---------------------------------------------------------------------------------------
// Kubernetes Events (events.k8s.io/v1)

function poolRef(plan: Plan, pool: string): ObjectRef {
  const p = plan.pools.find((x) => x.name === pool);
  return p?.backend === 'mco'
    ? { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: pool }
    : { apiVersion: 'node.bootc.dev/v1alpha1', kind: 'BootcNodePool', name: pool };
}
const nodeRef = (name: string): ObjectRef => ({ apiVersion: 'v1', kind: 'Node', name });

/** A node's reboot request as the reporter saw it (kind, ISO time), for its NodeUpdated Event. */
export interface RebootSeen {
  kind: 'soft' | 'hard';
  at: string;
}

/**
 * The Event an apply event is worth, or null. One per node: its outcome (NodeUpdated, whose
 * note says when and how its reboot was requested, or NodeFailed); none for the reboot request
 * itself (the pool's WaveStarted Event names the node; the BootcNode and the Node's progress
 * annotation show it while it reboots). And one per wave and pool: a rollout's Events cost
 * about 1 API request per node (docs/gitops.md "Events").
 */
export function clusterEventOf(e: ApplyEvent, plan: Plan, reboot?: RebootSeen, rollout?: string): ClusterEventRecord | null {
  const tail = `plan ${plan.id}`;
  switch (e.type) {
    case 'gate-pass':
    case 'gate-fail': {
      // Every gate's verdict (docs/apply.md "Health gates"): on its pool, or on the Rollout for the preflight gate.
      const regarding = e.pool ? poolRef(plan, e.pool) : rollout ? rolloutRef(rollout) : null;
      if (!regarding) return null;
      if (e.type === 'gate-pass')
        return {
          regarding,
          type: 'Normal',
          reason: 'HealthCheckPassed',
          action: 'CheckHealth',
          note: `${e.checks.join(', ') || 'no enforcing check (observing only)'} passed ${gatePlace(e, plan)} in ${Math.round(e.seconds)} s (${tail})`,
        };
      return {
        regarding,
        type: 'Warning',
        reason: 'HealthCheckFailed',
        action: 'CheckHealth',
        note: `${e.check} failed ${gatePlace(e, plan)} (${e.reason}; on failure: ${e.onFailure}): ${e.observed} (${tail})`,
      };
    }
    case 'gate-observe': {
      // A check on trial (docs/apply.md "Health gates"): Normal, and its reason is not HealthCheckFailed: nothing acted on it.
      const regarding = e.pool ? poolRef(plan, e.pool) : rollout ? rolloutRef(rollout) : null;
      if (!regarding) return null;
      const verdict = e.result === 'failed' ? `would have failed (${e.reason ?? 'condition'}; on failure once enforced: ${e.onFailure})` : 'would have passed';
      return {
        regarding,
        type: 'Normal',
        reason: 'HealthCheckObserved',
        action: 'CheckHealth',
        note: `${e.check} (mode: observe, not enforced) ${verdict} ${gatePlace(e, plan)}${e.observed ? `: ${e.observed}` : ''} (${tail})`,
      };
    }
    case 'wave-start':
      return {
        regarding: poolRef(plan, e.pool),
        type: 'Normal',
        reason: 'WaveStarted',
        action: 'StartWave',
        note: `wave ${e.wave}/${e.waves}: ${e.nodes.join(', ')} (${tail})`,
      };
    case 'booted': {
      const asked = reboot ? `cordoned and drained, ${reboot.kind} reboot requested at ${reboot.at}; ` : '';
      if (e.rollback)
        return {
          regarding: nodeRef(e.node),
          type: 'Normal',
          reason: 'NodeRolledBack',
          action: 'Uncordon',
          note: `${asked}booted the image it ran before the rollout and Ready (pool ${e.pool}, wave ${e.wave}, rollback ${tail})`,
        };
      return {
        regarding: nodeRef(e.node),
        type: 'Normal',
        reason: 'NodeUpdated',
        action: 'Uncordon',
        note: `${asked}booted the target and Ready (pool ${e.pool}, wave ${e.wave}, ${tail})`,
      };
    }
    case 'node-failed':
      return { regarding: nodeRef(e.node), type: 'Warning', reason: 'NodeFailed', action: 'Halt', note: `${e.message} (pool ${e.pool}, ${tail})` };
    case 'halt':
      return { regarding: poolRef(plan, e.pool), type: 'Warning', reason: 'PoolHalted', action: 'Pause', note: `${e.message}; the pool is paused (${tail})` };
    case 'pool-done':
      return { regarding: poolRef(plan, e.pool), type: 'Normal', reason: 'PoolUpdated', action: 'Finish', note: `every wave done (${tail})` };
    default:
      return null;
  }
}

/** The Event on the Rollout object for a run's final status (none while it only progresses or waits). */
export function rolloutEventOf(name: string, core: StatusCore, plan: Plan): ClusterEventRecord | null {
  const reason: EventReason | null =
    core.reason === 'Applied'
      ? 'RolloutApplied'
      : core.reason === 'Stale'
        ? 'RolloutStale'
        : core.reason === 'RolledBack'
          ? 'RollbackFinished'
          : core.reason === 'Held'
            ? 'RolloutHeld'
            : core.reason === 'Halted'
              ? 'RolloutHalted'
              : core.reason === 'HealthCheckFailed'
                ? 'HealthCheckFailed'
                : core.phase === 'Degraded'
                  ? 'RolloutBlocked'
                  : null;
  if (!reason) return null;
  return {
    regarding: rolloutRef(name),
    type: reason === 'RolloutApplied' ? 'Normal' : 'Warning',
    reason,
    action: 'Apply',
    note: `${core.message} (plan ${plan.id})`,
  };
}
