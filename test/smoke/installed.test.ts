/**
 * The smoke suite (docs/development.md "The smoke suite"): the package as users get it. Run by
 * scripts/check-package.sh (`npm run test:smoke`), which packs the tarball, installs it into a
 * temporary prefix with its production dependencies only and points BOOTCPLAN_SMOKE_PREFIX there.
 * Every command of the installed `bootcplan` and `kubectl-bootcplan` (as their --help lists them)
 * runs with every -o format it lists, on the packaged examples copied into a git working tree as a
 * user would: each exits as expected and no output says "internal error" or shows a stack trace.
 * A command or format the table below does not cover fails the suite.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { skipLocally } from '../support/skips.ts';

const PREFIX = process.env.BOOTCPLAN_SMOKE_PREFIX;
if (!PREFIX)
  throw new Error(
    'BOOTCPLAN_SMOKE_PREFIX is not set: run `npm run test:smoke` (scripts/check-package.sh packs and installs the package, then runs this suite)',
  );
const PKG = join(PREFIX, 'lib/node_modules/bootcplan');
const BINS = ['bootcplan', 'kubectl-bootcplan'] as const;

// The packaged examples in a git working tree (fleet render needs one; plans record its commit).
const WORK = mkdtempSync(join(tmpdir(), 'bootcplan-smoke-'));
cpSync(join(PKG, 'examples'), WORK, { recursive: true });
const GIT_ENV = { GIT_AUTHOR_NAME: 'smoke', GIT_AUTHOR_EMAIL: 'smoke@example.com', GIT_COMMITTER_NAME: 'smoke', GIT_COMMITTER_EMAIL: 'smoke@example.com' };
for (const args of [
  ['init', '-q'],
  ['add', '-A'],
  ['commit', '-q', '-m', 'examples'],
])
  execFileSync('git', args, { cwd: WORK, env: { ...process.env, ...GIT_ENV } });

// A kubeconfig whose API server refuses connections: the live commands load the Kubernetes
// client (a production dependency outside the bundle) and fail cleanly.
const port = await new Promise<number>((res) => {
  const srv = createServer().listen(0, '127.0.0.1', () => {
    const p = (srv.address() as { port: number }).port;
    srv.close(() => res(p));
  });
});
writeFileSync(
  join(WORK, 'dead.kubeconfig'),
  `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
);
const DEAD = ['--kubeconfig', 'dead.kubeconfig'];
const UNREACHABLE = /^error: cannot reach the Kubernetes API at https:\/\/127\.0\.0\.1:\d+/m;

interface Result {
  code: number | null;
  out: string;
  err: string;
}

/** The installed command `bin` run as a process in WORK (not the in-process cli() of test/support/cli.ts). */
function installed(bin: string, args: string[]): Result {
  const r = spawnSync(join(PREFIX!, 'bin', bin), args, {
    cwd: WORK,
    encoding: 'utf8',
    env: { ...process.env, ...GIT_ENV, NO_COLOR: '1', KUBECONFIG: join(WORK, 'none') },
    timeout: 120_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** As installed(), without waiting: the table's runs go two at a time (start-up is most of each). */
function installedAsync(bin: string, args: string[]): Promise<Result> {
  return new Promise((res) => {
    const child = spawn(join(PREFIX!, 'bin', bin), args, {
      cwd: WORK,
      env: { ...process.env, ...GIT_ENV, NO_COLOR: '1', KUBECONFIG: join(WORK, 'none') },
      timeout: 120_000,
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => res({ code, out, err }));
  });
}

async function inPairs<T, R>(items: T[], f: (t: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await f(items[i]);
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

/** What every run must not show, whatever its exit code. */
function clean(r: Result, what: string): void {
  for (const [stream, text] of [
    ['stdout', r.out],
    ['stderr', r.err],
  ] as const) {
    assert.not.match(text, /^error: internal error|^internal error/im, `${what}: ${stream} says internal error:\n${text}`);
    assert.not.match(text, /^\s+at .+:\d+:\d+\)?$/m, `${what}: ${stream} shows a stack trace:\n${text}`);
  }
}

/** The output of a successful run in format `fmt` is that format. */
function wellFormed(fmt: string, out: string, what: string): void {
  if (fmt === 'json') {
    for (const line of out.trim().startsWith('{') && out.includes('\n{') ? out.trim().split('\n') : [out]) JSON.parse(line);
  } else if (fmt === 'yaml') assert.type(parseYaml(out), 'object', `${what}: YAML`);
  else if (fmt === 'html') assert.match(out, /^<!doctype html>/i, `${what}: HTML`);
  else assert.ok(out.trim().length > 0, `${what}: prints something`);
}

interface Case {
  args: (fmt: string) => string[];
  code: number;
  stderr?: RegExp;
}
/** Per command (as --help names it): how to run it on the examples, and how it must end. */
const TABLE: Record<string, Case[]> = {
  validate: [
    { args: () => ['validate', '-f', 'rollout.yaml'], code: 0 },
    { args: () => ['validate', '-f', 'rollout.yaml', '--cluster', 'cluster.yaml'], code: 0 },
  ],
  plan: [
    { args: (o) => ['plan', '-f', 'rollout.yaml', '--cluster', 'cluster.yaml', '-o', o], code: 0 },
    { args: (o) => ['plan', '-f', 'rollout.yaml', '--cluster', 'cluster.yaml', '--detailed-exitcode', '-o', o], code: 2 },
  ],
  show: [
    { args: (o) => ['show', 'plans/smoke.json', '-o', o], code: 0 },
    { args: (o) => ['show', 'plans/smoke.json', '--full', '-o', o], code: 0 },
  ],
  snapshot: [{ args: (o) => ['snapshot', ...DEAD, '-o', o], code: 1, stderr: UNREACHABLE }],
  apply: [{ args: (o) => ['apply', 'plans/smoke.json', ...DEAD, '--auto-approve', '-o', o], code: 1, stderr: UNREACHABLE }],
  rehearse: [
    { args: (o) => ['rehearse', 'plans/smoke.json', '-o', o], code: 0 },
    { args: (o) => ['rehearse', '-f', 'rollout.yaml', '--cluster', 'cluster.yaml', '-o', o], code: 0 },
  ],
  status: [{ args: (o) => ['status', ...DEAD, '-o', o], code: 1, stderr: UNREACHABLE }],
  unlock: [{ args: () => ['unlock', 'smoke-lock-id', ...DEAD], code: 1, stderr: UNREACHABLE }],
  version: [{ args: (o) => ['version', '-o', o], code: 0 }],
  completion: ['bash', 'zsh', 'fish'].map((sh) => ({ args: () => ['completion', sh], code: 0 })),
  'fleet plan': [{ args: (o) => ['fleet', 'plan', '-f', 'fleet/fleet.yaml', '-o', o], code: 0 }],
  'fleet show': [
    { args: (o) => ['fleet', 'show', 'plans/smoke-fleet.json', '-o', o], code: 0 },
    { args: (o) => ['fleet', 'show', 'plans/smoke-fleet.json', '--cluster', 'store-nyc', '-o', o], code: 0 },
  ],
  'fleet validate': [{ args: () => ['fleet', 'validate', '-f', 'fleet/fleet.yaml'], code: 0 }],
  // The example Fleet names snapshot files: apply refuses it before reaching any cluster.
  'fleet apply': [
    {
      args: (o) => ['fleet', 'apply', 'plans/smoke-fleet.json', '--auto-approve', '-o', o],
      code: 1,
      stderr: /^error: fleet apply reaches clusters through their kubeconfig contexts/m,
    },
  ],
  'fleet rehearse': [{ args: (o) => ['fleet', 'rehearse', 'plans/smoke-fleet.json', '-o', o], code: 0 }],
  'fleet render argocd': [
    {
      args: () => [
        'fleet',
        'render',
        'argocd',
        'plans/smoke-fleet.json',
        '--out-dir',
        'rendered',
        '--repo-url',
        'https://git.example.com/config.git',
        '--image',
        'quay.io/example/bootcplan:0.1.0',
      ],
      code: 0,
    },
  ],
};

/** The commands a --help lists (a group's subcommands in its own --help), as `fleet plan`. */
function commands(bin: string, path: string[] = []): string[] {
  const help = installed(bin, [...path, '--help']);
  assert.is(help.code, 0, help.err);
  const section = help.out.split(/^Commands:\n/m)[1] ?? '';
  const names = [...section.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]).filter((n) => n !== 'help');
  return names.flatMap((n) => {
    const sub = installed(bin, [...path, n, '--help']);
    return /^Commands:/m.test(sub.out) ? commands(bin, [...path, n]) : [[...path, n].join(' ')];
  });
}

/** The -o formats a command's --help lists: commander's choices, or "output format: a, b". */
function formats(bin: string, command: string): string[] {
  const help = installed(bin, [...command.split(' '), '--help']).out;
  const entry = help
    .split(/^ {2}(?=-)/m)
    .find((e) => e.startsWith('-o, --output <format>'))
    ?.replace(/\s+/g, ' ');
  if (!entry) return [];
  const choices = /\(choices: ([^)]*?)(?:, default: [^)]*)?\)/.exec(entry)?.[1];
  if (choices) return [...choices.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  return /output format: ([a-z]+(?:, [a-z]+)*)/.exec(entry)?.[1].split(', ') ?? [];
}

const s = suite('smoke: the installed package');

s('the plan and fleet plan the other commands read are saved', () => {
  for (const args of [
    ['plan', '-f', 'rollout.yaml', '--cluster', 'cluster.yaml', '--out', 'plans/smoke.json'],
    ['fleet', 'plan', '-f', 'fleet/fleet.yaml', '--out', 'plans/smoke-fleet.json'],
  ]) {
    const r = installed('bootcplan', args);
    clean(r, args.join(' '));
    assert.is(r.code, 0, r.err);
  }
});

for (const bin of BINS) {
  s(`${bin}: every command with every -o format it lists ends as expected, without an internal error`, async () => {
    const listed = commands(bin);
    assert.equal([...listed].sort(), Object.keys(TABLE).sort(), 'the commands --help lists are the commands this table covers');
    const runs: { args: string[]; fmt: string; c: Case }[] = [];
    for (const command of listed) {
      const fmts = formats(bin, command);
      for (const c of TABLE[command]) {
        for (const fmt of fmts.length ? fmts : ['text']) {
          const args = c.args(fmt);
          if (!fmts.length) assert.not.ok(args.includes('-o'), `${command} lists no -o formats`);
          runs.push({ args, fmt, c });
        }
      }
      runs.push({ args: [...command.split(' '), '--help'], fmt: 'text', c: { args: () => [], code: 0 } });
    }
    const results = await inPairs(runs, (r) => installedAsync(bin, r.args));
    for (const [i, { args, fmt, c }] of runs.entries()) {
      const r = results[i];
      const what = `${bin} ${args.join(' ')}`;
      clean(r, what);
      assert.is(r.code, c.code, `${what}: exit ${r.code}, expected ${c.code}\n${r.err}`);
      if (c.stderr) assert.match(r.err, c.stderr, `${what}: stderr`);
      if (c.code === 0 || c.code === 2) wellFormed(fmt, r.out, what);
      if (args.at(-1) === '--help')
        assert.match(r.out, new RegExp(`^Usage: ${bin === 'bootcplan' ? 'bootcplan' : 'kubectl bootcplan'} ${args.slice(0, -1).join(' ')} `, 'm'), what);
    }
    assert.ok(runs.length >= 60, `${runs.length} runs`);
    console.log(`  ${bin}: ${runs.length} runs, ${listed.length} commands`);
  });
}

s("kubectl_complete-bootcplan (kubectl's plugin completion) completes commands and -o formats from the installed package", () => {
  const cmd = installed('kubectl_complete-bootcplan', ['pla']);
  clean(cmd, 'kubectl_complete-bootcplan pla');
  assert.is(cmd.code, 0, cmd.err);
  assert.match(cmd.out, /^plan\t/m);
  const fmt = installed('kubectl_complete-bootcplan', ['plan', '-o', '']);
  assert.is(fmt.code, 0, fmt.err);
  assert.equal(
    fmt.out
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith(':')),
    formats('bootcplan', 'plan'),
  );
});

s('version: the build record of the package (no git checkout), the Node.js runtime', () => {
  const j = JSON.parse(installed('bootcplan', ['version', '-o', 'json']).out);
  const pkg = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'));
  assert.equal({ version: j.version, from: j.from, node: j.node }, { version: pkg.version, from: 'build', node: process.version });
  assert.is(installed('bootcplan', ['--version']).out, `${pkg.version}\n`);
});

/** Every path a packaged kustomization names resolves inside the package. */
function kustomizations(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? kustomizations(p) : e === 'kustomization.yaml' ? [p] : [];
  });
}

