// The official TypeScript SDK client (handshake era) through the gateway's
// era bridge to examples/http_server.py serving 2026-07-28 only.
//
//   node ts_bridge_client.mjs URL
//
// Each step prints `ok   <step>` or `FAIL <step> <why>` on stdout; the exit
// status is the number of failures. Steps: every tool of the example with a
// client that answers elicitation and sampling (progress and logs on the
// call, the tools list_changed notification on the GET stream), the asking
// tools with a client that declares neither, then several clients of both
// kinds at once, each getting its own answers.
import { pathToFileURL } from 'node:url';

const NM = process.env.MCP_PEERS_NODE_MODULES || '/tmp/peers/node/node_modules';
const load = p => import(pathToFileURL(`${NM}/${p}`).href);
const SDK = '@modelcontextprotocol/sdk/dist/esm';
const { Client } = await load(`${SDK}/client/index.js`);
const { StreamableHTTPClientTransport } = await load(`${SDK}/client/streamableHttp.js`);
const T = await load(`${SDK}/types.js`);

const url = new URL(process.argv[2]);
let failures = 0;
function expect(condition, why) {
    if (!condition) throw new Error(why);
}
async function step(name, fn) {
    try {
        await fn();
        console.log(`ok   ${name}`);
    } catch (e) {
        failures += 1;
        console.log(`FAIL ${name} ${String(e?.message ?? e).slice(0, 300)}`);
    }
}
const text = result => result.content?.[0]?.text;
const names = async client => (await client.listTools()).tools.map(t => t.name).join(',');
const BASE = 'echo,divide,count,ask,think,toggle,long_count';
const TIMEOUT = { timeout: 10000 };

// A client answering elicitation with `word` and sampling with `word` reversed;
// or, with no word, one that declares neither.
async function connected(word) {
    const capabilities = word ? { elicitation: { form: {} }, sampling: {} } : {};
    const client = new Client({ name: `ts-bridge-${word ?? 'mute'}`, version: '1.0.0' }, { capabilities });
    if (word) {
        client.setRequestHandler(T.ElicitRequestSchema, async () => ({ action: 'accept', content: { text: word } }));
        client.setRequestHandler(T.CreateMessageRequestSchema, async () => ({
            role: 'assistant',
            content: { type: 'text', text: [...word].reverse().join('') },
            model: 'test-model',
        }));
    }
    await client.connect(new StreamableHTTPClientTransport(url));
    return client;
}

const asking = await connected('blue');
const logs = [];
asking.setNotificationHandler(T.LoggingMessageNotificationSchema, n => logs.push(n.params.data));
let changed = 0;
let onChange = () => {};
asking.setNotificationHandler(T.ToolListChangedNotificationSchema, () => {
    changed += 1;
    onChange();
});
const listChanged = () => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no tools/list_changed')), 5000);
    onChange = () => {
        clearTimeout(timer);
        resolve();
    };
});

