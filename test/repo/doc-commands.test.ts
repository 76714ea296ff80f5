/**
 * The rules of "Docs that execute" (test/support/doc-commands.ts, docs/development.md): which lines of
 * the docs are commands, their expected exit codes, the programs they run; and, over README.md
 * and docs/*.md as they are, that every command is either run by test/e2e/12-docs.test.ts or
 * listed with the reason it cannot run, with no listing or placeholder left that no command uses.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { docFiles, parseDoc, readDoc, ROOT } from '../support/doc-files.ts';
import { commandFlags, misnamedFlags } from '../support/hint-flags.ts';
import {
  blockCommands,
  classify,
  docBlocks,
  expectedExitOf,
  shellSyntax,
  NOT_RUNNABLE,
  PLACEHOLDERS,
  RUNS,
  type DocCommand,
  type Placeholder,
} from '../support/doc-commands.ts';

const s = suite('docs that execute: the rules');

const commandsOf = (markdown: string) => parseDoc(markdown).fences.flatMap((f) => blockCommands('x.md', f));

s('shell syntax: the programs of pipes, lists, substitutions and redirections; quotes and comments', () => {
  assert.equal(shellSyntax('npm install && npm run demo     # plans it').commands, [
    ['npm', 'install'],
    ['npm', 'run', 'demo'],
  ]);
  assert.equal(shellSyntax('bootcplan show p.json -o html > plan.html 2>&1').commands, [['bootcplan', 'show', 'p.json', '-o', 'html']]);
  assert.equal(shellSyntax('source <(bootcplan completion bash)').commands, [
    ['bootcplan', 'completion', 'bash'],
    ['source', '<(...)'],
  ]);
  assert.equal(shellSyntax('bootcplan completion fish | source').commands, [['bootcplan', 'completion', 'fish'], ['source']]);
  assert.equal(shellSyntax('podman build --build-arg COMMIT=$(git rev-parse HEAD) -t x .').commands, [
    ['git', 'rev-parse', 'HEAD'],
    ['podman', 'build', '--build-arg', 'COMMIT=$(...)', '-t', 'x', '.'],
  ]);
  assert.equal(shellSyntax('podman run -v "$PWD:/work:Z" \\\n  bootcplan plan').commands, [['podman', 'run', '-v', '$PWD:/work:Z', 'bootcplan', 'plan']]);
  assert.equal(shellSyntax('NO_COLOR=1 bootcplan plan "a # b" \'c;d\' ${HOME}/x; kubectl get pods').commands, [
    ['bootcplan', 'plan', 'a # b', 'c;d', '${HOME}/x'],
    ['kubectl', 'get', 'pods'],
  ]);
  assert.equal(shellSyntax('a "$(b `c`)" || d &>/dev/null & e').commands, [['c'], ['b', '`...`'], ['a', '$(...)'], ['d'], ['e']]);
  assert.equal(shellSyntax('x # one\n# two').comments, ['one', 'two']);
  assert.equal(shellSyntax('x a#b').comments, [], 'a # inside a word starts no comment');
});

s('expected exit: the comment ends with `exit N`; anything else is 0', () => {
  assert.is(expectedExitOf('bootcplan apply p.json   # the cluster moved on: exit 3'), 3);
  assert.is(expectedExitOf('bootcplan plan --detailed-exitcode  # exit 2'), 2);
  assert.is(expectedExitOf('bootcplan apply --lock-timeout 6m   # wait (default 0: exit 4 at once)'), 0);
  assert.is(expectedExitOf('bootcplan plan -o json | jq ".exit 3"'), 0);
  assert.is(expectedExitOf('bootcplan plan'), 0);
});

s('which lines are commands: sh/bash/shell/zsh/fish blocks whole, console by prompt, plain blocks by bootcplan, nothing else', () => {
  const cmds = commandsOf(
    [
      '```sh',
      'bootcplan plan                # one',
      '',
      '# a comment line',
      'podman run --rm \\',
      '  bootcplan plan -f x.yaml',
      '```',
      '```',
      'bootcplan validate [-f SPEC]',
      'Plan: 0 to create',
      '$ kubectl bootcplan --help',
      '```',
      '```text',
      'bootcplan plan [-f SPEC]',
      '```',
      '```console',
      '$ bootcplan version   # exit 0',
      'bootcplan 0.1.0',
      '```',
      '```yaml',
      'bootcplan: 1',
      '```',
      '```fish',
      'bootcplan completion fish | source',
      '```',
      '- a list item:',
      '  ```bash',
      '  bootcplan status',
      '  ```',
    ].join('\n'),
  );
  assert.equal(
    cmds.map((c: DocCommand) => [c.line, c.shell, c.text]),
    [
      [2, 'bash', 'bootcplan plan                # one'],
      [5, 'bash', 'podman run --rm \\\n  bootcplan plan -f x.yaml'],
      [9, 'bash', 'bootcplan validate [-f SPEC]'],
      [11, 'bash', 'kubectl bootcplan --help'],
      [17, 'bash', 'bootcplan version   # exit 0'],
      [24, 'fish', 'bootcplan completion fish | source'],
      [28, 'bash', 'bootcplan status'],
    ],
  );
});

s('classify: run (where, answered prompts, placeholders), listed with its reasons, or a failure naming what to add', () => {
  assert.equal(classify('bootcplan plan --out PLANFILE'), { kind: 'run', where: 'work', answer: null, placeholders: ['PLANFILE'] });
  assert.equal(classify('npm run demo     # plans it'), { kind: 'run', where: 'checkout', answer: null, placeholders: [] });
  const asked = classify('bootcplan apply -f bootcplan.yaml');
  assert.is(asked.kind === 'run' && asked.answer?.answer, 'yes');
  assert.is((classify('bootcplan apply PLANFILE') as { answer: unknown }).answer, null, 'a saved plan asks nothing');
  assert.is((classify('bootcplan apply -f x.yaml --auto-approve') as { answer: unknown }).answer, null);
  assert.equal(classify('podman build --build-arg COMMIT=$(git rev-parse HEAD) -t REGISTRY/bootcplan .'), {
    kind: 'listed',
    reasons: [{ key: 'podman', reason: NOT_RUNNABLE.podman }],
  });
  assert.equal(classify('npm install -g bootcplan'), { kind: 'listed', reasons: [{ key: 'npm install', reason: NOT_RUNNABLE['npm install'] }] });
  const unknown = (text: string) => {
    const v = classify(text);
    return v.kind === 'unknown' ? v.problems : [];
  };
  assert.match(unknown('curl -fsSL https://x | sh').join('\n'), /`curl -fsSL` is neither run nor listed/);
  assert.match(unknown('git push origin main').join('\n'), /`git push` is neither run nor listed/);
  assert.match(unknown('npm run build').join('\n'), /`npm run` is neither run nor listed/);
  assert.match(unknown('bootcplan unlock MY_LOCK').join('\n'), /MY_LOCK looks like a placeholder/);
  assert.equal(unknown('NO_COLOR=1 bootcplan plan --ref HEAD'), [], 'an assignment and a git revision are no placeholders');
  assert.match(unknown('npm run demo && bootcplan plan').join('\n'), /split it/);
  assert.equal(classify('kubectl get pods', { ...NOT_RUNNABLE, kubectl: 'not installed here' }), {
    kind: 'listed',
    reasons: [{ key: 'kubectl', reason: 'not installed here' }],
  });
});

const allCommands = () => docFiles().flatMap((file) => docBlocks(file, readDoc(file)).flatMap((b) => b.commands));

s('README.md and docs/*.md: every command is run or listed, and every listing and placeholder is used', () => {
  const commands = allCommands();
  const problems: string[] = [];
  const usedListings = new Set<string>();
  const usedPlaceholders = new Set<Placeholder>();
  let run = 0;
  for (const c of commands) {
    const v = classify(c.text);
    if (v.kind === 'unknown') problems.push(...v.problems.map((p) => `${c.file}:${c.line}: ${p}`));
    else if (v.kind === 'listed') v.reasons.forEach((r) => usedListings.add(r.key));
    else {
      run++;
      v.placeholders.forEach((p) => usedPlaceholders.add(p));
    }
  }
  assert.equal(problems, []);
  assert.equal(
    Object.keys(NOT_RUNNABLE).filter((k) => !usedListings.has(k)),
    [],
    'NOT_RUNNABLE entries no command uses',
  );
  assert.equal(
    Object.keys(PLACEHOLDERS).filter((k) => !usedPlaceholders.has(k as Placeholder)),
    [],
    'PLACEHOLDERS no command uses',
  );
  assert.ok(run >= 30, `${run} commands run`);
  for (const key of Object.keys(RUNS))
    assert.ok(
      commands.some((c) => c.text.includes(key)),
      `RUNS.${key} is used`,
    );
});

/**
 * Flags the docs name that are not bootcplan's on purpose, by page. docs/development.md is left
 * out whole: it documents the project's own scripts (test/run.ts, scripts/*), whose flags are theirs.
 */
