/**
 * Hostile inputs for the renderers (docs/safety.md "What is masked in outputs"): a plan file can be crafted, and
 * cluster data (node names, conditions, API messages) is written by whoever can write to the
 * cluster. Every string field of a plan (and, in one variant, every number field too, since a
 * crafted file need not respect the types) carries PAYLOAD, which tries each attack at once:
 * HTML elements and attribute breaks, terminal escape sequences, bidi overrides, forged
 * lines, markdown mentions and issue links, and credentials in an image reference.
 */
import type { Plan } from '../../src/plan/types.ts';
import type { ApplyEvent } from '../../src/apply/ports/events.ts';
import type { RehearsalReport as Rehearsal } from '../../src/render/rehearsal.ts';
import { demoPlan } from './render.ts';

/** The forged line a newline in data would start (a reviewer would read it as the plan line). */
export const FORGED = 'FORGED Plan: 0 to create, 0 to change, 0 to delete';
/** The credentials of the image reference in PAYLOAD; never shown by a human renderer. */
export const CREDENTIALS = 'robot$ci:s3cr3t';

export const PAYLOAD =
  `"'><base href="//evil.example/"><form action="//evil.example/f"><meta http-equiv="refresh" content="0;url=//evil.example/">` +
  `</title></style></textarea></pre><svg onload=alert(1)><img src=x onerror=alert(1)>` +
  `\x1b]8;;https://evil.example/\x07link\x1b]8;;\x07\x1b[2J\x1b[8m\x9b31m\x07\x08\x7f\u202eevil\u2066x\u2069\u200b\ufeff\u2028` +
  `\r\n${FORGED}\t @octo-team @org/admins ping #123 ${CREDENTIALS}@registry.evil.example/ns/img:tag ` +
  '![i](https://evil.example/t.png) | x | `code` **b** </details></summary><!-- c --> &amp; &#64;team';

/**
 * Fields a renderer branches on: variant 'keep-enums' keeps them valid so that every section
 * (diagnostics by severity, changes that are not no-ops, risks) is rendered with hostile text
 * in all its other fields; the other variants replace them as well.
 */
const ENUMS = new Set(['action', 'severity', 'backend', 'reboot', 'type', 'kind']);

export type HostileMode = 'strings' | 'keep-enums' | 'everything';

