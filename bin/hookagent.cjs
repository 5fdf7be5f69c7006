#!/usr/bin/env node
'use strict';
// The `hookagent` command: runs the bundled CLI (built by `npm install` / `npm run build`).
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const bundle = join(__dirname, '..', 'dist', 'cli.cjs');
if (!existsSync(bundle)) {
  process.stderr.write('hookagent: the CLI is not built yet; run `npm run build` in the hookagent directory\n');
  process.exit(1);
}
require(bundle);
