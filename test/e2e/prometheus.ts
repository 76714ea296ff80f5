/**
 * A real Prometheus for the health-gate e2e suites (scripts/testenv/README.md "Prometheus"):
 * the binary of scripts/testenv/build-prometheus.sh (BOOTCPLAN_PROMETHEUS honoured), a
 * 1-second scrape and evaluation interval, and an exporter in the test process whose gauges the
 * test sets (or computes at scrape time from the cluster). Two alerting rules:
 *   E2EWorkloadBroken  e2e_workload_broken > 0   severity=critical (fires on demand)
 *   Watchdog           vector(1)                  severity=none     (always firing: the heartbeat)
 * Alerting rules without `for` fire at their first evaluation (Prometheus
 * docs/configuration/alerting_rules.md), so a gauge set to 1 shows as a firing alert within a
 * scrape plus an evaluation: about 2 s.
 *
 * Also a TLS + bearer-token front (a node:https server with its own self-signed CA) that forwards
 * to Prometheus only requests carrying the expected token, to prove that a Secret's token is sent
 * and the CA verified.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { writeFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from './env.ts';

const ROOT = resolve(import.meta.dirname, '../..');

export const BROKEN_ALERT = 'E2EWorkloadBroken';

/**
 * The binary a testenv build script prints as its last line (it builds on a cold machine, or
 * waits for the build in progress); its stderr's last lines when it fails.
 */
export function testenvBinary(script: string): string {
  try {
    const out = execFileSync(join(ROOT, 'scripts/testenv', script), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 16 << 20 });
    return out.trim().split('\n').pop()!;
  } catch (err) {
    const e = err as { stderr?: string };
    throw new Error(`scripts/testenv/${script} failed:\n${(e.stderr ?? '').split('\n').slice(-30).join('\n')}`, { cause: err });
  }
}

/** The path of the prometheus binary (builds it on a cold machine: 8 to 32 minutes). */
export function prometheusBinary(): string {
  return testenvBinary('build-prometheus.sh');
}

/** A port free on 127.0.0.1 now (the OS's choice). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Gauges served at /metrics: a fixed value, or one computed at each scrape. */
export type Gauges = Record<string, number | (() => number | Promise<number>)>;

export interface Exporter {
  port: number;
  gauges: Gauges;
  /** How many series of the gauge e2e_series{i="0"...} to serve (0: none). */
  series: number;
  /** More sample lines, computed per scrape. */
  extra?: () => string[];
  scrapes: number;
  close(): Promise<void>;
}

/** A /metrics endpoint in Prometheus' text format 0.0.4 on 127.0.0.1. */
export async function startExporter(gauges: Gauges): Promise<Exporter> {
  const ex = { gauges, scrapes: 0, series: 0 } as Exporter;
  const server = http.createServer((req, res) => void serveMetrics(req, res).catch((err: Error) => res.destroy(err)));
  async function serveMetrics(req: http.IncomingMessage, res: http.ServerResponse) {
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    ex.scrapes++;
    const lines: string[] = [];
    for (const [name, g] of Object.entries(ex.gauges)) {
      const v = typeof g === 'function' ? await g() : g;
      lines.push(`# TYPE ${name} gauge`, `${name} ${v}`);
    }
    if (ex.extra) lines.push(...ex.extra());
    if (ex.series > 0) lines.push('# TYPE e2e_series gauge', ...Array.from({ length: ex.series }, (_, i) => `e2e_series{i="${i}"} 0`));
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
    res.end(`${lines.join('\n')}\n`);
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  ex.port = (server.address() as net.AddressInfo).port;
  ex.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return ex;
}

export interface PrometheusHandle {
  /** http://127.0.0.1:<port> */
  url: string;
  exporter: Exporter;
  /** Seconds from spawn to ready (/-/ready, the first scrape, the heartbeat firing). */
  startSeconds: number;
  /** SIGKILL, resolved once the process is gone: the next request fails at once (ECONNREFUSED). */
  kill(): Promise<void>;
  /** SIGTERM, SIGKILL after 5 s; removes its data. */
  stop(): Promise<void>;
  /** Waits until `alertname` is (or is not) firing in /api/v1/alerts; returns the seconds it took. */
  waitForAlert(alertname: string, firing: boolean, timeoutMs?: number): Promise<number>;
  /** Waits until the instant query `expr` has a result (a scrape carried what the test set). */
  waitForQuery(expr: string, timeoutMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of running) p.kill('SIGKILL');
});

