// MCP client on the official TypeScript SDK (@modelcontextprotocol/sdk 1.32.x), stdio transport.
//
//   node ts_client.mjs --out CAPTURE.jsonl [--offer-version V] -- SERVER_CMD [ARGS...]
//
// Launches `python3 relay.py --out CAPTURE.jsonl -- SERVER_CMD...` as its server so that every
// JSON-RPC line is recorded. Each step is attempted; failures are logged to stderr and skipped.
import { pathToFileURL, fileURLToPath } from 'node:url';
import path from 'node:path';

const NM = process.env.MCP_PEERS_NODE_MODULES || '/tmp/peers/node/node_modules';
const load = p => import(pathToFileURL(`${NM}/${p}`).href);
const SDK = '@modelcontextprotocol/sdk/dist/esm';
const HERE = path.dirname(fileURLToPath(import.meta.url));

const z = await load('zod/v4/index.js');
const { Client } = await load(`${SDK}/client/index.js`);
const { StdioClientTransport } = await load(`${SDK}/client/stdio.js`);
const T = await load(`${SDK}/types.js`);

const argv = process.argv.slice(2);
const outIdx = argv.indexOf('--out');
const out = path.resolve(argv[outIdx + 1]);
const sep = argv.indexOf('--');
const serverCmd = argv.slice(sep + 1);
// The relay rewrites the client's initialize protocolVersion (an older session).
const offerIdx = argv.indexOf('--offer-version');
const offer = offerIdx >= 0 && offerIdx < sep ? ['--offer-version', argv[offerIdx + 1]] : [];
const python = process.env.PYTHON || 'python3';

const sleep = ms => new Promise(r => setTimeout(r, ms));
const log = (...a) => process.stderr.write(a.join(' ') + '\n');
async function step(name, fn) {
    try {
        const r = await fn();
        log('ok  ', name, JSON.stringify(r ?? null).slice(0, 160));
        return r;
    } catch (e) {
        log('FAIL', name, String(e?.message ?? e).slice(0, 200));
        return undefined;
    }
}

const client = new Client(
    { name: 'ts-peer-client', title: 'TypeScript peer client', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } }
);
client.setRequestHandler(T.CreateMessageRequestSchema, async () => ({
    role: 'assistant',
    content: { type: 'text', text: 'Sunny and mild.' },
    model: 'stub-model-1',
    stopReason: 'endTurn'
}));
client.setRequestHandler(T.ElicitRequestSchema, async req => {
    if (req.params.mode === 'url') return { action: 'accept' };
    return { action: 'accept', content: { confidence: 0.75, note: 'fairly sure' } };
});
client.setRequestHandler(T.ListRootsRequestSchema, async () => ({
    roots: [{ uri: 'file:///home/user/project', name: 'project' }, { uri: 'file:///home/user/notes' }]
}));
client.setNotificationHandler(T.LoggingMessageNotificationSchema, n => log('[log]', JSON.stringify(n.params)));

const transport = new StdioClientTransport({
    command: python,
    args: [path.join(HERE, 'relay.py'), '--out', out, ...offer, '--', ...serverCmd],
    cwd: HERE,
    stderr: 'inherit'
});
await client.connect(transport);
log('negotiated', transport._protocolVersion ?? client._negotiatedProtocolVersion ?? '(see capture)');
const caps = client.getServerCapabilities() ?? {};

