/**
 * docs/safety.md "What is masked in outputs": terminal control sequences from node names,
 * conditions and API messages never reach the terminal raw. Data is made visible (`visible`,
 * render/vocabulary.ts) wherever it enters a human output: the text plan, event lines and the live
 * progress block, rehearsal text, and (through the exported helpers) the CLI's messages. Only the
 * renderers' own colour and cursor codes reach a terminal. JSON outputs stay exact (same value)
 * but escape what a terminal acts on.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { renderText } from '../../src/render/text.ts';
import { planFileText } from '../../src/plan/saved/writer.ts';
import { formatEventLine, eventToNdjson, TtyProgress } from '../../src/render/events.ts';
import { renderRehearsalText, rehearsalJson } from '../../src/render/rehearsal.ts';
import { visible } from '../../src/render/vocabulary.ts';
import { jsonText } from '../../src/base/json-text.ts';
import { forDisplay } from '../../src/render/secrets.ts';
import { formatDiagnostic, type Diagnostic } from '../../src/base/diagnostics.ts';
import { demoPlan } from '../support/render.ts';
import { hostilePlan, hostileEvents, hostileRehearsal, firstUnsafe, PAYLOAD, FORGED, type HostileMode } from '../support/hostile.ts';

const s = suite('render-terminal');

/** The renderers' own escape sequences: SGR colours, and the progress block's cursor-up and erase. */
const OWN_SEQUENCES = /\x1b\[[0-9;]*[mAJ]/g;

function assertTerminalSafe(out: string, what: string) {
  assert.is(firstUnsafe(out.replace(OWN_SEQUENCES, '')), null, `${what}: a control, bidi or invisible character from data`);
  assert.not.ok(out.includes('\x1b]'), `${what}: an OSC sequence (hyperlink, title) from data`);
  assert.not.ok(out.includes('\x1b[2J'), `${what}: the screen-clearing sequence from data`);
  // Multi-line data (the spec file's diff, YAML block scalars in a change's diff) is shown line
  // by line, indented under its heading; a line of its own at the margin is the renderer's.
  for (const line of out.split('\n')) assert.not.ok(line.replace(OWN_SEQUENCES, '').startsWith(FORGED), `${what}: a line forged by a newline in data`);
}

s('visible: controls, bidi and invisible format characters read as escapes; everything else is untouched', () => {
  assert.is(visible('\x1b[31mred\x1b[0m'), '\\u001b[31mred\\u001b[0m');
  assert.is(visible('a\r\nb\tc\x08\x07\x00\x7f'), 'a\\u000d\\u000ab\\u0009c\\u0008\\u0007\\u0000\\u007f');
  assert.is(visible('\x9b31m \x85'), '\\u009b31m \\u0085');
  assert.is(
    visible('\u202aa\u202bb\u202cc\u202dd\u202ee\u2066f\u2067g\u2068h\u2069'),
    '\\u202aa\\u202bb\\u202cc\\u202dd\\u202ee\\u2066f\\u2067g\\u2068h\\u2069',
  );
  assert.is(visible('\u200e\u200f\u061c\u200b\u200d\u2060\ufeff\u00ad\u2028\u2029'), '\\u200e\\u200f\\u061c\\u200b\\u200d\\u2060\\ufeff\\u00ad\\u2028\\u2029');
  assert.is(visible('tag\u{e0041}'), 'tag\\u{e0041}');
  assert.is(visible('lone \ud800 surrogate'), 'lone \\ud800 surrogate');
  for (const plain of ['worker-a-1', 'us-east-1a', 'quay.io/org/os@sha256:0123', 'é 日本 🚀 → … ×', 'C:\\path \\u001b', '']) assert.is(visible(plain), plain);
});

for (const mode of ['strings', 'keep-enums', 'everything'] as HostileMode[]) {
  s(
    `text plan, hostile text in every ${mode === 'everything' ? 'field (numbers too)' : 'string field'}${mode === 'keep-enums' ? ' (actions, severities valid)' : ''}: nothing reaches the terminal raw`,
    () => {
      const plan = hostilePlan(mode);
      for (const opts of [{ color: false }, { color: true }, { color: false, full: true, ascii: true }, { color: true, maxNodeRows: 0 }]) {
        assertTerminalSafe(renderText(plan, opts), `text ${JSON.stringify(opts)}`);
      }
    },
  );
}

s('text plan: the hostile data is shown, escaped (not dropped)', () => {
  const out = renderText(hostilePlan('keep-enums'), { color: false });
  assert.ok(out.includes('\\u001b]8;;https://evil.example/\\u0007link'), 'the OSC sequence reads as text');
  assert.ok(out.includes('\\u202eevil\\u2066x\\u2069'), 'the bidi controls read as text');
  assert.ok(out.includes(`\\u000d\\u000a${FORGED}`), 'the line break reads as text');
});

s('event lines: node names, conditions and API messages of every event type are made visible', () => {
  for (const color of [false, true]) {
    for (const e of hostileEvents()) assertTerminalSafe(formatEventLine(e, { color }), `event ${e.type} (colour ${color})`);
  }
});

s('live progress block: only its own cursor and colour codes reach the terminal', () => {
  for (const color of [false, true]) {
    const tty = new TtyProgress({ color });
    const out = hostileEvents()
      .map((e) => tty.update(e))
      .join('');
    assertTerminalSafe(out, `progress (colour ${color})`);
    assert.ok(out.includes('\\u001b[2J'), 'the pool and node names are shown, escaped');
    for (const line of out.split('\n').filter((l) => l.includes('…'))) {
      assert.ok(!color || line.endsWith('…\x1b[0m'), `a line cut at the width resets its colours: ${JSON.stringify(line.slice(-40))}`);
    }
  }
});

s('rehearsal text (pools, failed nodes, stop reason, events): nothing reaches the terminal raw', () => {
  for (const mode of ['keep-enums', 'everything'] as HostileMode[]) {
    const r = hostileRehearsal(hostilePlan(mode));
    for (const color of [false, true]) assertTerminalSafe(renderRehearsalText(r, { color, events: true }), `rehearsal (${mode}, colour ${color})`);
  }
});

s('for the CLI: forDisplay makes a diagnostic (or any message) safe for stderr', () => {
  const d: Diagnostic = {
    severity: 'error',
    code: PAYLOAD,
    message: PAYLOAD,
    path: PAYLOAD,
    file: PAYLOAD,
    line: 1,
    column: 2,
    expected: PAYLOAD,
    hint: PAYLOAD,
  };
  assertTerminalSafe(formatDiagnostic(forDisplay(d)), 'diagnostic');
  assertTerminalSafe(forDisplay(`error: ${PAYLOAD}`), 'a message');
  assert.is(forDisplay('plain message: no change'), 'plain message: no change');
});

s('JSON outputs stay exact (same value) and escape what a terminal would act on', () => {
  const plan = hostilePlan('strings');
  const events = hostileEvents();
  const r = hostileRehearsal(plan);
  const json = planFileText(plan);
  assert.equal(JSON.parse(json), plan, 'the plan JSON is the same value');
  assert.is(firstUnsafe(json.replace(/\n/g, '')), null);
  for (const e of events) {
    const line = eventToNdjson(e);
    assert.equal(JSON.parse(line), e);
    assert.is(firstUnsafe(line.replace(/\n$/, '')), null);
  }
  assert.equal(JSON.parse(rehearsalJson(r)).events, events);
  assert.is(firstUnsafe(rehearsalJson(r).replace(/\n/g, '')), null);
  assert.is(jsonText({ a: 'é 日本 🚀' }), '{"a":"é 日本 🚀"}');
  assert.is(planFileText(demoPlan()), JSON.stringify(demoPlan(), null, 2) + '\n', 'ordinary plans: byte for byte what JSON.stringify writes');
});

s.run();