async function getJson(url: string): Promise<any> {
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

async function until(what: string, timeoutMs: number, probe: () => Promise<boolean>, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await probe()) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`prometheus: ${what} not within ${timeoutMs / 1000} s; log:\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const RULES = `groups:
  - name: e2e
    rules:
      - alert: ${BROKEN_ALERT}
        expr: e2e_workload_broken > 0
        labels: {severity: critical}
        annotations: {summary: the e2e workload is broken}
      - alert: Watchdog
        expr: vector(1)
        labels: {severity: none}
`;

export interface PrometheusOptions {
  /** Alertmanagers (host:port) the alerts are sent to (alerting.alertmanagers, a static config). */
  alertmanagers?: string[];
  /** More alerting rules, as YAML list items of the e2e group (indented 6 spaces). */
  rules?: string;
  /** Gauges with labels served from a function: `name{labels}` -> value, computed per scrape. */
  samples?: () => Record<string, number>;
}

/** Starts Prometheus scraping a new exporter of `gauges`; ready when the heartbeat fires. */
export async function startPrometheus(gauges: Gauges = {}, o: PrometheusOptions = {}): Promise<PrometheusHandle> {
  const bin = prometheusBinary();
  const exporter = await startExporter({ e2e_workload_broken: 0, ...gauges });
  const dir = tempDir('bootcplan-prometheus-');
  mkdirSync(join(dir, 'data'));
  writeFileSync(join(dir, 'rules.yml'), RULES + (o.rules ?? ''));
  if (o.samples) {
    const samples = o.samples;
    exporter.extra = () => Object.entries(samples()).map(([k, v]) => `${k} ${v}`);
  }
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'rule_files: [rules.yml]',
      ...(o.alertmanagers?.length
        ? ['alerting:', '  alertmanagers:', `    - static_configs: [{targets: [${o.alertmanagers.map((a) => `'${a}'`).join(', ')}]}]`]
        : []),
      'scrape_configs:',
      '  - job_name: e2e',
      `    static_configs: [{targets: ['127.0.0.1:${exporter.port}']}]`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const t0 = Date.now();
  const logPath = join(dir, 'prometheus.log');
  const child = spawn(
    bin,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
      // A hidden flag (cmd/prometheus/main.go, default 5s): the scrape manager applies new targets
      // after this throttle; 1s brings the first scrape from ~6.4 s to ~2 s after the start.
      '--scrape.discovery-reload-interval=1s',
    ],
    {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  running.add(child);
  let log = '';
  child.stderr!.on('data', (d) => {
    log = (log + d).slice(-20_000);
    writeFileSync(logPath, log);
  });
  const exited = new Promise<void>((r) =>
    child.on('exit', () => {
      running.delete(child);
      r();
    }),
  );
  const alertFiring = async (name: string) =>
    ((await getJson(`${url}/api/v1/alerts`)).data.alerts as any[]).some((a) => a.labels.alertname === name && a.state === 'firing');
  await until(
    'ready',
    30_000,
    async () => (await getJson(`${url}/api/v1/query?query=${encodeURIComponent('up{job="e2e"} == 1')}`)).data.result.length === 1 && alertFiring('Watchdog'),
    () => log,
  );
  const handle: PrometheusHandle = {
    url,
    exporter,
    startSeconds: (Date.now() - t0) / 1000,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      await exporter.close();
      rmSync(join(dir, 'data'), { recursive: true, force: true });
    },
    waitForQuery: (expr, timeoutMs = 15_000) =>
      until(
        `a result for ${expr}`,
        timeoutMs,
        async () => (await getJson(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`)).data.result.length > 0,
        () => log,
      ),
    waitForAlert: async (name, firing, timeoutMs = 15_000) => {
      const t1 = Date.now();
      await until(
        `${name} ${firing ? 'firing' : 'resolved'}`,
        timeoutMs,
        async () => (await alertFiring(name)) === firing,
        () => log,
      );
      return (Date.now() - t1) / 1000;
    },
  };
  return handle;
}

export interface TlsFront {
  /** https://127.0.0.1:<port> */
  url: string;
  /** The PEM of the CA that signed the front's certificate. */
  caPem: string;
  /** The Authorization header of every request, in order ("" when none). */
  authorizations: string[];
  close(): Promise<void>;
}

/** A CA and a serving certificate for 127.0.0.1 signed by it (openssl, as scripts/testenv/start.sh). */
export function tlsMaterial(): { caPem: string; cert: string; key: string } {
  const dir = tempDir('bootcplan-front-tls-');
  const o = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  o(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=bootcplan-e2e-ca',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  o('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'tls.key', '-out', 'tls.csr');
  writeFileSync(join(dir, 'ext'), 'subjectAltName=IP:127.0.0.1\n');
  o('x509', '-req', '-in', 'tls.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-extfile', 'ext', '-out', 'tls.crt');
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { caPem: read('ca.crt'), cert: read('tls.crt'), key: read('tls.key') };
}

/**
 * An https front of `target` that forwards only requests with `Authorization: Bearer <token>`
 * (401 otherwise). With `echo`, it plays a debugging proxy: every alert of an `/api/v1/alerts`
 * answer gets the request's Authorization as a label (docs/safety.md "Credentials in answers").
 */
export async function startTlsFront(target: string, token: string, o: { echo?: boolean } = {}): Promise<TlsFront> {
  const tls = tlsMaterial();
  const authorizations: string[] = [];
  const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const auth = req.headers.authorization ?? '';
    authorizations.push(auth);
    if (auth !== `Bearer ${token}`) return void res.writeHead(401, { 'Content-Type': 'text/plain' }).end('Unauthorized\n');
    const up = http.request(`${target}${req.url}`, { method: req.method, headers: { accept: req.headers.accept ?? '*/*' } }, (r) => {
      if (!o.echo || !req.url!.startsWith('/api/v1/alerts') || r.statusCode !== 200) {
        res.writeHead(r.statusCode!, r.headers);
        return void r.pipe(res);
      }
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const a of body.data?.alerts ?? []) a.labels.authorization = auth;
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    up.on('error', () => res.writeHead(502, { 'Content-Type': 'text/html' }).end('<html><body>502 Bad Gateway</body></html>'));
    up.end();
  });
  server.on('tlsClientError', () => {
    /* a client that refused the certificate: what the wrong-CA test expects */
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    caPem: tls.caPem,
    authorizations,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
