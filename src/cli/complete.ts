/**
 * `bootcplan __complete WORD... CURRENT`: the one completion engine behind the bash, zsh and
 * fish scripts and kubectl's plugin completion (bin/kubectl_complete-bootcplan.mjs), and the
 * `completion SHELL` command that prints those scripts (app/completion.ts). The engine walks the
 * commander program as the CLI would parse the words (subcommands at any depth, options of the
 * command and of its parents, `--opt=value`, `--`), then lists what may come at the cursor:
 * subcommands, options, an option's or an argument's choices, kubeconfig contexts, a fleet
 * plan's clusters (their data from app/completion.ts fileSources); or asks the shell for file
 * names. A name holding a control character cannot be one line of the protocol
 * (app/completion.ts completionText), so it is never offered; on kubectl's route, only names that
 * are plain shell words are (Route below).
 */
import { Argument, type Command, type Option } from 'commander';
import { DIRECTIVE, SHELLS, completionCommand, type Candidate, type Completion, type CompletionSources, type Shell } from '../app/completion.ts';
import type { FileKind } from '../base/errors.ts';
import { choiceParser, exitWith, type CommandContext } from './options.ts';

export const COMPLETE_COMMAND = '__complete';
/** The same engine for kubectl's completion scripts (bin/kubectl_complete-bootcplan.mjs runs it). */
export const KUBECTL_COMPLETE_COMMAND = '__complete_kubectl';

/**
 * Who reads the candidates (docs/safety.md "Completion never evaluates data"). `scripts`:
 * bootcplan's own, which insert each name quoted. `kubectl`: kubectl's (cobra's bash v2 script,
 * as `kubectl completion bash` prints it), which runs `compgen -W` over the candidates when none
 * carries a description, expanding `$(...)` and backquotes in them, and else inserts the chosen
 * one unquoted, where Enter runs it and the next TAB `eval`s the line. So data candidates always
 * carry a description, and on kubectl's route only a plain shell word is offered.
 */
type Route = 'scripts' | 'kubectl';

/**
 * A word no shell expands or splits: letters, digits, `. _ : / @ + , = % -`, not starting with `=`
 * (zsh's `=cmd`). Real context names are such words (`user@cluster`, an EKS ARN, `oc login`'s
 * `default/api-crc-testing:6443/kube:admin`); one with a space or `$` would be inserted broken.
 */
const PLAIN_WORD = /^(?!=)[\p{L}\p{M}\p{N}._:/@+,=%-]+$/u;

/** What a value (of an option or an argument) completes to. */
type ValueKind =
  | { kind: 'choices'; values: readonly string[] }
  | { kind: 'files' }
  | { kind: 'files-of'; of: FileKind }
  | { kind: 'dirs' }
  | { kind: 'contexts' }
  | { kind: 'fleet-clusters' }
  | { kind: 'text' };

/** Placeholders (`<spec>`, `[planfile]`) of values that name a file. */
const FILE_VALUES = new Set(['spec', 'snapshot', 'fleet', 'path', 'file', 'planfile', 'fleetplan']);

/**
 * Placeholders of a file of one of bootcplan's kinds: each command is offered only its own kind
 * (docs/cli.md "Completion"), read from the file (app/completion.ts filesOfKind).
 */
const KIND_VALUES: Record<string, FileKind> = { spec: 'Rollout', fleet: 'Fleet', planfile: 'Plan', fleetplan: 'FleetPlan' };

function fileValueKind(placeholder: string): ValueKind {
  const of = Object.hasOwn(KIND_VALUES, placeholder) ? KIND_VALUES[placeholder] : undefined;
  return of ? { kind: 'files-of', of } : FILE_VALUES.has(placeholder) ? { kind: 'files' } : { kind: 'text' };
}

const placeholderOf = (flags: string) => /[<[]([^>\]]+)[>\]]/.exec(flags)?.[1].replace(/\.\.\.$/, '') ?? '';

