/**
 * The test runner (docs/development.md "How the runner counts"): runs every uvu suite
 * (test/**\/*.test.ts, or the files and folders given), in worker processes (one per core) or in
 * this process (`--jobs 1`), lists every failure again after the run, and ends with the line
 * `N passed, N failed` (`, N skipped` when some were).
 *
 *   tsx test/run.ts [--allow-skips] [--jobs N] [--for src/FILE.ts ...] [file-or-folder ...]
 *
 * `--for src/FILE.ts` runs the suites that test that module: those importing it, or for a
 * module tested through its callers those of the nearest modules importing it
 * (test/support/test-index.ts; docs/development.md "Test layout").
 * `--jobs N` (or TEST_JOBS=N) sets the worker processes, default os.availableParallelism();
 * 1 runs every suite in this process, one after another. The end-to-end suites (test/e2e/) run
 * after the others, each in a worker process of its own (what one leaves in its process, its
 * kube-apiserver's objects above all, no other sees), TEST_E2E_JOBS at a time (default 1: each
 * worker starts its own kube-apiserver and etcd; docs/development.md "Tests in parallel").
 * TEST_PROFILE=FILE writes where the time went (each file's wall and CPU time, each worker's
 * start) to FILE as JSON after the run.
 *
 * Exits 1 when a test failed, a suite file threw while loading, a suite file ran no test, an
 * error escaped a test, the process ended before the run did (a worker process too, killed or
 * crashed), no test ran at all, or a test was skipped (a skipped test checks nothing;
 * `--allow-skips` accepts skips on a machine that lacks what they need, never in CI). After each
 * suite the event loop turns once, so an error its tests left behind is booked against it; one
 * that escapes after the summary (a timer firing late) is printed then, fails the run, and the
 * counts line is printed again as the last line.
 *
 * The counts come from uvu itself, never from its printed totals: the files are loaded as uvu's
 * own CLI loads them (uvu/run: UVU_DEFER, one UVU_QUEUE group per file), and this loop calls each
 * queued suite runner itself (as uvu's exec does) to read what the runner returns:
 * [failure reports, passed, skipped, tests run]. uvu's public API (run(), exec()) prints its totals
 * only as text and calls a suite whose before hook threw a pass, so these internals are read
 * instead; package.json pins uvu and the self-test checks the protocol. A failed test is one for which uvu's reporter
 * wrote its failure mark. uvu returns from a `finally` block, so an error thrown by a suite's
 * before hook (or a non-Error thrown by a test) vanishes without a failure mark; the books check
 * (passed + marked failures = tests run) counts every test unaccounted for as failed instead.
 *
 * A worker (this file, started by the parent with BOOTCPLAN_TEST_WORKER set to its records file)
 * counts exactly as the single process does, one file at a time as the parent hands them out
 * over IPC, longest first. What it counted for a file is appended to the records file
 * synchronously (so a test calling process.exit cannot lose it); its stdout and stderr go to a
 * file the parent prints from, one suite file's block at a time. A worker that ends without a
 * record for the file it was running (killed, crashed) fails that file, with its output.
 */
