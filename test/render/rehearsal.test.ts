/** `rehearse -o html`: the HTML report with the timeline drawn from a rehearsal's events. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderHtml } from '../../src/render/html/report.ts';
import { buildRehearsalTimeline } from '../../src/render/rehearsal-timeline.ts';
import { rehearsalJson, rehearsalReport, type RehearsalReport } from '../../src/render/rehearsal.ts';
import { rehearse, type Rehearsal } from '../../src/sim/rehearse.ts';
import type { ApplyEvent } from '../../src/apply/ports/events.ts';
import type { Plan } from '../../src/plan/types.ts';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import { buildPlan } from '../../src/plan/planner.ts';
import { run } from '../../src/cli/main.ts';
import { demoPlan, bigPlan, ROOT } from '../support/render.ts';
import { io } from '../support/cli.ts';

const s = suite('render-rehearsal');

function demoInputs() {
  const loaded = parseRolloutSpec(readFileSync(join(ROOT, 'examples/rollout.yaml'), 'utf8'), 'examples/rollout.yaml');
  const snapshot = parseSnapshot(readFileSync(join(ROOT, 'examples/cluster.yaml'), 'utf8'), 'examples/cluster.yaml').snapshot!;
  const plan = demoPlan();
  const replan = (snap: typeof snapshot) =>
    buildPlan({ spec: loaded.spec!, specMap: loaded.map, specInfo: plan.spec, snapshot: snap, specDiagnostics: loaded.diagnostics });
  return { plan, replan, snapshot };
}

async function demoRehearsal(faults: { seed: number; rebootFailRate: number } | null = null): Promise<{ plan: Plan; r: RehearsalReport }> {
  const { plan, replan, snapshot } = demoInputs();
  const { rehearsal, error } = await rehearse({ plan, replan, snapshot, faults });
  return { plan, r: rehearsalReport(rehearsal, error) };
}

/** A rehearsal made up from the plan's waves and durations (the renderer only reads the JSON). */
function syntheticRehearsal(plan: Plan): RehearsalReport {
  const d = plan.durations;
  const events: ApplyEvent[] = [];
  const pools: Rehearsal['pools'] = [];
  let t = 0;
  let soft = 0,
    hard = 0;
  for (const p of plan.pools) {
    const byName = new Map(p.nodes.map((n) => [n.name, n]));
    const waves: Rehearsal['pools'][number]['waves'] = [];
    p.waves.forEach((w, i) => {
      const start = t;
      events.push({ t: start, type: 'wave-start', pool: p.name, wave: i + 1, waves: p.waves.length, nodes: w });
      let end = start;
      for (const name of w) {
        const kind = byName.get(name)!.reboot === 'soft' ? 'soft' : 'hard';
        if (kind === 'soft') soft++;
        else hard++;
        const back = start + d.drain + (kind === 'soft' ? d.softReboot : d.reboot) + d.ready;
        events.push({ t: start, type: 'cordon', pool: p.name, node: name, wave: i + 1 });
        events.push({ t: start + d.drain, type: 'drain-done', pool: p.name, node: name, wave: i + 1 });
        events.push({ t: start + d.drain, type: 'reboot', pool: p.name, node: name, wave: i + 1, kind });
        events.push({ t: back, type: 'booted', pool: p.name, node: name, wave: i + 1 });
        events.push({ t: back, type: 'uncordon', pool: p.name, node: name, wave: i + 1 });
        end = Math.max(end, back);
      }
      events.push({ t: end, type: 'wave-end', pool: p.name, wave: i + 1, waves: p.waves.length });
      waves.push({ wave: i + 1, start, end, nodes: w });
      t = end + (i < p.waves.length - 1 ? p.soakSeconds : 0);
    });
    pools.push({
      name: p.name,
      backend: p.backend,
      maxUnavailable: p.maxUnavailable.resolved,
      peakUnavailable: Math.max(0, ...p.waves.map((w) => w.length)),
      waves,
      failedNodes: [],
    });
  }
  return {
    planId: plan.id,
    durationSeconds: t,
    estimatedSeconds: plan.summary.estimatedSeconds,
    halted: false,
    stopped: null,
    exitCode: 0,
    durations: d,
    faults: null,
    reboots: { soft, hard, failed: 0 },
    pools,
    events,
  };
}

