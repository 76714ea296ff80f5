/**
 * Shell completion (docs/cli.md "Completion"; docs/safety.md "completion never evaluates data"):
 * - the engine (`bootcplan __complete`) walks subcommands at any depth and lists every choice;
 * - bash, zsh and fish, each with the script `bootcplan completion SHELL` prints loaded, complete
 *   through the installed command (bash: `complete -p` and the function over COMP_WORDS; zsh: the
 *   function with compadd and _files captured; fish: `complete -C`);
 * - the attack: a kubeconfig with contexts named `$(touch pwned)` and `` `touch pwned2` ``
 *   (and fish's `(touch pwned3)`): each shell offers the names as they are and no file appears;
 *   a fleet plan with clusters of those names: no shell offers them (not cluster names) or runs
 *   them; a file of such a name: each shell's own file completion inserts it quoted (zsh through
 *   a real line editor, zsh/zpty);
 * - kubectl's plugin completion finds kubectl_complete-bootcplan on PATH; through kubectl's own
 *   bash script (`kubectl completion bash`, which runs `compgen -W` over candidates without a
 *   description and inserts the rest unquoted) hostile names are withheld and nothing runs.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ensureBuilt, ROOT } from '../support/built.ts';
import { cli } from '../support/cli.ts';
import { skipLocally } from '../support/skips.ts';

const s = suite('completion');
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-completion-'));
/** Where the shells run: the attack's files would appear here. */
const work = mkdtempSync(join(tmpdir(), 'bootcplan-completion-cwd-'));
const bin = join(dir, 'bin');
const HOSTILE = ['$(touch pwned)', '`touch pwned2`', '(touch pwned3)'];
/** A real context name with '/' and ':' (`oc login` names contexts so): every route offers it. */
const OPENSHIFT = 'default/api-crc-testing:6443/kube:admin';
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  [
    'apiVersion: v1',
    'kind: Config',
    'contexts:',
    ...['prod-east', 'prod-west', OPENSHIFT, ...HOSTILE].map((n) => `- name: ${JSON.stringify(n)}\n  context: {cluster: c, user: u}`),
    'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
    'users: [{name: u, user: {}}]',
    '',
  ].join('\n'),
);
writeFileSync(join(work, 'fleet-plan.json'), JSON.stringify({ clusters: [{ name: 'east-1' }, { name: 'west-1' }] }));
writeFileSync(join(work, 'fleet-hostile.json'), JSON.stringify({ clusters: [{ name: 'east-1' }, ...HOSTILE.map((name) => ({ name }))] }));
writeFileSync(join(work, 'bootcplan.yaml'), 'kind: Rollout\n');

