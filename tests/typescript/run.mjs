// Runs a TypeScript program of this folder against the generated package, without a build:
//
//   node tests/typescript/run.mjs ENTRY.ts [PACKAGE_SRC] [ARGS...]
//   node tests/typescript/run.mjs --transpile SOURCE TARGET
//
// ENTRY's folder and the package's sources (generated/typescript/src, or PACKAGE_SRC, such as a
// copy of the project's; "-" for the generated one) are transpiled to JavaScript in a scratch folder, types stripped and
// not checked (`tsc --noEmit` checks them), each file keeping its place relative to the project
// root; ENTRY then runs there with LLM_STREAM_PACKAGE set to the URL of the package's index.js.
// With --transpile, the sources of SOURCE are only transpiled into TARGET (for a browser).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..");
const [entry, given = "-", ...args] = process.argv.slice(2);
const packageSource = given === "-" ? join(root, "generated", "typescript", "src") : given;
if (entry === undefined) {
    console.error("usage: node run.mjs ENTRY.ts [PACKAGE_SRC] [ARGS...] | --transpile SOURCE TARGET");
    process.exit(2);
}

function transpile(folder, target) {
    mkdirSync(target, { recursive: true });
    writeFileSync(join(target, "package.json"), '{"type": "module"}\n');
    for (const name of readdirSync(folder).filter((file) => file.endsWith(".ts"))) {
        const { outputText } = ts.transpileModule(readFileSync(join(folder, name), "utf8"), {
            compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
            fileName: name,
        });
        writeFileSync(join(target, name.replace(/\.ts$/, ".js")), outputText);
    }
}

if (entry === "--transpile") {
    transpile(resolve(packageSource), resolve(args[0]));
    process.exit(0);
}
// Under node_modules, so that the transpiled files find the project's packages.
mkdirSync(join(here, "node_modules", ".cache"), { recursive: true });
const work = mkdtempSync(join(here, "node_modules", ".cache", "llm-stream-run-"));
try {
    const own = join(work, relative(root, here));
    transpile(here, own);
    const pkg = join(work, "package");
    transpile(resolve(packageSource), pkg);
    // The entry's static imports of the generated package resolve to the package transpiled.
    transpile(join(root, "generated", "typescript", "src"), join(work, "generated", "typescript", "src"));
    process.env.LLM_STREAM_PACKAGE = pathToFileURL(join(pkg, "index.js")).href;
    process.argv = [process.argv[0], join(own, entry.replace(/\.ts$/, ".js")), ...args];
    await import(pathToFileURL(process.argv[1]).href);
} finally {
    process.on("exit", () => rmSync(work, { recursive: true, force: true }));
}
