/**
 * Docs that execute (docs/development.md): every command of README.md and docs/*.md runs, as a
 * reader would type it, and exits with the code the docs say (0 unless its comment ends with
 * `exit N`). The rules and tables are test/support/doc-commands.ts; this suite runs them:
 *
 * - each code block is one uvu test, its commands in order in one fresh working directory
 *   (prepared below), by the shell the block names, with the built CLI as `bootcplan` on PATH;
 * - before each block the test kube-apiserver is reset and loaded with examples/cluster.yaml,
 *   a node agent plays the operators (test/e2e/agent.ts), and ~/.kube/config (a temporary HOME)
 *   has the context `prod-east` (the current one) as bootcplan's ServiceAccount of
 *   examples/rbac.yaml: the names the docs use;
 * - a command listed in NOT_RUNNABLE is reported with its reason and not run; a command that
 *   is neither run nor listed fails its block.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { parse, parseDocument, stringify } from 'yaml';
import { setupEnv, resetCluster, loadObjects, tempDir, driverFor, type TestEnv } from './env.ts';
import { NodeAgent } from './agent.ts';
import { ensureBuilt } from '../support/built.ts';
import { docFiles, readDoc } from '../support/doc-files.ts';
import { classify, docBlocks, NOT_RUNNABLE, placeholderPattern, PLACEHOLDERS, type DocCommand, type Placeholder, type Shell } from '../support/doc-commands.ts';
import { NotFoundError } from '../../src/apply/ports/driver.ts';
import { objectPath, RESOURCES } from '../../src/kube/resources.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const t = suite('e2e: docs that execute');

/** The context name the docs use for the reader's cluster. */
const CONTEXT = 'prod-east';
const COMMAND_TIMEOUT_MS = 180_000;

let env: TestEnv;
let bin: string;
let home: string;
let pathDirs: string;

/** Files every block's working directory starts with, and what each is. */
const PREPARED: Record<string, string> = {
  'bootcplan.yaml':
    'examples/rollout.yaml with every soakSeconds 0 (its 2- and 5-minute soaks are real time for apply; soaks are tested in test/e2e/05-apply and the unit suites)',
  'cluster.yaml': "`bootcplan snapshot --out cluster.yaml` of the test cluster (the README's step 2)",
  'plans/prod-east.json': "`bootcplan plan --cluster cluster.yaml --out plans/prod-east.json` (the README's step 4)",
  'fleet.yaml': "a Fleet `prod` of one cluster, the test cluster by its context prod-east, whose rollout is bootcplan.yaml's spec (fleet apply needs contexts)",
  'plans/stores.json': "`bootcplan fleet plan -f examples/fleet/fleet.yaml --out plans/stores.json`: the examples' three stores, from their snapshot files",
  'examples/': "a copy of the repository's examples/",
  'node_modules/.bin/': 'links to the built bin/*.mjs, as in a checkout after npm install (so `npx bootcplan` resolves here)',
};

/** The environment of every documented command: no variable of the test process leaks in. */
function commandEnv(): Record<string, string> {
  return {
    PATH: pathDirs,
    HOME: home,
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    // npm would ask the registry whether it is the newest npm.
    NPM_CONFIG_UPDATE_NOTIFIER: 'false',
  };
}

