#!/usr/bin/env node
// Makes the bundle of a bot to upload to an arena: `npm run bundle -- bot.tar.gz bot.js [more files]`.
//
// An uploaded bot runs in a sandbox with no network, so the bundle holds everything it runs with: the
// files named, the kit, package.json, the installed packages the bot needs (package-lock.json's, less the
// development ones and the files of theirs Node.js never loads; no symbolic links, which a bundle may not
// hold) and protos/ with bot.proto. The arena
// runs it from the bundle's folder: `--run "node bot.js"`.

'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { PROTO_FILE, protoRoot } = require('./protos');

const PACKAGE = path.join(__dirname, '..');

// The top folders under node_modules/ that the bot runs with.
function runtimePackages() {
  const lock = JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package-lock.json'), 'utf8'));
  return Object.entries(lock.packages)
    .filter(([where, entry]) => where.startsWith('node_modules/') && !entry.dev)
    .map(([where]) => where)
    .filter((where) => !where.slice('node_modules/'.length).includes('node_modules/'));
}

// What of an installed package Node.js never loads: TypeScript sources and declarations, source maps.
const UNUSED = /\.([cm]?ts|map)$/;

// Copies a file or folder, without symbolic links (and, with `runtime`, without what Node.js never loads).
function copy(from, to, runtime = false) {
  const filter = (source) => {
    const entry = fs.lstatSync(source);
    return !entry.isSymbolicLink() && !(runtime && entry.isFile() && UNUSED.test(source));
  };
  fs.cpSync(from, to, { recursive: true, filter });
}

// Writes the bundle and returns the names at its top.
function bundle(archive, files) {
  if (files.length === 0) throw new Error('name the bot\'s own files, e.g. bot.js');
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'fiftysix-bundle-'));
  try {
    for (const file of files) {
      const relative = path.relative(PACKAGE, path.resolve(file));
      if (relative.startsWith('..') || path.isAbsolute(relative)) {
        throw new Error(`${file} is not in ${PACKAGE}, whose folder the bundle is`);
      }
      copy(path.join(PACKAGE, relative), path.join(staging, relative));
    }
    for (const name of ['kit', 'package.json', ...runtimePackages()]) {
      const from = path.join(PACKAGE, name);
      if (!fs.existsSync(from)) throw new Error(`${name} is missing: run \`npm ci\` first`);
      copy(from, path.join(staging, name), name.startsWith('node_modules/'));
    }
    copy(path.join(protoRoot(), PROTO_FILE), path.join(staging, 'protos', PROTO_FILE));
    const top = fs.readdirSync(staging).sort();
    try {
      execFileSync('tar', ['-czf', path.resolve(archive), '-C', staging, ...top], { stdio: 'pipe' });
    } catch (error) {
      const reason = String(error.stderr ?? error.message).trim().split('\n')[0];
      throw new Error(`tar could not write ${archive}: ${reason}`);
    }
    return top;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

module.exports = { bundle };

if (require.main === module) {
  const [archive, ...files] = process.argv.slice(2);
  try {
    if (archive === undefined || !/\.(tar\.gz|tgz)$/.test(archive)) {
      throw new Error('usage: npm run bundle -- BOT.tar.gz FILE... (the bot\'s own files, e.g. bot.js)');
    }
    const top = bundle(archive, files);
    const size = (fs.statSync(archive).size / 1024 / 1024).toFixed(1);
    process.stdout.write(`wrote ${archive} (${size} MiB): ${top.join(' ')}\n`);
  } catch (error) {
    process.stderr.write(`bundle: error: ${error.message}\n`);
    process.exit(2);
  }
}
