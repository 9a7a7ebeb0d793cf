import { type ListenTarget, type LiveListener, listenLive } from '@convo/db';
import type { Logger } from '../logger.ts';
import type { LiveHub } from './hub.ts';

/** The process's one listening connection, waking `hub` (see @convo/db's live-listener.ts). */
export function listenForLive(hub: LiveHub, target: ListenTarget, logger: Logger): LiveListener {
  return listenLive(target, {
    notified: (payload) => hub.notified(payload),
    connected: () => {
      logger.info('listening for live events');
      hub.connected();
    },
    lost: (err) => {
      logger.warn({ err: err.message }, 'the live events listener lost its connection; polling until it is back');
      hub.lost();
    },
  });
}
