/**
 * The health source port (docs/apply.md "Health gates"): what the applier needs to measure a
 * health check, and nothing more. Two implementations: src/kube/health-source.ts (Prometheus,
 * Alertmanager, ClusterOperators and object conditions through the API server) and
 * src/sim/health.ts (rehearsals, `--fail-check`). The applier decides from the measurements
 * (src/apply/gates/health-gates.ts, src/domain/health-verdict.ts); a source only measures, and the pure
 * judging of an answer is src/domain/health-observe.ts, which the kube source calls.
 */
import type { PlanHealthCheck } from '../../plan/types.ts';
import type { Measurement } from '../../domain/health-verdict.ts';

export type { Measurement, MeasurementOutcome, HealthErrorKind } from '../../domain/health-verdict.ts';

export interface HealthSource {
  /**
   * One measurement of `check`, bounded by check.requestTimeoutSeconds and `signal`. Never throws
   * for what the source answered or failed to answer: that is an `error` measurement. Throws only
   * AbortedError (stop request); every other exception is a bug and fails the apply (exit 1).
   */
  measure(check: PlanHealthCheck, position: GatePosition, signal: AbortSignal): Promise<Measurement>;
  /** Releases sockets and caches at the end of the apply. */
  close?(): void;
}

/** Where a gate is evaluated: before the first write, after a wave, after a node, or a fleet's canary batch. */
export type GatePositionPoint = 'preflight' | 'afterWave' | 'afterNode' | 'batch';

/** Where the gate is (the simulator's fault script needs it; the kube source ignores it). */
export interface GatePosition {
  point: GatePositionPoint;
  pool: string | null;
  wave: number | null;
  node: string | null;
}
