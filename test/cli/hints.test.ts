/**
 * Hints name only flags that exist on the command they name (docs/cli.md "Errors"): a hint that
 * says `--cluster` to a user of `apply`, which has none, sends them to a dead end. Every error path
 * the table below reaches is run through the CLI, and every `--flag` in what it printed is
 * checked against commander's program tree: the flag must exist on the command the text names
 * (`bootcplan fleet plan --out`), or else on the command that printed it. The sources are
 * scanned too, for a flag that no command has at all.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { FleetBuilder } from '../support/fleet.ts';
import { cli } from '../support/cli.ts';
import { ROOT } from '../support/built.ts';
import { commandFlags, misnamedFlags } from '../support/hint-flags.ts';
import { gitIn } from '../support/git.ts';

const s = suite('hints name flags that exist');
const commands = commandFlags();

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-hints-'));
const home = join(dir, 'home'); // no ~/.kube/config, no KUBECONFIG: no cluster configured
mkdirSync(home);
writeFileSync(join(dir, 'cluster.yaml'), new ClusterBuilder().bootcPool('worker', nodes('w', 3)).yaml());
writeFileSync(join(dir, 'bootcplan.yaml'), specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]));
writeFileSync(
  join(dir, 'kubeconfig-no-context.yaml'),
  'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n',
);
new FleetBuilder().cluster('east').cluster('west').write(dir);
mkdirSync(join(dir, 'live'));
new FleetBuilder().cluster('east', { context: 'east' }).write(join(dir, 'live'));

// A repository with a Fleet committed, for what needs git.
const repo = join(dir, 'repo');
mkdirSync(repo);
new FleetBuilder().cluster('east').write(repo);
const git = gitIn(repo);
git('init', '-q', '-b', 'main');
git('add', '.');
git('commit', '-qm', 'fleet');
// An output directory whose applicationset.yaml is a directory.
mkdirSync(join(dir, 'argo-dir/applicationset.yaml'), { recursive: true });

/** The CLI's environment: a home of its own (no kubeconfig of the user's). */
const AS_USER = { io: { env: { HOME: home, NO_COLOR: '1' } } };

/** The command path an argument list runs ('fleet render argocd'). */
function commandOf(args: string[]): string {
  let path = '';
  for (const a of args) {
    const next = path ? `${path} ${a}` : a;
    if (!commands.has(next)) break;
    path = next;
  }
  return path;
}

s("the checker: a flag the named or running command lacks is found; other tools' flags are theirs", () => {
  const found = (text: string, ran: string | null) => misnamedFlags(text, ran, commands).map((m) => `${m.command} ${m.flag}`);
  assert.equal(found('  hint: pass --kubeconfig PATH, or plan against a snapshot file with --cluster FILE', 'apply'), ['apply --cluster']);
  assert.equal(found('  hint: pass --cluster SNAPSHOT (bootcplan snapshot --out FILE writes one)', 'rehearse'), []);
  assert.equal(found('  hint: save it with `bootcplan fleet plan --base X`', 'plan'), ['fleet plan --base']);
  assert.equal(found('  hint: check it with `kubectl config view --kubeconfig F`; `kubectl get --raw /x`', 'fleet apply'), []);
  assert.equal(found('  hint: add --no-such-flag', null), ['(any) --no-such-flag']);
});

