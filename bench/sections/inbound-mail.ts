import { createHash, randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { drive, fmt, median, SCENARIOS } from '../load.ts';
import { CONNECTIONS, DB, DURATION } from '../options.ts';
import { start, startOptions, stopServer } from '../servers.ts';
import { aim } from '../targets.ts';

/*
 * Reply by e-mail (issue 44), on a product with its SMTP listener: REPLIES answers in a row to
 * notifications (reply addresses planted for the bench account's owner, each answer its own mail
 * and Message-ID), sent by nodemailer over a pool of SMTP connections, each posted as a reply;
 * then the API's get_conversation while answers keep coming, against the same row without them,
 * rounds alternated. Targets: >= 100 answers a second; the API >= 0.9x meanwhile.
 */

const REPLIES = 1_000;
const DOMAIN = 'reply.bench.example';
const SMTP_PORT = 3325;
/** Each address takes 50 answers; the bench spreads its answers over these. */
const ADDRESSES = 40;

const base32 = (bytes: Buffer) => Array.from(bytes, (b) => 'abcdefghijklmnopqrstuvwxyz234567'[b & 31]).join('');

/** Reply addresses of the bench account's owner on its first conversation, their tokens in clear. */
async function plantAddresses(): Promise<{ email: string; addresses: string[] }> {
  const db = new pg.Client({ connectionString: DB });
  await db.connect();
  try {
    const { rows } = await db.query<{ account_id: number; user_id: number; email: string; conversation_id: number }>(
      `select c.account_id, u.id as user_id, u.email, c.id as conversation_id
         from conversation c join account_user u on u.account_id = c.account_id and u.team_role = 'owner'
        order by c.id limit 1`,
    );
    const target = rows[0];
    if (!target) throw new Error('the bench database has no conversation with an owner');
    const addresses: string[] = [];
    for (let i = 0; i < ADDRESSES; i++) {
      const token = base32(randomBytes(26));
      await db.query(
        `insert into reply_address (account_id, user_id, conversation_id, token_hash, message_id, expires_at)
         values ($1, $2, $3, $4, $5, now() + interval '1 day')`,
        [
          target.account_id,
          target.user_id,
          target.conversation_id,
          createHash('sha256').update(token).digest('hex'),
          `${base32(randomBytes(26))}@${DOMAIN}`,
        ],
      );
      addresses.push(`reply+${token}@${DOMAIN}`);
    }
    return { email: target.email, addresses };
  } finally {
    await db.end();
  }
}

export async function inboundMail() {
  const product = await start('product, taking mail', 'apps/api/src/entry/node.ts', 3310, startOptions(), {
    INBOUND_MAIL_DOMAIN: DOMAIN,
    INBOUND_SMTP_PORT: String(SMTP_PORT),
    INBOUND_SMTP_HOST: '127.0.0.1',
    INBOUND_MAIL_LIMIT_PER_PERSON: '0',
    INBOUND_MAIL_LIMIT_PER_ACCOUNT: '0',
  });
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: SMTP_PORT,
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: 8,
    maxMessages: Number.POSITIVE_INFINITY,
  });
  try {
    let { email, addresses } = await plantAddresses();
    let sent = 0;
    const answer = async () => {
      const n = sent++;
      if (n > 0 && n % (ADDRESSES * 50) === 0) ({ email, addresses } = await plantAddresses());
      await transport.sendMail({
        from: email,
        to: addresses[n % ADDRESSES],
        subject: 'Re: the bench',
        messageId: `<bench-${n}-${randomBytes(6).toString('hex')}@client.example>`,
        text: `Answer number ${n} from the bench.\n\nOn Sunday, Bench wrote:\n> ## Reply above this line ##\n> Hello\n`,
      });
    };
    // REPLIES in a row, eight at a time (the pool's connections).
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (sent < REPLIES) await answer();
      }),
    );
    const rate = REPLIES / ((performance.now() - started) / 1000);

    // The API while answers keep coming, against the same row without them.
    const s = SCENARIOS.find((x) => x.name === 'get_conversation ?slug');
    if (!s) throw new Error('the comparison has no get_conversation ?slug scenario');
    const c = Math.min(...CONNECTIONS);
    const during: number[] = [];
    const alone: number[] = [];
    const rows: string[] = [];
    for (let round = 0; round < 2; round++) {
      alone.push((await drive(product, s, c, DURATION)).rps);
      let sending = true;
      const before = sent;
      const senders = Array.from({ length: 4 }, async () => {
        while (sending) await answer();
      });
      during.push((await drive(product, s, c, DURATION)).rps);
      sending = false;
      await Promise.all(senders);
      rows.push(
        `round ${round + 1}: ${fmt(alone[round] ?? 0)} req/s alone, ${fmt(during[round] ?? 0)} req/s while ${sent - before} answers came`,
      );
    }
    const ratio = median(during) / median(alone);
    console.log(
      `\nreply by e-mail: ${REPLIES} answers in a row over SMTP: ${fmt(rate)} a second\nget_conversation ?slug:\n${rows.join('\n')}\nx${ratio.toFixed(2)} while answers come`,
    );
    aim(`${REPLIES} reply mails in a row >= 100/s`, `${fmt(rate)}/s`, rate >= 100);
    aim('API row while reply mail is taken in >= 0.90x', `x${ratio.toFixed(2)}`, ratio >= 0.9);
  } finally {
    transport.close();
    await stopServer(product);
  }
}
