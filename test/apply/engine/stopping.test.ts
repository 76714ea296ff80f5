/**
 * Stopping an apply, against the simulator (docs/apply.md "Stopping"; src/apply/engine/interrupt.ts):
 * - the staging observer ends on a stop and never waits again after an aborted wait (it did,
 *   at once and forever: the process spun on the real API server);
 * - a drain in progress stops with the stop: nothing of it is left waiting;
 * - a lost lock ends every wait within 2 s, not at the next renewal;
 * - the structural guard: a wait the apply's stop ended is told apart from a wait a loop cancelled
 *   itself, and no code but the listed places catches AbortedError.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ClusterBuilder, specYaml, NEW, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { ROOT } from '../../support/built.ts';
import { AbortedError, type ClusterDriver } from '../../../src/apply/ports/driver.ts';
import { cancelledByCaller, interruptible, StopRequestedError } from '../../../src/apply/engine/interrupt.ts';
import { observeStaging } from '../../../src/apply/pools/observe.ts';
import type { PoolContext } from '../../../src/apply/pools/context.ts';
import { InterruptedError, LockNotHeldError } from '../../../src/base/errors.ts';

const s = suite('stopping');

function bootc(n = 6, mu = 2) {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', n)).snapshot();
  return { snap, ...planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: mu }]), snap) };
}

s('the staging observer: a stop of the apply ends it; it never starts another wait after its wait was aborted', async () => {
  // 40 nodes staging: two watch groups (32 nodes each at most).
  const { snap, plan } = bootc(40, 4);
  const sim = newSim(snap);
  const halt = new AbortController();
  const own = new AbortController();
  const inner = interruptible(sim.driver('apply'), halt.signal);
  let afterStop = 0;
  // The observer's driver, counting the waits it starts once the apply was stopped; after 1,000
  // (a loop that retries) it is ended from outside, so that the suite does not spin forever.
  const driver = new Proxy(inner, {
    get(target, prop) {
      if (prop !== 'waitFor') return Reflect.get(target, prop, target);
      return ((pred, o) => {
        if (halt.signal.aborted && ++afterStop >= 1000) own.abort();
        return target.waitFor(pred, o);
      }) as ClusterDriver['waitFor'];
    },
  });
  const ctx = { pools: plan.pools, driver, emit: () => {} } as unknown as PoolContext;
  sim.after(60, () => halt.abort('SIGTERM'));
  const ended = await observeStaging(ctx, own.signal).then(
    () => null,
    (e: unknown) => e,
  );
  assert.is(afterStop, 0, `${afterStop} wait(s) started after the stop`);
  assert.instance(ended, AbortedError, 'the stop ends the observer');
  assert.is(sim.openWaits(sim.driver('apply')), 0);
});

s('a stop mid-drain ends the drain too: nothing of the apply is left waiting in the cluster', async () => {
  const { snap, plan, replan } = bootc();
  const sim = newSim(snap);
  const stop = new AbortController();
  let cordonAt = -1;
  // Staging takes 600 s and a drain 60 s: 30 s after the first cordon the drain runs.
  const r = await runApply(sim, plan, replan, {
    signal: stop.signal,
    onEventHook: (e) => {
      if (e.type === 'cordon' && cordonAt < 0) {
        cordonAt = sim.now;
        sim.after(30, () => stop.abort('SIGTERM'));
      }
    },
  });
  assert.instance(r.error, InterruptedError);
  assert.is(r.code, 143);
  assert.ok(sim.now - cordonAt < 32, `ended ${sim.now - cordonAt} s after the cordon`);
  assert.is(sim.openWaits(r.driver), 0, "the drain's wait was left running");
  assert.is(sim.lock.leaseOf(), null);
});

s('a lost lock (the Lease taken over during a reboot wait) ends every wait within 2 s, not at the next renewal; the new holder keeps it', async () => {
  const { snap, plan, replan } = bootc();
  const sim = newSim(snap);
  let takenAt = -1;
  const r = await runApply(sim, plan, replan, {
    onEventHook: (e) => {
      if (e.type !== 'reboot' || takenAt >= 0) return;
      takenAt = 0;
      sim.after(20, () => {
        void (async () => {
          const thief = sim.driver('thief');
          await thief.releaseLock((await thief.readLock())!.lockId);
          await thief.acquireLock({ holder: 'cronjob@cluster', planId: 'other', ttlSeconds: 300 });
          takenAt = sim.now;
        })();
      });
    },
  });
  assert.instance(r.error, LockNotHeldError);
  assert.is(r.code, 4);
  assert.match((r.error as Error).message, /: the Lease is now held by cronjob@cluster \(lock id [0-9a-f]+\)$/);
  assert.ok(takenAt > 0 && sim.now - takenAt <= 2, `ended ${sim.now - takenAt} s after the Lease was taken`);
  assert.is(sim.openWaits(r.driver), 0);
  assert.is(sim.lock.leaseOf()?.holder, 'cronjob@cluster');
});

s("cancelledByCaller: only the cancel of a wait of the caller's own may be swallowed, never a stop of the apply", async () => {
  const sim = newSim(bootc().snap);
  const halt = new AbortController();
  const driver = interruptible(sim.driver('apply'), halt.signal);
  const own = new AbortController();
  const mine = driver.waitFor(() => null, { timeoutSeconds: 3600, signal: own.signal }).catch((e: unknown) => e);
  own.abort();
  const e1 = await mine;
  assert.ok(cancelledByCaller(e1, own.signal), 'its own cancel');
  const other = new AbortController();
  const stopped = driver.waitFor(() => null, { timeoutSeconds: 3600, signal: other.signal }).catch((e: unknown) => e);
  halt.abort();
  other.abort();
  const e2 = await stopped;
  assert.instance(e2, StopRequestedError);
  assert.not.ok(cancelledByCaller(e2, other.signal), 'a stop, even when the caller cancelled too');
  // A wait started after the stop is refused at once, as a stop.
  const late = await driver.clock.sleep(1, own.signal).catch((e: unknown) => e);
  assert.instance(late, StopRequestedError);
  assert.not.ok(cancelledByCaller(new Error('boom'), own.signal));
});

/** The places that may look at an AbortedError, and why; any other is a loop that may swallow a stop. */
const ALLOWED: Record<string, { count: number; why: string }> = {
  'src/apply/engine/interrupt.ts': { count: 3, why: 'cancelledByCaller and withStop: the guard itself' },
  'src/apply/applier.ts': { count: 3, why: 'the apply ends: a stop becomes InterruptedError, a lost lock LockNotHeldError' },
  'src/fleet/cluster-run.ts': { count: 1, why: 'a cluster stopped by the runner is timed-out or interrupted, not failed' },
  'src/kube/rest.ts': { count: 2, why: 'an aborted request is passed on as AbortedError, not as an API failure' },
};

s('structural guard: AbortedError is caught only where a stop ends or is passed on; loops use cancelledByCaller', () => {
  const found = new Map<string, number>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir)) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        const n = (readFileSync(p, 'utf8').match(/instanceof (AbortedError|StopRequestedError)\b/g) ?? []).length;
        if (n) found.set(relative(ROOT, p), n);
      }
    }
  };
  walk(join(ROOT, 'src'));
  for (const [file, n] of found) {
    const a = ALLOWED[file];
    assert.ok(
      a,
      `${file} looks at AbortedError: a loop that swallows a stop waits again at once, forever (src/apply/engine/interrupt.ts); use cancelledByCaller, or list the file here with why`,
    );
    assert.is(n, a.count, `${file}: ${n} place(s) look at AbortedError, ${a.count} listed (${a.why})`);
  }
});

s.run();
