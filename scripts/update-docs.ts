/**
 * `npm run docs:update`: writes the command-line reference in docs/cli.md from the commands
 * themselves (src/cli/reference.ts; test/cli/reference.test.ts fails when it drifts). The spec
 * and Fleet field references are `npm run schema:update`'s.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { buildProgram } from '../src/cli/main.ts';
import { withCliReference, CLI_REFERENCE_FILE } from '../src/cli/reference.ts';

const quiet = () => {};
const program = buildProgram(
  {
    io: { stdout: quiet, stderr: quiet, env: {}, stdoutIsTTY: false, stderrIsTTY: false },
    openDriver: async () => {
      throw new Error('docs:update opens no cluster');
    },
    now: () => 0,
  },
  quiet,
);
const updated = withCliReference(readFileSync(CLI_REFERENCE_FILE, 'utf8'), program);
if (updated === null) {
  console.error(`${CLI_REFERENCE_FILE} has no cli-reference markers`);
  process.exit(1);
}
writeFileSync(CLI_REFERENCE_FILE, updated);
console.log(`wrote the command reference in ${CLI_REFERENCE_FILE}`);
