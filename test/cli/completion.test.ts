/**
 * Shell completion (docs/cli.md "Completion"; docs/safety.md "completion never evaluates data"):
 * - the engine (`bootcplan __complete`) walks subcommands at any depth and lists every choice;
 * - bash, zsh and fish, each with the script `bootcplan completion SHELL` prints loaded, complete
 *   through the installed command (bash: `complete -p` and the function over COMP_WORDS; zsh: the
 *   function with compadd and _files captured; fish: `complete -C`);
 * - the attack: a kubeconfig with contexts named `$(touch pwned)` and `` `touch pwned2` ``
 *   (and fish's `(touch pwned3)`): each shell offers the names as they are and no file appears;
 * - kubectl's plugin completion finds kubectl_complete-bootcplan on PATH.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, readdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ensureBuilt, ROOT } from '../support/built.ts';
import { cli } from '../support/cli.ts';

const s = suite('completion');
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-completion-'));
/** Where the shells run: the attack's files would appear here. */
const work = mkdtempSync(join(tmpdir(), 'bootcplan-completion-cwd-'));
const bin = join(dir, 'bin');
const HOSTILE = ['$(touch pwned)', '`touch pwned2`', '(touch pwned3)'];
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  [
    'apiVersion: v1',
    'kind: Config',
    'contexts:',
    ...['prod-east', 'prod-west', ...HOSTILE].map((n) => `- name: ${JSON.stringify(n)}\n  context: {cluster: c, user: u}`),
    'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
    'users: [{name: u, user: {}}]',
    '',
  ].join('\n'),
);
writeFileSync(join(work, 'fleet-plan.json'), JSON.stringify({ clusters: [{ name: 'east-1' }, { name: 'west-1' }] }));
writeFileSync(join(work, 'bootcplan.yaml'), 'kind: Rollout\n');