function optionValueKind(o: Option): ValueKind {
  if (o.argChoices?.length) return { kind: 'choices', values: o.argChoices };
  const ph = placeholderOf(o.flags);
  if (o.long === '--context') return { kind: 'contexts' };
  if (o.long === '--cluster' && ph === 'name') return { kind: 'fleet-clusters' };
  if (ph === 'dir') return { kind: 'dirs' };
  // --out names a file to write: any name, through the shell's file completion.
  if (o.long === '--out') return { kind: 'files' };
  return fileValueKind(ph);
}

function argumentValueKind(a: Argument): ValueKind {
  if (a.argChoices?.length) return { kind: 'choices', values: a.argChoices };
  return fileValueKind(a.name());
}

const takesValue = (o: Option) => o.required || o.optional;

/** The command's options and its parents' (commander recognises a parent's option after a subcommand). */
function optionsInScope(chain: readonly Command[]): Option[] {
  return chain.flatMap((c) => c.options).filter((o) => !o.hidden);
}

function findOption(chain: readonly Command[], flag: string): Option | undefined {
  return optionsInScope(chain).find((o) => o.long === flag || o.short === flag);
}

function visibleSubcommands(cmd: Command): Command[] {
  // commander keeps `_hidden` on the command without declaring it in its types.
  return cmd.commands.filter((c) => !('_hidden' in c && c._hidden) && c.name() !== COMPLETE_COMMAND);
}

interface Walk {
  route: Route;
  chain: Command[];
  positionals: string[];
  /** Option values given so far, by long flag (the last wins). */
  values: Map<string, string>;
  /** An option whose value the current word is. */
  pending: Option | null;
  afterDashDash: boolean;
}

/** Parses the words before the cursor as commander would. */
function walk(program: Command, before: readonly string[], route: Route): Walk {
  const w: Walk = { route, chain: [program], positionals: [], values: new Map(), pending: null, afterDashDash: false };
  for (let i = 0; i < before.length; i++) {
    const word = before[i];
    const cmd = w.chain[w.chain.length - 1];
    if (w.pending) {
      w.values.set(w.pending.long ?? w.pending.short ?? '', word);
      w.pending = null;
    } else if (w.afterDashDash) {
      w.positionals.push(word);
    } else if (word === '--') {
      w.afterDashDash = true;
    } else if (word.startsWith('-') && word !== '-') {
      const eq = word.startsWith('--') ? word.indexOf('=') : -1;
      const o = findOption(w.chain, eq > 0 ? word.slice(0, eq) : word);
      if (!o || !takesValue(o)) continue;
      const key = o.long ?? o.short ?? '';
      if (eq > 0) w.values.set(key, word.slice(eq + 1));
      // bash splits `--opt=value` at '=' (COMP_WORDBREAKS): `--opt`, `=`, `value`.
      else if (before[i + 1] === '=') {
        w.values.set(key, before[i + 2] ?? '');
        i += 2;
        if (i >= before.length) w.pending = o;
      } else if (o.required || (before[i + 1] !== undefined && !before[i + 1].startsWith('-'))) w.pending = o;
    } else {
      const sub = w.positionals.length === 0 ? visibleSubcommands(cmd).find((c) => c.name() === word || c.aliases().includes(word)) : undefined;
      if (sub) w.chain.push(sub);
      else w.positionals.push(word);
    }
  }
  return w;
}

/** Never offered: a name that cannot be one line of the protocol. */
const CONTROL = /[\u0000-\u001f\u007f]/;

