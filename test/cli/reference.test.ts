/**
 * docs/cli.md's command reference is generated from the commands themselves
 * (src/cli/reference.ts, `npm run docs:update`): it is up to date, it has every visible command,
 * argument and option with its choices and default, and it would show a changed definition.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.ts';
import { renderCliReference, withCliReference, CLI_REFERENCE_FILE, CLI_REFERENCE_BEGIN, CLI_REFERENCE_END } from '../../src/cli/reference.ts';
import { io } from '../support/cli.ts';

const s = suite('docs/cli.md command reference');

const quiet = () => {};
const program = () =>
  buildProgram(
    {
      io: io({ env: {} }),
      openDriver: async () => {
        throw new Error('not reached');
      },
      now: () => 0,
    },
    quiet,
  );

/** Every command below the program, with its path (`bootcplan fleet render argocd`). */
function commands(c: Command, path = c.name()): { path: string; command: Command }[] {
  return c.commands.flatMap((sub) => [{ path: `${path} ${sub.name()}`, command: sub }, ...commands(sub, `${path} ${sub.name()}`)]);
}
const hidden = (c: Command) => (c as unknown as { _hidden?: boolean })._hidden === true;

/** The generated block of docs/cli.md. */
function committedReference(): string {
  const text = readFileSync(CLI_REFERENCE_FILE, 'utf8');
  const a = text.indexOf(CLI_REFERENCE_BEGIN);
  const b = text.indexOf(CLI_REFERENCE_END);
  assert.ok(a >= 0 && b > a, `${CLI_REFERENCE_FILE} has the cli-reference markers`);
  return text.slice(a + CLI_REFERENCE_BEGIN.length, b);
}

s('docs/cli.md holds the reference the commands generate (npm run docs:update)', () => {
  const text = readFileSync(CLI_REFERENCE_FILE, 'utf8');
  assert.is(withCliReference(text, program()), text, 'run `npm run docs:update` and commit docs/cli.md');
});

s('every visible command has a section with its usage', () => {
  const ref = committedReference();
  const all = commands(program()).filter(({ command }) => !hidden(command));
  assert.ok(all.length >= 18, `${all.length} commands`);
  for (const { path, command } of all) {
    assert.match(ref, new RegExp(`^#{3,6} ${path}$`, 'm'), `a section for ${path}`);
    assert.ok(ref.includes(`\`${path} ${command.usage()}\``), `the usage of ${path}`);
  }
});

s('every option and argument is a row with its description, choices and default', () => {
  const ref = committedReference();
  let rows = 0;
  for (const { path, command } of commands(program()).filter(({ command }) => !hidden(command))) {
    const section = ref.slice(ref.search(new RegExp(`^#{3,6} ${path}$`, 'm')));
    const next = section.search(/\n#{3,6} /);
    const own = next < 0 ? section : section.slice(0, next);
    for (const o of command.options.filter((o) => !o.hidden)) {
      const row = own.split('\n').find((l) => l.startsWith(`| \`${o.flags}\` |`));
      assert.ok(row, `${path}: a row for ${o.flags}`);
      for (const choice of o.argChoices ?? []) assert.ok(row!.includes(`\`${choice}\``), `${path} ${o.flags}: choice ${choice}`);
      if (typeof o.defaultValue === 'string') assert.ok(row!.includes(`\`${o.defaultValue}\``), `${path} ${o.flags}: default ${o.defaultValue}`);
      rows++;
    }
    for (const a of command.registeredArguments) {
      assert.ok(own.includes(a.required ? `| \`<${a.name()}>\` |` : `| \`[${a.name()}]\` |`), `${path}: a row for the argument ${a.name()}`);
      rows++;
    }
  }
  assert.ok(rows > 80, `${rows} rows`);
  // Spot checks of what a reader looks for.
  assert.match(ref, /\| `-o, --output <format>` \| output format \| `text`, `json`, `yaml`, `markdown`, `html` \| `text` \|/);
  assert.match(ref, /\| `<shell>` \| bash, zsh, fish \| `bash`, `zsh`, `fish` \|/);
  assert.match(ref, /\| `--lock-timeout <duration>` \|.*\| `0` \|/);
});

s('a description is table text: a pipe is escaped and an angle bracket is no HTML tag', () => {
  const p = program();
  const argocd = commands(p).find((c) => c.path === 'bootcplan fleet render argocd')!.command;
  const ref = renderCliReference(p);
  assert.ok(
    argocd.options.some((o) => o.description.includes('clusters/<name>/')),
    'the fixture: a description with <name>',
  );
  assert.ok(ref.includes('clusters/&lt;name&gt;/'));
  argocd.option('--weird <x>', 'a | b');
  assert.ok(renderCliReference(p).includes('| a \\| b |'));
});

s('a changed definition changes the reference: the drift check can fail', () => {
  const text = readFileSync(CLI_REFERENCE_FILE, 'utf8');
  const p = program();
  p.commands.find((c) => c.name() === 'plan')!.option('--brand-new', 'an option the docs do not have yet');
  const updated = withCliReference(text, p);
  assert.ok(updated && updated !== text);
  assert.ok(updated!.includes('| `--brand-new` | an option the docs do not have yet |'));
  p.command('secret-thing', { hidden: true }).description('not for the reference');
  assert.not.ok(renderCliReference(p).includes('secret-thing'), 'a hidden command stays out');
  assert.is(withCliReference('# no markers\n', p), null);
});

s.run();
