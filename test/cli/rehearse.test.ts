import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/cli/main.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { newSim } from '../support/apply.ts';
import type { DriverFactory } from '../../src/app/ports.ts';
import { readSnapshotFile, nodeInputs } from '../../src/app/inputs.ts';
import { inDir, io } from '../support/cli.ts';

const s = suite('rehearse and apply CLI');

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-rehearse-'));
const specFile = join(dir, 'rollout.yaml');
const clusterFile = join(dir, 'cluster.yaml');
const changedFile = join(dir, 'changed.yaml');
writeFileSync(specFile, specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 60 }]));
const ns = nodes('w', 6);
ns[0].cordoned = true;
writeFileSync(clusterFile, new ClusterBuilder().bootcPool('worker', ns).yaml());
writeFileSync(changedFile, new ClusterBuilder().bootcPool('worker', nodes('w', 7)).yaml());

s('rehearse -o json prints durationSeconds, halted, pools and events; agrees with the plan estimate', async () => {
  const o = io();
  const code = await run(['rehearse', '-f', specFile, '--cluster', clusterFile, '-o', 'json'], { io: o });
  assert.is(code, 0, o.err);
  const r = JSON.parse(o.out);
  assert.is(r.halted, false);
  assert.ok(r.durationSeconds > 0);
  assert.is(r.pools[0].name, 'worker');
  assert.is(r.pools[0].maxUnavailable, 2);
  assert.is(r.pools[0].peakUnavailable, 2, 'the admin-cordoned node uses one slot');
  assert.equal(r.pools[0].failedNodes, []);
  assert.ok(r.pools[0].waves.length >= 5);
  assert.ok(r.events.some((e: any) => e.type === 'reboot' && e.kind === 'hard'));
  assert.ok(Math.abs(r.durationSeconds - r.estimatedSeconds) <= r.estimatedSeconds * 0.02, `${r.durationSeconds} vs ${r.estimatedSeconds}`);
});

s('rehearse with --fail-rate 1 halts with exit 5 and names the failed node', async () => {
  const o = io();
  const code = await run(['rehearse', '-f', specFile, '--cluster', clusterFile, '--fail-rate', '1', '--seed', '7', '-o', 'json'], { io: o });
  assert.is(code, 5);
  const r = JSON.parse(o.out);
  assert.is(r.halted, true);
  assert.ok(r.pools[0].failedNodes.length >= 1);
  assert.match(o.err, /rollout halted/);
});

s('rehearse text output and --durations', async () => {
  const o = io();
  const code = await run(['rehearse', '-f', specFile, '--cluster', clusterFile, '--durations', 'stage=60,drain=10,reboot=100,ready=0'], { io: o });
  assert.is(code, 0, o.err);
  assert.match(o.out, /Rehearsal: done in/);
  assert.match(o.out, /peak unavailable 2/);
  const bad = io();
  assert.is(await run(['rehearse', '-f', specFile, '--cluster', clusterFile, '--durations', 'boot=1'], { io: bad }), 1);
  assert.match(bad.err, /unknown phase "boot"/);
  const typo = io();
  assert.is(await run(['rehearse', '-f', specFile, '--cluster', clusterFile, '--durations', 'stage=60,darin=10'], { io: typo }), 1);
  assert.match(typo.err, /unknown phase "darin" \(did you mean drain\?\)/);
});

s('rehearse with silences: each node silenced before its drain and expired after its soak, in -o json, the text, --events and -o html', async () => {
  const silenced = join(dir, 'silenced.yaml');
  const templates = ['node="{node}"', 'instance=~"{node}(:.*)?"'];
  writeFileSync(
    silenced,
    specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 60 }], {
      silences: { alertmanager: { url: 'http://127.0.0.1:9093', auth: 'none' }, matchers: templates },
    }),
  );
  const j = io();
  assert.is(await run(['rehearse', '-f', silenced, '--cluster', clusterFile, '-o', 'json'], { io: j }), 0, j.err);
  const r = JSON.parse(j.out);
  const events: any[] = r.events;
  const rebooted = [...new Set(events.filter((e) => e.type === 'reboot').map((e) => e.node))];
  assert.is(rebooted.length, 5, 'the five nodes not cordoned by an administrator');
  for (const n of rebooted) {
    const at = (p: (e: any) => boolean) => events.findIndex(p);
    const created = at((e) => e.type === 'silence' && e.action === 'create' && e.node === n);
    const drained = at((e) => e.type === 'drain-done' && e.node === n);
    const expired = at((e) => e.type === 'silence' && e.action === 'expire' && e.node === n);
    const wave = events.find((e) => e.type === 'wave-start' && e.nodes.includes(n)).wave;
    const soak = at((e) => e.type === 'soak' && e.wave === wave);
    assert.ok(created >= 0 && created < drained && soak < expired, `${n}: create ${created} < drain ${drained}; soak ${soak} < expire ${expired}`);
    assert.equal(events[created].ids.length, templates.length, n);
    assert.match(events[created].message, `node="${n}"; instance=~"${n}(:.*)?"`);
    assert.equal(events[expired].ids, events[created].ids, `${n}: the silences it created are the ones expired`);
  }
  // The text says what the silences did; --events names each step.
  const t = io();
  assert.is(await run(['rehearse', '-f', silenced, '--cluster', clusterFile, '--events'], { io: t }), 0, t.err);
  assert.match(t.out, /\nSilences: 5 nodes silenced while out of service; 10 created, \d+ extensions, 10 expired; none left at the end\.\n/);
  assert.match(t.out, /\] worker\/w-\d+ silence created \(2 silences\): until /);
  assert.match(t.out, /\] worker\/w-\d+ silence expired \(2 silences\): the node is back/);
  // The HTML report fed by the rehearsal lists each node's silences with their times.
  const h = io();
  assert.is(await run(['rehearse', '-f', silenced, '--cluster', clusterFile, '-o', 'html'], { io: h }), 0, h.err);
  const section = h.out.slice(h.out.indexOf('<section id="silences">'), h.out.indexOf('</section>', h.out.indexOf('<section id="silences">')));
  assert.match(section, '<p>In the rehearsal: 5 nodes silenced while out of service;');
  for (const n of rebooted) assert.match(section, new RegExp(`<tr><td>${n}</td><td>worker</td><td>[0-9hms]+</td><td>[0-9hms]+</td></tr>`), n);
  // Without silences the rehearsal says nothing of them.
  const plain = io();
  assert.is(await run(['rehearse', '-f', specFile, '--cluster', clusterFile], { io: plain }), 0);
  assert.not.match(plain.out, /Silences/);
});

