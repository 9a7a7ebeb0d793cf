import type { AccountContext } from '../ports.ts';

/** What a token's account looks like to its API client: who it is, where it lives, its defaults. */
export interface AccountView {
  key: string;
  name: string;
  host: string;
  defaults: {
    anyone_can_post: boolean;
    allow_anonymous_messages: boolean;
    allow_search_engines: boolean;
  };
}

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
