// Where the kit finds the protocol: bot.proto, loaded as it is (nothing generated, nothing downloaded).

'use strict';

const fs = require('node:fs');
const path = require('node:path');

const PROTO_FILE = path.join('fiftysix', 'v1', 'bot.proto');
// protos/ beside the kit (a bundle, or a copy of the kit with protos/ beside it), or the repository's.
const PROTO_ROOTS = [path.join(__dirname, '..', 'protos'), path.join(__dirname, '..', '..', '..', 'protos')];

// The folder that holds fiftysix/v1/bot.proto (the include root, as for protoc).
function protoRoot() {
  const root = PROTO_ROOTS.find((folder) => fs.existsSync(path.join(folder, PROTO_FILE)));
  if (root === undefined) {
    throw new Error(`cannot find ${PROTO_FILE} in ${PROTO_ROOTS.join(' or ')}: put protos/ beside the kit`);
  }
  return root;
}

module.exports = { PROTO_FILE, protoRoot };