s('rehearse PLANFILE against a changed cluster exits 3 like apply', async () => {
  const o = io();
  const planFile = join(dir, 'plan.json');
  assert.is(await run(['plan', '-f', specFile, '--cluster', clusterFile, '-o', 'json', '--out', planFile], { io: o }), 0, o.err);
  // A saved plan reads only files inside the working directory (or repository) it is used
  // from: rehearse it from the directory that holds the spec, as a user would.
  const same = io();
  assert.is(await inDir(dir, () => run(['rehearse', planFile, '-o', 'json'], { io: same })), 0, same.err);
  const changed = io();
  assert.is(await inDir(dir, () => run(['rehearse', planFile, '--cluster', changedFile], { io: changed })), 3);
  assert.match(changed.err, /stale plan/);
  assert.match(changed.err, /w-06/);
  const outside = io();
  assert.is(await run(['rehearse', planFile], { io: outside }), 1);
  assert.match(outside.err, /is outside the repository/);
});

s('apply without --auto-approve and without a terminal refuses (exit 1)', async () => {
  const o = io();
  const code = await run(['apply', '-f', specFile], { io: o });
  assert.is(code, 1);
  assert.match(o.err, /--auto-approve/);
});

s('apply PLANFILE: the reviewed, sealed plan needs no confirmation, with or without a terminal (docs/design.md §2)', async () => {
  const planFile = join(dir, 'reviewed.json');
  const made = io();
  assert.is(await run(['plan', '-f', specFile, '--cluster', clusterFile, '--out', planFile], { io: made }), 0, made.err);
  const sim = newSim(readSnapshotFile(nodeInputs, clusterFile));
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'cli@test' });
  // No terminal (a CI job): it runs. It stopped with "apply needs confirmation" (exit 1).
  const ci = io();
  assert.is(await inDir(dir, () => run(['apply', planFile, '--step'], { io: ci, openDriver })), 0, ci.err);
  assert.match(ci.out, /nothing to do now: waiting for staging/);
  assert.ok((await sim.driver().readProgress()).run, 'the apply ran');
  // On a terminal: nobody is asked a second time.
  sim.advance(700);
  const asked: string[] = [];
  const tty = io();
  Object.assign(tty, {
    stdinIsTTY: true,
    stdoutIsTTY: true,
    stderrIsTTY: true,
    ask: async (q: string) => {
      asked.push(q);
      return 'no';
    },
  });
  assert.is(await inDir(dir, () => run(['apply', planFile, '--step'], { io: tty, openDriver })), 0, tty.err);
  assert.equal(asked, []);
  assert.match(tty.out, /advanced 1 wave/);
  // --auto-approve stays accepted with a plan file.
  const auto = io();
  assert.is(await inDir(dir, () => run(['apply', planFile, '--auto-approve', '--step'], { io: auto, openDriver })), 0, auto.err);
});

s('apply PLANFILE without confirmation still verifies: an edited plan file is refused (exit 3), nothing applied', async () => {
  const planFile = join(dir, 'edited.json');
  const made = io();
  assert.is(await run(['plan', '-f', specFile, '--cluster', clusterFile, '--out', planFile], { io: made }), 0, made.err);
  const plan = JSON.parse(readFileSync(planFile, 'utf8'));
  plan.pools[0].soakSeconds = 0;
  writeFileSync(planFile, JSON.stringify(plan));
  const sim = newSim(readSnapshotFile(nodeInputs, clusterFile));
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'cli@test' });
  const o = io();
  assert.is(await inDir(dir, () => run(['apply', planFile], { io: o, openDriver })), 3);
  assert.match(o.err, /the plan file was modified after it was made/);
  assert.is((await sim.driver().readProgress()).run, null, 'nothing was applied');
});

