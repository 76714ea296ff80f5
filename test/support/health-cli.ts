/**
 * What the CLI suites of health gates share (test/cli/apply-health-cli.test.ts,
 * test/cli/apply-gates-trial-cli.test.ts): a simulated bootc pool of four staged nodes with a
 * Rollout of the given health checks, written to files `run()` reads, its gates failed as
 * `--fail-check` rules say; and a webhook receiver that keeps the notifications it is sent.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'yaml';
import { ClusterBuilder, specYaml, NEW, nodes } from './cluster.ts';
import { newSim } from './apply.ts';
import type { DriverFactory } from '../../src/app/ports.ts';
import { SimHealthSource, parseFailCheck, type FailCheckRule } from '../../src/sim/health.ts';

/** The phase durations of these suites (seconds). */
export const GATE_DURATIONS = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 };

/**
 * Pool `worker` (w-0..w-3, staged) rolling to NEW two at a time with a 30 s soak, the Rollout's
 * spec.healthChecks `healthChecks`; `fail.rules` (changeable between runs) fail its gates.
 */
export function gatedPool(dir: string, healthChecks: Record<string, unknown>[], failChecks: string[]) {
  const builder = new ClusterBuilder().bootcPool('worker', nodes('w', 4, undefined, { staged: true }));
  const snapFile = join(dir, `snap-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(snapFile, builder.yaml());
  const text = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 30 }], { healthChecks });
  const file = join(dir, `spec-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text);
  const sim = newSim(builder.snapshot(), { durations: GATE_DURATIONS });
  sim.rollouts.put('test', parse(text).spec);
  const fail = { rules: failChecks.map((t) => parseFailCheck(t) as FailCheckRule) };
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'job@test', health: () => new SimHealthSource({ failChecks: fail.rules }) });
  return { file, sim, openDriver, fail, snapFile };
}

/** An HTTP receiver on a free port of 127.0.0.1: every body posted to it, parsed as JSON, in `docs`. */
export async function webhookReceiver(): Promise<{ url: string; docs: any[]; close: () => Promise<void> }> {
  const docs: any[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      docs.push(JSON.parse(body));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    docs,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