/** The shells find the installed command (the compiled bins, as npm links them) and read this kubeconfig. */
function shellEnv(): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH}`, KUBECONFIG: kubeconfig, HOME: dir, NO_COLOR: '1' };
}

async function engine(words: string[], command = '__complete') {
  const { code, out } = await cli([command, ...words], { io: { env: { KUBECONFIG: kubeconfig } } });
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
  // Files of no kind of bootcplan's (a snapshot, where --out writes): no candidates and directive 0
  // (the shell completes file names); a directory: 16. Files of a kind: below.
  assert.equal(await engine(['plan', '--cluster', '']), { values: [], directive: 0 });
  assert.equal(await engine(['snapshot', '--out', '']), { values: [], directive: 0 });
  assert.equal(await engine(['fleet', 'render', 'argocd', 'p.json', '--out-dir', '']), { values: [], directive: 16 });
  // Free text (a lock id, a URL): nothing, and no file names either.
  assert.equal(await engine(['unlock', '']), { values: [], directive: 4 });
  assert.equal((await engine(['fleet', 'render', 'argocd', 'p.json', '--repo-url', ''])).directive, 4);
});

/** A directory of files of every kind, named so the name would mislead: the kind is read from the file. */
const kinds = mkdtempSync(join(tmpdir(), 'bootcplan-completion-kinds-'));
const PLAN = JSON.stringify({ formatVersion: '1.0', id: '2919dba70931462b', spec: { kind: 'Fleet' } }, null, 2);
const FLEET_PLAN = JSON.stringify({ formatVersion: '1.0', kind: 'FleetPlan', id: 'f1' }, null, 2);
for (const [name, text] of [
  ['plan.json', PLAN],
  ['saved.out', JSON.stringify(JSON.parse(PLAN))],
  ['fleet-by-name.json', PLAN],
  ['.hidden.json', PLAN],
  ['fleetplan.json', FLEET_PLAN],
  ['rollout.yaml', 'apiVersion: bootcplan.io/v1alpha1\n# a comment\nkind: Rollout\nmetadata: {name: x}\n'],
  ['fleet.yaml', `apiVersion: bootcplan.io/v1alpha1\n${'# padding\n'.repeat(600)}kind: "Fleet"\n`],
  ['notes.yaml', 'kind: Notes\n'],
  ['snapshot.yaml', 'nodes: []\n'],
  ['clusters/prod/bootcplan.yaml', 'kind: Rollout\n'],
  ['clusters/prod/plans/p.json', PLAN],
] as const) {
  spawnSync('mkdir', ['-p', join(kinds, name, '..')]);
  writeFileSync(join(kinds, name), text);
}
const inKinds = async (...words: string[]) => {
  const { code, out } = await cli(['__complete', ...words], { cwd: kinds });
  assert.is(code, 0);
  const lines = out.trimEnd().split('\n');
  return { values: lines.slice(0, -1).map((l) => l.split('\t')[0]), directive: Number(lines[lines.length - 1].slice(1)) };
};

s('each command is offered only files of its own kind, read from the file, and the directories', async () => {
  const plans = { values: ['clusters/', 'fleet-by-name.json', 'plan.json', 'saved.out'], directive: 4 };
  const fleetPlans = { values: ['clusters/', 'fleetplan.json'], directive: 4 };
  assert.equal(await inKinds('show', ''), plans);
  assert.equal(await inKinds('apply', ''), plans);
  assert.equal(await inKinds('rehearse', ''), plans);
  assert.equal(await inKinds('fleet', 'show', ''), fleetPlans);
  assert.equal(await inKinds('fleet', 'apply', ''), fleetPlans);
  assert.equal(await inKinds('fleet', 'rehearse', ''), fleetPlans);
  assert.equal(await inKinds('fleet', 'render', 'argocd', ''), fleetPlans);
  assert.equal(await inKinds('plan', '-f', ''), { values: ['clusters/', 'rollout.yaml'], directive: 4 });
  assert.equal(await inKinds('validate', '--file=r'), { values: ['--file=rollout.yaml'], directive: 4 });
  assert.equal(await inKinds('apply', '-f', ''), { values: ['clusters/', 'rollout.yaml'], directive: 4 });
  assert.equal(await inKinds('fleet', 'plan', '-f', ''), { values: ['clusters/', 'fleet.yaml'], directive: 4 });
  assert.equal(await inKinds('fleet', 'validate', '-f', 'f'), { values: ['fleet.yaml'], directive: 4 });
  // Into a directory: its subdirectories end in / and take no space after them.
  assert.equal(await inKinds('plan', '-f', 'clusters/'), { values: ['clusters/prod/'], directive: 6 });
  assert.equal(await inKinds('plan', '-f', 'clusters/prod/'), { values: ['clusters/prod/bootcplan.yaml', 'clusters/prod/plans/'], directive: 4 });
  assert.equal(await inKinds('show', 'clusters/prod/plans/'), { values: ['clusters/prod/plans/p.json'], directive: 4 });
  // Hidden files when the word starts with a dot, as the shells' file completion does.
  assert.equal(await inKinds('show', '.'), { values: ['.hidden.json'], directive: 4 });
  assert.equal(await inKinds('show', 'nothing'), { values: [], directive: 4 });
  // A snapshot is no kind of bootcplan's: the shell lists the files.
  assert.equal(await inKinds('rehearse', '--cluster', ''), { values: [], directive: 0 });
});

s("kubectl's route (__complete_kubectl): data with a description, names only when plain shell words", async () => {
  const { out } = await cli(['__complete_kubectl', 'plan', '--context', ''], { io: { env: { KUBECONFIG: kubeconfig } } });
  assert.is(out, `prod-east\tkubeconfig context\nprod-west\tkubeconfig context\n${OPENSHIFT}\tkubeconfig context\n:4\n`);
  assert.equal(
    (await engine(['plan', '--context='], '__complete_kubectl')).values,
    ['prod-east', 'prod-west', OPENSHIFT].map((n) => `--context=${n}`),
  );
  assert.equal((await engine(['plan', '--context=d'], '__complete_kubectl')).values, [`--context=${OPENSHIFT}`]);
  assert.equal((await engine(['plan', '--context', '$'], '__complete_kubectl')).values, []);
  assert.equal((await engine(['plan', '--context', '$'])).values, ['$(touch pwned)'], "bootcplan's own scripts quote it");
  // A fleet plan's clusters: only names the fleet spec admits, on every route.
  assert.equal((await engine(['fleet', 'show', join(work, 'fleet-hostile.json'), '--cluster', ''])).values, ['east-1']);
});

// ------------------------------------------------------------------ the shells

function runShell(shell: string, args: string[]) {
  const r = spawnSync(shell, args, { encoding: 'utf8', cwd: work, env: shellEnv(), timeout: 120_000 });
  assert.is(r.status, 0, `${shell}: ${r.stderr}`);
  return r.stdout;
}

/** A word for bash or zsh: single quotes hold anything but a single quote. */
const shQuote = (t: string) => `'${t.replace(/'/g, `'\\''`)}'`;