await step('initialize', async () => {
    const server = asking.getServerVersion();
    expect(server?.name === 'example-http-server', JSON.stringify(server));
    expect(asking.getServerCapabilities()?.tools?.listChanged === true, JSON.stringify(asking.getServerCapabilities()));
});
await step('tools-list', async () => expect((await names(asking)) === BASE, await names(asking)));
await step('echo', async () => {
    const result = await asking.callTool({ name: 'echo', arguments: { text: 'hi' } }, undefined, TIMEOUT);
    expect(text(result) === 'hi' && result.structuredContent?.text === 'hi', JSON.stringify(result));
});
await step('divide', async () => {
    const half = await asking.callTool({ name: 'divide', arguments: { a: 1, b: 2 } }, undefined, TIMEOUT);
    const result = await asking.callTool({ name: 'divide', arguments: { a: 1, b: 0 } }, undefined, TIMEOUT);
    expect(text(half) === '0.5' && result.isError === true, JSON.stringify([half, result]));
});
await step('count-progress-and-logs', async () => {
    await asking.setLoggingLevel('info');
    const seen = [];
    const onprogress = p => seen.push(p.progress);
    const result = await asking.callTool({ name: 'count', arguments: {} }, undefined, { ...TIMEOUT, onprogress });
    expect(text(result) === '1 2 3' && seen.join() === '1,2,3', `${text(result)} ${seen}`);
    expect(logs.includes('counted to 3'), JSON.stringify(logs));
});
await step('ask', async () => {
    const result = await asking.callTool({ name: 'ask', arguments: {} }, undefined, TIMEOUT);
    expect(text(result) === 'you said blue', JSON.stringify(result));
});
await step('think', async () => {
    const result = await asking.callTool({ name: 'think', arguments: {} }, undefined, TIMEOUT);
    expect(text(result) === 'you said eulb', JSON.stringify(result));
});
await step('ping', async () => {
    await asking.ping();
});
await step('toggle-on-list-changed', async () => {
    const heard = listChanged();
    expect(text(await asking.callTool({ name: 'toggle', arguments: {} })) === 'extra added', 'toggle');
    await heard;
    expect((await names(asking)) === `${BASE},extra`, await names(asking));
    expect(text(await asking.callTool({ name: 'extra', arguments: {} })) === 'extra is here', 'extra');
});
await step('toggle-off', async () => {
    const heard = listChanged();
    expect(text(await asking.callTool({ name: 'toggle', arguments: {} })) === 'extra removed', 'toggle');
    await heard;
    expect((await names(asking)) === BASE, await names(asking));
});
await step('resources', async () => {
    const listed = await asking.listResources();
    expect(listed.resources[0]?.uri === 'config://app', JSON.stringify(listed));
    const read = await asking.readResource({ uri: 'config://app' });
    expect(read.contents[0].text === '{"debug": false}', JSON.stringify(read));
});
await step('prompts', async () => {
    const listed = await asking.listPrompts();
    expect(listed.prompts[0]?.name === 'review', JSON.stringify(listed));
    const prompt = await asking.getPrompt({ name: 'review', arguments: { code: 'x' } });
    expect(prompt.messages[0].content.text === 'Hi', JSON.stringify(prompt));
});
await step('unknown-tool', async () => {
    let refused = null;
    try {
        await asking.callTool({ name: 'nope', arguments: {} }, undefined, TIMEOUT);
    } catch (e) {
        refused = e;
    }
    expect(refused?.code === -32602 && /Unknown tool/.test(refused.message), String(refused));
});
await asking.close();

const mute = await connected(null);
await step('ask-unaskable', async () => {
    const result = await mute.callTool({ name: 'ask', arguments: {} }, undefined, TIMEOUT);
    expect(text(result) === 'this client cannot be asked' && result.isError, JSON.stringify(result));
});
await step('think-unaskable', async () => {
    const result = await mute.callTool({ name: 'think', arguments: {} }, undefined, TIMEOUT);
    expect(text(result) === 'this client cannot be asked' && result.isError, JSON.stringify(result));
});
await mute.close();

await step('several-clients-at-once', async () => {
    const words = ['red', null, 'green', null, 'violet'];
    const clients = await Promise.all(words.map(connected));
    const asked = await Promise.all(clients.map(async (client, i) => {
        const [ask, think, echo] = await Promise.all([
            client.callTool({ name: 'ask', arguments: {} }, undefined, TIMEOUT),
            client.callTool({ name: 'think', arguments: {} }, undefined, TIMEOUT),
            client.callTool({ name: 'echo', arguments: { text: `client ${i}` } }, undefined, TIMEOUT),
        ]);
        return [text(ask), text(think), text(echo)];
    }));
    await Promise.all(clients.map(client => client.close()));
    const expected = words.map((word, i) => word
        ? [`you said ${word}`, `you said ${[...word].reverse().join('')}`, `client ${i}`]
        : ['this client cannot be asked', 'this client cannot be asked', `client ${i}`]);
    expect(JSON.stringify(asked) === JSON.stringify(expected), JSON.stringify(asked));
});
process.exit(failures);