/** The shells find the installed command (the compiled bins, as npm links them) and read this kubeconfig. */
function shellEnv(): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH}`, KUBECONFIG: kubeconfig, HOME: dir, NO_COLOR: '1' };
}

async function engine(words: string[]) {
  const { code, out } = await cli(['__complete', ...words], { io: { env: { KUBECONFIG: kubeconfig } } });
  assert.is(code, 0);
  const lines = out.trimEnd().split('\n');
  const directive = Number(lines.pop()!.slice(1));
  return { values: lines.map((l) => l.split('\t')[0]), directive };
}

s.before(() => {
  const built = ensureBuilt();
  spawnSync('mkdir', ['-p', bin]);
  symlinkSync(built, join(bin, 'bootcplan'));
  symlinkSync(join(ROOT, 'bin/kubectl_complete-bootcplan.mjs'), join(bin, 'kubectl_complete-bootcplan'));
  symlinkSync(join(ROOT, 'bin/kubectl-bootcplan.mjs'), join(bin, 'kubectl-bootcplan'));
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = spawnSync(process.execPath, [built, 'completion', shell], { encoding: 'utf8' });
    assert.is(r.status, 0, r.stderr);
    writeFileSync(join(dir, `completion.${shell}`), r.stdout);
  }
});

s('the engine walks subcommands at any depth, lists every choice, and asks the shell for files where a file goes', async () => {
  assert.equal((await engine(['fleet', ''])).values, ['plan', 'show', 'validate', 'apply', 'rehearse', 'render']);
  assert.equal((await engine(['fleet', 'render', ''])).values, ['argocd']);
  assert.equal((await engine(['fleet', 'render', 'argocd', '--re'])).values, ['--repo-url', '--revision']);
  assert.equal((await engine(['version', '-o', ''])).values, ['text', 'json', 'yaml']);
  assert.equal((await engine(['completion', ''])).values, ['bash', 'zsh', 'fish']);
  assert.equal((await engine(['fleet', 'show', '-o', 'm'])).values, ['markdown']);
  assert.equal((await engine(['-q', 'status', '--output=j'])).values, ['--output=json']);
  assert.equal((await engine(['plan', '--kubeconfig', kubeconfig, '--context', 'prod-'])).values, ['prod-east', 'prod-west']);
  assert.equal((await engine(['fleet', 'show', join(work, 'fleet-plan.json'), '--cluster', ''])).values, ['east-1', 'west-1']);
  // A parent's option after the subcommand, as commander parses it; the subcommand's own flags.
  assert.ok((await engine(['fleet', 'apply', '-'])).values.includes('--quiet'));
  // Files: no candidates and directive 0 (the shell completes file names); a directory: 16.
  assert.equal(await engine(['plan', '-f', '']), { values: [], directive: 0 });
  assert.equal(await engine(['show', '']), { values: [], directive: 0 });
  assert.equal(await engine(['fleet', 'render', 'argocd', 'p.json', '--out-dir', '']), { values: [], directive: 16 });
  // Free text (a lock id, a URL): nothing, and no file names either.
  assert.equal(await engine(['unlock', '']), { values: [], directive: 4 });
  assert.equal((await engine(['fleet', 'render', 'argocd', 'p.json', '--repo-url', ''])).directive, 4);
});

// ------------------------------------------------------------------ the shells

function runShell(shell: string, args: string[]) {
  const r = spawnSync(shell, args, { encoding: 'utf8', cwd: work, env: shellEnv() });
  assert.is(r.status, 0, `${shell}: ${r.stderr}`);
  return r.stdout;
}

/** bash: the function the script registered, over COMP_WORDS, as readline calls it. */
function bashComplete(line: string[]): string[] {
  const words = line.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  const out = runShell('bash', [
    '-c',
    `source ${dir}/completion.bash; COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _bootcplan; printf '%s\\n' "\${COMPREPLY[@]}"`,
  ]);
  return out.split('\n').filter(Boolean);
}

/** zsh: the function with compadd and _files replaced by recorders (they only work inside a completion widget). */
function zshComplete(line: string[]): string[] {
  const words = line.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  const script = [
    'compdef() { :; }',
    `source ${dir}/completion.zsh`,
    'compadd() { local -a a=("$@"); local i=${a[(i)--]}; print -rl -- "${(@)a[i+1,-1]}"; }',
    '_files() { print -r -- "<files $*>"; }',
    `words=(${words}); CURRENT=${line.length}; _bootcplan`,
  ].join('\n');
  return runShell('zsh', ['-f', '-c', script]).split('\n').filter(Boolean);
}

/** fish: its own completion machinery, `complete -C`. */
function fishComplete(line: string): string[] {
  const out = runShell('fish', ['--no-config', '-c', `source ${dir}/completion.fish; complete -C ${fishQuote(line)}`]);
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t')[0]);
}
const fishQuote = (t: string) => `'${t.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

s('bash: complete -p names the function; commands, nested subcommands, choices, flags, files', () => {
  assert.match(
    runShell('bash', ['-c', `source ${dir}/completion.bash; complete -p bootcplan kubectl-bootcplan`]),
    /complete -F _bootcplan bootcplan\ncomplete -F _bootcplan kubectl-bootcplan/,
  );
  assert.equal(bashComplete(['bootcplan', 'pl']), ['plan']);
  assert.equal(bashComplete(['bootcplan', 'fleet', 're']), ['rehearse', 'render']);
  assert.equal(bashComplete(['bootcplan', 'fleet', 'render', '']), ['argocd']);
  assert.equal(bashComplete(['bootcplan', 'version', '-o', '']), ['text', 'json', 'yaml']);
  assert.equal(bashComplete(['bootcplan', 'completion', '']), ['bash', 'zsh', 'fish']);
  assert.equal(bashComplete(['bootcplan', 'status', '--o']), ['--output']);
  assert.equal(bashComplete(['bootcplan', 'plan', '-f', 'boot']), ['bootcplan.yaml']);
  assert.equal(bashComplete(['bootcplan', 'fleet', '']).length, 6, 'after fleet: its subcommands, not files');
});