s('apply against a live cluster without a usable kubeconfig fails cleanly (exit 1, no stack)', async () => {
  const o = io();
  o.env = { NO_COLOR: '1', KUBECONFIG: join(dir, 'missing-kubeconfig') };
  const code = await run(['apply', '-f', specFile, '--auto-approve', '--kubeconfig', join(dir, 'missing-kubeconfig')], { io: o });
  assert.is(code, 1);
  assert.match(o.err, /error: /);
  assert.not.match(o.err, /\n\s+at /);
});

s('apply, status and unlock through the CLI against the simulator; a second apply exits 4', async () => {
  const sim = newSim(readSnapshotFile(nodeInputs, clusterFile));
  let n = 0;
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: `cli-${++n}@test` });
  // the first apply dies while holding the lock
  const dead = sim.driver('dead');
  await dead.acquireLock({ holder: 'cronjob-7f9@ci', planId: 'p1', ttlSeconds: 300 });
  const o = io();
  assert.is(await run(['apply', '-f', specFile, '--auto-approve', '--json'], { io: o, openDriver }), 4);
  assert.match(o.err, /cronjob-7f9@ci since 2026-09-14T08:00:00Z/);
  const st = io();
  assert.is(await run(['status'], { io: st, openDriver }), 0);
  assert.match(st.out, /lock: held by cronjob-7f9@ci/);
  const lockId = (await sim.driver().readLock())!.lockId;
  const wrong = io();
  assert.is(await run(['unlock', 'nope'], { io: wrong, openDriver }), 1);
  const un = io();
  assert.is(await run(['unlock', lockId], { io: un, openDriver }), 0, un.err);
  assert.match(un.out, /released lock/);
  // apply --step: the nodes are still staging the target: nothing to do yet, exit 0 (docs/design.md §3).
  const early = io();
  assert.is(await run(['apply', '-f', specFile, '--auto-approve', '--step'], { io: early, openDriver }), 0, early.err);
  assert.match(early.out, /nothing to do now: waiting for staging/);
  sim.advance(700);
  const step = io();
  assert.is(await run(['apply', '-f', specFile, '--auto-approve', '--step', '--json'], { io: step, openDriver }), 0, step.err);
  const events = step.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.is(events.filter((e) => e.type === 'wave-end').length, 1);
  assert.is(events[events.length - 1].type, 'step-end');
  const st2 = io();
  assert.is(await run(['status'], { io: st2, openDriver }), 0);
  assert.match(st2.out, /1 wave\(s\) finished/);
  const rest = io();
  assert.is(await run(['apply', '-f', specFile, '--auto-approve'], { io: rest, openDriver }), 0, rest.err);
  assert.match(rest.out, /done in/);
  assert.match(rest.out, /blocked node/);
  // The CI log (stderr is not a terminal): one line per wave start and end with nodes done of
  // the pool's total, elapsed and ETA; the per-node steps are in --json (docs/apply.md "Progress").
  assert.match(rest.err, /\] worker wave 2\/\d start: 1 node\(s\) \(w-0\d\); 1\/4 nodes done\n/);
  assert.match(rest.err, /\] worker wave \d\/\d done in 6m30s: 4\/4 nodes done, \d+m\d*s? elapsed, ETA 0s\n/);
  assert.not.match(rest.err, /reboot \(hard\)/);
});

s('apply on a terminal asks through the IO; any answer but yes cancels (exit 1)', async () => {
  const sim = newSim(readSnapshotFile(nodeInputs, clusterFile));
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'cli@test' });
  const asked: string[] = [];
  const no = io();
  Object.assign(no, {
    stdinIsTTY: true,
    ask: async (q: string) => {
      asked.push(q);
      return 'y';
    },
  });
  assert.is(await run(['apply', '-f', specFile], { io: no, openDriver }), 1);
  assert.match(asked[0] ?? '', /^Apply plan \w+ \(5 nodes in \d+ waves\)\? Only 'yes' is accepted: $/, 'w-00 is cordoned by an administrator: 5 of 6 nodes');
  assert.match(no.err, /apply cancelled/);
  assert.is((await sim.driver().readProgress()).run, null, 'nothing was applied');
  const yes = io();
  Object.assign(yes, { stdinIsTTY: true, ask: async () => 'yes\n' });
  assert.is(await run(['apply', '-f', specFile, '--step'], { io: yes, openDriver }), 0, yes.err);
  assert.match(yes.out, /nothing to do now: waiting for staging/);
  sim.advance(700);
  const again = io();
  Object.assign(again, { stdinIsTTY: true, ask: async () => 'yes\n' });
  assert.is(await run(['apply', '-f', specFile, '--step'], { io: again, openDriver }), 0, again.err);
  assert.match(again.out, /advanced 1 wave/);
});

s.run();
