import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { renderMarkdown, markdownMarker, MARKDOWN_LIMIT } from '../../src/render/markdown.ts';
import type { Plan, PlanChange, PlanPool } from '../../src/plan/types.ts';
import type { Diagnostic } from '../../src/base/diagnostics.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { demoPlan, bigPlan, ROOT } from '../support/render.ts';

const s = suite('render-markdown');

/** The head: everything before the first details block. */
const headOf = (md: string) => md.slice(0, md.indexOf('<details>') >= 0 ? md.indexOf('<details>') : md.length);

function wellFormed(md: string) {
  assert.is((md.match(/<details>/g) ?? []).length, (md.match(/<\/details>/g) ?? []).length, 'every <details> is closed');
  const fences = md.split('\n').filter((l) => /^`{3,}/.test(l)).length;
  assert.is(fences % 2, 0, 'code fences are balanced');
}

s('marker first, then the summary table, then details', () => {
  const md = renderMarkdown(demoPlan());
  const lines = md.split('\n');
  assert.is(lines[0], '<!-- bootcplan:plan spec=examples/rollout.yaml -->');
  assert.is(markdownMarker(demoPlan()), lines[0]);
  const head = headOf(md);
  for (const want of [
    '| Summary | |',
    '| Objects |',
    '| Pools |',
    '| Nodes |',
    '| Reboots |',
    '| Estimated duration |',
    '| Risks |',
    '| Errors / warnings |',
    '| Pool | Backend |',
  ]) {
    assert.ok(head.includes(want), `head has ${want}`);
  }
  assert.match(head, /\*\*Plan: \d+ to create, \d+ to change, \d+ to delete; 11 nodes in 7 waves \(est\. 1h\d+m\)\.\*\*/);
  assert.ok(md.indexOf('| Summary | |') < md.indexOf('<details>'));
  assert.match(md, /<details>\n<summary><code>~ BootcNodePool\/worker<\/code>/);
  assert.match(md, /```diff\n/);
  wellFormed(md);
});

s('the marker is keyed by the spec path and safe in an HTML comment', () => {
  const spec = (path: string) => ({ spec: { name: 'x', path, ref: null, commit: null, sha256: '', dirty: null } });
  assert.is(markdownMarker(spec('./clusters/prod east/bootcplan.yaml')), '<!-- bootcplan:plan spec=clusters/prod_east/bootcplan.yaml -->');
  assert.is(markdownMarker(spec('a-->b.yaml')), '<!-- bootcplan:plan spec=a-_b.yaml -->');
});

s('a 10,000-node plan renders under 60,000 characters with its summary intact', () => {
  const plan = bigPlan();
  const md = renderMarkdown(plan);
  assert.ok(md.length <= MARKDOWN_LIMIT, `${md.length} characters`);
  assert.ok(md.startsWith('<!-- bootcplan:plan spec=big.yaml -->\n'));
  const head = headOf(md);
  assert.match(
    head,
    /\| Nodes \| 9995 to update in 11 waves; \*\*5 not scheduled\*\*; at most 1000 nodes out of service at once \(5 already out of service included\) \|/,
  );
  assert.match(head, /\| Reboots \| 1500 soft, 1500 hard, 6995 not yet known/);
  assert.match(head, /\| `worker` \| BootcNodePool \| 9995 of 10000 \| 11 \| 995 \|/);
  assert.match(md, /1500 nodes: sha256:[0-9a-f]{8}… → sha256:[0-9a-f]{8}…, soft reboot, staged, waves 1-2/);
  wellFormed(md);
});

/** A plan built to overflow every part: huge diffs, many pools, many errors and warnings. */
function monsterPlan(): Plan {
  const base = structuredClone(bigPlan(3000, 1)) as Plan;
  const big = (tag: string) => ({ spec: { config: Array.from({ length: 400 }, (_, i) => `${tag}-line-${i}-${'x'.repeat(60)}`) } });
  const changes: PlanChange[] = Array.from({ length: 120 }, (_, i) => ({
    address: `MachineConfig/99-huge-${i}`,
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfig',
    namespace: null,
    name: `99-huge-${i}`,
    action: 'update',
    reason: 'pool-os-image-machineconfig',
    risk: i % 3 ? 'none' : 'disruptive',
    order: i + 1,
    patch: [],
    before: big(`old${i}`),
    after: big(`new${i}`),
    description: `description with | pipes and <b>html</b> and \`ticks\` ${i}`,
  }));
  const pools: PlanPool[] = Array.from({ length: 80 }, (_, i) => ({ ...base.pools[0], name: `pool-${i}` }));
  const diag = (severity: 'error' | 'warning', i: number): Diagnostic => ({
    severity,
    code: `code-${i}`,
    message: `${severity} ${i}: ` + 'something is wrong '.repeat(30),
    path: `spec.pools[${i}]`,
    file: 'b.yaml',
    line: i + 1,
    column: 3,
    hint: 'do something else',
  });
  const diagnostics = [...Array.from({ length: 300 }, (_, i) => diag('error', i)), ...Array.from({ length: 300 }, (_, i) => diag('warning', i))];
  return { ...base, changes, pools, diagnostics, summary: { ...base.summary, errors: 300, warnings: 300, update: 120 } };
}

