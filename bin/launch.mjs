// Shared by the bins: `--version` alone answers from the build record (cli/version) without
// loading the CLI (start-up budget, README "Performance"); anything else runs cli/main's run().
// `cli` is the folder of the compiled CLI (dist/cli/, .js) or of the sources (src/cli/, .ts).
import module from 'node:module';

export async function launch(name, cli, ext) {
  // Node.js 22.1+ keeps the compiled code of the modules it loads in a cache directory
  // (os.tmpdir()/node-compile-cache; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a quarter
  // less start-up CPU on a warm cache. Node.js 20 has no such cache.
  module.enableCompileCache?.();
  const argv = process.argv.slice(2);
  const load = async (file) => {
    try {
      return await import(new URL(file + ext, cli).href);
    } catch (err) {
      if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes(file + ext)) throw err;
      process.stderr.write(`error: ${name} is not built (no ${new URL(file + ext, cli).pathname})\n  hint: run \`npm run build\` in the checkout (npm install does it too)\n`);
      process.exit(1);
    }
  };
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    const { packageVersion } = await load('version');
    process.stdout.write(packageVersion() + '\n');
    return;
  }
  const { run } = await load('main');
  process.exitCode = await run(argv, { name });
}
