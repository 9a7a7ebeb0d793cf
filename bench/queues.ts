import { queues } from './sections/queues.ts';

/* `npm run bench:queues`: the queue section alone (it needs no servers), on --database-url's server. */
await queues();
