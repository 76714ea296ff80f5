/**
 * `rehearse` and `fleet rehearse` keep the maintenance windows (docs/apply.md "Rehearsal and
 * maintenance windows"): the Sunday-only example and the stores fleet (Berlin weeknights 22:00,
 * Singapore Sundays 01:00), from the clock port's now or --start.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli } from '../support/cli.ts';
import { openWindowAt } from '../../src/domain/windows.ts';

const s = suite('rehearse keeps the windows (cli)');

// Monday 2026-12-07 10:00 UTC.
const MONDAY = Date.parse('2026-12-07T10:00:00Z');
const SUNDAY = { schedule: '0 1 * * 0', duration: '8h', timezone: 'Asia/Singapore' };

s('the Sunday-only example started on a Monday: the first wave on Sunday inside the window, the makespan counts the wait', async () => {
  const r = await cli(['rehearse', '-f', 'examples/sunday.yaml', '--cluster', 'examples/cluster.yaml', '-o', 'json'], { now: () => MONDAY });
  assert.is(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.is(j.windows.start, '2026-12-07T10:00:00.000Z');
  assert.equal(j.windows.windows, [SUNDAY]);
  const opens = (Date.parse('2026-12-12T17:00:00Z') - MONDAY) / 1000;
  assert.equal(
    j.windows.waits.map((w: any) => [w.start, w.end, w.opens]),
    [[0, opens, '2026-12-12T17:00:00.000Z']],
  );
  const starts = j.events.filter((e: any) => e.type === 'wave-start').map((e: any) => e.t);
  for (const t of starts) assert.ok(openWindowAt([SUNDAY], MONDAY + t * 1000), `wave at +${t}s is inside the Sunday window`);
  assert.ok(Math.min(...starts) >= opens);
  assert.ok(j.durationSeconds >= opens + j.estimatedSeconds * 0.9, `${j.durationSeconds}s counts the ${opens}s wait and the ${j.estimatedSeconds}s of work`);
});

s('the Sunday example in text: the rule, the wait and the duration that counts it; --start inside the window waits for nothing', async () => {
  const r = await cli(['rehearse', '-f', 'examples/sunday.yaml', '--cluster', 'examples/cluster.yaml'], { now: () => MONDAY });
  assert.is(r.code, 0, r.err);
  assert.match(
    r.out,
    /Windows: started Mon 2026-12-07 18:00 Asia\/Singapore; 0 1 \* \* 0 for 8h \(Asia\/Singapore\); rule: apply starts only inside a maintenance window/,
  );
  assert.match(r.out, /waited 5d7h before the first write \(outside the windows\) until Sun 2026-12-13 01:00 Asia\/Singapore/);
  assert.match(r.out, /Rehearsal: done in 5d8h\d*m? \(\d+s, of which 5d7h waiting for windows; plan estimate 1h11m\)/);
  const inside = await cli(['rehearse', '-f', 'examples/sunday.yaml', '--cluster', 'examples/cluster.yaml', '--start', '2026-12-13T01:00:00+08:00'], {
    now: () => MONDAY,
  });
  assert.is(inside.code, 0, inside.err);
  assert.match(inside.out, /no wait for a window/);
  assert.match(inside.out, /Rehearsal: done in 1h11m \(4290s; plan estimate 1h11m\)/);
});

s('the Sunday example as -o markdown: the rehearsal marker, the wait, and "done in" counting it', async () => {
  const r = await cli(['rehearse', '-f', 'examples/sunday.yaml', '--cluster', 'examples/cluster.yaml', '-o', 'markdown'], { now: () => MONDAY });
  assert.is(r.code, 0, r.err);
  assert.is(r.out.split('\n')[0], '<!-- bootcplan:rehearsal spec=examples/sunday.yaml -->');
  assert.match(r.out, /^- 0s: waited 5d7h before the first write \(outside the windows\) until Sun 2026-12-13 01:00 Asia\/Singapore$/m);
  assert.match(r.out, /\*\*Rehearsal: done in 5d8h\d*m? \(\d+s, of which 5d7h waiting for windows; plan estimate 1h11m\)/);
});

s('--start that is no time: one line naming the flag, what was expected and an example, exit 1', async () => {
  for (const bad of ['2026-12-13 01:00', '2026-02-30T01:00:00Z', 'sunday', '2026-12-13T01:00:00']) {
    const r = await cli(['rehearse', '-f', 'examples/sunday.yaml', '--cluster', 'examples/cluster.yaml', '--start', bad]);
    assert.is(r.code, 1, bad);
    assert.match(r.err, new RegExp(`--start "${bad}": expected a date and time with its offset`));
    assert.match(r.err, /e\.g\. --start 2026-12-13T01:00:00\+08:00/);
    assert.not.match(r.err, /\n\s+at /, 'no stack trace');
  }
});

/** The stores fleet with another batch timeout (committed: a week, long enough for Singapore's Sunday). */
function storesFleet(timeoutSeconds: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-fleet-windows-'));
  cpSync('examples/fleet', dir, { recursive: true });
  const file = join(dir, 'fleet.yaml');
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text.replace(/batchTimeoutSeconds: \d+/, `batchTimeoutSeconds: ${timeoutSeconds}`));
  return file;
}