import {
  appendFileSync,
  closeSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { spawn, type ChildProcess } from 'node:child_process';

/** What uvu's runner (the function test.run() queues) resolves to. */
type SuiteOutcome = [reports: string | true, passed: number, skipped: number, ran: number];
type QueuedSuite = () => Promise<SuiteOutcome>;

/** One failure as listed after the run: where, and uvu's report of it (name, message, stack). */
interface Failure {
  file: string;
  report: string;
}

/**
 * What a worker counted, appended to its records file as one JSON line: for a suite file
 * (`file`, with its duration and where its output ends in the worker's output file), once the
 * worker has run out of files (`idle`, with the timers its tests left running), or for an error
 * that escaped after that (`late`).
 */
interface WorkerRecord {
  kind: 'file' | 'idle' | 'late';
  file?: string;
  ms?: number;
  /** For a file: when it started (ms since the epoch) and the CPU it took (TEST_PROFILE). */
  startedAt?: number;
  cpu?: FileCpu;
  outEnd?: number;
  timers?: number;
  passed: number;
  failed: number;
  skipped: number;
  failures: Failure[];
  skips: string[];
}

type ToWorker = { type: 'run'; file: string } | { type: 'end' };
type FromWorker = { type: 'ready' } | { type: 'record' };

const RUNNER = fileURLToPath(import.meta.url);
const ROOT = resolve(dirname(RUNNER), '..');
/**
 * Durations of the last runs, to hand the longest suite files out first: a cache outside git
 * (.gitignore: .cache/); TEST_DURATIONS names another file (the self-test's own).
 */
const DURATIONS = process.env.TEST_DURATIONS || join(ROOT, '.cache/test-durations.json');
const WORKER_RECORDS = process.env.BOOTCPLAN_TEST_WORKER;
/**
 * TEST_PROFILE=FILE writes, after the run, where the time went (docs/development.md "Tests in
 * parallel"): each suite file's wall time, its CPU in the test process and in the child
 * processes it waited for (the built CLI, git, Chromium), and, with workers, which one ran it and
 * when; each worker's start (spawn to ready: loading the runner and uvu); the run's wall time.
 */
const PROFILE = process.env.TEST_PROFILE;
const runStart = Date.now();

/** CPU milliseconds, this process's own and that of the child processes it has waited for. */
interface FileCpu {
  self: number;
  children: number;
}

/** CPU so far: process.cpuUsage() for this process, /proc/self/stat's cutime and cstime for its children (Linux; 0 elsewhere). */
function cpuNow(): FileCpu {
  const u = process.cpuUsage();
  let children = 0;
  try {
    // Fields after the command name (in parentheses, which may hold spaces): cutime and cstime are the 14th and 15th.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    children = ((Number(f[13]) + Number(f[14])) * 1000) / 100; // clock ticks, USER_HZ 100
  } catch {
    // not Linux
  }
  return { self: (u.user + u.system) / 1000, children };
}

const cpuSince = (a: FileCpu): FileCpu => {
  const b = cpuNow();
  return { self: Math.round(b.self - a.self), children: Math.round(b.children - a.children) };
};

interface ProfileEntry {
  file: string;
  ms: number;
  cpu: FileCpu;
  worker?: number;
  startedAt?: number;
}
const profile: ProfileEntry[] = [];
const workerStarts: { worker: number; spawnToReadyMs: number }[] = [];

/** Writes the profile (TEST_PROFILE): a failure to write it is said, and is no test failure. */
function writeProfile(jobs: number): void {
  if (!PROFILE) return;
  const sum = (k: keyof FileCpu) => profile.reduce((t, e) => t + e.cpu[k], 0);
  const longest = [...profile].sort((a, b) => b.ms - a.ms)[0];
  const out = {
    jobs,
    wallMs: Date.now() - runStart,
    suiteMsSum: profile.reduce((t, e) => t + e.ms, 0),
    longest: longest ? { file: longest.file, ms: longest.ms } : null,
    cpuSelfMs: sum('self'),
    cpuChildrenMs: sum('children'),
    workerStarts,
    files: profile.map((e) => ({ ...e, startedAt: e.startedAt === undefined ? undefined : e.startedAt - runStart })),
  };
  try {
    writeFileSync(PROFILE, JSON.stringify(out, null, 1) + '\n');
  } catch (err) {
    console.error(`TEST_PROFILE: could not write ${PROFILE}: ${describe(err)}`);
  }
}

const tally = { passed: 0, failed: 0, skipped: 0 };
const failures: Failure[] = [];
const skips: string[] = [];
let current = { file: '(loading)', suite: '' };
let finished = false;
/** Whether the summary's verdict was a pass; an error that escapes after it makes it a fail. */
let summaryOk = true;
let lateFailures = 0;

const ANSI = /\x1b\[[0-9;]*m/g;
const plain = (s: string) => s.replace(ANSI, '');

function fail(file: string, report: string, count = 1): void {
  tally.failed += count;
  failures.push({ file, report: report.trimEnd() });
}

function describe(err: unknown): string {
  return err instanceof Error ? withoutRunnerFrames(err.stack ?? `${err.name}: ${err.message}`) : `a non-Error was thrown: ${inspect(err)}`;
}

/** A stack without the frames of uvu and of this runner: what is left is the test's place. */
function withoutRunnerFrames(text: string): string {
  return text
    .split('\n')
    .filter((l) => !/^\s*at .*(\/node_modules\/uvu\/|\/test\/run\.ts:|node:internal\/)/.test(plain(l)))
    .join('\n');
}

const USAGE = 'usage: tsx test/run.ts [--allow-skips] [--jobs N] [--for src/FILE.ts ...] [file-or-folder ...]';

/** A count of processes: a whole number from 1 up, or a usage error naming where it came from. */
function jobsFrom(value: string | undefined, from: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^[1-9][0-9]*$/.test(value)) {
    console.error(`error: ${from} must be a whole number of processes from 1 up, got ${JSON.stringify(value)}\n  ${USAGE}`);
    process.exit(2);
  }
  return Number(value);
}

function parseArgs(argv: string[]): { roots: string[]; modules: string[]; allowSkips: boolean; jobs: number; e2eJobs: number } {
  const roots: string[] = [];
  const modules: string[] = [];
  let allowSkips = false;
  let jobsArg: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--allow-skips') allowSkips = true;
    else if (a === '--jobs' || a === '-j') jobsArg = argv[++i] ?? '';
    else if (a.startsWith('--jobs=')) jobsArg = a.slice('--jobs='.length);
    else if (a === '--for') modules.push(argv[++i] ?? '');
    else if (a.startsWith('--for=')) modules.push(a.slice('--for='.length));
    else if (a.startsWith('-')) {
      console.error(`error: unknown option ${a}\n  ${USAGE}`);
      process.exit(2);
    } else roots.push(a);
  }
  const jobs = jobsFrom(jobsArg, '--jobs') ?? jobsFrom(process.env.TEST_JOBS, 'TEST_JOBS') ?? availableParallelism();
  const e2eJobs = jobsFrom(process.env.TEST_E2E_JOBS, 'TEST_E2E_JOBS') ?? 1;
  return { roots: roots.length || modules.length ? roots : ['test'], modules, allowSkips, jobs, e2eJobs };
}

