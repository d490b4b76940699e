#!/usr/bin/env node
// Writes kit/messages.d.ts, the TypeScript declarations of every message and enum of bot.proto in the
// shapes the kit hands a bot (see LOADER_OPTIONS in index.js): `npm run types` after a change to the
// .proto. test/types.test.js fails while the file on disk differs from what this writes.

'use strict';

const fs = require('node:fs');
const path = require('node:path');
const protobuf = require('protobufjs');
const { PROTO_FILE, protoRoot } = require('./protos');

const OUTPUT = path.join(__dirname, 'messages.d.ts');

const HEADER = `// Generated from protos/fiftysix/v1/bot.proto by \`npm run types\` (kit/generate-types.js): do not edit.
//
// Every message as the kit hands it to a bot: field names as in the .proto; enums by name (their numbers
// are the exported objects of the same name); uint64 as a string, exact beyond 2^53; a list always an
// array; an absent message null; a proto3 \`optional\` field undefined when absent; a oneof as a field
// naming the member that is set, beside that member.
`;

const SCALARS = {
  double: 'number',
  float: 'number',
  int32: 'number',
  uint32: 'number',
  sint32: 'number',
  fixed32: 'number',
  sfixed32: 'number',
  int64: 'string',
  uint64: 'string',
  sint64: 'string',
  fixed64: 'string',
  sfixed64: 'string',
  bool: 'boolean',
  string: 'string',
  bytes: 'Buffer',
};

function doc(comment, indent) {
  if (!comment) return '';
  const lines = comment.split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} * ${line}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

function typeOf(field) {
  const base = field.resolvedType ? field.resolvedType.name : SCALARS[field.type];
  if (base === undefined) throw new Error(`no TypeScript type for ${field.fullName}: ${field.type}`);
  return field.repeated ? `${base}[]` : base;
}

// A field outside any real oneof: always there, but an absent message is null and an absent proto3
// optional field undefined.
function plainField(field, indent) {
  const optional = field.options?.proto3_optional === true;
  const isMessage = field.resolvedType instanceof protobuf.Type && !field.repeated;
  const type = isMessage && !optional ? `${typeOf(field)} | null` : typeOf(field);
  return `${doc(field.comment, indent)}${indent}${field.name}${optional ? '?' : ''}: ${type};\n`;
}

function enumDeclaration(enumeration) {
  const values = Object.entries(enumeration.values)
    .map(([name, number]) => `${doc(enumeration.comments[name], '  ')}  readonly ${name}: ${number};\n`)
    .join('');
  return (
    `${doc(enumeration.comment, '')}export declare const ${enumeration.name}: {\n${values}};\n` +
    `${doc(enumeration.comment, '')}export type ${enumeration.name} = keyof typeof ${enumeration.name};\n`
  );
}

// A message with real oneofs is an intersection of its plain fields and, for each oneof, a union of one
// object per member (discriminated by the oneof's own field), so `if (move.move === 'card')` narrows.
function messageDeclaration(message) {
  // A proto3 optional field sits in a oneof of its own, which is no real oneof.
  const synthetic = (oneof) => oneof.fieldsArray.every((field) => field.options?.proto3_optional);
  const oneofs = message.oneofsArray.filter((oneof) => !synthetic(oneof));
  const inOneof = new Set(oneofs.flatMap((oneof) => oneof.fieldsArray));
  const plain = message.fieldsArray.filter((field) => !inOneof.has(field));
  const body = plain.map((field) => plainField(field, '  ')).join('');
  const header = doc(message.comment, '');
  if (oneofs.length === 0) return `${header}export interface ${message.name} {\n${body}}\n`;
  const unions = oneofs.map((oneof) => {
    const members = oneof.fieldsArray.map((member) => {
      const others = oneof.fieldsArray
        .filter((other) => other !== member)
        .map((other) => `      ${other.name}?: undefined;\n`)
        .join('');
      return (
        `  | {\n${doc(oneof.comment, '      ')}      ${oneof.name}: '${member.name}';\n` +
        `${doc(member.comment, '      ')}      ${member.name}: ${typeOf(member)};\n${others}    }\n`
      );
    });
    return members.join('');
  });
  if (plain.length === 0 && unions.length === 1) {
    return `${header}export type ${message.name} =\n${unions[0]};\n`;
  }
  const parts = [...(plain.length > 0 ? [`{\n${body}}`] : []), ...unions.map((union) => `(\n${union})`)];
  return `${header}export type ${message.name} = ${parts.join(' & ')};\n`;
}

function generate() {
  const root = new protobuf.Root();
  const folder = protoRoot();
  root.resolvePath = (origin, target) => path.join(folder, target);
  root.loadSync(PROTO_FILE, { keepCase: true, alternateCommentMode: true });
  root.resolveAll();
  const declarations = root
    .lookup('fiftysix.v1')
    .nestedArray.map((item) => {
      if (item instanceof protobuf.Enum) return enumDeclaration(item);
      if (item instanceof protobuf.Type) return messageDeclaration(item);
      return null; // the service: the kit serves it
    })
    .filter((declaration) => declaration !== null);
  return `${HEADER}\n${declarations.join('\n')}`;
}

module.exports = { OUTPUT, generate };

if (require.main === module) {
  fs.writeFileSync(OUTPUT, generate());
  process.stdout.write(`wrote ${path.relative(process.cwd(), OUTPUT)}\n`);
}
