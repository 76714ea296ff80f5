import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { demoPlan, bigPlan, golden } from '../support/render.ts';
import { renderText } from '../../src/render/text.ts';
import { renderMarkdown } from '../../src/render/markdown.ts';
import { renderHtml } from '../../src/render/html/report.ts';
import { run } from '../../src/cli/main.ts';
import { renderPlan } from '../../src/render/formats.ts';
import { io } from '../support/cli.ts';

const s = suite('render');
const ANSI = /\x1b\[/;

s('golden: text of the demo plan (no colour, ASCII)', async () => {
  golden('demo.txt', await renderPlan(demoPlan(), 'text', { color: false }));
});

s('golden: text of the demo plan with --full', async () => {
  golden('demo-full.txt', await renderPlan(demoPlan(), 'text', { color: false, full: true }));
});

s('golden: markdown of the demo plan', () => {
  golden('demo.md', renderMarkdown(demoPlan()));
});

s('golden: HTML of the demo plan', () => {
  golden('demo.html', renderHtml(demoPlan()));
});

s('text: the last line is the plan line; no colour and plain ASCII when colour is off', async () => {
  const out = await renderPlan(demoPlan(), 'text', { color: false });
  const lines = out.trimEnd().split('\n');
  assert.match(lines[lines.length - 1], /^Plan: \d+ to create, \d+ to change, \d+ to delete; \d+ nodes in \d+ waves \(est\. [0-9hms]+\)\.$/);
  assert.not.match(out, ANSI);
  assert.ok(/^[\x00-\x7e]*$/.test(out), 'ASCII only: ' + [...new Set(out.replace(/[\x00-\x7e]/g, ''))].join(''));
  assert.match(out, /sha256:[0-9a-f]{8}\.\.\. -> sha256:[0-9a-f]{8}\.\.\./);
});

s('text: colour on request, with the same words', () => {
  const plain = renderText(demoPlan(), { color: false });
  const col = renderText(demoPlan(), { color: true });
  assert.match(col, ANSI);
  assert.is(col.replace(/\x1b\[[0-9;]*m/g, ''), plain);
});

s('text: identical node changes are grouped with folded names', () => {
  const out = renderText(demoPlan());
  // The installed bootc-operator performs no soft reboots (src/domain/bootc-daemon.ts): AllowSoftReboot plans hard ones.
  assert.match(
    out,
    /~ 8 nodes: sha256:2d2adc23… -> sha256:e26b09de…, hard reboot, 3 staged, waves 1-4: worker-a-0\.\.worker-a-2, worker-b-0, worker-b-2, worker-c-0\.\.worker-c-2/,
  );
  assert.match(out, /! 1 node: .*not scheduled \(cordoned\): worker-b-1/);
});

s('text at 10,000 nodes stays short: groups and runs of waves, no per-node lines', () => {
  const plan = bigPlan();
  const out = renderText(plan);
  assert.ok(out.length < 8000, `text is ${out.length} characters`);
  assert.ok(out.split('\n').length < 80, `${out.split('\n').length} lines`);
  // staged nodes first, and among them the soft reboots (waves of their own), then the hard ones
  assert.match(out, /~ 1500 nodes: sha256:[0-9a-f]{8}… -> sha256:[0-9a-f]{8}…, soft reboot, staged, waves 1-2: worker-a-\d+\.\.worker-a-\d+/);
  assert.match(out, /~ 1500 nodes: sha256:[0-9a-f]{8}… -> sha256:[0-9a-f]{8}…, hard reboot, staged, waves 2-4: /);
  assert.match(out, /waves 1-10 +995 nodes each/);
  assert.match(out, /Plan: 0 to create, \d+ to change, 0 to delete; 9995 nodes in 11 waves/);
});

const DEMO_ARGS = ['plan', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml'];

s('CLI: colour only on a TTY, NO_COLOR respected', async () => {
  const tty = io({ env: {}, stdoutIsTTY: true, stderrIsTTY: true });
  await run(DEMO_ARGS, { io: tty });
  assert.match(tty.out, ANSI);
  const noColor = io({ env: { NO_COLOR: '1' }, stdoutIsTTY: true, stderrIsTTY: true });
  await run(DEMO_ARGS, { io: noColor });
  assert.not.match(noColor.out, ANSI);
  const pipe = io({ env: {} });
  await run(DEMO_ARGS, { io: pipe });
  assert.not.match(pipe.out, ANSI);
});

s('CLI: -o markdown and -o html, --detailed-exitcode exits 2 with changes', async () => {
  const md = io({ env: {} });
  const code = await run([...DEMO_ARGS, '-o', 'markdown', '--detailed-exitcode'], { io: md });
  assert.is(code, 2, md.err);
  assert.ok(md.out.startsWith('<!-- bootcplan:plan spec=examples/rollout.yaml -->\n'), md.out.slice(0, 100));
  const html = io({ env: {} });
  assert.is(await run([...DEMO_ARGS, '-o', 'html'], { io: html }), 0, html.err);
  assert.ok(html.out.startsWith('<!doctype html>'));
  const bad = io({ env: {} });
  assert.is(await run([...DEMO_ARGS, '-o', 'pdf'], { io: bad }), 1);
});

s.run();
