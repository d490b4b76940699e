// The kit's types kept true: messages.d.ts is what bot.proto generates today, the enums the kit exports
// are the .proto's, and tsc (strict) accepts the TypeScript example bot and refuses what
// test/types/expectations.ts marks as errors.

'use strict';

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');
const protobuf = require('protobufjs');
const kit = require('../kit');
const { OUTPUT, generate } = require('../kit/generate-types');

const ROOT = path.join(__dirname, '..');

test('messages.d.ts is generated from bot.proto as it is now', () => {
  const current = fs.readFileSync(OUTPUT, 'utf8') === generate();
  assert.ok(current, 'kit/messages.d.ts is out of date: run `npm run types` in sample_bots/js');
});

test('the kit exports every enum of bot.proto, with its numbers', () => {
  const root = protobuf.loadSync(path.join(ROOT, '..', '..', 'protos', 'fiftysix', 'v1', 'bot.proto'));
  const enums = root.lookup('fiftysix.v1').nestedArray.filter((item) => item instanceof protobuf.Enum);
  assert.ok(enums.length >= 8);
  for (const enumeration of enums) {
    assert.deepEqual({ ...kit[enumeration.name] }, { ...enumeration.values }, enumeration.name);
    assert.ok(Object.isFrozen(kit[enumeration.name]));
  }
});

test('tsc --noEmit (strict) passes on the example bot and on every expected type error', () => {
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    execFileSync(process.execPath, [tsc, '--noEmit', '-p', ROOT], { encoding: 'utf8' });
  } catch (error) {
    assert.fail(`tsc found errors:\n${error.stdout}${error.stderr}`);
  }
});
