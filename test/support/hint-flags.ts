/**
 * What a hint may name: the flags of bootcplan's commands as commander registered them (the
 * program tree of cli/main.ts buildProgram), and a checker that finds every `--flag` in a text
 * and the command it is meant for: the one the text names (`bootcplan fleet plan --out`), else
 * the command that printed it. Flags of other tools (kubectl, oc, git, the Argo CD controller)
 * are theirs to name.
 */
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.ts';
import { io } from './cli.ts';

/** Every command path ('' for the program, 'fleet render argocd') and the long flags it accepts (the program's own included). */
export function commandFlags(): Map<string, Set<string>> {
  const program = buildProgram(
    {
      io: io({ env: {} }),
      openDriver: async () => {
        throw new Error('not reached');
      },
      now: () => 0,
    },
    () => {},
  );
  const out = new Map<string, Set<string>>();
  const globals = new Set(['--help', ...program.options.map((o) => o.long!).filter(Boolean)]);
  const walk = (c: Command, path: string[]) => {
    out.set(path.join(' '), new Set([...globals, ...c.options.map((o) => o.long!).filter(Boolean)]));
    for (const sub of c.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return out;
}

/** Other tools a hint may quote, with their own flags. */
const FOREIGN = /\b(?:kubectl(?! bootcplan)|oc|git|etcd|bootc|controller|podman|docker)\b/g;

export interface MisnamedFlag {
  flag: string;
  command: string;
  text: string;
}

/**
 * The flags in `text` that the command they are meant for does not have. `ran`: the command
 * that printed the text (null: any command of bootcplan will do, for texts read from the sources).
 */
export function misnamedFlags(text: string, ran: string | null, commands: Map<string, Set<string>>): MisnamedFlag[] {
  const out: MisnamedFlag[] = [];
  for (const line of text.split('\n')) {
    // A clause ends at ; , or " or ": "pass --kubeconfig PATH, or plan against a snapshot with --cluster FILE"
    // names apply's flags in its first clause and, in the second, still the flags of the command that printed it.
    for (const clause of line.split(/;|,\s| or /)) {
      for (const m of clause.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)) {
        const before = clause.slice(0, m.index);
        const named = lastNamedCommand(before, commands);
        const foreign = [...before.matchAll(FOREIGN)].pop();
        if (foreign && (!named || foreign.index! > named.at)) continue;
        const command = named?.path ?? ran;
        const flag = `--${m[1]}`;
        const known = command === null ? [...commands.values()].some((f) => f.has(flag)) : commands.get(command)?.has(flag);
        if (!known) out.push({ flag, command: command ?? '(any)', text: line.trim() });
      }
    }
  }
  return out;
}

/** The last `bootcplan CMD [SUB...]` in `text`: the longest command path its words spell. */
function lastNamedCommand(text: string, commands: Map<string, Set<string>>): { path: string; at: number } | null {
  let found: { path: string; at: number } | null = null;
  for (const m of text.matchAll(/\bbootcplan((?:\s+[a-z]+)+)/g)) {
    const words = m[1].trim().split(/\s+/);
    let path = '';
    for (const w of words) {
      const next = path ? `${path} ${w}` : w;
      if (!commands.has(next)) break;
      path = next;
    }
    if (path) found = { path, at: m.index! };
  }
  return found;
}
