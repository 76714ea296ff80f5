/**
 * A real Alertmanager for the silence e2e suite (scripts/testenv/README.md "Alertmanager"): the
 * binary of scripts/testenv/build-alertmanager.sh (BOOTCPLAN_ALERTMANAGER honoured) on
 * 127.0.0.1 with a random port, clustering off (`--cluster.listen-address=` empty: a single
 * instance gossips with nobody), a temporary storage path, and one receiver that sends nowhere.
 * The test Prometheus sends its alerts to it (test/e2e/prometheus.ts `alertmanagers`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './env.ts';
import { testenvBinary, freePort } from './prometheus.ts';

/** The path of the alertmanager binary (builds it on a cold machine: a few minutes). */
export function alertmanagerBinary(): string {
  return testenvBinary('build-alertmanager.sh');
}

/** A silence as GET /api/v2/silences gives it (api/v2/openapi.yaml gettableSilence). */
export interface GettableSilence {
  id: string;
  status: { state: 'active' | 'pending' | 'expired' };
  matchers: { name: string; value: string; isRegex: boolean; isEqual?: boolean }[];
  startsAt: string;
  endsAt: string;
  updatedAt: string;
  createdBy: string;
  comment: string;
}

export interface AlertmanagerHandle {
  /** http://127.0.0.1:<port> */
  url: string;
  /** 127.0.0.1:<port>, for Prometheus' alerting config. */
  hostPort: string;
  silences(): Promise<GettableSilence[]>;
  /** The alerts Alertmanager has (active, silenced or not), with their labels and status. */
  alerts(): Promise<{ labels: Record<string, string>; status: { state: string; silencedBy: string[] } }[]>;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of running) p.kill('SIGKILL');
});

function getJson(url: string): Promise<any> {
  return new Promise((resolveJson, reject) => {
    const req = http.get(url, { timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${url}: ${res.statusCode} ${body.slice(0, 200)}`));
        try {
          resolveJson(JSON.parse(body));
        } catch (e) {
          reject(e instanceof Error ? e : new Error(String(e)));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

const CONFIG = `route:
  receiver: nowhere
  group_wait: 0s
  group_interval: 1s
receivers:
  - name: nowhere
`;

export async function startAlertmanager(): Promise<AlertmanagerHandle> {
  const bin = alertmanagerBinary();
  const dir = tempDir('bootcplan-alertmanager-');
  mkdirSync(join(dir, 'data'));
  writeFileSync(join(dir, 'alertmanager.yml'), CONFIG);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    bin,
    [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  running.add(child);
  let log = '';
  child.stderr!.on('data', (d) => (log = (log + d).slice(-20_000)));
  const exited = new Promise<void>((r) =>
    child.on('exit', () => {
      running.delete(child);
      r();
    }),
  );
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const st = await getJson(`${url}/api/v2/status`);
      if (st.versionInfo) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`alertmanager: not ready within 30 s; log:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    hostPort: `127.0.0.1:${port}`,
    silences: () => getJson(`${url}/api/v2/silences`),
    alerts: () => getJson(`${url}/api/v2/alerts`),
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