s('the demo rehearsal report: rehearsal figures against the plan, and a timeline from the events', async () => {
  const { plan, r } = await demoRehearsal();
  assert.is(r.exitCode, 0);
  const html = renderHtml(plan, { rehearsal: r });
  assert.ok(html.startsWith('<!doctype html>'));
  assert.not.match(html, /<script|<link|<img/i);
  for (const id of ['rehearsal', 'rehearsal-line', 'rehearsal-pools', 'summary', 'timeline', 'timeline-chart']) assert.match(html, new RegExp(`id="${id}"`));
  assert.match(html, /<h1>bootcplan rehearsal of plan/);
  assert.match(
    html,
    new RegExp(
      `Rehearsal done in [0-9hms]+ \\(${r.durationSeconds.toLocaleString('en-US')} s\\): .*the plan&#39;s estimate of [0-9hms]+ \\(${plan.summary.estimatedSeconds.toLocaleString('en-US')} s\\)`,
    ),
  );
  for (const p of r.pools) assert.match(html, new RegExp(`data-peak="${p.peakUnavailable}">${p.peakUnavailable} / ${p.maxUnavailable}<`));
  // The installed bootc-operator performs no soft reboots (src/domain/bootc-daemon.ts).
  assert.match(html, /Reboots: 11 hard, 0 soft/);
  assert.match(html, /class="chart rehearsal"/);
  assert.match(html, /Wave timeline \(rehearsal\)/);
  assert.match(html, /class="estimate"/);
  assert.is((html.match(/<g class="row node"/g) ?? []).length, 11);
  assert.not.match(html, /id="rehearsal-failed"/);
  // The plan report without a rehearsal is unchanged in kind.
  assert.not.match(renderHtml(plan), /id="rehearsal"/);
});

s('rehearsal timeline: a node bar runs from its cordon to its uncordon, phases and staging from the events', async () => {
  const { plan, r } = await demoRehearsal();
  const tl = buildRehearsalTimeline(plan, r);
  assert.is(tl.granularity, 'node');
  assert.is(tl.totalSeconds, r.durationSeconds);
  const at = (node: string, type: string) => r.events.find((e) => 'node' in e && e.node === node && e.type === type)!.t;
  for (const row of tl.rows.filter((x) => x.kind === 'node')) {
    const sp = row.spans[0];
    assert.is(sp.start, at(row.label, 'cordon'), row.label);
    assert.is(sp.end, at(row.label, 'uncordon'), row.label);
    assert.is(sp.phases![0].kind, 'drain');
    assert.is(sp.phases![0].end, at(row.label, 'drain-done'));
    const reboot = sp.phases!.find((p) => p.kind === 'reboot' || p.kind === 'soft-reboot')!;
    assert.is(reboot.start, at(row.label, 'reboot'));
    assert.is(reboot.kind, r.events.filter((e) => e.type === 'reboot').find((e) => e.node === row.label)!.kind === 'soft' ? 'soft-reboot' : 'reboot');
  }
  // worker-a-0 staged during the rehearsal: its staging bar is stage-start -> staged
  const a0 = tl.rows.find((x) => x.label === 'worker-a-0')!.spans[0];
  assert.equal([a0.staging!.start, a0.staging!.end], [at('worker-a-0', 'stage-start'), at('worker-a-0', 'staged')]);
  const staging = tl.rows.filter((x) => x.kind === 'staging');
  assert.is(staging.length, 2, 'one staging row per bootc pool that staged');
  // waves: wave-start to wave-end
  const lane = tl.pools.find((p) => p.name === 'worker')!;
  const rw = r.pools.find((p) => p.name === 'worker')!.waves;
  assert.equal(
    lane.waves.map((w) => [w.start, w.end]),
    rw.map((w) => [w.start, w.end]),
  );
});

s('a halted rehearsal names the failed nodes and marks them in the chart', async () => {
  const { plan, r } = await demoRehearsal({ seed: 7, rebootFailRate: 1 });
  assert.is(r.exitCode, 5);
  const html = renderHtml(plan, { rehearsal: r });
  const failed = r.pools.flatMap((p) => p.failedNodes);
  assert.ok(failed.length >= 1);
  assert.match(html, /Rehearsal halted after/);
  assert.match(html, /id="rehearsal-failed"/);
  for (const n of failed) assert.match(html, new RegExp(`Failed nodes?: <span class="mono">[^<]*${n}`));
  assert.match(html, /class="bar-outline failed"/);
});