/** bash: the function the script registered, over COMP_WORDS, as readline calls it. */
function bashComplete(line: string[]): string[] {
  const words = line.map(shQuote).join(' ');
  const out = runShell('bash', [
    '-c',
    `source ${dir}/completion.bash; COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _bootcplan; printf '%s\\n' "\${COMPREPLY[@]}"`,
  ]);
  return out.split('\n').filter(Boolean);
}

/** zsh: the function with compadd and _files replaced by recorders (they only work inside a completion widget). */
function zshComplete(line: string[]): string[] {
  const words = line.map(shQuote).join(' ');
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
  assert.equal(zshComplete(['bootcplan', 'plan', '-f', '']), ['bootcplan.yaml']);
  assert.equal(zshComplete(['bootcplan', 'plan', '--cluster', '']), ['<files >']);
  assert.equal(zshComplete(['bootcplan', 'fleet', 'render', 'argocd', 'x', '--out-dir', '']), ['<files -/>']);
});

s('fish: complete -C; commands, nested subcommands, choices, files', () => {
  assert.equal(fishComplete('bootcplan fleet render '), ['argocd']);
  assert.equal(fishComplete('bootcplan version -o '), ['text', 'json', 'yaml']);
  assert.equal(fishComplete('bootcplan completion '), ['bash', 'zsh', 'fish']);
  assert.equal(fishComplete('bootcplan plan -f boot'), ['bootcplan.yaml']);
  assert.equal(fishComplete('kubectl-bootcplan fleet sh'), ['show']);
});

/**
 * zsh at a real prompt (zsh/zpty: compinit, the script loaded, the line editor): types each line
 * and TAB, then a key whose widget saves the edited line. What zsh would run on Enter.
 */
