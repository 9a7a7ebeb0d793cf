import { type RawBuilder, sql } from 'kysely';

/*
 * What a conversation's search finds: the words of its title and of its messages that are not
 * hidden, as written (the 'simple' configuration: no language's stemming). The messages' words are
 * kept on the conversation's row (`said`, a tsvector without positions), so one index
 * (conversation_search, over the title's words and `said`) answers which conversations say
 * something, and a walk down the inbox's order checks one value a row. The statements that write
 * messages add their words (`saidAfter`); those that hide, show or delete one say it again from
 * the visible messages (`saidOf`), with the transcripts of their recordings (a transcript made
 * later adds its words as a message does: transcript-store.ts).
 *
 * A tsvector holds at most 1 MB. A conversation keeps new words while its words take less than
 * SAID_BYTES_KEPT as text, each message adds the words of its first MESSAGE_CHARACTERS_SAID
 * characters (at most about 60 kB), and a conversation said again takes its first
 * CONVERSATION_CHARACTERS_SAID characters: a very long conversation's latest words are not searched.
 */
export const SAID_BYTES_KEPT = 768_000;
export const MESSAGE_CHARACTERS_SAID = 10_000;
export const CONVERSATION_CHARACTERS_SAID = 150_000;

/** The words of `text`, as a message adds them to its conversation's `said`. */
export const wordsOf = (text: RawBuilder<string>) =>
  sql<string>`strip(to_tsvector('simple', left(${text}, ${sql.lit(MESSAGE_CHARACTERS_SAID)})))`;

/** The conversation row's `said` once a message saying `text` is added (in an update of that row). */
export const saidAfter = (text: RawBuilder<string>) =>
  sql<string>`case when octet_length(said::text) < ${sql.lit(SAID_BYTES_KEPT)}
    then strip(said || to_tsvector('simple', left(${text}, ${sql.lit(MESSAGE_CHARACTERS_SAID)}))) else said end`;

/**
 * The `said` of conversation `conversation` from its messages, those for which `shown` holds (a
 * condition on `m`): the messages visible once the statement's own change is made, which the
 * statement's other parts do not see yet. Internal notes are not searched (the reply store adds
 * none of their words either).
 */
export const saidOf = (conversation: RawBuilder<number>, shown: RawBuilder<boolean>) =>
  sql<string>`(select strip(to_tsvector('simple', coalesce(left(string_agg(m.text || coalesce(' ' || t.text, ''), ' '
      order by m.created_at, m.id), ${sql.lit(CONVERSATION_CHARACTERS_SAID)}), '')))
    from message m left join transcript t on t.media_key = m.media_key and t.status = 'complete'
    where m.conversation_id = ${conversation} and not m.internal and ${shown})`;

/** What a search of conversation `c` is matched against: the index conversation_search's expression. */
export const searchedWords = (c: string) =>
  sql<string>`(to_tsvector('simple', ${sql.ref(`${c}.title`)}) || ${sql.ref(`${c}.said`)})`;