s("a halted rehearsal: the chart's axis ends with the run, not at the plan's estimate, which is marked beyond the edge", async () => {
  const { plan, r } = await demoRehearsal({ seed: 7, rebootFailRate: 1 });
  assert.ok(r.estimatedSeconds > 1.5 * r.durationSeconds, `${r.durationSeconds} of ${r.estimatedSeconds}`);
  const html = renderHtml(plan, { rehearsal: r });
  const svg = html.slice(html.indexOf('<svg id="timeline-chart"'), html.indexOf('</svg>'));
  // the time axis runs from x=200 to x=1064 (chart.ts X0, X1): the run's end sits at the axis end
  const end = /<line class="end" x1="([\d.]+)"/.exec(svg);
  assert.is(Number(end?.[1]), 1064, 'the rehearsal end is the axis end');
  const ticks = [...svg.matchAll(/<line class="grid" x1="([\d.]+)"/g)].map((m) => Number(m[1]));
  assert.ok(ticks.length >= 2 && ticks.every((x) => x >= 200 && x <= 1064), String(ticks));
  // ticks are minutes of the run, never hours of the estimate
  const labels = [...svg.matchAll(/<text class="tick"[^>]*>([^<]+)</g)].map((m) => m[1]);
  assert.ok(
    labels.every((l) => !/h/.test(l)),
    labels.join(' '),
  );
  assert.not.match(svg, /<line class="estimate" x1="[\d.]+" y1="22"/, 'no estimate line inside the axis');
  const mark = /<g class="estimate-beyond" data-estimate="([\d.]+)">.*?<text[^>]*>([^<]+)<\/text>/.exec(svg);
  assert.is(Number(mark?.[1]), r.estimatedSeconds);
  assert.match(mark?.[2] ?? '', /^plan estimate [0-9hms]+, beyond this axis$/);
  assert.match(html, /far beyond this run: the axis ends with the run/);
});

s('a rehearsal close to its estimate keeps both on the axis (the estimate as a dashed line)', async () => {
  const { plan, r } = await demoRehearsal();
  const html = renderHtml(plan, { rehearsal: r });
  assert.match(html, /<line class="estimate" x1="[\d.]+" y1="22"/);
  assert.not.match(html, /estimate-beyond/);
});

s('the renderer is pure: the rehearsal read back from its JSON renders the same report', async () => {
  const { plan, r } = await demoRehearsal();
  const back = JSON.parse(rehearsalJson(r)) as RehearsalReport;
  assert.is(renderHtml(plan, { rehearsal: back }), renderHtml(plan, { rehearsal: r }));
});

s('10,000 nodes: the rehearsal chart aggregates rows (per wave, then per run of waves) and stays small', () => {
  const perWave = bigPlan();
  const tl = buildRehearsalTimeline(perWave, syntheticRehearsal(perWave));
  assert.is(tl.granularity, 'wave');
  assert.is(tl.rows.filter((x) => x.kind === 'waves').length, 11);
  assert.is(tl.totalSeconds, perWave.summary.estimatedSeconds);

  const plan = bigPlan(10_000, 10);
  const r = syntheticRehearsal(plan);
  const html = renderHtml(plan, { rehearsal: r });
  const chart = html.slice(html.indexOf('<svg id="timeline-chart"'), html.indexOf('</svg>'));
  assert.ok(html.length < 1_500_000, `${html.length} bytes`);
  assert.ok((chart.match(/<rect/g) ?? []).length < 1500, `${(chart.match(/<rect/g) ?? []).length} rects`);
  const rows = (chart.match(/<g class="row waves"/g) ?? []).length;
  assert.ok(rows > 1 && rows <= 60, `${rows} rows`);
  assert.not.match(chart, /<g class="row node"/);
  assert.match(html, /one row per run of waves/);
  assert.match(html, /Rehearsal done in/);
});

s('CLI: rehearse -o html prints the report', async () => {
  const o = io();
  const code = await run(['rehearse', '-f', join(ROOT, 'examples/rollout.yaml'), '--cluster', join(ROOT, 'examples/cluster.yaml'), '-o', 'html'], { io: o });
  assert.is(code, 0, o.err);
  assert.ok(o.out.startsWith('<!doctype html>'));
  assert.match(o.out, /id="rehearsal"/);
  assert.match(o.out, /Rehearsal done in/);
});

s.run();