/** The suite files under the roots; a folder walk leaves out fixtures, golden files, e2e/ and smoke/. */
function collect(roots: string[]): string[] {
  const files: string[] = [];
  const walk = (p: string, top: boolean) => {
    const st = statSync(p);
    if (st.isDirectory()) {
      for (const e of readdirSync(p).sort()) {
        if (e === 'fixtures' || e === 'golden' || e === 'e2e' || e === 'smoke') continue;
        walk(join(p, e), false);
      }
    } else if (top || p.endsWith('.test.ts')) files.push(resolve(p));
  };
  for (const r of roots) walk(r, true);
  return files;
}

// uvu's reporter writes one mark per test: '• ' passed, '✘ ' failed (coloured on a terminal).
// Counting the failure marks as they are written is counting uvu's own per-test verdicts.
// A suite runner's first write is its name (` name ` and a space), when it has one.
let failMarks = 0;
let passMarks = 0;
let awaitingSuiteName = false;
let suiteStart = { passMarks: 0, failMarks: 0 };
const write = process.stdout.write.bind(process.stdout);

function watchProcess(allowSkips: boolean): void {
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    if (typeof chunk === 'string') {
      if (chunk.length < 32 && plain(chunk) === '✘ ') failMarks++;
      if (chunk.length < 32 && plain(chunk) === '• ') passMarks++;
      if (awaitingSuiteName) current.suite = /^ (.+) {2}$/.exec(plain(chunk))?.[1] ?? '';
    }
    awaitingSuiteName = false;
    return write(chunk, ...rest);
  }) as typeof process.stdout.write;
  // An error that escapes a test (a rejection nobody awaited, a throw in a timer) fails the run
  // instead of ending the process; the process ending early prints what was counted so far.
  process.on('unhandledRejection', escaped);
  process.on('uncaughtException', escaped);
  process.on('exit', (code) => {
    if (finished) {
      // A worker's parent prints what escaped late, and the counts.
      if (WORKER_RECORDS) return;
      // Errors that escaped after the summary were printed as they came; the last line must
      // still be the truth, and a test calling process.exit(0) late must not turn a failed run
      // into a passing one.
      if (lateFailures) console.log(countsLine());
      if (!summaryOk || lateFailures) process.exitCode = 1;
      return;
    }
    // The suite under way never returned its outcome: book what its reporter showed.
    tally.passed += passMarks - suiteStart.passMarks;
    const marked = failMarks - suiteStart.failMarks;
    if (marked) fail(current.file, `${where()}: ${marked} failed before the process ended (reports above)`, marked);
    fail(current.file, `the process exited (code ${code}) while ${where()} was running: a test called process.exit(), or awaited something that never settles`);
    if (WORKER_RECORDS) {
      // Synchronously, so the parent reads it once this process is gone.
      record({ kind: 'file', file: current.file, ms: Date.now() - fileStart, outEnd: outputEnd() });
      process.exitCode = 1;
      return;
    }
    summarise(allowSkips, timersLeft());
    process.exitCode = 1;
  });
}

/**
 * Books an error that reached the process. During the run it is listed with the other failures;
 * after the summary (a timer a test left behind) it is printed in full at once, and the exit
 * handler prints the corrected counts as the last line.
 */
