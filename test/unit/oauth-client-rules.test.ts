// Rules the authorization server adds to oidc-provider's (core/oauth/oauth-provider.ts, api/pages/oauth-interaction.ts):
// a web client's redirect URIs, where a Client ID Metadata Document is fetched from, and the consent page's CSP
// source for a redirect URI.
import { describe, expect, it } from 'vitest';
import { redirectSource } from '../../api/pages/oauth-interaction.js';
import { checkRedirectUris, cimdFetchUrl } from '../../core/oauth/oauth-provider.js';

describe('checkRedirectUris', () => {
  /** The error_description the registration would answer, or undefined when the URI is accepted. */
  const refusal = (application_type: string | undefined, uri: string) => {
    try {
      checkRedirectUris(undefined, 'redirect_uris', [uri], application_type ? { application_type } : {});
      return undefined;
    } catch (err) {
      return (err as { error_description?: string }).error_description;
    }
  };

  it('holds web clients (the default) to https, or http on a loopback host', () => {
    for (const uri of [
      'https://agent.example/cb',
      'http://localhost:3000/cb',
      'http://127.0.0.1/cb',
      'http://[::1]:9/cb',
    ]) {
      expect(refusal('web', uri), uri).toBeUndefined();
    }
    expect(refusal('web', 'http://agent.example/cb')).toMatch(/must use https/);
    expect(refusal(undefined, 'http://10.0.0.1/cb')).toMatch(/must use https/);
  });

  it('leaves native clients to the library (loopback http, claimed https, private-use schemes)', () => {
    expect(refusal('native', 'http://agent.example/cb')).toBeUndefined();
    expect(refusal('native', 'com.example.agent:/cb')).toBeUndefined();
  });
});

describe('cimdFetchUrl', () => {
  it('fetches a loopback document over http only when private upstreams are allowed (never in production)', () => {
    const dev = { upstreamAllowPrivate: true };
    const prod = { upstreamAllowPrivate: false };
    expect(cimdFetchUrl('https://127.0.0.1:4000/agent.json', dev)).toBe('http://127.0.0.1:4000/agent.json');
    expect(cimdFetchUrl('https://localhost/agent.json', dev)).toBe('http://localhost/agent.json');
    expect(cimdFetchUrl('https://127.0.0.1:4000/agent.json', prod)).toBe('https://127.0.0.1:4000/agent.json');
    expect(cimdFetchUrl('https://agent.example/agent.json', dev)).toBe('https://agent.example/agent.json');
  });
});

describe('redirectSource', () => {
  it('is the origin of a web redirect, the scheme of a private-use one', () => {
    expect(redirectSource('http://127.0.0.1:47999/callback')).toBe('http://127.0.0.1:47999');
    expect(redirectSource('https://agent.example/cb?x=1')).toBe('https://agent.example');
    expect(redirectSource('com.example.agent:/callback')).toBe('com.example.agent:');
    expect(redirectSource('not a url')).toBe('');
  });
});
