/**
 * The example GitHub workflows (examples/github-actions; docs/gitops.md "GitHub Actions") and the
 * image every example names:
 * - actionlint passes;
 * - the plan reaches the apply side through a commit pushed with a GitHub App's token (a push
 *   with GITHUB_TOKEN starts no check on the new head), a current plan is not planned again (no
 *   commit loop), and a fork's pull request is never run with secrets (no pull_request_target);
 * - no scheduled run waits for an approval: `start` (reviewers) and `continue` (scheduled, no
 *   reviewers) are separate jobs; `continue` steps only a plan a successful `start` run approved
 *   (its shell run with a stand-in `gh` over a real git history);
 * - every example names the same image place-holder, which the user builds from the Containerfile.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync, existsSync, mkdtempSync, writeFileSync, mkdirSync, chmodSync, symlinkSync, statSync } from 'node:fs';
import { join, delimiter } from 'node:path';
import { homedir, tmpdir } from 'node:os';
import { spawnSync, execFileSync } from 'node:child_process';
import { parse } from 'yaml';
import { ensureBuilt } from '../support/built.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { git } from '../support/git.ts';
import { skipLocally } from '../support/skips.ts';

const s = suite('GitHub Actions examples and the image place-holder');

/** The image the examples name until the user sets theirs (docs/gitops.md "The bootcplan image"). */
const PLACEHOLDER = 'REPLACE-ME.example/bootcplan:0.1.0';
/** How the build command in the comments names the user's image. */
const TEMPLATE = 'REGISTRY/bootcplan:0.1.0';

const ACTIONLINT = [join(process.env.BOOTCPLAN_TOOLS ?? join(homedir(), '.cache/bootcplan-tools/bin'), 'actionlint')].find((p) => existsSync(p));
const workflow = (name: string) => parse(readFileSync(`examples/github-actions/${name}.yml`, 'utf8'));
const step = (w: any, job: string, name: string) => {
  const st = w.jobs[job].steps.find((x: any) => x.name === name);
  assert.ok(st, `${job}: step "${name}"`);
  return st;
};
const runs = (w: any, job: string) => w.jobs[job].steps.map((st: any) => st.run ?? '').join('\n');

s('every example workflow passes actionlint', () => {
  if (!ACTIONLINT) {
    skipLocally('actionlint', '.ci/run builds it');
    return;
  }
  const files = readdirSync('examples/github-actions')
    .filter((f) => f.endsWith('.yml'))
    .map((f) => join('examples/github-actions', f));
  assert.equal(files.sort(), ['examples/github-actions/apply.yml', 'examples/github-actions/drift.yml', 'examples/github-actions/plan.yml']);
  const r = spawnSync(ACTIONLINT, ['-no-color', ...files], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stdout + r.stderr);
  // The check can fail: a workflow with an undefined step output is reported.
  const bad = spawnSync(ACTIONLINT, ['-no-color', '-'], {
    encoding: 'utf8',
    input: 'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ steps.nope.outputs.x }}\n',
  });
  assert.is.not(bad.status, 0);
  assert.match(bad.stdout, /nope/);
});

s('every example names the same image place-holder, and the Containerfile says how to build yours', () => {
  const files: string[] = ['Containerfile', 'docs/gitops.md'];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ya?ml|md)$/.test(e)) files.push(p);
    }
  };
  walk('examples');
  const version = JSON.parse(readFileSync('package.json', 'utf8')).version;
  assert.ok(PLACEHOLDER.endsWith(`:${version}`) && TEMPLATE.endsWith(`:${version}`), 'the tag is the package version');
  let named = 0;
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    assert.not.match(text, /quay\.io\/example\/bootcplan|npx [^\n]*bootcplan@/, `${f}: an image or package no user has`);
    for (const m of text.matchAll(/[\w.\-/]*\/bootcplan:[\w.-]+/g)) {
      assert.ok([PLACEHOLDER, TEMPLATE].includes(m[0]), `${f}: ${m[0]}`);
      if (m[0] === PLACEHOLDER) named++;
    }
  }
  // Where an image runs: every Job and CronJob container, every workflow's BOOTCPLAN_IMAGE.
  for (const dir of ['examples/argocd/clusters/prod-east', 'examples/flux/clusters/prod-east']) {
    for (const f of readdirSync(dir).filter((x) => /^apply-.*\.yaml$/.test(x))) {
      const o = parse(readFileSync(join(dir, f), 'utf8'));
      const pod = o.kind === 'CronJob' ? o.spec.jobTemplate.spec.template.spec : o.spec.template.spec;
      assert.equal(
        pod.containers.map((c: any) => c.image),
        [PLACEHOLDER],
        `${dir}/${f}`,
      );
      assert.match(readFileSync(join(dir, f), 'utf8'), /podman build -t REGISTRY\/bootcplan:\S+ -f Containerfile \./, `${dir}/${f}: the build command`);
    }
  }
  for (const name of ['plan', 'drift', 'apply']) assert.is(workflow(name).env.BOOTCPLAN_IMAGE, PLACEHOLDER, name);
  assert.ok(named >= 7, `${named} places name it`);
  assert.match(readFileSync('Containerfile', 'utf8'), new RegExp(`podman build .*-t ${TEMPLATE.replace(/[.]/g, '\\.')} -f Containerfile`));
});