s('the packaged kustomizations name only files the package holds, and kustomize builds them', () => {
  const found = kustomizations(join(PKG, 'examples'));
  assert.ok(found.length >= 3, `${found.length} kustomizations`);
  for (const k of found) {
    const doc = parseYaml(readFileSync(k, 'utf8'));
    const refs = [
      ...(doc.resources ?? []),
      ...(doc.configMapGenerator ?? []).flatMap((g: { files?: string[] }) => (g.files ?? []).map((f) => f.split('=').pop()!)),
    ];
    for (const ref of refs) {
      const target = join(dirname(k), ref);
      assert.ok(existsSync(target), `${relative(PKG, k)} names ${ref}: ${relative(PKG, target)} is not in the package`);
      assert.ok(!relative(PKG, target).startsWith('..'), `${relative(PKG, k)} names ${ref}, outside the package`);
    }
  }
  const kustomize = join(process.env.BOOTCPLAN_TOOLS ?? join(process.env.HOME ?? '', '.cache/bootcplan-tools/bin'), 'kustomize');
  if (!existsSync(kustomize)) {
    skipLocally(`kustomize (${kustomize})`, '.ci/run builds it');
    return;
  }
  for (const k of found) {
    const r = spawnSync(kustomize, ['build', dirname(k)], { encoding: 'utf8' });
    assert.is(r.status, 0, `kustomize build ${relative(PKG, dirname(k))}: ${r.stderr}`);
  }
  assert.match(
    execFileSync(kustomize, ['build', join(PKG, 'examples')], { encoding: 'utf8' }),
    /kind: CustomResourceDefinition\n/,
    'the setup kustomization carries the Rollout CRD',
  );
});

s('the package holds no source maps, TypeScript sources or tests', () => {
  const all: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      if (e === 'node_modules') continue;
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else all.push(relative(PKG, p));
    }
  };
  walk(PKG);
  assert.equal(
    all.filter((f) => /\.map$|\.ts$|\.test\.|^(src|test|bench|scripts)\//.test(f)),
    [],
  );
  assert.ok(all.includes('dist/bundle/main.js') && all.includes('dist/build-info.json'), 'the bundle and its build record');
  assert.equal(
    all.filter((f) => f.startsWith('dist/') && !/^dist\/(bundle\/[^/]+\.js|build-info\.json)$/.test(f)),
    [],
    'one build: dist/bundle/ only',
  );
});

s.run();
