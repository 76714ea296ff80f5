/**
 * Headless Chromium (Debian package `chromium`) for the suites that open a report as a reviewer
 * would (test/render/browser-*.test.ts): a probe script is injected into a copy of the report
 * (the report itself carries no script and forbids one by CSP); it writes its measurements into
 * the DOM, which `--dump-dom` prints. The suites are split by topic so the test runner's workers
 * run them side by side (docs/development.md "Tests in parallel").
 *
 * Chromium missing: each test is skipped locally (test/support/skips.ts) and fails when CI=true
 * (CI installs it).
 */
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { skipLocally } from './skips.ts';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** Whether the calling test can drive Chromium; if not it is skipped (a failure in CI) and returns. */
export function haveChromium(): boolean {
  if (existsSync(CHROMIUM)) return true;
  skipLocally(CHROMIUM, 'install the Debian package "chromium"; CI=true makes this a failure');
  return false;
}

const LAYOUT_PROBE = `<script>
(() => {
  const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; };
  const chart = document.getElementById('timeline-chart');
  const bars = chart ? [...chart.querySelectorAll('rect.bar')] : [];
  const visibleBars = bars.filter((b) => { const r = b.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length;
  const labels = chart ? [...chart.querySelectorAll('text.row-label')].map(box) : [];
  const firstBar = bars.length ? box(bars[0]) : null;
  const cards = [...document.querySelectorAll('#summary .card')].map((c) => ({ text: c.innerText.replace(/\\s+/g, ' ').trim(), box: box(c) }));
  const overflowing = [...document.querySelectorAll('#summary .card .value')].filter((v) => v.scrollWidth > v.clientWidth + 1).length;
  const out = {
    title: document.title,
    planline: document.getElementById('planline')?.innerText ?? null,
    chart: box(chart),
    bars: bars.length,
    visibleBars,
    rows: chart ? chart.querySelectorAll('g.row').length : 0,
    labelsRightEdge: labels.length ? Math.max(...labels.map((l) => l.x + l.w)) : null,
    firstBarX: firstBar ? firstBar.x : null,
    cards,
    overflowingCardValues: overflowing,
    pageScrollWidth: document.documentElement.scrollWidth,
    viewportWidth: window.innerWidth,
    resources: performance.getEntriesByType('resource').length,
    font: getComputedStyle(document.body).fontFamily,
    tags: [...new Set([...document.querySelectorAll('*')].map((e) => e.localName))].sort(),
    baseURI: document.baseURI,
    location: location.href,
  };
  const pre = document.createElement('pre');
  pre.id = 'probe-result';
  pre.hidden = true;
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>`;

export function chromium(args: string[], timeoutMs = 90_000): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(CHROMIUM, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`chromium failed: ${err.message}\n${stderr.slice(-2000)}`));
      else resolve({ stdout, stderr });
    });
  });
}

export function baseArgs(profile: string, width: number, height: number): string[] {
  return [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-default-apps',
    '--disable-extensions',
    '--hide-scrollbars',
    '--mute-audio',
    `--user-data-dir=${profile}`,
    `--window-size=${width},${height}`,
  ];
}

/** The report with `script` injected before `</body>`, its CSP relaxed for that one inline script. */
export function withProbe(html: string, script: string): string {
  return html
    .replace(
      /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/,
      (_m, csp: string) =>
        `<meta http-equiv="Content-Security-Policy" content="${csp.replace("default-src 'none'", "default-src 'none'; script-src 'unsafe-inline'")}">`,
    )
    .replace('</body>', `${script}\n</body>`);
}

/** What the probe wrote into the DOM dump. */
export function probeResult<T>(dom: string): T {
  const m = /<pre id="probe-result"[^>]*>(.*?)<\/pre>/s.exec(dom);
  assert.ok(m, `no probe result in the DOM dump:\n${dom.slice(0, 2000)}`);
  return JSON.parse(
    m![1]
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&'),
  ) as T;
}

export interface Probe {
  title: string;
  planline: string | null;
  chart: { x: number; y: number; w: number; h: number } | null;
  bars: number;
  visibleBars: number;
  rows: number;
  labelsRightEdge: number | null;
  firstBarX: number | null;
  cards: { text: string; box: { w: number; h: number } }[];
  overflowingCardValues: number;
  pageScrollWidth: number;
  viewportWidth: number;
  resources: number;
  font: string;
  /** Every element name in the document (the probe adds its own script and pre). */
  tags: string[];
  baseURI: string;
  location: string;
}

/**
 * Opens the report with the layout probe; with `shot`, the same Chromium run takes a screenshot
 * too (one browser start instead of two: the probe's result is hidden, so the screenshot shows
 * the report alone).
 */
export async function probe(html: string, name: string, width = 1280, shot = true): Promise<{ probe: Probe; png: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), `bootcplan-browser-${name}-`));
  writeFileSync(join(dir, 'probe.html'), withProbe(html, LAYOUT_PROBE));
  const png = join(dir, 'report.png');
  const args = [...baseArgs(join(dir, 'profile'), width, shot ? 2400 : 900), '--dump-dom', ...(shot ? [`--screenshot=${png}`] : [])];
  const { stdout } = await chromium([...args, `file://${join(dir, 'probe.html')}`]);
  return { probe: probeResult<Probe>(stdout), png, dir };
}

export function pngSize(file: string): { width: number; height: number } {
  const b = readFileSync(file);
  assert.is(b.subarray(1, 4).toString('latin1'), 'PNG');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

/** The summary and the wave timeline chart laid out: cards legible, bars visible, nothing fetched. */
export function checkLayout(p: Probe, wantRows: number): void {
  assert.ok(p.planline && /^Plan: \d+ to create/.test(p.planline), `plan line: ${p.planline}`);
  assert.ok(p.cards.length >= 8, `${p.cards.length} summary cards`);
  for (const c of p.cards) assert.ok(c.box.w > 100 && c.box.h > 40, `card "${c.text}" is ${c.box.w}x${c.box.h}`);
  assert.is(p.overflowingCardValues, 0, 'no summary value overflows its card');
  assert.ok(p.chart && p.chart.w >= 700 && p.chart.h >= 150, `chart box ${JSON.stringify(p.chart)}`);
  assert.ok(p.bars > 0 && p.visibleBars === p.bars, `${p.visibleBars} of ${p.bars} bars visible`);
  assert.is(p.rows, wantRows);
  assert.ok(
    p.labelsRightEdge !== null && p.firstBarX !== null && p.labelsRightEdge <= p.firstBarX + 1,
    `row labels (right edge ${p.labelsRightEdge}) stay left of the bars (${p.firstBarX})`,
  );
  assert.ok(p.pageScrollWidth <= p.viewportWidth, `page scrolls sideways: ${p.pageScrollWidth} > ${p.viewportWidth}`);
  assert.is(p.resources, 0, 'nothing is fetched');
}

/** Removes a test's output; `keepable` output stays when KEEP_BROWSER_OUTPUT is set (and says where). */
export function cleanUp(dir: string, keepable = false): void {
  if (keepable && process.env.KEEP_BROWSER_OUTPUT) console.log(`browser output kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
