import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/start/config.ts';

describe('configuration', () => {
  it('reads TRUST_PROXY as a number of proxies: true is one, false none', () => {
    const hops = (value: string | undefined) => loadConfig({ TRUST_PROXY: value }).http.proxies.hops;
    expect([hops(undefined), hops('false'), hops('0'), hops('true'), hops('1'), hops('2')]).toEqual([0, 0, 0, 1, 1, 2]);
    expect(() => loadConfig({ TRUST_PROXY: 'yes' })).toThrow(/TRUST_PROXY: must be true, false or a number of proxies/);
    expect(() => loadConfig({ TRUST_PROXY: '11' })).toThrow(/TRUST_PROXY/);
  });

  it('limits page reads to 1,200 a minute per client address unless told otherwise; 0 turns it off', () => {
    expect(loadConfig({}).site.limits.readsPerIpPerMinute).toBe(1_200);
    expect(loadConfig({ PAGE_LIMIT_PER_IP: '0' }).site.limits.readsPerIpPerMinute).toBe(0);
    expect(() => loadConfig({ PAGE_LIMIT_PER_IP: '-1' })).toThrow(/PAGE_LIMIT_PER_IP/);
  });

  it('transcribes only where TRANSCRIBE_URL names an engine (empty is unset, as compose passes it)', () => {
    expect(loadConfig({}).transcribe).toBeNull();
    expect(loadConfig({ TRANSCRIBE_URL: '' }).transcribe).toBeNull();
    expect(loadConfig({ TRANSCRIBE_URL: 'http://speech:8000/v1', TRANSCRIBE_API_KEY: '' }).transcribe).toMatchObject({
      url: 'http://speech:8000/v1',
      model: 'whisper-1',
      apiKey: undefined,
      maxBytes: 24 * 1024 * 1024,
    });
    expect(() => loadConfig({ TRANSCRIBE_URL: 'ftp://speech/v1' })).toThrow(/TRANSCRIBE_URL/);
    expect(() => loadConfig({ TRANSCRIBE_URL: 'http://speech:8000/v1', TRANSCRIBE_LANGUAGE: 'English' })).toThrow(
      /TRANSCRIBE_LANGUAGE/,
    );
  });

  it('takes reply mail only with a domain: a receiver without one, or half a certificate, is refused', () => {
    expect(loadConfig({}).inbound).toMatchObject({ domain: null, smtp: null, days: 30 });
    expect(
      loadConfig({ INBOUND_MAIL_DOMAIN: 'Reply.Example.com', INBOUND_SMTP_PORT: '2525', INBOUND_SMTP_HOST: '' })
        .inbound,
    ).toMatchObject({ domain: 'reply.example.com', smtp: { port: 2525, host: '127.0.0.1', tls: null } });
    expect(() => loadConfig({ INBOUND_SMTP_PORT: '2525' })).toThrow(/INBOUND_MAIL_DOMAIN/);
    expect(() => loadConfig({ INBOUND_MAIL_SECRET: 'a-long-enough-secret' })).toThrow(/INBOUND_MAIL_DOMAIN/);
    expect(() =>
      loadConfig({
        INBOUND_MAIL_DOMAIN: 'reply.example.com',
        INBOUND_SMTP_PORT: '25',
        INBOUND_SMTP_TLS_CERT: '/c.pem',
      }),
    ).toThrow(/give both/);
    expect(() => loadConfig({ INBOUND_MAIL_DOMAIN: 'not a domain' })).toThrow(/INBOUND_MAIL_DOMAIN/);
    expect(
      loadConfig({ INBOUND_MAIL_DOMAIN: 'reply.example.com', INBOUND_IMAP_URL: 'imaps://u:p@imap.example.com/Replies' })
        .inbound.imap,
    ).toEqual({ url: 'imaps://u:p@imap.example.com/Replies', intervalMs: 60_000 });
    expect(() =>
      loadConfig({ INBOUND_MAIL_DOMAIN: 'reply.example.com', INBOUND_IMAP_URL: 'https://imap.example.com' }),
    ).toThrow(/INBOUND_IMAP_URL/);
    expect(loadConfig({ INBOUND_MAIL_DOMAIN: 'reply.example.com' }).inbound.auth).toBeNull();
    expect(
      loadConfig({
        INBOUND_MAIL_DOMAIN: 'r.example.com',
        INBOUND_MAIL_AUTH: 'true',
        INBOUND_MAIL_AUTH_DNS: '10.0.0.53,[::1]:53',
      }).inbound.auth,
    ).toEqual({ dnsServers: ['10.0.0.53', '[::1]:53'] });
    expect(() => loadConfig({ INBOUND_MAIL_AUTH_DNS: 'a b' })).toThrow(/INBOUND_MAIL_AUTH_DNS/);
  });
});
