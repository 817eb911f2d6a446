// Compiles DeerFlow's human-input.ts with TypeScript and answers one JSON line per JSON line:
// {"request": message} -> {"request": parsed request or null}
// {"response": message} -> {"response": parsed answer or null}
// {"thread": [messages]} -> {"answered": [request ids], "open": request id or null}
// Messages are LangChain messages as a LangGraph server sends them (type, artifact, additional_kwargs).
"use strict";
const fs = require("fs");
const path = require("path");
const readline = require("readline");

const [typescriptDir, sourceFile] = process.argv.slice(2);
const ts = require(typescriptDir);
const source = fs.readFileSync(sourceFile, "utf8");
const compiled = ts.transpileModule(source, {
  compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020, strict: true },
  fileName: path.basename(sourceFile),
  reportDiagnostics: true,
});
if (compiled.diagnostics.length > 0) {
  const text = compiled.diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  process.stderr.write(`human-input.ts does not compile: ${text.join("; ")}\n`);
  process.exit(2);
}
const mod = { exports: {} };
new Function("exports", "require", "module", compiled.outputText)(mod.exports, require, mod);
const parser = mod.exports;

function answer(query) {
  if ("request" in query) {
    return { request: parser.extractHumanInputRequest(query.request) };
  }
  if ("response" in query) {
    return { response: parser.extractHumanInputResponse(query.response) };
  }
  const state = parser.deriveHumanInputThreadState(query.thread);
  return { answered: [...state.answeredResponses.keys()], open: state.latestOpenRequestId };
}

const lines = readline.createInterface({ input: process.stdin });
process.stdout.write(JSON.stringify({ ready: Object.keys(parser).sort() }) + "\n");
lines.on("line", (line) => {
  process.stdout.write(JSON.stringify(answer(JSON.parse(line))) + "\n");
});
