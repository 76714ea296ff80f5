// Shared by the bins: `--version` alone answers from the build record (dist/build-info.json)
// without loading any module of the CLI (start-up budget, docs/performance.md); anything else
// runs cli/main's run(). `cli` is the folder of the compiled CLI (dist/bundle/, .js) or of the
// sources (src/cli/, .ts: no build record, cli/version reads package.json).
import module from 'node:module';
import { readFileSync } from 'node:fs';

/** The version recorded by `npm run build` next to `cli`, or null (the sources, an old build). */
function builtVersion(cli) {
  try {
    const v = JSON.parse(readFileSync(new URL('../build-info.json', cli), 'utf8')).version;
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}

export async function launch(name, cli, ext, argv = process.argv.slice(2)) {
  const versionOnly = argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V');
  const built = versionOnly ? builtVersion(cli) : null;
  if (built) {
    process.stdout.write(built + '\n');
    return;
  }
  // Node.js 22.1+ keeps the compiled code of the modules it loads in a cache directory
  // (os.tmpdir()/node-compile-cache; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a quarter
  // less start-up CPU on a warm cache. Node.js 20 has no such cache.
  module.enableCompileCache?.();
  const load = async (file) => {
    try {
      return await import(new URL(file + ext, cli).href);
    } catch (err) {
      if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes(file + ext)) throw err;
      process.stderr.write(
        `error: ${name} is not built (no ${new URL(file + ext, cli).pathname})\n  hint: run \`npm run build\` in the checkout (npm install does it too)\n`,
      );
      process.exit(1);
    }
  };
  if (versionOnly) {
    const { packageVersion } = await load('version');
    process.stdout.write(packageVersion() + '\n');
    return;
  }
  const { run } = await load('main');
  process.exitCode = await run(argv, { name });
}
