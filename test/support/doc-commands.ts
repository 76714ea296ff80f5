/**
 * The commands of the documentation and the rules that say which run, how, and with what exit
 * code (docs/development.md "Docs that execute"). test/repo/doc-commands.test.ts checks the rules and
 * that every command is either run or listed here; test/e2e/12-docs.test.ts runs them.
 *
 * Which lines are commands:
 * - a fenced block marked `sh`, `bash` or `shell` (run by bash), `zsh` or `fish` (run by that
 *   shell): every line that is not blank or only a comment; a line ending in `\` continues on
 *   the next;
 * - a block marked `console`: the lines that start with `$ ` (the rest is their output);
 * - a block with no language: the lines that start with `bootcplan `, `npx bootcplan `,
 *   `kubectl bootcplan ` or `$ ` (a synopsis or output that looks like that is marked `text`);
 * - nothing else (`text`, `yaml`, `json`, inline code) runs.
 * Expected exit code: 0, unless the command's comment ends with `exit N`.
 */
import type { Fence, ParsedDoc } from './doc-files.ts';

export type Shell = 'bash' | 'zsh' | 'fish';

export interface DocCommand {
  file: string;
  /** 1-based line where the command starts. */
  line: number;
  shell: Shell;
  /** The command as written (continuation lines joined with their backslash-newline). */
  text: string;
  expectedExit: number;
}

export interface DocBlock {
  file: string;
  line: number;
  lang: string;
  commands: DocCommand[];
}

const SHELL_OF: Record<string, Shell> = { sh: 'bash', bash: 'bash', shell: 'bash', console: 'bash', zsh: 'zsh', fish: 'fish' };
const PLAIN_COMMAND = /^(?:\$ |(?:npx |kubectl )?bootcplan(?: |$))/;

/** The commands of one fenced block, by the rules above; [] for a block that holds none. */
export function blockCommands(file: string, fence: Fence): DocCommand[] {
  const shell = fence.lang === '' ? 'bash' : SHELL_OF[fence.lang];
  if (!shell) return [];
  const out: DocCommand[] = [];
  const lines = fence.lines;
  for (let i = 0; i < lines.length; i++) {
    let first = lines[i].text;
    if (fence.lang === 'console' || fence.lang === '') {
      if (fence.lang === '' && !PLAIN_COMMAND.test(first)) continue;
      if (fence.lang === 'console' && !first.startsWith('$ ')) continue;
      first = first.replace(/^\$ /, '');
    }
    if (first.trim() === '' || first.trim().startsWith('#')) continue;
    const start = lines[i].line;
    let text = first;
    while (/\\$/.test(text) && i + 1 < lines.length) text += '\n' + lines[++i].text;
    out.push({ file, line: start, shell, text, expectedExit: expectedExitOf(text) });
  }
  return out;
}

/** The blocks of a page that hold commands. */
export function docBlocks(file: string, doc: ParsedDoc): DocBlock[] {
  return doc.fences.map((f) => ({ file, line: f.line, lang: f.lang, commands: blockCommands(file, f) })).filter((b) => b.commands.length > 0);
}

/** `# ... exit N` at the end of the command's comment: N; else 0. */
export function expectedExitOf(text: string): number {
  const comment = shellSyntax(text).comments.at(-1) ?? '';
  const m = /\bexit (\d+)\s*$/.exec(comment);
  return m ? Number(m[1]) : 0;
}

// ---- the shell syntax the rules need: the simple commands of a line, and its comments ----

export interface ShellSyntax {
  /** Every simple command, those inside $(...), <(...) and backquotes included: its words without quotes, leading VAR=value assignments and redirections dropped. */
  commands: string[][];
  comments: string[];
}

/**
 * A small reader of POSIX shell words, enough to name the programs a documented line runs:
 * quotes, backslashes, `$(...)`, `<(...)`, backquotes, `| || && ; &` and newlines between
 * commands, redirections (`> file`, `2>&1`), `#` comments. It is not a shell: the shell that
 * runs the line does the rest.
 */