const FLAGS_NOT_CHECKED_IN = new Set(['docs/development.md']);
const OTHER_FLAGS: Record<string, Record<string, string>> = {
  'docs/cli.md': { '--clustr': 'the typo whose suggestion the page shows', '--opt': 'the `--opt=value` form in general' },
  'docs/gitops.md': { '--field-selector': "kubectl get events'", '--end-of-options': "git's" },
  'docs/performance.md': { '--cpu-prof': "node's" },
};

s('every --flag the docs name exists on the bootcplan command they name (or on some command)', () => {
  const commands = commandFlags();
  const wrong: string[] = [];
  const used = new Set<string>();
  for (const file of docFiles().filter((f) => !FLAGS_NOT_CHECKED_IN.has(f))) {
    for (const m of misnamedFlags(readFileSync(join(ROOT, file), 'utf8'), null, commands)) {
      if (OTHER_FLAGS[file]?.[m.flag]) used.add(`${file} ${m.flag}`);
      else wrong.push(`${file}: ${m.flag} (${m.command}): ${m.text}`);
    }
  }
  assert.equal(wrong, []);
  const stale = Object.entries(OTHER_FLAGS)
    .flatMap(([file, flags]) => Object.keys(flags).map((f) => `${file} ${f}`))
    .filter((k) => !used.has(k));
  assert.equal(stale, [], 'OTHER_FLAGS entries no page names any more');
  assert.ok(misnamedFlags('bootcplan plan --clusterr x.yaml', null, commands).length === 1, 'the check can fail');
});

s.run();
