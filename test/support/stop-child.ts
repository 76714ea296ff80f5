/**
 * A bootcplan process for test/cli/stopping-process.test.ts: `node --import tsx test/support/stop-child.ts
 * SCENARIO` runs the CLI's own entry (run()) with the process's real signal handling and its
 * real exit, against a simulated cluster that answers like the API server (every call yields
 * to the event loop: test/support/stop-drivers.ts) and whose nodes stay mid-staging. The apply's events
 * go to stdout as NDJSON, its messages to stderr, as the built CLI writes them.
 *
 * Scenarios (the parent sends the signals):
 * - `apply`: a bootc pool staging; the parent sends SIGTERM.
 * - `apply-hang`: the same, and once stopped the API server answers no write any more: the
 *   clean-up cannot finish, a second SIGTERM must end the process.
 * - `lost-lock`: at the first `stage-start` another apply takes the Lease (unlock, then lock).
 * - `fleet`: `fleet apply` of one such cluster with batchTimeoutSeconds: 1 (the batch times out
 *   while its nodes stage).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/cli/main.ts';
import type { DriverFactory } from '../../src/app/ports.ts';
import type { ClusterDriver } from '../../src/apply/ports/driver.ts';
import type { SimCluster } from '../../src/sim/cluster.ts';
import { DEFAULT_DURATIONS } from '../../src/domain/timing.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from './cluster.ts';
import { newSim } from './apply.ts';
import { simFleet } from './fleet-sim.ts';
import { FleetBuilder } from './fleet.ts';
import { holdingStaging, hangingAfter, withLatency } from './stop-drivers.ts';
import { io } from './cli.ts';

const scenario = process.argv[2];
const dir = mkdtempSync(join(tmpdir(), 'bootcplan-stop-child-'));
const stopped = new AbortController();
// The CLI's own handlers see the signal first (they were registered when apply started).
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => stopped.abort());

// The process's own streams (the parent reads them), not a capture.
const childIO = io({
  stdout: (s) => {
    process.stdout.write(s);
    onOutput(s);
  },
  stderr: (s) => void process.stderr.write(s),
});
let onOutput: (s: string) => void = () => {};

/** Nodes that take a year to stage: the staging observer watches them until the apply ends. */
const SLOW_STAGING = { durations: { ...DEFAULT_DURATIONS, stage: 365 * 86400 } };

function answering(d: ClusterDriver, sim: SimCluster): ClusterDriver {
  const held = holdingStaging(d);
  return withLatency(scenario === 'apply-hang' ? hangingAfter(held, stopped.signal) : held, (w) => sim.hold(w));
}

async function applyScenario(): Promise<number> {
  const cluster = new ClusterBuilder().bootcPool('worker', nodes('w', 6));
  const sim = newSim(cluster.snapshot(), SLOW_STAGING);
  const spec = join(dir, 'rollout.yaml');
  writeFileSync(spec, specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]));
  let takenAt: number | null = null;
  if (scenario === 'lost-lock') {
    let taken = false;
    onOutput = (s) => {
      if (taken || !s.includes('"type":"stage-start"')) return;
      taken = true;
      void (async () => {
        const thief = sim.driver('thief');
        const cur = await thief.readLock();
        if (cur) await thief.releaseLock(cur.lockId);
        await thief.acquireLock({ holder: 'cronjob@cluster', planId: 'other', ttlSeconds: 300 });
        takenAt = sim.now;
        process.stderr.write('child: the Lease was taken over\n');
      })();
    };
  }
  const driver = sim.driver('apply');
  const code = await run(['apply', '-f', spec, '--auto-approve', '--json'], {
    io: childIO,
    openDriver: async () => ({ driver: answering(driver, sim), holder: 'child@test' }),
  });
  process.stderr.write(`child: lease ${sim.lock.leaseOf()?.holder ?? 'released'}; ${sim.openWaits(driver)} wait(s) left open\n`);
  if (takenAt !== null) process.stderr.write(`child: ended ${sim.now - takenAt} s of virtual time after the Lease was taken\n`);
  return code;
}

async function fleetScenario(): Promise<number> {
  const b = new FleetBuilder().strategy({ batchTimeoutSeconds: 1, batchTimeoutAction: 'abort' });
  b.cluster('east', { context: 'ctx-east', cluster: new ClusterBuilder().bootcPool('worker', nodes('e', 4)) });
  const st = simFleet(b, { prefix: 'bootcplan-stop-child-fleet-', sim: SLOW_STAGING });
  const openDriver: DriverFactory = async (flags, cliIO) => {
    const { driver, holder, records } = await st.openDriver(flags, cliIO);
    return { driver: answering(driver, st.sims[flags.context!]), holder, records };
  };
  process.chdir(st.dir);
  return run(['fleet', 'apply', st.planFile, '--auto-approve', '-o', 'json'], { io: childIO, openDriver });
}

const code = await (scenario === 'fleet' ? fleetScenario() : applyScenario());
process.stderr.write(`child: exit ${code}\n`);
process.exit(code);