export function shellSyntax(text: string): ShellSyntax {
  const commands: string[][] = [];
  const comments: string[] = [];
  let i = 0;
  const scan = (stop: string | null): void => {
    let words: string[] = [];
    let word = '';
    let inWord = false;
    let redirect = false;
    const endWord = () => {
      if (inWord) {
        if (redirect) redirect = false;
        else words.push(word);
      }
      word = '';
      inWord = false;
    };
    const endCommand = () => {
      endWord();
      while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) words.shift();
      if (words.length) commands.push(words);
      words = [];
    };
    const nested = (close: string, marker: string) => {
      scan(close);
      word += marker;
      inWord = true;
    };
    while (i < text.length) {
      const c = text[i];
      const next = text[i + 1];
      if (stop !== null && c === stop) {
        i++;
        endCommand();
        return;
      }
      if (c === '\\') {
        if (next !== '\n') {
          word += next ?? '';
          inWord = true;
        }
        i += 2;
      } else if (c === "'") {
        const end = text.indexOf("'", i + 1);
        word += text.slice(i + 1, end < 0 ? text.length : end);
        inWord = true;
        i = end < 0 ? text.length : end + 1;
      } else if (c === '"') {
        i++;
        inWord = true;
        while (i < text.length && text[i] !== '"') {
          if (text[i] === '\\' && i + 1 < text.length) {
            word += text[i + 1];
            i += 2;
          } else if (text[i] === '$' && text[i + 1] === '(') {
            i += 2;
            nested(')', '$(...)');
          } else if (text[i] === '`') {
            i++;
            nested('`', '`...`');
          } else word += text[i++];
        }
        i++;
      } else if (c === '$' && next === '{') {
        const end = text.indexOf('}', i);
        word += text.slice(i, end < 0 ? text.length : end + 1);
        inWord = true;
        i = end < 0 ? text.length : end + 1;
      } else if (c === '$' && next === '(') {
        i += 2;
        nested(')', '$(...)');
      } else if ((c === '<' || c === '>') && next === '(' && !inWord) {
        i += 2;
        nested(')', `${c}(...)`);
      } else if (c === '`') {
        i++;
        nested('`', '`...`');
      } else if (c === '#' && !inWord) {
        const end = text.indexOf('\n', i);
        comments.push(text.slice(i + 1, end < 0 ? text.length : end).trim());
        i = end < 0 ? text.length : end;
      } else if (c === ' ' || c === '\t') {
        endWord();
        i++;
      } else if (c === '\n' || c === ';' || c === '|' || (c === '&' && next !== '>') || c === '(' || c === ')' || c === '{' || c === '}') {
        endCommand();
        i += (c === '|' && (next === '|' || next === '&')) || (c === '&' && next === '&') || (c === ';' && next === ';') ? 2 : 1;
      } else if (c === '>' || c === '<' || c === '&') {
        // A redirection: an fd number before it is part of it; `>&2` names an fd, not a file.
        if (inWord && /^\d+$/.test(word)) {
          word = '';
          inWord = false;
        } else endWord();
        i++;
        while (text[i] === '>' || text[i] === '<' || text[i] === '|') i++;
        if (text[i] === '&') {
          i++;
          while (/[0-9-]/.test(text[i] ?? '')) i++;
        } else redirect = true;
      } else {
        word += c;
        inWord = true;
        i++;
      }
    }
    endCommand();
  };
  scan(null);
  return { commands, comments };
}

// ---- what runs, what is listed, what is substituted ----

/** How a program the docs call is run by test/e2e/12-docs.test.ts; `where`: the working directory. */
export interface Runner {
  how: string;
  where: 'work' | 'checkout';
}

/** Keys are the first words of a simple command (the longest key that matches wins). */
export const RUNS: Record<string, Runner> = {
  bootcplan: { how: 'the built CLI (bin/bootcplan.mjs), on PATH through a link in a temporary directory', where: 'work' },
  'npx bootcplan': {
    how: "npx finds bootcplan in the working directory's node_modules/.bin, as in a checkout after npm install (never the registry)",
    where: 'work',
  },
  kubectl: {
    how: 'kubectl on the machine, against the test kube-apiserver through ~/.kube/config; `kubectl bootcplan` finds the kubectl-bootcplan link on PATH',
    where: 'work',
  },
  'npm run demo': { how: 'in the checkout itself: it plans the bundled example and writes nothing', where: 'checkout' },
  source: { how: 'the shell builtin', where: 'work' },
};

/** Commands that cannot run in the test, by their first words, with the reason. */
export const NOT_RUNNABLE: Record<string, string> = {
  podman:
    'no container engine runs on the test machine or in CI; test/repo/package.test.ts checks the Containerfile as text, and the smoke suite (scripts/check-package.sh) installs the package as the image does (npm ci --omit=dev) and plans with it',
  'npm install':
    "installs from the npm registry or changes the machine; CI's npm ci and the smoke suite's global install of the packed tarball (scripts/check-package.sh) are that step",
  'npm test': 'runs every suite, this one included',
};