s('fleet rehearse of the stores: Berlin starts in its weeknight window, Singapore in its Sunday one, each in its own time zone', async () => {
  const r = await cli(['fleet', 'rehearse', '-f', 'examples/fleet/fleet.yaml', '-o', 'json', '--start', '2026-12-07T12:00:00Z'], {
    io: { stderrColumns: 100 },
  });
  assert.is(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  const c = (name: string) => j.clusters.find((x: any) => x.name === name);
  const berlin = { schedule: '0 22 * * 1-5', duration: '6h', timezone: 'Europe/Berlin' };
  assert.equal(c('store-berlin').windows.windows, [berlin]);
  assert.equal(c('store-singapore').windows.windows, [SUNDAY]);
  for (const [name, w] of [
    ['store-nyc', { ...berlin, timezone: 'America/New_York' }],
    ['store-berlin', berlin],
    ['store-singapore', SUNDAY],
  ] as const) {
    const first = c(name).windows.firstWave;
    assert.ok(first, `${name} started a wave`);
    assert.ok(openWindowAt([w], Date.parse(first.at)), `${name}'s first wave at ${first.at} is inside ${w.schedule} ${w.timezone}`);
  }
  assert.ok(Date.parse(c('store-singapore').windows.firstWave.at) >= Date.parse('2026-12-12T17:00:00Z'), 'Singapore waits for Sunday 01:00 SGT');
  assert.ok(c('store-singapore').windows.waitedSeconds > 0);
  assert.ok(j.makespanSeconds >= (Date.parse('2026-12-12T17:00:00Z') - Date.parse('2026-12-07T12:00:00Z')) / 1000, 'the makespan counts the wait for Sunday');
  // The HTML chart draws each cluster's waits over its bar, where the JSON puts them on the fleet's axis.
  const h = await cli(['fleet', 'rehearse', '-f', 'examples/fleet/fleet.yaml', '-o', 'html', '--start', '2026-12-07T12:00:00Z'], {
    io: { stderrColumns: 100 },
  });
  assert.is(h.code, 0, h.err);
  const bars = [...h.out.matchAll(/<rect class="bar window-wait" data-start="([\d.]+)" data-seconds="([\d.]+)"[^>]*><title>([^:<]+):/g)].map((m) => [
    m[3],
    Number(m[1]),
    Number(m[2]),
  ]);
  const expected = j.clusters.flatMap((x: any) =>
    (x.windows?.fleetWaits ?? []).filter((w: any) => w.end > w.start).map((w: any) => [x.name, w.start, w.end - w.start]),
  );
  assert.ok(
    expected.some((w: any) => w[0] === 'store-singapore'),
    'Singapore waits',
  );
  const byName = (a: any[], b: any[]) => String(a[0]).localeCompare(String(b[0])) || a[1] - b[1];
  assert.equal(bars.sort(byName), expected.map((w: any) => [w[0], Math.round(w[1] * 10) / 10, Math.round(w[2] * 10) / 10]).sort(byName));
  assert.match(h.out, /<span class="sw window-wait"><\/span>wait for a maintenance window/);
});

s('fleet rehearse -o markdown: each store in its own window and time zone, its wait and first wave, the makespan counting them', async () => {
  const r = await cli(['fleet', 'rehearse', '-f', 'examples/fleet/fleet.yaml', '-o', 'markdown', '--start', '2026-12-07T12:00:00Z'], {
    io: { stderrColumns: 100 },
  });
  assert.is(r.code, 0, r.err);
  assert.is(r.out.split('\n')[0], '<!-- bootcplan:fleet-rehearsal fleet=stores -->');
  assert.match(
    r.out,
    /^- store-berlin: 0 22 &#42; &#42; 1-5 for 6h \(Europe\/Berlin\); waited \S+ before the first write \(outside the windows\) until Tue 2026-12-08 22:00 Europe\/Berlin .*first wave Tue 2026-12-08 22:00 Europe\/Berlin/m,
  );
  assert.match(
    r.out,
    /^- store-singapore: 0 1 &#42; &#42; 0 for 8h \(Asia\/Singapore\); waited \S+ before the first write \(outside the windows\) until Sun 2026-12-13 01:00 Asia\/Singapore .*first wave Sun 2026-12-13 01:00 Asia\/Singapore/m,
  );
  assert.match(r.out, /\*\*Fleet rehearsal: done in 5d\d+h\d*m? /);
  assert.match(r.out, /^\| store-singapore \| 2 \| done \| /m);
});

s('fleet rehearse of the stores with a 12 h batch timeout: it cannot wait for the windows, and the rehearsal says so', async () => {
  const r = await cli(['fleet', 'rehearse', '-f', storesFleet(43200), '--start', '2026-12-07T12:00:00Z'], { io: { stderrColumns: 100 } });
  assert.is(r.code, 5, r.err);
  assert.match(
    r.out,
    /store-nyc: 0 22 \* \* 1-5 for 6h \(America\/New_York\); waited 15h before the first write \(outside the windows\) until Mon 2026-12-07 22:00 America\/New_York/,
  );
  assert.match(r.out, /store-nyc +1 canary +timed-out/);
  assert.match(r.out, /store-singapore +2 +not-started/);
});

s.run();
