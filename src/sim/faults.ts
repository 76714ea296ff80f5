/**
 * Faults from a seed: a reboot that fails (node Degraded), a node that goes NotReady on its
 * own and comes back, a write that hits a transient conflict. One seeded generator draws them
 * all (and the lock ids), in the order the simulation asks, so a seed replays the same run.
 */
import { ConflictError } from '../apply/ports/driver.ts';
import { mulberry32, type Rng } from './rng.ts';
import type { SimWorld } from './world.ts';

export interface FaultOptions {
  seed?: number;
  /** Probability that a reboot fails (the node comes back Degraded on the old image). */
  rebootFailRate?: number;
  /** Nodes going NotReady on their own, per hour, over the whole cluster. */
  flapsPerHour?: number;
  /** How long a flap lasts, seconds [min, max]. */
  flapSeconds?: [number, number];
  /** Probability that a write hits a transient conflict (HTTP 409). */
  conflictRate?: number;
}

export class Faults {
  private readonly rng: Rng;
  private readonly rates: Required<Omit<FaultOptions, 'seed'>>;

  constructor(f: FaultOptions = {}) {
    this.rng = mulberry32(f.seed ?? 1);
    this.rates = {
      rebootFailRate: f.rebootFailRate ?? 0,
      flapsPerHour: f.flapsPerHour ?? 0,
      flapSeconds: f.flapSeconds ?? [60, 300],
      conflictRate: f.conflictRate ?? 0,
    };
  }

  /** The next draw of the seeded generator, in [0, 1). */
  random(): number {
    return this.rng();
  }

  /** Whether the reboot starting now fails. */
  rebootFails(): boolean {
    return this.rates.rebootFailRate > 0 && this.rng() < this.rates.rebootFailRate;
  }

  /** Throws the transient conflict a write may hit. */
  maybeConflict(what: string) {
    if (this.rates.conflictRate > 0 && this.rng() < this.rates.conflictRate) {
      throw new ConflictError(
        `Operation cannot be fulfilled on ${what}: the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
  }

  /** Starts the flaps, if any: a random pool member goes NotReady for a while, at random gaps. */
  startFlaps(world: Pick<SimWorld, 'after' | 'pooledNodes' | 'runtime' | 'refreshReady'>) {
    if (this.rates.flapsPerHour > 0) this.scheduleFlap(world);
  }

  private scheduleFlap(world: Pick<SimWorld, 'after' | 'pooledNodes' | 'runtime' | 'refreshReady'>) {
    const meanGap = 3600 / this.rates.flapsPerHour;
    const gap = -Math.log(1 - this.rng()) * meanGap;
    world.after(gap, () => {
      const names = world.pooledNodes();
      if (names.length) {
        const node = names[Math.floor(this.rng() * names.length)];
        const rt = world.runtime(node);
        const [lo, hi] = this.rates.flapSeconds;
        const dur = lo + this.rng() * (hi - lo);
        if (rt && !rt.flapping) {
          rt.flapping = true;
          world.refreshReady(node);
          world.after(dur, () => {
            rt.flapping = false;
            world.refreshReady(node);
          });
        }
      }
      this.scheduleFlap(world);
    });
  }
}
