// MCP server on the official TypeScript SDK (@modelcontextprotocol/sdk 1.32.x), stdio transport.
// Node modules are loaded from $MCP_PEERS_NODE_MODULES (default /tmp/peers/node/node_modules)
// so nothing is installed inside the repo.
import { pathToFileURL } from 'node:url';

const NM = process.env.MCP_PEERS_NODE_MODULES || '/tmp/peers/node/node_modules';
const load = p => import(pathToFileURL(`${NM}/${p}`).href);
const SDK = '@modelcontextprotocol/sdk/dist/esm';

const z = await load('zod/v4/index.js');
const { McpServer, ResourceTemplate } = await load(`${SDK}/server/mcp.js`);
const { completable } = await load(`${SDK}/server/completable.js`);
const { StdioServerTransport } = await load(`${SDK}/server/stdio.js`);
const { SubscribeRequestSchema, UnsubscribeRequestSchema } = await load(`${SDK}/types.js`);
const { InMemoryTaskStore, InMemoryTaskMessageQueue } = await load(`${SDK}/experimental/tasks/stores/in-memory.js`);

const taskStore = new InMemoryTaskStore();
const server = new McpServer(
    {
        name: 'ts-peer-server',
        title: 'TypeScript peer server',
        version: '1.0.0',
        icons: [{ src: 'https://example.com/icons/ts.png', mimeType: 'image/png', sizes: ['48x48'] }],
        websiteUrl: 'https://example.com/ts-peer'
    },
    {
        capabilities: {
            logging: {},
            resources: { subscribe: true, listChanged: true },
            tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } }
        },
        instructions: 'Test server for wire captures.',
        taskStore,
        taskMessageQueue: new InMemoryTaskMessageQueue()
    }
);

const sleep = ms => new Promise(r => setTimeout(r, ms));

server.registerTool(
    'get_weather',
    {
        title: 'Get weather',
        description: 'Current weather for a city.',
        inputSchema: { city: z.string().describe('City name'), units: z.enum(['metric', 'imperial']).default('metric') },
        outputSchema: {
            city: z.string(),
            temperature: z.number().describe('Temperature in the requested units'),
            conditions: z.enum(['sunny', 'cloudy', 'rain', 'snow']),
            humidity: z.number().int().min(0).max(100)
        },
        annotations: { title: 'Weather', readOnlyHint: true, openWorldHint: true, idempotentHint: true },
        _meta: { 'example.com/icons': [{ src: 'https://example.com/icons/weather.png' }] }
    },
    async ({ city, units }) => {
        const out = { city, temperature: units === 'metric' ? 21.5 : 70.7, conditions: 'sunny', humidity: 40 };
        return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    }
);

server.registerTool('echo', { description: 'Echo text back.', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text }]
}));

