/**
 * The shipped package (README "Install", docs/development.md): `version` and `--version`, the compiled bins (bootcplan and
 * the kubectl plugin kubectl-bootcplan), and what `npm pack` puts in the tarball.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { run } from '../../src/cli/main.ts';
import { ensureBuilt, ROOT } from '../support/built.ts';
import { cli } from '../support/cli.ts';
import { skipLocally } from '../support/skips.ts';

const s = suite('package');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();

/** The sources' run(), not the bundle cli() runs by default: what the sources say of themselves. */
const SOURCES = { entry: run };

const node = (args: string[], env: NodeJS.ProcessEnv = process.env) => spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', env });

s("version (from the sources): the package version, the checkout's commit and the Node.js runtime", async () => {
  const r = await cli(['version'], SOURCES);
  assert.is(r.code, 0, r.err);
  const [first, commit, runtime] = r.out.trimEnd().split('\n');
  assert.is(first, `bootcplan ${pkg.version}`);
  assert.ok(commit.startsWith(`commit: ${head}`), commit);
  assert.match(commit, /running the TypeScript sources/);
  assert.is(runtime, `node:   ${process.version}`);
  const j = JSON.parse((await cli(['version', '-o', 'json'], SOURCES)).out);
  assert.equal(
    { version: j.version, commit: j.commit, from: j.from, node: j.node },
    { version: pkg.version, commit: head, from: 'source', node: process.version },
  );
  assert.match((await cli(['version', '-o', 'yaml'], SOURCES)).out, new RegExp(`^version: ${pkg.version.replace(/\./g, '\\.')}\\ncommit: ${head}\\n`));
  const bad = await cli(['version', '-o', 'xml'], SOURCES);
  assert.is(bad.code, 1);
  assert.match(bad.err, /Allowed formats are text, json, yaml/);
});

s("the run() the CLI and e2e suites call (test/support/built.ts) is the bundle's: version says it runs the build", async () => {
  const r = await cli(['version', '-o', 'json']);
  assert.is(r.code, 0);
  assert.is(JSON.parse(r.out).from, process.env.BOOTCPLAN_TEST_CLI === 'sources' ? 'source' : 'build');
});

s('--version prints the package version, from the sources and from the compiled bin', async () => {
  assert.is((await cli(['--version'], SOURCES)).out, `${pkg.version}\n`);
  const r = node([ensureBuilt(), '--version']);
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, `${pkg.version}\n`);
});