/** `value` with its leaves replaced: strings always, numbers with 'everything'. */
export function hostile<T>(value: T, mode: HostileMode): T {
  const walk = (v: unknown, key: string): unknown => {
    if (typeof v === 'string') return key === 'type' || (mode === 'keep-enums' && ENUMS.has(key)) ? v : PAYLOAD;
    if (typeof v === 'number') return mode === 'everything' && key !== 't' ? PAYLOAD : v;
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  return walk(value, '') as T;
}

/**
 * The demo plan with hostile text in every field. Node names differ per node (a suffix after
 * the payload), so waves and node tables still line up; a risk and a description are set so
 * the risk list shows them.
 */
export function hostilePlan(mode: HostileMode): Plan {
  const base = structuredClone(demoPlan()) as Plan;
  base.specChanges = {
    base: 'origin/main',
    baseCommit: 'a'.repeat(40),
    path: 'examples/rollout.yaml',
    added: 1,
    removed: 1,
    unified: '--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n',
  };
  base.schedule = null;
  for (const c of base.changes) c.description = 'd';
  for (const p of base.pools) for (const n of p.nodes) n.conditions = [{ type: 'Ready', status: 'False', reason: 'r', message: 'm' } as never];
  const plan = hostile(base, mode);
  plan.pools.forEach((p, i) => {
    const names = new Map<string, string>();
    p.nodes.forEach((n, j) => names.set(base.pools[i].nodes[j].name, (n.name = `${PAYLOAD}-${i}-${j}`)));
    if (Array.isArray(p.waves)) p.waves = base.pools[i].waves.map((w) => w.map((n) => names.get(n) ?? PAYLOAD));
  });
  return plan;
}

/** One event of every type, every string field hostile. */
export function hostileEvents(): ApplyEvent[] {
  const P = PAYLOAD;
  const conditions = [{ type: P, status: P, reason: P, message: P }] as never[];
  const events: ApplyEvent[] = [
    { t: 0, type: 'start', message: P, resumed: false },
    { t: 1, type: 'change', address: P, pool: P, message: P },
    { t: 2, type: 'wait', address: P, message: P },
    { t: 3, type: 'pool-start', pool: P, waves: 2, message: P },
    { t: 4, type: 'stage-start', pool: P, node: P },
    { t: 5, type: 'staged', pool: P, node: P },
    { t: 6, type: 'wave-start', pool: P, wave: 1, waves: 2, nodes: [P, `${P}-2`] },
    { t: 7, type: 'cordon', pool: P, node: P, wave: 1, message: P },
    { t: 8, type: 'drain-done', pool: P, node: P, wave: 1 },
    { t: 9, type: 'reboot', pool: P, node: P, wave: 1, kind: 'soft' },
    { t: 10, type: 'booted', pool: P, node: P, wave: 1 },
    { t: 11, type: 'uncordon', pool: P, node: P, wave: 1 },
    { t: 12, type: 'wave-end', pool: P, wave: 1, waves: 2 },
    { t: 13, type: 'soak', pool: P, wave: 1, seconds: 60 },
    { t: 14, type: 'node-failed', pool: P, node: `${P}-2`, message: P, conditions },
    { t: 15, type: 'node-unavailable', pool: P, node: P, message: P, conditions },
    { t: 16, type: 'node-available', pool: P, node: P },
    { t: 17, type: 'halt', pool: P, node: P, message: P },
    { t: 18, type: 'step-end', pool: P, message: P },
    { t: 19, type: 'pool-done', pool: P },
    { t: 20, type: 'done', message: P },
  ];
  return events;
}

/** A rehearsal of the hostile plan: its pools, waves, failed nodes and events carry PAYLOAD. */
export function hostileRehearsal(plan: Plan): Rehearsal {
  const pools: Rehearsal['pools'] = plan.pools.map((p) => ({
    name: p.name,
    backend: p.backend,
    maxUnavailable: 1,
    peakUnavailable: 2,
    waves: (Array.isArray(p.waves) ? p.waves : []).map((w, i) => ({ wave: i + 1, start: i * 100, end: i * 100 + 90, nodes: w })),
    failedNodes: [PAYLOAD],
  }));
  return {
    planId: PAYLOAD,
    durationSeconds: 1000,
    estimatedSeconds: 900,
    halted: true,
    stopped: PAYLOAD,
    exitCode: 5,
    durations: { stage: 10, drain: 10, reboot: 10, softReboot: 5, ready: 5 },
    faults: { seed: 1, rebootFailRate: 0.5 } as never,
    reboots: { soft: 1, hard: 1, failed: 1 },
    pools,
    events: hostileEvents(),
  };
}

// ---------------------------------------------------------------------------- checks

/** Characters that must never reach a terminal from data (the escapes of `visible`). */
export const UNSAFE_CHARS = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

/** The first unsafe character of a human output (newlines are the renderer's own), with context. */
export function firstUnsafe(out: string): string | null {
  const m = UNSAFE_CHARS.exec(out);
  if (!m) return null;
  return `U+${m[0].codePointAt(0)!.toString(16).padStart(4, '0')} at ${m.index}: ${JSON.stringify(out.slice(Math.max(0, m.index - 60), m.index + 20))}`;
}

/** The elements the report writes (HTML and its inline SVG chart), and nothing else. */
const TAGS = new Set([
  'html',
  'head',
  'meta',
  'title',
  'style',
  'body',
  'main',
  'header',
  'footer',
  'section',
  'h1',
  'h2',
  'h3',
  'p',
  'div',
  'span',
  'b',
  'small',
  'a',
  'ul',
  'li',
  'details',
  'summary',
  'pre',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'svg',
  'g',
  'rect',
  'line',
  'text',
]);
const ATTRIBUTES = new Set([
  'lang',
  'charset',
  'http-equiv',
  'content',
  'name',
  'class',
  'id',
  'href',
  'open',
  'data-nodes',
  'data-peak',
  'data-out-of-service',
  'viewBox',
  'width',
  'height',
  'role',
  'aria-label',
  'xmlns',
  'x',
  'y',
  'x1',
  'x2',
  'y1',
  'y2',
  'rx',
  'text-anchor',
]);

/**
 * Tokenises every markup start of `html` strictly: each `<` opens an allowed element (or closes
 * one) whose attributes are allowed names with double-quoted values free of `<` and `"`; a
 * `<` anywhere else would be data that reached the markup raw. Style sheet text is skipped.
 * Returns the problems found.
 */
export function markupProblems(html: string): string[] {
  const problems: string[] = [];
  const body = html.replace(/^<!doctype html>\n/, '').replace(/<style>[^<]*<\/style>/, '<style></style>');
  const tag = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z][a-zA-Z0-9-]*(?:="[^"<]*")?)*)\s*(\/?)>/y;
  for (let i = body.indexOf('<'); i >= 0; i = body.indexOf('<', i + 1)) {
    tag.lastIndex = i;
    const m = tag.exec(body);
    const at = JSON.stringify(body.slice(i, i + 80));
    if (!m) {
      problems.push(`markup that is not a well-formed element at ${i}: ${at}`);
      continue;
    }
    if (!TAGS.has(m[2])) problems.push(`element <${m[2]}> at ${i}: ${at}`);
    for (const a of m[3].matchAll(/([a-zA-Z][a-zA-Z0-9-]*)(?:="([^"]*)")?/g)) {
      if (!ATTRIBUTES.has(a[1])) problems.push(`attribute ${a[1]} at ${i}: ${at}`);
      if (a[1] === 'href' && !(a[2] ?? '').startsWith('#')) problems.push(`a link out of the report at ${i}: ${at}`);
      if (a[1] === 'http-equiv' && a[2] !== 'Content-Security-Policy') problems.push(`http-equiv=${a[2]} at ${i}`);
    }
  }
  return problems;
}
