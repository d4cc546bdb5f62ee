// The official TypeScript SDK client against examples/http_server.py, over
// Streamable HTTP (handshake era), e.g. through the cluster's load balancer.
//
//   node ts_http_client.mjs URL
//
// Each step prints `ok   <step>` or `FAIL <step> <why>` on stdout; the exit
// status is the number of failures. With MCP_PEER_CLIENT_ID and
// MCP_PEER_CLIENT_SECRET (and MCP_PEER_ISSUER, the authorization server it
// trusts; MCP_PEER_SCOPE, what it asks for: this SDK's client-credentials
// token request asks only for its own configured scope, not the challenge's)
// the client gets its tokens itself, by the client-credentials grant (the
// SDK's ClientCredentialsProvider), once the server's 401 names where.
import { pathToFileURL } from 'node:url';

const NM = process.env.MCP_PEERS_NODE_MODULES || '/tmp/peers/node/node_modules';
const load = p => import(pathToFileURL(`${NM}/${p}`).href);
const SDK = '@modelcontextprotocol/sdk/dist/esm';
const { Client } = await load(`${SDK}/client/index.js`);
const { StreamableHTTPClientTransport } = await load(`${SDK}/client/streamableHttp.js`);
const { ClientCredentialsProvider } = await load(`${SDK}/client/auth-extensions.js`);
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
        console.log(`FAIL ${name} ${String(e?.message ?? e).slice(0, 200)}`);
    }
}
const text = result => result.content?.[0]?.text;
const names = async client => (await client.listTools()).tools.map(t => t.name).join(',');
const BASE = 'echo,divide,count,ask,think,toggle,long_count';
const TIMEOUT = { timeout: 10000 };

function authProvider() {
    const clientId = process.env.MCP_PEER_CLIENT_ID;
    if (!clientId) return undefined;
    const clientSecret = process.env.MCP_PEER_CLIENT_SECRET;
    const expectedIssuer = process.env.MCP_PEER_ISSUER;
    return new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer, scope: process.env.MCP_PEER_SCOPE });
}

async function connected(capabilities) {
    const client = new Client({ name: 'ts-http-client', version: '1.0.0' }, { capabilities });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: authProvider() }));
    return client;
}

const asking = await connected({ elicitation: { form: {} } });
asking.setRequestHandler(T.ElicitRequestSchema, async () => ({ action: 'accept', content: { text: 'blue' } }));
await step('tools-list', async () => expect((await names(asking)) === BASE, await names(asking)));
await step('echo', async () => {
    const result = await asking.callTool({ name: 'echo', arguments: { text: 'hi' } }, undefined, TIMEOUT);
    expect(text(result) === 'hi' && result.structuredContent?.text === 'hi', JSON.stringify(result));
});
await step('divide', async () => {
    const result = await asking.callTool({ name: 'divide', arguments: { a: 1, b: 0 } }, undefined, TIMEOUT);
    expect(result.isError === true, JSON.stringify(result));
});
await step('count', async () => {
    const seen = [];
    const onprogress = p => seen.push(p.progress);
    const result = await asking.callTool({ name: 'count', arguments: {} }, undefined, { ...TIMEOUT, onprogress });
    expect(text(result) === '1 2 3' && seen.join() === '1,2,3', `${text(result)} ${seen}`);
});
await step('ask', async () => {
    const result = await asking.callTool({ name: 'ask', arguments: {} }, undefined, TIMEOUT);
    expect(text(result) === 'you said blue', JSON.stringify(result));
});
await step('think-unaskable', async () => {  // no sampling capability declared
    const result = await asking.callTool({ name: 'think', arguments: {} }, undefined, TIMEOUT);
    expect(text(result) === 'this client cannot be asked' && result.isError, JSON.stringify(result));
});
await step('toggle-on', async () => {
    expect(text(await asking.callTool({ name: 'toggle', arguments: {} })) === 'extra added', 'toggle');
    expect((await names(asking)) === `${BASE},extra`, await names(asking));
    expect(text(await asking.callTool({ name: 'extra', arguments: {} })) === 'extra is here', 'extra');
});
await step('toggle-off', async () => {
    expect(text(await asking.callTool({ name: 'toggle', arguments: {} })) === 'extra removed', 'toggle');
    expect((await names(asking)) === BASE, await names(asking));
});
await step('resource', async () => {
    const read = await asking.readResource({ uri: 'config://app' });
    expect(read.contents[0].text === '{"debug": false}', JSON.stringify(read));
});
await step('prompt', async () => {
    const prompt = await asking.getPrompt({ name: 'review', arguments: { code: 'x' } });
    expect(prompt.messages[0].content.text === 'Hi', JSON.stringify(prompt));
});
await asking.close();

const mute = await connected({});
await step('ask-unaskable', async () => {
    const result = await mute.callTool({ name: 'ask', arguments: {} }, undefined, TIMEOUT);
    expect(text(result) === 'this client cannot be asked' && result.isError, JSON.stringify(result));
});
await mute.close();
process.exit(failures);
