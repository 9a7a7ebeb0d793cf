import { z } from 'zod';
import type { AccountContext } from '../records.ts';

/** What a token's account looks like to its API client: who it is, where it lives, its defaults. */
export const ZAccount = z
  .object({
    key: z.string(),
    name: z.string(),
    host: z.string(),
    defaults: z.object({
      anyone_can_post: z.boolean(),
      allow_anonymous_messages: z.boolean(),
      allow_search_engines: z.boolean(),
    }),
  })
  .meta({ id: 'Account' });

export type AccountView = z.infer<typeof ZAccount>;

/** The account a request acts for; it needs no store, the token already resolved it. */
export const getAccount = (account: AccountContext): AccountView => ({
  key: account.key,
  name: account.name,
  host: account.host,
  defaults: {
    anyone_can_post: account.defaults.anyoneCanPost,
    allow_anonymous_messages: account.defaults.allowAnonymousMessages,
    allow_search_engines: account.defaults.allowSearchEngines,
  },
});