s("plan.yml: plans once, pushes the plan with the App's token (checks run on the new head), never runs a fork's code with secrets", () => {
  const text = readFileSync('examples/github-actions/plan.yml', 'utf8');
  const w = workflow('plan');
  assert.equal(Object.keys(w.on), ['pull_request'], 'never pull_request_target');
  assert.not.match(text, /^\s*pull_request_target:/m);
  assert.equal(w.permissions, { contents: 'read', 'pull-requests': 'write' }, 'GITHUB_TOKEN pushes nothing');
  const run = runs(w, 'plan');
  assert.is(run.match(/bootcplan plan /g)?.length, 1, 'one plan');
  assert.match(run, /bootcplan plan -f "\$SPEC" .*--out "\$PLAN" -o markdown --detailed-exitcode/);
  assert.match(run, /bootcplan show "\$PLAN" -o html/);
  assert.match(run, /git push origin "HEAD:\$\{HEAD_REF\}"/);
  const app = step(w, 'plan', 'Token of the bootcplan GitHub App (its push starts the checks of the new head)');
  assert.match(app.uses, /^actions\/create-github-app-token@/);
  const checkout = w.jobs.plan.steps.find((x: any) => String(x.uses).startsWith('actions/checkout@'));
  assert.is(checkout.with.token, '${{ steps.app.outputs.token }}', "the push uses the App's credentials");
  assert.is(
    step(w, 'plan', 'Commit the plan to the pull request').if.includes("steps.committed.outputs.current != 'true'"),
    true,
    'a current plan is not committed again',
  );
  assert.is(w.jobs.plan.if, 'github.event.pull_request.head.repo.full_name == github.repository');
  assert.is(w.jobs.fork.if, 'github.event.pull_request.head.repo.full_name != github.repository');
  assert.not.match(JSON.stringify(w.jobs.fork), /secrets\.|actions\/checkout/, 'the fork job reads no secret and runs nothing of the fork');
});

s('plan.yml: the committed plan is current exactly when it was made from this spec', () => {
  const built = ensureBuilt();
  const repo = mkdtempSync(join(tmpdir(), 'bootcplan-gha-plan-'));
  const bin = join(repo, '.bin');
  mkdirSync(bin);
  symlinkSync(built, join(bin, 'bootcplan'));
  git(repo, 'init', '-q', '-b', 'main');
  mkdirSync(join(repo, 'clusters/prod-east/plans'), { recursive: true });
  const spec = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]);
  writeFileSync(join(repo, 'clusters/prod-east/bootcplan.yaml'), spec);
  writeFileSync(join(repo, 'cluster.yaml'), new ClusterBuilder().bootcPool('worker', nodes('w', 4)).yaml());
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'spec');
  execFileSync(
    process.execPath,
    [built, 'plan', '-f', 'clusters/prod-east/bootcplan.yaml', '--cluster', 'cluster.yaml', '--out', 'clusters/prod-east/plans/bootcplan.json'],
    { cwd: repo },
  );
  const script = step(workflow('plan'), 'plan', 'Is the committed plan the plan of this spec?').run;
  const current = () => {
    const out = join(repo, '.out');
    writeFileSync(out, '');
    const r = spawnSync('bash', ['-e', '-c', script], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, ...workflow('plan').env, PATH: `${bin}${delimiter}${process.env.PATH}`, GITHUB_OUTPUT: out },
    });
    assert.is(r.status, 0, r.stderr);
    return readFileSync(out, 'utf8').trim();
  };
  assert.is(current(), 'current=true');
  writeFileSync(join(repo, 'clusters/prod-east/bootcplan.yaml'), spec.replace('maxUnavailable: 2', 'maxUnavailable: 3'));
  assert.is(current(), 'current=false', 'the spec changed');
  writeFileSync(join(repo, 'clusters/prod-east/bootcplan.yaml'), spec);
  assert.is(current(), 'current=true');
  writeFileSync(join(repo, 'clusters/prod-east/plans/bootcplan.json'), '{"formatVersion": "1.0"}');
  assert.is(current(), 'current=false', 'not a plan of this spec');
});

