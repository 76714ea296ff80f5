/**
 * `bootcplan version` (app/version.ts), and the module bin/launch.mjs loads for `--version`
 * alone from the TypeScript sources (a build answers from dist/build-info.json without loading
 * it): packageVersion is re-exported here so the build keeps one entry per bin need
 * (scripts/build.mjs: cli/main, cli/version).
 */
import type { Command } from 'commander';
import { VERSION_FORMATS, versionCommand } from '../app/version.ts';
import { outputFormatOption, exitWith, type CommandContext } from './options.ts';

export { packageVersion } from '../app/version.ts';

export function registerVersionCommand(program: Command, ctx: CommandContext): void {
  program
    .command('version')
    .description('print the version, the git commit it was built from and the Node.js runtime')
    // A choice like every -o (options.ts): the same error and suggestion, and completion lists them.
    .addOption(outputFormatOption(VERSION_FORMATS, 'output format'))
    .action((opts: { output: (typeof VERSION_FORMATS)[number] }) => exitWith(ctx, versionCommand(ctx, opts)));
}
