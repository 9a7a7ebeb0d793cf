import type { Readable } from 'node:stream';
import { aboveMarker, automaticReason, type InboundReply, type MailAttachment } from '@convo/domain';
import EmailReplyParser from 'email-reply-parser';
import { compile } from 'html-to-text';
import { type AddressObject, type HeaderValue, simpleParser } from 'mailparser';

/*
 * A reply mail as it came (raw MIME), read into what the domain's receiveReplyMail takes. Parsing
 * is mailparser's (Nodemailer's own parser: encodings, charsets, multipart, attachments); the
 * quote and signature are cut by email-reply-parser (Crisp's, from GitHub's EmailReplyParser),
 * after the marker line our mails carry. A mail that came as HTML alone is made text by
 * html-to-text with the quoting containers of the common clients skipped (Gmail's gmail_quote,
 * Outlook's divRplyFwdMsg and what follows it, Apple Mail's and Thunderbird's cite blockquotes).
 */

/** Characters of a mail's text read at most: the reply parser's expressions never see more. */
const TEXT_MAX = 100_000;

const htmlText = compile({
  wordwrap: false,
  selectors: [
    { selector: 'img', format: 'skip' },
    { selector: 'a', options: { ignoreHref: true } },
    { selector: '.gmail_quote', format: 'skip' },
    { selector: '.gmail_signature', format: 'skip' },
    { selector: 'blockquote', format: 'skip' },
    { selector: '#divRplyFwdMsg', format: 'skip' },
    { selector: '#appendonsend', format: 'skip' },
    { selector: '.moz-cite-prefix', format: 'skip' },
    { selector: '#Signature', format: 'skip' },
  ],
});

/** Outlook's HTML puts the quoted mail after a separator and its header block, not in a container. */
const outlookQuote = /<div[^>]*id="?(divRplyFwdMsg|appendonsend)"?[\s\S]*$/i;

/** A header's value as text (mailparser parses some into objects), or null when the mail has none. */
const headerText = (value: HeaderValue | undefined): string | null => {
  if (value === undefined) return null;
  if (typeof value === 'string') return value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.join(', ');
  if ('value' in value && typeof value.value === 'string') return value.value;
  return 'present';
};

const addresses = (value: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(value) ? value : value ? [value] : []).flatMap((a) =>
    a.value.flatMap((v) => (v.address ? [v.address] : [])),
  );

const bare = (id: string) => id.trim().replace(/^<|>$/g, '');

const returnPath = (value: string | null): string | null => (value === null ? null : bare(value));

/** The words of a reply: above our marker, without the quote and signature the client added. */
export function replyWords(text: string): string {
  const above = aboveMarker(text.slice(0, TEXT_MAX));
  return new EmailReplyParser().parseReply(above).trim();
}

export interface Envelope {
  /** MAIL FROM ('' for a bounce's null sender), when the mail came by SMTP. */
  from: string | null;
  /** The sending server's address and HELO name, when the mail came by SMTP (for SPF). */
  ip?: string | undefined;
  helo?: string | undefined;
  /** RCPT TO, when the mail came by SMTP (else To, Cc, Delivered-To and X-Original-To are read). */
  to: readonly string[];
}

/** The raw mail read into an InboundReply. */
export async function readReplyMail(raw: Buffer | Readable, envelope?: Envelope): Promise<InboundReply> {
  const mail = await simpleParser(raw, {
    skipHtmlToText: true,
    skipImageLinks: true,
    skipTextLinks: true,
    skipTextToHtml: true,
  });
  const header = (name: string) => headerText(mail.headers.get(name));
  const recipients =
    envelope && envelope.to.length > 0
      ? [...envelope.to]
      : [
          ...addresses(mail.to),
          ...addresses(mail.cc),
          ...['delivered-to', 'x-original-to'].flatMap((h) => header(h)?.split(',') ?? []).map((a) => a.trim()),
        ];
  const references = [
    ...(mail.inReplyTo ? [mail.inReplyTo] : []),
    ...(Array.isArray(mail.references) ? mail.references : mail.references ? [mail.references] : []),
  ]
    .flatMap((r) => r.split(/\s+/))
    .map(bare)
    .filter((r) => r !== '');
  const text =
    typeof mail.text === 'string' && mail.text.trim() !== ''
      ? mail.text
      : typeof mail.html === 'string'
        ? // Spaces as a person typed them (&nbsp; is how an HTML editor keeps a space), blank runs as one.
          htmlText(mail.html.slice(0, TEXT_MAX * 4).replace(outlookQuote, ''))
            .replaceAll('\u00a0', ' ')
            .replace(/\n{3,}/g, '\n\n')
        : '';
  const attachments: MailAttachment[] = mail.attachments
    // Pictures the HTML shows inline (a signature's logo) are part of its look, not files sent.
    .filter((a) => !a.related)
    .map((a) => ({
      name: a.filename ?? 'a file without a name',
      type: a.contentType,
      content: new Uint8Array(a.content.buffer, a.content.byteOffset, a.content.byteLength),
    }));
  return {
    recipients,
    from: mail.from?.value[0]?.address ?? null,
    messageId: mail.messageId ? bare(mail.messageId) : null,
    references,
    // A bounce's sender is empty: the envelope's, or the Return-Path a relay or mailbox kept of it.
    automatic: automaticReason(header, envelope?.from ?? returnPath(header('return-path'))),
    text: replyWords(text),
    attachments,
    authentication: null,
  };
}