s('apply.yml: scheduled runs never wait for a reviewer; each plan is approved once, by its start run', () => {
  const w = workflow('apply');
  assert.ok(w.on.push && w.on.schedule && 'workflow_dispatch' in w.on);
  assert.is(w.concurrency['cancel-in-progress'], false);
  assert.equal(Object.keys(w.jobs), ['start', 'continue']);
  assert.is(w.jobs.start.if, "github.event_name != 'schedule'");
  assert.is(w.jobs.continue.if, "github.event_name == 'schedule'");
  assert.is(w.jobs.start.environment, 'bootcplan-approve');
  assert.is(w.jobs.continue.environment, 'bootcplan-continue');
  assert.is(w.permissions.actions, 'read');
  for (const job of ['start', 'continue']) {
    assert.match(runs(w, job), /bootcplan apply "\$PLAN" --kubeconfig "\$RUNNER_TEMP\/kubeconfig" (--auto-approve )?--step/, job);
    assert.not.match(runs(w, job), /-eq 6/);
  }
  for (const name of ['bootcplan from your image', 'Write kubeconfig', 'Apply the next step of the approved plan']) {
    assert.is(step(w, 'continue', name).if, "steps.approval.outputs.approved == 'true'", name);
  }
});

s('apply.yml: continue steps the plan on main only when a successful start run holds the same plan', () => {
  const script = step(workflow('apply'), 'continue', 'Was the plan on main approved?').run;
  const repo = mkdtempSync(join(tmpdir(), 'bootcplan-gha-apply-'));
  const bin = join(repo, '.bin');
  mkdirSync(bin);
  // A stand-in for gh: records its arguments, prints the head commits of "successful runs".
  writeFileSync(join(bin, 'gh'), '#!/bin/sh\nprintf "%s\\n" "$*" > "$GH_ARGS"\nprintf "%s\\n" $FAKE_RUNS\n');
  chmodSync(join(bin, 'gh'), 0o755);
  git(repo, 'init', '-q', '-b', 'main');
  const PLAN = 'clusters/prod-east/plans/bootcplan.json';
  mkdirSync(join(repo, 'clusters/prod-east/plans'), { recursive: true });
  const commit = (id: string, msg: string) => {
    writeFileSync(join(repo, PLAN), JSON.stringify({ id, formatVersion: '1.0' }));
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', msg);
    return git(repo, 'rev-parse', 'HEAD');
  };
  const a = commit('aaaa', 'plan A');
  const b = commit('bbbb', 'plan B');
  writeFileSync(join(repo, 'README'), 'unrelated');
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'same plan B, another commit');
  const approved = (runsOf: string[]) => {
    const out = join(repo, '.out');
    const summary = join(repo, '.summary');
    const args = join(repo, '.gh-args');
    writeFileSync(out, '');
    const r = spawnSync('bash', ['-e', '-c', script], {
      cwd: repo,
      encoding: 'utf8',
      env: {
        ...process.env,
        PATH: `${bin}${delimiter}${process.env.PATH}`,
        PLAN,
        GITHUB_OUTPUT: out,
        GITHUB_STEP_SUMMARY: summary,
        GH_ARGS: args,
        FAKE_RUNS: runsOf.join(' '),
        GITHUB_WORKFLOW_REF: 'acme/config/.github/workflows/bootcplan-apply.yml@refs/heads/main',
      },
    });
    assert.is(r.status, 0, r.stderr);
    assert.match(readFileSync(args, 'utf8'), /--workflow bootcplan-apply\.yml --branch main --status success/);
    return { approved: readFileSync(out, 'utf8').trim(), summary: readFileSync(summary, 'utf8') };
  };
  const none = approved([]);
  assert.is(none.approved, 'approved=false');
  assert.match(none.summary, /plan bbbb: no approved start run yet; nothing applied/);
  assert.is(approved([a]).approved, 'approved=false', 'plan A was approved, main holds plan B');
  assert.is(approved([a, b]).approved, 'approved=true', 'plan B was approved at its merge');
  assert.is(approved(['0123456789abcdef0123456789abcdef01234567', b]).approved, 'approved=true', 'an unknown commit is skipped');
});

s('drift.yml: re-plans on "stale" or new changes; opens or updates one pull request with the App\'s token', () => {
  const w = workflow('drift');
  assert.ok(w.on.schedule);
  const run = runs(w, 'drift');
  assert.match(run, /get rollouts\.bootcplan\.dev "\$ROLLOUT" -o jsonpath='\{\.status\.reason\}'/);
  assert.match(run, /--out "\$PLAN" -o markdown --detailed-exitcode/);
  const pr = w.jobs.drift.steps.find((st: any) => String(st.uses).startsWith('peter-evans/create-pull-request@'));
  assert.is(pr.with.branch, 'bootcplan/drift-prod-east');
  assert.is(pr.with.token, '${{ steps.app.outputs.token }}', 'its pull request starts the plan workflow');
});

s.run();