function valueCompletion(kind: ValueKind, prefix: string, w: Walk, sources: CompletionSources): Completion {
  const offered = (n: string) => n.startsWith(prefix) && !CONTROL.test(n) && (w.route === 'scripts' || PLAIN_WORD.test(n));
  const data = (names: string[], help?: string): Completion => ({
    candidates: [...new Set(names)].filter(offered).map((value) => ({ value, help })),
    directive: DIRECTIVE.noFileComp,
  });
  switch (kind.kind) {
    case 'choices':
      return data([...kind.values]);
    case 'files':
      return { candidates: [], directive: DIRECTIVE.default };
    case 'files-of': {
      const paths = safelyOrNull(() => sources.filesOfKind(prefix, kind.of));
      if (paths === null) return { candidates: [], directive: DIRECTIVE.default };
      const label = kind.of === 'Rollout' || kind.of === 'Fleet' ? `${kind.of} spec` : kind.of === 'Plan' ? 'plan' : 'fleet plan';
      const c = data(paths);
      c.candidates = c.candidates.map((x) => ({ ...x, help: x.value.endsWith('/') ? 'directory' : label }));
      // Only directories: the word goes on into one, so no space after it.
      const dirsOnly = c.candidates.length > 0 && c.candidates.every((x) => x.value.endsWith('/'));
      return dirsOnly ? { ...c, directive: c.directive | DIRECTIVE.noSpace } : c;
    }
    case 'dirs':
      return { candidates: [], directive: DIRECTIVE.filterDirs };
    case 'contexts':
      return data(
        safely(() => sources.contexts(w.values.get('--kubeconfig'))),
        'kubeconfig context',
      );
    case 'fleet-clusters':
      return data(w.positionals[0] ? safely(() => sources.fleetClusters(w.positionals[0])) : [], 'cluster of the fleet plan');
    default:
      return { candidates: [], directive: DIRECTIVE.noFileComp };
  }
}

function safelyOrNull(read: () => string[] | null): string[] | null {
  try {
    return read();
  } catch {
    return null;
  }
}

function safely(read: () => string[]): string[] {
  try {
    return read().filter((n) => typeof n === 'string');
  } catch {
    return [];
  }
}

function optionCandidates(w: Walk, prefix: string): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  const add = (flag: string | undefined, help: string) => {
    if (flag && flag.startsWith(prefix) && !seen.has(flag)) {
      seen.add(flag);
      out.push({ value: flag, help });
    }
  };
  for (const o of optionsInScope(w.chain)) {
    add(o.long, o.description);
    add(o.short, o.description);
  }
  add('--help', 'show help');
  add('-h', 'show help');
  return out;
}

/** What may come at the cursor, given the words before it and the word being typed. */
export function completeWords(program: Command, words: readonly string[], sources: CompletionSources, route: Route = 'scripts'): Completion {
  const before = words.slice(0, -1);
  const current = words.length ? words[words.length - 1] : '';
  const w = walk(program, before, route);
  if (w.pending) return valueCompletion(optionValueKind(w.pending), current, w, sources);
  const cmd = w.chain[w.chain.length - 1];
  if (!w.afterDashDash && current.startsWith('--') && current.includes('=')) {
    const eq = current.indexOf('=');
    const o = findOption(w.chain, current.slice(0, eq));
    if (!o || !takesValue(o)) return { candidates: [], directive: DIRECTIVE.noFileComp };
    const c = valueCompletion(optionValueKind(o), current.slice(eq + 1), w, sources);
    return { ...c, candidates: c.candidates.map((x) => ({ ...x, value: `${current.slice(0, eq + 1)}${x.value}` })) };
  }
  if (!w.afterDashDash && current.startsWith('-')) return { candidates: optionCandidates(w, current), directive: DIRECTIVE.noFileComp };
  const subs = visibleSubcommands(cmd);
  if (subs.length && w.positionals.length === 0) {
    return {
      candidates: subs.filter((c) => c.name().startsWith(current)).map((c) => ({ value: c.name(), help: c.description() })),
      directive: DIRECTIVE.noFileComp,
    };
  }
  const args = cmd.registeredArguments;
  const i = w.positionals.length;
  const arg = args[i] ?? (args.length && args[args.length - 1].variadic ? args[args.length - 1] : undefined);
  if (!arg) return { candidates: [], directive: DIRECTIVE.noFileComp };
  return valueCompletion(argumentValueKind(arg), current, w, sources);
}

export function registerCompletionCommand(program: Command, ctx: CommandContext): void {
  program
    .command('completion')
    .description('print the shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', SHELLS.join(', ')).choices(SHELLS).argParser(choiceParser(SHELLS, 'shells')))
    .action((shell: Shell) => exitWith(ctx, completionCommand(ctx, shell)));
}
