/**
 * docs/safety.md "What is masked in outputs": credentials inside an image reference
 * (`user:pass@registry/...`) are never shown. Human outputs (text, markdown, HTML, event lines,
 * rehearsal text) mask the userinfo part (`***@registry/...`); the plan JSON keeps every reference
 * exact, since apply writes it to the cluster.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { maskCredentials, forDisplay } from '../../src/render/secrets.ts';
import { renderText } from '../../src/render/text.ts';
import { renderMarkdown } from '../../src/render/markdown.ts';
import { renderHtml } from '../../src/render/html/report.ts';
import { planFileText } from '../../src/plan/saved/writer.ts';
import { formatEventLine, TtyProgress } from '../../src/render/events.ts';
import { renderRehearsalText } from '../../src/render/rehearsal.ts';
import { changeDiff } from '../../src/render/diff.ts';
import type { ApplyEvent } from '../../src/apply/ports/events.ts';
import type { Plan } from '../../src/plan/types.ts';
import { demoPlan } from '../support/render.ts';
import { hostileRehearsal } from '../support/hostile.ts';

const s = suite('render-credentials');
const DIGEST = `sha256:${'e2'.repeat(32)}`;

s('maskCredentials: the userinfo before a host is masked; digests, ports and plain references are not', () => {
  const cases: [string, string][] = [
    [`robot$ci:s3cr3t@quay.io/ns/img:tag`, `***@quay.io/ns/img:tag`],
    [`user@registry.example.com/ns/img`, `***@registry.example.com/ns/img`],
    [`user:pass@registry.example.com`, `***@registry.example.com`],
    [`u:p@quay.io/ns/img@${DIGEST}`, `***@quay.io/ns/img@${DIGEST}`],
    [`docker://u:p@quay.io/ns/img`, `docker://***@quay.io/ns/img`],
    [`https://admin:hunter2@api.cluster.example:6443`, `https://***@api.cluster.example:6443`],
    [`u:p@ss@quay.io/ns/img`, `***@quay.io/ns/img`],
    [`u:dG9rZW4=@quay.io/ns/img`, `***@quay.io/ns/img`],
    [`image "u:p@quay.io/ns/img" is not pinned by digest`, `image "***@quay.io/ns/img" is not pinned by digest`],
    [`osImageURL: u:p@quay.io/ns/img`, `osImageURL: ***@quay.io/ns/img`],
    [`{"image":"u:p@quay.io/ns/img"}`, `{"image":"***@quay.io/ns/img"}`],
    [`(u:p@quay.io/x, v:q@ghcr.io/y)`, `(***@quay.io/x, ***@ghcr.io/y)`],
  ];
  for (const [input, want] of cases) assert.is(maskCredentials(input), want, input);
  for (const plain of [`quay.io/ns/img@${DIGEST}`, `img@${DIGEST}`, `localhost:5000/ns/img:tag`, 'worker-a-1', '@octo-team says hi', 'quay.io/ns/img:v@1']) {
    assert.is(maskCredentials(plain), plain, plain);
  }
  assert.is(maskCredentials(maskCredentials('u:p@quay.io/x')), '***@quay.io/x', 'masking twice changes nothing');
});

/** The demo plan with credentials in every image reference: pools, nodes, changes (patches too), a diagnostic. */
function planWithCredentials(): Plan {
  const text = JSON.stringify(demoPlan()).replace(/quay\.io\/example\//g, 'robot$ci:s3cr3t@quay.io/example/');
  const plan = JSON.parse(text) as Plan;
  plan.diagnostics.push({
    severity: 'warning',
    code: 'image-not-pinned',
    message: 'image robot$ci:s3cr3t@quay.io/example/os:latest is not pinned by digest',
    path: null,
    file: null,
    line: null,
    column: null,
  });
  plan.cluster.source = 'https://admin:hunter2@api.cluster.example:6443';
  return plan;
}

function assertMasked(out: string, what: string) {
  assert.not.ok(out.includes('s3cr3t') || out.includes('hunter2'), `${what}: credentials shown`);
  assert.ok(out.includes('***@quay.io/example/') || out.includes('***@api.cluster.example'), `${what}: the reference is still shown, masked`);
}

s('text, markdown and HTML mask the credentials of every reference, in diffs too; the plan JSON keeps them exact', () => {
  const plan = planWithCredentials();
  assert.ok(JSON.stringify(plan).includes('robot$ci:s3cr3t@quay.io/example/'), 'the fixture carries credentials');
  assertMasked(renderText(plan, { color: false }), 'text');
  assertMasked(renderText(plan, { color: true, full: true }), 'text --full');
  assertMasked(renderMarkdown(plan), 'markdown');
  assertMasked(renderMarkdown(plan, { full: true }), 'markdown --full');
  assertMasked(renderHtml(plan), 'html');
  assertMasked(renderHtml(plan, { full: true }), 'html --full');
  for (const ch of plan.changes) for (const l of changeDiff(ch, { full: true }).lines) assert.not.ok(l.text.includes('s3cr3t'), `diff of ${ch.address}`);
  const json = planFileText(plan);
  assert.equal(JSON.parse(json), plan, 'the plan JSON is exact: apply writes these references');
  assert.ok(json.includes('robot$ci:s3cr3t@quay.io/example/'));
});

s('event lines, the progress block and rehearsal text mask credentials in API messages', () => {
  const msg = 'pull failed: robot$ci:s3cr3t@quay.io/example/os: unauthorized (https://admin:hunter2@api.cluster.example:6443)';
  const events: ApplyEvent[] = [
    { t: 1, type: 'change', address: 'BootcNodePool/worker', message: msg },
    {
      t: 2,
      type: 'node-failed',
      pool: 'worker',
      node: 'w-1',
      message: msg,
      conditions: [{ type: 'Degraded', status: 'True', reason: 'PullFailed', message: msg }],
    },
    { t: 3, type: 'halt', pool: 'worker', node: 'w-1', message: msg },
  ];
  for (const e of events) assertMasked(formatEventLine(e), `event ${e.type}`);
  const tty = new TtyProgress({ color: true });
  assertMasked(events.map((e) => tty.update(e)).join(''), 'progress');
  const r = { ...hostileRehearsal(demoPlan()), stopped: msg, events };
  assertMasked(renderRehearsalText(r, { color: false, events: true }), 'rehearsal text');
  assertMasked(forDisplay(`error: ${msg}`), 'a CLI message through forDisplay');
});

s('identities are not credentials: a lock holder user@host and an e-mail address stay; a password, a URL or a reference path is masked', () => {
  assert.is(maskCredentials('held by cronjob-7f9@ci since 2026-09-14'), 'held by cronjob-7f9@ci since 2026-09-14');
  assert.is(maskCredentials('contact ops@example.com'), 'contact ops@example.com');
  assert.is(maskCredentials('robot:tok3n@quay.io'), '***@quay.io');
  assert.is(maskCredentials('https://user@proxy.example:3128'), 'https://***@proxy.example:3128');
  assert.is(maskCredentials('robot@quay.io/ns/img:tag'), '***@quay.io/ns/img:tag');
  assert.is(maskCredentials('quay.io/ns/img@sha256:' + 'a'.repeat(64)), 'quay.io/ns/img@sha256:' + 'a'.repeat(64));
});

s.run();