s('any plan stays under the limit: the middle is cut with a note, never the summary or the errors', () => {
  const plan = monsterPlan();
  const md = renderMarkdown(plan);
  assert.ok(md.length <= MARKDOWN_LIMIT, `${md.length} characters`);
  assert.ok(md.startsWith('<!-- bootcplan:plan spec=big.yaml -->\n'));
  assert.match(md, /\| Summary \| \|/);
  assert.match(md, /\| Errors \/ warnings \| \*\*300\*\* \/ 300 \|/);
  assert.match(md, /#### ❌ 300 errors: this plan cannot be applied/);
  assert.match(md, /`code-0`/);
  assert.match(md, /detail sections? left out here\*\* to keep this comment under 60,000 characters/);
  // The cut is in the middle: the first change and the last pool are still there.
  assert.match(md, /MachineConfig\/99-huge-0</);
  assert.match(md, /Pool <code>pool-79<\/code>/);
  assert.match(md, /apply this plan|fix the errors above/);
  // Free text is escaped: no raw HTML from descriptions, no broken tables.
  assert.not.match(md, /<b>html<\/b>/);
  wellFormed(md);
});

s('a smaller limit cuts more but keeps the head', () => {
  const md = renderMarkdown(demoPlan(), { limit: 4500 });
  assert.ok(md.length <= 4500, `${md.length}`);
  assert.match(md, /\| Summary \| \|/);
  assert.match(md, /left out here/);
  wellFormed(md);
});

s('a plan without changes says so', () => {
  const plan = structuredClone(demoPlan()) as Plan;
  plan.changes = [];
  plan.pools = [];
  plan.diagnostics = [];
  plan.summary = {
    ...plan.summary,
    create: 0,
    update: 0,
    delete: 0,
    nodes: 0,
    waves: 0,
    softReboots: 0,
    hardReboots: 0,
    blocked: 0,
    estimatedSeconds: 0,
    errors: 0,
    warnings: 0,
  };
  const md = renderMarkdown(plan);
  assert.match(md, /✅/);
  assert.match(md, /Plan: 0 to create, 0 to change, 0 to delete; 0 nodes in 0 waves/);
  wellFormed(md);
});

s.run();

// ---------------------------------------------------------------------------- the pull-request workflow

const wf = suite('render-markdown: GitHub Actions workflow');
const workflow = () => parseYaml(readFileSync(join(ROOT, 'examples/github-actions/plan.yml'), 'utf8')) as any;

wf('runs plan --out PLAN -o markdown --detailed-exitcode on pull requests (one plan: the file and the comment)', () => {
  const w = workflow();
  assert.ok(w.on.pull_request !== undefined);
  const steps = w.jobs.plan.steps as any[];
  const run = steps.map((x) => x.run ?? '').join('\n');
  assert.match(run, /bootcplan plan -f "\$SPEC" .*--out "\$PLAN" -o markdown --detailed-exitcode/);
  assert.ok(steps.some((x) => String(x.uses).startsWith('actions/github-script@')));
  assert.is(w.permissions['pull-requests'], 'write');
});

/** Runs the github-script step with a fake GitHub client. */
async function runScript(files: Record<string, string>, existing: { id: number; body: string; user: { type: string } }[], spec = 'bootcplan.yaml') {
  const step = (workflow().jobs.plan.steps as any[]).find((x) => String(x.uses).startsWith('actions/github-script@'));
  const calls: { op: string; args: any }[] = [];
  const github = {
    paginate: async () => existing,
    rest: {
      issues: {
        listComments: () => undefined,
        updateComment: async (args: any) => {
          calls.push({ op: 'update', args });
          return { data: {} };
        },
        createComment: async (args: any) => {
          calls.push({ op: 'create', args });
          return { data: { html_url: 'u' } };
        },
      },
    },
  };
  const env = { SPEC: spec, PLAN_MD: 'plan.md', PLAN_ERR: 'plan.err', EXIT_CODE: '1' };
  const fakeFs = { existsSync: (f: string) => f in files, readFileSync: (f: string) => files[f] };
  const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
  const fn = new AsyncFunction('require', 'github', 'context', 'core', 'process', step.with.script);
  await fn(
    (m: string) => (m === 'fs' ? fakeFs : assert.unreachable(m)),
    github,
    { repo: { owner: 'o', repo: 'r' }, issue: { number: 7 } },
    { info: () => {} },
    { env },
  );
  return calls;
}

wf('the script updates the comment that carries the marker, or creates one', async () => {
  const md = renderMarkdown(demoPlan());
  const marker = md.split('\n', 1)[0];
  const others = [
    { id: 1, body: 'lgtm', user: { type: 'User' } },
    { id: 2, body: `${marker}\nquoted by a human`, user: { type: 'User' } },
  ];
  const update = await runScript({ 'plan.md': md }, [...others, { id: 3, body: `${marker}\nold plan`, user: { type: 'Bot' } }], 'examples/rollout.yaml');
  assert.equal(
    update.map((c) => [c.op, c.args.comment_id]),
    [['update', 3]],
  );
  assert.is(update[0].args.body, md);
  const create = await runScript({ 'plan.md': md }, others, 'examples/rollout.yaml');
  assert.equal(
    create.map((c) => [c.op, c.args.issue_number]),
    [['create', 7]],
  );
});

wf('no plan (invalid spec): the comment shows stderr under the same marker bootcplan would write', async () => {
  const calls = await runScript({ 'plan.md': '', 'plan.err': 'error: ./examples/rollout.yaml: 1 error in the spec' }, [], './examples/rollout.yaml');
  assert.is(calls.length, 1);
  assert.ok(calls[0].args.body.startsWith(`${markdownMarker(demoPlan())}\n### ❌ bootcplan plan failed`), calls[0].args.body);
  assert.match(calls[0].args.body, /1 error in the spec/);
});

wf.run();
