// The official TypeScript SDK client against examples/server.py, over stdio.
//
//   node ts_example_client.mjs -- SERVER_CMD [ARGS...]
//
// Each step checks what the example server promises and prints `ok   <step>` or
// `FAIL <step> <why>` (step names hold no spaces) on stdout; the exit status is the number of failures.
import { pathToFileURL } from 'node:url';

const NM = process.env.MCP_PEERS_NODE_MODULES || '/tmp/peers/node/node_modules';
const load = p => import(pathToFileURL(`${NM}/${p}`).href);
const SDK = '@modelcontextprotocol/sdk/dist/esm';
const { Client } = await load(`${SDK}/client/index.js`);
const { StdioClientTransport } = await load(`${SDK}/client/stdio.js`);
const T = await load(`${SDK}/types.js`);

const argv = process.argv.slice(2);
const serverCmd = argv.slice(argv.indexOf('--') + 1);
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
        console.log(`FAIL ${name} ${String(e?.message ?? e).slice(0, 200)}`);
    }
}

const client = new Client(
    { name: 'ts-example-client', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } }
);
client.setRequestHandler(T.ElicitRequestSchema, async () => ({ action: 'accept', content: { text: 'blue' } }));
const logs = [];
client.setNotificationHandler(T.LoggingMessageNotificationSchema, n => logs.push(n.params));
const text = result => result.content?.[0]?.text;

await client.connect(new StdioClientTransport({ command: serverCmd[0], args: serverCmd.slice(1), stderr: 'inherit' }));
await step('initialize', async () => expect(client.getServerVersion()?.name === 'example-server', 'server name'));
await step('ping', () => client.ping());
await step('logging/setLevel', () => client.setLoggingLevel('info'));
await step('tools/list', async () => {
    const names = (await client.listTools()).tools.map(t => t.name).sort().join(',');
    expect(names === 'ask,count,divide,echo,think,toggle', `tools ${names}`);
});
await step('tools/call-structured', async () => {
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
    expect(result.structuredContent?.text === 'hello', JSON.stringify(result));
});
await step('tools/call-result', async () => {
    expect(text(await client.callTool({ name: 'divide', arguments: { a: 1, b: 4 } })) === '0.25', 'quotient');
});
await step('tools/call-error-result', async () => {
    expect((await client.callTool({ name: 'divide', arguments: { a: 1, b: 0 } })).isError === true, 'isError');
});
await step('tools/call-unknown-tool', async () => {
    const refused = await client.callTool({ name: 'no_such_tool', arguments: {} }).then(r => r.isError === true, () => true);
    expect(refused, 'an unknown tool was not refused');
});
await step('progress-and-logging', async () => {
    const seen = [];
    const result = await client.callTool({ name: 'count', arguments: {} }, undefined, { onprogress: p => seen.push(p.progress) });
    // The SDK drops its progress handler when the response arrives, and it hands
    // notifications on a tick later: progress read in the same chunk as the
    // response is lost, so only a prefix of 1, 2, 3 (perhaps none) can be asked for;
    // tests/examples/test_sdk_client.py sees all three through the Python SDK.
    expect(text(result) === '1 2 3' && '1,2,3'.startsWith(seen.join(',')), `progress ${seen}`);
    expect(logs.some(l => l.data === 'counted to 3'), 'no log message');
});
await step('elicitation', async () => {
    expect(text(await client.callTool({ name: 'ask', arguments: {} })) === 'you said blue', 'answer');
});
await step('resources', async () => {
    const [resource] = (await client.listResources()).resources;
    const read = await client.readResource({ uri: resource.uri });
    expect(JSON.parse(read.contents[0].text).debug === false, 'contents');
});
await step('prompts', async () => {
    const [prompt] = (await client.listPrompts()).prompts;
    const got = await client.getPrompt({ name: prompt.name, arguments: { code: 'print(1)' } });
    expect(got.messages.length > 0, 'no messages');
});
await client.close();
process.exit(failures);
