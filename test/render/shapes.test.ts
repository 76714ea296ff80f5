/**
 * A crafted plan file need not respect the types (docs/safety.md "Input limits"): a name may be a number, null or
 * an object, a count may be null, a maintenance window's zone may not exist. The renderers
 * write such values as text instead of failing with "internal error"; checking the plan's
 * shape is the plan-file reader's job, so this only covers leaves, not arrays or objects
 * that are missing.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { renderText } from '../../src/render/text.ts';
import { renderMarkdown } from '../../src/render/markdown.ts';
import { renderHtml } from '../../src/render/html/report.ts';
import { formatEventLine, TtyProgress } from '../../src/render/events.ts';
import { renderRehearsalText } from '../../src/render/rehearsal.ts';
import type { Plan } from '../../src/plan/types.ts';
import { demoPlan } from '../support/render.ts';
import { hostileEvents, hostileRehearsal } from '../support/hostile.ts';

const s = suite('render-shapes');

/** `value` with each leaf passed through `f` (arrays and objects kept). */
function mapLeaves<T>(value: T, f: (v: unknown) => unknown): T {
  const walk = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(walk)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'type' ? x : walk(x)]))
        : f(v);
  return walk(value) as T;
}

function basePlan(): Plan {
  const plan = structuredClone(demoPlan()) as Plan;
  plan.specChanges = {
    base: 'origin/main',
    baseCommit: 'a'.repeat(40),
    path: 'examples/rollout.yaml',
    added: 1,
    removed: 1,
    unified: '--- a\n+++ b\n-x\n+y\n',
  };
  return plan;
}

const WRONG: Record<string, (v: unknown) => unknown> = {
  'strings as numbers': (v) => (typeof v === 'string' ? 7 : v),
  'strings as null': (v) => (typeof v === 'string' ? null : v),
  'strings as objects': (v) => (typeof v === 'string' ? { a: 1 } : v),
  'numbers as null': (v) => (typeof v === 'number' ? null : v),
};

for (const [name, f] of Object.entries(WRONG)) {
  s(`${name}: text, markdown, HTML, event lines and rehearsal text render without throwing`, () => {
    const plan = mapLeaves(basePlan(), f);
    renderText(plan, { color: true });
    renderMarkdown(plan);
    renderHtml(plan);
    const events = mapLeaves(hostileEvents(), f);
    const tty = new TtyProgress({ color: true });
    for (const e of events) {
      formatEventLine(e);
      tty.update(e);
    }
    renderRehearsalText(mapLeaves(hostileRehearsal(basePlan()), f), { color: false, events: true });
  });
}

s('a maintenance window whose time or zone does not parse is shown as written', () => {
  const plan = basePlan();
  plan.schedule = {
    evaluatedAt: 'now',
    totalWaves: 7,
    open: { start: 'not a time', end: 'not a time', timezone: 'Not/AZone', wavesThatFit: 1 },
    next: null,
  } as never;
  for (const out of [renderText(plan), renderMarkdown(plan), renderHtml(plan)]) assert.match(out, /until not a time Not\/AZone/);
});

s.run();