/** Every error path below, as a user meets it: [what, args, files it needs]. */
const CASES: [string, string[]][] = [
  ['no cluster configured: plan', ['plan']],
  ['no cluster configured: snapshot', ['snapshot']],
  ['no cluster configured: apply -f', ['apply', '--auto-approve']],
  ['no cluster configured: status', ['status']],
  ['no cluster configured: unlock', ['unlock', 'x']],
  ['no cluster configured: fleet plan of a live context', ['fleet', 'plan', '-f', 'live/fleet.yaml']],
  ['no cluster configured: fleet apply -f', ['fleet', 'apply', '-f', 'live/fleet.yaml', '--auto-approve']],
  ['a missing --kubeconfig: plan', ['plan', '--kubeconfig', 'nope.yaml']],
  ['a missing --kubeconfig: status', ['status', '--kubeconfig', 'nope.yaml']],
  ['a missing --kubeconfig: fleet plan', ['fleet', 'plan', '-f', 'live/fleet.yaml', '--kubeconfig', 'nope.yaml']],
  ['a kubeconfig without a current context: status', ['status', '--kubeconfig', 'kubeconfig-no-context.yaml']],
  ['a kubeconfig without a current context: snapshot', ['snapshot', '--kubeconfig', 'kubeconfig-no-context.yaml']],
  ['a kubeconfig without the context: fleet plan', ['fleet', 'plan', '-f', 'live/fleet.yaml', '--kubeconfig', 'kubeconfig-no-context.yaml']],
  ['a missing spec: validate', ['validate', '-f', 'nope.yaml']],
  ['a missing spec: plan', ['plan', '-f', 'nope.yaml', '--cluster', 'cluster.yaml']],
  ['a missing spec: apply -f', ['apply', '-f', 'nope.yaml', '--auto-approve']],
  ['a missing snapshot: plan', ['plan', '--cluster', 'nope.yaml']],
  ['a missing snapshot: rehearse', ['rehearse', '--cluster', 'nope.yaml']],
  ['no snapshot: rehearse -f', ['rehearse']],
  ['a missing plan file: show', ['show', 'nope.json']],
  ['a missing plan file: apply', ['apply', 'nope.json']],
  ['a missing plan file: rehearse', ['rehearse', 'nope.json']],
  ['a missing Fleet: fleet plan', ['fleet', 'plan', '-f', 'nope.yaml']],
  ['a missing Fleet: fleet validate', ['fleet', 'validate', '-f', 'nope.yaml']],
  ['a missing fleet plan: fleet show', ['fleet', 'show', 'nope.json']],
  ['a missing fleet plan: fleet apply', ['fleet', 'apply', 'nope.json', '--auto-approve']],
  ['a missing fleet plan: fleet rehearse', ['fleet', 'rehearse', 'nope.json']],
  ['a missing fleet plan: fleet render argocd', ['fleet', 'render', 'argocd', 'nope.json', '--out-dir', 'o', '--repo-url', 'u', '--image', 'i']],
  ['a plan file beside -f: apply', ['apply', 'nope.json', '-f', 'bootcplan.yaml']],
  ['a plan file beside -f: rehearse', ['rehearse', 'nope.json', '-f', 'bootcplan.yaml']],
  ['a fleet plan beside -f: fleet apply', ['fleet', 'apply', 'fleet-plan.json', '-f', 'fleet.yaml', '--auto-approve']],
  ['no terminal to confirm on: apply -f', ['apply']],
  ['no terminal to confirm on: fleet apply -f', ['fleet', 'apply']],
  ['-f - with --out: plan', ['plan', '-f', '-', '--out', 'p.json', '--cluster', 'cluster.yaml']],
  ['--out onto a directory: plan', ['plan', '--cluster', 'cluster.yaml', '--out', './home']],
  ['--out onto a directory: fleet plan', ['fleet', 'plan', '--out', './home']],
  ['a bad duration: apply --lock-timeout', ['apply', '--lock-timeout', 'soon']],
  ['a bad duration: plan --request-timeout', ['plan', '--request-timeout', 'soon']],
  ['bad simulation flags: rehearse', ['rehearse', '--cluster', 'cluster.yaml', '--durations', 'stage=x']],
  ['bad simulation flags: fleet rehearse', ['fleet', 'rehearse', '--jitter', '2']],
  ['a bad --concurrency: fleet plan', ['fleet', 'plan', '--concurrency', '0']],
  ['a --base that is no revision: plan', ['plan', '--cluster', 'cluster.yaml', '--base', 'nope']],
  ['a --ref outside git: validate', ['validate', '--ref', 'HEAD']],
  ['a --ref outside git: fleet plan', ['fleet', 'plan', '--ref', 'HEAD']],
  ['a bad --notify: apply', ['apply', '--auto-approve', '--notify', 'file:///x']],
  ['an unknown flag: apply', ['apply', '--clustr', 'x']],
  ['an unknown format: snapshot', ['snapshot', '-o', 'ymal']],
  ['--out-dir outside git: fleet render argocd', ['fleet', 'render', 'argocd', 'fleet-plan.json', '--out-dir', 'argo', '--repo-url', 'u', '--image', 'i']],
  [
    'a directory where a rendered file goes: fleet render argocd',
    ['fleet', 'render', 'argocd', 'fleet-plan.json', '--out-dir', 'argo-dir', '--path', 'argo', '--repo-url', 'u', '--image', 'i'],
  ],
];

