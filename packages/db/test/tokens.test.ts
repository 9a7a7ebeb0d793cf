import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashToken } from '../src/index.ts';

describe('token hashes', () => {
  it('are the stable hex SHA-256 of the token, and differ between tokens', () => {
    expect(hashToken('cnv_a')).toBe(createHash('sha256').update('cnv_a').digest('hex'));
    expect(hashToken('cnv_a')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken('cnv_a')).toBe(hashToken('cnv_a'));
    expect(hashToken('cnv_a')).not.toBe(hashToken('cnv_b'));
  });
});