function escaped(err: unknown): void {
  if (!finished) return fail(current.file, `an error escaped ${where()}: ${describe(err)}`);
  lateFailures++;
  tally.failed++;
  const report = `an error escaped after the run, once every suite had finished (a timer or callback a test left behind; its stack below names the file):\n${describe(err)}`;
  failures.push({ file: '(after the run)', report });
  if (WORKER_RECORDS) {
    record({ kind: 'late' });
    if (process.connected) process.send?.({ type: 'record' } satisfies FromWorker);
    return;
  }
  console.log(`\n== 1 more failed after the summary above\n\n${report}\n`);
}

/**
 * Lets the event loop turn once: Node reports a rejection nobody awaited only when the
 * microtask queue drains, and a run of synchronous tests never lets it drain, so without this
 * the whole run (and its summary) would finish before the rejection was reported.
 */
function settle(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

function where(): string {
  return current.suite ? `suite "${current.suite}" of ${current.file}` : current.file;
}

/** Runs one queued suite and books its tests: passed, failed (marked or unaccounted), skipped. */
async function runSuite(file: string, queued: QueuedSuite): Promise<number> {
  suiteStart = { passMarks, failMarks };
  takeRuntimeSkips(); // none left from an earlier suite counts against this one
  current.suite = '';
  awaitingSuiteName = true;
  let outcome: SuiteOutcome;
  try {
    outcome = await queued();
  } catch (err) {
    // uvu's after hooks run in its finally block: a throw there ends the suite without a result;
    // book what its reporter showed.
    tally.passed += passMarks - suiteStart.passMarks;
    const marked = failMarks - suiteStart.failMarks;
    if (marked) fail(file, `${where()}: ${marked} failed (reports above)`, marked);
    fail(file, `${where()}: an after hook threw: ${describe(err)}`);
    return 1 + passMarks - suiteStart.passMarks + marked;
  }
  if (!isOutcome(outcome)) {
    fail(
      file,
      `${where()}: uvu's suite runner returned ${inspect(outcome)}, not the [reports, passed, skipped, ran] of uvu 0.5.6; this runner cannot count it (docs/development.md "How the runner counts")`,
    );
    return 1;
  }
  const [reports, passed, skipped, ran] = outcome;
  const marked = failMarks - suiteStart.failMarks;
  // Tests that skipped themselves at run time (a tool missing: test/support/skips.ts) returned,
  // so uvu counts them passed; they checked nothing, so they are booked as skipped.
  const atRunTime = Math.min(passed, takeRuntimeSkips().length);
  tally.passed += passed - atRunTime;
  tally.skipped += skipped + atRunTime;
  if (skipped + atRunTime) skips.push(`${file}${current.suite ? ` (${current.suite})` : ''}: ${skipped + atRunTime}`);
  if (typeof reports === 'string') write(`\n${withoutRunnerFrames(reports)}\n`);
  if (marked) fail(file, typeof reports === 'string' ? withoutRunnerFrames(plain(reports)) : `${where()}: ${marked} failed`, marked);
  const unaccounted = ran - passed - marked;
  if (unaccounted !== 0) {
    fail(
      file,
      `${where()}: of ${ran} tests run, ${passed} passed and ${marked} failed; the other ${Math.abs(unaccounted)} neither passed nor reported a failure (a before or each hook threw, or a test threw a non-Error: uvu drops that error)`,
      Math.max(1, unaccounted),
    );
  }
  return ran + skipped;
}

/** The registry of test/support/skips.ts (read by its symbol: the runner loads no test helper). */
function takeRuntimeSkips(): string[] {
  const g = globalThis as { [k: symbol]: string[] | undefined };
  return (g[Symbol.for('bootcplan.test.runtime-skips')] ?? []).splice(0);
}

/** uvu's internals can change under an upgrade (package.json pins uvu): check what is read. */
function isOutcome(o: unknown): o is SuiteOutcome {
  return Array.isArray(o) && o.length === 4 && (o[0] === true || typeof o[0] === 'string') && o.slice(1).every(Number.isInteger);
}

let uvuQueue: unknown[][] = [];

async function loadUvu(): Promise<void> {
  (globalThis as any).UVU_DEFER = 1;
  await import('uvu');
  const queue: unknown[][] = (globalThis as any).UVU_QUEUE;
  if (!Array.isArray(queue)) throw new Error(`uvu set no UVU_QUEUE: test/run.ts reads uvu 0.5.6's internals (docs/development.md "How the runner counts")`);
  uvuQueue = queue;
}

/** Imports a suite file as uvu's CLI does: its suites' runners land in UVU_QUEUE[i]. */
async function loadFile(f: string, i: number): Promise<boolean> {
  current = { file: relative(process.cwd(), f), suite: '' };
  (globalThis as any).UVU_INDEX = i;
  uvuQueue[i] = [current.file];
  try {
    await import(pathToFileURL(f).href);
    return true;
  } catch (err) {
    fail(current.file, `${current.file} threw while loading, so none of its tests ran:\n${describe(err)}`);
    return false;
  }
}

/** Runs the suites a loaded file queued, with its name above their output. */
async function runFile(f: string, i: number, loaded: boolean, first: boolean): Promise<void> {
  const [name, ...suites] = uvuQueue[i] as [string, ...QueuedSuite[]];
  current = { file: relative(process.cwd(), f), suite: '' };
  write(`${first ? '' : '\n'}${name}\n`);
  let tests = 0;
  for (const s of suites) {
    tests += await runSuite(current.file, s);
    // Errors the suite's tests left behind are reported now, while it is still `current`.
    await settle();
  }
  current.suite = '';
  if (tests === 0 && loaded) fail(current.file, `${current.file} ran no test: it registers none, or a suite lacks its .run()`);
}

/** Every file in this process: all loaded first, then run, as uvu's CLI does. */
async function runAll(files: string[], durations: Map<string, number>): Promise<void> {
  await loadUvu();
  const loaded: boolean[] = [];
  const cpu: FileCpu[] = [];
  for (const [i, f] of files.entries()) {
    const t0 = Date.now();
    const c0 = cpuNow();
    loaded[i] = await loadFile(f, i);
    durations.set(relative(ROOT, f), Date.now() - t0);
    cpu[i] = cpuSince(c0);
  }
  for (const [i, f] of files.entries()) {
    const t0 = Date.now();
    const c0 = cpuNow();
    await runFile(f, i, loaded[i], i === 0);
    const key = relative(ROOT, f);
    durations.set(key, (durations.get(key) ?? 0) + Date.now() - t0);
    const c = cpuSince(c0);
    profile.push({ file: key, ms: durations.get(key)!, cpu: { self: c.self + cpu[i].self, children: c.children + cpu[i].children } });
  }
}

function timersLeft(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout' || r === 'Immediate').length;
}

function summarise(allowSkips: boolean, timers: number, holder = 'the process'): boolean {
  let ok = tally.failed === 0;
  if (failures.length) {
    console.log(`\n== ${tally.failed} failed (every failure of this run, in order)`);
    for (const f of failures) console.log(`\n-- ${f.file}\n${f.report}`);
    console.log('');
  }
  if (tally.passed + tally.failed + tally.skipped === 0) {
    console.log('no test ran');
    ok = false;
  }
  if (tally.skipped && !allowSkips) {
    console.log(`${tally.skipped} skipped (a skipped test checks nothing; install what it needs, or pass --allow-skips outside CI): ${skips.join('; ')}`);
    ok = false;
  }
  // Not a failure (a test may leave a harmless timer), but it explains a run that lingers after
  // its summary, or never ends (a setInterval nobody clears).
  if (timers) console.log(`${timers} timer(s) a test left running keep ${holder} alive; an error one throws still fails the run`);
  console.log(countsLine());
  return ok;
}

function countsLine(): string {
  return `${tally.passed} passed, ${tally.failed} failed${tally.skipped ? `, ${tally.skipped} skipped` : ''}`;
}

/** The suites that test the modules named (`--for`), each module's said on stderr with how they were found. */
async function suitesOf(modules: string[]): Promise<string[]> {
  if (!modules.length) return [];
  const { buildIndex, suitesFor } = await import('./support/test-index.ts');
  const index = buildIndex(ROOT);
  const out: string[] = [];
  for (const m of modules) {
    const file = relative(ROOT, resolve(m));
    if (!index.sources.includes(file)) {
      console.error(`error: --for ${m}: not a module of src/ (expected a path such as src/plan/planner.ts)\n  ${USAGE}`);
      process.exit(2);
    }
    const found = suitesFor(index, file);
    if (!found) {
      console.error(`error: --for ${m}: no suite reaches ${file} (test/repo/test-index.test.ts lists why)`);
      process.exit(2);
    }
    const how =
      found.distance === 0
        ? 'import it'
        : `import ${found.via.join(', ')}, which reach${found.via.length === 1 ? 'es' : ''} it in ${found.distance} import${found.distance === 1 ? '' : 's'}`;
    console.error(`== ${file}: ${found.suites.length} suite${found.suites.length === 1 ? '' : 's'} ${how}`);
    out.push(...found.suites.map((s) => join(ROOT, s)));
  }
  return out;
}

// ---- a worker process: files handed out one at a time by the parent, counts to a records file ----

let fileStart = Date.now();

/** Where this worker's output (stdout and stderr, one file) ends now. */
function outputEnd(): number {
  return fstatSync(1).size;
}

/** Appends what was counted since the last record, synchronously, and counts on from zero. */
function record(r: Pick<WorkerRecord, 'kind' | 'file' | 'ms' | 'outEnd' | 'timers' | 'startedAt' | 'cpu'>): void {
  const full: WorkerRecord = { ...r, ...tally, failures: failures.splice(0), skips: skips.splice(0) };
  appendFileSync(WORKER_RECORDS!, JSON.stringify(full) + '\n');
  tally.passed = tally.failed = tally.skipped = 0;
}

async function worker(): Promise<void> {
  watchProcess(true);
  await loadUvu();
  let index = 0;
  const send = (m: FromWorker) => process.send?.(m);
  // The parent is gone (killed): end, so the exit hooks (an e2e suite's cluster) run.
  process.on('disconnect', () => {
    if (!finished) process.exit(1);
  });
  process.on('message', (m: ToWorker) => {
    void (async () => {
      if (m.type === 'run') {
        const i = index++;
        fileStart = Date.now();
        const c0 = cpuNow();
        // While a file runs the IPC channel must not keep this process alive: a test awaiting
        // what never settles ends the process, as it ends a single-process run, and the exit
        // handler books it against the file.
        process.channel?.unref();
        const loaded = await loadFile(m.file, i);
        await runFile(m.file, i, loaded, true);
        process.channel?.ref();
        record({ kind: 'file', file: current.file, ms: Date.now() - fileStart, outEnd: outputEnd(), startedAt: fileStart, cpu: cpuSince(c0) });
        send({ type: 'record' });
      } else {
        await settle();
        finished = true;
        record({ kind: 'idle', timers: timersLeft(), outEnd: outputEnd() });
        send({ type: 'record' });
        // Timers a test left running keep this process alive, as they would a single one; the
        // channel does not.
        process.channel?.unref();
      }
    })();
  });
  send({ type: 'ready' });
}

// ---- the parent: worker processes, longest suite files first ----

interface Worker {
  id: number;
  child: ChildProcess;
  records: string;
  recordsRead: number;
  out: string;
  outPos: number;
  inFlight: string | null;
  /** Files handed to it so far. */
  files: number;
  ready: boolean;
  ending: boolean;
  idle: boolean;
  gone: boolean;
  exited: Promise<void>;
}

let printedBlock = false;

/** Prints a worker's output from where it was printed to `end` (its end when not given). */
function printOutput(w: Worker, end?: number): string {
  const size = statSync(w.out).size;
  const to = Math.min(end ?? size, size);
  if (to <= w.outPos) return '';
  const buf = Buffer.alloc(to - w.outPos);
  const fd = openSync(w.out, 'r');
  try {
    readSync(fd, buf, 0, buf.length, w.outPos);
  } finally {
    closeSync(fd);
  }
  w.outPos = to;
  const text = buf.toString('utf8');
  process.stdout.write(`${printedBlock ? '\n' : ''}${text}`);
  printedBlock = true;
  return text;
}

function loadDurations(): Record<string, number> {
  try {
    const d: unknown = JSON.parse(readFileSync(DURATIONS, 'utf8'));
    return d && typeof d === 'object' ? (d as Record<string, number>) : {};
  } catch {
    return {};
  }
}

/** Keeps this run's durations for the next run's order (a cache: a failure to write it is no failure). */
function saveDurations(durations: Map<string, number>): void {
  if (!durations.size) return;
  try {
    const all = { ...loadDurations(), ...Object.fromEntries(durations) };
    mkdirSync(dirname(DURATIONS), { recursive: true });
    const tmp = `${DURATIONS}.${process.pid}`;
    writeFileSync(tmp, JSON.stringify(all, Object.keys(all).sort(), 1) + '\n');
    renameSync(tmp, DURATIONS);
  } catch {
    // read-only checkout: the next run orders by file size
  }
}

/**
 * The files, longest first (greedy scheduling: the last file to start is a short one, so the
 * workers finish close together). A file's duration is the last run's; a file never timed is
 * estimated from its size at the timed files' milliseconds per byte.
 */
function longestFirst(files: string[]): string[] {
  const known = loadDurations();
  let ms = 0;
  let bytes = 0;
  const size = new Map(files.map((f) => [f, statSync(f).size]));
  for (const f of files) {
    const d = known[relative(ROOT, f)];
    if (typeof d === 'number') {
      ms += d;
      bytes += size.get(f)!;
    }
  }
  const perByte = ms && bytes ? ms / bytes : 1;
  const estimate = (f: string) => known[relative(ROOT, f)] ?? size.get(f)! * perByte;
  return files
    .map((f, i) => ({ f, i, e: estimate(f) }))
    .sort((a, b) => b.e - a.e || a.i - b.i)
    .map((x) => x.f);
}

/** A suite file of test/e2e/ (or of an `e2e` folder of the fixtures: the runner's self-test). */
function isE2e(f: string): boolean {
  const parts = relative(ROOT, f).split(sep);
  return parts[0] === 'test' && parts.slice(1, -1).includes('e2e');
}

function lastLines(text: string, n: number): string {
  const lines = text.trimEnd().split('\n');
  return (lines.length > n ? [`(${lines.length - n} lines above, printed in the log)`, ...lines.slice(-n)] : lines).join('\n');
}

/**
 * Runs `queue` in `n` worker processes, handing each the next file when it is done with one;
 * resolves with the timers the workers' tests left running once every worker is idle or gone.
 */
/**
 * Runs the queue's files in up to `n` worker processes. A worker runs at most `perWorker` files,
 * then ends and a new one takes the next: 1 for the end-to-end suites, which would otherwise see
 * the control plane, environment and module state an earlier suite left in the process.
 */
function pool(queue: string[], n: number, dir: string, all: Worker[], durations: Map<string, number>, perWorker = Infinity): Promise<number> {
  return new Promise((done) => {
    const live = new Set<Worker>();
    let timers = 0;
    const check = () => {
      if (queue.length === 0 && [...live].every((w) => w.idle || w.gone)) done(timers);
    };
    const next = (w: Worker) => {
      const f = w.files < perWorker ? queue.shift() : undefined;
      if (f !== undefined) {
        w.inFlight = f;
        w.files++;
        w.child.send({ type: 'run', file: f } satisfies ToWorker);
      } else {
        w.ending = true;
        w.child.send({ type: 'end' } satisfies ToWorker);
      }
    };
    const drain = (w: Worker) => {
      const lines = readFileSync(w.records, 'utf8').split('\n').filter(Boolean);
      for (const line of lines.slice(w.recordsRead)) {
        const r = JSON.parse(line) as WorkerRecord;
        if (r.kind === 'file' || r.kind === 'idle') printOutput(w, r.outEnd);
        tally.passed += r.passed;
        tally.failed += r.failed;
        tally.skipped += r.skipped;
        skips.push(...r.skips);
        if (r.kind === 'late' && finished) {
          lateFailures += r.failed;
          for (const f of r.failures) console.log(`\n== 1 more failed after the summary above\n\n${f.report}\n`);
        }
        failures.push(...r.failures);
        if (r.kind === 'file' && w.inFlight !== null) {
          durations.set(relative(ROOT, w.inFlight), r.ms ?? 0);
          profile.push({ file: relative(ROOT, w.inFlight), ms: r.ms ?? 0, cpu: r.cpu ?? { self: 0, children: 0 }, worker: w.id, startedAt: r.startedAt });
          w.inFlight = null;
        }
        if (r.kind === 'idle') {
          timers += r.timers ?? 0;
          w.idle = true;
        }
      }
      w.recordsRead = lines.length;
    };
    const spawnOne = () => {
      const id = all.length;
      const records = join(dir, `worker-${id}.jsonl`);
      const out = join(dir, `worker-${id}.out`);
      writeFileSync(records, '');
      // stdout and stderr into one file, written synchronously by the worker: in order, and
      // there to print when the worker is killed.
      const fd = openSync(out, 'a');
      const spawnedAt = Date.now();
      const child = spawn(process.execPath, [...process.execArgv, RUNNER], {
        stdio: ['ignore', fd, fd, 'ipc'],
        env: { ...process.env, BOOTCPLAN_TEST_WORKER: records },
      });
      closeSync(fd);
      let exited!: () => void;
      const w: Worker = {
        id,
        child,
        records,
        recordsRead: 0,
        out,
        outPos: 0,
        inFlight: null,
        files: 0,
        ready: false,
        ending: false,
        idle: false,
        gone: false,
        exited: new Promise((r) => (exited = r)),
      };
      all.push(w);
      live.add(w);
      child.on('message', (m: FromWorker) => {
        if (m.type === 'ready') {
          w.ready = true;
          workerStarts.push({ worker: id, spawnToReadyMs: Date.now() - spawnedAt });
          next(w);
          return;
        }
        drain(w);
        if (w.inFlight === null && !w.ending) next(w);
        check();
      });
      child.on('exit', (code, signal) => {
        drain(w);
        w.gone = true;
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        const rest = printOutput(w);
        if (w.inFlight !== null) {
          const file = relative(process.cwd(), w.inFlight);
          fail(
            file,
            `the worker process running ${file} ${how} before the file finished: what it counted of this file is lost, and the file counts as 1 failed; its output:\n${lastLines(rest, 40)}`,
          );
          w.inFlight = null;
        } else if (!w.ready) {
          fail('(worker process)', `a worker process (${RUNNER}) ${how} before it could run a file; its output:\n${lastLines(rest, 40)}`);
          if (![...live].some((o) => o !== w && !o.gone)) {
            // No worker left to run them: each counts as failed rather than vanishing from the counts.
            for (const f of queue.splice(0)) fail(relative(process.cwd(), f), `${relative(process.cwd(), f)} was not run: no worker process could start`);
          }
        }
        // A worker that ended early, or ran its share, leaves files behind: another takes them.
        if (w.ready && queue.length && [...live].filter((o) => !o.gone && !o.ending).length < n) spawnOne();
        exited();
        check();
      });
    };
    for (let i = 0; i < Math.min(n, queue.length); i++) spawnOne();
    check();
  });
}

async function runParallel(files: string[], jobs: number, e2eJobs: number, allowSkips: boolean, durations: Map<string, number>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-test-run-'));
  const units = files.filter((f) => !isE2e(f));
  const e2e = files.filter(isE2e);
  const phases: [string[], number][] = [
    [units, Math.min(jobs, units.length)],
    [e2e, Math.min(e2eJobs, e2e.length)],
  ];
  // Named before the empty phase is dropped: `test:e2e` alone has no unit phase.
  const said = phases
    .map(([fs, n], i) => [fs, n, i ? 'end-to-end' : 'unit'] as const)
    .filter(([fs]) => fs.length)
    .map(([fs, n, kind]) =>
      kind === 'unit'
        ? `${fs.length} unit suite files in ${n} worker process${n === 1 ? '' : 'es'}`
        : `${fs.length} end-to-end suite files, each in a worker process of its own, ${n} at a time`,
    );
  console.log(`== ${said.join(', then ') || 'no suite file'} (TEST_JOBS=1 runs them in this process)`);
  const all: Worker[] = [];
  let timers = 0;
  try {
    // The e2e suites keep their file order, and each runs in a process of its own: sharing one
    // they saw what an earlier suite left (its kube-apiserver's objects and Events: 01-env's
    // cluster without CRDs had another suite's BootcNodePools, 05-apply counted a Rollout's
    // status writes, 09-gitops another suite's Events; docs/development.md "Tests in parallel").
    for (const [i, [queue, n]] of phases.entries())
      if (queue.length) timers += await (i ? pool(queue, n, dir, all, durations, 1) : pool(longestFirst(queue), n, dir, all, durations));
    finished = true;
    // In the order of the files, as a single process lists them, whichever worker ran them.
    const order = new Map(files.map((f, i) => [relative(process.cwd(), f), i]));
    const rank = (f: Failure) => order.get(f.file) ?? files.length;
    failures.sort((a, b) => rank(a) - rank(b));
    summaryOk = summarise(allowSkips, timers, 'a worker process');
    // A worker kept alive by a test's timers: an error it throws still fails the run.
    await Promise.all(all.map((w) => w.exited));
    if (lateFailures) console.log(countsLine());
    process.exitCode = summaryOk && !lateFailures ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (WORKER_RECORDS) {
  await worker();
} else {
  const { roots, modules, allowSkips, jobs, e2eJobs } = parseArgs(process.argv.slice(2));
  const files = [...new Set([...collect(roots), ...(await suitesOf(modules))])];
  const durations = new Map<string, number>();
  if (jobs > 1) {
    await runParallel(files, jobs, e2eJobs, allowSkips, durations);
  } else {
    watchProcess(allowSkips);
    await runAll(files, durations);
    await settle();
    finished = true;
    process.stdout.write = write;
    summaryOk = summarise(allowSkips, timersLeft());
    process.exitCode = summaryOk ? 0 : 1;
  }
  saveDurations(durations);
  writeProfile(jobs);
}
