/**
 * A fleet of simulated clusters behind kubeconfig contexts, for the suites that run `fleet apply`
 * through run(): the Fleet and its sealed fleet plan written to a temp dir, one simulator per
 * context, a driver factory that records which contexts were opened (a context listed in
 * `missing` is one the kubeconfig lacks), and the options that run the CLI there:
 * `cli(args, fleet.options)` (test/support/cli.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DriverFactory } from '../../src/app/ports.ts';
import { ClusterApiError } from '../../src/base/errors.ts';
import { renderFleetJson } from '../../src/fleet/plan-text.ts';
import type { SimCluster, SimOptions } from '../../src/sim/cluster.ts';
import type { SimDriver } from '../../src/sim/driver.ts';
import type { FaultOptions } from '../../src/sim/faults.ts';
import { newSim } from './apply.ts';
import type { CliOptions } from './cli.ts';
import type { FleetBuilder } from './fleet.ts';

export interface SimFleet {
  dir: string;
  planFile: string;
  sims: Record<string, SimCluster>;
  opened: string[];
  openDriver: DriverFactory;
  drivers: SimDriver[];
  /** cli() options: in the fleet's directory, on its simulated clusters, at a fixed time. */
  options: CliOptions;
}

export function simFleet(
  b: FleetBuilder,
  o: { faults?: Partial<Record<string, FaultOptions>>; missing?: string[]; prefix?: string; sim?: SimOptions } = {},
): SimFleet {
  const dir = mkdtempSync(join(tmpdir(), o.prefix ?? 'bootcplan-fleet-'));
  b.write(dir);
  const planFile = join(dir, 'fleet-plan.json');
  writeFileSync(planFile, renderFleetJson(b.plan()));
  const sims: Record<string, SimCluster> = {};
  for (const c of b.clusters) sims[c.context!] = newSim(c.cluster!.snapshot(), { ...o.sim, faults: o.faults?.[c.name] });
  const opened: string[] = [];
  const drivers: SimDriver[] = [];
  const openDriver: DriverFactory = async (flags) => {
    opened.push(flags.context ?? '?');
    if (!flags.context || o.missing?.includes(flags.context) || !sims[flags.context])
      throw new ClusterApiError(`context "${flags.context}" is not in the kubeconfig`, 'kubectl config get-contexts');
    const driver = sims[flags.context].driver(`${flags.context}-${drivers.length}`);
    drivers.push(driver);
    return { driver, holder: 'fleet@test', records: driver.records };
  };
  const fleet: SimFleet = { dir, planFile, sims, opened, openDriver, drivers, options: {} };
  // The fleet's openDriver at the time of the run: a test may wrap it after setup.
  fleet.options = { cwd: dir, openDriver: (flags, io) => fleet.openDriver(flags, io), now: () => Date.parse('2026-09-14T08:00:00Z') };
  return fleet;
}