s('the compiled bin reports the commit recorded at build time (dist/build-info.json)', () => {
  const r = node([ensureBuilt(), 'version', '-o', 'json']);
  assert.is(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.is(j.from, 'build');
  assert.is(j.version, pkg.version);
  assert.match(j.commit, /^[0-9a-f]{40}$/);
  const recorded = JSON.parse(readFileSync(join(ROOT, 'dist/build-info.json'), 'utf8'));
  assert.is(j.commit, recorded.commit);
});

s('the compiled bin runs the demo plan without tsx (no TypeScript loader in the process)', () => {
  const r = node([ensureBuilt(), 'plan', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml']);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /^Plan: /m);
  const bundle = join(ROOT, 'dist/bundle');
  for (const f of readdirSync(bundle))
    assert.not.match(readFileSync(join(bundle, f), 'utf8'), /from ['"][^'"]*\.ts['"]|import\(['"][^'"]*\.ts['"]\)/, `${f}: no import of a .ts file`);
  assert.not.ok(pkg.dependencies.tsx || pkg.dependencies.esbuild, 'tsx and esbuild are not runtime dependencies');
});

s("src/ imports no package at run time (import('pkg')): the bundle turns such a package into a chunk exporting only `default`", () => {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else
        for (const m of readFileSync(p, 'utf8').matchAll(/\bimport\(\s*['"]([^'".][^'"]*)['"]\s*\)/g))
          if (!m[1].startsWith('node:')) found.push(`${p.slice(ROOT.length + 1)}: import('${m[1]}')`);
    }
  };
  walk(join(ROOT, 'src'));
  assert.equal(found, [], 'import the package statically, or import a module of src/ that does');
});

s('install scripts: every package of the lock that has one is listed in allowScripts (npm 11.16+ warns otherwise); esbuild runs without its own', () => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  const packages = lock.packages as Record<string, { version?: string; hasInstallScript?: boolean; optional?: boolean; os?: string[]; cpu?: string[] }>;
  const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
  const withScripts = Object.entries(packages)
    .filter(([path, p]) => path !== '' && p.hasInstallScript)
    .map(([path]) => nameOf(path));
  const allowed = (pkg.allowScripts ?? {}) as Record<string, boolean>;
  // An entry may be pinned (name@version); the package's name is what it covers.
  const covered = new Set(Object.keys(allowed).map((k) => k.replace(/(?<=.)@.*$/, '')));
  assert.equal(
    withScripts.filter((n) => !covered.has(n)),
    [],
    'packages whose install script npm 11 would warn about (add each to allowScripts in package.json, after reading its script)',
  );
  // Every entry names a package of the lock that has a script: none left over from a removed one.
  assert.equal(
    [...covered].filter((n) => !withScripts.includes(n)),
    [],
    'allowScripts entries without an install script in the lock',
  );
  // Denied: esbuild, whose JS API (all scripts/build.mjs uses) loads the binary of its platform
  // package, installed as an optional dependency; its postinstall only checks that binary.
  assert.equal(
    Object.entries(allowed)
      .filter(([, v]) => v === false)
      .map(([k]) => k),
    ['esbuild'],
  );
  const esbuild = packages['node_modules/esbuild'];
  const platforms = Object.entries(packages).filter(([path, p]) => path.startsWith('node_modules/@esbuild/') && p.optional);
  assert.ok(platforms.length >= 10, `esbuild's platform packages in the lock: ${platforms.length}`);
  for (const [path, p] of platforms) assert.is(p.version, esbuild.version, `${path} is esbuild's version`);
  assert.ok(
    platforms.some(([, p]) => p.os?.includes('linux') && p.cpu?.includes('x64')),
    'a linux x64 binary package (CI, the Containerfile build stage)',
  );
  assert.ok(!readFileSync(join(ROOT, 'scripts/build.mjs'), 'utf8').includes('bin/esbuild'), "scripts/build.mjs uses esbuild's JS API, never its bin");
});

s('without a build, the bin says how to make one (no stack trace)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-unbuilt-'));
  const script = `import { launch } from ${JSON.stringify(join(ROOT, 'bin/launch.mjs'))}; await launch('bootcplan', new URL('file://${dir}/dist/cli/'), '.js');`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, 'plan'], { encoding: 'utf8' });
  assert.is(r.status, 1);
  assert.match(r.stderr, /^error: bootcplan is not built \(no .*dist\/cli\/main\.js\)\n {2}hint: run `npm run build`/);
  assert.not.match(r.stderr, /\n\s+at /);
});

s('kubectl-bootcplan names itself `kubectl bootcplan` in help and version', () => {
  ensureBuilt();
  const help = node(['bin/kubectl-bootcplan.mjs', '--help']);
  assert.is(help.status, 0, help.stderr);
  assert.match(help.stdout, /^Usage: kubectl bootcplan \[options\] \[command\]/);
  const v = node(['bin/kubectl-bootcplan.mjs', 'version']);
  assert.match(v.stdout, new RegExp(`^kubectl bootcplan ${pkg.version.replace(/\./g, '\\.')}\\n`));
  assert.equal(pkg.bin, {
    bootcplan: 'bin/bootcplan.mjs',
    'kubectl-bootcplan': 'bin/kubectl-bootcplan.mjs',
    'kubectl_complete-bootcplan': 'bin/kubectl_complete-bootcplan.mjs',
  });
});

s('kubectl finds kubectl-bootcplan on PATH and runs it as `kubectl bootcplan`', () => {
  const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  if (kubectl.error) {
    skipLocally('kubectl', '.ci/run installs it');
    return;
  }
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-plugin-'));
  symlinkSync(join(ROOT, 'bin/kubectl-bootcplan.mjs'), join(dir, 'kubectl-bootcplan')); // as npm links a global bin
  const env = { ...process.env, PATH: `${dir}${delimiter}${process.env.PATH}`, KUBECONFIG: join(dir, 'none') };
  const list = spawnSync('kubectl', ['plugin', 'list'], { encoding: 'utf8', env });
  assert.match(list.stdout, new RegExp(`${dir}/kubectl-bootcplan`), list.stdout + list.stderr);
  const r = spawnSync('kubectl', ['bootcplan', 'plan', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml', '-o', 'json'], {
    cwd: ROOT,
    encoding: 'utf8',
    env,
  });
  assert.is(r.status, 0, r.stderr);
  assert.is(JSON.parse(r.stdout).formatVersion, '1.0');
});

