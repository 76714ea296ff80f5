/**
 * Every figure of nodes out of service counts the same nodes (domain/budget.ts
 * outOfServiceAtOnce), read by headless Chromium (test/support/browser.ts) from the report the
 * CLI writes: the example cluster's worker-b-1 is cordoned by an administrator and stays out
 * while its pool rolls out in waves of 2 under maxUnavailable 3.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli } from '../support/cli.ts';
import { baseArgs, chromium, cleanUp, haveChromium, probeResult, withProbe } from '../support/browser.ts';

const s = suite('browser: nodes out of service');

const OOS_PROBE = `<script>
(() => {
  const figures = [...document.querySelectorAll('[data-out-of-service]')].map((e) => ({ where: e.closest('section,div.card')?.id || e.closest('div.card')?.querySelector('.label')?.innerText || '?', n: Number(e.getAttribute('data-out-of-service')), text: e.innerText }));
  const peaks = [...document.querySelectorAll('[data-peak]')].map((e) => Number(e.getAttribute('data-peak')));
  const pre = document.createElement('pre');
  pre.id = 'probe-result';
  pre.textContent = JSON.stringify({ figures, peaks, card: [...document.querySelectorAll('#summary .card')].map((c) => c.innerText.replace(/\\s+/g, ' ').trim()).find((t) => /^waves/i.test(t)) ?? null });
  document.body.appendChild(pre);
})();
</script>`;

s('rehearse -o html with a node already cordoned: the summary, the timeline and the table give the same most nodes out of service', async () => {
  if (!haveChromium()) return;
  const r = await cli(['rehearse', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml', '-o', 'html']);
  assert.is(r.code, 0, r.err);
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-browser-oos-'));
  writeFileSync(join(dir, 'probe.html'), withProbe(r.out, OOS_PROBE));
  try {
    const { stdout } = await chromium([...baseArgs(join(dir, 'profile'), 1280, 900), '--dump-dom', `file://${join(dir, 'probe.html')}`]);
    const got = probeResult<{ figures: { n: number; text: string }[]; peaks: number[]; card: string | null }>(stdout);
    assert.is(got.figures.length, 2, 'the summary card and the timeline caption');
    const summary = got.figures[0].n;
    const timeline = got.figures[1].n;
    const table = Math.max(...got.peaks);
    assert.equal([summary, timeline, table], [3, 3, 3], `summary ${summary}, timeline ${timeline}, table ${table}`);
    assert.match(got.card ?? '', /at most 3 nodes out of service at once \(1 already out of service included\)/i);
  } finally {
    cleanUp(dir);
  }
});

s.run();