server.registerTool(
    'divide',
    { description: 'Divide a by b; throws on b == 0.', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => {
        if (b === 0) throw new Error('division by zero');
        return { content: [{ type: 'text', text: String(a / b) }] };
    }
);

server.registerTool(
    'soft_fail',
    { description: 'Returns an isError result explicitly.', inputSchema: {} },
    async () => ({ content: [{ type: 'text', text: 'quota exceeded' }], isError: true })
);

server.registerTool(
    'slow_count',
    { description: 'Count to n with progress + log notifications.', inputSchema: { n: z.number().int() } },
    async ({ n }, extra) => {
        const token = extra._meta?.progressToken;
        for (let i = 1; i <= n; i++) {
            if (token !== undefined) {
                await extra.sendNotification({
                    method: 'notifications/progress',
                    params: { progressToken: token, progress: i, total: n, message: `step ${i}/${n}` }
                });
            }
            await server.sendLoggingMessage({ level: 'info', logger: 'ts-peer', data: `counted ${i}` }, extra.sessionId);
        }
        return { content: [{ type: 'text', text: `counted to ${n}` }] };
    }
);

server.registerTool(
    'wait_forever',
    { description: 'Sleeps until cancelled.', inputSchema: { seconds: z.number().default(30) } },
    async ({ seconds }, extra) => {
        const end = Date.now() + seconds * 1000;
        while (Date.now() < end && !extra.signal.aborted) await sleep(50);
        return { content: [{ type: 'text', text: extra.signal.aborted ? 'aborted' : 'woke up' }] };
    }
);

server.registerTool(
    'rate_forecast',
    { description: 'Form-mode elicitation with a number field.', inputSchema: { city: z.string().default('Paris') } },
    async ({ city }) => {
        const r = await server.server.elicitInput({
            mode: 'form',
            message: 'How confident are you in this forecast?',
            requestedSchema: {
                type: 'object',
                properties: {
                    confidence: { type: 'number', title: 'Confidence', description: '0..1', minimum: 0, maximum: 1 },
                    note: { type: 'string', title: 'Note' }
                },
                required: ['confidence']
            }
        });
        return { content: [{ type: 'text', text: `${city}: ${r.action} ${JSON.stringify(r.content ?? null)}` }] };
    }
);

server.registerTool('connect_account', { description: 'URL-mode elicitation.', inputSchema: {} }, async () => {
    const r = await server.server.elicitInput({
        mode: 'url',
        message: 'Please authorize access',
        url: 'https://example.com/oauth/authorize?x=1',
        elicitationId: 'elic-001'
    });
    return { content: [{ type: 'text', text: `url elicitation action=${r.action}` }] };
});

server.registerTool('summarize', { description: 'Sampling via the client LLM.', inputSchema: {} }, async () => {
    const r = await server.server.createMessage({
        messages: [{ role: 'user', content: { type: 'text', text: 'Summarize: sunny, 21C' } }],
        maxTokens: 64,
        systemPrompt: 'You are terse.',
        temperature: 0.2,
        modelPreferences: { hints: [{ name: 'claude' }], speedPriority: 0.5 }
    });
    return { content: [{ type: 'text', text: `model ${r.model} said: ${r.content.text}` }] };
});

server.registerTool('show_roots', { description: 'List client roots.', inputSchema: {} }, async () => {
    const r = await server.server.listRoots();
    return { content: [{ type: 'text', text: r.roots.map(x => x.uri).join(', ') }] };
});

server.registerTool('add_tool', { description: 'Registers a tool at runtime (list_changed).', inputSchema: {} }, async () => {
    if (!server._registeredTools['late_tool']) {
        server.registerTool('late_tool', { description: 'Added at runtime' }, async () => ({
            content: [{ type: 'text', text: 'late' }]
        }));
    }
    return { content: [{ type: 'text', text: 'added' }] };
});

server.experimental.tasks.registerToolTask(
    'delay',
    {
        title: 'Delay',
        description: 'Task-capable tool that completes after `ms` milliseconds.',
        inputSchema: { ms: z.number().default(200) }
    },
    {
        async createTask({ ms }, { taskStore, taskRequestedTtl }) {
            const task = await taskStore.createTask({ ttl: taskRequestedTtl, pollInterval: 100 });
            (async () => {
                await sleep(ms);
                try {
                    await taskStore.storeTaskResult(task.taskId, 'completed', {
                        content: [{ type: 'text', text: `Completed ${ms}ms delay` }]
                    });
                } catch {
                    /* task may have been cancelled */
                }
            })();
            return { task };
        },
        async getTask(_args, { taskId, taskStore }) {
            return await taskStore.getTask(taskId);
        },
        async getTaskResult(_args, { taskId, taskStore }) {
            return await taskStore.getTaskResult(taskId);
        }
    }
);

server.registerResource(
    'app-config',
    'config://app',
    { title: 'App config', description: 'Application configuration', mimeType: 'application/json' },
    async uri => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: '{"theme": "dark", "retries": 3}' }] })
);

server.registerResource('logo', 'file:///logo.png', { description: 'A tiny PNG', mimeType: 'image/png' }, async uri => ({
    contents: [
        {
            uri: uri.href,
            mimeType: 'image/png',
            blob: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
        }
    ]
}));

server.registerResource(
    'city-weather',
    new ResourceTemplate('weather://{city}/current', {
        list: undefined,
        complete: { city: value => ['Paris', 'Prague', 'Porto'].filter(c => c.startsWith(value)) }
    }),
    { description: 'Weather by city', mimeType: 'text/plain' },
    async (uri, { city }) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `${city}: sunny, 21.5C` }] })
);

server.registerPrompt(
    'code_review',
    {
        title: 'Code review',
        description: 'Review a code snippet',
        argsSchema: {
            code: z.string().describe('The code'),
            language: completable(z.string(), v => ['python', 'pyright', 'perl', 'php'].filter(x => x.startsWith(v)))
        }
    },
    ({ code, language }) => ({
        description: 'Review a code snippet',
        messages: [{ role: 'user', content: { type: 'text', text: `Please review this ${language} code:\n\n${code}` } }]
    })
);

server.server.setRequestHandler(SubscribeRequestSchema, async req => {
    setTimeout(() => server.server.sendResourceUpdated({ uri: req.params.uri }), 20);
    return {};
});
server.server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));

await server.connect(new StdioServerTransport());