const hasProgram = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`], { env: commandEnv() }).status === 0;

/** Commands not run here: NOT_RUNNABLE, and kubectl on a machine without it (never in CI: .ci/run installs it). */
let notRunnable: Record<string, string> = NOT_RUNNABLE;

/** What the run did, reported by the last test. */
const tally = { run: 0, blocks: 0, notRun: 0, unreached: 0, seconds: 0, listed: new Map<string, string[]>() };

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs one command by its shell; with `answer`, in a pseudo-terminal (script(1)) that types it. */
function runCommand(shell: Shell, text: string, cwd: string, scriptDir: string, answer: string | null): Promise<RunResult> {
  const file = join(scriptDir, `command-${Date.now()}-${Math.random().toString(36).slice(2)}.${shell}`);
  // Each shell fails a pipeline whose any part failed, as `set -o pipefail` does in bash.
  const body =
    shell === 'fish'
      ? `${text}\nfor s in $pipestatus; if test $s -ne 0; exit $s; end; end\n`
      : shell === 'zsh'
        ? // The docs' zsh line goes in ~/.zshrc "after compinit".
          `setopt pipefail\nautoload -Uz compinit && compinit -u\n${text}\n`
        : `set -o pipefail\n${text}\n`;
  writeFileSync(file, body);
  const argv = answer === null ? [shell, file] : ['script', '-qec', `${shell} ${file}`, '/dev/null'];
  return new Promise((done) => {
    const child = spawn(argv[0], argv.slice(1), { cwd, env: commandEnv(), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d) => {
      stdout = (stdout + d).slice(-20_000);
    });
    child.stderr.on('data', (d) => {
      stderr = (stderr + d).slice(-20_000);
    });
    child.stdin.end(answer === null ? '' : `${answer}\n`);
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, COMMAND_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, timedOut });
    });
  });
}

async function mustRun(text: string, cwd: string): Promise<void> {
  const r = await runCommand('bash', text, cwd, cwd, null);
  assert.is(r.code, 0, `preparing ${cwd}: ${text}\n${r.stderr}`);
}

/** The test cluster as examples/cluster.yaml describes it, with a node agent playing the operators. */
async function freshCluster(): Promise<NodeAgent> {
  await resetCluster(env.admin);
  const cm = RESOURCES.find((x) => x.kind === 'ConfigMap')!;
  await env.admin.request('DELETE', objectPath(cm, 'bootcplan-fleet', 'openshift-bootcplan')).catch((e) => {
    if (!(e instanceof NotFoundError)) throw e;
  });
  await loadObjects(env.admin, parse(readFileSync(join(ROOT, 'examples/cluster.yaml'), 'utf8')).items);
  return new NodeAgent(env.admin, { scale: 1 }).start();
}

/** A working directory with the PREPARED files. */
async function preparedDirectory(): Promise<string> {
  const dir = tempDir('bootcplan-docs-');
  const spec = parseDocument(readFileSync(join(ROOT, 'examples/rollout.yaml'), 'utf8'));
  const pools = (spec.toJS().spec.pools as unknown[]).length;
  for (let i = 0; i < pools; i++) spec.setIn(['spec', 'pools', i, 'soakSeconds'], 0);
  writeFileSync(join(dir, 'bootcplan.yaml'), spec.toString());
  cpSync(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true });
  mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
  for (const b of ['bootcplan', 'kubectl-bootcplan', 'kubectl_complete-bootcplan']) symlinkSync(join(ROOT, `bin/${b}.mjs`), join(dir, 'node_modules/.bin', b));
  writeFileSync(
    join(dir, 'fleet.yaml'),
    stringify({
      apiVersion: 'bootcplan.dev/v1alpha1',
      kind: 'Fleet',
      metadata: { name: 'prod' },
      spec: { rollout: spec.toJS().spec, clusters: [{ name: CONTEXT, context: CONTEXT }] },
    }),
  );
  await mustRun('bootcplan snapshot --out cluster.yaml', dir);
  await mustRun('bootcplan plan --cluster cluster.yaml --out plans/prod-east.json', dir);
  await mustRun('bootcplan fleet plan -f examples/fleet/fleet.yaml --out plans/stores.json', dir);
  return dir;
}

/** The value of each placeholder in a prepared directory (computed when a command needs it). */
const VALUES: Record<Placeholder, () => Promise<string>> = {
  PLANFILE: async () => 'plans/prod-east.json',
  FLEETPLAN: async () => 'plans/stores.json',
  'plans/prod-east-2d06985bc357da4f.json': async () => 'plans/prod-east.json',
  LOCK_ID: async () => {
    // What a killed apply leaves: the lock taken as apply takes it, never renewed or released.
    const lock = await driverFor(env.saKubeconfig).acquireLock({ holder: 'ci-runner@build-7', planId: '0123456789abcdef', ttlSeconds: 300 });
    return lock.lockId;
  },
};

async function substituted(text: string, placeholders: Placeholder[]): Promise<string> {
  let out = text;
  for (const p of placeholders) {
    const value = await VALUES[p]();
    out = out.replace(placeholderPattern(p, 'g'), value);
  }
  return out;
}

/** The `README "Title"` / `docs/page.md "Title"` pointers in a command's output whose page has no such heading. */
function missingSections(output: string): string[] {
  const missing: string[] = [];
  for (const m of output.matchAll(/\b(README(?:\.md)?|docs\/[a-z-]+\.md) "([^"]+)"/g)) {
    const page = m[1].startsWith('README') ? 'README.md' : m[1];
    const headings = docFiles().includes(page) ? readDoc(page).headings : [];
    if (!headings.includes(m[2])) missing.push(`${m[0]}: ${page} has no heading "${m[2]}"`);
  }
  return missing;
}

const tail = (s: string, lines = 25) => s.trimEnd().split('\n').slice(-lines).join('\n');

function failure(c: DocCommand, ran: string, r: RunResult): string {
  const got = r.timedOut ? `no exit after ${COMMAND_TIMEOUT_MS / 1000}s` : `exit ${r.code}`;
  return [
    `${c.file}:${c.line}: ${got}, the docs say exit ${c.expectedExit}: ${ran}`,
    '  (fix the docs when they are wrong, the code when it is; a command that exits non-zero on purpose ends its comment with `exit N`)',
    `--- stderr (end):\n${tail(r.stderr)}`,
    `--- stdout (end):\n${tail(r.stdout, 10)}`,
  ].join('\n');
}

t.before(async () => {
  env = await setupEnv();
  bin = ensureBuilt();
  const links = tempDir('bootcplan-docs-bin-');
  for (const b of ['bootcplan', 'kubectl-bootcplan', 'kubectl_complete-bootcplan']) symlinkSync(join(dirname(bin), `${b}.mjs`), join(links, b));
  pathDirs = [links, process.env.PATH ?? '/usr/bin:/bin', dirname(process.execPath)].join(delimiter);
  home = tempDir('bootcplan-docs-home-');
  // ~/.kube/config: the ServiceAccount's credentials under the context name the docs use.
  const kc = parse(readFileSync(env.saKubeconfig, 'utf8'));
  kc.contexts[0].name = CONTEXT;
  kc['current-context'] = CONTEXT;
  mkdirSync(join(home, '.kube'), { recursive: true });
  writeFileSync(join(home, '.kube/config'), stringify(kc), { mode: 0o600 });
  if (!hasProgram('kubectl')) notRunnable = { ...NOT_RUNNABLE, kubectl: 'kubectl is not installed on this machine (.ci/run installs it, so CI runs these)' };
});

t("kubectl is there in CI: the docs' kubectl commands are listed as not runnable only on a machine without it", () => {
  if (process.env.CI) assert.ok(hasProgram('kubectl'), "CI runs the docs' kubectl commands: .ci/run installs kubectl");
  assert.ok(hasProgram('script'), 'script(1) (util-linux) answers the commands that ask a question');
});

/** The pages to run: all, or those named in BOOTCPLAN_DOCS (comma-separated, e.g. docs/apply.md) while working on them. */
const pages = () => docFiles().filter((f) => !process.env.BOOTCPLAN_DOCS || process.env.BOOTCPLAN_DOCS.split(',').includes(f));

for (const file of pages()) {
  for (const block of docBlocks(file, readDoc(file))) {
    t(`${file}:${block.line} (${block.commands.length} command${block.commands.length === 1 ? '' : 's'}, ${block.lang || 'no language'})`, async () => {
      const verdicts = block.commands.map((c) => ({ c, v: classify(c.text, notRunnable) }));
      for (const { c, v } of verdicts) {
        if (v.kind === 'unknown') assert.unreachable(`${c.file}:${c.line}: ${v.problems.join('; ')}`);
        if (v.kind !== 'listed') continue;
        tally.notRun++;
        for (const key of new Set(v.reasons.map((r) => r.key))) tally.listed.set(key, [...(tally.listed.get(key) ?? []), `${c.file}:${c.line}`]);
      }
      if (!verdicts.some(({ v }) => v.kind === 'run')) return;
      tally.blocks++;
      const agent = await freshCluster();
      const toRun = verdicts.filter(({ v }) => v.kind === 'run').length;
      let ran = 0;
      const seconds: string[] = [];
      const t0 = Date.now();
      try {
        const dir = await preparedDirectory();
        const scripts = tempDir('bootcplan-docs-scripts-');
        const t1 = Date.now();
        for (const { c, v } of verdicts) {
          if (v.kind !== 'run') continue;
          const text = await substituted(c.text, v.placeholders);
          const started = Date.now();
          const r = await runCommand(c.shell, text, v.where === 'checkout' ? ROOT : dir, scripts, v.answer?.answer ?? null);
          seconds.push(((Date.now() - started) / 1000).toFixed(1));
          ran++;
          if (process.env.BOOTCPLAN_DOCS_VERBOSE)
            console.log(`\n$ ${text}  (${c.file}:${c.line}: exit ${r.code})\n--- stdout:\n${tail(r.stdout, 8)}\n--- stderr:\n${tail(r.stderr, 8)}`);
          assert.ok(!r.timedOut && r.code === c.expectedExit, failure(c, text, r));
          assert.not.match(r.stderr, /internal error|\n\s+at .*\.m?js:\d+/, `${c.file}:${c.line}: no internal error or stack trace:\n${tail(r.stderr)}`);
          // The shell hides some exit codes (`source <(bootcplan completion bash)` is source's):
          // a command the docs expect to succeed prints no bootcplan error either.
          if (c.expectedExit === 0) assert.not.match(r.stderr, /^error: /m, `${c.file}:${c.line}: exit 0 but bootcplan printed an error:\n${tail(r.stderr)}`);
          assert.equal(missingSections(r.stdout + r.stderr), [], `${c.file}:${c.line}: the output points the reader to sections the docs do not have`);
        }
        assert.equal(agent.errors, [], 'the node agent played every step');
        console.log(
          `docs: ${block.file}:${block.line}: ${ran} run in ${((Date.now() - t1) / 1000).toFixed(1)}s (${seconds.join(' + ')}; cluster and directory prepared in ${((t1 - t0) / 1000).toFixed(1)}s)`,
        );
      } finally {
        agent.stop();
        tally.run += ran;
        tally.unreached += toRun - ran;
        tally.seconds += (Date.now() - t0) / 1000;
      }
    });
  }
}

t('every command was run or listed with its reason', () => {
  const all = pages()
    .flatMap((f) => docBlocks(f, readDoc(f)))
    .flatMap((b) => b.commands);
  const listed = tally.notRun;
  const unreached = tally.unreached ? `, ${tally.unreached} not reached after a failure above` : '';
  const lines = [
    `docs: ${all.length} commands in ${pages().length} pages: ${tally.run} run in ${tally.blocks} blocks (${tally.seconds.toFixed(0)}s)${unreached}, ${listed} not runnable:`,
  ];
  for (const [key, where] of tally.listed) lines.push(`  ${key} (${where.length}: ${where.join(', ')}): ${notRunnable[key]}`);
  lines.push(`  working directory: ${Object.keys(PREPARED).join(', ')}; placeholders: ${Object.keys(PLACEHOLDERS).join(', ')}`);
  console.log(lines.join('\n'));
  assert.is(tally.run + tally.unreached + listed, all.length, 'every command run or listed');
});

t.run();
