// Stops `npm ci`, `npm start` and `npm test` on a Node that cannot run this project, with one
// line that says what to run. CommonJS and old syntax on purpose: it must run on any Node,
// including the ones it refuses (the project's own .ts files fail there with
// ERR_UNKNOWN_FILE_EXTENSION or a SyntaxError). The minimum is package.json "engines".
"use strict";

var MIN = [22, 18];

function verdict(version) {
  var parts = String(version).replace(/^v/, "").split(".").map(Number);
  var ok = parts[0] > MIN[0] || (parts[0] === MIN[0] && parts[1] >= MIN[1]);
  if (ok) return undefined;
  return (
    "Node " +
    version +
    " is too old for this project (needs >= " +
    MIN.join(".") +
    " to run TypeScript directly). " +
    "Run `source scripts/ensure-node.sh` (puts Node 24 on PATH, fetching it into .tools/ if needed) and try again, " +
    "or use `bash scripts/up.sh` / `bash scripts/test.sh`, which do that for you."
  );
}

module.exports = { verdict: verdict, MIN: MIN };

if (require.main === module) {
  const message = verdict(process.versions.node);
  if (message) {
    process.stderr.write(`${message}\n`);
    process.exit(1);
  }
}
