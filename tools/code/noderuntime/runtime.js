'use strict';
// dshsim run_code runtime: runs as `node -e <this file> <maxMessageBytes>` in
// a fresh, confined child per program. It talks to the host over descriptor
// 3 (a private socket; stdout and stderr are only captured output): frames
// are a 4-byte big-endian length and UTF-8 JSON. The host treats everything
// this side sends as hostile and checks it. Everything is inside one
// function, so nothing of the runtime is in the program's global scope.
(() => {
const net = require('node:net');
const util = require('node:util');
const vm = require('node:vm');

// Intrinsics are captured before the program runs: it may replace globals.
const stringify = JSON.stringify;
const parse = JSON.parse;
const byteLength = Buffer.byteLength;
const cpuUsage = process.cpuUsage.bind(process);
const maxMessageBytes = Number(process.argv[1]);
const channel = new net.Socket({ fd: 3, readable: true, writable: true });
const realWrite = channel.write.bind(channel);

function sendText(text) {
  const body = Buffer.from(text, 'utf8');
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  realWrite(Buffer.concat([head, body]));
  return body.length;
}
function send(msg) { return sendText(stringify(msg)); }
// sendCall sends call id with its arguments' JSON, stamped with the
// process's CPU time in microseconds: how far the program had got when it
// issued the call, which the host compares with a tool's duration.
function sendCall(id, name, json) {
  const cpu = cpuUsage();
  sendText('{"type":"call","id":' + id + ',"global":"tools","name":' + stringify(name) + ',"cpu":' + (cpu.user + cpu.system) + ',"args":' + json + '}');
}

// serialize returns JSON.stringify(value) when value is lossless JSON (null,
// booleans, strings, finite numbers other than -0, dense plain arrays
// without extra properties, plain or null-prototype objects whose own keys
// are enumerable string-keyed data properties; no undefined, no cycles;
// shared references are fine), else undefined. It uses an explicit stack, so
// nesting depth costs no call stack.
function serialize(value) {
  const out = [];
  const ancestors = new Set();
  const stack = [{ v: value }];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item.text !== undefined) { out.push(item.text); continue; }
    if (item.leave !== undefined) { ancestors.delete(item.leave); continue; }
    const v = item.v;
    switch (typeof v) {
      case 'string': out.push(stringify(v)); continue;
      case 'boolean': out.push(v ? 'true' : 'false'); continue;
      case 'number':
        if (!Number.isFinite(v) || Object.is(v, -0)) return undefined;
        out.push(String(v)); continue;
      case 'object': break;
      default: return undefined;
    }
    if (v === null) { out.push('null'); continue; }
    if (ancestors.has(v)) return undefined;
    const keys = Reflect.ownKeys(v);
    if (Array.isArray(v)) {
      if (Object.getPrototypeOf(v) !== Array.prototype || keys.length !== v.length + 1) return undefined;
      const items = [];
      for (let i = 0; i < v.length; i++) {
        const d = Object.getOwnPropertyDescriptor(v, String(i));
        if (d === undefined || !('value' in d)) return undefined;
        items.push(d.value);
      }
      ancestors.add(v);
      out.push('[');
      stack.push({ leave: v }, { text: ']' });
      for (let i = items.length - 1; i >= 0; i--) {
        stack.push({ v: items[i] });
        if (i > 0) stack.push({ text: ',' });
      }
      continue;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return undefined;
    const members = [];
    for (const k of keys) {
      if (typeof k !== 'string') return undefined;
      const d = Object.getOwnPropertyDescriptor(v, k);
      if (!d.enumerable || !('value' in d)) return undefined;
      members.push([k, d.value]);
    }
    ancestors.add(v);
    out.push('{');
    stack.push({ leave: v }, { text: '}' });
    for (let i = members.length - 1; i >= 0; i--) {
      stack.push({ v: members[i][1] }, { text: stringify(members[i][0]) + ':' });
      if (i > 0) stack.push({ text: ',' });
    }
  }
  return out.join('');
}

// The output ledger on this side only stops sending once the cap is
// passed (the host keeps the authoritative one).
let maxOutputBytes = Infinity;
let ledger = 2;
let entries = 0;
let overflowed = false;
function pushLog(text) {
  if (overflowed) return;
  ledger += byteLength(stringify(text), 'utf8') + (entries > 0 ? 1 : 0);
  entries++;
  if (ledger > maxOutputBytes) {
    // The host keeps the longest prefix that fits; it needs at most
    // maxOutputBytes code units of this entry (not splitting a pair).
    overflowed = true;
    let cut = Math.min(text.length, maxOutputBytes);
    const last = text.charCodeAt(cut - 1);
    if (cut < text.length && last >= 0xd800 && last <= 0xdbff) cut--;
    send({ type: 'log', text: text.slice(0, cut) });
    send({ type: 'output-limit' });
    return;
  }
  send({ type: 'log', text });
}

const inspectOptions = { depth: 4, maxArrayLength: 100, maxStringLength: 10000 };
const emit = (...args) => pushLog(args.map((a) => (typeof a === 'string' ? a : util.inspect(a, inspectOptions))).join(' '));
const consoleShim = Object.freeze({ log: emit, info: emit, warn: emit, error: emit, debug: emit });
for (const stream of [process.stdout, process.stderr]) {
  stream.write = function write(chunk, encoding, callback) {
    if (typeof encoding === 'function') callback = encoding;
    pushLog(typeof chunk === 'string' ? chunk : String(chunk));
    if (typeof callback === 'function') setImmediate(callback);
    return true;
  };
}

class ToolCallError extends Error {
  constructor(toolName, message) {
    super(message);
    Object.defineProperty(this, 'toolName', { value: toolName, enumerable: true });
  }
}
Object.defineProperty(ToolCallError.prototype, 'name', { value: 'ToolCallError' });

const pending = new Map();
let lastId = 0;
// After a turn of the program that issued calls (its synchronous run and the
// microtasks after it), one "turn" frame tells the host the last call the
// turn issued: every call issued together (Promise.all) reaches the host
// before it logs any of them as settled, as upstream's host, which reads all
// of a turn's messages before a tool's result, does.
const schedule = setImmediate;
let turnMarked = false;
function markTurn() {
  if (turnMarked) return;
  turnMarked = true;
  schedule(() => {
    turnMarked = false;
    sendText('{"type":"turn","id":' + lastId + '}');
  });
}
function binding(name) {
  return function (...args) {
    const json = args.length > 0 ? serialize(args[0]) : undefined;
    if (json === undefined) return Promise.reject(new ToolCallError(name, 'binding arguments must be lossless JSON'));
    const id = ++lastId;
    return new Promise((resolve, reject) => {
      pending.set(id, { name, resolve, reject });
      sendCall(id, name, json);
      markTurn();
    });
  };
}

function rendered(thrown) {
  try {
    if (thrown instanceof Error) return typeof thrown.stack === 'string' && thrown.stack !== '' ? thrown.stack : String(thrown.message);
    return String(thrown);
  } catch {
    return 'program threw an unrenderable value';
  }
}

let finished = false;
function done(msg) {
  if (finished) return;
  finished = true;
  send(msg);
}

async function run(boot) {
  maxOutputBytes = boot.maxOutputBytes;
  hideGlobals();
  const tools = Object.create(null);
  for (const name of boot.names) {
    Object.defineProperty(tools, name, { value: binding(name), enumerable: true });
  }
  Object.freeze(tools);
  let value;
  try {
    const AsyncFunction = (async function () {}).constructor;
    const program = new AsyncFunction('tools', 'ToolCallError', 'console', "'use strict';\n" + boot.code);
    value = await program(tools, ToolCallError, consoleShim);
  } catch (thrown) {
    done({ type: 'done', error: { kind: 'exception', message: rendered(thrown) } });
    return;
  }
  if (value === undefined) {
    done({ type: 'done' });
    return;
  }
  const json = serialize(value);
  if (json === undefined) {
    done({ type: 'done', error: { kind: 'invalid-output', message: 'program completion must be lossless JSON' } });
    return;
  }
  if (ledger + byteLength(json, 'utf8') > maxOutputBytes) {
    if (!finished) { finished = true; send({ type: 'output-limit' }); }
    return;
  }
  finished = true;
  sendText('{"type":"done","value":' + json + '}');
}

function onMessage(msg) {
  if (msg.type === 'boot' && msg.mode === 'workflow') {
    maxOutputBytes = msg.maxOutputBytes;
    hideGlobals();
    runWorkflow(msg);
  } else if (msg.type === 'boot') {
    run(msg);
  } else if (msg.type === 'reply') {
    const call = pending.get(msg.id);
    if (call === undefined) return;
    pending.delete(msg.id);
    if (msg.ok) call.resolve(msg.value === undefined ? null : msg.value);
    else call.reject(new ToolCallError(call.name, String(msg.message)));
  }
}

// ---- workflow mode: the workflow tool's script body (upstream's engine:
// agent(), parallel(), pipeline(), phase(), log(), args) in a fresh vm
// context that has nothing else; agent() is a host call.
function hostCall(name, args) {
  const id = ++lastId;
  return new Promise((resolve, reject) => {
    pending.set(id, { name, resolve, reject: (e) => reject(new Error(e.message)) });
    sendCall(id, name, stringify(args));
  });
}

class WorkflowError extends Error {
  constructor(message, code, fatal) {
    super(message);
    this.name = 'WorkflowError';
    this.code = code;
    this.fatal = fatal !== false;
  }
}

// renderThrown is a thrown value's failure text as upstream's workflow
// engine renders it (its renderThrown), for any value, an Error or not: its
// stack when that is a non-empty string, else its message when that is one,
// else String(value); a read or conversion that throws gives a fixed label.
function renderThrown(error) {
  try {
    const stack = error?.stack;
    if (typeof stack === 'string' && stack.length > 0) return stack;
    const message = error?.message;
    if (typeof message === 'string' && message.length > 0) return message;
    return String(error);
  } catch {
    return '[unrenderable thrown value]';
  }
}

class MaterializeError extends Error {
  constructor(path, reason) { super(path + ': ' + reason); this.name = 'MaterializeError'; }
}
// materializeFromRealm is materialize for a whole value (upstream's): a
// read that throws anything but a MaterializeError (a getter, a proxy trap)
// fails at root with the thrown value rendered.
function materializeFromRealm(value, root) {
  try {
    return materialize(value, root, new Set());
  } catch (e) {
    if (e instanceof MaterializeError) throw e;
    throw new MaterializeError(root, 'reading the value threw: ' + renderThrown(e));
  }
}
function plainProto(v) { const p = Object.getPrototypeOf(v); return p === null || Object.getPrototypeOf(p) === null; }
// materialize copies a value of the script's realm as plain JSON data, or
// throws naming where it is not (upstream's materializeFromRealm).
function materialize(value, path, seen) {
  switch (typeof value) {
    case 'boolean': case 'string': return value;
    case 'number':
      if (!Number.isFinite(value)) throw new MaterializeError(path, 'non-finite numbers are not JSON data');
      return value;
    case 'bigint': throw new MaterializeError(path, 'bigints are not JSON data');
    case 'function': throw new MaterializeError(path, 'functions are not plain JSON data');
    case 'symbol': throw new MaterializeError(path, 'symbols are not plain JSON data');
    case 'undefined': throw new MaterializeError(path, 'undefined is not JSON data');
  }
  if (value === null) return null;
  if (seen.has(value)) throw new MaterializeError(path, 'circular references are not JSON data');
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      const out = [];
      for (let i = 0; i < value.length; i++) {
        if (!(i in value)) throw new MaterializeError(path + '[' + i + ']', 'sparse arrays are not JSON data');
        out.push(materialize(value[i], path + '[' + i + ']', seen));
      }
      return out;
    }
    if (!plainProto(value)) throw new MaterializeError(path, 'only plain objects and arrays are JSON data (exotic prototype)');
    if (Object.getOwnPropertySymbols(value).length > 0) throw new MaterializeError(path, 'symbol-keyed properties are not plain JSON data');
    const out = {};
    for (const k of Object.keys(value)) {
      Object.defineProperty(out, k, { value: materialize(value[k], path + '.' + k, seen), enumerable: true, writable: true, configurable: true });
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

const AGENT_OPTIONS = ['label', 'phase', 'schema', 'provider', 'model', 'readOnly'];
const DEFERRED_OPTIONS = ['effort', 'isolation', 'agentType'];
const SUPPORTED = '(supported: label, phase, schema, provider, model)';

function readAgentOptions(raw) {
  if (raw === undefined) return {};
  let opts;
  try { opts = materializeFromRealm(raw, 'agent() options'); } catch (e) {
    throw new WorkflowError('agent() options must be plain JSON data — ' + e.message, 'INVALID_ARGUMENT');
  }
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) throw new WorkflowError('agent() options must be an object', 'INVALID_ARGUMENT');
  for (const k of Object.keys(opts)) {
    if (AGENT_OPTIONS.includes(k)) continue;
    if (DEFERRED_OPTIONS.includes(k)) throw new WorkflowError('agent() option "' + k + '" is deferred and not supported by this engine ' + SUPPORTED, 'UNSUPPORTED_OPTION');
    throw new WorkflowError('agent() option "' + k + '" is not recognized ' + SUPPORTED, 'UNSUPPORTED_OPTION');
  }
  for (const k of ['label', 'phase', 'provider', 'model']) {
    if (opts[k] !== undefined && typeof opts[k] !== 'string') throw new WorkflowError('agent() option "' + k + '" must be a string', 'INVALID_ARGUMENT');
  }
  if (opts.readOnly !== undefined && typeof opts.readOnly !== 'boolean') throw new WorkflowError('agent() option "readOnly" must be a boolean', 'INVALID_ARGUMENT');
  if (opts.schema !== undefined) {
    const violations = objectSchemaViolations(opts.schema);
    if (violations.length > 0) throw new WorkflowError('agent() schema is outside the supported subset — unsupported JSON schema: ' + violations.join('; '), 'UNSUPPORTED_SCHEMA');
  }
  return opts;
}

// ---- the JSON Schema subset structured output takes (upstream's
// assertObjectJsonSchema): every violation of the tree, in its walk order,
// then an object root. The schema was materialized: plain JSON data, no
// cycle, no shared node, every number finite.
const CONSTRAINT_KEYWORDS = ['type', 'oneOf', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const'];
const ANNOTATION_KEYWORDS = ['description', 'title', 'default', 'examples'];
const SCHEMA_TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];
const ONE_OF_SIBLINGS = ['properties', 'required', 'additionalProperties', 'items', 'enum', 'const'];
const SCALAR_KEYWORDS = ['string', 'number', 'integer', 'boolean', 'null'];
const ALLOWED_FOR = { properties: ['object'], required: ['object'], additionalProperties: ['object'], items: ['array'], enum: SCALAR_KEYWORDS, const: SCALAR_KEYWORDS };
const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isRecord = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const jsonNumber = (v) => typeof v === 'number' && Number.isFinite(v) && !Object.is(v, -0);
function losslessJson(v) {
  if (typeof v === 'number') return jsonNumber(v);
  if (Array.isArray(v)) return v.every(losslessJson);
  if (isRecord(v)) return Object.keys(v).every((k) => losslessJson(v[k]));
  return true;
}
function scalarMatches(type, v) {
  switch (type) {
    case 'string': return typeof v === 'string';
    case 'number': return jsonNumber(v);
    case 'integer': return jsonNumber(v) && Number.isInteger(v);
    case 'boolean': return typeof v === 'boolean';
    default: return v === null;
  }
}
function objectSchemaViolations(schema) {
  const violations = [];
  schemaNodeViolations(schema, violations);
  if (violations.length === 0 && !(isRecord(schema) && own(schema, 'type') && schema.type === 'object')) {
    violations.push('schema.type must be "object" (structured output is object-rooted)');
  }
  return violations;
}
function schemaNodeViolations(root, violations) {
  const tasks = [{ kind: 'enter', node: root, path: 'schema' }];
  for (let task = tasks.pop(); task !== undefined; task = tasks.pop()) {
    const { node, path } = task;
    if (task.kind === 'one-of-tail') {
      for (const k of ONE_OF_SIBLINGS) if (own(node, k)) violations.push(path + '.' + k + ' is not supported beside oneOf');
      continue;
    }
    if (task.kind === 'object-tail') {
      objectTailViolations(node, path, task.properties, violations);
      continue;
    }
    if (!isRecord(node)) {
      violations.push(path + ' must be a schema object');
      continue;
    }
    for (const k of Object.keys(node)) {
      if (CONSTRAINT_KEYWORDS.includes(k)) continue;
      if (ANNOTATION_KEYWORDS.includes(k)) {
        if (!losslessJson(node[k])) violations.push(path + '.' + k + ' annotation must be lossless JSON data');
        continue;
      }
      violations.push(path + '.' + k + ' is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)');
    }
    if (own(node, 'description') && typeof node.description !== 'string') violations.push(path + '.description must be a string');
    if (own(node, 'title') && typeof node.title !== 'string') violations.push(path + '.title must be a string');
    const hasType = own(node, 'type'), hasOneOf = own(node, 'oneOf');
    if (hasType && hasOneOf) {
      violations.push(path + ' cannot declare both type and oneOf');
      continue;
    }
    if (!hasType && !hasOneOf) {
      for (const k of ONE_OF_SIBLINGS) if (own(node, k)) violations.push(path + '.' + k + ' requires type or oneOf');
      continue;
    }
    if (hasOneOf) {
      tasks.push({ kind: 'one-of-tail', node, path });
      if (!Array.isArray(node.oneOf) || node.oneOf.length < 2) violations.push(path + '.oneOf must be an array of at least two schemas');
      else for (let i = node.oneOf.length - 1; i >= 0; i--) tasks.push({ kind: 'enter', node: node.oneOf[i], path: path + '.oneOf[' + i + ']' });
      continue;
    }
    typedNodeViolations(node, path, tasks, violations);
  }
}
function typedNodeViolations(node, path, tasks, violations) {
  const type = node.type;
  if (typeof type !== 'string' || !SCHEMA_TYPES.includes(type)) {
    violations.push(Array.isArray(type) ? path + '.type must be a single type string (type arrays are not supported)' : path + '.type must be one of ' + SCHEMA_TYPES.join('/'));
    return;
  }
  for (const [k, types] of Object.entries(ALLOWED_FOR)) {
    if (own(node, k) && !types.includes(type)) violations.push(path + '.' + k + ' is not supported on type "' + type + '"');
  }
  if (type === 'object') {
    const properties = own(node, 'properties') ? node.properties : undefined;
    tasks.push({ kind: 'object-tail', node, path, properties });
    if (own(node, 'properties')) {
      if (!isRecord(properties)) violations.push(path + '.properties must be an object of schemas');
      else {
        const entries = Object.entries(properties);
        for (let i = entries.length - 1; i >= 0; i--) tasks.push({ kind: 'enter', node: entries[i][1], path: path + '.properties.' + entries[i][0] });
      }
    }
    return;
  }
  if (type === 'array') {
    if (own(node, 'items')) tasks.push({ kind: 'enter', node: node.items, path: path + '.items' });
    return;
  }
  const hasEnum = own(node, 'enum');
  const allowed = hasEnum ? node.enum : undefined;
  const enumValid = Array.isArray(allowed) && allowed.length > 0 && allowed.every((e) => scalarMatches(type, e));
  if (hasEnum && !enumValid) violations.push(path + '.enum must be a non-empty array of ' + type + ' values');
  if (own(node, 'const')) {
    if (!scalarMatches(type, node.const)) violations.push(path + '.const must be a ' + type + ' value');
    else if (enumValid && !allowed.includes(node.const)) violations.push(path + '.const must be one of ' + path + '.enum when both are declared');
  }
}
function objectTailViolations(node, path, properties, violations) {
  if (own(node, 'required')) {
    const required = node.required;
    if (!Array.isArray(required) || required.some((e) => typeof e !== 'string')) violations.push(path + '.required must be an array of strings');
    else {
      const declared = isRecord(properties) ? properties : {};
      for (const k of required) if (!own(declared, k)) violations.push(path + '.required names "' + k + '" which is not in properties');
    }
  }
  if (own(node, 'additionalProperties') && typeof node.additionalProperties !== 'boolean') violations.push(path + '.additionalProperties must be a boolean');
}

function defaultLabel(prompt) {
  const nl = prompt.indexOf('\n');
  const line = nl === -1 ? prompt : prompt.slice(0, nl);
  return line.length <= 48 ? line : line.slice(0, 47) + '…';
}

function workflowHooks(limits, args) {
  let started = 0, active = 0, currentPhase;
  const waiters = [];
  const acquire = () => active < limits.maxConcurrentAgents ? (active++, Promise.resolve()) : new Promise((r) => waiters.push(() => { active++; r(); }));
  const release = () => { active--; const n = waiters.shift(); if (n) n(); };
  const fatal = (e) => e instanceof WorkflowError && e.fatal;
  const cap = (n, hook) => {
    if (n > limits.maxItemsPerCall) throw new WorkflowError(hook + ' received ' + n + ' items — over the per-call cap (' + limits.maxItemsPerCall + '); split the work or raise maxItemsPerCall in the engine config', 'ITEM_CAP');
  };
  async function agent(rawPrompt, rawOpts) {
    if (typeof rawPrompt !== 'string' || rawPrompt.length === 0) throw new WorkflowError('agent() requires a non-empty prompt string', 'INVALID_ARGUMENT');
    const opts = readAgentOptions(rawOpts);
    if (started >= limits.maxTotalAgents) throw new WorkflowError('this run reached its total agent cap (' + limits.maxTotalAgents + ') — a runaway-loop backstop; raise the applicable maxTotalAgents limit if the scale is intentional', 'AGENT_CAP');
    started += 1;
    const request = { prompt: rawPrompt, seq: started, label: opts.label !== undefined ? opts.label : defaultLabel(rawPrompt) };
    const phase = opts.phase !== undefined ? opts.phase : currentPhase;
    if (phase !== undefined) request.phase = phase;
    for (const k of ['schema', 'provider', 'model', 'readOnly']) if (opts[k] !== undefined) request[k] = opts[k];
    await acquire();
    try {
      let r;
      try { r = await hostCall('agent', request); } catch (e) {
        throw new WorkflowError('agent() could not start a child: ' + e.message, 'AGENT_START');
      }
      if (r.outcome === 'error') throw new WorkflowError('child agent run failed: ' + r.message, 'AGENT_RESULT');
      return r.outcome === 'completed' ? r.value : null;
    } finally { release(); }
  }
  async function parallel(thunks) {
    if (!Array.isArray(thunks)) throw new WorkflowError('parallel() requires an array of zero-argument functions', 'INVALID_ARGUMENT');
    cap(thunks.length, 'parallel()');
    thunks.forEach((t, i) => { if (typeof t !== 'function') throw new WorkflowError('parallel() item ' + i + ' is not a function', 'INVALID_ARGUMENT'); });
    return Promise.all(thunks.map(async (t) => { try { return await t(); } catch (e) { if (fatal(e)) throw e; return null; } }));
  }
  async function pipeline(items, ...stages) {
    if (!Array.isArray(items)) throw new WorkflowError('pipeline() requires an items array', 'INVALID_ARGUMENT');
    cap(items.length, 'pipeline()');
    if (stages.length === 0) throw new WorkflowError('pipeline() requires at least one stage function', 'INVALID_ARGUMENT');
    stages.forEach((s, i) => { if (typeof s !== 'function') throw new WorkflowError('pipeline() stage ' + i + ' is not a function', 'INVALID_ARGUMENT'); });
    return Promise.all(items.map(async (item, index) => {
      let v = item;
      try { for (const s of stages) v = await s(v, item, index); return v; } catch (e) { if (fatal(e)) throw e; return null; }
    }));
  }
  function phase(title) {
    if (typeof title !== 'string' || title.length === 0) throw new WorkflowError('phase() requires a non-empty title string', 'INVALID_ARGUMENT');
    currentPhase = title;
  }
  function log(message) {
    if (typeof message !== 'string') throw new WorkflowError('log() requires a message string', 'INVALID_ARGUMENT');
  }
  const contain = (p) => { p.catch(() => {}); return p; };
  return {
    agent: Object.freeze((p, o) => contain(agent(p, o))),
    parallel: Object.freeze((t) => contain(parallel(t))),
    pipeline: Object.freeze((i, ...s) => contain(pipeline(i, ...s))),
    phase: Object.freeze(phase),
    log: Object.freeze(log),
    args,
    started: () => started,
  };
}

async function runWorkflow(boot) {
  let compiled;
  try {
    compiled = new vm.Script('(async () => {\n' + boot.code + '\n})()', { filename: 'workflow:' + boot.name, lineOffset: -1 });
  } catch (e) {
    done({ type: 'done', error: { kind: 'parse', message: 'workflow script does not parse: ' + String(e) } });
    return;
  }
  await hostCall('start', {});
  const hooks = workflowHooks(boot.limits, boot.args);
  const context = vm.createContext({}, { name: 'workflow:' + boot.name });
  for (const k of ['agent', 'parallel', 'pipeline', 'phase', 'log', 'args']) context[k] = hooks[k];
  let value;
  try {
    const raw = await compiled.runInContext(context, { timeout: boot.limits.syncTimeoutMs });
    value = raw === undefined ? null : materializeFromRealm(raw, 'workflow result');
  } catch (e) {
    // A value that is not plain JSON fails as upstream's run does: a
    // WorkflowError (RESULT_UNSERIALIZABLE), rendered as any thrown value.
    const msg = renderThrown(e instanceof MaterializeError
      ? new WorkflowError("the workflow's return value is not plain JSON data — " + e.message + '. Return only JSON-serializable objects/arrays/scalars.', 'RESULT_UNSERIALIZABLE')
      : e);
    done({ type: 'done', error: { kind: 'exception', message: msg }, agentsStarted: hooks.started() });
    return;
  }
  finished = true;
  // A -0 survives materialize (it is finite) but not JSON: the host fails
  // the call as upstream's output snapshot does, after the run completed.
  const lossy = value !== null && serialize(value) === undefined;
  const completion = lossy ? { value: value, agentsStarted: hooks.started(), lossy: true } : { value: value, agentsStarted: hooks.started() };
  sendText('{"type":"done","value":' + stringify(completion) + '}');
}

let buffered = Buffer.alloc(0);
channel.on('data', (chunk) => {
  buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
  while (buffered.length >= 4) {
    const n = buffered.readUInt32BE(0);
    if (n === 0 || n > maxMessageBytes) process.exit(70);
    if (buffered.length < 4 + n) break;
    const body = buffered.subarray(4, 4 + n).toString('utf8');
    buffered = buffered.subarray(4 + n);
    onMessage(parse(body));
  }
});
channel.on('end', () => process.exit(0));
channel.on('error', () => process.exit(0));

process.on('uncaughtException', (err) => {
  let message;
  try { message = err instanceof Error ? String(err.message) : String(err); } catch { message = 'program threw an unrenderable value'; }
  if (!finished) {
    finished = true;
    send({ type: 'fatal', message });
  }
});

// What the program sees: an empty environment, no CommonJS scope and none
// of the builtin-module globals `node -e` adds (node modules come through
// await import("node:...")).
const hidden = ['require', 'module', 'exports', '__filename', '__dirname', ...require('node:module').builtinModules]
  .filter((name) => name !== 'process' && name !== 'console' && name !== 'buffer');
function hideGlobals() {
  for (const name of hidden) {
    const d = Object.getOwnPropertyDescriptor(globalThis, name);
    if (d !== undefined && d.configurable) delete globalThis[name];
  }
}
process.env = {};
hideGlobals();
send({ type: 'ready', pid: process.pid });
})();
