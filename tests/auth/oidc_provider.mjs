// A real authorization server for tests/auth: node-oidc-provider (npm
// `oidc-provider`, installed pinned under build/auth by tests/auth/provider.py),
// on 127.0.0.1 at a free port, issuing client-credentials access tokens bound
// to a resource (RFC 8707). Each resource of OIDC_RESOURCES is given its token
// format: "jwt" (RFC 9068, signed RS256 with a key made here at start) or
// "opaque" (checked through the introspection endpoint, RFC 7662).
//
// Environment: OIDC_CLIENTS, a JSON list of {client_id, client_secret, scope?};
// OIDC_RESOURCES, a JSON object {resource URI: {format, scope}}.
// Prints "issuer <URL>" once it listens; ends when its standard input closes.
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import process from 'node:process';

import Provider, { errors } from 'oidc-provider';

const clients = JSON.parse(process.env.OIDC_CLIENTS);
const resources = JSON.parse(process.env.OIDC_RESOURCES);

const signing = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const jwk = { ...signing.export({ format: 'jwk' }), kid: 'test-key', alg: 'RS256', use: 'sig' };

const server = createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: clients.map((client) => ({
      ...client,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
    })),
    jwks: { keys: [jwk] },
    scopes: ['openid', ...new Set(Object.values(resources).flatMap((r) => r.scope.split(' ')))],
    ttl: { ClientCredentials: 300 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // A token request without `resource` gets no token bound to nothing.
        defaultResource: (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          const info = resources[indicator];
          if (!info) throw new errors.InvalidTarget();
          return {
            scope: info.scope,
            audience: indicator,
            accessTokenTTL: 300,
            accessTokenFormat: info.format,
            ...(info.format === 'jwt' ? { jwt: { sign: { alg: 'RS256' } } } : {}),
          };
        },
      },
    },
  });
  server.on('request', provider.callback());
  process.stdout.write(`issuer ${issuer}\n`);
});

process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
