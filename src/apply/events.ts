/**
 * Typed events of an apply (and a rehearsal: same engine). `t` is seconds since the apply
 * started, from the driver's clock. Renderers: src/render/events.ts.
 */
import type { Condition } from '../cluster/types.ts';

export type ApplyEventType =
  | 'start'          // apply started (message: plan id; resumed: true on a rerun)
  | 'change'         // an object change was written (address)
  | 'wait'           // waiting for a condition between ordered changes (message)
  | 'stage-start'    // a bootc node began pulling/staging the target
  | 'staged'         // a bootc node passed the staging gate
  | 'pool-start'
  | 'wave-start'     // wave, waves, nodes
  | 'cordon'
  | 'drain-done'
  | 'reboot'         // kind: soft | hard
  | 'booted'         // the node runs the target and is Ready
  | 'uncordon'
  | 'wave-end'
  | 'soak'           // seconds
  | 'pool-done'
  | 'node-failed'    // conditions, message
  | 'node-unavailable' // a node of the pool went out of service on its own
  | 'node-available'
  | 'halt'           // the pool was paused; message
  | 'step-end'       // apply --step stopped after one wave
  | 'done';

export interface ApplyEvent {
  t: number;
  type: ApplyEventType;
  pool?: string;
  node?: string;
  wave?: number;
  /** Total waves of the pool (wave-start). */
  waves?: number;
  nodes?: string[];
  kind?: 'soft' | 'hard';
  address?: string;
  seconds?: number;
  message?: string;
  conditions?: Condition[];
  resumed?: boolean;
}

export type EventSink = (e: ApplyEvent) => void;

/** An event as the applier writes it, before it is stamped with `t`. */
export type UnstampedEvent = Omit<ApplyEvent, 't'>;