s(
  'npm pack: the bundled CLI, examples (and the deploy/ kustomization they name), LICENSE and CHANGELOG; no sources, source maps, tests, benches or fixtures',
  () => {
    ensureBuilt();
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const files: string[] = JSON.parse(out)[0].files.map((f: { path: string }) => f.path);
    for (const want of [
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'bin/bootcplan.mjs',
      'bin/kubectl-bootcplan.mjs',
      'bin/kubectl_complete-bootcplan.mjs',
      'dist/bundle/main.js',
      'dist/build-info.json',
      'examples/rollout.yaml',
      'examples/cluster.yaml',
      'deploy/kustomization.yaml',
      'deploy/rollout-crd.yaml',
    ]) {
      assert.ok(files.includes(want), `${want} is packed`);
    }
    const unwanted = files.filter((f) =>
      /^(test|bench|src|scripts|plans|\.ci)\/|^deploy\/(?!kustomization\.yaml$|rollout-crd\.yaml$)|fixtures?\/|golden\/|\.test\.|\.map$|\.ts$|^bin\/bootcplan-dev|^tsconfig|^Containerfile/.test(
        f,
      ),
    );
    assert.equal(unwanted, [], 'no sources, tests, source maps or test CRDs');
    assert.equal(
      files.filter((f) => f.startsWith('dist/') && !/^dist\/(bundle\/[^/]+\.js|build-info\.json)$/.test(f)),
      [],
      'one build: dist/bundle/ and its record',
    );
  },
);

s('Containerfile: the runtime stage is a Node.js LTS base with git, the packed files only, non-root, OCI labels', () => {
  const text = readFileSync(join(ROOT, 'Containerfile'), 'utf8');
  const stages = text.split(/^FROM /m).slice(1);
  assert.is(stages.length, 2, 'a build stage and a runtime stage');
  const [build, runtime] = stages;
  assert.match(build, /npm run build/);
  assert.match(build, /npm pack /, "the image gets npm pack's file list (what scripts/check-package.sh checks)");
  assert.match(build, /npm ci --omit=dev/);
  assert.match(runtime.split('\n')[0], /nodejs-(22|24)(-minimal)?$/, 'a current LTS line');
  assert.match(runtime, /install git-core/);
  assert.equal(
    [...runtime.matchAll(/^COPY (.*)$/gm)].map((m) => m[1]),
    ['--from=build /opt/bootcplan /opt/bootcplan'],
  );
  const users = [...runtime.matchAll(/^USER (\S+)/gm)].map((m) => m[1]);
  assert.ok(users.length && !['0', 'root'].includes(users[users.length - 1]), `runs as ${users[users.length - 1]}`);
  for (const label of ['title', 'description', 'version', 'revision', 'licenses', 'source'])
    assert.match(runtime, new RegExp(`org\\.opencontainers\\.image\\.${label}=`));
});

s("Containerfile: git trusts the image's working directory only, never every repository (safe.directory)", () => {
  const runtime = readFileSync(join(ROOT, 'Containerfile'), 'utf8').split(/^FROM /m)[2];
  // Instructions with their continuation lines joined; comments left out.
  const instructions = runtime
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.trim() && !l.trimStart().startsWith('#'));
  const trusted = instructions.flatMap((l) => [...l.matchAll(/safe\.directory\s+(?:'([^']*)'|"([^"]*)"|(\S+))/g)].map((m) => m[1] ?? m[2] ?? m[3]));
  assert.ok(trusted.length, 'git is told which checkout to trust');
  const wildcards = trusted.filter((d) => d.includes('*'));
  assert.equal(wildcards, [], 'a wildcard trusts any repository the container sees, its hooks and config included');
  const workdirs = instructions.map((l) => /^WORKDIR\s+(\S+)/.exec(l)?.[1]).filter(Boolean);
  assert.ok(workdirs.length, 'the runtime stage sets its working directory');
  assert.equal(trusted, [workdirs[workdirs.length - 1]], 'the one trusted directory is the working directory');
});

s.run();