s('zsh: the script loads; commands, nested subcommands, choices; files through _files', () => {
  runShell('zsh', ['-n', `${dir}/completion.zsh`]);
  assert.equal(zshComplete(['bootcplan', 'fleet', 'render', '']), ['argocd']);
  assert.equal(zshComplete(['bootcplan', 'version', '-o', '']), ['text', 'json', 'yaml']);
  assert.equal(zshComplete(['bootcplan', 'completion', '']), ['bash', 'zsh', 'fish']);
  assert.equal(zshComplete(['bootcplan', 'plan', '-f', '']), ['<files >']);
  assert.equal(zshComplete(['bootcplan', 'fleet', 'render', 'argocd', 'x', '--out-dir', '']), ['<files -/>']);
});

s('fish: complete -C; commands, nested subcommands, choices, files', () => {
  assert.equal(fishComplete('bootcplan fleet render '), ['argocd']);
  assert.equal(fishComplete('bootcplan version -o '), ['text', 'json', 'yaml']);
  assert.equal(fishComplete('bootcplan completion '), ['bash', 'zsh', 'fish']);
  assert.equal(fishComplete('bootcplan plan -f boot'), ['bootcplan.yaml']);
  assert.equal(fishComplete('kubectl-bootcplan fleet sh'), ['show']);
});

s('the attack: contexts named $(touch pwned), `touch pwned2` and (touch pwned3) are offered as names; no shell runs them', () => {
  const attack = (shell: string, got: string[], want: string[]) => {
    assert.equal(
      readdirSync(work).filter((f) => f.startsWith('pwned')),
      [],
      `${shell} ran a context name`,
    );
    assert.equal(got.sort(), want.sort(), shell);
  };
  // bash inserts COMPREPLY as it is: each name quoted for the command line.
  attack('bash', bashComplete(['bootcplan', 'plan', '--context', '']), [
    'prod-east',
    'prod-west',
    '\\$\\(touch\\ pwned\\)',
    '\\`touch\\ pwned2\\`',
    '\\(touch\\ pwned3\\)',
  ]);
  attack('bash', bashComplete(['bootcplan', 'apply', '--kubeconfig', kubeconfig, '--context', '$']), ['\\$\\(touch\\ pwned\\)']);
  // zsh: compadd gets the names as they are (it quotes what it inserts).
  attack('zsh', zshComplete(['bootcplan', 'plan', '--context', '']), ['prod-east', 'prod-west', ...HOSTILE]);
  attack('fish', fishComplete('bootcplan plan --context '), ['prod-east', 'prod-west', ...HOSTILE]);
  // Where a file name is completed, the shells' own file completion: nothing in the directory runs.
  writeFileSync(join(work, '$(touch pwned4)'), '');
  try {
    attack('bash', bashComplete(['bootcplan', 'plan', '-f', '$']), ['$(touch pwned4)']);
    attack('fish', fishComplete('bootcplan plan -f \\$'), ['$(touch pwned4)']);
  } finally {
    spawnSync('rm', ['-f', join(work, '$(touch pwned4)')]);
  }
});

s('kubectl bootcplan <TAB>: kubectl runs kubectl_complete-bootcplan from PATH and offers its candidates', () => {
  if (!has('kubectl')) {
    console.log('  (kubectl not installed: plugin completion not checked)');
    return;
  }
  const complete = (...words: string[]) => {
    const r = spawnSync('kubectl', ['__complete', 'bootcplan', ...words], { encoding: 'utf8', cwd: work, env: shellEnv() });
    assert.is(r.status, 0, r.stderr);
    return r.stdout
      .split('\n')
      .filter((l) => l && !l.startsWith(':'))
      .map((l) => l.split('\t')[0]);
  };
  assert.equal(complete('fleet', 'render', ''), ['argocd']);
  assert.equal(complete('version', '-o', ''), ['text', 'json', 'yaml']);
  assert.equal(complete('plan', '--context', 'prod-'), ['prod-east', 'prod-west']);
  assert.equal(
    readdirSync(work).filter((f) => f.startsWith('pwned')),
    [],
  );
});

s.run();
