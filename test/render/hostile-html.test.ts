/**
 * docs/safety.md "What is masked in outputs": `show -o html` of a crafted plan must never emit raw
 * `<base>`, `<form>` and `<meta http-equiv=refresh>` from the `risk` / `order` fields. Every
 * interpolation of the report is escaped, plan fields included: with hostile text in every field,
 * the report has only the elements and attributes the report itself writes, and the CSP forbids a
 * base URL and form targets as well as any fetch.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { renderHtml } from '../../src/render/html/report.ts';
import type { Plan } from '../../src/plan/types.ts';
import { demoPlan } from '../support/render.ts';
import { hostilePlan, hostileRehearsal, firstUnsafe, markupProblems, CREDENTIALS, type HostileMode } from '../support/hostile.ts';

const s = suite('render-hostile-html');

function assertClean(html: string, what: string) {
  const problems = markupProblems(html);
  assert.equal(problems.slice(0, 5), [], `${what}: ${problems.length} problems`);
  assert.not.match(html, /<base|<form|<meta http-equiv="refresh"/i);
  assert.is((html.match(/<meta /g) ?? []).length, 4, `${what}: the report's own four meta elements`);
  assert.is(firstUnsafe(html), null, `${what}: a control or bidi character reached the report`);
  assert.not.ok(html.includes(CREDENTIALS), `${what}: credentials of an image reference are masked`);
}

s('the CSP also forbids a base URL and form targets (navigation), and still any fetch', () => {
  const html = renderHtml(demoPlan());
  const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1] ?? '';
  const directives = csp.split(';').map((d) => d.trim());
  for (const d of ["default-src 'none'", "base-uri 'none'", "form-action 'none'"]) assert.ok(directives.includes(d), `CSP has ${d}: ${csp}`);
});

s('the normal report passes the markup check (the allowlists describe the report)', () => {
  assert.equal(markupProblems(renderHtml(demoPlan())), []);
});

for (const mode of ['strings', 'keep-enums', 'everything'] as HostileMode[]) {
  s(
    `hostile text in every ${mode === 'everything' ? 'field (numbers too)' : 'string field'}${mode === 'keep-enums' ? ' (actions, severities valid)' : ''}: no element, attribute or control character from data`,
    () => {
      const plan = hostilePlan(mode);
      assertClean(renderHtml(plan), 'plan');
      assertClean(renderHtml(plan, { full: true, maxChartRows: 1 }), 'plan, rows aggregated');
    },
  );
}

s('hostile rehearsal (pools, failed nodes, stop reason, events): the rehearsal report stays clean', () => {
  for (const mode of ['keep-enums', 'everything'] as HostileMode[]) {
    const plan = hostilePlan(mode);
    assertClean(renderHtml(plan, { rehearsal: hostileRehearsal(plan) }), `rehearsal (${mode})`);
    assertClean(renderHtml(plan, { rehearsal: hostileRehearsal(plan), maxChartRows: 1 }), `rehearsal, rows aggregated (${mode})`);
  }
});

s('the attack of the issue: risk and order carry markup', () => {
  const plan = structuredClone(demoPlan()) as Plan;
  const c = plan.changes.find((x) => x.action !== 'noop')!;
  c.risk = '<base href="//evil.example/"><form action="//evil.example/">' as never;
  c.order = '1"><meta http-equiv="refresh" content="0;url=//evil.example/">' as never;
  const html = renderHtml(plan);
  assert.equal(markupProblems(html), []);
  assert.match(html, /&lt;base href=&quot;\/\/evil\.example\/&quot;&gt;/);
});

s('numbers of the chart geometry are finite whatever the plan says (1e400 parses as Infinity)', () => {
  const plan = JSON.parse(
    JSON.stringify(demoPlan())
      .replace(/"drain":\d+/, '"drain":1e400')
      .replace(/"soakSeconds":\d+/g, '"soakSeconds":"9<x>"'),
  ) as Plan;
  const html = renderHtml(plan);
  const chart = html.slice(html.indexOf('<svg'), html.indexOf('</svg>'));
  assert.not.match(chart, /="[^"]*(NaN|Infinity)[^"]*"/);
  assert.equal(markupProblems(html), []);
});

s('a duration of 1e400 (JSON.parse reads Infinity) neither hangs nor crashes the report (the time axis looped forever)', () => {
  const plan = JSON.parse(JSON.stringify(demoPlan()).replace(/"drain":\d+/, '"drain":1e400')) as Plan;
  assert.is(plan.durations.drain, Infinity);
  const html = renderHtml(plan);
  assert.match(html, /The plan's durations are not finite numbers: nothing to draw\./);
  assert.match(html, /drain \?, reboot/);
  assert.equal(markupProblems(html), []);
});

s.run();
