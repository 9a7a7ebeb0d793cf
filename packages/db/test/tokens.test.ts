import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAccount, hashToken, listTokens, renewToken } from '../src/index.ts';
import { openTestDatabase } from '../src/testing.ts';

describe('token hashes', () => {
  it('are the stable hex SHA-256 of the token, and differ between tokens', () => {
    expect(hashToken('cnv_a')).toBe(createHash('sha256').update('cnv_a').digest('hex'));
    expect(hashToken('cnv_a')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken('cnv_a')).toBe(hashToken('cnv_a'));
    expect(hashToken('cnv_a')).not.toBe(hashToken('cnv_b'));
  });
});

describe('a renewed token', () => {
  it('replaces the tokens of its name, which stop working; the others keep theirs', async () => {
    const db = await openTestDatabase();
    try {
      const em = db.orm.em.fork();
      const account = await createAccount(em, { key: 'renew', name: 'Renew', host: 'renew.example.com' });
      const first = await renewToken(em, account.id, 'demo');
      const second = await renewToken(em, account.id, 'demo');
      expect(second.token).not.toBe(first.token);
      const tokens = await listTokens(em, account.id);
      const state = (id: number) => tokens.find((t) => t.id === id)?.revokedAt === null;
      expect([state(account.token.id), state(first.id), state(second.id)]).toEqual([true, false, true]);
    } finally {
      await db.close();
    }
  });
});