await step('ping', () => client.ping());
await step('logging/setLevel', () => client.setLoggingLevel('debug'));
await step('tools/list', () => client.listTools());
await step('call echo', () => client.callTool({ name: 'echo', arguments: { text: 'hello' } }));
await step('call get_weather', () => client.callTool({ name: 'get_weather', arguments: { city: 'Paris', units: 'metric' } }));
await step('call divide ok', () => client.callTool({ name: 'divide', arguments: { a: 1, b: 4 } }));
await step('call divide throws', () => client.callTool({ name: 'divide', arguments: { a: 1, b: 0 } }));
await step('call bad args', () => client.callTool({ name: 'divide', arguments: { a: 'x' } }));
await step('call unknown tool', () => client.callTool({ name: 'no_such_tool', arguments: {} }));
await step('call soft_fail', () => client.callTool({ name: 'soft_fail', arguments: {} }));
await step('call slow_count (progress)', () =>
    client.callTool({ name: 'slow_count', arguments: { n: 3 } }, undefined, { onprogress: p => log('[progress]', JSON.stringify(p)) })
);
await step('resources/list', () => client.listResources());
await step('resources/templates/list', () => client.listResourceTemplates());
await step('read text', () => client.readResource({ uri: 'config://app' }));
await step('read blob', () => client.readResource({ uri: 'file:///logo.png' }));
await step('read template', () => client.readResource({ uri: 'weather://Paris/current' }));
await step('read missing', () => client.readResource({ uri: 'config://missing' }));
await step('subscribe', () => client.subscribeResource({ uri: 'config://app' }));
await sleep(100);
await step('unsubscribe', () => client.unsubscribeResource({ uri: 'config://app' }));
await step('prompts/list', () => client.listPrompts());
await step('prompts/get', () => client.getPrompt({ name: 'code_review', arguments: { code: 'print(1)', language: 'python' } }));
await step('complete prompt arg', () =>
    client.complete({ ref: { type: 'ref/prompt', name: 'code_review' }, argument: { name: 'language', value: 'py' } })
);
await step('complete template arg', () =>
    client.complete({
        ref: { type: 'ref/resource', uri: 'weather://{city}/current' },
        argument: { name: 'city', value: 'P' }
    })
);
await step('elicitation form (number 0.75)', () => client.callTool({ name: 'rate_forecast', arguments: { city: 'Paris' } }));
await step('elicitation url', () => client.callTool({ name: 'connect_account', arguments: {} }));
await step('sampling', () => client.callTool({ name: 'summarize', arguments: {} }));
await step('roots', () => client.callTool({ name: 'show_roots', arguments: {} }));
await step('roots list_changed', () => client.sendRootsListChanged());
await step('add_tool (list_changed)', () => client.callTool({ name: 'add_tool', arguments: {} }));
await sleep(50);
await step('tools/list again', () => client.listTools());
await step('cancellation', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort('user cancelled'), 300);
    return await client.callTool({ name: 'wait_forever', arguments: { seconds: 5 } }, undefined, { signal: ac.signal });
});
await step('echo after cancel', () => client.callTool({ name: 'echo', arguments: { text: 'still alive' } }));

if (caps.tasks) {
    await step('task: callToolStream', async () => {
        const seen = [];
        for await (const m of client.experimental.tasks.callToolStream(
            { name: 'delay', arguments: { ms: 250 } },
            T.CallToolResultSchema,
            { task: { ttl: 60000 } }
        )) {
            seen.push(m.type === 'error' ? `error:${m.error}` : m.type);
        }
        return seen;
    });
    let created;
    await step('task: tools/call with params.task (raw)', async () => {
        created = await client.request(
            { method: 'tools/call', params: { name: 'delay', arguments: { ms: 3000 }, task: { ttl: 60000 } } },
            T.CreateTaskResultSchema
        );
        return created;
    });
    const taskId = created?.task?.taskId;
    await step('tasks/list', () => client.experimental.tasks.listTasks());
    if (taskId) {
        await step('tasks/get', () => client.experimental.tasks.getTask(taskId));
        await step('tasks/cancel', () => client.experimental.tasks.cancelTask(taskId));
        await step('tasks/get after cancel', () => client.experimental.tasks.getTask(taskId));
    }
    let quick;
    await step('task: quick task (raw)', async () => {
        quick = await client.request(
            { method: 'tools/call', params: { name: 'delay', arguments: { ms: 50 } , task: { ttl: 60000 } } },
            T.CreateTaskResultSchema
        );
        return quick;
    });
    if (quick?.task?.taskId) {
        await sleep(300);
        await step('tasks/get completed', () => client.experimental.tasks.getTask(quick.task.taskId));
        await step('tasks/result', () => client.experimental.tasks.getTaskResult(quick.task.taskId, T.CallToolResultSchema));
    }
    await step('tasks/get unknown', () => client.experimental.tasks.getTask('no-such-task'));
}
await step('unknown method', () => client.request({ method: 'tools/frobnicate', params: { x: 1 } }, z.object({}).passthrough()));
await sleep(200);
await client.close();