function zshTab(lines: string[]): string[] {
  const zdot = mkdtempSync(join(tmpdir(), 'bootcplan-completion-zsh-'));
  const saved = join(zdot, 'lines');
  writeFileSync(
    join(zdot, '.zshrc'),
    [
      "bindkey -e; PS1='READY> '",
      'autoload -U compinit; compinit -u -D',
      `source ${dir}/completion.zsh`,
      `_save() { print -r -- "$BUFFER" >> ${saved}; BUFFER=; zle accept-line; }; zle -N _save; bindkey '^X^D' _save`,
      '',
    ].join('\n'),
  );
  const typed = lines.map((l) => `zpty -w -n z ${shQuote(l + '\t\x18\x04')}; zpty -r z out '*READY> *'`);
  runShell('zsh', ['-f', '-c', ['zmodload zsh/zpty', `zpty z 'ZDOTDIR=${zdot} zsh -d -i'`, "zpty -r z out '*READY> *'", ...typed, 'zpty -d z'].join('\n')]);
  return readFileSync(saved, 'utf8').split('\n').slice(0, lines.length);
}

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
    OPENSHIFT,
    '\\$\\(touch\\ pwned\\)',
    '\\`touch\\ pwned2\\`',
    '\\(touch\\ pwned3\\)',
  ]);
  attack('bash', bashComplete(['bootcplan', 'apply', '--kubeconfig', kubeconfig, '--context', '$']), ['\\$\\(touch\\ pwned\\)']);
  // zsh: compadd gets the names as they are (it quotes what it inserts).
  attack('zsh', zshComplete(['bootcplan', 'plan', '--context', '']), ['prod-east', 'prod-west', OPENSHIFT, ...HOSTILE]);
  attack('fish', fishComplete('bootcplan plan --context '), ['prod-east', 'prod-west', OPENSHIFT, ...HOSTILE]);
  // A fleet plan's clusters of those names: not cluster names (the fleet spec's rule), not offered.
  attack('bash', bashComplete(['bootcplan', 'fleet', 'show', 'fleet-hostile.json', '--cluster', '']), ['east-1']);
  attack('zsh', zshComplete(['bootcplan', 'fleet', 'show', 'fleet-hostile.json', '--cluster', '']), ['east-1']);
  attack('fish', fishComplete('bootcplan fleet show fleet-hostile.json --cluster '), ['east-1']);
  // A file name: a spec of that name offered by the engine, quoted as a context name is; a
  // snapshot of that name through the shells' own file completion. Nothing in the directory runs.
  writeFileSync(join(work, '$(touch pwned4)'), 'kind: Rollout\n');
  try {
    attack('bash', bashComplete(['bootcplan', 'plan', '-f', '$']), ['\\$\\(touch\\ pwned4\\)']);
    attack('bash', bashComplete(['bootcplan', 'plan', '--cluster', '$']), ['$(touch pwned4)']);
    attack('fish', fishComplete('bootcplan plan -f \\$'), ['$(touch pwned4)']);
    attack('fish', fishComplete('bootcplan plan --cluster \\$'), ['$(touch pwned4)']);
    // zsh's _files at a real prompt: the line holds the name quoted; the cluster the one real name.
    attack('zsh', zshTab(['bootcplan plan -f \\$', 'bootcplan plan --cluster \\$', 'bootcplan fleet show fleet-hostile.json --cluster ']), [
      'bootcplan plan -f \\$\\(touch\\ pwned4\\) ',
      'bootcplan plan --cluster \\$\\(touch\\ pwned4\\) ',
      'bootcplan fleet show fleet-hostile.json --cluster east-1 ',
    ]);
  } finally {
    spawnSync('rm', ['-f', join(work, '$(touch pwned4)')]);
  }
});

/**
 * bash through kubectl's own script (`kubectl completion bash`, cobra's bash v2): its function over
 * COMP_WORDS, as readline calls it on TAB. Without the bash-completion package, a stand-in for the
 * one function of it the script calls (the words here are whole: nothing to rejoin at '=' or ':').
 */
function kubectlBash(line: string[]): string[] {
  const script = [
    `source ${dir}/kubectl.bash`,
    'declare -F _get_comp_words_by_ref >/dev/null ||',
    '  _get_comp_words_by_ref() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }',
    `COMP_WORDS=(${line.map(shQuote).join(' ')}); COMP_CWORD=${line.length - 1}; COMP_TYPE=9`,
    `COMP_LINE=\${COMP_WORDS[*]}; COMP_POINT=\${#COMP_LINE}`,
    '__start_kubectl 2>/dev/null',
    `printf '%s\\n' "\${COMPREPLY[@]}"`,
  ].join('\n');
  return runShell('bash', ['-c', script]).split('\n').filter(Boolean);
}

s('kubectl bootcplan <TAB>: kubectl runs kubectl_complete-bootcplan from PATH; its bash script runs no name', () => {
  if (!has('kubectl')) {
    skipLocally('kubectl', '.ci/run installs it');
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
  // kubectl's bash script: candidates without a description go through `compgen -W`, which
  // expands $(...) and `...`; the others are inserted unquoted. A hostile name is not offered.
  const r = spawnSync('kubectl', ['completion', 'bash'], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  writeFileSync(join(dir, 'kubectl.bash'), r.stdout);
  const attack = (what: string, got: string[], want: string[]) => {
    assert.equal(
      readdirSync(work).filter((f) => f.startsWith('pwned')),
      [],
      `kubectl's bash completion ran a ${what}`,
    );
    assert.equal(got, want, what);
  };
  attack('context name', kubectlBash(['kubectl', 'bootcplan', 'plan', '--context', '']), ['prod-east', 'prod-west', OPENSHIFT]);
  attack('context name', kubectlBash(['kubectl', 'bootcplan', 'plan', '--context', 'default/']), [OPENSHIFT]);
  attack('cluster name', kubectlBash(['kubectl', 'bootcplan', 'fleet', 'show', 'fleet-hostile.json', '--cluster', '']), ['east-1']);
});

s.run();
