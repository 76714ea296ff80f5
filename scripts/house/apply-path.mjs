#!/usr/bin/env node
/**
 * The path of `bootcplan apply PLANFILE`, walked as data (docs/architecture.md "The path of an
 * apply"): from the apply command's action to the applier's door (app/apply.ts applySavedPlan
 * -> apply/applier.ts `apply`), and through it (the calls made from `apply` onward).
 *
 *   node scripts/house/apply-path.mjs [--json] [--list] [ROOT]
 *
 * A walk is a depth-first reading of the call graph that TypeScript's checker resolves: each
 * function of src/ is read once, its calls in source order; a call resolved to a function, method
 * or constructor with a body in another file of src/ is a step into that file. A step into a file
 * not seen before on this walk enters it; a step into one seen already is a return (a revisit).
 * A function's calls are counted once per callee, however often it calls it. Calls through an
 * interface (the driver, the health source, a callback) resolve to no body and are not walked: a
 * port's implementation is kube/ or sim/, not the path. Calls inside a function's nested arrow
 * functions count as the function's own.
 *
 * The walk to the door starts in cli/commands-apply.ts (the action, after cli/main.ts built the
 * program) at applySavedPlan and does not go past `apply`; the walk through it starts at `apply`.
 * ROOT (default: the repository this script is in) lets the same walk read another checkout.
 */
import ts from 'typescript';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';

const args = process.argv.slice(2);
const json = args.includes('--json');
const list = args.includes('--list');
const root = resolve(args.find((a) => !a.startsWith('--')) ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..'));
const src = join(root, 'src');

/** Where the door is: the applier's `apply`, wherever its rooms put it. */
const DOOR_FILES = ['apply/applier.ts'];
const START = { file: 'app/apply.ts', name: 'applySavedPlan' };

const program = ts.createProgram([join(src, 'cli/main.ts'), join(src, START.file)], {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  allowImportingTsExtensions: true,
  noEmit: true,
  strict: true,
  skipLibCheck: true,
  resolveJsonModule: true,
  types: ['node'],
});
const checker = program.getTypeChecker();
const rel = (sf) => relative(src, sf.fileName).split('\\').join('/');
const inSrc = (sf) => !!sf && !sf.isDeclarationFile && sf.fileName.startsWith(src + '/');

/** A function-like declaration with a body (what a call can step into). */
function bodyOf(decl) {
  if (!decl) return null;
  if ((ts.isFunctionDeclaration(decl) || ts.isMethodDeclaration(decl) || ts.isConstructorDeclaration(decl) || ts.isGetAccessor(decl)) && decl.body) return decl;
  if (ts.isVariableDeclaration(decl) && decl.initializer && (ts.isArrowFunction(decl.initializer) || ts.isFunctionExpression(decl.initializer)))
    return decl.initializer;
  if (ts.isPropertyAssignment(decl) && (ts.isArrowFunction(decl.initializer) || ts.isFunctionExpression(decl.initializer))) return decl.initializer;
  if (ts.isPropertyDeclaration(decl) && decl.initializer && (ts.isArrowFunction(decl.initializer) || ts.isFunctionExpression(decl.initializer)))
    return decl.initializer;
  return null;
}

/** The function a call or `new` runs, when it has a body in src/. */
function calleeOf(call) {
  let decl;
  const sig = checker.getResolvedSignature(call);
  decl = sig?.declaration;
  if (ts.isNewExpression(call) && (!decl || !bodyOf(decl))) {
    // `new C()` of a class without an explicit constructor: nothing to read but field initialisers.
    let sym = checker.getSymbolAtLocation(call.expression);
    if (sym && sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
    const cls = sym?.declarations?.find(ts.isClassDeclaration);
    decl = cls?.members.find((m) => ts.isConstructorDeclaration(m) && m.body);
  }
  const fn = bodyOf(decl);
  return fn && inSrc(fn.getSourceFile()) ? fn : null;
}

/** The distinct callees of one function, in the order of their first call. */
function calleesOf(fn) {
  const out = [];
  const seen = new Set();
  const visit = (n) => {
    if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
      const c = calleeOf(n);
      if (c && c !== fn && !seen.has(c)) {
        seen.add(c);
        out.push(c);
      }
    }
    // A nested named function declaration is its own function (walked if it is called).
    if (n !== fn.body && ts.isFunctionDeclaration(n)) return;
    ts.forEachChild(n, visit);
  };
  if (fn.body) visit(fn.body);
  return out;
}

const nameOf = (fn) => {
  const d = ts.isArrowFunction(fn) || ts.isFunctionExpression(fn) ? fn.parent : fn;
  const own = d.name?.getText() ?? (ts.isConstructorDeclaration(d) ? 'constructor' : '?');
  const cls = ts.isClassLike(d.parent) && d.parent.name ? `${d.parent.name.text}.` : '';
  return cls + own;
};

/** One walk from `start`; `stopAt` functions are entered (counted) but not read. */
function walk(start, stopAt = () => false) {
  const startFile = rel(start.getSourceFile());
  const files = [startFile];
  const read = new Set();
  const steps = [];
  let revisits = 0;
  const expand = (fn) => {
    read.add(fn);
    const here = rel(fn.getSourceFile());
    for (const c of calleesOf(fn)) {
      const there = rel(c.getSourceFile());
      if (there !== here) {
        const again = files.includes(there);
        if (again) revisits++;
        else files.push(there);
        steps.push(`${again ? 'return' : 'enter '} ${there} ${nameOf(c)} (from ${here} ${nameOf(fn)})`);
      }
      if (!read.has(c) && !stopAt(c)) expand(c);
    }
  };
  expand(start);
  return { files, entered: files.length, revisits, steps };
}

function findFunction(file, name) {
  const sf = program.getSourceFile(join(src, file));
  if (!sf) throw new Error(`no ${file} under ${src}`);
  let found = null;
  const visit = (n) => {
    if (!found && ts.isFunctionDeclaration(n) && n.name?.text === name && n.body) found = n;
    ts.forEachChild(n, visit);
  };
  visit(sf);
  if (!found) throw new Error(`no function ${name} in ${file}`);
  return found;
}

const doorFile = DOOR_FILES.find((f) => existsSync(join(src, f)));
if (!doorFile) throw new Error(`no applier under ${src}`);
const door = findFunction(doorFile, 'apply');
const start = findFunction(START.file, START.name);
// The action in cli/commands-apply.ts loads app/apply.ts and calls applySavedPlan (a dynamic
// import, after cli/main.ts built the program): those two files come first.
const toDoor = walk(start, (fn) => fn === door);
const toDoorFiles = ['cli/main.ts', 'cli/commands-apply.ts', ...toDoor.files];
const through = walk(door);
const result = {
  toDoor: { files: toDoorFiles.length, revisits: toDoor.revisits },
  throughDoor: { files: through.entered, revisits: through.revisits },
};
if (json) console.log(JSON.stringify(list ? { ...result, toDoorFiles, throughFiles: through.files, throughSteps: through.steps } : result, null, 2));
else {
  console.log(`to the door (${doorFile} apply): ${result.toDoor.files} files, ${result.toDoor.revisits} returns`);
  console.log(`through it: ${result.throughDoor.files} files, ${result.throughDoor.revisits} returns`);
  if (list) for (const s of through.steps) console.log('  ' + s);
}