/** Error paths that need the repository as the working directory. */
const IN_REPO: [string, string[]][] = [
  [
    'a fleet plan made with --ref: fleet render argocd',
    ['fleet', 'render', 'argocd', 'fleet-plan-ref.json', '--out-dir', 'argo', '--repo-url', 'u', '--image', 'i'],
  ],
  ['a spec missing at the revision: validate --ref', ['validate', '--ref', 'HEAD']],
  ['no such revision: plan --ref', ['plan', '--ref', 'nope', '--cluster', 'east.yaml']],
];

s('every error path in the table prints only flags its command has', async () => {
  const made = await cli(['fleet', 'plan', '--out', './fleet-plan.json'], { ...AS_USER, cwd: dir });
  assert.is(made.code, 0, made.err);
  const ref = await cli(['fleet', 'plan', '--ref', 'HEAD', '--out', './fleet-plan-ref.json'], { ...AS_USER, cwd: repo });
  assert.is(ref.code, 0, ref.err);
  const problems: string[] = [];
  for (const [what, args, cwd] of [...CASES.map(([w, a]) => [w, a, dir] as const), ...IN_REPO.map(([w, a]) => [w, a, repo] as const)]) {
    const r = await cli([...args], { ...AS_USER, cwd: cwd });
    assert.ok(r.code !== 0, `${what}: exit ${r.code}, expected an error\n${r.err}`);
    // commander's own "unknown option '--clustr'" quotes what the user typed.
    const printed = (r.err + '\n' + r.out)
      .split('\n')
      .filter((l) => !l.startsWith('error: unknown option'))
      .join('\n');
    if (/\\u000[ad]/.test(printed)) problems.push(`${what}: a JSON-escaped line break in human output: ${printed}`);
    for (const m of misnamedFlags(printed, commandOf(args), commands))
      problems.push(`${what} (bootcplan ${args.join(' ')}): ${m.command} has no ${m.flag}: ${m.text}`);
  }
  assert.equal(problems, []);
});

s('the sources: every --flag a message of bootcplan names exists on some command', () => {
  const problems: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const f = join(d, e);
      if (statSync(f).isDirectory()) {
        if (e !== 'html') walk(f);
        continue;
      }
      if (!f.endsWith('.ts')) continue;
      readFileSync(f, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const t = line.trim();
          if (t.startsWith('//') || t.startsWith('*') || t.startsWith('/*')) return;
          // String literals with a flag in running text (not an argument of git, not an option's own declaration).
          const literals = [...line.matchAll(/'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`|"(?:[^"\\]|\\.)*"/g)]
            .map((m) => m[0].slice(1, -1))
            .filter((x) => /--[a-z]/.test(x) && !/^(?:-\w, )?--[a-z0-9-]+(?:[= ].*)?$/.test(x));
          for (const l of literals)
            for (const m of misnamedFlags(l, null, commands)) problems.push(`${f.slice(ROOT.length + 1)}:${i + 1}: ${m.flag}: ${m.text.slice(0, 160)}`);
        });
    }
  };
  walk(join(ROOT, 'src'));
  assert.equal(problems, []);
});

s('the sources: no line break goes through forDisplay, which would print it as \\u000a', () => {
  const problems: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const f = join(d, e);
      if (statSync(f).isDirectory()) walk(f);
      else if (f.endsWith('.ts')) {
        readFileSync(f, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (/forDisplay\((?:`[^`]*|'[^']*)\\n(?:`|')\)/.test(line)) problems.push(`${f.slice(ROOT.length + 1)}:${i + 1}: ${line.trim()}`);
          });
      }
    }
  };
  walk(join(ROOT, 'src'));
  assert.equal(problems, []);
});

s.run();