/** Placeholders the docs write for a value of the reader's, substituted by test/e2e/12-docs.test.ts; each with what it stands for there. */
export const PLACEHOLDERS = {
  PLANFILE: 'plans/prod-east.json, the plan the working directory holds (planned from cluster.yaml, as the README does)',
  FLEETPLAN:
    'plans/stores.json, the fleet plan of examples/fleet/fleet.yaml (three stores as snapshot files: a saved fleet plan is rehearsed against the snapshots it was made from)',
  LOCK_ID: 'the lock id of an apply that died: the test takes the apply lock as bootcplan apply does and never renews or releases it',
  'plans/prod-east-2d06985bc357da4f.json': "plans/prod-east.json (the id in the name is the docs' example: a plan id hashes the cluster)",
} as const;
export type Placeholder = keyof typeof PLACEHOLDERS;

/** Upper-case words that are not placeholders. */
const LITERAL_CAPS = new Set(['HEAD']);

/** Commands that ask a question before they act: run in a terminal (script(1)) and answered. */
export function answerFor(words: string[]): { answer: string; why: string } | null {
  const [program, ...args] = words;
  if (program !== 'bootcplan' || args.includes('--auto-approve')) return null;
  if (args[0] === 'apply' && (args.includes('-f') || args.includes('--file')))
    return { answer: 'yes', why: 'apply -f plans and applies at once, so it asks for `yes` on a terminal' };
  if (args[0] === 'fleet' && args[1] === 'apply') return { answer: 'yes', why: 'fleet apply asks for `yes` on a terminal' };
  return null;
}

function keyOf(words: string[], table: Record<string, unknown>): string | null {
  for (let n = words.length; n > 0; n--) {
    const key = words.slice(0, n).join(' ');
    if (key in table) return key;
  }
  return null;
}

export type Verdict =
  | { kind: 'run'; where: 'work' | 'checkout'; answer: { answer: string; why: string } | null; placeholders: Placeholder[] }
  | { kind: 'listed'; reasons: { key: string; reason: string }[] }
  | { kind: 'unknown'; problems: string[] };

/** Whether a documented command runs (and how), is listed as not runnable, or is neither (a test failure). */
export function classify(text: string, notRunnable: Record<string, string> = NOT_RUNNABLE): Verdict {
  const { commands } = shellSyntax(text);
  const reasons: { key: string; reason: string }[] = [];
  const problems: string[] = [];
  const where = new Set<'work' | 'checkout'>();
  let answer: { answer: string; why: string } | null = null;
  for (const words of commands) {
    const listed = keyOf(words, notRunnable);
    if (listed) {
      reasons.push({ key: listed, reason: notRunnable[listed] });
      continue;
    }
    const runs = keyOf(words, RUNS);
    if (!runs) problems.push(`\`${words.slice(0, 2).join(' ')}\` is neither run nor listed: add it to RUNS or NOT_RUNNABLE in test/support/doc-commands.ts`);
    else where.add(RUNS[runs].where);
    answer ??= answerFor(words);
  }
  if (reasons.length) return { kind: 'listed', reasons };
  if (where.size > 1) problems.push('one line runs both in the checkout and in the working directory: split it');
  const placeholders = (Object.keys(PLACEHOLDERS) as Placeholder[]).filter((p) => placeholderPattern(p).test(text));
  let rest = text;
  for (const p of placeholders) rest = rest.replace(placeholderPattern(p, 'g'), '');
  for (const w of commands.flat()) {
    for (const m of w.matchAll(/(?<![$\w])[A-Z][A-Z0-9_]{2,}(?![\w=])/g)) {
      if (!LITERAL_CAPS.has(m[0]) && rest.includes(m[0]))
        problems.push(`${m[0]} looks like a placeholder: add it to PLACEHOLDERS in test/support/doc-commands.ts`);
    }
  }
  if (problems.length) return { kind: 'unknown', problems };
  return { kind: 'run', where: [...where][0] ?? 'work', answer, placeholders };
}

/** A placeholder as a whole word of the command. */
export function placeholderPattern(p: Placeholder, flags = ''): RegExp {
  return new RegExp(`(?<![\\w/.-])${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w/.-])`, flags);
}
