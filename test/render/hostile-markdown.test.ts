/**
 * docs/safety.md "What is masked in outputs": `@mentions` in cluster data must not ping people
 * from the PR comment. Every piece of plan or cluster data the comment shows as text has its
 * mentions (and `#123` issue links) broken by a zero-width space; inside code spans and blocks
 * GitHub links neither, so code keeps the text as it is. Markup from data stays text, the hidden
 * marker line and the 60,000-character cap hold whatever the data.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { renderMarkdown, markdownMarker, MARKDOWN_LIMIT } from '../../src/render/markdown.ts';
import { escapeMarkdown, neutraliseMentions } from '../../src/render/vocabulary.ts';
import type { Plan } from '../../src/plan/types.ts';
import { demoPlan, bigPlan } from '../support/render.ts';
import { hostilePlan, firstUnsafe, CREDENTIALS, PAYLOAD, type HostileMode } from '../support/hostile.ts';

const s = suite('render-hostile-markdown');

/** The comment without what GitHub shows as code (fenced blocks, code spans): where mentions and links would work. */
function outsideCode(md: string): string {
  const noFences = md.replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, '');
  // A backslash-escaped backtick is a literal one, not the start of a code span.
  return noFences.replace(/\\`/g, "'").replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, '');
}

/** Mentions GitHub would notify (`@name`, `@org/team` after a non-word character) and issue links it would make. */
function pings(md: string): string[] {
  const text = outsideCode(md);
  return [...text.matchAll(/(?:^|[^A-Za-z0-9_])(@[A-Za-z0-9][\w/-]*|(?<!&)#\d+)/g)].map((m) => m[1]);
}

/** The elements the comment writes itself. */
const TAGS = new Set(['details', 'summary', 'code', 'sub', 'b', 'br']);

function markupProblems(md: string): string[] {
  const text = outsideCode(md).replace(/^<!-- bootcplan:plan spec=[A-Za-z0-9._/-]+ -->\n/, '');
  const out: string[] = [];
  for (const m of text.matchAll(/<(\/?)([A-Za-z][A-Za-z0-9-]*)([^>]*)>/g)) {
    if (!TAGS.has(m[2]) || m[3].trim()) out.push(JSON.stringify(text.slice(m.index!, m.index! + 60)));
  }
  // Escaped brackets are literal: neither starts a link or an image.
  if (/<!--|\]\(|!\[/.test(text.replace(/\\[[\]]/g, '_'))) out.push('a comment, link or image from data');
  return out;
}

function assertSafeComment(md: string, plan: Plan, what: string) {
  assert.is(md.split('\n')[0], markdownMarker(plan), `${what}: the hidden marker line comes first, unchanged`);
  assert.ok(md.length <= MARKDOWN_LIMIT, `${what}: ${md.length} characters`);
  assert.equal(pings(md).slice(0, 5), [], `${what}: mentions or issue links outside code`);
  assert.equal(markupProblems(md).slice(0, 5), [], `${what}: markup from data`);
  assert.is(firstUnsafe(md), null, `${what}: a control or bidi character`);
  assert.not.ok(md.includes(CREDENTIALS), `${what}: credentials of an image reference`);
  const text = outsideCode(md);
  assert.is((text.match(/<details>/g) ?? []).length, (text.match(/<\/details>/g) ?? []).length, `${what}: every <details> is closed`);
}

s('mentions and issue links are broken by a zero-width space; code, e-mail-like text and entities are left alone', () => {
  assert.is(escapeMarkdown('ask @octo-team and @org/admins about #123'), 'ask @&#8203;octo-team and @&#8203;org/admins about #&#8203;123');
  assert.is(escapeMarkdown('@x at the start'), '@&#8203;x at the start');
  assert.is(escapeMarkdown('user@example.com (not a mention on GitHub either)'), 'user@example.com (not a mention on GitHub either)');
  // `&amp;#64;` shows as the text "&#64;", whose "#64" GitHub would link: broken too.
  assert.is(escapeMarkdown('a&#64;b &#35;1'), 'a&amp;#&#8203;64;b &amp;#&#8203;35;1');
  assert.is(neutraliseMentions(neutraliseMentions('@a #1')), '@&#8203;a #&#8203;1', 'applying it twice changes nothing');
  assert.is(escapeMarkdown('worker-a-1 (sha256:2d2adc23…)'), 'worker-a-1 (sha256:2d2adc23…)');
});

s('the demo comment is unchanged by the neutralisation (no mention in ordinary data)', () => {
  assert.equal(pings(renderMarkdown(demoPlan())), []);
});

for (const mode of ['strings', 'keep-enums', 'everything'] as HostileMode[]) {
  s(
    `hostile text in every ${mode === 'everything' ? 'field (numbers too)' : 'string field'}${mode === 'keep-enums' ? ' (actions, severities valid)' : ''}: no ping, no markup, marker and cap intact`,
    () => {
      const plan = hostilePlan(mode);
      assertSafeComment(renderMarkdown(plan), plan, 'comment');
      assertSafeComment(renderMarkdown(plan, { full: true, limit: 8000 }), plan, 'comment cut to 8,000 characters');
    },
  );
}

s('names and codes longer than the whole comment: the last guard cuts at a line end and closes what it leaves open', () => {
  const plan = hostilePlan('keep-enums');
  const huge = PAYLOAD.repeat(200);
  plan.pools[0].name = huge;
  plan.diagnostics.push({ severity: 'error', code: huge, message: huge, path: huge, file: null, line: null, column: null });
  plan.changes[0].address = huge;
  for (const limit of [MARKDOWN_LIMIT, 20_000]) {
    const md = renderMarkdown(plan, { limit });
    assertSafeComment(md, plan, `cut at ${limit}`);
    assert.is(md.split('\n').filter((l) => /^`{3,}/.test(l)).length % 2, 0, 'code fences are balanced');
    assert.match(md, /cut at the comment size limit\n$/);
  }
});

s('a cluster message mentioning a team shows as text that pings nobody', () => {
  const plan = structuredClone(demoPlan()) as Plan;
  plan.diagnostics.push({
    severity: 'warning',
    code: 'node-message',
    message: 'kubelet: @platform-oncall please look (see #4512)',
    path: null,
    file: null,
    line: null,
    column: null,
  });
  plan.pools[0].nodes[0].name = '@platform-oncall';
  plan.pools[0].waves[0][0] = '@platform-oncall';
  const md = renderMarkdown(plan);
  assert.ok(md.includes('kubelet: @&#8203;platform-oncall please look (see #&#8203;4512)'), 'the message reads the same on GitHub');
  assert.equal(pings(md), []);
});

s('10,000 nodes named like mentions: under 60,000 characters, nobody pinged', () => {
  const plan = structuredClone(bigPlan(3000, 10)) as Plan;
  const names = new Map<string, string>();
  for (const p of plan.pools) for (const n of p.nodes) names.set(n.name, (n.name = `@team-${n.name}`));
  for (const p of plan.pools) p.waves = p.waves.map((w) => w.map((n) => names.get(n) ?? n));
  const md = renderMarkdown(plan);
  assert.ok(md.length <= MARKDOWN_LIMIT, `${md.length} characters`);
  assert.equal(pings(md).slice(0, 5), []);
  assert.is(md.split('\n')[0], markdownMarker(plan));
});

s.run();
